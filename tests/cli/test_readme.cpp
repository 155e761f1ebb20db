// The README's promises, checked against the code: what its commands print and how it says to
// install (a newcomer copies these lines first).
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;

const fs::path kSource = GPUCHECK_SOURCE_DIR;

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The README and the usage reference: what a reader is told.
std::vector<std::pair<std::string, std::string>> documented_lines() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* doc : {"README.md", "docs/USAGE.md"})
    if (fs::exists(kSource / doc))
      for (const auto& l : lines_of(kSource / doc)) out.emplace_back(doc, l);
  return out;
}

// doctor --quick --format oneline is silent on a healthy node (node-problem-detector relies on
// it): no example may promise a line there without --ok-line.
TEST(Readme, TheOnelineHealthCheckIsDocumentedAsSilentWhenHealthy) {
  const std::string root = fs::path(write_temp_file("readme/root/.keep", "")).parent_path();
  const std::string facts = std::string(GPUCHECK_FIXTURES_DIR) + "/doctor/base_probe.json";
  auto r = run_gpucheck({"doctor", "--quick", "--facts", facts, "--sysroot", root, "--no-state",
                         "--format", "oneline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out, "");
  std::size_t examples = 0;
  for (const auto& [doc, line] : documented_lines()) {
    if (line.find("gpucheck doctor --quick --format oneline") == std::string::npos) continue;
    const auto hash = line.find("  # ");
    if (hash == std::string::npos || line.find("--ok-line", 0) < hash) continue;
    ++examples;
    EXPECT_THAT(line.substr(hash), HasSubstr("silent when healthy")) << doc << ": " << line;
  }
  EXPECT_GE(examples, 1u);
}

// Debian 12 and Ubuntu 24.04 refuse `pip install` outside a venv (externally-managed-environment):
// every pip install shown is a venv's pip or pipx.
TEST(Readme, TheWheelIsInstalledIntoAVenvOrWithPipx) {
  const std::regex bare_pip(R"((^|[\s`(])pip3? install)");
  bool venv = false, pipx = false;
  for (const auto& [doc, line] : documented_lines()) {
    EXPECT_FALSE(std::regex_search(line, bare_pip)) << doc << ": " << line;
    venv = venv || line.find("-m venv") != std::string::npos;
    pipx = pipx || line.find("pipx install") != std::string::npos;
  }
  EXPECT_TRUE(venv);
  EXPECT_TRUE(pipx);
}

}  // namespace

// The README is for a newcomer: short, what gpucheck prints first, one install section with the
// three ways, the developers' pointer near the top; the reference lives in docs/USAGE.md.
TEST(Readme, IsShortShowsRealOutputFirstAndPointsToTheReference) {
  const auto readme = lines_of(kSource / "README.md");
  EXPECT_LE(readme.size(), 200u);
  std::string first_screen, all;
  for (std::size_t i = 0; i < readme.size(); ++i) {
    if (i < 50) first_screen += readme[i] + "\n";
    all += readme[i] + "\n";
  }
  EXPECT_THAT(first_screen, HasSubstr("$ gpucheck probe\ngpucheck probe: "));  // its output
  EXPECT_THAT(first_screen, HasSubstr("docs/ARCHITECTURE.md"));
  EXPECT_THAT(first_screen, HasSubstr("docs/USAGE.md"));
  std::size_t installs = 0;
  for (const auto& l : readme) installs += l.rfind("## Install", 0) == 0 ? 1 : 0;
  EXPECT_EQ(installs, 1u);
  const auto install = all.substr(all.find("\n## Install"));
  const auto section = install.substr(0, install.find("\n## ", 1));
  for (const char* way : {"tools/quickstart.sh", "-m venv", "pipx install", ".deb"})
    EXPECT_THAT(section, HasSubstr(way));
  // The reference moved, whole: every command's section and the exit codes.
  const auto usage = lines_of(kSource / "docs" / "USAGE.md");
  std::string reference;
  for (const auto& l : usage) reference += l + "\n";
  for (const char* part : {"\n### qualify\n", "\n### stress\n", "\n### report\n", "\n## Output\n",
                           "\n## Exit codes\n", "--tolerance"})
    EXPECT_THAT(reference, HasSubstr(part));
}

// Timings in the README are measured ones: each "N s" figure is one docs/PERFORMANCE.md holds.
TEST(Readme, QuotesOnlyTimingsThatPerformanceMdHolds) {
  std::ifstream in(kSource / "docs" / "PERFORMANCE.md");
  std::stringstream perf;
  perf << in.rdbuf();
  const std::regex figure(R"(\b([0-9]+(\.[0-9]+)?) s\b)");
  for (const auto& line : lines_of(kSource / "README.md"))
    for (std::sregex_iterator it(line.begin(), line.end(), figure), end; it != end; ++it)
      EXPECT_THAT(perf.str(), HasSubstr(it->str())) << line;
}
