// posix_spawn + poll: children run in parallel, each bounded in time and output.
#include "core/child_process.h"

#include "core/environment.h"
#include "core/errors.h"
#include "core/sanitize.h"
#include "core/stop_signals.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

extern char** environ;

namespace gpucheck {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  Clock::time_point start;
  Clock::time_point last_output;  // of stdout; start until the first byte
  bool any_output = false;
  bool done = false;
  // Registered while running: a stop signal kills the child's process group.
  std::unique_ptr<StoppableChild> stoppable;
};

std::vector<std::string> make_environment(const ChildSpec& spec) {
  std::vector<std::string> env;
  for (char** e = spec.inherit_environment ? environ : nullptr; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (spec.env.count(name) == 0) env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : spec.env)
    if (value) env.push_back(name + "=" + *value);
  return env;
}

std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// An anonymous file holding data, read from its start; -1 and *error on failure.
int memory_file(const std::string& data, std::string* error) {
  int fd = ::memfd_create("gpucheck-child-stdin", MFD_CLOEXEC);
  if (fd < 0) {
    *error = fmt::format("memfd_create failed: {}", std::strerror(errno));
    return -1;
  }
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = fmt::format("writing the child's input failed: {}", std::strerror(errno));
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

// Spawns one child with stdout and stderr on pipes; the result records a spawn failure.
Running spawn_one(const ChildSpec& spec, ChildResult& result) {
  Running r;
  int in_fd = -1;
  if (!spec.stdin_data.empty() && (in_fd = memory_file(spec.stdin_data, &result.spawn_error)) < 0)
    return r;
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.spawn_error = fmt::format("pipe2 failed: {}", std::strerror(errno));
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], in_fd})
      if (fd >= 0) ::close(fd);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  if (in_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, in_fd, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Its own session and process group, so ending it ends whatever it started too; no signal blocked
  // (the parent blocks the stop signals around the spawn).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // setsid makes it the leader of a new session and of a new process group (pgid = pid), off
  // gpucheck's terminal; POSIX_SPAWN_SETPGROUP would fail after it (a leader cannot move).
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);

  const std::string program = spec.program.empty() ? "/proc/self/exe" : spec.program;
  std::vector<std::string> argv_s{spec.program.empty() ? "gpucheck" : spec.program};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> env_s = make_environment(spec);
  auto argv = c_array(argv_s);
  auto envp = c_array(env_s);

  r.start = r.last_output = Clock::now();
  int rc = 0;
  {
    StopSignalsBlocked blocked;  // registered before a stop signal can look for it
    rc = ::posix_spawn(&r.pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    if (rc == 0) r.stoppable = std::make_unique<StoppableChild>(r.pid);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (in_fd >= 0) ::close(in_fd);
  if (rc != 0) {
    result.spawn_error = fmt::format("posix_spawn({}) failed: {}", program, std::strerror(rc));
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    r.pid = -1;
    return r;
  }
  r.out_fd = out_pipe[0];
  r.err_fd = err_pipe[0];
  return r;
}

// Whether the child has ended. It is left a zombie (WNOWAIT), so that its pid and process group
// stay its own until finish() has ended the group and reaped it.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    if (errno != EINTR) return true;  // not a child of ours any more: nothing to wait for
  return info.si_pid == pid;
}

// Reaps a child that was killed; a process stuck in the kernel may never go away.
bool reap(pid_t pid, int& status, std::chrono::milliseconds patience) {
  auto until = Clock::now() + patience;
  while (true) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return true;
    if (got < 0 && errno != EINTR) return false;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void finish(Running& r, ChildResult& res, ChildResult::End forced) {
  close_fd(r.out_fd);
  close_fd(r.err_fd);
  int status = 0;
  // The whole group, on every path: what the child left running (`sleep 1000 &`) ends with it.
  // A child that exited is a zombie until reaped below, so its group id is still its own.
  ::kill(-r.pid, SIGKILL);
  // Deregistered before reaping: after waitpid the pid may belong to another process.
  r.stoppable.reset();
  bool reaped = reap(r.pid, status, std::chrono::milliseconds(5000));
  res.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  r.done = true;
  if (!reaped) {
    res.end = ChildResult::End::kNotReaped;
    return;
  }
  if (forced != ChildResult::End::kExited) {
    res.end = forced;
  } else if (WIFSIGNALED(status)) {
    res.end = ChildResult::End::kSignaled;
    res.signal = WTERMSIG(status);
  } else {
    res.end = ChildResult::End::kExited;
    res.exit_code = WEXITSTATUS(status);
  }
}

}  // namespace

std::string ChildResult::describe(std::chrono::duration<double> timeout,
                                  std::size_t max_output) const {
  switch (end) {
    case End::kExited:
      return fmt::format("exited with status {}", exit_code);
    case End::kSignaled: {
      const char* abbrev = sigabbrev_np(signal);
      return fmt::format("killed by signal {} (SIG{}: {})", signal, abbrev ? abbrev : "?",
                         strsignal(signal));
    }
    case End::kTimedOut:
      return fmt::format("timed out after {:g} s and was killed", timeout.count());
    case End::kOutputTooLarge:
      return fmt::format("wrote more than {} bytes of output and was killed", max_output);
    case End::kSpawnFailed:
      return spawn_error;
    case End::kNotReaped:
      return "did not end after SIGKILL (stuck in the kernel, likely in the driver)";
    case End::kStopped:
      return fmt::format("was asked to stop (SIGTERM) and still ran {:g} s later, so was killed",
                         silence_limit);
    case End::kSilent:
      return fmt::format("stopped making progress (no output for {:g} s: hung) and was killed",
                         silence_limit);
  }
  return "unknown";
}

