// doctor's fault codes: the checks' codes against docs/CHECKS.md (generated) and the source,
// every result carrying a code and an action in every output, and the one line led by the code.
#include "doctor/check.h"
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks_doc.h"
#include "doctor/fault_codes.h"
#include "doctor/health.h"
#include "doctor/nvlink_judge.h"
#include "doctor/registry.h"
#include "report/render.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

namespace gpucheck::doctor {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct DocRow {
  std::string check, action, recovery, meaning;
};

// The code table of docs/CHECKS.md:
// "| `GC-...` | [`check`](#check) | `action` | `RECOVERY` | meaning |".
std::map<std::string, DocRow> documented_codes(std::multiset<std::string>& seen) {
  const std::string doc = read_text(fs::path(GPUCHECK_SOURCE_DIR) / "docs" / "CHECKS.md");
  static const std::regex kRow(
      R"(^\| `(GC-[A-Z0-9-]+)` \| (?:\[`([a-z0-9_]+)`\]\(#[a-z0-9_]+\)|(doctor)) \| `([a-z_]+)` \| `([A-Z_0-9]+)` \| (.+) \|$)");
  std::map<std::string, DocRow> out;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kRow)) continue;
    seen.insert(m[1]);
    out[m[1]] = {m[2].matched ? m[2].str() : m[3].str(), m[4], m[5], m[6]};
  }
  return out;
}

std::string upper_id(std::string_view id) {
  std::string out = "GC-";
  for (char c : id) out += c == '_' ? '-' : static_cast<char>(std::toupper(c));
  return out;
}

TEST(FaultCodes, ChecksMdListsExactlyTheTable) {
  std::multiset<std::string> seen;
  const auto doc = documented_codes(seen);
  ASSERT_FALSE(doc.empty()) << "no code table found in docs/CHECKS.md";
  for (const auto& f : all_fault_codes()) {
    auto it = doc.find(std::string(f.code));
    ASSERT_NE(it, doc.end()) << f.code << " is missing from docs/CHECKS.md's code table";
    EXPECT_EQ(it->second.check, f.check) << f.code;
    EXPECT_EQ(it->second.action, to_string(f.action)) << f.code;
    EXPECT_EQ(it->second.recovery, to_string(recovery_action(f))) << f.code;
    EXPECT_EQ(it->second.meaning, f.meaning) << f.code;
  }
  for (const auto& [code, row] : doc)
    EXPECT_NE(find_fault_code(code), nullptr)
        << code << " is in docs/CHECKS.md but no check declares it (src/doctor/check_defs.h)";
  for (const auto& code : seen) EXPECT_EQ(seen.count(code), 1u) << code << " listed twice";
}

// docs/CHECKS.md's two tables are what `gpucheck __checks-table` writes from the checks'
// definitions; the first line that differs is shown.
TEST(FaultCodes, ChecksMdHoldsTheGeneratedTables) {
  const std::string doc = read_text(fs::path(GPUCHECK_SOURCE_DIR) / "docs" / "CHECKS.md");
  const std::string generated = with_generated_tables(doc);
  if (generated == doc) return;
  std::istringstream a(doc), b(generated);
  std::string in_doc, wanted;
  for (int line = 1; std::getline(a, in_doc) && std::getline(b, wanted); ++line)
    if (in_doc != wanted) {
      ADD_FAILURE() << "docs/CHECKS.md line " << line << " is\n  " << in_doc
                    << "\nbut the checks give\n  " << wanted
                    << "\nRegenerate the tables: " << kChecksTableCommand;
      return;
    }
  ADD_FAILURE() << "docs/CHECKS.md's tables differ in length from the checks'. Regenerate them: "
                << kChecksTableCommand;
}

