// probe's text view: a one-screen summary (host, CPU, backends with their versions, one block
// per device, the problems found), --full (every field), --list (a line per device) and
// --device (one device).
#include "core/backend_descriptors.h"
#include "core/errors.h"
#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/json_keys_infiniband.h"
#include "core/json_keys_vulkan.h"
#include "report/infiniband_items.h"
#include "report/multigpu_tables.h"
#include "report/same_gpu.h"
#include "report/stack_versions.h"
#include "report/units.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

bool flag(const Json& obj, std::string_view key) {
  auto it = obj.is_object() ? obj.find(key) : obj.end();
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& i : items)
    if (!i.empty()) out += (out.empty() ? "" : std::string(sep)) + i;
  return out;
}

// ---- host and CPU ----

std::string host_line(const Json& host) {
  std::vector<std::string> p{text_at(host, k::kOs)};
  if (auto kern = text_at(host, k::kKernel); !kern.empty()) p.push_back("kernel " + kern);
  p.push_back(text_at(host, k::kArch));
  std::string virt = text_at(host, k::kVirtualization);
  if (virt == "container") {
    std::string rt = text_at(host, k::kContainerRuntime);
    p.push_back(rt.empty() ? "in a container" : "in a " + rt + " container");
  } else if (virt == "wsl") {
    p.push_back("WSL");
  } else if (virt == "bare_metal") {
    p.push_back("bare metal");
  }
  if (flag(host, k::kHypervisor)) p.push_back("virtual machine");
  if (auto h = text_at(host, k::kHostname); !h.empty()) p.insert(p.begin(), h);
  return join(p, ", ");
}

// x86-64 micro-architecture level from the ISA flags (v3 and v4 as glibc names them), plus the
// extensions people look for beyond it.
std::string isa_level(const Json& isa) {
  auto has = [&](std::string_view f) { return flag(isa, f); };
  std::vector<std::string> extra;
  std::string level;
  if (isa.contains(k::kIsaSse4_2) || isa.contains(k::kIsaAvx)) {
    if (has(k::kIsaAvx512f) && has(k::kIsaAvx512bw) && has(k::kIsaAvx512cd) &&
        has(k::kIsaAvx512dq) && has(k::kIsaAvx512vl))
      level = "x86-64-v4 (AVX-512)";
    else if (has(k::kIsaAvx2) && has(k::kIsaFma) && has(k::kIsaF16c))
      level = "x86-64-v3 (AVX2, FMA)";
    else if (has(k::kIsaSse4_2))
      level = has(k::kIsaAvx) ? "x86-64-v2, AVX without AVX2" : "x86-64-v2 (no AVX)";
    else
      level = "x86-64 (no SSE4.2)";
    if (has(k::kIsaAvx512Bf16)) extra.push_back("AVX512-BF16");
    if (has(k::kIsaAvx512Fp16)) extra.push_back("AVX512-FP16");
    if (has(k::kIsaAmxTile)) extra.push_back("AMX");
  } else {
    for (auto [f, name] : {std::pair{k::kIsaNeon, "NEON"}, std::pair{k::kIsaSve, "SVE"},
                           std::pair{k::kIsaSve2, "SVE2"}, std::pair{k::kIsaBf16, "BF16"},
                           std::pair{k::kIsaI8mm, "I8MM"}})
      if (has(f)) extra.push_back(name);
  }
  return join({level, join(extra, ", ")}, ", ");
}

// "OpenBLAS 0.3.26 NO_LAPACKE DYNAMIC_ARCH ... (core: Cooperlake)" → "OpenBLAS 0.3.26,
// Cooperlake kernel".
std::string blas_text(const Json& blas) {
  std::string d = text_at(blas, k::kDescription);
  if (d.empty()) return text_at(blas, k::kPath);
  std::string name = d.substr(0, d.find(' ', d.find(' ') + 1));
  if (auto core = d.find("(core: "); core != std::string::npos) {
    auto end = d.find(')', core);
    name += ", " + d.substr(core + 7, end - core - 7) + " kernel";
  }
  return name;
}

// ---- each backend's section and devices ----

