// What the per-command text views share: values for people, the facts tree, the machine line.
#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "report/same_gpu.h"
#include "report/stack_versions.h"
#include "report/units.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>
#include <cctype>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpucheck::report {

namespace k = keys;

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// {"flags": [...], "raw": n} (a bitfield) or {"name"?, "version", "raw"} (a packed version):
// shown as one value, not as a block.
bool scalar_like(const nlohmann::json& v) {
  if (!v.is_object() || !v.contains(k::kRaw)) return false;
  for (const auto& [key, child] : v.items())
    if (key != k::kRaw && key != k::kFlags && key != k::kVersion && key != k::kName) return false;
  return true;
}

std::string scalar_like_text(const nlohmann::json& v) {
  if (v.contains(k::kFlags)) {
    std::string flags;
    for (const auto& f : v[k::kFlags]) flags += (flags.empty() ? "" : ", ") + scalar_text(f);
    return fmt::format("{} (raw {})", flags.empty() ? "none" : flags, scalar_text(v[k::kRaw]));
  }
  std::string name = text_at(v, k::kName);
  return (name.empty() ? "" : name + " ") + text_at(v, k::kVersion);
}

std::string number_text(std::string_view key, const nlohmann::json& v) {
  const double x = v.get<double>();
  const std::string exact = scalar_text(v);
  // OpenCL names its byte counts *_size; only these are bytes (others count pixels or items).
  static constexpr std::string_view kClBytes[] = {
      "cl_device_global_mem_size", "cl_device_max_mem_alloc_size", "cl_device_local_mem_size",
      "cl_device_global_mem_cache_size", "cl_device_max_constant_buffer_size"};
  const bool bytes = ends_with(key, "_bytes") ||
                     std::find(std::begin(kClBytes), std::end(kClBytes), key) != std::end(kClBytes);
  if (bytes && v.is_number_integer() && x >= 1024)
    return fmt::format("{} ({} bytes)", format_size(v.get<std::uint64_t>()), exact);
  if (ends_with(key, "_mhz")) return exact + " MHz";
  if (ends_with(key, "_khz")) return fmt::format("{} MHz ({} kHz)", significant(x / 1e3), exact);
  if (ends_with(key, "_mw")) return fmt::format("{:.1f} W", x / 1e3);
  if (ends_with(key, "_w")) return fmt::format("{:.1f} W", x);
  if (ends_with(key, "temperature_c") || key == "temp_c")
    return exact +
           " \xC2\xB0"
           "C";
  if (ends_with(key, "_ns")) return exact + " ns";
  if (ends_with(key, "_s") || key == "seconds") return format_seconds(x);
  if (ends_with(key, "_percent")) return exact + " %";
  if (ends_with(key, "_bits")) return exact + " bits";
  return exact;
}

std::string element_title(const nlohmann::json& e, std::size_t i) {
  for (auto key : {k::kDevice, k::kName, k::kId, k::kLibrary, k::kPath, k::kIcd})
    if (auto t = text_at(e, key); !t.empty()) return t;
  if (e.contains(k::kLevel))  // a CPU cache
    return fmt::format("L{} {}", text_at(e, k::kLevel), text_at(e, k::kType));
  return fmt::format("#{}", i + 1);
}

void tree(TextView& view, const nlohmann::json& value, std::size_t indent) {
  std::vector<std::pair<std::string, std::string>> pending;
  auto flush = [&] {
    if (!pending.empty()) view.pairs(pending, indent);
    pending.clear();
  };
  for (const auto& [key, child] : value.items()) {
    const bool objects = child.is_array() && !child.empty() &&
                         std::all_of(child.begin(), child.end(), [](const nlohmann::json& e) {
                           return e.is_object() && !scalar_like(e);
                         });
    if (child.is_object() && !scalar_like(child) && !child.empty()) {
      flush();
      view.text(key, indent, 0, Tone::kBold);
      tree(view, child, indent + 2);
    } else if (objects) {
      flush();
      for (std::size_t i = 0; i < child.size(); ++i) {
        view.text(fmt::format("{}: {}", key, element_title(child[i], i)), indent, 0, Tone::kBold);
        tree(view, child[i], indent + 2);
      }
    } else {
      pending.emplace_back(key, human_value(key, child));
    }
  }
  flush();
}

}  // namespace

std::string upper_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string text_at(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  return scalar_text(*it);
}

std::optional<double> number_at(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string human_value(std::string_view key, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "";
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "yes" : "no";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return number_text(key, v);
    case nlohmann::json::value_t::string:
      return v.get<std::string>();
    case nlohmann::json::value_t::object:
      if (scalar_like(v)) return scalar_like_text(v);
      return v.dump();
    case nlohmann::json::value_t::array: {
      if (v.empty()) return "none";
      std::string out;
      const char* sep =
          std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_array(); })
              ? "; "
              : ", ";
      for (const auto& e : v) {
        std::string item = e.is_array() ? "[" + human_value("", e) + "]" : human_value(key, e);
        out += (out.empty() ? "" : sep) + item;
      }
      return out;
    }
    default:
      return v.dump();
  }
}

void tree_view(TextView& view, const std::string& title, const nlohmann::json& value) {
  view.heading(title);
  if (value.is_object())
    tree(view, value, 2);
  else
    view.text(human_value(title, value), 2);
  view.blank();
}

