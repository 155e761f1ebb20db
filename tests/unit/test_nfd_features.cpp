// doctor's node-feature-discovery feature file: the expiry directive first and in the future,
// labels NFD and Kubernetes accept, and the verdict and statuses mapped to pass, warn, fail, skip.
#include "doctor/registry.h"
#include "report/nfd_features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <iomanip>
#include <map>
#include <regex>
#include <sstream>
#include <string>

namespace gpucheck::report {
namespace {

using Json = nlohmann::json;
using std::chrono::system_clock;
using ::testing::StartsWith;

struct NfdFile {
  std::string expiry;                         // the directive's value
  std::map<std::string, std::string> labels;  // name after the prefix -> value
};

// Read as nfd-worker reads a features.d file (source/local/local.go): "# +" lines are
// directives, other "#" lines comments, the rest KEY=VALUE.
NfdFile parse(const std::string& text) {
  NfdFile f;
  std::istringstream in(text);
  bool first = true;
  for (std::string line; std::getline(in, line); first = false) {
    if (line.rfind("# +", 0) == 0) {
      EXPECT_TRUE(first) << "the expiry must come before every label: " << line;
      EXPECT_EQ(line.rfind("# +expiry-time=", 0), 0u) << line;
      f.expiry = line.substr(15);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    EXPECT_NE(eq, std::string::npos) << line;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    EXPECT_THAT(key, StartsWith(std::string(kNfdLabelPrefix)));
    const std::string name = key.substr(kNfdLabelPrefix.size());
    EXPECT_TRUE(valid_nfd_label_name(name)) << name;
    EXPECT_TRUE(valid_nfd_label_name(value)) << value;
    EXPECT_TRUE(f.labels.emplace(name, value).second) << name << " twice";
  }
  return f;
}

system_clock::time_point parse_rfc3339_utc(const std::string& s) {
  static const std::regex kShape(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
  EXPECT_TRUE(std::regex_match(s, kShape)) << s;
  std::tm tm{};
  std::istringstream(s) >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return system_clock::from_time_t(timegm(&tm));
}

Json doctor_doc(const std::string& verdict, const Json& checks, const Json& unanswered = {}) {
  Json health{{"verdict", verdict}};
  if (!unanswered.is_null()) health["unanswered"] = unanswered;
  return {{"command", "doctor"}, {"checks", checks}, {"health", health}};
}

Json check(const std::string& id, const std::string& status) {
  return {{"id", id}, {"status", status}};
}

TEST(NfdFeatures, ExpiryFirstAndInTheFuture) {
  const auto now = system_clock::now();
  const auto expiry = now + std::chrono::minutes(15);
  const std::string text =
      render_nfd_features(doctor_doc("healthy", {check("nvidia_ecc", "pass")}), expiry);
  EXPECT_THAT(text, StartsWith("# +expiry-time="));
  const NfdFile f = parse(text);
  const auto parsed = parse_rfc3339_utc(f.expiry);
  EXPECT_GT(parsed, now);
  EXPECT_LE(std::chrono::abs(parsed - expiry), std::chrono::seconds(1));
}

TEST(NfdFeatures, VerdictAndStatusesMapToPassWarnFailSkip) {
  const auto expiry = system_clock::now() + std::chrono::minutes(15);
  const Json checks{check("nvidia_ecc", "pass"), check("nvidia_xid", "skip"),
                    check("cuda_devices", "info"), check("nvidia_persistence_mode", "warn")};
  NfdFile f = parse(render_nfd_features(doctor_doc("healthy", checks), expiry));
  EXPECT_EQ(f.labels["gpucheck.health"], "warn");  // healthy, but a WARN is not a clean pass
  EXPECT_EQ(f.labels["gpucheck.check.nvidia_ecc"], "pass");
  EXPECT_EQ(f.labels["gpucheck.check.nvidia_xid"], "skip");
  EXPECT_EQ(f.labels["gpucheck.check.cuda_devices"], "pass");  // INFO is no problem
  EXPECT_EQ(f.labels["gpucheck.check.nvidia_persistence_mode"], "warn");
  EXPECT_EQ(f.labels.size(), 5u);

  f = parse(render_nfd_features(doctor_doc("healthy", {check("nvidia_ecc", "pass")}), expiry));
  EXPECT_EQ(f.labels["gpucheck.health"], "pass");

  f = parse(render_nfd_features(
      doctor_doc("unhealthy", {check("nouveau_module", "fail"), check("nvidia_ecc", "pass")}),
      expiry));
  EXPECT_EQ(f.labels["gpucheck.health"], "fail");
  EXPECT_EQ(f.labels["gpucheck.check.nouveau_module"], "fail");

  // Not decided (a check gave no answer) is never a pass; the unanswered check is skip.
  f = parse(render_nfd_features(
      doctor_doc("unknown", {check("nvidia_ecc", "pass")}, Json::array({"nvidia_xid"})), expiry));
  EXPECT_EQ(f.labels["gpucheck.health"], "warn");
  EXPECT_EQ(f.labels["gpucheck.check.nvidia_xid"], "skip");
}

TEST(NfdFeatures, InjectedDocumentSaysSoInALabel) {
  const auto expiry = system_clock::now() + std::chrono::minutes(15);
  Json doc = doctor_doc("unhealthy", {check("nvidia_xid", "fail")});
  EXPECT_EQ(parse(render_nfd_features(doc, expiry)).labels.count("gpucheck.injected"), 0u);
  doc["injected"] = Json::array({"xid:79"});
  NfdFile f = parse(render_nfd_features(doc, expiry));
  EXPECT_EQ(f.labels["gpucheck.injected"], "true");
  EXPECT_EQ(f.labels["gpucheck.health"], "fail");
}

TEST(NfdFeatures, EveryCheckGivesAValidLabelName) {
  const auto expiry = system_clock::now() + std::chrono::minutes(15);
  Json checks = Json::array();
  for (const auto& c : doctor::all_checks()) checks.push_back(check(std::string(c.id), "pass"));
  const NfdFile f = parse(render_nfd_features(doctor_doc("healthy", checks), expiry));
  EXPECT_EQ(f.labels.size(), doctor::all_checks().size() + 1);  // none left out
}

TEST(NfdFeatures, LabelNamesFollowKubernetesRules) {
  EXPECT_TRUE(valid_nfd_label_name("gpucheck.check.nvidia_ecc"));
  EXPECT_TRUE(valid_nfd_label_name(std::string(63, 'a')));
  EXPECT_FALSE(valid_nfd_label_name(std::string(64, 'a')));
  EXPECT_FALSE(valid_nfd_label_name(""));
  EXPECT_FALSE(valid_nfd_label_name("gpucheck.check.a/b"));
  EXPECT_FALSE(valid_nfd_label_name("gpucheck.check.é"));
  EXPECT_FALSE(valid_nfd_label_name("_leading"));
  EXPECT_FALSE(valid_nfd_label_name("trailing."));
  // A hostile id in a document is left out, never written as a line NFD would reject.
  const auto expiry = system_clock::now() + std::chrono::minutes(15);
  const NfdFile f =
      parse(render_nfd_features(doctor_doc("healthy", {check("a=b\nfake.label", "pass"),
                                                       check(std::string(60, 'x'), "pass")}),
                                expiry));
  EXPECT_EQ(f.labels.size(), 1u);
}

}  // namespace
}  // namespace gpucheck::report
