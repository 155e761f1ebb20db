// The rendezvous messages: built with every field the peer checks, read back with nothing
// trusted (nlohmann's value() throws on a member of the wrong type, so no field is read with it).
#include "core/rendezvous_wire.h"

#include "core/errors.h"
#include "core/json_input.h"
#include "core/sanitize.h"
#include "core/sha256.h"

#include <fmt/format.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace gpucheck::rendezvous_wire {

namespace {

using nlohmann::json;

constexpr std::size_t kNonceBytes = 16;

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string to_hex(std::string_view bytes) {
  std::string s;
  for (unsigned char c : bytes) s += fmt::format("{:02x}", c);
  return s;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0 || !is_hex(hex)) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    out += static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1]));
  }
  return out;
}

// The answer XOR a keystream only a holder of the token can make, fresh for each challenge and
// nonce: NCCL's id must not be read off the wire by a stranger.
std::string keystream_xor(const std::string& token, const std::string& challenge,
                          const std::string& nonce, std::string_view data) {
  std::string out(data);
  for (std::size_t block = 0; block * 32 < out.size(); ++block) {
    const Sha256Digest pad = hmac_sha256(
        token, fmt::format("seal{}{}{}{}{}{}", '\0', challenge, '\0', nonce, '\0', block));
    for (std::size_t i = 0; i < 32 && block * 32 + i < out.size(); ++i)
      out[block * 32 + i] = static_cast<char>(out[block * 32 + i] ^ pad[i]);
  }
  return out;
}

bool proven(const std::string& token, const json& j,
            std::initializer_list<std::string_view> parts) {
  if (token.empty()) return true;
  const auto given = text_field(j, "proof", 64);
  return given && same_in_constant_time(*given, proof(token, parts));
}

// A parsed message: a JSON object of this version, or the reason it is not.
std::optional<json> message(std::string_view text, std::string* why) {
  json j = parse_json_or_discarded(text);
  if (!j.is_object()) {
    *why = "not a JSON object";
    return std::nullopt;
  }
  const auto magic = text_field(j, "magic", 64);
  if (!magic || magic->rfind(kMagicFamily, 0) != 0) {
    *why = "not a gpucheck rendezvous message";
    return std::nullopt;
  }
  if (*magic != kMagic) {
    *why = fmt::format("written by another gpucheck version ({}, this one speaks {})",
                       sanitize(*magic), kMagic);
    return std::nullopt;
  }
  return j;
}

}  // namespace

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::getrandom(raw.data() + done, bytes - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_errno("getrandom", __FILE__, __LINE__);
    done += static_cast<std::size_t>(got);
  }
  return to_hex(raw);
}

std::optional<std::string> text_field(const json& j, std::string_view key, std::size_t max_bytes) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() > max_bytes) return std::nullopt;
  return s;
}