void system_facts_view(TextView& view, const nlohmann::json& doc) {
  for (auto section : {k::kHost, k::kCpu, k::kMemory, k::kProvenance}) {
    auto it = doc.find(section);
    if (it == doc.end() || !it->is_object()) continue;
    nlohmann::json facts = *it;
    // The raw flag list is for machines; isa holds what people look for.
    if (section == k::kCpu) facts.erase(std::string(k::kFlags));
    tree_view(view, std::string(section), facts);
  }
}

bool is_gpu_record(const nlohmann::json& r) {
  const std::string backend = text_at(r, k::kBackend), name = text_at(r, k::kDeviceName);
  const BackendDescriptor* desc = find_backend_descriptor(backend);
  if (desc && desc->kinds == DeviceKinds::kGpu) return true;
  if (!desc || desc->kinds != DeviceKinds::kEither) return false;
  // A record carries no device properties, so its name tells.
  // The CPU implementations name the CPU ("pthread-skylake-avx512-AMD EPYC 7B13", "llvmpipe
  // (LLVM 15.0.6, 256 bits)"): a maker's name in them is the CPU's maker, not a GPU's.
  for (const char* cpu : {"pthread-", "cpu-", "llvmpipe", "lavapipe", "SwiftShader", "EPYC", "Xeon",
                          "Ryzen", "Threadripper", "Core(TM)", "Opteron"})
    if (name.find(cpu) != std::string::npos) return false;
  for (const char* maker : {"NVIDIA", "AMD", "Radeon", "Graphics", "Arc", "gfx"})
    if (name.find(maker) != std::string::npos) return true;
  return false;
}

std::vector<std::string> machine_items(const nlohmann::json& doc) {
  const nlohmann::json none = nlohmann::json::object();
  const auto& host = doc.contains(k::kHost) ? doc[k::kHost] : none;
  std::vector<std::string> parts;
  if (auto h = text_at(host, k::kHostname); !h.empty()) parts.push_back(h);
  if (auto os = text_at(host, k::kOs); !os.empty()) parts.push_back(os);
  // GPU names: every backend's GPUs, each GPU once, named by its face earliest in probe order
  // (CUDA's where CUDA reaches it: an AMD card only Vulkan reaches is named too); else the bench
  // records' accelerators.
  std::vector<std::string> names;
  std::string driver;
  if (auto b = doc.find(k::kBackends); b != doc.end() && b->is_array()) {
    for (const auto& v : stack_versions(*b))
      if (v.key == k::kNvidiaDriver && !v.version.empty()) driver = v.version;
    const GpuMap gpus = GpuMap::from_backends(*b);
    std::vector<std::string> seen;
    for (const auto& sec : *b)
      for (const auto& d : sec.value(std::string(k::kDevices), nlohmann::json::array())) {
        if (!device_is_gpu(text_at(sec, k::kName), d.value(std::string(k::kProperties), none)))
          continue;
        if (!gpus.seen_before(text_at(d, k::kDevice), seen))
          names.push_back(text_at(d, k::kDeviceName));
      }
  } else if (auto r = doc.find(k::kResults); r != doc.end() && r->is_array()) {
    // Each GPU once: an OpenCL device that is a CUDA device's card is not counted again.
    const GpuMap gpus = GpuMap::from_results(*r);
    std::vector<std::string> seen;
    for (const auto& rec : *r) {
      const std::string dev = text_at(rec, k::kDevice);
      if (!is_gpu_record(rec) || std::find(seen.begin(), seen.end(), dev) != seen.end()) continue;
      seen.push_back(dev);
      if (!backend_is_first_face(text_at(rec, k::kBackend)) && !gpus.same_as(dev).empty()) continue;
      names.push_back(text_at(rec, k::kDeviceName));
    }
  }
  if (driver.empty() && doc.contains(k::kProvenance))
    driver = text_at(doc[k::kProvenance].value(std::string(k::kVersions), none), k::kNvidiaDriver);
  std::map<std::string, int> counts;
  std::vector<std::string> order;
  for (const auto& n : names)
    if (counts[n]++ == 0) order.push_back(n);
  for (const auto& n : order)
    parts.push_back(counts[n] > 1 ? fmt::format("{}\xC3\x97 {}", counts[n], n) : n);
  if (names.empty()) parts.push_back("no GPU found");
  if (!driver.empty()) parts.push_back("driver " + driver);
  return parts;
}

void title_view(TextView& view, const std::string& what, std::vector<std::string> first,
                const nlohmann::json& doc) {
  for (auto& i : machine_items(doc)) first.push_back(std::move(i));
  view.flow(what + ":", std::move(first), 0, 0, Tone::kBold);
}

void section_table_view(TextView& view, const TableSection& section) {
  if (section.rows.empty()) return;
  view.text(section.title, 0, 2, Tone::kBold);
  TextTable t;
  t.indent = 2;
  for (std::size_t c = 0; c < section.columns.size(); ++c) {
    // A column of numbers (or empty cells) is right-aligned; text may wrap.
    const bool numeric =
        c > 0 && std::all_of(section.rows.begin(), section.rows.end(), [&](const auto& row) {
          const std::string cell = c < row.size() ? row[c] : "";
          if (cell.empty()) return true;
          // "388.5", "-3.2%", "1.2e+03"; not a range like "0-31"
          const auto sign = cell.find_first_of("-+", 1);
          return cell.find_first_not_of("0123456789.+-%e") == std::string::npos &&
                 (sign == std::string::npos || cell[sign - 1] == 'e');
        });
    t.columns.push_back({section.columns[c], numeric, !numeric && c > 0, true, false, 4});
  }
  for (const auto& row : section.rows) t.add(row);
  view.table(std::move(t));
}

}  // namespace gpucheck::report