TEST(FaultCodes, CodesAreUniqueWellFormedAndOwnedByOneCheck) {
  static const std::regex kShape("GC(-[A-Z0-9]+)+");
  std::set<std::string_view> codes;
  for (const auto& f : all_fault_codes()) {
    EXPECT_TRUE(codes.insert(f.code).second) << f.code << " is given to two faults";
    EXPECT_TRUE(std::regex_match(std::string(f.code), kShape)) << f.code;
    EXPECT_FALSE(f.meaning.empty()) << f.code;
    EXPECT_TRUE(f.check == "doctor" || find_check(f.check) != nullptr)
        << f.code << " names " << f.check << ", which is no check";
  }
  for (const auto& c : all_checks()) {
    std::size_t own = 0;
    for (const auto& f : all_fault_codes())
      if (f.check == c.id && f.action == Action::kNone) {
        ++own;
        EXPECT_EQ(f.code, upper_id(c.id)) << "a check's own code is GC- and its id";
      }
    EXPECT_EQ(own, 1u) << c.id << " needs exactly one own code (action none)";
    ASSERT_FALSE(c.code_list().empty()) << c.id;
    EXPECT_EQ(c.code_list().front().code, upper_id(c.id)) << "a check's own code comes first";
    EXPECT_EQ(own_code(c.id)->code, upper_id(c.id));
  }
  // Only doctor's codes and the checks' are in the table: nothing is declared twice or lost.
  std::size_t declared = std::size(defs::kDoctorCodes);
  for (const auto& c : all_checks()) declared += c.code_list().size();
  EXPECT_EQ(all_fault_codes().size(), declared);
}

// Every failure code a check declares is given in the source: named as "GC-..."_gc or
// Code{"GC-..."}, the only ways a result gets a code (both compile only for a declared code).
// doctor --inject's copies of real faults do not count: they mirror a check, they are no check.
TEST(FaultCodes, EveryFailureCodeIsGivenInTheSource) {
  std::string source;
  for (const auto& e : fs::directory_iterator(fs::path(GPUCHECK_SOURCE_DIR) / "src" / "doctor"))
    if (e.path().extension() == ".cpp" && e.path().filename() != "inject.cpp")
      source += read_text(e.path());
  for (const auto& f : all_fault_codes()) {
    if (f.action == Action::kNone || f.check == "doctor") continue;
    const std::string quoted = "\"" + std::string(f.code) + "\"";
    EXPECT_TRUE(source.find(quoted + "_gc") != std::string::npos ||
                source.find("Code{" + quoted + "}") != std::string::npos)
        << f.code << " is declared for " << f.check << " but no check gives it";
  }
}

TEST(FaultCodes, ActionsRoundTrip) {
  for (auto a : {Action::kNone, Action::kFixConfig, Action::kUpdateDriverOrLibrary,
                 Action::kResetGpu, Action::kReboot, Action::kDrainAndDiagnose,
                 Action::kReplaceHardware, Action::kContactVendor})
    EXPECT_EQ(action_from_string(to_string(a)), a);
  EXPECT_EQ(action_from_string("drain"), std::nullopt);
}

// ---- NVML's recovery actions ----

TEST(RecoveryActions, WordsAreExactlyNvmlsAndRoundTrip) {
  const std::vector<std::string_view> nvml{"NONE", "GPU_RESET", "NODE_REBOOT", "DRAIN_P2P",
                                           "DRAIN_AND_RESET"};
  std::set<std::string_view> given;
  for (auto r : {RecoveryAction::kNone, RecoveryAction::kGpuReset, RecoveryAction::kNodeReboot,
                 RecoveryAction::kDrainP2p, RecoveryAction::kDrainAndReset}) {
    given.insert(to_string(r));
    EXPECT_EQ(recovery_action_from_string(to_string(r)), r);
  }
  EXPECT_EQ(given, std::set<std::string_view>(nvml.begin(), nvml.end()));
  EXPECT_EQ(recovery_action_from_string("none"), std::nullopt);  // NVML's case only
  for (const auto& f : all_fault_codes())
    EXPECT_TRUE(recovery_action_from_string(to_string(recovery_action(f)))) << f.code;
}

