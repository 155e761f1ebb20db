// Enumerating platforms and devices through the loader, and assembling the probe section.
#include "backends/opencl/opencl_probe.h"

#include <fmt/format.h>

#include "backends/opencl/cl_errors.h"
#include "backends/opencl/device_fields.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace gpucheck::opencl {

namespace {

using Json = nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A platform string, or {"error": "..."} naming the code when the query fails.
Json platform_string(const OpenClLibrary& lib, cl_platform_id platform, cl_platform_info param) {
  std::size_t size = 0;
  cl_int status = lib.clGetPlatformInfo(platform, param, 0, nullptr, &size);
  if (status == CL_SUCCESS) {
    std::vector<char> buf(size);
    if (size > 0) status = lib.clGetPlatformInfo(platform, param, size, buf.data(), nullptr);
    if (status == CL_SUCCESS) return sanitize_c_buffer(buf.data(), buf.size());
  }
  return Json{{keys::kError, cl_error_text(status)}};
}

std::string text_of(const Json& value) {
  return value.is_string() ? value.get<std::string>() : "";
}

std::set<std::string, std::less<>> extension_set(const Json& extensions) {
  std::set<std::string, std::less<>> out;
  std::istringstream in(text_of(extensions));
  for (std::string e; in >> e;) out.insert(e);
  return out;
}

std::optional<unsigned> uint_of(const Json& props, std::string_view cl_name) {
  auto it = props.find(json_key(cl_name));
  if (it == props.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<unsigned>();
}

void enumerate(const OpenClLibrary& lib, Json* out) {
  cl_uint count = 0;
  const cl_int first = lib.clGetPlatformIDs(0, nullptr, &count);
  if (first == CL_PLATFORM_NOT_FOUND_KHR || (first == CL_SUCCESS && count == 0)) {
    (*out)[keys::kStatus] = "available";
    (*out)[keys::kReason] = "0 platforms";
    return;
  }
  GC_CL_CHECK(first);
  std::vector<cl_platform_id> platforms(count);
  GC_CL_CHECK(lib.clGetPlatformIDs(count, platforms.data(), nullptr));

  std::map<cl_platform_id, int> platform_seen;
  std::map<cl_device_id, std::string> device_seen;
  std::map<std::string, std::string> stable_seen;
  int next_device = 0;
  for (std::size_t pi = 0; pi < platforms.size(); ++pi) {
    const cl_platform_id p = platforms[pi];
    Json plat{{keys::kIndex, pi}};
    const Json name = platform_string(lib, p, CL_PLATFORM_NAME);
    const Json vendor = platform_string(lib, p, CL_PLATFORM_VENDOR);
    const Json version = platform_string(lib, p, CL_PLATFORM_VERSION);
    const Json extensions = platform_string(lib, p, CL_PLATFORM_EXTENSIONS);
    plat[keys::kName] = name;
    plat[keys::kVendor] = vendor;
    plat[keys::kVersion] = version;
    plat[keys::kProfile] = platform_string(lib, p, CL_PLATFORM_PROFILE);
    plat[keys::kExtensions] = extensions;
    if (parse_opencl_version(text_of(version)) >= 210) {
      cl_ulong ns = 0;
      const cl_int s =
          lib.clGetPlatformInfo(p, CL_PLATFORM_HOST_TIMER_RESOLUTION, sizeof ns, &ns, nullptr);
      plat[keys::kHostTimerResolutionNs] =
          s == CL_SUCCESS ? Json(ns) : Json{{keys::kError, cl_error_text(s)}};
    }
    if (extension_set(extensions).contains("cl_khr_icd"))
      plat[keys::kIcdSuffix] = platform_string(lib, p, CL_PLATFORM_ICD_SUFFIX_KHR);
    plat[keys::kFamily] = platform_family(text_of(name), text_of(vendor), text_of(version));
    if (auto [it, inserted] = platform_seen.emplace(p, static_cast<int>(pi)); !inserted)
      plat[keys::kDuplicateOf] = it->second;

    Json ids = Json::array();
    cl_uint ndev = 0;
    cl_int s = lib.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev);
    std::vector<cl_device_id> devices;
    if (s == CL_SUCCESS && ndev > 0) {
      devices.resize(ndev);
      s = lib.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, devices.data(), nullptr);
    }
    if (s != CL_SUCCESS && s != CL_DEVICE_NOT_FOUND) {
      plat[keys::kError] = "clGetDeviceIDs: " + cl_error_text(s);
      devices.clear();
    }
    for (cl_device_id d : devices) {
      const std::string id = fmt::format("opencl{}", next_device++);
      Json props = device_properties(lib, d);
      const std::string device_name = text_of(props["cl_device_name"]);
      const std::string pci = pci_bus_id_of(props);
      const std::string uuid = text_of(props.value("cl_device_uuid_khr", Json()));
      Json dev{{keys::kDevice, id}, {keys::kPlatform, pi}, {keys::kDeviceName, device_name}};
      std::string stable;
      if (!pci.empty()) {
        stable = "opencl:" + pci;
      } else if (!uuid.empty()) {
        stable = "opencl:" + uuid;
      } else {
        stable = fmt::format("opencl:{}/{}", text_of(name), device_name);
      }
      dev[keys::kStableId] = stable;
      if (!pci.empty()) dev[keys::kPciBusId] = pci;
      if (!uuid.empty()) dev[keys::kDeviceUuid] = uuid;
      // The same device twice (two .icd files naming one library, or one GPU through two
      // drivers with the same PCI address) is marked, not hidden.
      if (auto [it, inserted] = device_seen.emplace(d, id); !inserted) {
        dev[keys::kDuplicateOf] = it->second;
      } else if (auto [st, fresh] = stable_seen.emplace(stable, id); !fresh) {
        dev[keys::kDuplicateOf] = st->second;
      }
      dev[keys::kProperties] = std::move(props);
      ids.push_back(id);
      (*out)[keys::kDevices].push_back(std::move(dev));
    }
    plat[keys::kDevices] = std::move(ids);
    (*out)[keys::kPlatforms].push_back(std::move(plat));
  }
  (*out)[keys::kStatus] = "available";
}

}  // namespace

