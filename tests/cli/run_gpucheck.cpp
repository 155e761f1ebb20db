// posix_spawnp with stdout/stderr to temporary files: simple and enough for tests.
#include "run_gpucheck.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace gpucheck::testing {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::filesystem::path temp_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpucheck-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

}  // namespace

RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                      const std::map<std::string, std::optional<std::string>>& env) {
  static int counter = 0;
  std::string base = (temp_dir() / ("run" + std::to_string(counter++))).string();
  std::string out_path = base + ".out", err_path = base + ".err";

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);

  std::vector<std::string> argv_s{program};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    if (env.count(entry.substr(0, entry.find('='))) == 0) env_s.push_back(entry);
  }
  for (const auto& [k, v] : env)
    if (v) env_s.push_back(k + "=" + *v);
  std::vector<char*> argv, envp;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawnp " + program + " failed");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::string gpucheck_binary() {
  // The GPU machine runs these tests against a staged install tree (tools/device/vulkan.sh),
  // not the build tree whose path was compiled in.
  const char* staged = std::getenv("GPUCHECK_TEST_BINARY");
  return staged != nullptr && *staged != '\0' ? staged : GPUCHECK_BINARY;
}

RunResult run_gpucheck(const std::vector<std::string>& args,
                       const std::map<std::string, std::optional<std::string>>& env) {
  return run_program(gpucheck_binary(), args, env);
}

bool have_program(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

std::string write_temp_file(const std::string& name, const std::string& text) {
  auto path = temp_dir() / name;
  // A name with directories ("keep/good.json") gets them, so a test can own a directory.
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

std::string write_small_document(const std::string& name) {
  return write_temp_file(
      name, R"({"schema":"gpucheck/1","command":"bench","provenance":{"gpucheck_version":"0.1.0",)"
            R"("git_commit":"x","time":"2025-01-01T00:00:00Z","argv":[],"environment":{},)"
            R"("backends_built":["cpu"]},"results":[]})");
}

pid_t spawn_gpucheck(std::vector<std::string> args, const std::string& marker,
                     const std::string& out) {
  args.insert(args.begin(), gpucheck_binary());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s{marker};
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!out.empty())
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

}  // namespace gpucheck::testing