TEST(RecoveryActions, DerivedFromTheActionWhereNoOverrideSpeaks) {
  EXPECT_EQ(recovery_for(Action::kNone), RecoveryAction::kNone);
  EXPECT_EQ(recovery_for(Action::kFixConfig), RecoveryAction::kNone);
  EXPECT_EQ(recovery_for(Action::kUpdateDriverOrLibrary), RecoveryAction::kNone);
  EXPECT_EQ(recovery_for(Action::kResetGpu), RecoveryAction::kGpuReset);
  EXPECT_EQ(recovery_for(Action::kReboot), RecoveryAction::kNodeReboot);
  EXPECT_EQ(recovery_for(Action::kDrainAndDiagnose), RecoveryAction::kDrainAndReset);
  EXPECT_EQ(recovery_for(Action::kReplaceHardware), RecoveryAction::kDrainAndReset);
  EXPECT_EQ(recovery_for(Action::kContactVendor), RecoveryAction::kDrainAndReset);
  for (const auto& f : all_fault_codes()) {
    if (f.recovery) {
      // An override that says what the action already says is a second table kept by hand.
      EXPECT_NE(*f.recovery, recovery_for(f.action)) << f.code;
      EXPECT_EQ(recovery_action(f), *f.recovery) << f.code;
    } else {
      EXPECT_EQ(recovery_action(f), recovery_for(f.action)) << f.code;
    }
    // PASS, INFO and SKIP never ask a controller for anything.
    if (f.action == Action::kNone) {
      EXPECT_EQ(recovery_action(f), RecoveryAction::kNone) << f.code;
    }
  }
}

TEST(RecoveryActions, TheOverridesHold) {
  const auto of = [](std::string_view code) { return recovery_action(*find_fault_code(code)); };
  // Every NVLink fault stops peer traffic first, whatever repair follows.
  for (const auto& f : all_fault_codes()) {
    if (f.check == "nvlink_links" || f.check == "nvlink_errors") {
      EXPECT_EQ(recovery_action(f),
                f.action == Action::kNone ? RecoveryAction::kNone : RecoveryAction::kDrainP2p)
          << f.code;
    }
  }
  EXPECT_EQ(of("GC-P2P-COPY-FAILED"), RecoveryAction::kDrainP2p);
  EXPECT_EQ(of("GC-P2P-DENIED"), RecoveryAction::kNone);  // a setting, not the link
  // NVIDIA: a pending remap lets running work finish and new work start; the reset applies it.
  EXPECT_EQ(of("GC-ECC-REMAP-PENDING"), RecoveryAction::kGpuReset);
  EXPECT_EQ(of("GC-ECC-UNCORRECTABLE"), RecoveryAction::kGpuReset);
  EXPECT_EQ(of("GC-ECC-REMAP-FAILED"), RecoveryAction::kDrainAndReset);
  EXPECT_EQ(of("GC-CUDA-GPU-MISSING"), RecoveryAction::kNodeReboot);
  EXPECT_EQ(of("GC-XID-DRIVER"), RecoveryAction::kGpuReset);
  EXPECT_EQ(of("GC-XID-HARDWARE"), RecoveryAction::kDrainAndReset);
  EXPECT_EQ(of("GC-DRIVER-VERSION-MISMATCH"), RecoveryAction::kNodeReboot);
  // Settings and libraries: no GPU-level recovery helps.
  EXPECT_EQ(of("GC-NOUVEAU-LOADED"), RecoveryAction::kNone);
  EXPECT_EQ(of("GC-DRIVER-LIBCUDA-MISSING"), RecoveryAction::kNone);
  EXPECT_EQ(of("GC-CUBLAS-MISSING"), RecoveryAction::kNone);
  for (const auto& f : all_fault_codes()) {
    if (f.check == "infiniband_ports" || f.check == "infiniband_errors") {
      EXPECT_EQ(recovery_action(f), RecoveryAction::kNone) << f.code;
    }
  }
}