std::string_view platform_family(std::string_view name, std::string_view vendor,
                                 std::string_view version) {
  const std::string n = lower(name);
  const std::string v = lower(vendor);
  const std::string ver = lower(version);
  auto any = [&](std::string_view needle) {
    return n.find(needle) != std::string::npos || v.find(needle) != std::string::npos;
  };
  // pocl first: its CUDA and CPU devices may carry other vendors' names and ids.
  if (any("portable computing language") || any("pocl") || ver.find("pocl") != std::string::npos)
    return "pocl";
  if (any("rusticl")) return "mesa_rusticl";
  if (n == "clover" || any("mesa")) return "mesa_clover";
  if (any("nvidia")) return "nvidia";
  if (any("advanced micro devices") || any("amd")) return "amd";
  if (any("intel") || any("beignet")) return "intel";
  if (any("apple")) return "apple";
  return "other";
}

// PCI address from cl_khr_pci_bus_info, else NVIDIA's attribute queries, else AMD's topology.
std::string pci_bus_id_of(const Json& props) {
  if (auto it = props.find("cl_device_pci_bus_info_khr"); it != props.end() && it->is_string())
    return it->get<std::string>();
  auto bus = uint_of(props, "CL_DEVICE_PCI_BUS_ID_NV");
  auto slot = uint_of(props, "CL_DEVICE_PCI_SLOT_ID_NV");
  if (bus && slot) {
    // NVIDIA's slot id packs device (bits 3..7) and function (bits 0..2).
    const unsigned domain = uint_of(props, "CL_DEVICE_PCI_DOMAIN_ID_NV").value_or(0);
    return format_pci_bus_id(domain, *bus, *slot >> 3, *slot & 7);
  }
  if (auto it = props.find("cl_device_topology_amd"); it != props.end() && it->is_string())
    return it->get<std::string>();
  return {};
}

Json device_properties(const OpenClLibrary& lib, cl_device_id device) {
  Json props = Json::object();
  // Version and extensions decide which of the other fields may be asked.
  const DeviceField* version_field = find_device_field("CL_DEVICE_VERSION");
  const DeviceField* ext_field = find_device_field("CL_DEVICE_EXTENSIONS");
  const Json version = query_device_field(lib, device, *version_field);
  const Json extensions = query_device_field(lib, device, *ext_field);
  const int device_version = parse_opencl_version(text_of(version));
  const auto ext = extension_set(extensions);
  for (const auto& f : device_fields()) {
    if (&f == version_field) {
      props[json_key(f.name)] = version;
    } else if (&f == ext_field) {
      props[json_key(f.name)] = extensions;
    } else if (field_applies(f, device_version, ext)) {
      props[json_key(f.name)] = query_device_field(lib, device, f);
    }
  }
  return props;
}

Json probe_opencl(const ProbeOptions& options) {
  Json out{{keys::kName, "opencl"}};
  std::string error;
  auto lib = OpenClLibrary::open(options.loader, &error);

  LoaderKind kind = LoaderKind::kNone;
  std::string loader_version;
  Json loader = Json::object();
  if (lib) {
    loader[keys::kPath] = lib->path();
    loader[keys::kRealPath] = lib->real_path();
    const IcdLoaderFacts facts = lib->loader_facts();
    kind = loader_kind_from_vendor(facts.vendor, facts.has_loader_info);
    loader_version = facts.version;
    loader[keys::kKind] = loader_kind_name(kind);
    if (facts.has_loader_info) {
      loader[keys::kName] = facts.name;
      loader[keys::kVendor] = facts.vendor;
      loader[keys::kVersion] = facts.version;
      loader[keys::kOpenclVersion] = facts.ocl_version;
    }
    if (!facts.errors.empty()) loader[keys::kErrors] = facts.errors;
  }
  loader[keys::kOtherCopies] = loader_copies(options.facts, lib ? lib->real_path() : "");
  out[keys::kLoader] = std::move(loader);
  out[keys::kEnv] = describe_environment(options.facts, kind, loader_version);
  IcdInventory icds = icd_inventory(options.facts, kind, options.check_library);
  out[keys::kIcdSource] = std::move(icds.source);
  out[keys::kIcdFiles] = std::move(icds.files);
  out[keys::kUnregisteredVendorLibraries] = vendor_libraries(options.facts);
  out[keys::kPlatforms] = Json::array();
  out[keys::kDevices] = Json::array();

  if (!lib) {
    out[keys::kStatus] = "unavailable";
    // dlerror() usually starts with the name already ("libOpenCL.so.1: cannot open ...").
    out[keys::kReason] =
        error.starts_with(options.loader + ":") ? error : options.loader + ": " + error;
    return out;
  }
  try {
    enumerate(*lib, &out);
  } catch (const ApiError& e) {
    out[keys::kStatus] = "failed";
    out[keys::kReason] = fmt::format("{}: {} ({})", e.call(), e.code_name(), e.code());
  }
  return out;
}

}  // namespace gpucheck::opencl
