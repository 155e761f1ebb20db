// The file form. Rank 0 writes FILE (the head: a fresh challenge), each rank answers with
// FILE.rank<N> (its hello), rank 0 rewrites FILE with the answer and the nonce of every hello it
// accepted; every write is a rename of a fresh 0600 file created with O_EXCL|O_NOFOLLOW, so no
// reader sees half a file and no planted link is followed. Each rank removes its hello once it
// has read rank 0's answer, and rank 0 then removes FILE. Nothing replaces or removes a file
// gpucheck did not write.
#include "core/errors.h"
#include "core/files.h"
#include "core/json_input.h"
#include "core/rendezvous_transport.h"
#include "core/sanitize.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace gpucheck::rendezvous_detail {

namespace {

namespace wire = rendezvous_wire;
using nlohmann::json;

// A head holds the answer (at most kMaxAnswerBytes) and a nonce per rank.
constexpr std::size_t kMaxHeadBytes = 4 * wire::kMaxAnswerBytes;

std::string rank_file(const std::string& file, int rank) {
  return fmt::format("{}.rank{}", file, rank);
}

// UsageError unless `path` is absent or a regular file some gpucheck rendezvous wrote: a user's
// notes.txt named by mistake, or a link planted in its place, is never replaced.
void refuse_foreign(const std::string& file, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw UsageError(fmt::format("--rendezvous {}: cannot look at '{}': lstat: {}", file, path,
                                 std::strerror(errno)));
  }
  bool ours = false;
  if (S_ISREG(st.st_mode)) {
    const auto text = read_text_file(path, kMaxHeadBytes);
    const auto magic =
        text ? wire::text_field(parse_json_or_discarded(*text), "magic", 64) : std::nullopt;
    ours = magic && magic->rfind(wire::kMagicFamily, 0) == 0;
  }
  if (!ours)
    throw UsageError(fmt::format(
        "--rendezvous {}: '{}' exists and is not a gpucheck rendezvous file (gpucheck replaces "
        "and removes only files it wrote): name a file that does not exist",
        file, path));
}

// Writes `path` whole through a fresh file renamed over it.
void write_file(const std::string& file, const std::string& path, const std::string& text) {
  refuse_foreign(file, path);
  const std::string tmp = fmt::format("{}.tmp.{}", path, wire::random_hex(8));
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd < 0)
    throw UsageError(fmt::format("--rendezvous {}: cannot create '{}': open: {}", file, tmp,
                                 std::strerror(errno)));
  std::size_t done = 0;
  int error = 0;
  while (done < text.size() && error == 0) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  const char* call = error != 0 ? "write" : "rename";
  if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    throw UsageError(fmt::format("--rendezvous {}: cannot write '{}': {}: {}", file, path, call,
                                 std::strerror(error)));
  }
}

// Removes FILE when it still is the head with this challenge.
void remove_head(const std::string& file, const std::string& challenge) {
  std::string why;
  const auto text = read_text_file(file, kMaxHeadBytes);
  const auto head = text ? wire::read_head(*text, "", &why) : std::nullopt;
  if (head && head->challenge == challenge) ::unlink(file.c_str());
}

}  // namespace