std::vector<std::string> cuda_items(const Json& b) {
  std::vector<std::string> p;
  for (const auto& v : stack_versions(Json::array({b})))
    if (!v.version.empty() && v.key != k::kCublaslt && v.key != k::kOpenclLoader)
      p.push_back(v.label + " " + v.version);
  return p;
}

std::string icd_text(const Json& icd) {
  std::string name = text_at(icd, k::kPath);
  if (name.empty()) name = text_at(icd, k::kLibrary);
  if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  std::vector<std::string> notes;
  if (text_at(icd, k::kSource) == "OCL_ICD_FILENAMES") notes.push_back("from OCL_ICD_FILENAMES");
  if (icd.contains(k::kDuplicateOf)) notes.push_back("duplicate");
  if (icd.contains(k::kLoads) && !flag(icd, k::kLoads)) notes.push_back("does not load");
  return notes.empty() ? name : fmt::format("{} ({})", name, join(notes, ", "));
}

std::vector<std::string> opencl_items(const Json& b) {
  std::vector<std::string> p;
  const Json& loader = member_or_empty(b, k::kLoader);
  std::string kind = text_at(loader, k::kKind);
  if (!kind.empty())
    p.push_back(
        join({"loader " + kind.substr(0, kind.find(" (")), text_at(loader, k::kVersion)}, " "));
  std::vector<std::string> platforms;
  for (const auto& pl : member_or_empty(b, k::kPlatforms)) {
    std::string version = text_at(pl, k::kVersion);
    // "OpenCL 3.0 PoCL 5.0+debian  Linux, None+Asserts, ..." : the words before the details.
    version = version.substr(0, version.find("  "));
    platforms.push_back(fmt::format("{} ({})", text_at(pl, k::kName), version));
  }
  if (!platforms.empty())
    p.push_back(fmt::format("{} platform{}: {}", platforms.size(), platforms.size() == 1 ? "" : "s",
                            join(platforms, ", ")));
  std::vector<std::string> icds;
  for (const auto& icd : member_or_empty(b, k::kIcdFiles)) icds.push_back(icd_text(icd));
  if (!icds.empty()) p.push_back("ICDs " + join(icds, ", "));
  return p;
}

std::vector<std::string> vulkan_items(const Json& b) {
  std::vector<std::string> p;
  const Json& loader = member_or_empty(b, k::kLoader);
  if (auto v = text_at(loader, k::kInstanceVersion); !v.empty()) p.push_back("loader " + v);
  const Json& layers = member_or_empty(loader, k::kLayers);
  if (!layers.empty())
    p.push_back(fmt::format("{} layer{}", layers.size(), layers.size() == 1 ? "" : "s"));
  std::vector<std::string> drivers;
  for (const auto& m : member_or_empty(b, k::kIcdFiles)) {
    std::string name = text_at(m, k::kPath);
    if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    if (m.contains(k::kError) && !m.contains(k::kLoads))
      name += " (not a manifest)";
    else if (m.contains(k::kLoads) && !flag(m, k::kLoads))
      name += " (does not load)";
    else if (const Json& init = member_or_empty(m, k::kInit);
             init.contains(k::kResult) && text_at(init, k::kResult).rfind("VK_SUCCESS", 0) != 0)
      name += " (does not initialise)";
    drivers.push_back(name);
  }
  if (!drivers.empty()) p.push_back("drivers " + join(drivers, ", "));
  if (auto o = text_at(b, k::kOverriddenBy); !o.empty()) p.push_back("only " + o);
  return p;
}

// "discrete GPU" from VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU.
std::string vk_type(const Json& props) {
  std::string t = text_at(props, k::kDeviceType);
  constexpr std::string_view kPrefix = "VK_PHYSICAL_DEVICE_TYPE_";
  if (t.rfind(kPrefix, 0) == 0) t = t.substr(kPrefix.size());
  for (char& c : t)
    c = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (auto gpu = t.find("gpu"); gpu != std::string::npos) t.replace(gpu, 3, "GPU");
  if (t == "cpu") t = "CPU";
  return t;
}

