// `gpucheck stress` end to end on the CPU: a healthy run passes within its time, each planted
// fault (a flipped GEMM bit, a bad memory word, a hang, a dying child) fails the device for its
// own reason with exit 1, bad input is exit 2, and the Xid watch reads a fixture kmsg.
#include "run_gpucheck.h"
#include "stress_cli_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include <unistd.h>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

using Json = nlohmann::json;

std::vector<std::string> quick(std::vector<std::string> args) {
  return gpucheck::testing::stress_quick(std::move(args), 2);
}

const Json& device_entry(const Json& doc, const std::string& device) {
  return gpucheck::testing::stress_device(doc, device);
}

std::string check_status(const Json& dev, const std::string& id) {
  for (const auto& c : dev["checks"])
    if (c["id"] == id) return c["status"];
  return "absent";
}

std::string reasons(const Json& dev) {
  std::string all;
  for (const auto& r : dev["reasons"]) all += r.get<std::string>() + "\n";
  return all;
}

}  // namespace

// --duration is the whole command's: the CPU defaults for 10 s, probe and set-up included, end
// within 15 % of it (the tests share what the parent's deadline leaves them, the memory test
// tests what fits its share, the GEMM's size follows it).
TEST(StressCli, CpuDefaultsForTenSecondsKeepToTheDuration) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_gpucheck({"stress", "--device", "cpu", "--duration", "10s", "--json"});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_LT(wall, 11.5);
  EXPECT_GT(wall, 8.0);  // and it ran for its duration
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["command"], "stress");
  EXPECT_EQ(doc["stress"]["verdict"], "pass");
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(cpu["verdict"], "pass") << reasons(cpu);
  ASSERT_EQ(cpu["records"].size(), 3u);
  for (const auto& rec : cpu["records"]) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec["status"], "ok");
    EXPECT_GT(rec["throughput"]["value"].get<double>(), 0.0);
    EXPECT_GT(rec["duration_s"].get<double>(), 0.0);
    EXPECT_GE(rec["iterations"].get<int>(), 1);
  }
  const Json& gemm = cpu["records"][0];
  EXPECT_EQ(gemm["test"], "gemm");
  EXPECT_EQ(gemm["shape"]["m"], 256);  // the CPU's size for a share of 3.3 s
  EXPECT_EQ(gemm["dtype"], "f32");
  EXPECT_GT(gemm["checking"]["results_checksummed"].get<int>(), 2);
  EXPECT_GE(gemm["checking"]["full_checks"].get<int>(), 1);
  EXPECT_EQ(gemm["checking"]["mismatched_results"], 0);
  EXPECT_TRUE(gemm["checking"]["reference"]["max_rel_error"].is_number());
  const Json& mem = cpu["records"][1];
  EXPECT_EQ(mem["test"], "memory");
  EXPECT_EQ(mem["memory"]["memory_fraction"], 0.1);  // allocated: 0.1 of MemAvailable
  // Tested: all of it, or the part a group of passes covers in the share, saying so.
  const double tested = mem["memory"]["fraction_of_free"].get<double>();
  if (mem["memory"].contains("fitted_to_duration")) {
    EXPECT_LT(tested, 0.1);
    EXPECT_THAT(mem["memory"]["fitted_to_duration"].get<std::string>(),
                ::testing::ContainsRegex("^[0-9]+ of [0-9]+ bytes allocated: "));
  } else {
    EXPECT_NEAR(tested, 0.1, 0.01);
  }
  EXPECT_GE(mem["memory"]["passes"].get<int>(), 3);
  EXPECT_EQ(cpu["records"][2]["test"], "copy");
  EXPECT_GT(cpu["records"][2]["copy"]["transfers_verified"].get<int>(), 0);
}

TEST(StressCli, AFlippedGemmBitFailsTheDeviceWithTheCountedElement) {
  auto r = run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "gemm", "--duration", "2s"}),
                        {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:gemm_bit@3"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(cpu["verdict"], "fail");
  EXPECT_EQ(check_status(cpu, "results"), "fail");
  EXPECT_EQ(check_status(cpu, "started"), "pass");
  const Json& c = cpu["records"][0]["checking"];
  EXPECT_EQ(c["mismatched_results"], 1);
  EXPECT_EQ(c["mismatched_elements"], 1);
  EXPECT_EQ(c["first_bad_iteration"], 3);
  EXPECT_THAT(reasons(cpu), HasSubstr("1 of"));
  EXPECT_THAT(reasons(cpu), HasSubstr("differed from the first"));
}

