// `gpucheck qualify` end to end on the CPU: cpu-only.toml passes with JUnit valid against the
// XSD, an unmet threshold exits 1 with the matching <failure>, a malformed profile exits 2
// naming line and key, a missing device is unmet (1, never 3), --strict, a SKU table's
// reference, and a planted verification failure unmet, loudly.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace {

using gpucheck::testing::have_program;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const std::string kSource = GPUCHECK_SOURCE_DIR;
const std::string kXsd = std::string(GPUCHECK_FIXTURES_DIR) + "/junit/junit.xsd";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_valid_junit(const std::string& path) {
  if (!have_program("xmllint")) {
    ADD_FAILURE() << "xmllint (libxml2-utils) is needed to validate JUnit";
    return;
  }
  auto r = run_program("xmllint", {"--noout", "--schema", kXsd, path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A small profile: the CPU's exp with the given criterion lines.
std::string exp_profile(const std::string& criterion) {
  return "name = \"t\"\n[bench]\nwarmup = 0\nreps = 2\n\n[[require]]\nid = \"cpu_exp\"\n"
         "kind = \"bench\"\ndevice = \"cpu\"\nop = \"exp\"\nshape = { n = 4096 }\n" +
         criterion;
}

TEST(QualifyCli, CpuOnlyProfilePassesWithValidJunit) {
  std::string junit = write_temp_file("cpu-only.xml", "");
  auto r = run_gpucheck({"qualify", "--profile", kSource + "/configs/qualify/cpu-only.toml",
                         "--junit", junit, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["command"], "qualify");
  EXPECT_EQ(doc["qualify"]["verdict"], "met");
  EXPECT_EQ(doc["qualify"]["summary"]["unmet"], 0);
  // The sections it ran are in the document: probe facts, doctor checks, bench records.
  for (const char* key : {"host", "cpu", "memory", "backends", "checks", "results"})
    EXPECT_TRUE(doc.contains(key)) << key;
  std::string xml = read_file(junit);
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"gemm_f32 [cpu]\""));
  expect_valid_junit(junit);
}

TEST(QualifyCli, QualifyDocumentsMatchTheSchema) {
  // A met profile with probe, checks and results, and an unmet one.
  for (const std::string& profile :
       {kSource + "/configs/qualify/cpu-only.toml",
        write_temp_file("p.toml", exp_profile("min = 1e9\nunit = \"GB/s\"\n"))}) {
    auto r = run_program("python3", {kSource + "/tests/cli/validate_schema.py",
                                     kSource + "/schema/gpucheck.schema.json", "--",
                                     GPUCHECK_BINARY, "qualify", "--profile", profile, "--json"});
    if (r.exit_code == 77) GTEST_SKIP() << "python3-jsonschema is not installed";
    EXPECT_EQ(r.exit_code, 0) << profile << ": " << r.err;
  }
}

// Each verdict shows the floor it was judged against; a backend that is not there fails each of
// its requirements, and its loader's error is written once on stdout and once on stderr.
TEST(QualifyCli, FloorsAreShownAndAMissingBackendsErrorIsSaidOnce) {
  const std::string profile = write_temp_file(
      "floors.toml", exp_profile("min = 0.001\nunit = \"GB/s\"\n") +
                         "\n[[require]]\nid = \"cuda_backend\"\nkind = \"backend\"\n"
                         "name = \"cuda\"\navailable = true\ndevices_min = 1\n"
                         "\n[[require]]\nid = \"cuda_exp\"\nkind = \"bench\"\ndevice = \"each\"\n"
                         "backend = \"cuda\"\nop = \"exp\"\nshape = { n = 4096 }\nmin = 1\n"
                         "unit = \"GB/s\"\n"
                         "\n[[require]]\nid = \"cuda_gemm\"\nkind = \"bench\"\ndevice = \"each\"\n"
                         "backend = \"cuda\"\nop = \"gemm\"\nshape = { m = 64, n = 64, k = 64 }\n"
                         "min = 1\nunit = \"GFLOP/s\"\n");
  auto r = run_gpucheck({"qualify", "--profile", profile}, {{"COLUMNS", "100"}});
  if (r.exit_code == 0) GTEST_SKIP() << "the cuda backend is available here";
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("MET +cpu_exp +cpu +[0-9.]+ [MGT]B/s +≥ 0.001 GB/s"))
      << r.out;
  EXPECT_THAT(r.out, HasSubstr("the same reason as cuda_exp")) << r.out;
  // The backend's reason (a dlerror where the driver is missing) once in each stream.
  const Json doc = Json::parse(run_gpucheck({"qualify", "--profile", profile, "--json"}).out);
  std::string backend_reason;
  for (const auto& b : doc["backends"])
    if (b["name"] == "cuda") backend_reason = b.value("reason", "");
  ASSERT_FALSE(backend_reason.empty()) << doc["backends"].dump();
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(r.err, backend_reason), 1u) << r.err;
  // In markdown, where no line is wrapped and a reason can be counted whole.
  const auto md = run_gpucheck({"qualify", "--profile", profile, "--format", "markdown"});
  EXPECT_EQ(count(md.out, backend_reason), 1u) << md.out;
  EXPECT_THAT(md.out, HasSubstr("(as above)")) << md.out;
  EXPECT_THAT(r.err, HasSubstr("unmet: cuda_exp, cuda_gemm: ")) << r.err;
}