std::vector<std::string> vulkan_device_items(const Json& d, const Json& /*section*/,
                                             const GpuMap& gpus) {
  const Json& p = member_or_empty(d, k::kProperties);
  std::vector<std::string> out;
  out.push_back(join({vk_type(p), text_at(p, k::kDriverName)}, ", "));
  if (auto v = text_at(p, k::kApiVersion); !v.empty()) out.push_back("Vulkan " + v);
  if (auto drv = text_at(p, k::kDriverInfo); !drv.empty())
    out.push_back("driver " + drv);
  else if (auto ver = text_at(p, k::kDriverVersion); !ver.empty())
    out.push_back("driver " + ver);
  if (auto bus = text_at(d, k::kPciBusId); !bus.empty()) out.push_back("PCI " + bus);
  std::uint64_t local = 0;
  for (const auto& h : member_or_empty(p, k::kMemoryHeaps)) {
    const Json& f = member_or_empty(h, k::kFlags);
    if (std::find(f.begin(), f.end(), Json("VK_MEMORY_HEAP_DEVICE_LOCAL_BIT")) != f.end())
      local += static_cast<std::uint64_t>(number_at(h, k::kSize).value_or(0));
  }
  if (local > 0) out.push_back(format_memory(local) + " device-local");
  if (auto sg = number_at(member_or_empty(p, k::kSubgroup), k::kSize))
    out.push_back(fmt::format("subgroup {:.0f}", *sg));
  const Json& sf = member_or_empty(p, k::kShaderFeatures);
  std::vector<std::string> types;
  if (flag(sf, "shader_float16")) types.push_back("f16");
  if (flag(sf, "shader_float64")) types.push_back("f64");
  if (flag(sf, "shader_int8")) types.push_back("int8");
  if (!types.empty()) out.push_back("shaders " + join(types, "/"));
  for (auto key : {k::kCooperativeMatrixKhr, k::kCooperativeMatrixNv})
    if (flag(member_or_empty(p, key), k::kSupported)) {
      out.push_back("cooperative matrix");
      break;
    }
  auto same = gpus.same_as(text_at(d, k::kDevice));
  if (!same.empty()) out.push_back("same GPU as " + join(same, ", "));
  return out;
}

std::string mhz(double v) {
  return fmt::format("{:.0f} MHz", v);
}

std::vector<std::string> cuda_device_items(const Json& d, const Json& /*section*/,
                                           const GpuMap& gpus) {
  const Json& p = member_or_empty(d, k::kProperties);
  const Json& n = member_or_empty(p, k::kNvml);
  std::vector<std::string> out;
  if (auto uuid = text_at(d, k::kDeviceUuid); !uuid.empty()) out.push_back(uuid);
  if (auto bus = text_at(d, k::kPciBusId); !bus.empty()) out.push_back("PCI " + bus);
  if (auto mem = number_at(p, "global_memory_bytes")) {
    std::string m = format_memory(static_cast<std::uint64_t>(*mem));
    if (auto used = number_at(n, "memory_used_bytes"))
      m += fmt::format(" ({} used)", format_memory(static_cast<std::uint64_t>(*used)));
    out.push_back(m);
  }
  if (auto cc = text_at(p, "compute_capability"); !cc.empty()) {
    std::string arch = text_at(p, "architecture");
    out.push_back("compute " + cc + (arch.empty() ? "" : " (" + arch + ")"));
  }
  if (auto sms = number_at(p, "multiprocessors")) out.push_back(fmt::format("{:.0f} SMs", *sms));
  if (auto sm = number_at(n, "sm_clock_mhz")) {
    std::string c = "SM " + mhz(*sm);
    if (auto max = number_at(n, "max_sm_clock_mhz")) c += fmt::format(" of {:.0f}", *max);
    out.push_back(c);
  } else if (auto khz = number_at(p, "sm_clock_khz")) {
    out.push_back("SM up to " + mhz(*khz / 1e3));
  }
  if (auto mem = number_at(n, "mem_clock_mhz")) out.push_back("memory " + mhz(*mem));
  if (auto t = number_at(n, "temperature_c"))
    out.push_back(
        fmt::format("{:.0f} \xC2\xB0"
                    "C",
                    *t));
  if (auto w = number_at(n, "power_draw_mw")) {
    std::string pw = fmt::format("{:.1f} W", *w / 1e3);
    auto limit = number_at(n, "power_enforced_limit_mw");
    if (!limit) limit = number_at(n, "power_limit_mw");
    if (limit) pw += fmt::format(" of {:.0f} W", *limit / 1e3);
    out.push_back(pw);
  }
  if (n.contains("ecc_mode_current")) {
    std::string e = flag(n, "ecc_mode_current") ? "ECC on" : "ECC off";
    const Json& errs = member_or_empty(n, "ecc_errors");
    if (auto vu = number_at(errs, "volatile_uncorrected"))
      e += fmt::format(" ({:.0f} uncorrected)", *vu);
    out.push_back(e);
  } else if (p.contains("ecc_enabled")) {
    out.push_back(flag(p, "ecc_enabled") ? "ECC on" : "ECC off");
  }
  if (auto gen = number_at(n, "pcie_link_gen_current")) {
    std::string l = fmt::format("PCIe Gen{:.0f} x{:.0f}", *gen,
                                number_at(n, "pcie_link_width_current").value_or(0));
    if (auto gmax = number_at(n, "pcie_link_gen_max"))
      l += fmt::format(" (max Gen{:.0f} x{:.0f})", *gmax,
                       number_at(n, "pcie_link_width_max").value_or(0));
    out.push_back(l);
  }
  if (n.contains("mig_mode_current")) {
    std::string m = flag(n, "mig_mode_current") ? "MIG on" : "MIG off";
    if (n.contains(k::kMigDevices) && n[k::kMigDevices].is_array())
      m += fmt::format(" ({} instances)", n[k::kMigDevices].size());
    out.push_back(m);
  }
  if (auto mode = text_at(n, "compute_mode"); !mode.empty() && mode != "default")
    out.push_back("compute mode " + mode);
  auto same = gpus.same_as(text_at(d, k::kDevice));
  if (!same.empty()) out.push_back("same GPU as " + join(same, ", "));
  return out;
}

