// `gpucheck bench` and `stress` on vulkan0 (lavapipe in CI): every op verified at tiny sizes,
// both transfer records, every copy path, a planted error caught, f16 exp and GEMM where the
// device has float16 and unsupported where not, conv (im2col + GEMM) verified in both layouts,
// f32 and f16, at odd shapes and in chunks of images, NCHW also as implicit GEMM (the
// GPUCHECK_TEST_VULKAN_CONV hook), the cooperative-matrix path said to be absent, `--device all`
// taking Vulkan devices in; the stress shaders agree with the host's math and find a planted
// memory fault. Skips, saying why, where no Vulkan device exists.
#include "run_gpucheck.h"
#include "stress_cli_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpucheck::testing {
namespace {

using Json = nlohmann::json;

// vulkan0's probe entry, or a reason to skip.
std::string vulkan0_or_skip(Json* device) {
  static const RunResult probe = run_gpucheck({"probe", "--json"});
  if (probe.exit_code != 0) return "gpucheck probe --json failed: " + probe.err;
  const Json doc = Json::parse(probe.out);
  for (const auto& b : doc.at("backends")) {
    if (b.value("name", "") != "vulkan") continue;
    if (b.value("status", "") != "available")
      return "no Vulkan here: " + b.value("status", std::string()) + ": " +
             b.value("reason", std::string());
    for (const auto& d : b.value("devices", Json::array()))
      if (d.value("device", "") == "vulkan0") {
        *device = d;
        return {};
      }
    return "the Vulkan loader finds no physical device";
  }
  return "gpucheck was built without the Vulkan backend";
}

// Tiny sizes: lavapipe runs shaders on the CPU. Odd sizes reach every edge of the GEMM tiles
// and more than one tile and k-step.
std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* a : {"--device", "vulkan0", "--reps", "2", "--warmup", "1", "--exp", "1003",
                        "--gemm", "70x130x40", "--copy", "65539", "--json"})
    args.emplace_back(a);
  return args;
}

std::vector<Json> vulkan_records(const std::string& out) {
  std::vector<Json> v;
  const Json doc = Json::parse(out);
  for (const auto& r : doc.at("results"))
    if (r.value("backend", "") == "vulkan") v.push_back(r);
  return v;
}

bool is_cpu_device(const Json& device) {
  return device.at("properties").value("device_type", "") == "VK_PHYSICAL_DEVICE_TYPE_CPU";
}

TEST(VulkanBench, EveryOpVerifiesWithBothTransferRecordsAndEveryCopyPath) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(quick({"bench", "--ops", "exp,gemm,copy,latency"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto recs = vulkan_records(r.out);
  std::set<std::string> seen, copies;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec.at("status"), "ok");
    EXPECT_GT(rec.at("time_s").at("median").get<double>(), 0.0);
    const std::string op = rec.at("op");
    seen.insert(op + "/" + rec.at("transfers").get<std::string>());
    if (op == "exp" || op == "gemm") {
      EXPECT_EQ(rec.at("impl"), "shader");
      EXPECT_TRUE(rec.contains("verification"));
      EXPECT_TRUE(rec.contains("speedup_vs_cpu"));
    }
    if ((op == "exp" || op == "gemm") && rec.at("transfers") == "excluded") {
      // Device time: timestamps where the queue has them (lavapipe's has 64 valid bits).
      const std::string timing = rec.at("context").at("timing");
      EXPECT_TRUE(timing.starts_with("timestamp queries") || timing.starts_with("host clock"));
    }
    if (op == "gemm") {
      const Json& ctx = rec.at("context");
      // Whether the cooperative-matrix path was there, as the probe says it.
      const Json& cm = device.at("properties").at("cooperative_matrix");
      const std::string said = ctx.at("tuning_parameters").at("cooperative_matrix");
      if (is_cpu_device(device)) {
        // A CPU implementation searches only when asked.
        EXPECT_EQ(ctx.at("tuning"), "default");
        EXPECT_NE(ctx.value("tuning_note", "").find("CPU implementation"), std::string::npos);
      }
      if (!cm.at("offered").get<bool>()) {
        EXPECT_EQ(said, cm.at("detail"));
        EXPECT_TRUE(said.starts_with("not offered"));
        EXPECT_EQ(ctx.at("tuning_parameters").at("impl"), "kernel");
      } else if (said == "used") {
        // f16 on cooperative matrices: this shape does not fit their tiles, and says so.
        EXPECT_EQ(rec.at("dtype"), "f16");
        EXPECT_EQ(ctx.at("tuning_parameters").at("impl"), "cooperative_matrix");
        EXPECT_NE(ctx.value("gemm_path", "").find("cooperative matrices need"), std::string::npos);
      } else {
        EXPECT_TRUE(said.starts_with("offered; not used")) << said;
        EXPECT_EQ(ctx.at("tuning_parameters").at("impl"), "kernel");
      }
    }
    if (op == "copy") {
      const Json& shape = rec.at("shape");
      copies.insert(shape.at("direction").get<std::string>() + "/" +
                    shape.value("host_memory", ""));
      // A pageable copy is staged through the CPU: the host clock times it.
      if (shape.value("host_memory", "") == "pageable") {
        EXPECT_TRUE(rec.at("context").at("timing").get<std::string>().starts_with("host clock"));
      }
    }
  }
  for (const char* want : {"exp/excluded", "exp/included", "gemm/excluded", "gemm/included",
                           "copy/excluded", "latency/excluded"})
    EXPECT_TRUE(seen.contains(want)) << want;
  for (const char* want : {"h2d/pinned", "h2d/pageable", "d2h/pinned", "d2h/pageable"})
    EXPECT_TRUE(copies.contains(want)) << want;
  EXPECT_TRUE(std::any_of(copies.begin(), copies.end(),
                          [](const std::string& c) { return c.starts_with("d2d/"); }));
}

