// The hidden `gpucheck __cli-spec` says what --help says (every subcommand and option), and the
// man page and the bash and zsh completions the build generates from it know every one of them.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using gpucheck::testing::have_program;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;
using Names = std::set<std::string>;

struct Command {
  std::string path;  // "" for gpucheck itself, "report show"
  Names subcommands, options;
};

std::vector<Command> spec() {
  auto r = run_gpucheck({"__cli-spec"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<Command> out;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& c : doc.at("commands")) {
    Command cmd{c.at("path"), {}, {}};
    for (const auto& s : c.at("subcommands")) cmd.subcommands.insert(s.get<std::string>());
    for (const auto& o : c.at("options"))
      for (const auto& n : o.at("names")) cmd.options.insert(n.get<std::string>());
    out.push_back(cmd);
  }
  EXPECT_GE(out.size(), 10u);  // gpucheck, its six commands, report's three
  return out;
}

std::vector<std::string> words(const std::string& path) {
  std::istringstream in(path);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The option names of --help's option column and the names under "Subcommands:".
Command from_help(const std::string& path) {
  auto args = words(path);
  args.push_back("--help");
  auto r = run_gpucheck(args);
  EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
  Command cmd{path, {}, {}};
  static const std::regex kNames(
      R"(^  ((?:-[A-Za-z0-9]|--[a-z0-9][a-z0-9-]*)(?:, ?(?:-[A-Za-z0-9]|--[a-z0-9][a-z0-9-]*))*))");
  static const std::regex kName(R"(--?[A-Za-z0-9][a-z0-9-]*)");
  static const std::regex kSub(R"(^  ([a-z][a-z0-9-]*)\b)");
  std::istringstream in(r.out);
  bool in_subcommands = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_subcommands = true;
      continue;
    }
    if (line.empty() || line[0] != ' ') in_subcommands = false;
    std::smatch m;
    if (in_subcommands && std::regex_search(line, m, kSub)) {
      cmd.subcommands.insert(m[1]);
    } else if (std::regex_search(line, m, kNames)) {
      const std::string names = m[1];
      for (std::sregex_iterator it(names.begin(), names.end(), kName), end; it != end; ++it)
        cmd.options.insert(it->str());
    }
  }
  return cmd;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Names split(const std::string& text) {
  Names out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

// What the completion functions answer for `gpucheck PATH <cur>`, run in bash. `functions` is
// shell text defining _gpucheck_subcommands and _gpucheck_options (the same in both shells).
std::string ask(const std::string& functions, const std::string& call) {
  auto r = run_program("bash", {"-c", functions + "\n" + call});
  EXPECT_EQ(r.exit_code, 0) << call << ": " << r.err;
  return r.out;
}

const fs::path kGenerated = GPUCHECK_GENERATED_DIR;

}  // namespace

TEST(CliSpec, NamesEverySubcommandAndOptionThatHelpShows) {
  const auto commands = spec();
  Names paths;
  for (const auto& c : commands) {
    SCOPED_TRACE("gpucheck " + c.path);
    paths.insert(c.path);
    const Command help = from_help(c.path);
    EXPECT_EQ(c.options, help.options);
    EXPECT_EQ(c.subcommands, help.subcommands);
    EXPECT_TRUE(c.options.count("--help"));
  }
  for (const char* p : {"probe", "bench", "doctor", "qualify", "stress", "report", "report show",
                        "report compare", "report fleet"})
    EXPECT_TRUE(paths.count(p)) << p;
  EXPECT_FALSE(paths.count("__child"));  // hidden commands stay hidden
  EXPECT_FALSE(paths.count("__cli-spec"));
}

TEST(CliSpec, TheManPageHasASectionPerCommandWithEveryOption) {
  const fs::path page = kGenerated / "gpucheck.1";
  if (!fs::exists(page)) GTEST_SKIP() << "no " << page << " (help2man not installed)";
  std::string text = slurp(page);
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  for (const auto& c : spec()) {
    if (c.path.empty()) continue;
    SCOPED_TRACE("gpucheck " + c.path);
    const std::string head = ".SS \"gpucheck " + c.path + "\"";
    const auto start = text.find(head);
    ASSERT_NE(start, std::string::npos) << head;
    const auto end = text.find("\n.S", start + head.size());
    const std::string section = text.substr(start, end - start);
    for (const auto& o : c.options)
      EXPECT_TRUE(std::regex_search(section, std::regex("(^|[ ,\\[])" + o + "\\b"))) << o;
    for (const auto& s : c.subcommands) EXPECT_THAT(section, HasSubstr("  " + s)) << s;
  }
}

TEST(CliSpec, TheBashCompletionOffersEverySubcommandAndOption) {
  const fs::path bash = kGenerated / "gpucheck.bash";
  ASSERT_TRUE(fs::exists(bash)) << bash;
  const std::string source = "source '" + bash.string() + "'";
  EXPECT_THAT(ask(source, "complete -p gpucheck"), HasSubstr("_gpucheck"));
  for (const auto& c : spec()) {
    SCOPED_TRACE("gpucheck " + c.path);
    std::string cmdline = "gpucheck";
    for (const auto& w : words(c.path)) cmdline += " " + w;
    const std::string n = std::to_string(words(c.path).size() + 1);
    auto complete = [&](const std::string& cur) {
      return split(ask(source, "COMP_WORDS=(" + cmdline + " '" + cur + "'); COMP_CWORD=" + n +
                                   "; _gpucheck; printf '%s\\n' \"${COMPREPLY[@]}\""));
    };
    EXPECT_EQ(complete("-"), c.options);
    if (!c.subcommands.empty()) {
      EXPECT_EQ(complete(""), c.subcommands);
    }
  }
}

TEST(CliSpec, TheZshCompletionKnowsEverySubcommandAndOption) {
  const fs::path zsh = kGenerated / "_gpucheck";
  ASSERT_TRUE(fs::exists(zsh)) << zsh;
  const std::string text = slurp(zsh);
  ASSERT_EQ(text.rfind("#compdef gpucheck\n", 0), 0u);
  if (have_program("zsh")) {
    auto r = run_program("zsh", {"-n", zsh.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // Its two table functions are plain case statements, which bash runs as zsh does.
  const auto begin = text.find("_gpucheck_subcommands() {");
  const auto end = text.find("\n_gpucheck() {");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string functions = text.substr(begin, end - begin);
  for (const auto& c : spec()) {
    SCOPED_TRACE("gpucheck " + c.path);
    EXPECT_EQ(split(ask(functions, "_gpucheck_options '" + c.path + "'")), c.options);
    EXPECT_EQ(split(ask(functions, "_gpucheck_subcommands '" + c.path + "'")), c.subcommands);
  }
}

// The values an option takes come from the binary, not a hand-kept list: every op (p2p and
// allreduce too), every format a command has (doctor's oneline), the check ids, the devices
// this machine's probe lists (vulkan0 where lavapipe is), and a list completes its last item.
TEST(CliSpec, TheBashCompletionOffersTheValuesTheBinaryAccepts) {
  const fs::path bash = kGenerated / "gpucheck.bash";
  ASSERT_TRUE(fs::exists(bash)) << bash;
  const std::string source = "source '" + bash.string() + "'";
  auto complete = [&](const std::string& words) {
    // COMP_WORDS[0] is the binary itself, so the device probe runs this build's gpucheck.
    const std::string line = "'" + std::string(GPUCHECK_BINARY) + "' " + words;
    return split(ask(source, "COMP_WORDS=(" + line + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); " +
                                 "_gpucheck; printf '%s\\n' \"${COMPREPLY[@]}\""));
  };
  const Names ops = complete("bench --ops ''");
  for (const char* op :
       {"exp", "gemm", "conv", "copy", "latency", "seedloop", "p2p", "allreduce", "net"})
    EXPECT_TRUE(ops.count(op)) << op;
  EXPECT_EQ(complete("bench --ops exp,ge"), Names{"exp,gemm"});
  EXPECT_TRUE(complete("doctor --format ''").count("oneline"));
  EXPECT_FALSE(complete("bench --format ''").count("oneline"));
  EXPECT_EQ(complete("doctor --only nvidia_xi"), (Names{"nvidia_xid"}));
  EXPECT_TRUE(complete("doctor --fail-on ''").count("warn"));
  EXPECT_TRUE(complete("bench --framework ''").count("torch"));
  EXPECT_TRUE(complete("stress --tests ''").count("memory"));
  EXPECT_TRUE(complete("bench --size ''").count("medium"));
  // Devices: what `probe -L` lists here (the first word of each line), and all.
  auto listed = run_gpucheck({"probe", "-L"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  Names devices{"all"};
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);)
    if (std::smatch m; std::regex_search(line, m, std::regex("^([a-z]+[0-9]*)\\b")))
      devices.insert(m[1]);
  EXPECT_TRUE(devices.count("cpu"));
  EXPECT_EQ(complete("bench --device ''"), devices);
}