// docs/FLEET.md's two tables (action -> recovery_action, and the overrides) say what the code
// does.
TEST(RecoveryActions, FleetMdListsTheMappingAndEveryOverride) {
  const std::string doc = read_text(fs::path(GPUCHECK_SOURCE_DIR) / "docs" / "FLEET.md");
  static const std::regex kActionRow(R"(^\| `([a-z_]+)` \| `([A-Z_0-9]+)` \| .+ \|$)");
  static const std::regex kOverrideRow(
      R"(^\| `(GC-[A-Z0-9-]+)` \| `([a-z_]+)` \| `([A-Z_0-9]+)` \| .+ \|$)");
  std::map<std::string, std::string> actions, overrides;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, kActionRow)) actions[m[1]] = m[2];
    if (std::regex_match(line, m, kOverrideRow)) {
      overrides[m[1]] = m[3];
      EXPECT_EQ(m[2].str(), to_string(find_fault_code(m[1].str())->action)) << m[1];
    }
  }
  for (auto a : {Action::kNone, Action::kFixConfig, Action::kUpdateDriverOrLibrary,
                 Action::kResetGpu, Action::kReboot, Action::kDrainAndDiagnose,
                 Action::kReplaceHardware, Action::kContactVendor})
    EXPECT_EQ(actions[std::string(to_string(a))], to_string(recovery_for(a))) << to_string(a);
  EXPECT_EQ(actions.size(), 8u);
  std::size_t overridden = 0;
  for (const auto& f : all_fault_codes())
    if (f.recovery) {
      ++overridden;
      EXPECT_EQ(overrides[std::string(f.code)], to_string(*f.recovery))
          << f.code << " is missing from docs/FLEET.md's overrides";
    }
  EXPECT_EQ(overrides.size(), overridden);
}

CheckDef def_of(std::string_view id, CheckResult (*run)(const SystemView&)) {
  CheckDef d = *find_check(id);
  d.run = run;
  return d;
}

TEST(FaultCodes, RunnerGivesOwnCodesAndCatchesForeignOnes) {
  const SystemView view;
  // PASS, INFO and SKIP (thrown or returned) get the check's own code with action none.
  for (auto run : std::vector<CheckResult (*)(const SystemView&)>{
           [](const SystemView&) { return pass("fine"); },
           [](const SystemView&) { return info("said"); },
           [](const SystemView&) -> CheckResult { throw NotObservable("nothing"); }}) {
    const CheckResult r = run_check(def_of("nvidia_ecc", run), view);
    EXPECT_EQ(r.code().code, "GC-NVIDIA-ECC");
    EXPECT_EQ(r.to_json().at("action"), "none");
  }
  const CheckResult own = run_check(def_of("nvidia_ecc",
                                           [](const SystemView&) {
                                             return fail("GC-ECC-REMAP-PENDING"_gc,
                                                         "cuda0: a row remap is pending", "reset");
                                           }),
                                    view);
  EXPECT_EQ(own.to_json().at("code"), "GC-ECC-REMAP-PENDING");
  EXPECT_EQ(own.to_json().at("action"), "reset_gpu");
  // Another check's code is a bug of the check: said as GC-DOCTOR-UNCODED, never passed on.
  const CheckResult foreign =
      run_check(def_of("nvidia_ecc",
                       [](const SystemView&) { return fail("GC-NVLINK-REPLAY"_gc, "odd", "fix"); }),
                view);
  EXPECT_EQ(foreign.code().code, "GC-DOCTOR-UNCODED");
  const CheckResult uncoded = run_check(
      def_of("nvidia_ecc", [](const SystemView&) { return warn("no code", "fix"); }), view);
  EXPECT_EQ(uncoded.code().code, "GC-DOCTOR-UNCODED");
  EXPECT_EQ(uncoded.code().action, Action::kDrainAndDiagnose);
}