TEST(StressCli, TheTableViewLeadsWithTheVerdictAndSaysWhyADeviceFailed) {
  auto r = run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "gemm", "--duration", "2s"}),
                        {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:gemm_bit@3"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string doc = gpucheck::testing::write_temp_file("stress-fail.json", r.out);
  auto shown = run_gpucheck({"report", "show", doc}, {{"COLUMNS", "80"}});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, ::testing::StartsWith("gpucheck stress: 2 s, "));
  EXPECT_THAT(shown.out, HasSubstr("\nFAIL     cpu     gemm"));
  EXPECT_THAT(shown.out, HasSubstr("differed from the first"));
  EXPECT_THAT(shown.out, HasSubstr("\nstress: fail: cpu\n"));
  EXPECT_THAT(shown.out, ::testing::Not(HasSubstr("gpucheck probe")));
}

TEST(StressCli, ABadMemoryWordFailsTheDeviceWithItsAddress) {
  auto r =
      run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "memory", "--duration", "2s"}),
                   {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:memory_word@1"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(check_status(cpu, "results"), "fail");
  const Json& m = cpu["records"][0]["memory"];
  EXPECT_EQ(m["mismatches"], 1);
  EXPECT_TRUE(m.contains("first_bad_offset"));
  EXPECT_THAT(reasons(cpu), HasSubstr("words read back wrong; first bad address"));
}

// Every host copy is a verified round trip: a byte flipped in a download, or a download that
// never happened, shows in the upload's checksum, and the host names the bad byte.
TEST(StressCli, ACorruptOrSkippedHostCopyFailsTheDeviceWithTheTransferAndOffset) {
  // The fault is planted in transfer 0, the one a run always makes: on a loaded 2-core machine the
  // set-up can take the whole duration, and a run then makes that transfer alone (transfer 1, as
  // planted before, was then never reached and the run passed).
  for (const std::string fault : {"copy_byte@0", "copy_skip@0"}) {
    SCOPED_TRACE(fault);
    auto r =
        run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "copy", "--duration", "2s"}),
                     {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:" + fault}});
    ASSERT_EQ(r.exit_code, 1) << r.err;
    const Json doc = Json::parse(r.out);
    const Json& cpu = device_entry(doc, "cpu");
    EXPECT_EQ(check_status(cpu, "results"), "fail");
    const Json& rec = cpu["records"][0];
    EXPECT_EQ(rec["status"], "mismatch");
    const Json& c = rec["copy"];
    EXPECT_EQ(c["mismatches"], 1) << c.dump();
    EXPECT_GE(c["transfers_verified"].get<int>(), 1);
    EXPECT_EQ(c["iterations"], 0);  // the transfer it was planted in
    EXPECT_EQ(c["direction"], "h2h");
    const auto bytes = rec["shape"]["bytes"].get<std::uint64_t>();
    if (fault == "copy_byte@0")
      EXPECT_EQ(c["first_bad_offset"], bytes / 2);
    else
      EXPECT_LT(c["first_bad_offset"].get<std::uint64_t>(), bytes);
    EXPECT_THAT(reasons(cpu), HasSubstr("differed from the source"));
  }
  auto ok =
      run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "copy", "--duration", "1s"}));
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const Json ok_doc = Json::parse(ok.out);
  const Json& c = device_entry(ok_doc, "cpu")["records"][0]["copy"];
  EXPECT_EQ(c["mismatches"], 0);
  EXPECT_EQ(c["in_flight"], 1);          // the CPU's queues run one after another
  EXPECT_FALSE(c.contains("h2d_gbps"));  // memory to memory: no directions
}

TEST(StressCli, AHungChildIsKilledAndFailsAsHung) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "gemm", "--duration", "30s",
                               "--hang-timeout", "2"}),
                        {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:hang@1"}});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(wall, 15.0);  // killed after the silence, long before the 30 s
  const Json doc = Json::parse(r.out);
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(check_status(cpu, "started"), "fail");
  EXPECT_THAT(reasons(cpu), HasSubstr("hung"));
}

TEST(StressCli, AChildThatDiesFailsWithItsSignal) {
  auto r = run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "gemm", "--duration", "5s"}),
                        {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:die@1"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(cpu["verdict"], "fail");
  EXPECT_THAT(reasons(cpu), HasSubstr("signal 9"));
}

TEST(StressCli, ADeviceThatIsNotThereFailsInsteadOfPassingOrExitingThree) {
  auto r = run_gpucheck(
      quick({"stress", "--device", "cpu,opencl97", "--tests", "copy", "--duration", "1s"}));
  if (r.exit_code == 2 && r.err.find("not built") != std::string::npos)
    GTEST_SKIP() << "the OpenCL backend is not built: " << r.err;
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(device_entry(doc, "cpu")["verdict"], "pass");
  const Json& missing = device_entry(doc, "opencl97");
  EXPECT_EQ(missing["verdict"], "fail");
  EXPECT_THAT(reasons(missing), HasSubstr("could not start"));
}