// A GPU copies device to device with copy.comp (16-byte words, the tail by vkCmdCopyBuffer);
// the hook takes that path on lavapipe, whose own copies are memcpy. A length below one word, and
// one of whole words plus 3 bytes, both verified byte for byte.
TEST(VulkanBench, TheCopyShaderCopiesWholeWordsAndTheTail) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r =
      run_gpucheck({"bench", "--device", "vulkan0", "--ops", "copy", "--copy", "15,65539", "--reps",
                    "2", "--warmup", "1", "--no-baseline", "--json"},
                   {{"GPUCHECK_TEST_VULKAN_COPY_SHADER", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::set<std::uint64_t> d2d;
  for (const auto& rec : vulkan_records(r.out)) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec.at("status"), "ok");
    EXPECT_NE(rec.at("impl").get<std::string>().find("copy shader"), std::string::npos);
    if (rec.at("shape").at("direction") == "d2d")
      d2d.insert(rec.at("shape").at("bytes").get<std::uint64_t>());
  }
  EXPECT_EQ(d2d, (std::set<std::uint64_t>{15, 65539}));
}

TEST(VulkanBench, F16ExpAndGemmComputeInF32AndOtherDtypesSayUnsupported) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(quick({"bench", "--ops", "exp,gemm", "--dtype", "f16,f64"}));
  const auto recs = vulkan_records(r.out);
  ASSERT_FALSE(recs.empty()) << r.err;
  const bool f16 =
      device.at("properties").at("shader_features").value("shader_float16", false) &&
      device.at("properties").at("shader_features").value("storage_buffer_16bit_access", false);
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    if (rec.at("dtype") == "f16" && f16) {
      EXPECT_EQ(rec.at("status"), "ok");
      EXPECT_EQ(rec.at("compute_type"), "f32");
      EXPECT_TRUE(rec.contains("verification"));
    } else {
      EXPECT_EQ(rec.at("status"), "unsupported");
      EXPECT_FALSE(rec.value("reason", "").empty());
    }
  }
}

