// `gpucheck doctor` end to end: --list, --only/--skip with unknown ids (exit 2), the JSON
// document (checks next to the probe facts they judged), exit 1 on a FAIL fixture, --fail-on
// warn, INFO/SKIP never changing the exit code, the hidden --uid/--gids against real stat
// results, and a crashing probe child costing a finding, never the report.
#include "doctor/registry.h"
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(GPUCHECK_FIXTURES_DIR) / "doctor";

Json read_json(const fs::path& p) {
  std::ifstream in(p);
  return Json::parse(in);
}

// An empty directory: a system with no files at all.
std::string empty_root() {
  const fs::path root =
      fs::path(write_temp_file("empty_root_marker", "")).parent_path() / "empty_root";
  fs::create_directories(root);
  return root.string();
}

// A fixture case's facts as a file for --facts, and its root for --sysroot.
struct Materialised {
  std::string facts;
  std::string sysroot;
};

Materialised materialise(const std::string& check, const std::string& name) {
  const fs::path dir = kFixtures / check / name;
  const Json c = read_json(dir / "case.json");
  Json facts = read_json(kFixtures / c.value("facts", std::string("base_probe.json")));
  if (c.contains("facts_patch")) facts = facts.patch(c["facts_patch"]);
  Materialised m;
  m.facts = write_temp_file(check + "_" + name + ".json", facts.dump());
  m.sysroot = fs::exists(dir / "root") ? (dir / "root").string() : empty_root();
  return m;
}

Json statuses(const Json& doc) {
  Json out = Json::object();
  for (const auto& c : doc["checks"]) out[c["id"].get<std::string>()] = c["status"];
  return out;
}