TEST(StressCli, BadInputIsExitTwo) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--duration", "5x"},
                                        {"--duration", "0s"},
                                        {"--tests", "gemm,burn"},
                                        {"--dtype", "f8"},
                                        {"--memory-fraction", "1.5"},
                                        {"--clock-floor", "2"},
                                        {"--device", "gpu0"}}) {
    std::vector<std::string> full{"stress", "--device", "cpu"};
    full.insert(full.end(), args.begin(), args.end());
    auto r = run_gpucheck(full);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_FALSE(r.err.empty());
  }
}

// fp8 is a name stress knows; the CPU's GEMM stress runs f32 and f64 only, so it is refused at
// once, naming it, as f16 is.
TEST(StressCli, Fp8OnTheCpuIsRefusedNamingIt) {
  auto r = run_gpucheck({"stress", "--device", "cpu", "--tests", "gemm", "--dtype", "fp8"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("not fp8"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("unknown value")));
}

// The Xid watch through a fixture kmsg: readable, it reports the line written during the run
// (the CPU has no PCI address, so the line is unmatched and fails nothing); unreadable, SKIP.
TEST(StressCli, XidWatchReadsAFixtureKmsgAndSkipsWithoutOne) {
  const std::string root = ::testing::TempDir() + "/stress_cli_kmsg_" + std::to_string(::getpid());
  std::filesystem::create_directories(root + "/dev");
  std::ofstream(root + "/dev/kmsg") << "6,1,1,-;NVRM: Xid (PCI:0000:17:00): 79, old news\n";
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::ofstream(root + "/dev/kmsg", std::ios::app)
        << "3,2,2,-;NVRM: Xid (PCI:0000:17:00): 48, An uncorrectable double bit error\n";
  });
  auto r = run_gpucheck(quick(
      {"stress", "--device", "cpu", "--tests", "copy", "--duration", "3s", "--sysroot", root}));
  writer.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& watch = doc["stress"]["xid_watch"];
  EXPECT_EQ(watch["status"], "ok");
  ASSERT_EQ(watch["xid"].size(), 1u) << watch.dump();
  EXPECT_EQ(watch["xid"][0]["code"], 48);
  EXPECT_EQ(watch["unmatched"].size(), 1u);
  EXPECT_EQ(check_status(device_entry(doc, "cpu"), "xid"), "pass");

  auto none = run_gpucheck(quick({"stress", "--device", "cpu", "--tests", "copy", "--duration",
                                  "1s", "--sysroot", root + "/no-such-root"}));
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const Json d2 = Json::parse(none.out);
  EXPECT_EQ(d2["stress"]["xid_watch"]["status"], "skip");
  EXPECT_EQ(check_status(device_entry(d2, "cpu"), "xid"), "skip");
  std::filesystem::remove_all(root);
}