TEST(VulkanBench, DeviceWithoutFloat16GivesUnsupportedF16Records) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(quick({"bench", "--ops", "exp,gemm", "--dtype", "f16,f32"}),
                                   {{"GPUCHECK_TEST_VULKAN_NO_FLOAT16", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto recs = vulkan_records(r.out);
  ASSERT_FALSE(recs.empty()) << r.err;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    if (rec.at("dtype") == "f16") {
      EXPECT_EQ(rec.at("status"), "unsupported");
      EXPECT_NE(rec.value("reason", "").find("shaderFloat16"), std::string::npos);
    } else {
      EXPECT_EQ(rec.at("status"), "ok");
    }
  }
}

// Other GEMM parameters (the tuner's hook) run, verify and are named in the record, in both
// shaders: the 16-byte one where k and n are multiples of 4 (m, n and k here leave partial tiles
// on every side), the general one elsewhere; ones that do not parse or fit fail the cell, naming
// the variable.
TEST(VulkanBench, GemmParametersFromTheHookRunOrFailNamingIt) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  for (const char* vec4 : {"0", "1"}) {
    const bool vectors = vec4 == std::string("1");
    auto args = quick({"bench", "--ops", "gemm", "--dtype", "f32,f16"});
    if (vectors) *(std::find(args.begin(), args.end(), "--gemm") + 1) = "70x132x40";
    const RunResult r = run_gpucheck(
        args,
        {{"GPUCHECK_TEST_GEMM_PARAMS", std::string("wx=8,wy=4,tm=4,tn=8,bk=8,vec4=") + vec4}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& rec : vulkan_records(r.out)) {
      SCOPED_TRACE(rec.dump());
      if (rec.at("dtype") == "f16" && rec.at("status") == "unsupported") continue;  // no float16
      EXPECT_EQ(rec.at("status"), "ok");
      // A GPU's f16 on cooperative matrices has no tiled-shader parameters to take.
      if (rec.at("context").at("tuning_parameters").at("impl") == "cooperative_matrix") continue;
      const Json& p = rec.at("context").at("tuning_parameters").at("parameters");
      Json expected = Json::parse(R"({"wx": 8, "wy": 4, "tm": 4, "tn": 8, "bk": 8})");
      expected["vec4"] = vectors ? 1 : 0;
      EXPECT_EQ(p, expected);
      EXPECT_EQ(rec.at("context").value("gemm_path", "").find("16-byte loads") != std::string::npos,
                vectors);
    }
  }
  const RunResult bad = run_gpucheck(quick({"bench", "--ops", "gemm"}),
                                     {{"GPUCHECK_TEST_GEMM_PARAMS", "wx=8,tile=4"}});
  const auto recs = vulkan_records(bad.out);
  ASSERT_FALSE(recs.empty()) << bad.err;
  EXPECT_EQ(recs[0].at("status"), "failed");
  EXPECT_NE(recs[0].value("reason", "").find("GPUCHECK_TEST_GEMM_PARAMS: unknown parameter 'tile'"),
            std::string::npos)
      << recs[0].dump();
}

// The GEMM tuner on vulkan0. A CPU implementation searches only when asked (--tune-budget here),
// a GPU on its first run:
// the search verifies every candidate (a planted wrong one is rejected, never chosen), caches
// its winner per dtype, and the next run reads the cache; --no-tune runs the defaults.
TEST(VulkanBench, TuningSearchesVerifiesCachesAndTheNextRunReadsTheCache) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const std::filesystem::path home = std::filesystem::temp_directory_path() /
                                     ("gpucheck-vulkan-tuning-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  const std::map<std::string, std::optional<std::string>> env = {{"XDG_CACHE_HOME", home.string()}};
  auto tuning_of = [](const RunResult& r, const std::string& state) {
    std::map<std::string, Json> params;  // per dtype
    for (const auto& rec : vulkan_records(r.out)) {
      SCOPED_TRACE(rec.dump());
      if (rec.at("op") != "gemm" || rec.at("status") == "unsupported") continue;
      EXPECT_EQ(rec.at("status"), "ok");
      // A GPU's f16 on cooperative matrices is never searched.
      if (rec.at("context").at("tuning_parameters").at("impl") == "cooperative_matrix") {
        EXPECT_EQ(rec.at("context").at("tuning"), "default");
        continue;
      }
      EXPECT_EQ(rec.at("context").at("tuning"), state);
      params[rec.at("dtype")] = rec.at("context").at("tuning_parameters");
    }
    EXPECT_TRUE(params.contains("f32")) << r.err;
    return params;
  };
  const std::vector<std::string> gemm = {"bench", "--ops", "gemm", "--dtype", "f32,f16"};

  auto env_plant = env;
  env_plant["GPUCHECK_TEST_PLANT_TUNE"] = "wrong";
  // The progress estimate's trace: each search's budget arrives from the child as a number.
  env_plant["GPUCHECK_PROGRESS_TRACE"] = (home / "progress.jsonl").string();
  auto args = quick(gemm);
  args.insert(args.end(), {"--tune-budget", "0.5", "-v"});
  const RunResult first = run_gpucheck(args, env_plant);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("tuned gemm f32"), std::string::npos) << first.err;
  {
    std::ifstream trace(home / "progress.jsonl");
    int searches = 0;
    for (std::string line; std::getline(trace, line);) {
      const Json ev = Json::parse(line);
      if (ev.at("event") != "once") continue;
      EXPECT_EQ(ev.at("budget_s").get<double>(), 0.5) << line;
      ++searches;
    }
    EXPECT_GE(searches, 1);
  }
  const auto tuned = tuning_of(first, "tuned");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(home / "gpucheck"))
    files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0]);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Json doc = Json::parse(text);
  EXPECT_EQ(doc.at("format"), "gpucheck-vulkan-gemm-tuning/1");
  EXPECT_EQ(doc.at("identity").at("device_uuid"), device.value("device_uuid", ""));
  for (const auto& [dtype, params] : tuned) {
    SCOPED_TRACE(dtype);
    const Json& entry = doc.at("dtypes").at(dtype);
    EXPECT_EQ(entry.at("parameters"), params.at("parameters"));
    EXPECT_LE(entry.at("seconds").get<double>(), entry.at("reference").at("seconds").get<double>());
    // The planted candidate (the first after the defaults) failed verification and lost.
    ASSERT_FALSE(entry.at("rejected").empty()) << entry.dump();
    const Json& planted = entry.at("rejected")[0];
    EXPECT_TRUE(planted.at("why").get<std::string>().starts_with("verification failed"));
    EXPECT_NE(planted.at("parameters"), params.at("parameters"));
  }

  // Again without flags: the cache's winners, nothing searched or rewritten.
  const RunResult second = run_gpucheck(quick(gemm), env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(tuning_of(second, "cached"), tuned);
  EXPECT_EQ(second.err.find("tuned gemm"), std::string::npos) << second.err;
  std::ifstream again(files[0]);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()),
            text);

  // --no-tune: the defaults, as a run on a CPU implementation without a cache has them.
  auto plain = quick(gemm);
  plain.push_back("--no-tune");
  const RunResult off = run_gpucheck(plain, env);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  tuning_of(off, "default");
  std::filesystem::remove_all(home);
}

