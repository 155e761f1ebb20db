// qualify profiles: the shipped ones and the embedded SKU table load; every malformed profile
// is a UsageError naming file:line, the dotted key and what was expected.
#include "core/errors.h"
#include "qualify/profile.h"
#include "qualify/skus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace {

namespace q = gpucheck::qualify;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(const std::string& text) {
  try {
    q::parse_profile(text, "p.toml");
  } catch (const gpucheck::UsageError& e) {
    return e.what();
  }
  return "no error";
}

constexpr const char* kGemm = R"(
[[require]]
kind = "bench"
device = "cpu"
op = "gemm"
shape = { m = 64, n = 32, k = 16 }
min = 1
unit = "GFLOP/s"
)";

TEST(QualifyProfile, ShippedProfilesLoad) {
  const std::filesystem::path dir = std::filesystem::path(GPUCHECK_SOURCE_DIR) / "configs/qualify";
  // Every file the install ships (cmake/GpucheckInstall.cmake copies the folder's *.toml).
  int shipped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().filename().string());
    q::Profile p = q::load_profile(entry.path().string());
    EXPECT_FALSE(p.requirements.empty());
    EXPECT_FALSE(p.description.empty());
    ++shipped;
  }
  EXPECT_GE(shipped, 9);
}

TEST(QualifyProfile, BenchRequirementIsReadCompletely) {
  q::Profile p = q::parse_profile(std::string("name = \"x\"\n") + kGemm, "p.toml");
  ASSERT_EQ(p.requirements.size(), 1u);
  const auto& r = p.requirements[0];
  EXPECT_EQ(r.id, "bench_1");
  EXPECT_EQ(r.line, 3);
  EXPECT_EQ(r.selector, q::Selector::kNamed);
  EXPECT_EQ(r.dtype, "f32");
  EXPECT_EQ(r.transfers, "excluded");
  EXPECT_EQ(r.shape, (nlohmann::json{{"m", 64}, {"n", 32}, {"k", 16}}));
  EXPECT_EQ(r.criterion, q::Criterion::kMin);
  EXPECT_DOUBLE_EQ(r.value * q::unit_factor(r.unit), 1e-3);  // TFLOP/s, the record's unit
}

TEST(QualifyProfile, ShapesAreNormalisedAsTheRecordWritesThem) {
  q::Profile p = q::parse_profile(R"(
[[require]]
kind = "bench"
op = "conv"
dtype = "f16"
shape = { n = 2, c = 3, h = 9, w = 9, k = 4, r = 3, s = 3 }
speedup_min = 2
[[require]]
kind = "bench"
op = "copy"
shape = { bytes = 1024, direction = "h2d" }
min_fraction_of_reference = 0.5
)",
                                  "p.toml");
  EXPECT_EQ(p.requirements[0].shape["layout"], "nchw");
  EXPECT_EQ(p.requirements[0].shape["stride"], 1);
  EXPECT_EQ(p.requirements[0].shape["pad"], 0);
  EXPECT_EQ(p.requirements[1].shape["host_memory"], "pinned");
  EXPECT_EQ(p.requirements[1].reference, "measured");
  EXPECT_EQ(p.requirements[1].selector, q::Selector::kAny);
}

TEST(QualifyProfile, UnknownKeyNamesLineAndDottedKey) {
  std::string text = std::string(kGemm) + "colour = \"red\"\n";
  EXPECT_THAT(error_of(text), AllOf(HasSubstr("p.toml:9: require[1].colour: unknown key"),
                                    HasSubstr("keys here:")));
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\nop = \"exp\"\nmin = 1\nunit = \"GB/s\"\n"
                       "shape = { n = 4, q = 2 }\n"),
              HasSubstr("p.toml:6: require[1].shape.q: unknown key"));
  EXPECT_THAT(error_of("nmae = \"x\"\n[[require]]\nkind = \"doctor\"\n"),
              HasSubstr("p.toml:1: nmae: unknown key"));
}