std::vector<ChildResult> run_children(const std::vector<ChildSpec>& specs,
                                      const ChildLimits& limits, const OutputObserver& observer) {
  std::vector<ChildResult> results(specs.size());
  std::vector<Running> running(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    running[i] = spawn_one(specs[i], results[i]);
    if (running[i].pid < 0) {
      results[i].end = ChildResult::End::kSpawnFailed;
      running[i].done = true;
    }
  }
  const auto deadline_of = [&](const Running& r) {
    return r.start + std::chrono::duration_cast<Clock::duration>(limits.timeout);
  };
  // When a silent child counts as hung; max() without a silence limit.
  const auto silence_deadline_of = [&](const Running& r) {
    const auto& limit = r.any_output ? limits.max_silence : limits.startup_silence;
    if (!limit) return Clock::time_point::max();
    return r.last_output + std::chrono::duration_cast<Clock::duration>(*limit);
  };
  std::optional<Clock::time_point> stop_sent;  // when the children were asked to stop
  const auto stop_deadline = [&]() {
    return stop_sent ? *stop_sent + std::chrono::duration_cast<Clock::duration>(limits.stop_grace)
                     : Clock::time_point::max();
  };
  char buf[65536];
  // One read from a child's pipe; false once the pipe is at its end or the child was stopped.
  const auto read_pipe = [&](std::size_t i, bool is_out) {
    Running& r = running[i];
    int& fd = is_out ? r.out_fd : r.err_fd;
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) return true;
    if (got <= 0) {
      close_fd(fd);
      return false;
    }
    if (is_out) {
      r.last_output = Clock::now();
      r.any_output = true;
    }
    std::string& sink = is_out ? results[i].out : results[i].err;
    sink.append(buf, static_cast<std::size_t>(got));
    if (is_out && observer) observer(i, std::string_view(buf, static_cast<std::size_t>(got)));
    if (is_out && sink.size() > limits.max_output) {
      sink.resize(limits.max_output);
      finish(r, results[i], ChildResult::End::kOutputTooLarge);
      return false;
    } else if (!is_out && sink.size() > 2 * limits.max_err) {
      sink.erase(0, sink.size() - limits.max_err);
    }
    return true;
  };
  // What an ended child left in its pipes: read while there is something to read now, a pipe's
  // capacity at most (something it started may write on for ever).
  const auto drain = [&](std::size_t i) {
    for (bool is_out : {true, false})
      for (int reads = 0; reads < 64 && !running[i].done; ++reads) {
        const int fd = is_out ? running[i].out_fd : running[i].err_fd;
        if (fd < 0) break;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || !read_pipe(i, is_out)) break;
      }
  };
  while (true) {
    if (!stop_sent && limits.stop_signal && limits.stop_signal() != 0) {
      stop_sent = Clock::now();
      for (const auto& r : running)
        if (!r.done) ::kill(r.pid, SIGTERM);
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<std::size_t, bool>> owner;  // (child, is_stdout)
    bool any_running = false;
    for (std::size_t i = 0; i < running.size(); ++i) {
      Running& r = running[i];
      if (r.done) continue;
      // Ended: what it wrote before is in the pipes (something it started may hold them open).
      // A child that closed its pipes but runs on is still bound by the limits below.
      if (has_exited(r.pid)) {
        drain(i);
        if (!r.done) finish(r, results[i], ChildResult::End::kExited);
        continue;
      }
      any_running = true;
      if (Clock::now() >= deadline_of(r)) {
        finish(r, results[i], ChildResult::End::kTimedOut);
        continue;
      }
      if (Clock::now() >= stop_deadline()) {
        results[i].silence_limit = limits.stop_grace.count();
        finish(r, results[i], ChildResult::End::kStopped);
        continue;
      }
      if (Clock::now() >= silence_deadline_of(r)) {
        results[i].silence_limit =
            (r.any_output ? *limits.max_silence : *limits.startup_silence).count();
        finish(r, results[i], ChildResult::End::kSilent);
        continue;
      }
      if (r.out_fd >= 0) {
        fds.push_back({r.out_fd, POLLIN, 0});
        owner.emplace_back(i, true);
      }
      if (r.err_fd >= 0) {
        fds.push_back({r.err_fd, POLLIN, 0});
        owner.emplace_back(i, false);
      }
    }
    if (!any_running) break;
    auto next_deadline = Clock::time_point::max();
    for (const auto& r : running)
      if (!r.done)
        next_deadline =
            std::min({next_deadline, deadline_of(r), silence_deadline_of(r), stop_deadline()});
    auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now());
    // At most 100 ms: an ended child whose pipes stay open (a grandchild holds them) is seen.
    int timeout_ms = static_cast<int>(std::clamp<long long>(wait_ms.count() + 1, 0, 100));
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) throw_errno("poll", __FILE__, __LINE__);
    for (std::size_t f = 0; n > 0 && f < fds.size(); ++f) {
      if (fds[f].revents == 0) continue;
      auto [i, is_out] = owner[f];
      if (!running[i].done) read_pipe(i, is_out);
    }
  }
  for (auto& res : results)
    if (res.err.size() > limits.max_err) res.err.erase(0, res.err.size() - limits.max_err);
  return results;
}

std::string redact_child_words(std::string_view words) {
  return redact_secret_values(strip_url_credentials(sanitize(words)));
}

int reserve_stdout_for_result() {
  int result_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (result_fd < 0) throw_errno("fcntl(F_DUPFD_CLOEXEC)", __FILE__, __LINE__);
  GC_POSIX_CHECK(::dup2(STDERR_FILENO, STDOUT_FILENO));
  return result_fd;
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("write", __FILE__, __LINE__);
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace gpucheck
