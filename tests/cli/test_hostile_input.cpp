// Hostile input ends in exit 2 with a clear message, never a crash (SIGSEGV in
// std::regex or the serializer), a hang (/dev/zero, FIFOs), exit 70 or a wrong verdict through
// undefined behaviour (a version that overflows).
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace {

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kProfileHead = "[[require]]\nkind = \"device\"\n";

RunResult qualify_with(const std::string& name, const std::string& toml) {
  return run_gpucheck({"qualify", "--profile", write_temp_file(name, toml), "--json"});
}

TEST(HostileProfile, HugeRegexesAreRefusedBeforeStdRegexSeesThem) {
  std::string nested = std::string(20000, '(') + "x" + std::string(20000, ')');
  auto r =
      qualify_with("nested.toml", std::string(kProfileHead) + "name_regex = \"" + nested + "\"\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("nested.toml:3: require[1].name_regex: a pattern of at most 256"));
  r = qualify_with("long.toml", std::string(kProfileHead) + "name_regex = \"" +
                                    std::string(100000, 'a') + "\"\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = qualify_with("deep.toml", std::string(kProfileHead) + "name_regex = \"" +
                                    std::string(9, '(') + "H" + std::string(9, ')') + "\"\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("groups nested at most 8 deep"));
}

TEST(HostileProfile, AVersionThatOverflowsIsRefusedAtLoadWithItsLine) {
  auto r = qualify_with("driver.toml", std::string(kProfileHead) + "backend = \"cuda\"\n" +
                                           "driver_min = \"18446744073709551616.1\"\n");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("driver.toml:4: require[1].driver_min: expected a version"));
}

// toml++ 3.3 reaches TOML_UNREACHABLE on these (found by fuzz.libfuzzer_profile under UBSan).
TEST(HostileProfile, NonAsciiWhereTheTomlParserMisbehavesIsExit2WithItsPlace) {
  auto r = qualify_with("bytes.toml", "\xcc\xaa");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bytes.toml:1:1: a non-ASCII character outside a string"));
  r = qualify_with("backslash.toml", "name = \"\"\"\\\n\xc2\xa7\"\"\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("backslash.toml:2:1: a non-ASCII character right after"));
  auto b = run_gpucheck({"bench", "--device", "cpu", "--config",
                         write_temp_file("presets.toml", "\xcc\xaa"), "--json"});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_THAT(b.err, HasSubstr("presets.toml:1:1:"));
}

TEST(HostileProfile, NonFiniteAndOverflowingNumbersNameTheirLine) {
  const std::string req = "\n[[require]]\nkind = \"backend\"\nname = \"cpu\"\navailable = true\n";
  for (const auto& [value, line] : std::vector<std::pair<std::string, std::string>>{
           {"max_time_s = inf", ":3: bench.max_time_s: expected a finite number above 0"},
           {"min_time_s = nan", ":3: bench.min_time_s: expected a finite number ≥ 0"},
           {"warmup = 9223372036854775807", ":3: bench.warmup: expected an integer from 0 to 1000"},
           {"threads = 100000", ":3: bench.threads: expected an integer from 0 to 65536"}}) {
    auto r = qualify_with("bench.toml", "name = \"x\"\n[bench]\n" + value + "\n" + req);
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_THAT(r.err, HasSubstr("bench.toml" + line)) << value;
  }
}

TEST(HostileProfile, ValueErrorsNameTheValuesLine) {
  auto r =
      qualify_with("dtype.toml",
                   "[[require]]\nkind = \"bench\"\nop = \"copy\"\n\n\ndtype = \"f32\"\n"
                   "shape = { bytes = 1024, direction = \"h2d\" }\nmin = 1\nunit = \"GB/s\"\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("dtype.toml:6: require[1].dtype: does not apply to copy"));
}

TEST(HostileFiles, DevicesFifosAndDirectoriesAreRefusedAtOnce) {
  const std::string dir = fs::path(write_temp_file("dir_probe/x", "")).parent_path();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c :
       std::vector<Case>{{{"qualify", "--profile", "/dev/zero"},
                          "--profile: cannot read '/dev/zero': it is a character device"},
                         {{"qualify", "--profile", fifo}, "it is a FIFO"},
                         {{"qualify", "--profile", dir}, "it is a directory"},
                         {{"bench", "--device", "cpu", "--config", dir}, "--config: cannot read"},
                         {{"bench", "--device", "cpu", "--config", fifo}, "it is a FIFO"},
                         {{"report", "show", "/dev/zero"}, "report show: cannot read '/dev/zero'"},
                         {{"report", "show", fifo}, "it is a FIFO"},
                         {{"report", "show", dir}, "it is a directory"},
                         {{"report", "compare", dir, dir}, "it is a directory"},
                         {{"doctor", "--facts", fifo}, "--facts: cannot read"}}) {
    auto r = run_gpucheck(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << c.args.back() << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
}

std::string doc_with(const std::string& results) {
  return R"({"schema":"gpucheck/1","command":"bench","provenance":{"gpucheck_version":"0.1.0",)"
         R"("git_commit":"x","time":"2025-01-01T00:00:00Z","argv":[],"environment":{},)"
         R"("backends_built":["cpu"]},"results":)" +
         results + "}";
}

TEST(HostileDocuments, DeepNestingBadTypesAndScalarsAreExit2WithThePointer) {
  std::string deep = doc_with("[]");
  deep.insert(deep.size() - 1, ",\"x\":" + std::string(100000, '[') + std::string(100000, ']'));
  auto r = run_gpucheck({"report", "show", write_temp_file("deep.json", deep), "--format", "json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nested deeper than 64 levels"));
  struct Case {
    std::string results, pointer;
  };
  const std::string rec = R"({"device":"cpu","backend":"cpu","op":"exp","impl":"k","dtype":"f32",)"
                          R"("transfers":"excluded","status":"failed","reason":"r","shape":)";
  for (const auto& c : std::vector<Case>{
           {"5", "at /results: expected array, got an integer"},
           {"[" + rec + R"({"n":"1024"}})" + "]", "at /results/0/shape/n: expected integer"},
           {"[" + rec + R"({"n":1e999}})" + "]", "a number out of range"}}) {
    for (const auto& command : {"show", "compare"}) {
      const std::string file = write_temp_file("bad.json", doc_with(c.results));
      std::vector<std::string> args{"report", command, file};
      if (std::string(command) == "compare") args.push_back(file);
      r = run_gpucheck(args);
      EXPECT_EQ(r.exit_code, 2) << command << " " << c.results << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(c.pointer)) << command;
    }
  }
}

TEST(HostileFlags, ClearMessagesForBadValues) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {{"bench", "--device", "cpu", "--copy", "1TB"},
            "bytes are a number with an optional KiB, MiB, GiB or TiB suffix"},
           {{"bench", "--device", "cpu", "--exp", "2^63"}, "too large: the largest power is 2^62"},
           {{"bench", "--device", "cpu", "--exp", "99999999999999999999"}, "too large for 64 bits"},
           {{"probe", "--probe-timeout", "nan"}, "must be more than 0 and at most 86400 seconds"},
           {{"probe", "--probe-timeout", "0"}, "must be more than 0 and at most 86400 seconds"},
           {{"doctor", "--probe-timeout", "inf"}, "must be more than 0 and at most 86400 seconds"},
           {{"bench", "--device", "cpu,cpu"}, "--device: 'cpu' is named twice"},
           {{"bench", "--device", "cpu", "--rounds", "0"}, "--rounds must be between 1 and 100"},
           {{"bench", "--device", "cpu", "--min-time", "nan"}, "--min-time"},
           {{"report", "compare", "a.json"}, "needs at least two documents"}}) {
    auto r = run_gpucheck(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back() << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args.back();
  }
}

TEST(HostileFlags, TwoThousandSizesReachTheChildThroughStdinNotArgv) {
  std::string sizes;
  for (int i = 1; i <= 2000; ++i) sizes += (i > 1 ? "," : "") + std::to_string(1000 + i);
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f32", "--exp",
                         sizes, "--reps", "1", "--warmup", "0", "--rounds", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  const Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 2000u);
  EXPECT_EQ(doc["results"][1999]["shape"]["n"], 3000);
  EXPECT_EQ(doc["results"][1999]["status"], "ok");
}

TEST(HostileSysroot, FifosUnderTheSysrootDoNotHang) {
  const fs::path root = fs::path(write_temp_file("fifo_root/etc/os-release", "ID=debian\n"))
                            .parent_path()
                            .parent_path();
  for (const char* rel : {"proc/cpuinfo", "proc/meminfo", "proc/version", "etc/hostname",
                          "sys/devices/system/cpu/online"}) {
    fs::create_directories((root / rel).parent_path());
    ASSERT_EQ(::mkfifo((root / rel).c_str(), 0600), 0) << rel;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_gpucheck({"probe", "--sysroot", root.string(), "--json", "--probe-timeout", "20"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_gpucheck(
      {"doctor", "--sysroot", root.string(), "--json", "--no-load", "--probe-timeout", "20"});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(120));
}

TEST(HostileIcd, SymlinkLoopsAreReportedAsBrokenIcds) {
  const fs::path dir = fs::path(write_temp_file("loop_vendors/README", "")).parent_path();
  fs::create_symlink(dir / "b.icd", dir / "a.icd");
  fs::create_symlink(dir / "a.icd", dir / "b.icd");
  auto r = run_gpucheck({"probe", "--json", "--probe-timeout", "30"},
                        {{"OCL_ICD_VENDORS", dir.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  for (const auto& b : doc["backends"]) {
    if (b["name"] != "opencl") continue;
    if (!b.contains("icd_files"))
      GTEST_SKIP() << "the OpenCL probe did not list ICD files: " << b.value("reason", "");
    int broken = 0;
    for (const auto& f : b["icd_files"])
      if (f.value("error", "").find("Too many levels of symbolic links") != std::string::npos)
        ++broken;
    EXPECT_EQ(broken, 2) << b["icd_files"].dump();
    return;
  }
  GTEST_SKIP() << "OpenCL is not built into this gpucheck";
}

}  // namespace