TEST(QualifyProfile, WrongValuesSayWhatWasExpected) {
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\nop = \"fft\"\n"),
              HasSubstr("p.toml:3: require[1].op: expected one of exp, gemm, conv, copy, latency, "
                        "seedloop, got the string 'fft'"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"gpu\"\n"),
              HasSubstr("require[1].kind: expected one of backend, device, doctor, bench"));
  EXPECT_THAT(
      error_of("[[require]]\nkind = \"backend\"\nname = \"cuda\"\ndevices_min = \"2\"\n"),
      HasSubstr("p.toml:4: require[1].devices_min: expected an integer ≥ 0, got the string '2'"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"device\"\ncompute_capability_min = \"eight\"\n"),
              HasSubstr("require[1].compute_capability_min: expected a version"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"device\"\nname_regex = \"H100(\"\n"),
              HasSubstr("require[1].name_regex: expected an ECMAScript regex"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"doctor\"\ncheck = \"no_such_check\"\n"),
              HasSubstr("require[1].check: expected a doctor check id"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"doctor\"\nignore = [\"no_such_check\"]\n"),
              HasSubstr("require[1].ignore: expected a list of:"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"doctor\"\nignore = \"vulkan_loader\"\n"),
              HasSubstr("require[1].ignore: expected a list of:"));
  EXPECT_THAT(
      error_of("[[require]]\nkind = \"doctor\"\ncheck = \"cpu_isa\"\nignore = [\"cpu_isa\"]\n"),
      HasSubstr("ignore"));
  EXPECT_THAT(
      error_of("[[require]]\nkind = \"bench\"\nop = \"gemm\"\nshape = { m = 0, n = 1, k = 1 }\n"
               "min = 1\nunit = \"TFLOP/s\"\n"),
      HasSubstr("require[1].shape.m: expected an integer ≥ 1, got the integer 0"));
  EXPECT_THAT(
      error_of("[[require]]\nkind = \"bench\"\nop = \"gemm\"\nshape = { m = 4, n = 4, k = 4 }\n"
               "min = 1\nunit = \"GB/s\"\n"),
      HasSubstr("require[1].unit: expected one of TFLOP/s, GFLOP/s"));
}

TEST(QualifyProfile, CriteriaAreExactlyOne) {
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\nop = \"exp\"\nshape = { n = 4 }\n"),
              HasSubstr("p.toml:1: require[1]: a bench requirement needs exactly one of min, max, "
                        "speedup_min, min_fraction_of_reference, min_fraction_of_limit (got "
                        "none)"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\nop = \"exp\"\nshape = { n = 4 }\nmin = 1\n"
                       "unit = \"GB/s\"\nspeedup_min = 2\n"),
              HasSubstr("(got min, speedup_min)"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\ndevice = \"cpu\"\nop = \"exp\"\n"
                       "shape = { n = 4 }\nspeedup_min = 2\n"),
              HasSubstr("speedup_min on the CPU"));
  EXPECT_THAT(
      error_of("[[require]]\nkind = \"bench\"\nop = \"latency\"\nshape = { mode = \"async\" }\n"
               "min = 1\nunit = \"GB/s\"\n"),
      HasSubstr("latency has no throughput"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\nop = \"copy\"\n"
                       "shape = { bytes = 8, direction = \"h2d\" }\ntransfers = \"included\"\n"
                       "min = 1\nunit = \"GB/s\"\n"),
              HasSubstr("copy records are transfers = \"excluded\" only"));
}

TEST(QualifyProfile, StructureErrors) {
  EXPECT_THAT(error_of("name = \"x\"\n"), HasSubstr("p.toml: no [[require]] table"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"doctor\"\n\n[[require\n"),
              HasSubstr("p.toml:4:"));  // TOML syntax, with line and column
  EXPECT_THAT(error_of("[[require]]\nid = \"a\"\nkind = \"doctor\"\n[[require]]\nid = \"a\"\n"
                       "kind = \"doctor\"\n"),
              HasSubstr("p.toml:5: require[2].id: 'a' is used twice"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\ndevice = \"gpu0\"\n"),
              HasSubstr("require[1].device: expected \"any\", \"each\" or a device"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"backend\"\nname = \"rocm\"\navailable = true\n"),
              HasSubstr("require[1].name: expected one of cpu, cuda, opencl, vulkan, metal"));
}

// A fraction is a share of something whole: 5 could never be met, so it is refused at its line.
TEST(QualifyProfile, FractionsAboveOneAreRefused) {
  EXPECT_THAT(error_of("[[require]]\nkind = \"stress\"\nduration = \"60s\"\n"
                       "min_sustained_fraction = 5\n"),
              HasSubstr("p.toml:4: require[1].min_sustained_fraction: expected a fraction above 0 "
                        "and at most 1, got 5"));
  EXPECT_EQ(error_of("[[require]]\nkind = \"stress\"\nduration = \"60s\"\n"
                     "min_sustained_fraction = 1\n"),
            "no error");
}