std::string cl_type(const Json& props) {
  std::string t = human_value("", member_or_empty(props, "cl_device_type"));
  for (auto [flagname, name] :
       {std::pair{"CL_DEVICE_TYPE_GPU", "GPU"}, std::pair{"CL_DEVICE_TYPE_CPU", "CPU"},
        std::pair{"CL_DEVICE_TYPE_ACCELERATOR", "accelerator"}})
    if (t.find(flagname) != std::string::npos) return name;
  return {};
}

std::vector<std::string> opencl_device_items(const Json& d, const Json& section,
                                             const GpuMap& gpus) {
  const Json& p = member_or_empty(d, k::kProperties);
  const Json& platforms = member_or_empty(section, k::kPlatforms);
  std::vector<std::string> out;
  std::string platform;
  for (const auto& pl : platforms)
    if (pl.contains(k::kIndex) && d.contains(k::kPlatform) && pl[k::kIndex] == d[k::kPlatform])
      platform = text_at(pl, k::kName);
  out.push_back(join({cl_type(p), platform.empty() ? "" : "platform " + platform}, ", "));
  // pocl appends "HSTR: cpu-x86_64-..." to the version: the build string is for --full.
  if (auto v = text_at(p, "cl_device_version"); !v.empty())
    out.push_back(v.substr(0, v.find(" HSTR")));
  if (auto drv = text_at(p, "cl_driver_version"); !drv.empty()) out.push_back("driver " + drv);
  if (auto bus = text_at(d, k::kPciBusId); !bus.empty()) out.push_back("PCI " + bus);
  if (auto mem = number_at(p, "cl_device_global_mem_size"))
    out.push_back(format_memory(static_cast<std::uint64_t>(*mem)));
  if (auto cu = number_at(p, "cl_device_max_compute_units"))
    out.push_back(fmt::format("{:.0f} compute units", *cu));
  if (auto clk = number_at(p, "cl_device_max_clock_frequency")) out.push_back(mhz(*clk));
  if (d.contains(k::kDuplicateOf)) out.push_back("duplicate of " + text_at(d, k::kDuplicateOf));
  auto same = gpus.same_as(text_at(d, k::kDevice));
  if (!same.empty()) out.push_back("same GPU as " + join(same, ", "));
  return out;
}