TEST(DoctorCli, ListPrintsEveryCheckIdWithOneLine) {
  auto r = run_gpucheck({"doctor", "--list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::size_t lines = std::count(r.out.begin(), r.out.end(), '\n');
  EXPECT_EQ(lines, gpucheck::doctor::all_checks().size());
  for (const auto& c : gpucheck::doctor::all_checks()) {
    EXPECT_THAT(r.out, HasSubstr(std::string(c.id) + " "));
    EXPECT_THAT(r.out, HasSubstr(std::string(c.summary)));
  }
}

TEST(DoctorCli, UnknownOnlyIdIsUsageErrorNamingItAndTheNearestId) {
  auto r = run_gpucheck({"doctor", "--only", "nvidia_xidd,cpu_isa"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("--only: unknown check id nvidia_xidd (did you mean 'nvidia_xid'?)"));
  EXPECT_THAT(r.err, Not(HasSubstr("opencl_vendor_registration")));  // not all 64 ids
  EXPECT_TRUE(r.out.empty());
}

TEST(DoctorCli, UnknownSkipIdIsUsageErrorToo) {
  auto r = run_gpucheck({"doctor", "--skip", "nope", "--list"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--skip: unknown check id nope"));
}

TEST(DoctorCli, BadFailOnValueIsUsageError) {
  auto r = run_gpucheck({"doctor", "--fail-on", "info"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--fail-on"));
}

TEST(DoctorCli, JsonIsTheProbeDocumentWithChecks) {
  auto r = run_gpucheck({"doctor", "--json"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["schema"], "gpucheck/1");
  EXPECT_EQ(doc["command"], "doctor");
  for (const char* key : {"provenance", "host", "cpu", "memory", "backends", "checks"})
    EXPECT_TRUE(doc.contains(key)) << key;
  ASSERT_EQ(doc["checks"].size(), gpucheck::doctor::all_checks().size());
  std::size_t i = 0;
  for (const auto& c : gpucheck::doctor::all_checks()) {
    const Json& got = doc["checks"][i++];
    EXPECT_EQ(got["id"], std::string(c.id));
    EXPECT_FALSE(got["finding"].get<std::string>().empty());
    const std::string status = got["status"];
    if (status == "warn" || status == "fail") {
      EXPECT_TRUE(got.contains("fix")) << got.dump();
    }
  }
  // Exit 1 exactly when a check failed.
  bool any_fail = false;
  for (const auto& c : doc["checks"]) any_fail = any_fail || c["status"] == "fail";
  EXPECT_EQ(r.exit_code, any_fail ? 1 : 0);
}

TEST(DoctorCli, TableShowsChecksNotTheBackendDump) {
  auto r = run_gpucheck({"doctor", "--only", "cpu_isa,env_ld_preload"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n  (PASS|WARN|SKIP)  cpu_isa "));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\n2 checks: "));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("backend opencl")));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("opencl_loader")));
}

// -v gives each step's wall time, so a slow machine shows where its seconds went; a run that
// loads nothing logs no load step.
TEST(DoctorCli, VerboseTimesEachStep) {
  auto r = run_gpucheck({"doctor", "-v", "--no-frameworks", "--only", "cpu_isa,env_ld_preload"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_THAT(r.err, ::testing::ContainsRegex("doctor: probe: [0-9]+\\.[0-9]{2} s"));
  EXPECT_THAT(r.err, ::testing::ContainsRegex("probe child cpu: exited with status 0 in "));
  EXPECT_THAT(r.err, ::testing::ContainsRegex("doctor: 2 checks judged: [0-9]+\\.[0-9]{2} s"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("load step")));
  r = run_gpucheck({"doctor", "--no-frameworks", "--only", "cpu_isa"});
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("doctor: probe:")));
}

TEST(DoctorCli, AFailFixtureExitsOne) {
  auto m = materialise("opencl_vendor_registration", "fail");
  auto r = run_gpucheck({"doctor", "--json", "--facts", m.facts, "--sysroot", m.sysroot, "--only",
                         "opencl_vendor_registration"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["checks"].size(), 1u);
  EXPECT_EQ(doc["checks"][0]["status"], "fail");
  EXPECT_THAT(doc["checks"][0]["fix"].get<std::string>(),
              HasSubstr("echo /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 > "
                        "/etc/OpenCL/vendors/nvidia.icd"));
  // The facts it judged are in the document, from the file.
  EXPECT_EQ(doc["host"], read_json(m.facts)["host"]);
}

TEST(DoctorCli, APassFixtureExitsZero) {
  auto m = materialise("opencl_vendor_registration", "pass");
  auto r = run_gpucheck({"doctor", "--facts", m.facts, "--sysroot", m.sysroot, "--only",
                         "opencl_vendor_registration"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("PASS +opencl_vendor_registration"));
}

TEST(DoctorCli, FailOnWarnMakesWarningsCount) {
  auto m = materialise("opencl_vendors_dir", "fail");  // WARN: no vendors directory
  std::vector<std::string> args{"doctor",    "--json",  "--facts", m.facts,
                                "--sysroot", m.sysroot, "--only",  "opencl_vendors_dir"};
  auto r = run_gpucheck(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(statuses(Json::parse(r.out))["opencl_vendors_dir"], "warn");
  args.insert(args.end(), {"--fail-on", "warn"});
  r = run_gpucheck(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
}

// The problems are the last lines, one each with its fix, under the count: on an 80x24 terminal
// they are on the screen when doctor returns, whatever scrolled away above.
TEST(DoctorCli, TheTextViewEndsOnTheCountAndEachProblemWithItsFix) {
  auto m = materialise("opencl_vendors_dir", "fail");  // WARN: no vendors directory
  auto r = run_gpucheck({"doctor", "--facts", m.facts, "--sysroot", m.sysroot, "--only",
                         "opencl_vendors_dir,cpu_isa,env_ld_preload"},
                        {{"COLUMNS", "80"}, {"NO_COLOR", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < r.out.size();) {
    const std::size_t end = r.out.find('\n', at);
    lines.push_back(r.out.substr(at, end - at));
    at = end == std::string::npos ? r.out.size() : end + 1;
  }
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_THAT(lines[lines.size() - 2], ::testing::StartsWith("3 checks: ")) << r.out;
  EXPECT_THAT(lines.back(), ::testing::MatchesRegex("  WARN  opencl_vendors_dir +fix: .+"))
      << r.out;
  for (const auto& line : lines) {
    // Columns, not bytes: "…" is three bytes of UTF-8.
    const auto columns = std::count_if(line.begin(), line.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    });
    EXPECT_LE(columns, 80) << line;
  }
}

TEST(DoctorCli, InfoAndSkipNeverChangeTheExitCode) {
  auto m = materialise("opencl_gpu_devices", "info_no_gpu_expected");
  auto r = run_gpucheck({"doctor", "--json", "--facts", m.facts, "--sysroot", m.sysroot, "--only",
                         "opencl_gpu_devices,opencl_platform_family,wsl_gpu", "--fail-on", "warn"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json s = statuses(Json::parse(r.out));
  EXPECT_EQ(s["opencl_gpu_devices"], "info");
  EXPECT_EQ(s["opencl_platform_family"], "info");
  EXPECT_EQ(s["wsl_gpu"], "skip");
}

TEST(DoctorCli, ACrashedProbeChildIsAFindingNotACrash) {
  // Real probe output of an ICD that segfaults during enumeration.
  const std::string facts = (kFixtures / "probe_fake_icd_crash.json").string();
  auto r = run_gpucheck({"doctor", "--json", "--facts", facts, "--sysroot", empty_root()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json s = statuses(Json::parse(r.out));
  EXPECT_EQ(s["opencl_enumeration"], "fail");
  EXPECT_EQ(s["opencl_loader"], "skip");
}

TEST(DoctorCli, MisbehavingProbeChildrenNeverExitThree) {
  auto r = run_gpucheck({"doctor", "--json", "--probe-timeout", "2"},
                        {{"GPUCHECK_TEST_BACKENDS", "crash,hang,flood,weird"}});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["checks"].size(), gpucheck::doctor::all_checks().size());
}

TEST(DoctorCli, BadFactsFileIsUsageError) {
  auto r = run_gpucheck({"doctor", "--facts", write_temp_file("not_json.json", "{nope")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--facts"));
  r = run_gpucheck({"doctor", "--facts", write_temp_file("no_backends.json", "{}")});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(DoctorCli, HiddenFlagsAreHidden) {
  auto r = run_gpucheck({"doctor", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--fail-on"));
  EXPECT_THAT(r.out, HasSubstr("--only"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("--facts")));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("--gids")));
}

TEST(DoctorCli, UidAndGidsAreJudgedAgainstRealStatResults) {
  // A sysroot whose /dev/kfd is a plain file owned by this user, mode 0660: another uid outside
  // its group may not open it, its owner may. (Fixtures cannot hold character devices.)
  const fs::path root = fs::path(write_temp_file("kfd_root_marker", "")).parent_path() / "kfd_root";
  fs::create_directories(root / "dev/dri");
  { std::ofstream(root / "dev/kfd") << ""; }
  ASSERT_EQ(::chmod((root / "dev/kfd").c_str(), 0660), 0);
  const std::string me = std::to_string(::getuid());
  const std::string my_group = std::to_string(::getgid());
  const std::string facts = (kFixtures / "base_probe.json").string();
  auto r = run_gpucheck({"doctor", "--json", "--facts", facts, "--sysroot", root.string(), "--only",
                         "gpu_node_access", "--uid", "4242", "--gids", "4242,4243"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json denied = Json::parse(r.out)["checks"][0];
  EXPECT_EQ(denied["status"], "fail") << denied.dump();
  EXPECT_THAT(denied["fix"].get<std::string>(), HasSubstr("usermod -aG"));
  if (::getuid() != 4242) {
    r = run_gpucheck({"doctor", "--json", "--facts", facts, "--sysroot", root.string(), "--only",
                      "gpu_node_access", "--uid", me == "0" ? "4242" : me, "--gids", my_group});
    // Root's files: uid 4242 in root's group gets the group's rw bits.
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(Json::parse(r.out)["checks"][0]["status"], "pass");
  }
}

}  // namespace