TEST(FaultCodes, CombineTakesTheFirstCodeAtTheWorstStatus) {
  const CheckResult r =
      combine({{CheckStatus::kInfo, {}, "a reset", ""},
               {CheckStatus::kWarn, "GC-NVLINK-CRC"_gc, "crc above the band", "watch"},
               {CheckStatus::kFail, "GC-NVLINK-REPLAY"_gc, "replays", "drain"},
               {CheckStatus::kFail, "GC-NVLINK-RECOVERY"_gc, "recovery", "drain"}},
              {}, "clear");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.code().code, "GC-NVLINK-REPLAY");
  const CheckResult w = combine({{CheckStatus::kWarn, "GC-NVLINK-CRC"_gc, "crc", "watch"},
                                 {CheckStatus::kInfo, {}, "a reset", ""}},
                                {}, "clear");
  EXPECT_EQ(w.code().code, "GC-NVLINK-CRC");
}

TEST(FaultCodes, OneLineAndDrainReasonLeadWithTheCode) {
  CheckResult r = fail("GC-XID-HARDWARE"_gc, "Xid 79 x1: NVIDIA Xid errors in the kernel log", "x");
  r.id = "nvidia_xid";
  const HealthVerdict v = judge_health({r}, {}, false);
  EXPECT_EQ(v.first_code, "GC-XID-HARDWARE");
  const std::string line = oneline(v, 24, 30);
  EXPECT_THAT(line, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x1"));
  EXPECT_LE(line.size(), kOnelineMax);
}

TEST(FaultCodes, EveryOutputCarriesCodeAndAction) {
  CheckResult bad = fail("GC-NVLINK-REPLAY"_gc, "cuda0: replay errors grew", "drain");
  bad.id = "nvlink_errors";
  CheckResult good = pass("fine");
  good.id = "nvidia_ecc";
  const nlohmann::json doc{{"command", "doctor"}, {"checks", {bad.to_json(), good.to_json()}}};
  EXPECT_EQ(doc["checks"][1]["code"], "GC-NVIDIA-ECC");
  EXPECT_EQ(doc["checks"][0]["recovery_action"], "DRAIN_P2P");
  EXPECT_EQ(doc["checks"][1]["recovery_action"], "NONE");
  const std::string csv = report::render(doc, report::Format::kCsv);
  EXPECT_THAT(csv, StartsWith("id,status,code,action,recovery_action,finding,fix,evidence\r\n"));
  EXPECT_THAT(csv, HasSubstr("nvlink_errors,fail,GC-NVLINK-REPLAY,drain_and_diagnose,DRAIN_P2P,"));
  const std::string prom = report::render(doc, report::Format::kPrometheus);
  EXPECT_THAT(prom, HasSubstr("gpucheck_doctor_check_fault{check=\"nvlink_errors\",code=\"GC-"
                              "NVLINK-REPLAY\",action=\"drain_and_diagnose\",recovery_action="
                              "\"DRAIN_P2P\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("gpucheck_doctor_check_fault{check=\"nvidia_ecc\",code=\"GC-"
                              "NVIDIA-ECC\",action=\"none\",recovery_action=\"NONE\"} 1\n"));
  const std::string table = report::render(doc, report::Format::kTable);
  EXPECT_THAT(table, HasSubstr("code: GC-NVLINK-REPLAY, action: drain_and_diagnose, "
                               "recovery_action: DRAIN_P2P"));
}

// ---- NVLink judged by rate and kind ----

// Counters like the device machine's H200s (NVSwitch, 18 links a GPU), read by the probe and
// again `seconds` later: every link's CRC-data and ECC-data grow by `base`, and each edit sets
// one counter's growth on one link.
struct H200Counters {
  std::size_t gpus = 2;
  double seconds = 10;
  std::uint64_t base = 9;  // 0.9/s on every link, as on the healthy machine
  // {gpu, link, counter, growth}
  std::vector<std::tuple<std::size_t, unsigned, std::string, std::uint64_t>> edits;
};

SystemView h200_view(const H200Counters& c) {
  using nlohmann::json;
  json devices = json::array(), after = json::array(), load = json::array();
  for (std::size_t g = 0; g < c.gpus; ++g) {
    const std::string pci = fmt::format("0000:{:02x}:00.0", 6 + g);
    json links = json::array(), later = json::array();
    for (unsigned l = 0; l < 18; ++l) {
      // Lifetime counts before: growth, not value, is judged.
      json before{
          {"replay", 2}, {"recovery", 1}, {"crc_flit", 0}, {"crc_data", 400}, {"ecc_data", 700}};
      json now = before;
      now["crc_data"] = 400 + c.base;
      now["ecc_data"] = 700 + c.base;
      for (const auto& [eg, el, name, grow] : c.edits)
        if (eg == g && el == l) now[name] = before[name].get<std::uint64_t>() + grow;
      now["link"] = l;
      links.push_back({{"link", l},
                       {"state", "active"},
                       {"remote_device_type", "switch"},
                       {"remote_pci_bus_id", fmt::format("0000:{:02x}:00.0", 0x40 + l % 4)},
                       {"error_counters", before}});
      later.push_back(now);
    }
    devices.push_back({{"device", fmt::format("cuda{}", g)},
                       {"pci_bus_id", pci},
                       {"properties",
                        {{"nvml",
                          {{"device_name", "NVIDIA H200"},
                           {"pci_bus_id", pci},
                           {"nvlink", {{"links", links}}}}}}}});
    after.push_back({{"pci_bus_id", pci}, {"links", later}});
    load.push_back({{"device", fmt::format("cuda{}", g)}, {"status", "ok"}, {"seconds", 2.0}});
  }
  SystemView v;
  v.facts["backends"] =
      json::array({{{"name", "cuda"},
                    {"status", "available"},
                    {"driver", {{"loaded", true}}},
                    {"nvml", {{"loaded", true}, {"path", "libnvidia-ml.so.1"}}},
                    {"devices", devices},
                    {"under_load", load},
                    {"counters_after_load",
                     {{"loaded", true}, {"interval_s", c.seconds}, {"devices", after}}}}});
  return v;
}

CheckResult nvlink_errors(const H200Counters& c) {
  return run_check(*find_check("nvlink_errors"), h200_view(c));
}

TEST(NvlinkRates, HealthyH200sPassWithTheirRatesOneLinePerGpu) {
  for (std::size_t gpus : {2u, 4u}) {
    H200Counters c;
    c.gpus = gpus;
    c.edits = {{0, 2, "crc_data", 18}};  // link 2 of cuda0: 18 in 10 s, the worst
    const CheckResult r = nvlink_errors(c);
    EXPECT_EQ(r.status, CheckStatus::kPass) << r.finding;
    EXPECT_EQ(r.code().code, "GC-NVLINK-ERRORS");
    EXPECT_THAT(r.finding,
                StartsWith("cuda0: 18 links, CRC-data +171 (1.8/s on the worst link, 2), ECC-data "
                           "+162 corrected (0.9/s on the worst link, 0), within the healthy 20/s "
                           "per link (DCGM's limit 100/s); cuda1: 18 links, CRC-data +162 (0.9/s"));
    // One part per GPU in the finding, every link in the evidence.
    std::size_t parts = 1, at = 0;
    while ((at = r.finding.find("; ", at)) != std::string::npos) ++parts, at += 2;
    EXPECT_EQ(parts, gpus);
    std::size_t link_lines = 0;
    for (const auto& e : r.evidence) link_lines += e.find(" NVLink ") != std::string::npos;
    EXPECT_EQ(link_lines, 18 * gpus);
  }
}

TEST(NvlinkRates, AtTheBandPassesAboveItWarnsAtDcgmsLimitFails) {
  for (std::size_t gpus : {2u, 4u}) {
    H200Counters at_band{gpus, 10, 9, {{gpus - 1, 7, "crc_data", 200}}};  // 20.0/s
    EXPECT_EQ(nvlink_errors(at_band).status, CheckStatus::kPass) << nvlink_errors(at_band).finding;
    H200Counters above{gpus, 10, 9, {{gpus - 1, 7, "crc_data", 202}}};  // 20.2/s
    const CheckResult w = nvlink_errors(above);
    EXPECT_EQ(w.status, CheckStatus::kWarn) << w.finding;
    EXPECT_EQ(w.code().code, "GC-NVLINK-CRC");
    EXPECT_EQ(w.code().action, Action::kDrainAndDiagnose);
    EXPECT_THAT(w.finding, HasSubstr("CRC-data on link 7 above the healthy 20/s per link"));
    // 847 on one link and 9 on each of the 17 others: 1000 in 10 s on the GPU.
    H200Counters limit{gpus, 10, 9, {{0, 3, "crc_data", 1000 - 153}}};
    const CheckResult f = nvlink_errors(limit);
    EXPECT_EQ(f.status, CheckStatus::kFail) << f.finding;
    EXPECT_EQ(f.code().code, "GC-NVLINK-CRC");
    EXPECT_THAT(f.finding, HasSubstr("CRC-data at 100/s on the GPU reaches DCGM's limit of 100/s"));
    // Corrected data-ECC errors: the same bands under their own code.
    H200Counters ecc{gpus, 10, 9, {{0, 5, "ecc_data", 250}}};  // 25/s
    const CheckResult e = nvlink_errors(ecc);
    EXPECT_EQ(e.status, CheckStatus::kWarn) << e.finding;
    EXPECT_EQ(e.code().code, "GC-NVLINK-ECC-DATA");
    EXPECT_THAT(e.finding, HasSubstr("ECC-data +403 corrected (25/s on the worst link, 5)"));
  }
}

TEST(NvlinkRates, ReplayOrRecoveryUnderLoadFailsWithItsCode) {
  H200Counters replay{4, 10, 9, {{2, 11, "replay", 1}}};
  const CheckResult r = nvlink_errors(replay);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.code().code, "GC-NVLINK-REPLAY");
  EXPECT_THAT(r.finding, HasSubstr("cuda2: 18 links, replay +1 (0.1/s on the worst link, 11)"));
  EXPECT_THAT(r.to_json().dump(), HasSubstr("\"action\":\"drain_and_diagnose\""));
  // A replay outranks a CRC rate above the band on another GPU: the first at the worst status.
  H200Counters both{2, 10, 9, {{0, 1, "crc_data", 200}, {1, 4, "recovery", 1}}};
  EXPECT_EQ(nvlink_errors(both).code().code, "GC-NVLINK-RECOVERY");
}

TEST(NvlinkRates, WithoutADurationAnyGrowthWarnsAsDcgmDoes) {
  const auto j = judge_nvlink_growth({{"cuda0", {{0, "an NVSwitch", {{"crc_data", 3}}, {}}}}},
                                     std::nullopt, "during doctor's load");
  ASSERT_EQ(j.findings.size(), 1u);
  EXPECT_EQ(j.findings[0].status, CheckStatus::kWarn);
  EXPECT_THAT(j.findings[0].text, HasSubstr("no duration is known"));
  EXPECT_EQ(host::rate_text(0.93), "0.9");
  EXPECT_EQ(host::rate_text(123.4), "123");
  EXPECT_EQ(host::rate_text(0.04), "0.04");
}

}  // namespace
}  // namespace gpucheck::doctor