std::vector<std::string> cpu_section_items(const Json& b) {
  std::vector<std::string> p;
  if (text_at(b, k::kStatus) != "available") return p;
  for (const auto& d : member_or_empty(b, k::kDevices))
    if (auto t = number_at(member_or_empty(d, k::kProperties), k::kThreads))
      p.push_back(fmt::format("{:.0f} threads", *t));
  return p;
}

std::string opencl_twin_item(const Json& props) {
  return text_at(props, "cl_device_version");
}

std::string vulkan_twin_item(const Json& props) {
  return "Vulkan " + text_at(props, k::kApiVersion);
}

// How each backend's probe section and devices are shown: the one place this view names a
// backend. A section no entry names (a test backend's) gets its status and its devices' plain
// properties.
struct SectionRenderer {
  std::string_view backend;
  // The section's items after its status on its line under "backends".
  std::vector<std::string> (*section_items)(const Json& section) = nullptr;
  // A device's items under its name; nullptr: its plain properties.
  std::vector<std::string> (*device_items)(const Json& device, const Json& section,
                                           const GpuMap& gpus) = nullptr;
  // The second item of the one line a device gets when it is the same GPU as another listed
  // device; nullptr: it gets its whole block all the same.
  std::string (*twin_item)(const Json& properties) = nullptr;
  // Its devices are the host's cores, shown on the cpu line (its BLAS), not under "devices".
  bool on_cpu_line = false;
  // It has nothing to serve without an NVIDIA GPU on the bus: not a problem then.
  bool nvidia_only = false;
  // Its icd_files are driver manifests: one with an error is not used.
  bool icd_manifests = false;
};

const std::array kRenderers{
    SectionRenderer{.backend = "cpu", .section_items = cpu_section_items, .on_cpu_line = true},
    SectionRenderer{.backend = "cuda",
                    .section_items = cuda_items,
                    .device_items = cuda_device_items,
                    .nvidia_only = true},
    SectionRenderer{.backend = "opencl",
                    .section_items = opencl_items,
                    .device_items = opencl_device_items,
                    .twin_item = opencl_twin_item},
    SectionRenderer{.backend = "vulkan",
                    .section_items = vulkan_items,
                    .device_items = vulkan_device_items,
                    .twin_item = vulkan_twin_item,
                    .icd_manifests = true},
};

// nullptr for a section no entry names.
const SectionRenderer* find_renderer(std::string_view backend) {
  for (const auto& r : kRenderers)
    if (r.backend == backend) return &r;
  return nullptr;
}

// ---- the view ----

std::vector<std::string> cpu_items(const Json& cpu, const Json& backends) {
  std::vector<std::string> p{text_at(cpu, k::kModel)};
  auto count = [&](std::string_view key, const char* one, const char* many) {
    auto n = number_at(cpu, key);
    if (n) p.push_back(fmt::format("{:.0f} {}", *n, *n == 1 ? one : many));
  };
  count(k::kSockets, "socket", "sockets");
  count(k::kCores, "core", "cores");
  count(k::kThreads, "thread", "threads");
  p.push_back(isa_level(member_or_empty(cpu, k::kIsa)));
  count(k::kNumaNodes, "NUMA node", "NUMA nodes");
  for (const auto& b : backends)
    if (const SectionRenderer* r = find_renderer(text_at(b, k::kName)); r && r->on_cpu_line)
      for (const auto& d : member_or_empty(b, k::kDevices)) {
        const Json& props = member_or_empty(d, k::kProperties);
        if (props.contains("blas")) p.push_back("BLAS " + blas_text(props["blas"]));
      }
  return p;
}

std::vector<std::string> backend_items(const Json& b) {
  const std::string status = text_at(b, k::kStatus), name = text_at(b, k::kName);
  std::vector<std::string> p{status == "not_built" ? "not built" : status};
  if (status != "available") {
    std::string r = text_at(b, k::kReason);
    // "not built: not built on this platform" says it twice.
    if (r.rfind(p.back(), 0) == 0)
      p.back() = r;
    else if (!r.empty())
      p.back() += ": " + r;
  }
  if (const SectionRenderer* r = find_renderer(name); r && r->section_items)
    for (auto& i : r->section_items(b)) p.push_back(i);
  return p;
}

struct DeviceRef {
  const Json* device;
  const Json* backend;
};

