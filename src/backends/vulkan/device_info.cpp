// vkGetPhysicalDevice*: base properties and features, then the 1.1+/extension structures
// chained only where the device's API version or its extensions promise them (chaining one it
// does not know is invalid usage, and some drivers crash on it).
#include "backends/vulkan/device_info.h"

#include "backends/vulkan/vk_names.h"
#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"
#include "core/sanitize.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

namespace gpucheck::vulkan {

namespace {

namespace k = keys;
using Json = nlohmann::json;

std::string str(const char* chars, std::size_t capacity) {
  return sanitize_c_buffer(chars, capacity);
}

Json vec3(const std::uint32_t* v) {
  return Json::array({v[0], v[1], v[2]});
}

bool any_byte(const std::uint8_t* b, std::size_t n) {
  return std::any_of(b, b + n, [](std::uint8_t x) { return x != 0; });
}

// Appends a structure to a pNext chain.
template <typename T>
void chain(void*** tail, T* s) {
  **tail = s;
  *tail = &s->pNext;
}

Json extensions_of(const InstanceFunctions& fns, VkPhysicalDevice d, std::set<std::string>* names,
                   Json* errors) {
  Json out = Json::object();
  std::uint32_t count = 0;
  VkResult r = fns.vkEnumerateDeviceExtensionProperties(d, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> ext(count);
  if (r == VK_SUCCESS && count > 0)
    r = fns.vkEnumerateDeviceExtensionProperties(d, nullptr, &count, ext.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    errors->push_back("vkEnumerateDeviceExtensionProperties: " + vk_result_text(r));
    return out;
  }
  ext.resize(std::min<std::size_t>(count, ext.size()));
  for (const auto& e : ext) {
    const std::string name = str(e.extensionName, sizeof e.extensionName);
    names->insert(name);
    out[name] = e.specVersion;
  }
  return out;
}

Json memory_of(const InstanceFunctions& fns, VkPhysicalDevice d, Json* types) {
  VkPhysicalDeviceMemoryProperties m{};
  fns.vkGetPhysicalDeviceMemoryProperties(d, &m);
  Json heaps = Json::array();
  for (std::uint32_t i = 0; i < std::min<std::uint32_t>(m.memoryHeapCount, VK_MAX_MEMORY_HEAPS);
       ++i)
    heaps.push_back({{k::kSize, m.memoryHeaps[i].size},
                     {k::kFlags, memory_heap_flag_names(m.memoryHeaps[i].flags)}});
  *types = Json::array();
  for (std::uint32_t i = 0; i < std::min<std::uint32_t>(m.memoryTypeCount, VK_MAX_MEMORY_TYPES);
       ++i)
    types->push_back({{k::kHeapIndex, m.memoryTypes[i].heapIndex},
                      {k::kFlags, memory_property_names(m.memoryTypes[i].propertyFlags)}});
  return heaps;
}

Json queue_families_of(const InstanceFunctions& fns, VkPhysicalDevice d) {
  std::uint32_t count = 0;
  fns.vkGetPhysicalDeviceQueueFamilyProperties(d, &count, nullptr);
  std::vector<VkQueueFamilyProperties> q(count);
  if (count > 0) fns.vkGetPhysicalDeviceQueueFamilyProperties(d, &count, q.data());
  Json out = Json::array();
  for (std::uint32_t i = 0; i < std::min<std::size_t>(count, q.size()); ++i)
    out.push_back({{k::kIndex, i},
                   {k::kQueueCount, q[i].queueCount},
                   {k::kFlags, queue_flag_names(q[i].queueFlags)},
                   {k::kTimestampValidBits, q[i].timestampValidBits}});
  return out;
}

// A cooperative-matrix extension's feature, stages and (M, N, K, types, scope) combinations,
// from its vkGetPhysicalDeviceCooperativeMatrixProperties{NV,KHR}; `describe` turns one
// combination into JSON.
template <typename Props, typename Query, typename Describe>
Json cooperative(Query query, const char* call, VkStructureType type, VkPhysicalDevice d,
                 bool feature, std::uint32_t stages, Describe describe, Json* errors) {
  Json out{{k::kSupported, feature}, {k::kSupportedStages, shader_stage_names(stages)}};
  if (query == nullptr) return out;
  std::uint32_t count = 0;
  VkResult r = query(d, &count, nullptr);
  std::vector<Props> p(count);
  for (auto& x : p) x.sType = type;
  if (r == VK_SUCCESS && count > 0) r = query(d, &count, p.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    errors->push_back(std::string(call) + ": " + vk_result_text(r));
    return out;
  }
  Json list = Json::array();
  for (std::uint32_t i = 0; i < std::min<std::size_t>(count, p.size()); ++i) {
    Json m{{"m", p[i].MSize},
           {"n", p[i].NSize},
           {"k", p[i].KSize},
           {"a", component_type_name(p[i].AType)},
           {"b", component_type_name(p[i].BType)},
           {"c", component_type_name(p[i].CType)},
           {"scope", scope_name(p[i].scope)}};
    describe(p[i], &m);
    list.push_back(std::move(m));
  }
  out[k::kProperties] = std::move(list);
  return out;
}

// Whether either cooperative-matrix extension is there with its feature on, said plainly (the
// per-extension sections exist only where the extension does): bench's GEMM record repeats it.
Json cooperative_summary(const Json& p) {
  Json offered = Json::array();
  for (const auto& [key, ext] : {std::pair{k::kCooperativeMatrixKhr, "VK_KHR_cooperative_matrix"},
                                 std::pair{k::kCooperativeMatrixNv, "VK_NV_cooperative_matrix"}}) {
    auto it = p.find(std::string(key));
    if (it != p.end() && it->value(std::string(k::kSupported), false)) offered.push_back(ext);
  }
  if (offered.empty())
    return {{k::kOffered, false},
            {"detail",
             "not offered by this device: neither VK_KHR_cooperative_matrix nor "
             "VK_NV_cooperative_matrix with its cooperativeMatrix feature"}};
  const bool nv =
      std::find(offered.begin(), offered.end(), "VK_NV_cooperative_matrix") != offered.end();
  return {{k::kOffered, true},
          {"extensions", offered},
          {"detail", nv ? "offered; bench's f16 GEMM runs on VK_NV_cooperative_matrix where its "
                          "shader fits the device and the shape"
                        : "offered; gpucheck's cooperative-matrix shader is written for "
                          "VK_NV_cooperative_matrix (Debian 12's glslc has no "
                          "GL_KHR_cooperative_matrix): the tiled shader runs"}};
}

}  // namespace

Json describe_device(const InstanceFunctions& fns, VkPhysicalDevice d, int index) {
  Json errors = Json::array();
  VkPhysicalDeviceProperties base{};
  fns.vkGetPhysicalDeviceProperties(d, &base);
  std::set<std::string> ext;
  Json p = Json::object();
  const Json extensions = extensions_of(fns, d, &ext, &errors);
  const std::uint32_t api = base.apiVersion;
  const bool v11 = api >= VK_API_VERSION_1_1, v12 = api >= VK_API_VERSION_1_2;
  const bool props2 = fns.vkGetPhysicalDeviceProperties2 != nullptr;
  auto has = [&](const char* e) { return ext.contains(e); };

  // Properties2 chain.
  VkPhysicalDeviceProperties2 p2{};
  p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  void** tail = &p2.pNext;
  VkPhysicalDeviceIDProperties id{};
  id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
  VkPhysicalDeviceSubgroupProperties sub{};
  sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceDriverProperties drv{};
  drv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
  pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
  VkPhysicalDeviceCooperativeMatrixPropertiesNV cm_nv{};
  cm_nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  const bool use_id = props2 && (v11 || has("VK_KHR_external_memory_capabilities"));
  const bool use_sub = props2 && v11;
  const bool use_drv = props2 && (v12 || has("VK_KHR_driver_properties"));
  const bool use_pci = props2 && has("VK_EXT_pci_bus_info");
  const bool use_cm_nv = props2 && has("VK_NV_cooperative_matrix");
  if (use_id) chain(&tail, &id);
  if (use_sub) chain(&tail, &sub);
  if (use_drv) chain(&tail, &drv);
  if (use_pci) chain(&tail, &pci);
  if (use_cm_nv) chain(&tail, &cm_nv);
#ifdef VK_KHR_cooperative_matrix
  VkPhysicalDeviceCooperativeMatrixPropertiesKHR cm_khr{};
  cm_khr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  const bool use_cm_khr = props2 && has("VK_KHR_cooperative_matrix");
  if (use_cm_khr) chain(&tail, &cm_khr);
#endif
  if (props2) fns.vkGetPhysicalDeviceProperties2(d, &p2);

  // Features2 chain.
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  tail = &f2.pNext;
  VkPhysicalDevice16BitStorageFeatures s16{};
  s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  VkPhysicalDevice8BitStorageFeatures s8{};
  s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  VkPhysicalDeviceShaderFloat16Int8Features f16i8{};
  f16i8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV cmf_nv{};
  cmf_nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
  const bool feats2 = fns.vkGetPhysicalDeviceFeatures2 != nullptr;
  const bool use_s16 = feats2 && (v11 || has("VK_KHR_16bit_storage"));
  const bool use_s8 = feats2 && (v12 || has("VK_KHR_8bit_storage"));
  const bool use_f16i8 = feats2 && (v12 || has("VK_KHR_shader_float16_int8"));
  if (use_s16) chain(&tail, &s16);
  if (use_s8) chain(&tail, &s8);
  if (use_f16i8) chain(&tail, &f16i8);
  if (use_cm_nv) chain(&tail, &cmf_nv);
#ifdef VK_KHR_cooperative_matrix
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmf_khr{};
  cmf_khr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
  if (use_cm_khr) chain(&tail, &cmf_khr);
#endif
  if (feats2) fns.vkGetPhysicalDeviceFeatures2(d, &f2);

  const std::string name = str(base.deviceName, sizeof base.deviceName);
  p[k::kDeviceName] = name;
  p[k::kVendorId] = base.vendorID;
  p[k::kVendor] = vendor_name(base.vendorID);
  p[k::kDeviceId] = base.deviceID;
  p[k::kDeviceType] = device_type_name(base.deviceType);
  p[k::kApiVersion] = api_version_text(api);
  p[k::kApiVersionRaw] = api;
  p[k::kDriverVersionRaw] = base.driverVersion;
  p[k::kDriverVersion] =
      driver_version_text(base.vendorID, use_drv ? drv.driverID : 0, base.driverVersion);
  if (use_drv) {
    p[k::kDriverId] = driver_id_name(drv.driverID);
    p[k::kDriverName] = str(drv.driverName, sizeof drv.driverName);
    p[k::kDriverInfo] = str(drv.driverInfo, sizeof drv.driverInfo);
    const auto& c = drv.conformanceVersion;
    p[k::kConformanceVersion] = fmt::format("{}.{}.{}.{}", c.major, c.minor, c.subminor, c.patch);
  }
  std::string uuid, bus;
  if (use_id) {
    if (any_byte(id.deviceUUID, VK_UUID_SIZE)) uuid = uuid_text(id.deviceUUID);
    p[k::kDeviceUuid] = uuid_text(id.deviceUUID);
    p[k::kDriverUuid] = uuid_text(id.driverUUID);
  }
  if (use_pci) {
    bus = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.pciDomain, pci.pciBus, pci.pciDevice,
                      pci.pciFunction);
    p[k::kPciBusId] = bus;
  }
  Json types;
  p[k::kMemoryHeaps] = memory_of(fns, d, &types);
  p[k::kMemoryTypes] = std::move(types);
  p[k::kQueueFamilies] = queue_families_of(fns, d);
  if (use_sub)
    p[k::kSubgroup] = {{k::kSize, sub.subgroupSize},
                       {k::kSupportedStages, shader_stage_names(sub.supportedStages)},
                       {k::kSupportedOperations, subgroup_operation_names(sub.supportedOperations)},
                       {k::kQuadOperationsInAllStages, sub.quadOperationsInAllStages == VK_TRUE}};
  const VkPhysicalDeviceFeatures& f = feats2 ? f2.features : VkPhysicalDeviceFeatures{};
  Json sf{{"shader_float64", f.shaderFloat64 == VK_TRUE},
          {"shader_int64", f.shaderInt64 == VK_TRUE},
          {"shader_int16", f.shaderInt16 == VK_TRUE}};
  if (use_f16i8) {
    sf["shader_float16"] = f16i8.shaderFloat16 == VK_TRUE;
    sf["shader_int8"] = f16i8.shaderInt8 == VK_TRUE;
  }
  if (use_s16) {
    sf["storage_buffer_16bit_access"] = s16.storageBuffer16BitAccess == VK_TRUE;
    sf["uniform_and_storage_buffer_16bit_access"] =
        s16.uniformAndStorageBuffer16BitAccess == VK_TRUE;
    sf["storage_push_constant16"] = s16.storagePushConstant16 == VK_TRUE;
    sf["storage_input_output16"] = s16.storageInputOutput16 == VK_TRUE;
  }
  if (use_s8) {
    sf["storage_buffer_8bit_access"] = s8.storageBuffer8BitAccess == VK_TRUE;
    sf["uniform_and_storage_buffer_8bit_access"] = s8.uniformAndStorageBuffer8BitAccess == VK_TRUE;
    sf["storage_push_constant8"] = s8.storagePushConstant8 == VK_TRUE;
  }
  p[k::kShaderFeatures] = std::move(sf);
  const VkPhysicalDeviceLimits& lim = base.limits;
  p[k::kComputeLimits] = {
      {"max_compute_work_group_size", vec3(lim.maxComputeWorkGroupSize)},
      {"max_compute_work_group_count", vec3(lim.maxComputeWorkGroupCount)},
      {"max_compute_work_group_invocations", lim.maxComputeWorkGroupInvocations},
      {"max_compute_shared_memory_size", lim.maxComputeSharedMemorySize},
      {"max_storage_buffer_range", lim.maxStorageBufferRange},
      {"max_push_constants_size", lim.maxPushConstantsSize},
      {"timestamp_period", lim.timestampPeriod},
      {"timestamp_compute_and_graphics", lim.timestampComputeAndGraphics == VK_TRUE}};
  if (use_cm_nv)
    p[k::kCooperativeMatrixNv] = cooperative<VkCooperativeMatrixPropertiesNV>(
        fns.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV,
        "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
        VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV, d, cmf_nv.cooperativeMatrix == VK_TRUE,
        cm_nv.cooperativeMatrixSupportedStages,
        [](const VkCooperativeMatrixPropertiesNV& x, Json* m) {
          (*m)["d"] = component_type_name(x.DType);
        },
        &errors);
#ifdef VK_KHR_cooperative_matrix
  if (use_cm_khr)
    p[k::kCooperativeMatrixKhr] = cooperative<VkCooperativeMatrixPropertiesKHR>(
        fns.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR,
        "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
        VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR, d,
        cmf_khr.cooperativeMatrix == VK_TRUE, cm_khr.cooperativeMatrixSupportedStages,
        [](const VkCooperativeMatrixPropertiesKHR& x, Json* m) {
          (*m)["result"] = component_type_name(x.ResultType);
          (*m)["saturating_accumulation"] = x.saturatingAccumulation == VK_TRUE;
        },
        &errors);
#endif
  p[k::kCooperativeMatrix] = cooperative_summary(p);
  p[k::kExtensions] = extensions;
  if (!errors.empty()) p[k::kErrors] = std::move(errors);

  const std::string dev_id = fmt::format("vulkan{}", index);
  Json dev{{k::kDevice, dev_id}, {k::kDeviceName, name}};
  if (!bus.empty())
    dev[k::kStableId] = "vulkan:" + bus;
  else if (!uuid.empty())
    dev[k::kStableId] = "vulkan:" + uuid;
  else
    dev[k::kStableId] = fmt::format("vulkan:{}/{}", name, index);
  if (!uuid.empty()) dev[k::kDeviceUuid] = uuid;
  if (!bus.empty()) dev[k::kPciBusId] = bus;
  dev[k::kProperties] = std::move(p);
  return dev;
}

}  // namespace gpucheck::vulkan