TEST(VulkanBench, PlantedWrongValueIsAMismatch) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r =
      run_gpucheck(quick({"bench", "--ops", "exp,gemm"}), {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto recs = vulkan_records(r.out);
  ASSERT_FALSE(recs.empty());
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec.at("status"), "mismatch");
    EXPECT_TRUE(rec.at("verification").contains("first_bad_index"));
  }
}

// conv alone on vulkan0, once, at the shapes given (every layout), with no CPU baseline.
std::vector<std::string> conv_args(const std::string& shapes, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"bench",  "--device",  "vulkan0",       "--ops", "conv",
                                   "--conv", shapes,      "--reps",        "1",     "--warmup",
                                   "0",      "--no-tune", "--no-baseline", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Two images of a small odd shape: NCHW as implicit GEMM, each image a z work group at its
// offset into x and y; NHWC one GEMM with the filters as Bᵀ.
TEST(VulkanBench, ConvVerifiesInBothLayoutsF32AndF16) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(conv_args("2,3,9,11,5,3,3,1,1", {"--dtype", "f32,f16"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const bool f16 =
      device.at("properties").at("shader_features").value("shader_float16", false) &&
      device.at("properties").at("shader_features").value("storage_buffer_16bit_access", false);
  std::set<std::string> seen;
  for (const auto& rec : vulkan_records(r.out)) {
    SCOPED_TRACE(rec.dump());
    if (rec.at("dtype") == "f16" && !f16) {
      EXPECT_EQ(rec.at("status"), "unsupported");
      continue;
    }
    EXPECT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("impl"), "implicit GEMM shader (NCHW), im2col + shader GEMM (NHWC)");
    EXPECT_EQ(rec.at("compute_type"), "f32");
    EXPECT_EQ(rec.at("verification").at("method"), "elementwise");
    EXPECT_EQ(rec.at("context").at("tuning"), "default");
    seen.insert(rec.at("dtype").get<std::string>() + "/" +
                rec.at("shape").at("layout").get<std::string>());
  }
  for (const char* want : {"f32/nchw", "f32/nhwc"}) EXPECT_TRUE(seen.contains(want)) << want;
  if (f16) {
    for (const char* want : {"f16/nchw", "f16/nhwc"}) EXPECT_TRUE(seen.contains(want)) << want;
  }
}

// Stride 2 with padding 3 under a 7×7 filter, a 1×1 filter, and a filter as large as the padded
// input, each in both layouts; with the column matrix held to 4000 bytes, the three images of
// the first shape go through in chunks (of two, then one), reaching the offsets of later
// chunks (NCHW through im2col by the hook: by default it builds no column matrix).
TEST(VulkanBench, OddConvShapesAndChunksOfImagesVerify) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(
      conv_args("3,2,5,5,3,3,3,1,1;1,3,13,12,6,7,7,2,3;3,5,6,7,8,1,1,1,0;"
                "2,2,4,3,3,6,5,1,1",
                {"--dtype", "f32"}),
      {{"GPUCHECK_TEST_VULKAN_COL_BYTES", "4000"}, {"GPUCHECK_TEST_VULKAN_CONV", "im2col"}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::set<std::string> seen;
  for (const auto& rec : vulkan_records(r.out)) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("verification").at("method"), "elementwise");
    seen.insert(rec.at("shape").dump());
  }
  EXPECT_EQ(seen.size(), 8u) << r.out;
}

// Shapes whose filters, channels and positions are multiples of 4 take the 16-byte shader in
// both layouts (NCHW through im2col by the hook): NCHW as a batch of GEMMs in one dispatch (with
// the column matrix held to two images, a batch of two and then one at a later chunk's offset),
// NHWC with the filters as Bᵀ read in vectors. Three input channels (27 taps) do not fit it: those
// run the general shader on its own defaults and say so. 27 taps (3 channels of 3×3) are padded to
// 28 with zeros, so that shape takes 16-byte loads as 4 channels' 36 do; 25 output positions
// (NCHW's n) and 6 filters (NHWC's n) cannot.
TEST(VulkanBench, ConvTakesTheSixteenByteShaderWhereItsShapeAllows) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(
      conv_args("3,4,6,6,8,3,3,1,1;2,3,6,6,8,3,3,1,1;2,4,5,5,6,3,3,1,1"),
      {{"GPUCHECK_TEST_VULKAN_COL_BYTES", "12000"}, {"GPUCHECK_TEST_VULKAN_CONV", "im2col"}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::set<std::string> seen;  // channels/filters/layout
  for (const auto& rec : vulkan_records(r.out)) {
    SCOPED_TRACE(rec.dump());
    ASSERT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("verification").at("method"), "elementwise");
    const std::string path = rec.at("context").at("gemm_path");
    const int k = rec.at("shape").at("k");
    if (k == 8)
      EXPECT_EQ(path, "the tiled shader, 16-byte loads");
    else
      EXPECT_NE(path.find("the block does not fit 16-byte loads"), std::string::npos);
    seen.insert(std::to_string(rec.at("shape").at("c").get<int>()) + "/" + std::to_string(k) + "/" +
                rec.at("shape").at("layout").get<std::string>());
  }
  EXPECT_EQ(seen, (std::set<std::string>{"3/8/nchw", "3/8/nhwc", "4/8/nchw", "4/8/nhwc", "4/6/nchw",
                                         "4/6/nhwc"}))
      << r.out;
}

// A 1×1 filter of stride 1 without padding multiplies x itself (no column matrix, so the cap on
// one does not chunk it); the result is verified as any other, and the record says so.
TEST(VulkanBench, OneByOneConvReadsTheInputWithoutIm2col) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(conv_args("5,8,6,6,4,1,1,1,0;3,8,6,6,4,1,1,2,0"),
                                   {{"GPUCHECK_TEST_VULKAN_COL_BYTES", "2000"}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  int direct = 0, strided = 0;
  for (const auto& rec : vulkan_records(r.out)) {
    SCOPED_TRACE(rec.dump());
    ASSERT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("verification").at("method"), "elementwise");
    const bool no_im2col =
        rec.at("context").at("gemm_path").get<std::string>().find("no im2col") != std::string::npos;
    (rec.at("shape").at("stride") == 1 ? direct : strided) += 1;
    EXPECT_EQ(no_im2col, rec.at("shape").at("stride") == 1);
  }
  EXPECT_GT(direct, 0) << r.out;
  EXPECT_GT(strided, 0) << r.out;
}

// On either path: NCHW's implicit GEMM and NHWC's im2col.
TEST(VulkanBench, PlantedWrongConvValueIsAMismatch) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r =
      run_gpucheck(conv_args("2,3,9,11,5,3,3,1,1", {"--dtype", "f32", "--layout", "nchw,nhwc"}),
                   {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto recs = vulkan_records(r.out);
  ASSERT_FALSE(recs.empty()) << r.out;
  std::set<std::string> layouts;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec.at("status"), "mismatch");
    EXPECT_TRUE(rec.at("verification").contains("first_bad_index"));
    const std::string layout = rec.at("shape").at("layout");
    layouts.insert(layout);
    EXPECT_EQ(rec.at("context").value("gemm_path", "").starts_with("implicit GEMM"),
              layout == "nchw");
  }
  EXPECT_EQ(layouts, (std::set<std::string>{"nchw", "nhwc"}));
}