TEST(QualifyCli, UnmetThresholdExits1WithJunitFailure) {
  std::string profile = write_temp_file("fast.toml", exp_profile("min = 1e9\nunit = \"GB/s\"\n"));
  std::string junit = write_temp_file("fast.xml", "");
  auto r = run_gpucheck({"qualify", "--profile", profile, "--junit", junit});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unmet: cpu_exp [cpu]"));
  EXPECT_THAT(r.out, HasSubstr("UNMET"));
  std::string xml = read_file(junit);
  EXPECT_THAT(xml, HasSubstr("failures=\"1\""));
  auto at = xml.find("<testcase name=\"cpu_exp [cpu]\"");
  ASSERT_NE(at, std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure message=\"measured ", at), xml.find("<failure", at)) << xml;
  EXPECT_NE(xml.find("<failure", at), std::string::npos);
  expect_valid_junit(junit);
  // The CSV view is the verdicts table, numbers and their unit in columns of their own.
  auto csv = run_gpucheck({"qualify", "--profile", profile, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1);
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\r')),
            "id,kind,device,device_name,requirement,verdict,measured,threshold,unit,reason,line");
  EXPECT_THAT(csv.out, HasSubstr("\r\ncpu_exp,bench,cpu,"));
}

TEST(QualifyCli, MalformedProfileExits2NamingLineAndKey) {
  std::string profile =
      write_temp_file("bad.toml", exp_profile("min = 1\nunit = \"GB/s\"\nspeed = 3\n"));
  auto r = run_gpucheck({"qualify", "--profile", profile});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(profile + ":14: require[1].speed: unknown key"));
  EXPECT_EQ(r.out, "");  // nothing ran
  std::string wrong =
      write_temp_file("wrong.toml", exp_profile("min = \"fast\"\nunit = \"GB/s\"\n"));
  r = run_gpucheck({"qualify", "--profile", wrong});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(
      r.err,
      HasSubstr(wrong +
                ":12: require[1].min: expected a finite number above 0, got the string 'fast'"));
  EXPECT_EQ(run_gpucheck({"qualify", "--profile", "/nonexistent.toml"}).exit_code, 2);
  EXPECT_EQ(run_gpucheck({"qualify"}).exit_code, 2);
  std::string good = write_temp_file("good.toml", exp_profile("min = 1\nunit = \"GB/s\"\n"));
  auto unwritable =
      run_gpucheck({"qualify", "--profile", good, "--junit", "/nonexistent/dir/x.xml"});
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_THAT(unwritable.err, HasSubstr("--junit: cannot write"));
}

