// What the ranks of a multi-process run say to each other when they meet, apart from how it
// travels (core/rendezvous: a TCP line or a file). Everything read here comes from outside the
// process, so every field is checked for its type and range and bad bytes become a refusal with
// a reason, never an exception. Where the ranks share a secret (GPUCHECK_RENDEZVOUS_TOKEN),
// every message carries a proof, HMAC-SHA256 over the message's fields and a fresh random
// challenge or nonce, so the secret itself never travels and a recorded message cannot be
// replayed; rank 0's answer over TCP also travels sealed (XOR with an HMAC keystream).
//
// TCP: rank 0 sends each connection a challenge line, the peer answers with its hello line, and
// rank 0 replies with the answer or a refusal. File: rank 0's head file carries the challenge,
// each rank writes its hello as FILE.rank<N>, rank 0 rewrites the head with the answer.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::rendezvous_wire {

inline constexpr std::string_view kMagic = "gpucheck-rendezvous/2";
// A file whose magic starts so was written by some gpucheck: the only kind it may replace.
inline constexpr std::string_view kMagicFamily = "gpucheck-rendezvous/";
inline constexpr std::size_t kMaxHelloBytes = std::size_t{64} << 10;  // a hello line or file
inline constexpr std::size_t kMaxAnswerBytes = std::size_t{1} << 20;  // rank 0's answer
inline constexpr std::size_t kMinTokenChars = 16;
inline constexpr const char* kTokenVariable = "GPUCHECK_RENDEZVOUS_TOKEN";

// What every rank of one run shares: a message of another run or without the secret's proof
// is refused.
struct Run {
  std::string session;
  int world_size = 1;
  std::string token;  // empty: no proofs (loopback or a private directory only)
};

// `bytes` random bytes from getrandom(2), as lower-case hex; ApiError naming getrandom when the
// kernel has none to give.
std::string random_hex(std::size_t bytes);

// The member's value when it has the type (and range) asked for; nullopt otherwise.
std::optional<std::string> text_field(const nlohmann::json& j, std::string_view key,
                                      std::size_t max_bytes = kMaxHelloBytes);
std::optional<long long> whole_field(const nlohmann::json& j, std::string_view key, long long lo,
                                     long long hi);
std::optional<double> number_field(const nlohmann::json& j, std::string_view key);
// A challenge or nonce: 32 lower-case hex digits.
std::optional<std::string> nonce_field(const nlohmann::json& j, std::string_view key);

// HMAC-SHA256(token, each part as LENGTH:BYTES) in hex; "" without a token.
std::string proof(const std::string& token, std::initializer_list<std::string_view> parts);

// ---- TCP: rank 0's challenge line ----
std::string challenge_line(const std::string& challenge);
// The challenge, or nullopt when the line is not a gpucheck rank 0's.
std::optional<std::string> read_challenge(std::string_view line);

// ---- every rank's hello (a TCP line, or the text of FILE.rank<N>) ----
std::string hello_text(const Run& run, const std::string& challenge, int rank,
                       const std::string& nonce, const std::string& identity);
struct Hello {
  int rank = -1;
  std::string nonce;     // the peer's own, for rank 0's reply to it
  std::string identity;  // valid UTF-8 without control bytes as sent; any text
};
struct HelloCheck {
  std::optional<Hello> hello;  // set when the hello is this run's and proven
  std::string refusal;         // why not, for the peer and rank 0's own message
  std::string nonce;           // the peer's nonce where one could be read (to prove the refusal)
};
HelloCheck check_hello(std::string_view text, const Run& run, const std::string& challenge);

// ---- TCP: rank 0's reply to one peer ----
std::string answer_line(const std::string& token, const std::string& challenge,
                        const std::string& nonce, const std::string& answer);
std::string refusal_line(const std::string& token, const std::string& challenge,
                         const std::string& nonce, const std::string& refusal);
struct Reply {
  std::optional<std::string> answer;   // rank 0's answer, proven (and unsealed)
  std::optional<std::string> refusal;  // rank 0 turned this rank away, proven
  std::string unproven;                // else: why the reply is not believed
};
Reply read_reply(std::string_view line, const std::string& token, const std::string& challenge,
                 const std::string& nonce);

// ---- the file form: rank 0's head file ----
struct Head {
  std::string challenge;
  int world_size = 0;
  std::string session, host, phase;  // phase "meet" or "go"; host sanitized for messages
  double created = 0;
  long long pid = 0;
  nlohmann::json members;  // "go": rank (as text) -> the nonce rank 0 accepted
  std::string answer;      // "go"
};
// The head as rank 0 writes it (phase "meet", or "go" with members and the answer).
std::string head_text(const Run& run, const Head& head);
// The head, or nullopt with *why (not gpucheck's, of another version, unproven).
std::optional<Head> read_head(std::string_view text, const std::string& token, std::string* why);

}  // namespace gpucheck::rendezvous_wire
