// ICD isolation: one probe child per ICD, each seeing only its own .icd file.
//
// Why the .icd library checks (dlopen) need no child of their own: they run inside the opencl
// probe child already, so a library that crashes or hangs when loaded costs that child's
// section, never gpucheck; the parent then comes here, where each ICD is loaded alone, and the
// one whose lone child fails is named.
#include "backends/opencl/icd_isolation.h"

#include "backends/opencl/icd_inventory.h"
#include "backends/opencl/temp_dir.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace gpucheck::opencl {

namespace {

namespace fs = std::filesystem;
namespace k = keys;
using Json = nlohmann::json;

// A LibraryChecker that loads nothing: here only the names matter, and the parent must not
// load what may have just crashed a child.
LibraryCheck no_load(const std::string& name) {
  LibraryCheck c;
  c.resolved_path = name;
  c.error = "not loaded by the parent";
  return c;
}

}  // namespace

std::vector<LoneIcd> lone_icds(const EnvMap& env, const std::string& scratch) {
  const SystemFacts facts{"", env};
  const LoaderKind kind = loader_kind_from_files(facts);
  const IcdInventory inv = icd_inventory(facts, kind, no_load);
  const std::string empty_dir = scratch + "/empty";
  std::error_code ec;
  fs::create_directories(empty_dir, ec);
  std::vector<LoneIcd> out;
  for (std::size_t i = 0; i < inv.files.size(); ++i) {
    const Json& f = inv.files[i];
    LoneIcd lone;
    lone.library = f.value(std::string(k::kLibrary), "");
    const std::string source = f.value(std::string(k::kSource), "");
    if (f.contains(k::kPath)) {
      // An .icd file: a copy of it alone in its own directory, which both loaders read.
      lone.name = f[k::kPath].get<std::string>();
      const std::string dir = fmt::format("{}/{}", scratch, i);
      fs::create_directories(dir, ec);
      fs::copy_file(lone.name, dir + "/" + fs::path(lone.name).filename().string(), ec);
      if (ec) continue;  // unreadable: the loader skips it too, and the inventory says so
      lone.env = {{"OCL_ICD_VENDORS", dir}, {"OCL_ICD_FILENAMES", std::nullopt}};
    } else if (source == "OCL_ICD_FILENAMES") {
      // The Khronos loader: the library named alone, and an empty vendors directory.
      lone.name = lone.library;
      lone.env = {{"OCL_ICD_FILENAMES", lone.library}, {"OCL_ICD_VENDORS", empty_dir}};
    } else {
      // ocl-icd with OCL_ICD_VENDORS naming a library: that library alone already.
      lone.name = lone.library;
      lone.env = {{"OCL_ICD_VENDORS", lone.library}, {"OCL_ICD_FILENAMES", std::nullopt}};
    }
    out.push_back(std::move(lone));
  }
  return out;
}

Json diagnose_failed_probe(const EnvMap& env, const ChildLimits& limits) {
  TempDir scratch;
  if (scratch.path().empty())
    return Json{{k::kError, "no temporary directory for the .icd copies (mkdtemp failed)"}};
  const auto lone = lone_icds(env, scratch.path());
  std::vector<ChildSpec> specs;
  for (const auto& l : lone) specs.push_back({{"__child", "probe", "--backend", "opencl"}, l.env});
  const auto results = run_children(specs, limits);

  Json out{{k::kCulprits, Json::array()}, {k::kFine, Json::array()}, {k::kIcds, Json::array()}};
  for (std::size_t i = 0; i < lone.size(); ++i) {
    const ChildResult& r = results[i];
    Json entry{{k::kIcd, sanitize(lone[i].name)}, {k::kLibrary, sanitize(lone[i].library)}};
    bool ok = false;
    std::string what;
    if (!r.exited_ok()) {
      what = r.describe(limits.timeout, limits.max_output);
    } else {
      Json section = parse_json_or_discarded(r.out);
      if (!section.is_object()) {
        what = "its probe child wrote invalid JSON";
      } else if (section.value(std::string(k::kStatus), "") == "failed") {
        what = "enumeration failed: " + section.value(std::string(k::kReason), "");
      } else {
        ok = true;
        const auto platforms = section.value(std::string(k::kPlatforms), Json::array()).size();
        const auto devices = section.value(std::string(k::kDevices), Json::array()).size();
        entry[k::kPlatforms] = platforms;
        what = fmt::format("{} platform{}, {} device{}", platforms, platforms == 1 ? "" : "s",
                           devices, devices == 1 ? "" : "s");
      }
    }
    entry[k::kOutcome] = ok ? "ok" : "failed";
    entry[k::kWhat] = sanitize(what);
    out[ok ? k::kFine : k::kCulprits].push_back(entry[k::kIcd]);
    out[k::kIcds].push_back(std::move(entry));
  }
  return out;
}

std::string describe_culprits(const Json& isolation) {
  std::string culprits, fine;
  for (const auto& e : isolation.value(std::string(k::kIcds), Json::array())) {
    const std::string name = e.value(std::string(k::kIcd), "");
    if (e.value(std::string(k::kOutcome), "") == "ok") {
      fine += (fine.empty() ? "" : ", ") + name;
    } else {
      culprits += fmt::format("{}{} ({})", culprits.empty() ? "" : ", ", name,
                              e.value(std::string(k::kWhat), ""));
    }
  }
  if (culprits.empty()) return {};
  return fmt::format("ICD culprit{}: {}{}", isolation[k::kCulprits].size() == 1 ? "" : "s",
                     culprits, fine.empty() ? "" : "; fine alone: " + fine);
}

}  // namespace gpucheck::opencl
