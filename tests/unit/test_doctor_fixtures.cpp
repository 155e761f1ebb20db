// Every doctor check against its fixtures: tests/fixtures/doctor/<check-id>/<case>/case.json
// (facts = a saved real probe document plus a JSON Patch of the fields the check reads, an
// environment, an identity and stat results) and the case's root/ tree. Each case asserts the
// exact status; every check has a pass (its healthy status) and a fail (WARN or FAIL) case.
#include "doctor/inject.h"
#include "doctor/registry.h"
#include "doctor/system_view.h"
#include "host/infiniband.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gpucheck::doctor {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(GPUCHECK_FIXTURES_DIR) / "doctor";

Json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return Json::parse(in);
}

struct Case {
  std::string check;
  std::string name;
  fs::path dir;
};

std::vector<Case> all_cases() {
  std::vector<Case> out;
  std::error_code ec;
  for (const auto& check : fs::directory_iterator(kFixtures, ec)) {
    if (!check.is_directory()) continue;
    for (const auto& c : fs::directory_iterator(check.path())) {
      if (fs::exists(c.path() / "case.json"))
        out.push_back({check.path().filename().string(), c.path().filename().string(), c.path()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) {
    return std::tie(a.check, a.name) < std::tie(b.check, b.name);
  });
  return out;
}

// The facts a case describes: its saved probe document with its patch applied.
Json case_facts(const Json& c) {
  Json facts = read_json(kFixtures / c.value("facts", std::string("base_probe.json")));
  if (c.contains("facts_patch")) facts = facts.patch(c["facts_patch"]);
  return facts;
}

FileStat stat_of(const Json& s) {
  const std::string type = s.value("type", std::string("char"));
  std::uint32_t mode =
      static_cast<std::uint32_t>(std::stoul(s.at("mode").get<std::string>(), nullptr, 8));
  mode |= type == "char" ? S_IFCHR : type == "dir" ? S_IFDIR : S_IFREG;
  return {mode, s.value("uid", 0u), s.value("gid", 0u)};
}

int errno_of(const std::string& name) {
  if (name == "ok") return 0;
  if (name == "EPERM") return EPERM;
  if (name == "EACCES") return EACCES;
  if (name == "ENXIO") return ENXIO;
  if (name == "ENOENT") return ENOENT;
  throw std::runtime_error("case.json: unknown errno name " + name);
}

// The SystemView of a case: root/ under the case directory (absent: an empty system).
SystemView view_of(const Case& k, const Json& c) {
  SystemView v;
  v.root = k.dir / "root";
  v.facts = case_facts(c);
  const Json env = c.value("env", Json::object());
  for (const auto& [name, value] : env.items()) v.env[name] = value.get<std::string>();
  // Not root by default: root passes every permission check.
  v.identity.uid = c.value("uid", 1000u);
  v.identity.gids = c.value("gids", std::vector<std::uint32_t>{1000});
  const Json stats = c.value("stat", Json::object());
  for (const auto& [path, s] : stats.items()) v.stat_overrides[path] = stat_of(s);
  // "open": {"/dev/nvidia0": "EPERM"}: the errno open(2) gives (a name, "ok" for 0).
  const Json opens = c.value("open", Json::object());
  for (const auto& [path, e] : opens.items())
    v.open_overrides[path] = errno_of(e.get<std::string>());
  // The infiniband section as the probe reads root/'s sysfs; a second reading of its counters
  // with `grow` added ("mlx5_0/1": {"symbol_error": 2}) as doctor takes one after its load.
  if (c.value("probe_infiniband", false)) {
    Json ib = host::to_json(host::read_infiniband_facts(v.root));
    if (c.contains("infiniband_after")) {
      const Json& after = c["infiniband_after"];
      Json ports = host::read_infiniband_counters(v.root);
      const Json grown = after.value("grow", Json::object());  // kept alive through the loop
      for (const auto& [port, grow] : grown.items())
        for (const auto& [name, n] : grow.items())
          ports[port][name] = ports[port].value(name, std::uint64_t{0}) + n.get<std::uint64_t>();
      ib["counters_after_load"] = {{"interval_s", after.value("interval_s", 10.0)},
                                   {"ports", std::move(ports)}};
    }
    v.facts["infiniband"] = std::move(ib);
  }
  v.saved_state = c.value("saved_state", Json::object());
  return v;
}

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.check << "/" << c.name;
}

class DoctorFixture : public ::testing::TestWithParam<Case> {};

TEST_P(DoctorFixture, ProducesTheExpectedStatus) {
  const Case& k = GetParam();
  const CheckDef* check = find_check(k.check);
  ASSERT_NE(check, nullptr) << "fixture directory " << k.dir << " names no registered check";
  const Json c = read_json(k.dir / "case.json");
  const Json& expect = c.at("expect");
  const CheckResult r = run_check(*check, view_of(k, c));
  const std::string shown = r.to_json().dump(2);
  EXPECT_EQ(to_string(r.status), expect.at("status").get<std::string>()) << shown;
  if (expect.contains("finding")) {
    EXPECT_NE(r.finding.find(expect["finding"].get<std::string>()), std::string::npos) << shown;
  }
  if (expect.contains("fix")) {
    EXPECT_NE(r.fix.find(expect["fix"].get<std::string>()), std::string::npos) << shown;
  }
  EXPECT_EQ(r.id, k.check);
  EXPECT_FALSE(r.finding.empty());
  EXPECT_EQ(r.finding.find('\n'), std::string::npos) << "a finding is one line: " << shown;
  if (r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail) {
    EXPECT_FALSE(r.fix.empty()) << shown;
    EXPECT_EQ(r.fix.find("no fix known"), std::string::npos) << shown;
  }
  // The code: the check's own for PASS, INFO and SKIP, one of its failure modes for WARN and FAIL.
  const FaultCode& code = r.code();
  if (r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail) {
    EXPECT_NE(code.action, Action::kNone) << shown;
    EXPECT_EQ(code.check, k.check) << shown;
  } else {
    EXPECT_EQ(&code, own_code(k.check)) << shown;
  }
  if (expect.contains("code")) {
    EXPECT_EQ(code.code, expect["code"].get<std::string>()) << shown;
  }
  // A check that could not read its facts says so as SKIP; only cases that mean it expect it.
  if (expect.at("status") != "skip") {
    EXPECT_NE(r.status, CheckStatus::kSkip) << shown;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.check + "__" + info.param.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Cases, DoctorFixture, ::testing::ValuesIn(all_cases()), case_name);

// doctor --inject gives each fault what its check gives the real one in a fixture case: the same
// check, status, code and actions (so a drain or an alert keyed on them is tested for real).
TEST(DoctorFixtures, InjectedFaultsMatchTheRealFaultsOfTheirKind) {
  const std::pair<std::string, std::string> pairs[] = {
      {"xid:79", "nvidia_xid/fail"},
      {"xid:109", "nvidia_xid/warn_other"},
      {"xid:13", "nvidia_xid/info_program"},
      {"gpu-lost", "cuda_devices/fail_gpu_missing"},
      {"nvlink-down", "nvlink_links/fail"},
      {"ecc-dbe", "nvidia_ecc/fail"},
      {"row-remap-pending", "nvidia_ecc/fail_remap_pending"},
      {"fm-down", "nvswitch_fabric_manager/fail"},
  };
  for (const auto& [word, dir] : pairs) {
    const Case k{dir.substr(0, dir.find('/')), dir.substr(dir.find('/') + 1), kFixtures / dir};
    const CheckDef* check = find_check(k.check);
    ASSERT_NE(check, nullptr) << dir;
    const CheckResult real = run_check(*check, view_of(k, read_json(k.dir / "case.json")));
    const auto injected = injected_results(parse_injected_faults({word}));
    ASSERT_EQ(injected.size(), 1u) << word;
    const Json a = real.to_json(), b = injected.front().to_json();
    for (const char* key : {"id", "status", "code", "action", "recovery_action"})
      EXPECT_EQ(a[key], b[key]) << word << " against " << dir << ": " << key;
  }
}

TEST(DoctorFixtures, EveryCheckHasAPassAndAFailFixture) {
  std::vector<std::string> missing;
  for (const auto& check : all_checks()) {
    const fs::path dir = kFixtures / std::string(check.id);
    for (const char* kind : {"pass", "fail"}) {
      const fs::path file = dir / kind / "case.json";
      if (!fs::exists(file)) {
        missing.push_back(file.string());
        continue;
      }
      const std::string status = read_json(file).at("expect").at("status").get<std::string>();
      if (std::string(kind) == "pass") {
        EXPECT_EQ(status, to_string(check.healthy))
            << file << ": a pass fixture expects the check's healthy status";
      } else {
        EXPECT_TRUE(status == "warn" || status == "fail") << file << " expects " << status;
      }
    }
  }
  EXPECT_TRUE(missing.empty()) << "checks without fixtures: " << ::testing::PrintToString(missing);
}

// The codes at run time, against what each check declares (check_defs.h): every case's code is
// declared for its check (the case above fails one that is not: the runner makes it
// GC-DOCTOR-UNCODED), and every code a check declares is given by one of its cases, so a code
// nothing gives, or one given under the wrong check, shows here.
TEST(DoctorFixtures, EveryDeclaredCodeIsGivenByACaseOfItsCheck) {
  std::map<std::string, std::set<std::string>> given;  // check id -> codes its cases give
  for (const auto& k : all_cases()) {
    const CheckDef* check = find_check(k.check);
    if (check == nullptr) continue;  // EveryFixtureDirectoryNamesARegisteredCheck says so
    const CheckResult r = run_check(*check, view_of(k, read_json(k.dir / "case.json")));
    given[k.check].insert(std::string(r.code().code));
  }
  std::vector<std::string> missing;
  for (const auto& c : all_checks())
    for (const auto& code : c.code_list())
      if (!given[std::string(c.id)].contains(std::string(code.code)))
        missing.push_back(std::string(c.id) + ": " + std::string(code.code));
  EXPECT_TRUE(missing.empty()) << missing.size()
                               << " declared codes no fixture case of their check gives: "
                               << ::testing::PrintToString(missing);
}

TEST(DoctorFixtures, EveryFixtureDirectoryNamesARegisteredCheck) {
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.is_directory()) {
      EXPECT_NE(find_check(entry.path().filename().string()), nullptr) << entry.path();
    }
  }
}

