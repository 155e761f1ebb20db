// The probe's device and platform fields against clinfo's on pocl: every name of
// tests/fixtures/clinfo_fields.txt that clinfo prints must have the same value (numbers
// numerically, strings exactly, bitfields and versions by raw value, enums and lists by name).
#if GPUCHECK_HAVE_OPENCL

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/opencl/device_fields.h"
#include "backends/opencl/opencl_probe.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::opencl {
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// clinfo 3.0.23's JSON repeats keys inside name-version lists ("OpenCL C" four times) and writes
// one key as " raw ". This parser keeps every repeat, in order, as "key#2", "key#3", ... and
// trims keys.
class LenientSax : public nlohmann::json_sax<OJson> {
 public:
  explicit LenientSax(OJson* root) : root_(root) {}
  bool null() override { return put(OJson(nullptr)) != nullptr; }
  bool boolean(bool v) override { return put(OJson(v)) != nullptr; }
  bool number_integer(number_integer_t v) override { return put(OJson(v)) != nullptr; }
  bool number_unsigned(number_unsigned_t v) override { return put(OJson(v)) != nullptr; }
  bool number_float(number_float_t v, const string_t&) override { return put(OJson(v)) != nullptr; }
  bool string(string_t& v) override { return put(OJson(v)) != nullptr; }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return open(OJson::object()); }
  bool start_array(std::size_t) override { return open(OJson::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    const std::string name = trim(k);
    key_ = name;
    for (int n = 2; stack_.back()->contains(key_); ++n) key_ = name + "#" + std::to_string(n);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  OJson* put(OJson v) {
    if (stack_.empty()) {
      *root_ = std::move(v);
      return root_;
    }
    OJson* parent = stack_.back();
    if (parent->is_array()) {
      parent->push_back(std::move(v));
      return &parent->back();
    }
    (*parent)[key_] = std::move(v);
    return &(*parent)[key_];
  }
  bool open(OJson v) {
    OJson* p = put(std::move(v));
    stack_.push_back(p);
    return p != nullptr;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
  OJson* root_;
  std::vector<OJson*> stack_;
  std::string key_;
};

std::optional<std::string> run_clinfo_json() {
  FILE* p = ::popen("clinfo --json 2>/dev/null", "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  if (status != 0) return std::nullopt;
  return out;
}

std::string name_of_key(const std::string& key) {
  return key.substr(0, key.find('#'));
}

// Why the two values differ, or nullopt when they agree.
std::optional<std::string> differs(const DeviceField& f, const Json& mine, const OJson& theirs) {
  auto show = [&] { return "probe " + mine.dump() + " vs clinfo " + theirs.dump(); };
  if (mine.is_object() && mine.contains("error")) return "probe error: " + show();
  switch (f.type) {
    case FieldType::kString:
    case FieldType::kEnum:
    case FieldType::kUuid:
    case FieldType::kLuid:
    case FieldType::kPciBusInfo:
    case FieldType::kTopologyAmd:
      if (!theirs.is_string() || mine != theirs.get<std::string>()) return show();
      return std::nullopt;
    case FieldType::kUint:
    case FieldType::kUlong:
    case FieldType::kSizeT:
      if (!theirs.is_number_integer() || mine.get<std::uint64_t>() != theirs.get<std::uint64_t>())
        return show();
      return std::nullopt;
    case FieldType::kBool:
      if (!theirs.is_boolean() || mine.get<bool>() != theirs.get<bool>()) return show();
      return std::nullopt;
    case FieldType::kSizeTArray: {
      if (!theirs.is_array() || theirs.size() != mine.size()) return show();
      for (std::size_t i = 0; i < mine.size(); ++i)
        if (mine[i].get<std::uint64_t>() != theirs[i].get<std::uint64_t>()) return show();
      return std::nullopt;
    }
    case FieldType::kBitfield:
    case FieldType::kVersion:
      if (!theirs.is_object() || !theirs.contains("raw") ||
          mine["raw"].get<std::uint64_t>() != theirs["raw"].get<std::uint64_t>())
        return show();
      return std::nullopt;
    case FieldType::kPartitionProperties: {
      if (!theirs.is_array() || theirs.size() != mine.size()) return show();
      for (std::size_t i = 0; i < mine.size(); ++i)
        if (mine[i] != theirs[i].get<std::string>()) return show();
      return std::nullopt;
    }
    case FieldType::kNameVersionArray: {
      if (!theirs.is_object() || theirs.size() != mine.size()) return show();
      std::size_t i = 0;
      for (const auto& [key, value] : theirs.items()) {
        if (name_of_key(key) != mine[i]["name"] || !value.contains("raw") ||
            value["raw"].get<std::uint64_t>() != mine[i]["raw"].get<std::uint64_t>())
          return show();
        ++i;
      }
      return std::nullopt;
    }
  }
  return "unknown type";
}

std::vector<std::string> fixture_names() {
  std::ifstream in(GPUCHECK_FIXTURES_DIR "/clinfo_fields.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') names.push_back(line);
  return names;
}

TEST(OpenClClinfo, LenientParserKeepsRepeatedKeys) {
  OJson root;
  LenientSax sax(&root);
  ASSERT_TRUE(
      OJson::sax_parse(R"({"v": {" raw ": 1}, "l": {"a": {"raw": 1}, "a": {"raw": 2}}})", &sax));
  EXPECT_EQ(root["v"]["raw"], 1);
  ASSERT_EQ(root["l"].size(), 2u);
  EXPECT_EQ(root["l"]["a#2"]["raw"], 2);
}

TEST(OpenClClinfo, ComparisonCatchesDifferences) {
  const auto& fp = *find_device_field("CL_DEVICE_SINGLE_FP_CONFIG");
  const Json mine_fp = {{"raw", 191}, {"flags", Json::array()}};
  EXPECT_FALSE(differs(fp, mine_fp, OJson::parse(R"({"raw": 191, "config": []})")));
  EXPECT_TRUE(differs(fp, mine_fp, OJson::parse(R"({"raw": 63, "config": []})")));
  const auto& name = *find_device_field("CL_DEVICE_NAME");
  EXPECT_TRUE(differs(name, "pocl", OJson("pocl ")));
  EXPECT_TRUE(differs(name, Json{{"error", "CL_INVALID_VALUE (-30)"}}, OJson("pocl")));
  const auto& units = *find_device_field("CL_DEVICE_MAX_COMPUTE_UNITS");
  EXPECT_FALSE(differs(units, 2, OJson(2)));
  EXPECT_TRUE(differs(units, 2, OJson(3)));
  const auto& versions = *find_device_field("CL_DEVICE_OPENCL_C_ALL_VERSIONS");
  const Json mine_nv =
      Json::parse(R"([{"name": "OpenCL C", "raw": 1}, {"name": "OpenCL C", "raw": 2}])");
  EXPECT_FALSE(differs(versions, mine_nv,
                       OJson::parse(R"({"OpenCL C": {"raw": 1}, "OpenCL C#2": {"raw": 2}})")));
  EXPECT_TRUE(differs(versions, mine_nv, OJson::parse(R"({"OpenCL C": {"raw": 1}})")));
}

TEST(OpenClClinfo, ProbeFieldsEqualClinfoOnPocl) {
  if (std::system("command -v clinfo >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "clinfo is not installed (Debian: apt install clinfo)";
  const Json probe = probe_opencl(ProbeOptions{});
  if (probe["status"] != "available") GTEST_SKIP() << "no OpenCL loader: " << probe["reason"];
  bool has_pocl = false;
  for (const auto& p : probe["platforms"]) has_pocl |= p["family"] == "pocl";
  if (!has_pocl) GTEST_SKIP() << "pocl is not installed (Debian: apt install pocl-opencl-icd)";

  const auto text = run_clinfo_json();
  if (!text || !text->starts_with("{"))
    GTEST_SKIP() << "this clinfo has no --json output (clinfo 3.0.21 and older)";
  OJson clinfo;
  LenientSax sax(&clinfo);
  ASSERT_TRUE(OJson::sax_parse(*text, &sax)) << "clinfo --json did not parse";

  const auto& cl_platforms = clinfo["platforms"];
  ASSERT_EQ(cl_platforms.size(), probe["platforms"].size());
  std::vector<std::string> mismatches;
  int compared = 0;

  struct PlatformKey {
    const char* clinfo;
    const char* probe;
  };
  for (std::size_t p = 0; p < cl_platforms.size(); ++p) {
    const Json& mine = probe["platforms"][p];
    for (const auto& k :
         {PlatformKey{"CL_PLATFORM_NAME", "name"}, PlatformKey{"CL_PLATFORM_VENDOR", "vendor"},
          PlatformKey{"CL_PLATFORM_VERSION", "version"},
          PlatformKey{"CL_PLATFORM_PROFILE", "profile"},
          PlatformKey{"CL_PLATFORM_EXTENSIONS", "extensions"},
          PlatformKey{"CL_PLATFORM_ICD_SUFFIX_KHR", "icd_suffix"},
          PlatformKey{"CL_PLATFORM_HOST_TIMER_RESOLUTION", "host_timer_resolution_ns"}}) {
      if (!cl_platforms[p].contains(k.clinfo)) continue;
      ++compared;
      const OJson& theirs = cl_platforms[p][k.clinfo];
      if (!mine.contains(k.probe) || Json::parse(theirs.dump()) != mine[k.probe])
        mismatches.push_back(fmt::format("platform {} {}: probe {} vs clinfo {}", p, k.clinfo,
                                         mine.value(k.probe, Json()).dump(), theirs.dump()));
    }
  }

  const auto names = fixture_names();
  for (std::size_t p = 0; p < cl_platforms.size(); ++p) {
    const OJson& online = clinfo["devices"][p]["online"];
    const Json& ids = probe["platforms"][p]["devices"];
    ASSERT_EQ(online.size(), ids.size()) << "platform " << p;
    for (std::size_t d = 0; d < online.size(); ++d) {
      const Json* dev = nullptr;
      for (const auto& candidate : probe["devices"])
        if (candidate["device"] == ids[d]) dev = &candidate;
      ASSERT_NE(dev, nullptr);
      const Json& props = (*dev)["properties"];
      for (const auto& name : names) {
        if (!online[d].contains(name)) continue;  // clinfo does not print it for this device
        const DeviceField* f = find_device_field(name);
        ASSERT_NE(f, nullptr) << name;
        ++compared;
        const std::string key = json_key(name);
        if (!props.contains(key)) {
          mismatches.push_back(fmt::format("{} {}: clinfo prints {}, the probe has nothing",
                                           ids[d].get<std::string>(), name,
                                           online[d][name].dump()));
          continue;
        }
        if (auto why = differs(*f, props[key], online[d][name]))
          mismatches.push_back(fmt::format("{} {}: {}", ids[d].get<std::string>(), name, *why));
      }
    }
  }
  std::printf("compared %d fields with clinfo\n", compared);
  EXPECT_GE(compared, 60);
  for (const auto& m : mismatches) ADD_FAILURE() << m;
}

}  // namespace
}  // namespace gpucheck::opencl

#endif  // GPUCHECK_HAVE_OPENCL
