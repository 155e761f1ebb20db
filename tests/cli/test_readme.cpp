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