TEST(QualifyCli, MissingDeviceIsUnmetNeverExit3) {
  std::string profile = write_temp_file(
      "missing.toml",
      "[[require]]\nid = \"needs_opencl9\"\nkind = \"bench\"\ndevice = \"opencl9\"\nop = \"exp\"\n"
      "shape = { n = 4096 }\nmin = 1\nunit = \"GB/s\"\n"
      "[[require]]\nid = \"needs_cuda9\"\nkind = \"device\"\ndevice = \"cuda9\"\n");
  auto r = run_gpucheck({"qualify", "--profile", profile, "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  Json doc = Json::parse(r.out);
  for (const auto& v : doc["qualify"]["verdicts"]) EXPECT_EQ(v["verdict"], "unmet");
  EXPECT_THAT(doc["qualify"]["verdicts"][0]["reason"].get<std::string>(),
              HasSubstr("device 'opencl9' is not there"));
}

TEST(QualifyCli, StrictCountsSkipsAsUnmet) {
  // The CPU has no entry in the SKU table: the requirement is a skip.
  std::string profile =
      write_temp_file("ref.toml", exp_profile("min_fraction_of_reference = 0.5\n"));
  auto r = run_gpucheck({"qualify", "--profile", profile, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Json v = Json::parse(r.out)["qualify"]["verdicts"][0];
  EXPECT_EQ(v["verdict"], "skip");
  EXPECT_THAT(v["reason"].get<std::string>(), HasSubstr("no reference for"));
  auto strict = run_gpucheck({"qualify", "--profile", profile, "--strict", "--json"});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_EQ(Json::parse(strict.out)["qualify"]["verdicts"][0]["verdict"], "unmet");
}

TEST(QualifyCli, ReferenceFromAskuTableByDeviceName) {
  auto probe = run_gpucheck({"probe", "--json"});
  ASSERT_EQ(probe.exit_code, 0);
  std::string cpu_name;
  const Json facts = Json::parse(probe.out);
  for (const auto& b : facts["backends"])
    if (b["name"] == "cpu") cpu_name = b["devices"][0]["device_name"].get<std::string>();
  Json name = cpu_name;  // a JSON string is a TOML basic string for these names
  std::string skus = write_temp_file(
      "skus.toml",
      "[[sku]]\nmodel = \"this CPU\"\nnames = [" + name.dump() +
          "]\n[[sku.reference]]\nsource = \"measured\"\nop = \"exp\"\ndtype = \"f32\"\n"
          "shape = { n = 4096 }\nvalue = 0.001\nunit = \"GB/s\"\ncard = \"this CPU\"\n"
          "date = \"today\"\ncommand = \"gpucheck bench\"\n");
  std::string profile = write_temp_file("ref.toml", exp_profile("min_fraction_of_reference = 1\n"));
  auto r = run_gpucheck({"qualify", "--profile", profile, "--skus", skus, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Json v = Json::parse(r.out)["qualify"]["verdicts"][0];
  ASSERT_EQ(v["verdict"], "met") << v.dump();
  EXPECT_GT(v["measured"].get<double>(), 1.0);
  EXPECT_THAT(v["reason"].get<std::string>(),
              HasSubstr("measured on this CPU, today: gpucheck bench"));
}

TEST(QualifyCli, PlantedVerificationFailureIsUnmetLoudly) {
  std::string profile =
      write_temp_file("plant.toml", exp_profile("min = 0.001\nunit = \"GB/s\"\n"));
  auto r =
      run_gpucheck({"qualify", "--profile", profile, "--json"}, {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("VERIFICATION FAILED (mismatch)"));
  Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["results"][0]["status"], "mismatch");
  EXPECT_EQ(doc["qualify"]["verdicts"][0]["verdict"], "unmet");
}

TEST(QualifyCli, JunitXsdRejectsWhatTheFormatForbids) {
  if (!have_program("xmllint")) GTEST_SKIP() << "xmllint (libxml2-utils) is not installed";
  for (const auto& [name, xml] : std::vector<std::pair<std::string, std::string>>{
           {"no_name.xml",
            "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase classname=\"c\"/>"
            "</testsuite></testsuites>"},
           {"bad_count.xml", "<testsuites><testsuite name=\"s\" tests=\"many\"/></testsuites>"},
           {"order.xml",
            "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase name=\"t\">"
            "<system-out/><failure/></testcase></testsuite></testsuites>"},
           {"two_skips.xml",
            "<testsuites><testsuite name=\"s\" tests=\"1\"><testcase name=\"t\">"
            "<skipped/><skipped/></testcase></testsuite></testsuites>"}}) {
    auto r = run_program("xmllint", {"--noout", "--schema", kXsd, write_temp_file(name, xml)});
    EXPECT_NE(r.exit_code, 0) << name;
  }
}

}  // namespace
