// No secret from the environment or the command line reaches a document, in any output
// format: credentials are recorded as set only, variables outside the allowlist not at all, and
// a URL's user:pass@ is stripped from argv.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

const std::map<std::string, std::optional<std::string>> kPlanted = {
    {"NV_API_TOKEN", "s3cretNvToken"},
    {"CUDA_PASSWORD", "s3cretCudaPassword"},
    {"NCCL_SOCKET_AUTH_KEY", "s3cretNcclKey"},
    {"MY_SITE_THING", "s3cretNotAllowlisted"},
    {"CUDA_CACHE_PATH", "https://alice:s3cretUrlPassword@cache.example/x"},
    {"CUDA_VISIBLE_DEVICES", "0"}};

TEST(Secrets, NoPlantedSecretInAnyOutputFormat) {
  const std::vector<std::string> bench = {"bench",   "--device", "cpu",   "--ops",    "exp",
                                          "--dtype", "f32",      "--exp", "4096",     "--reps",
                                          "2",       "--warmup", "0",     "--rounds", "1"};
  for (const std::string format : {"json", "table", "csv", "markdown", "html", "prometheus"}) {
    auto args = bench;
    args.insert(args.end(), {"--format", format});
    auto r = run_gpucheck(args, kPlanted);
    ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
    EXPECT_THAT(r.out + r.err, Not(HasSubstr("s3cret"))) << format;
  }
  auto args = bench;
  args.push_back("--json");
  auto r = run_gpucheck(args, kPlanted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json env = Json::parse(r.out)["provenance"]["environment"];
  EXPECT_EQ(env.value("NV_API_TOKEN", "absent"), "absent");  // NV_ is no allowlisted family
  EXPECT_EQ(env.value("CUDA_PASSWORD", ""), "(set, not recorded)");
  EXPECT_EQ(env.value("NCCL_SOCKET_AUTH_KEY", ""), "(set, not recorded)");
  EXPECT_EQ(env.value("MY_SITE_THING", "absent"), "absent");
  EXPECT_EQ(env.value("CUDA_CACHE_PATH", ""), "https://cache.example/x");
  EXPECT_EQ(env.value("CUDA_VISIBLE_DEVICES", ""), "0");
}

// Secrets found by their shape, where no credential's name gives them away: an AWS secret key
// (base64 with '/' and '+') in an allowlisted variable of an unusual name, a signed URL's sig=,
// and a GitHub token in an argument (-o out/ghp_....json) all reached provenance verbatim.
TEST(Secrets, ShapedSecretsInVariablesUrlsAndArgvAreRedacted) {
  const std::string aws = "wJ2lrXUtnFEMI/K7MDENG/bPxRfiCYzx8Q1pLw+3";
  const std::string sig = "Zx3kQp9LrT5vW2yA8bC";
  const std::string ghp = "ghp_" + std::string("R8aZq3Lm0Xc7Vb2Nw5Ty1Ui4Op6As9Df0Gh");
  const std::string out = ::testing::TempDir() + "/" + ghp + ".json";
  auto r =
      run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f32", "--exp", "4096",
                    "--reps", "2", "--warmup", "0", "--rounds", "1", "--json", "-o", out},
                   {{"CUDA_CACHE_EXTRA", aws},
                    {"NCCL_TOPO_FILE",
                     "https://acct.blob.core.windows.net/c/topo.xml?sv=2021-08-06&sig=" + sig}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  const Json doc = Json::parse(in);
  const std::string provenance = doc.at("provenance").dump();
  for (const std::string& secret : {aws, sig, ghp}) {
    EXPECT_THAT(provenance, Not(HasSubstr(secret)));
  }
  EXPECT_THAT(provenance, Not(HasSubstr("MDENG")));  // no piece of the AWS key either
  EXPECT_EQ(doc["provenance"]["environment"].value("CUDA_CACHE_EXTRA", ""), "(redacted)");
  EXPECT_THAT(doc["provenance"]["environment"].value("NCCL_TOPO_FILE", ""),
              HasSubstr("sv=2021-08-06&sig=(redacted)"));
  std::remove(out.c_str());
}

TEST(Secrets, DoctorEvidenceQuotesNoCredential) {
  // doctor's environment checks quote variables as evidence: they see credentials redacted.
  auto r = run_gpucheck({"doctor", "--only", "env_cuda_behaviour,env_visible_devices", "--json"},
                        kPlanted);
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.out + r.err, Not(HasSubstr("s3cret")));
}

TEST(MissingDriver, ANamedCudaDeviceWithoutADriverIsOneLineAndExit3) {
  // Without an NVIDIA driver: the reason in one line with a pointer to doctor, not a document
  // of host facts.
  auto r = run_gpucheck({"bench", "--device", "cuda0", "--json"});
#if GPUCHECK_HAVE_CUDA
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device answered here";
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 300);
  EXPECT_THAT(r.err, HasSubstr("gpucheck doctor says why"));
#else
  // Built without CUDA (tools/sanitize.sh): no driver to miss; cuda0 is a device this gpucheck
  // cannot have, a usage error (exit 2) that says so, in one line as well.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 300);
  EXPECT_THAT(r.err, HasSubstr("the cuda backend is not built into this gpucheck"));
#endif
  std::size_t lines = 0;
  for (char c : r.err) lines += c == '\n';
  EXPECT_LE(lines, 2u) << r.err;
}

}  // namespace