std::optional<long long> whole_field(const json& j, std::string_view key, long long lo,
                                     long long hi) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  long long v = 0;
  if (it->is_number_unsigned()) {
    const auto u = it->get<unsigned long long>();
    if (u > static_cast<unsigned long long>(hi)) return std::nullopt;
    v = static_cast<long long>(u);
  } else if (it->is_number_integer()) {
    v = it->get<long long>();
  } else {
    return std::nullopt;
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<double> number_field(const json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::string> nonce_field(const json& j, std::string_view key) {
  auto s = text_field(j, key, 2 * kNonceBytes);
  if (!s || s->size() != 2 * kNonceBytes || !is_hex(*s)) return std::nullopt;
  return s;
}

std::string proof(const std::string& token, std::initializer_list<std::string_view> parts) {
  if (token.empty()) return {};
  // Each part after its length, so no two lists of parts read as the same bytes.
  std::string message;
  for (auto p : parts) {
    message += std::to_string(p.size()) + ':';
    message.append(p);
  }
  return digest_hex(hmac_sha256(token, message));
}

std::string challenge_line(const std::string& challenge) {
  return json{{"magic", kMagic}, {"challenge", challenge}}.dump();
}

std::optional<std::string> read_challenge(std::string_view line) {
  std::string why;
  const auto j = message(line, &why);
  if (!j) return std::nullopt;
  return nonce_field(*j, "challenge");
}

std::string hello_text(const Run& run, const std::string& challenge, int rank,
                       const std::string& nonce, const std::string& identity) {
  const std::string r = std::to_string(rank), n = std::to_string(run.world_size);
  json h = {{"magic", kMagic},        {"challenge", challenge},
            {"rank", rank},           {"world_size", run.world_size},
            {"session", run.session}, {"nonce", nonce},
            {"identity", identity}};
  if (!run.token.empty())
    h["proof"] = proof(run.token, {"hello", challenge, run.session, n, r, nonce, identity});
  return h.dump();
}

HelloCheck check_hello(std::string_view text, const Run& run, const std::string& challenge) {
  HelloCheck out;
  const auto j = message(text, &out.refusal);
  if (!j) {
    out.refusal = "not a gpucheck rendezvous hello: " + out.refusal;
    return out;
  }
  if (auto nonce = nonce_field(*j, "nonce")) out.nonce = *nonce;
  const auto session = text_field(*j, "session", 256);
  const auto world = whole_field(*j, "world_size", 1, 1 << 30);
  const auto rank = whole_field(*j, "rank", 0, 1 << 30);
  const auto identity = text_field(*j, "identity");
  const auto echoed = nonce_field(*j, "challenge");
  if (!session || !world || !rank || out.nonce.empty() || !identity || !echoed) {
    out.refusal = fmt::format(
        "a hello needs a session (text), world_size and rank (whole numbers), the challenge and "
        "a nonce (32 hex digits each) and an identity (text of at most {} bytes)",
        kMaxHelloBytes);
    return out;
  }
  if (*echoed != challenge) {
    out.refusal = "the hello answers another challenge (a rank of an earlier meeting)";
    return out;
  }
  const std::string r = std::to_string(*rank), n = std::to_string(*world);
  if (!proven(run.token, *j, {"hello", challenge, *session, n, r, out.nonce, *identity})) {
    out.refusal = fmt::format(
        "the hello does not prove it knows this run's secret: every rank needs the same {}",
        kTokenVariable);
    return out;
  }
  if (*session != run.session) {
    out.refusal = fmt::format("run '{}' is not this run ('{}')", sanitize(*session), run.session);
  } else if (*world != run.world_size) {
    out.refusal = fmt::format("rank 0 runs a world of {} ranks, the peer says --world-size {}",
                              run.world_size, *world);
  } else if (*rank < 1 || *rank >= run.world_size) {
    out.refusal = fmt::format("rank {} is not a rank of a world of {}", *rank, run.world_size);
  } else {
    out.hello = Hello{static_cast<int>(*rank), out.nonce, *identity};
  }
  return out;
}

std::string answer_line(const std::string& token, const std::string& challenge,
                        const std::string& nonce, const std::string& answer) {
  if (token.empty()) return json{{"answer", answer}}.dump();
  const std::string sealed = to_hex(keystream_xor(token, challenge, nonce, answer));
  return json{{"sealed", sealed}, {"proof", proof(token, {"answer", challenge, nonce, sealed})}}
      .dump();
}

std::string refusal_line(const std::string& token, const std::string& challenge,
                         const std::string& nonce, const std::string& refusal) {
  json j = {{"error", refusal}};
  if (!token.empty() && !nonce.empty())
    j["proof"] = proof(token, {"refusal", challenge, nonce, refusal});
  return j.dump();
}

Reply read_reply(std::string_view line, const std::string& token, const std::string& challenge,
                 const std::string& nonce) {
  Reply out;
  const json j = parse_json_or_discarded(line);
  if (const auto error = text_field(j, "error", kMaxHelloBytes)) {
    if (proven(token, j, {"refusal", challenge, nonce, *error}))
      out.refusal = sanitize(*error);
    else
      out.unproven = fmt::format("a refusal without this run's proof ({})", sanitize(*error));
    return out;
  }
  if (token.empty()) {
    if (const auto answer = text_field(j, "answer", kMaxAnswerBytes))
      out.answer = *answer;
    else
      out.unproven = "what answered is not gpucheck's rank 0";
    return out;
  }
  const auto sealed = text_field(j, "sealed", 2 * kMaxAnswerBytes);
  const auto raw = sealed ? from_hex(*sealed) : std::nullopt;
  if (!raw) {
    out.unproven = "what answered is not gpucheck's rank 0 (no sealed answer)";
  } else if (!proven(token, j, {"answer", challenge, nonce, *sealed})) {
    out.unproven =
        fmt::format("the answer does not prove it comes from a rank 0 that knows this run's {}",
                    kTokenVariable);
  } else {
    out.answer = keystream_xor(token, challenge, nonce, *raw);
  }
  return out;
}

namespace {

std::string head_proof(const std::string& token, const std::string& challenge,
                       const std::string& session, int world_size, double created,
                       const std::string& phase, const json& members, const std::string& answer) {
  return proof(token, {"head", challenge, session, std::to_string(world_size),
                       fmt::format("{:.6f}", created), phase, members.dump(), answer});
}

}  // namespace

std::string head_text(const Run& run, const Head& head) {
  json j = {{"magic", kMagic},        {"challenge", head.challenge}, {"world_size", run.world_size},
            {"session", run.session}, {"created", head.created},     {"host", head.host},
            {"pid", head.pid},        {"phase", head.phase}};
  const json members = head.phase == "go" ? head.members : json::object();
  if (head.phase == "go") {
    j["members"] = members;
    j["answer"] = head.answer;
  }
  // The proof covers "created" as the reader will format it back from the parsed number.
  const double created = parse_json_or_discarded(j.dump())["created"].get<double>();
  if (!run.token.empty())
    j["proof"] = head_proof(run.token, head.challenge, run.session, run.world_size, created,
                            head.phase, members, head.answer);
  return j.dump();
}

std::optional<Head> read_head(std::string_view text, const std::string& token, std::string* why) {
  const auto j = message(text, why);
  if (!j) return std::nullopt;
  Head h;
  const auto challenge = nonce_field(*j, "challenge");
  const auto world = whole_field(*j, "world_size", 1, 1 << 30);
  const auto session = text_field(*j, "session", 256);
  const auto created = number_field(*j, "created");
  const auto host = text_field(*j, "host", 256);
  const auto pid = whole_field(*j, "pid", 0, 1LL << 40);
  const auto phase = text_field(*j, "phase", 8);
  if (!challenge || !world || !session || !created || !host || !pid || !phase ||
      (*phase != "meet" && *phase != "go")) {
    *why =
        "a rendezvous file needs a challenge (32 hex digits), world_size and pid (whole "
        "numbers), created (a number), session and host (text) and a phase (meet or go)";
    return std::nullopt;
  }
  h.challenge = *challenge;
  h.world_size = static_cast<int>(*world);
  h.session = *session;
  h.created = *created;
  h.host = sanitize(*host);
  h.pid = *pid;
  h.phase = *phase;
  h.members = json::object();
  if (h.phase == "go") {
    const auto answer = text_field(*j, "answer", kMaxAnswerBytes);
    auto it = j->find("members");
    if (!answer || it == j->end() || !it->is_object()) {
      *why = "a rendezvous file of the go phase needs members (an object) and an answer (text)";
      return std::nullopt;
    }
    h.answer = *answer;
    h.members = *it;
  }
  if (!token.empty()) {
    const auto given = text_field(*j, "proof", 64);
    if (!given ||
        !same_in_constant_time(*given, head_proof(token, h.challenge, h.session, h.world_size,
                                                  h.created, h.phase, h.members, h.answer))) {
      *why = fmt::format("it was not written with this run's {}", kTokenVariable);
      return std::nullopt;
    }
  }
  return h;
}

}  // namespace gpucheck::rendezvous_wire