TEST(DoctorFixtures, SavedProbeDocumentsAreRealProbeOutput) {
  // The facts every case starts from were written by `gpucheck probe --json`.
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    if (entry.path().extension() != ".json") continue;
    const Json doc = read_json(entry.path());
    EXPECT_EQ(doc.value("command", ""), "probe") << entry.path();
    EXPECT_EQ(doc.value("schema", ""), "gpucheck/1") << entry.path();
    ASSERT_TRUE(doc.contains("backends")) << entry.path();
  }
}

TEST(DoctorFixtures, PatchesOnlyEditExistingSectionsOfTheProbe) {
  // A patch edits fields the probe writes, or the frameworks' answers doctor adds to the facts
  // (framework_queries); it never invents a top-level section.
  const std::set<std::string> sections{"schema", "command", "provenance", "host",
                                       "cpu",    "memory",  "backends",   "framework_queries"};
  for (const auto& k : all_cases()) {
    const Json c = read_json(k.dir / "case.json");
    for (const auto& op : c.value("facts_patch", Json::array())) {
      const std::string path = op.at("path").get<std::string>();
      const std::string top = path.substr(1, path.find('/', 1) - 1);
      EXPECT_TRUE(sections.contains(top)) << k.dir << ": " << path;
    }
  }
}

}  // namespace
}  // namespace gpucheck::doctor