// NCHW conv as implicit GEMM (the default): the B tiles read from x, at
// shapes reaching each edge of that arithmetic: odd sizes with padding and 99 output positions
// (not a multiple of 4: y stored element by element), stride 2, a 7×7 filter on 3 channels (147
// taps, padded to 148), 1×1 filters of stride 2 or with padding (not the direct path), 70
// filters (past one 64-row tile) over 64 positions (y stored in vectors). NHWC stays on im2col,
// as does the direct 1×1 (last shape). Unforced, it runs the defaults' tiles, not the tuned
// GEMM set, and says so; the second parameter set has four B vectors an invocation; the third
// is the general shader's, for which the defaults stand in.
TEST(VulkanBench, ImplicitGemmConvVerifiesAtOddShapes) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const bool f16 =
      device.at("properties").at("shader_features").value("shader_float16", false) &&
      device.at("properties").at("shader_features").value("storage_buffer_16bit_access", false);
  const std::string shapes =
      "2,3,9,11,5,3,3,1,1;2,4,10,9,7,3,3,2,1;1,3,13,12,6,7,7,2,3;3,8,6,6,4,1,1,2,0;"
      "2,5,5,7,3,1,1,1,1;2,8,8,8,70,3,3,1,1;2,8,6,6,4,1,1,1,0";
  for (const char* params :
       {"", "wx=8,wy=8,tm=8,tn=8,bk=16,vec4=1", "wx=8,wy=8,tm=3,tn=5,bk=7,vec4=0"}) {
    SCOPED_TRACE(params);
    std::map<std::string, std::optional<std::string>> env;
    if (*params) env["GPUCHECK_TEST_GEMM_PARAMS"] = params;
    // The tiles the path names: the forced 16-byte set's, else the defaults' (64 wide, 4×4 sums).
    const std::string tiles = std::string(params).find("vec4=1") != std::string::npos
                                  ? "tm=8,tn=8,bk=16,vec4=1"
                                  : "tm=4,tn=4,bk=16,vec4=1";
    const RunResult r = run_gpucheck(
        conv_args(shapes, {"--dtype", *params ? "f32" : "f32,f16", "--layout", "nchw,nhwc"}), env);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    std::set<std::string> implicit;  // dtype/shape
    for (const auto& rec : vulkan_records(r.out)) {
      SCOPED_TRACE(rec.dump());
      if (rec.at("dtype") == "f16" && !f16) {
        EXPECT_EQ(rec.at("status"), "unsupported");
        continue;
      }
      ASSERT_EQ(rec.at("status"), "ok");
      EXPECT_EQ(rec.at("verification").at("method"), "elementwise");
      const std::string path = rec.at("context").at("gemm_path");
      const Json& shape = rec.at("shape");
      const bool direct = shape.at("r") == 1 && shape.at("s") == 1 && shape.at("stride") == 1 &&
                          shape.at("pad") == 0;
      if (shape.at("layout") == "nchw" && !direct) {
        EXPECT_TRUE(path.starts_with("implicit GEMM (no column matrix; ")) << path;
        EXPECT_NE(path.find(tiles), std::string::npos) << path;
        implicit.insert(rec.at("dtype").get<std::string>() + "/" + shape.dump());
      } else {
        EXPECT_EQ(path.find("implicit"), std::string::npos);
      }
    }
    EXPECT_EQ(implicit.size(), (*params || !f16 ? 1u : 2u) * 6u) << r.out;
  }
}