RendezvousResult file_rank0(const RendezvousRequest& q, const RendezvousAnswer& answer) {
  const std::string& file = q.place.file;
  const wire::Run run = run_of(q);
  wire::Head head;
  head.challenge = wire::random_hex(16);
  head.created = unix_now();
  head.host = host_name();
  head.pid = ::getpid();
  head.phase = "meet";
  write_file(file, file, wire::head_text(run, head));
  const auto deadline = deadline_after(q.timeout_s);
  RendezvousResult out;
  out.identities.assign(static_cast<std::size_t>(q.world_size), {});
  out.identities[0] = q.identity;
  json members = json::object();
  std::vector<bool> met(static_cast<std::size_t>(q.world_size), false);
  met[0] = true;
  std::string refused;  // the last hello turned away, for the timeout's message
  while (true) {
    std::vector<int> missing;
    for (int r = 1; r < q.world_size; ++r) {
      if (met[static_cast<std::size_t>(r)]) continue;
      const auto text = read_text_file(rank_file(file, r), wire::kMaxHelloBytes);
      const auto check = text ? wire::check_hello(*text, run, head.challenge) : wire::HelloCheck{};
      if (check.hello && check.hello->rank == r) {
        met[static_cast<std::size_t>(r)] = true;
        out.identities[static_cast<std::size_t>(r)] = check.hello->identity;
        members[std::to_string(r)] = check.hello->nonce;
        continue;
      }
      if (text && !check.refusal.empty())
        refused = fmt::format("{}: {}", rank_file(file, r), check.refusal);
      missing.push_back(r);
    }
    if (missing.empty()) break;
    if (Clock::now() > deadline) {
      const std::string tail =
          refused.empty() ? "" : fmt::format(" (a hello was turned away: {})", refused);
      throw UsageError(fmt::format(
          "{} for rank(s) {} (each answers {} with {}.rank<N>; none came from {}){}: {}", waited(q),
          ranks_text(missing), file, file, missing.size() == 1 ? "it" : "them", tail, kHint));
    }
    std::this_thread::sleep_for(kPoll);
  }
  out.answer = answer(out.identities);
  head.phase = "go";
  head.members = members;
  head.answer = out.answer;
  write_file(file, file, wire::head_text(run, head));
  // Each rank removes its hello once it has read rank 0's answer: then no rank needs the file,
  // and a later run must not read it. A rank that never says so leaves it for retire_rendezvous.
  while (Clock::now() <= deadline) {
    bool all_read = true;
    for (int r = 1; r < q.world_size && all_read; ++r)
      all_read = ::access(rank_file(file, r).c_str(), F_OK) != 0;
    if (all_read) {
      remove_head(file, head.challenge);
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  return out;
}

RendezvousResult file_rank(const RendezvousRequest& q) {
  const std::string& file = q.place.file;
  const wire::Run run = run_of(q);
  const double started = unix_now();
  const auto deadline = deadline_after(q.timeout_s);
  const std::string nonce = wire::random_hex(16);
  std::string answered;  // the challenge of rank 0's head this rank answered
  std::string last = fmt::format("no '{}' was written", file);
  while (true) {
    if (const auto text = read_text_file(file, kMaxHeadBytes)) {
      std::string why;
      const auto h = wire::read_head(*text, q.token, &why);
      if (!h) {
        last = fmt::format("'{}' is no rendezvous file of this run: {}", file, why);
      } else if (h->session != q.session) {
        last = fmt::format("'{}' is stale: written for run '{}', this is run '{}'", file,
                           sanitize(h->session), q.session);
      } else if (h->created < started - q.timeout_s) {
        last = fmt::format(
            "'{}' is stale: written by {} (pid {}) {:.0f} s before this rank started, longer "
            "ago than --rendezvous-timeout; rank 0 of this run never rewrote it",
            file, h->host, h->pid, started - h->created);
      } else if (h->world_size != q.world_size) {
        throw UsageError(fmt::format(
            "--rendezvous {}: rank 0 ({} pid {}) runs a world of {} ranks, this rank was given "
            "--world-size {}: {}",
            file, h->host, h->pid, h->world_size, q.world_size, kHint));
      } else {
        const bool go = h->phase == "go";
        if (go && h->challenge == answered &&
            wire::text_field(h->members, std::to_string(q.rank), 64) == nonce) {
          ::unlink(rank_file(file, q.rank).c_str());  // read: rank 0 may remove the file
          return {h->answer, {}};
        }
        if (go) {
          last =
              fmt::format("'{}' is stale: its ranks met without this rank (written by {} pid {})",
                          file, h->host, h->pid);
        } else if (h->challenge != answered) {
          write_file(file, rank_file(file, q.rank),
                     wire::hello_text(run, h->challenge, q.rank, nonce, q.identity));
          answered = h->challenge;
          last = fmt::format("rank 0 ({} pid {}) never answered: the other ranks did not all come",
                             h->host, h->pid);
        }
      }
    }
    if (Clock::now() > deadline)
      throw UsageError(fmt::format("{} for rank 0 at {}: {}; {}", waited(q), file, last, kHint));
    std::this_thread::sleep_for(kPoll);
  }
}

void retire_file(const std::string& file) {
  std::string why;
  const auto text = read_text_file(file, kMaxHeadBytes);
  const auto head = text ? wire::read_head(*text, "", &why) : std::nullopt;
  if (head && head->pid == ::getpid() && head->host == sanitize(host_name()))
    ::unlink(file.c_str());
}

}  // namespace gpucheck::rendezvous_detail