std::vector<DeviceRef> all_devices(const Json& backends) {
  std::vector<DeviceRef> out;
  for (const auto& b : backends)
    for (const auto& d : member_or_empty(b, k::kDevices)) out.push_back({&d, &b});
  return out;
}

std::vector<std::string> device_items(const DeviceRef& r, const GpuMap& gpus) {
  const SectionRenderer* shown = find_renderer(text_at(*r.backend, k::kName));
  if (shown && shown->device_items) return shown->device_items(*r.device, *r.backend, gpus);
  std::vector<std::string> out;
  for (const auto& [key, v] : member_or_empty(*r.device, k::kProperties).items())
    if (!v.is_structured()) out.push_back(key + " " + human_value(key, v));
  return out;
}

bool matches(const Json& d, const std::string& wanted) {
  return text_at(d, k::kDevice) == wanted || text_at(d, k::kStableId) == wanted;
}

// ---- problems ----

// The GPU vendors on the PCI bus, where the document saw the bus (host.display_devices);
// nullopt for a document without it.
std::optional<std::set<std::string>> vendors_on_bus(const Json& doc) {
  const Json& host = member_or_empty(doc, k::kHost);
  auto it = host.find(k::kDisplayDevices);
  if (it == host.end() || !it->is_array()) return std::nullopt;
  std::set<std::string> vendors;
  for (const auto& d : *it) vendors.insert(text_at(d, k::kVendor));
  return vendors;
}

std::vector<std::string> problems(const Json& doc, const Json& backends) {
  // What has nothing to serve is no problem (doctor says "does not apply here" alike): CUDA and
  // NVML without an NVIDIA GPU on the bus, Mesa's OpenCL platforms without an AMD or Intel one.
  const auto on_bus = vendors_on_bus(doc);
  const auto absent = [&](std::initializer_list<const char*> vendors) {
    if (!on_bus) return false;
    for (const char* v : vendors)
      if (on_bus->contains(v)) return false;
    return true;
  };
  std::vector<std::string> out;
  for (const auto& b : backends) {
    const std::string name = text_at(b, k::kName), status = text_at(b, k::kStatus);
    const SectionRenderer* shown = find_renderer(name);
    const bool nvidia_absent =
        ((shown && shown->nvidia_only) || name == "nvml") && absent({"nvidia"});
    if ((status == "failed" || status == "unavailable") && !nvidia_absent)
      out.push_back(fmt::format("{} {}: {}", name, status, text_at(b, k::kReason)));
    for (const auto& icd : member_or_empty(b, k::kIcdFiles)) {
      std::string what =
          text_at(icd, k::kPath).empty() ? text_at(icd, k::kLibrary) : text_at(icd, k::kPath);
      if (icd.contains(k::kLoads) && !flag(icd, k::kLoads))
        out.push_back(
            fmt::format("{} ICD {} does not load: {}", name, what, text_at(icd, k::kError)));
      else if (icd.contains(k::kIcdEntryPoints) && !flag(icd, k::kIcdEntryPoints))
        out.push_back(
            fmt::format("{} ICD {} is not an ICD (no clIcdGetPlatformIDsKHR)", name, what));
      else if (shown && shown->icd_manifests && icd.contains(k::kError))
        out.push_back(
            fmt::format("{} manifest {} is not used: {}", name, what, text_at(icd, k::kError)));
      else if (const Json& init = member_or_empty(icd, k::kInit);
               init.contains(k::kResult) && text_at(init, k::kResult).rfind("VK_SUCCESS", 0) != 0)
        out.push_back(fmt::format("{} driver {} does not initialise: {} returned {}", name,
                                  text_at(icd, k::kLibrary), text_at(init, k::kStep),
                                  text_at(init, k::kResult)));
      if (icd.contains(k::kDuplicateOf))
        out.push_back(
            fmt::format("{}: {} loads the library {} already loads: its platform is "
                        "listed twice",
                        name, what, text_at(icd, k::kDuplicateOf)));
    }
    for (const auto& v : member_or_empty(b, k::kUnregisteredVendorLibraries)) {
      std::string reg = text_at(v, k::kRegistered);
      if (reg == "none")
        out.push_back(fmt::format("{}: {} ({}) has no .icd file", name, text_at(v, k::kPath),
                                  text_at(v, k::kVendor)));
      else if (reg == "environment")
        out.push_back(fmt::format("{}: {} is registered only through {}", name,
                                  text_at(v, k::kPath), text_at(v, k::kRegisteredBy)));
    }
    for (const auto& pl : member_or_empty(b, k::kPlatforms))
      if (member_or_empty(pl, k::kDevices).empty() &&
          !(text_at(pl, k::kFamily).starts_with("mesa") && absent({"amd", "intel"})))
        out.push_back(fmt::format("{} platform {} has no devices", name, text_at(pl, k::kName)));
    for (const auto& d : member_or_empty(b, k::kDevices)) {
      if (d.contains(k::kDuplicateOf))
        out.push_back(fmt::format("{} is listed twice (duplicate of {})", text_at(d, k::kDevice),
                                  text_at(d, k::kDuplicateOf)));
      for (const auto& e : member_or_empty(member_or_empty(d, k::kProperties), k::kErrors))
        out.push_back(fmt::format("{}: {}", text_at(d, k::kDevice), scalar_text(e)));
    }
    const Json& nvml = member_or_empty(b, k::kNvml);
    if (nvml.contains(k::kError) && !absent({"nvidia"}))
      out.push_back("NVML: " + text_at(nvml, k::kError));
  }
  return out;
}