// The hook's im2col keeps NCHW on the column matrix, verified as the implicit path is.
TEST(VulkanBench, Im2colHookKeepsNchwConvOnTheColumnMatrix) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(
      conv_args("2,3,9,11,5,3,3,1,1;1,3,13,12,6,7,7,2,3", {"--dtype", "f32", "--layout", "nchw"}),
      {{"GPUCHECK_TEST_VULKAN_CONV", "im2col"}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto recs = vulkan_records(r.out);
  ASSERT_FALSE(recs.empty()) << r.out;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    ASSERT_EQ(rec.at("status"), "ok");
    EXPECT_EQ(rec.at("context").value("gemm_path", "").find("implicit"), std::string::npos);
  }
}

TEST(VulkanBench, ConvPathHookRefusesAnUnknownValue) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(conv_args("2,3,9,11,5,3,3,1,1", {"--dtype", "f32"}),
                                   {{"GPUCHECK_TEST_VULKAN_CONV", "direct"}});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE((r.err + r.out).find("GPUCHECK_TEST_VULKAN_CONV"), std::string::npos) << r.err << r.out;
}

TEST(VulkanBench, AllTakesVulkanDevicesIn) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(
      {"bench", "--device", "all", "--ops", "latency", "--reps", "1", "--warmup", "0", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto recs = vulkan_records(r.out);
  ASSERT_FALSE(recs.empty()) << r.out;
  for (const auto& rec : recs) EXPECT_EQ(rec.at("status"), "ok") << rec.dump();
  // The stable form names the same device.
  const std::string stable = device.value("stable_id", "");
  const RunResult s = run_gpucheck(
      {"bench", "--device", stable, "--ops", "latency", "--reps", "1", "--warmup", "0", "--json"});
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_FALSE(vulkan_records(s.out).empty()) << s.out;
}

// Tiny memory: lavapipe's 64-bit shader arithmetic runs on the CPU.
std::vector<std::string> stress_args(std::vector<std::string> args) {
  for (const char* a :
       {"--device", "vulkan0", "--gemm", "64", "--memory-fraction", "0.001", "--json"})
    args.emplace_back(a);
  return args;
}

// A checksum or memory-test shader that disagreed with stress_math.h would fail the GEMM's
// first checked result or report mismatches here.
TEST(VulkanStress, GemmMemoryAndCopyPassOnVulkan0) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(stress_args({"stress", "--duration", "4s"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json doc = Json::parse(r.out);
  const Json& dev = stress_device(doc, "vulkan0");
  EXPECT_EQ(dev.at("verdict"), "pass") << dev.dump();
  ASSERT_EQ(dev.at("records").size(), 3u);
  for (const auto& rec : dev.at("records")) EXPECT_EQ(rec.at("status"), "ok") << rec.dump();
  EXPECT_EQ(dev["records"][0].at("impl"), "shader");
  EXPECT_GT(dev["records"][0].at("checking").at("results_checksummed").get<int>(), 0);
  EXPECT_GE(dev["records"][1].at("memory").at("passes").get<int>(), 1);
}

TEST(VulkanStress, APlantedMemoryWordIsFoundByTheVulkanShaders) {
  Json device;
  if (auto why = vulkan0_or_skip(&device); !why.empty()) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(stress_args({"stress", "--tests", "memory", "--duration", "2s"}),
                                   {{"GPUCHECK_TEST_STRESS_FAULT", "vulkan0:memory_word@2"}});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json& dev = stress_device(doc, "vulkan0");
  EXPECT_EQ(dev.at("verdict"), "fail");
  EXPECT_EQ(dev["records"][0].at("memory").at("mismatches"), 1) << dev.dump();
}

}  // namespace
}  // namespace gpucheck::testing