// A profile saved with a UTF-8 byte order mark (Windows editors write one) is read as text.
TEST(QualifyProfile, AByteOrderMarkIsSkipped) {
  const q::Profile p = q::parse_profile(std::string("\xEF\xBB\xBF") + kGemm, "p.toml");
  ASSERT_EQ(p.requirements.size(), 1u);
  EXPECT_EQ(p.requirements[0].line, 2);  // the mark adds no line
}

TEST(QualifySkus, EmbeddedTableLoadsWithHopperEntries) {
  const auto& skus = q::builtin_skus();
  const q::Sku* h100 = q::find_sku(skus, std::string("0x2330"), "");
  const q::Sku* h200 = q::find_sku(skus, std::nullopt, "NVIDIA H200");
  ASSERT_NE(h100, nullptr);
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(q::find_sku(skus, std::string("0X2335"), "whatever"), h200);  // ids case-blind
  EXPECT_EQ(q::find_sku(skus, std::nullopt, "NVIDIA H100"), nullptr);     // names exact
  nlohmann::json gemm4096 = {{"m", 4096}, {"n", 4096}, {"k", 4096}};
  const q::Reference* m =
      q::find_reference(*h100, "measured", "gemm", "bf16", gemm4096, "excluded");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->provenance, AllOf(HasSubstr("NVIDIA H100 80GB HBM3"), HasSubstr("2026-11-26"),
                                   HasSubstr("device-perf.sh")));
  const q::Reference* d =
      q::find_reference(*h100, "datasheet", "gemm", "bf16", gemm4096, "excluded");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(d->provenance, HasSubstr("datasheet"));
  EXPECT_EQ(q::find_reference(*h100, "measured", "gemm", "bf16",
                              {{"m", 512}, {"n", 512}, {"k", 512}}, "excluded"),
            nullptr);
}

// fp8 GEMM in a bench requirement and a stress requirement; fp8 anywhere but GEMM is refused at
// its line; the Hopper SKUs carry FP8's dense datasheet peak.
TEST(QualifyProfile, Fp8IsAGemmDtypeForBenchAndStress) {
  q::Profile p = q::parse_profile(R"(
[[require]]
kind = "bench"
device = "each"
op = "gemm"
dtype = "fp8"
shape = { m = 8192, n = 8192, k = 8192 }
min_fraction_of_reference = 0.6
reference = "datasheet"
[[require]]
kind = "stress"
duration = "60s"
tests = ["gemm"]
dtype = "fp8"
)",
                                  "p.toml");
  ASSERT_EQ(p.requirements.size(), 2u);
  EXPECT_EQ(p.requirements[0].dtype, "fp8");
  EXPECT_EQ(p.requirements[0].op, "gemm");
  EXPECT_EQ(p.requirements[1].dtype, "fp8");
  EXPECT_THAT(error_of("[[require]]\nkind = \"bench\"\nop = \"exp\"\ndtype = \"fp8\"\n"
                       "shape = { n = 4 }\nmin = 1\nunit = \"GB/s\"\n"),
              HasSubstr("p.toml:4: require[1].dtype: fp8 is a GEMM dtype; exp does not run in it"));
  EXPECT_THAT(error_of("[[require]]\nkind = \"stress\"\ndtype = \"fp4\"\n"),
              HasSubstr("require[1].dtype: expected one of f32, tf32, f16, bf16, f64, fp8"));
  const q::Sku* h200 = q::find_sku(q::builtin_skus(), std::nullopt, "NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  const q::Reference* d = q::find_reference(*h200, "datasheet", "gemm", "fp8",
                                            {{"m", 8192}, {"n", 8192}, {"k", 8192}}, "excluded");
  ASSERT_NE(d, nullptr);
  EXPECT_DOUBLE_EQ(d->value, 1979.0);
}

TEST(QualifySkus, MeasuredEntriesNeedCardDateAndCommand) {
  try {
    q::parse_skus(
        "[[sku]]\nmodel = \"X\"\n[[sku.reference]]\nsource = \"measured\"\nop = \"exp\"\n"
        "value = 1\nunit = \"GB/s\"\n",
        "s.toml");
    FAIL() << "no error";
  } catch (const gpucheck::UsageError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("s.toml:3: sku[1].reference[1]: a measured reference names its card"));
  }
}

}  // namespace