constexpr std::size_t kLabel = 9;  // "opencl10 " and the backend names fit

void summary(TextView& view, const Json& doc, const Json& backends, const GpuMap& gpus) {
  title_view(view, "gpucheck probe", {}, doc);
  if (doc.contains(k::kHost)) view.flow("host", {host_line(doc[k::kHost])}, 0, kLabel);
  if (doc.contains(k::kCpu)) view.flow("cpu", cpu_items(doc[k::kCpu], backends), 0, kLabel);
  if (const Json& m = member_or_empty(doc, k::kMemory); m.contains(k::kTotalBytes)) {
    std::vector<std::string> items{
        format_memory(static_cast<std::uint64_t>(number_at(m, k::kTotalBytes).value_or(0)))};
    if (auto a = number_at(m, k::kAvailableBytes))
      items.push_back(format_memory(static_cast<std::uint64_t>(*a)) + " available");
    view.flow("memory", items, 0, kLabel);
  }
  if (auto rdma = infiniband_items(member_or_empty(doc, k::kInfiniband)); !rdma.empty())
    view.flow("rdma", rdma, 0, kLabel);
  view.blank();
  view.heading("backends");
  for (const auto& b : backends) view.flow(text_at(b, k::kName), backend_items(b), 2, kLabel);
  auto devices = all_devices(backends);
  if (!devices.empty()) {
    view.blank();
    view.heading("devices");
  }
  for (const auto& r : devices) {
    const std::string label = text_at(*r.device, k::kDevice);
    const SectionRenderer* shown = find_renderer(text_at(*r.backend, k::kName));
    // The CPU line above says it all; a GPU's OpenCL device is one line under its CUDA twin's.
    if (shown && shown->on_cpu_line) continue;
    auto same = gpus.same_as(label);
    if (shown && shown->twin_item && !same.empty()) {
      view.flow(label,
                {text_at(*r.device, k::kDeviceName) + ": same GPU as " + join(same, ", "),
                 shown->twin_item(member_or_empty(*r.device, k::kProperties))},
                2, kLabel);
      continue;
    }
    view.flow(label, {text_at(*r.device, k::kDeviceName)}, 2, kLabel, Tone::kBold);
    view.flow("", device_items(r, gpus), 2, kLabel);
  }
  // The GPU pairs (NVLink, PIX, SYS), as nvidia-smi topo -m prints them.
  for (const auto& t : topology_tables(backends)) {
    view.blank();
    section_table_view(view, t);
  }
  auto found = problems(doc, backends);
  view.blank();
  view.heading(found.empty() ? "problems: none found" : "problems");
  for (const auto& p : found) view.text(p, 2, 2, Tone::kWarn);
  view.blank();
  view.text(
      "Every field: --full; one device: --device ID; one line per device: -L; "
      "judged: gpucheck doctor.",
      0, 0, Tone::kMuted);
  std::size_t available = 0, gpus_seen = 0;
  for (const auto& b : backends) available += text_at(b, k::kStatus) == "available";
  std::vector<std::string> seen;
  for (const auto& r : devices) {
    const bool counted = gpus.seen_before(text_at(*r.device, k::kDevice), seen);
    if (!counted &&
        device_is_gpu(text_at(*r.backend, k::kName), member_or_empty(*r.device, k::kProperties)))
      ++gpus_seen;
  }
  view.text(
      fmt::format("probe: {} of {} backends available, {} device{} ({} GPU{}), {} "
                  "problem{}",
                  available, backends.size(), devices.size(), devices.size() == 1 ? "" : "s",
                  gpus_seen, gpus_seen == 1 ? "" : "s", found.size(), found.size() == 1 ? "" : "s"),
      0, 7, found.empty() ? Tone::kGood : Tone::kWarn);
}