// qualify's stress requirement runs `stress` on the selected devices and judges its limits.
TEST(StressCli, QualifyStressRequirementIsMetAndUnmetByAPlantedFault) {
  const std::string profile = gpucheck::testing::write_temp_file("stress.toml", R"(
name = "stress-cpu"
[[require]]
kind = "stress"
device = "cpu"
duration = "2s"
tests = ["gemm", "memory"]
max_errors = 0
)");
  auto ok = run_gpucheck({"qualify", "--profile", profile, "--json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  const Json doc = Json::parse(ok.out);
  ASSERT_EQ(doc["qualify"]["verdicts"].size(), 1u);
  EXPECT_EQ(doc["qualify"]["verdicts"][0]["kind"], "stress");
  EXPECT_EQ(doc["qualify"]["verdicts"][0]["verdict"], "met") << doc["qualify"].dump();
  EXPECT_EQ(doc["stress"]["devices"][0]["device"], "cpu");

  auto bad = run_gpucheck({"qualify", "--profile", profile, "--json"},
                          {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:memory_word"}});
  ASSERT_EQ(bad.exit_code, 1) << bad.err;
  const Json v = Json::parse(bad.out)["qualify"]["verdicts"][0];
  EXPECT_EQ(v["verdict"], "unmet");
  EXPECT_EQ(v["measured"], 1);
  EXPECT_THAT(v["reason"].get<std::string>(), HasSubstr("1 wrong results, 0 allowed"));
}

TEST(StressCli, QualifyRejectsABadStressRequirement) {
  for (const char* body : {"duration = \"soon\"", "tests = [\"burn\"]", "max_errors = -1",
                           "allowed_clock_events = [\"nap\"]", "speed = 3"}) {
    const std::string profile = gpucheck::testing::write_temp_file(
        "bad_stress.toml",
        std::string("[[require]]\nkind = \"stress\"\ndevice = \"cpu\"\n") + body + "\n");
    auto r = run_gpucheck({"qualify", "--profile", profile});
    EXPECT_EQ(r.exit_code, 2) << body << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("bad_stress.toml:")) << body;
  }
}

namespace {

// Runs stress in the background, sends it `signal` after `after_s` seconds and returns the
// result with the exit status gpucheck ended with (the shell's $? of the stopped process).
struct Stopped {
  int exit_code = -1;
  std::string out, err;
  double wall_s = 0;
};

Stopped stress_stopped_by(const char* signal, double after_s, const std::vector<std::string>& args,
                          const std::map<std::string, std::optional<std::string>>& env = {}) {
  std::string cmd = "\"$0\"";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " & p=$!; sleep " + std::to_string(after_s) + "; kill -" + signal +
         " $p; wait $p; echo \"exit=$?\" >&2";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = gpucheck::testing::run_program("sh", {"-c", cmd, GPUCHECK_BINARY}, env);
  Stopped s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.out = r.out;
  s.err = r.err;
  if (auto at = r.err.rfind("exit="); at != std::string::npos)
    s.exit_code = std::stoi(r.err.substr(at + 5));
  return s;
}

}  // namespace

// A stop signal ends the run early with a complete document of what ran, exit 128 + signal.
TEST(StressCli, SigtermStopsTheRunWithACompleteDocumentAndExit143) {
  auto s = stress_stopped_by(
      "TERM", 4,
      quick({"stress", "--device", "cpu", "--tests", "gemm,memory", "--duration", "60s"}));
  ASSERT_EQ(s.exit_code, 143) << s.err;
  EXPECT_LT(s.wall_s, 25.0);  // stopped, not run for its 60 s
  const Json doc = Json::parse(s.out);
  EXPECT_EQ(doc["stress"]["stopped_by"], "SIGTERM");
  EXPECT_EQ(doc["stress"]["verdict"], "stopped");
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(cpu["verdict"], "pass") << reasons(cpu);
  EXPECT_EQ(cpu["stopped_by"], "SIGTERM");
  ASSERT_EQ(cpu["records"].size(), 1u);  // the memory test had not begun
  const Json& gemm = cpu["records"][0];
  EXPECT_EQ(gemm["status"], "ok");
  EXPECT_GT(gemm["iterations"].get<int>(), 2);
  EXPECT_LT(gemm["duration_s"].get<double>(), 20.0);
  EXPECT_GE(gemm["checking"]["full_checks"].get<int>(), 1);
}

// gpucheck passes its stop on to the children as SIGTERM; the device entry and the status line
// name the signal the run received (SIGHUP here), not the one the child saw.
TEST(StressCli, TheDeviceNamesTheSignalTheRunReceived) {
  auto s = stress_stopped_by(
      "HUP", 3, quick({"stress", "--device", "cpu", "--tests", "gemm", "--duration", "60s"}));
  ASSERT_EQ(s.exit_code, 129) << s.err;
  const Json doc = Json::parse(s.out);
  EXPECT_EQ(doc["stress"]["stopped_by"], "SIGHUP");
  EXPECT_EQ(device_entry(doc, "cpu")["stopped_by"], "SIGHUP");
  EXPECT_THAT(s.err, Not(HasSubstr("stopped early by SIGTERM")));
}

// A fault found before the stop still fails the device: exit 1, not 130.
TEST(StressCli, SigintAfterAFaultStillFailsTheDevice) {
  auto s = stress_stopped_by(
      "INT", 4, quick({"stress", "--device", "cpu", "--tests", "gemm", "--duration", "60s"}),
      {{"GPUCHECK_TEST_STRESS_FAULT", "cpu:gemm_bit@3"}});
  ASSERT_EQ(s.exit_code, 1) << s.err;
  const Json doc = Json::parse(s.out);
  EXPECT_EQ(doc["stress"]["stopped_by"], "SIGINT");
  EXPECT_EQ(doc["stress"]["verdict"], "fail");
  const Json& cpu = device_entry(doc, "cpu");
  EXPECT_EQ(cpu["verdict"], "fail");
  EXPECT_EQ(cpu["records"][0]["checking"]["mismatched_results"], 1);
}
