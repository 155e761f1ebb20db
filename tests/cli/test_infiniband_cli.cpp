// InfiniBand / RoCE end to end on the mlx5 sysroots (tests/fixtures/sysroots/infiniband): probe's
// JSON and text views, doctor's findings with their codes, the counters read again after the run,
// and `doctor --quick` judging them as deltas against its state file.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using Json = nlohmann::json;

namespace {

std::string ib_root(const char* name) {
  return (fs::path(GPUCHECK_FIXTURES_DIR) / "sysroots" / "infiniband" / name).string();
}

const Json* check_of(const Json& doc, const std::string& id) {
  for (const auto& c : doc["checks"])
    if (c["id"] == id) return &c;
  return nullptr;
}

}  // namespace

TEST(InfinibandCli, ProbeListsAdaptersPortsAndTheNearestAdapterPerGpu) {
  auto r = run_gpucheck({"probe", "--json", "--sysroot", ib_root("healthy")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& ib = doc["infiniband"];
  ASSERT_EQ(ib["devices"].size(), 3u);
  EXPECT_EQ(ib["devices"][0]["name"], "mlx5_0");
  EXPECT_EQ(ib["devices"][0]["ports"][0]["rate"], "400 Gb/sec (4X NDR)");
  EXPECT_EQ(ib["devices"][2]["ports"][0]["link_layer"], "Ethernet");
  EXPECT_EQ(ib["devices"][2]["ports"][0]["netdev"], "ens6f0np0");
  ASSERT_EQ(ib["gpus"].size(), 2u);
  EXPECT_EQ(ib["gpus"][1]["closest_hcas"], Json::array({"mlx5_1"}));
  EXPECT_EQ(ib["gpus"][1]["distance"], "pcie_switch");
  EXPECT_EQ(ib["peer_memory_modules"], Json::array({"nvidia_peermem"}));
}

TEST(InfinibandCli, ProbeTextViewHasAnRdmaLineAndDetailsEveryField) {
  auto r = run_gpucheck({"probe", "--sysroot", ib_root("healthy")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mlx5_0/1 InfiniBand ibp26s0 ACTIVE 400 Gb/sec (4X NDR)"));
  EXPECT_THAT(r.out, HasSubstr("mlx5_2/1 RoCE ens6f0np0 ACTIVE"));
  EXPECT_THAT(r.out, HasSubstr("GPUDirect: nvidia_peermem"));
  r = run_gpucheck({"probe", "--full", "--sysroot", ib_root("healthy")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("a088:c203:00b1:3f40"));  // node GUID
  EXPECT_THAT(r.out, HasSubstr("28.39.1002"));           // firmware
}

TEST(InfinibandCli, DoctorGivesEachFindingItsCodeAndAction) {
  auto r = run_gpucheck({"doctor", "--json", "--no-load", "--sysroot", ib_root("port_down"),
                         "--only", "infiniband_ports,infiniband_errors,gpudirect_rdma"});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // a WARN does not fail doctor
  const Json doc = Json::parse(r.out);
  const Json* ports = check_of(doc, "infiniband_ports");
  ASSERT_NE(ports, nullptr);
  EXPECT_EQ((*ports)["status"], "warn");
  EXPECT_EQ((*ports)["code"], "GC-IB-PORT-DOWN");
  EXPECT_EQ((*ports)["action"], "replace_hardware");
  // The counters were read again at the end of the run, even without a load.
  const Json* errors = check_of(doc, "infiniband_errors");
  ASSERT_NE(errors, nullptr);
  EXPECT_EQ((*errors)["status"], "pass");
  EXPECT_THAT((*errors)["finding"].get<std::string>(), HasSubstr("during doctor's run"));
  EXPECT_TRUE(doc["infiniband"].contains("counters_after_load"));

  r = run_gpucheck({"doctor", "--json", "--no-load", "--sysroot", ib_root("all_down"), "--only",
                    "infiniband_ports"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ((*check_of(Json::parse(r.out), "infiniband_ports"))["code"], "GC-IB-NO-ACTIVE-PORT");
}

TEST(InfinibandCli, NoAdapterIsNeverAFailure) {
  const std::string empty = gpucheck::testing::write_temp_file("empty_root/etc/hostname", "n\n");
  auto r = run_gpucheck({"doctor", "--json", "--no-load", "--sysroot",
                         fs::path(empty).parent_path().parent_path().string(), "--only",
                         "infiniband_ports,infiniband_errors,gpudirect_rdma,"
                         "infiniband_gpu_affinity"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A named document: a range-for over a member of a temporary reads freed memory (before C++23).
  const Json doc = Json::parse(r.out);
  for (const auto& c : doc.at("checks")) {
    EXPECT_EQ(c["status"], "skip") << c.dump();
    EXPECT_EQ(c["action"], "none");
  }
}

// doctor --quick keeps each port's counters in its state file and judges their growth on the
// next run; the event stays until acknowledged.
TEST(InfinibandCli, QuickJudgesCounterGrowthAgainstTheStateFile) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("gpucheck_ib_quick_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(ib_root("healthy"), dir / "root",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const std::string state = (dir / "state.json").string();
  auto quick = [&] {
    return run_gpucheck({"doctor", "--quick", "--json", "--state", state, "--sysroot",
                         (dir / "root").string(), "--only", "infiniband_errors"});
  };
  auto r = quick();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ((*check_of(Json::parse(r.out), "infiniband_errors"))["status"], "pass");

  // Five symbol errors on mlx5_0's port between the runs (the class link leads into sys/devices).
  const fs::path counter = dir / "root/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error";
  std::ofstream(counter) << "5\n";
  r = quick();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json doc = Json::parse(r.out);
  const Json* c = check_of(doc, "infiniband_errors");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "warn");
  EXPECT_EQ((*c)["code"], "GC-IB-LINK-ERRORS");
  EXPECT_THAT((*c)["finding"].get<std::string>(),
              HasSubstr("since the last run (state file): mlx5_0/1 symbol_error +5"));
  EXPECT_EQ(doc["health"]["events_raised"].size(), 1u);

  // No further growth: the unacknowledged event keeps the WARN.
  r = quick();
  doc = Json::parse(r.out);
  EXPECT_EQ((*check_of(doc, "infiniband_errors"))["status"], "warn");
  fs::remove_all(dir);
}