void list(TextView& view, const Json& backends, const GpuMap& gpus) {
  TextTable t;
  t.header = false;
  t.columns = {{"device"}, {"what", false, true, false}};
  for (const auto& r : all_devices(backends)) {
    const Json& d = *r.device;
    std::vector<std::string> what{text_at(d, k::kDeviceName)};
    std::string uuid = gpus.uuid(text_at(d, k::kDevice));
    if (!uuid.empty()) what.push_back("UUID " + uuid);
    if (auto bus = text_at(d, k::kPciBusId); !bus.empty()) what.push_back("PCI " + bus);
    auto same = gpus.same_as(text_at(d, k::kDevice));
    if (!same.empty()) what.push_back("same GPU as " + join(same, ", "));
    t.add({text_at(d, k::kDevice), join(what, ", ")});
  }
  view.table(std::move(t));
}

}  // namespace

void probe_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json& backends = member_or_empty(doc, k::kBackends);
  const Json noarray = Json::array();
  const Json& bs = backends.is_array() ? backends : noarray;
  const GpuMap gpus = GpuMap::from_backends(bs);
  if (o.list) {
    list(view, bs, gpus);
    return;
  }
  if (!o.device.empty()) {
    for (const auto& r : all_devices(bs)) {
      if (!matches(*r.device, o.device)) continue;
      if (o.full) {
        tree_view(view, "device " + text_at(*r.device, k::kDevice), *r.device);
      } else {
        view.flow(text_at(*r.device, k::kDevice), {text_at(*r.device, k::kDeviceName)}, 0, kLabel,
                  Tone::kBold);
        view.flow("", device_items(r, gpus), 0, kLabel);
      }
      return;
    }
    std::vector<std::string> ids;
    for (const auto& r : all_devices(bs)) ids.push_back(text_at(*r.device, k::kDevice));
    throw UsageError(fmt::format("--device: no device '{}' in this document (devices: {})",
                                 o.device, ids.empty() ? "none" : join(ids, ", ")));
  }
  if (!o.full) {
    summary(view, doc, bs, gpus);
    return;
  }
  view.pairs({{std::string(k::kSchema), text_at(doc, k::kSchema)},
              {std::string(k::kCommand), text_at(doc, k::kCommand)}},
             0);
  view.blank();
  for (auto section : {k::kProvenance, k::kHost, k::kCpu, k::kMemory})
    if (doc.contains(section)) tree_view(view, std::string(section), doc[section]);
  for (const auto& b : bs) {
    Json without = b;
    without.erase(std::string(k::kDevices));
    tree_view(view, "backend " + text_at(b, k::kName), without);
    for (const auto& d : member_or_empty(b, k::kDevices))
      tree_view(view, "device " + text_at(d, k::kDevice), d);
  }
  for (const auto& t : topology_tables(bs)) {
    section_table_view(view, t);
    view.blank();
  }
  // Whatever else a document holds (a doctor document's checks shown as a probe's facts).
  for (const auto& [key, v] : doc.items())
    if (key != k::kProvenance && key != k::kHost && key != k::kCpu && key != k::kMemory &&
        key != k::kBackends && key != k::kSchema && key != k::kCommand)
      tree_view(view, key, v);
}

}  // namespace gpucheck::report
