// The table of backends: the device-name forms every command and profile accepts, which
// devices are the host's cores or a GPU, and the built list the document records.
#include "core/backend_descriptors.h"

#include "core/build_info.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace gpucheck;
using Json = nlohmann::json;

TEST(BackendDescriptors, DeviceNameForms) {
  EXPECT_EQ(backend_of_device_name("cpu"), "cpu");
  EXPECT_EQ(backend_of_device_name("cuda0"), "cuda");
  EXPECT_EQ(backend_of_device_name("opencl12"), "opencl");
  EXPECT_EQ(backend_of_device_name("vulkan1"), "vulkan");
  EXPECT_EQ(backend_of_device_name("cuda:GPU-0a3d"), "cuda");
  EXPECT_EQ(backend_of_device_name("opencl:0000:17:00.0"), "opencl");
  EXPECT_EQ(backend_of_device_name("vulkan:llvmpipe/0"), "vulkan");
  for (const char* refused : {"", "cuda", "cuda-1", "cuda0x", "cpu0", "cpu:x", "cuda:", "gpu0",
                              "metal0", "metal:x", "test_crash0", "Cuda0", "cuda:a\nb"})
    EXPECT_EQ(backend_of_device_name(refused), "") << refused;
}

TEST(BackendDescriptors, MessagesListEveryForm) {
  EXPECT_EQ(numbered_device_examples(), "cuda0, opencl0, vulkan0");
  EXPECT_EQ(stable_device_forms(), "cuda:<uuid>, opencl:<pci-bus-id>, vulkan:<pci-bus-id>");
}

TEST(BackendDescriptors, HostCpuAndGpuFromTheDeviceFacts) {
  const Json pocl = Json::parse(R"({"cl_device_type": {"flags": ["CL_DEVICE_TYPE_CPU"]}})");
  const Json cl_gpu = Json::parse(R"({"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"]}})");
  const Json lavapipe = Json::parse(R"({"device_type": "VK_PHYSICAL_DEVICE_TYPE_CPU"})");
  const Json vk_gpu = Json::parse(R"({"device_type": "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU"})");
  const Json vk_virtual = Json::parse(R"({"device_type": "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU"})");
  const Json none = Json::object();
  EXPECT_TRUE(device_on_host_cpu("cpu", none));
  EXPECT_TRUE(device_on_host_cpu("opencl", pocl));
  EXPECT_TRUE(device_on_host_cpu("vulkan", lavapipe));
  EXPECT_FALSE(device_on_host_cpu("opencl", cl_gpu));
  EXPECT_FALSE(device_on_host_cpu("cuda", pocl));
  EXPECT_FALSE(device_on_host_cpu("test_weird", none));
  EXPECT_TRUE(device_is_gpu("cuda", none));
  EXPECT_TRUE(device_is_gpu("opencl", cl_gpu));
  EXPECT_TRUE(device_is_gpu("vulkan", vk_gpu));
  EXPECT_TRUE(device_is_gpu("vulkan", vk_virtual));  // a VM's GPU (virtio-gpu)
  EXPECT_FALSE(device_is_gpu("opencl", pocl));
  EXPECT_FALSE(device_is_gpu("cpu", none));
}

TEST(BackendDescriptors, WhatTheCommandsAskOfABackend) {
  EXPECT_TRUE(backend_is_host_cpu("cpu"));
  for (const char* other : {"cuda", "opencl", "vulkan", "metal", "test_crash", ""})
    EXPECT_FALSE(backend_is_host_cpu(other)) << other;
  EXPECT_TRUE(backend_has_telemetry("cuda"));
  EXPECT_FALSE(backend_has_telemetry("opencl"));
  EXPECT_FALSE(backend_has_telemetry("test_crash"));
  EXPECT_EQ(group_ops_backend(), "cuda");
  EXPECT_TRUE(backend_has_framework_peers("cpu"));
  EXPECT_TRUE(backend_has_framework_peers("cuda"));
  EXPECT_FALSE(backend_has_framework_peers("vulkan"));
  EXPECT_TRUE(backend_is_first_face("cuda"));
  EXPECT_FALSE(backend_is_first_face("opencl"));
  EXPECT_EQ(backend_vendor("cuda"), "nvidia");
  EXPECT_EQ(backend_vendor("vulkan"), "");
  EXPECT_EQ(backend_vendor("test_crash"), "");
}

TEST(BackendDescriptors, BuiltAndNotBuiltCoverEveryBackendOnce) {
  std::vector<std::string> all;
  for (const auto& b : backend_descriptors()) all.emplace_back(b.name);
  std::vector<std::string> listed = built_backend_names();
  for (const auto& [name, reason] : not_built_backends()) {
    listed.push_back(name);
    EXPECT_TRUE(reason.starts_with("not built")) << name;
  }
  std::sort(all.begin(), all.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, all);
  EXPECT_EQ(built_backend_names().front(), "cpu");
}

TEST(BackendDescriptors, MemoryAndDriverAsTheSectionsWriteThem) {
  const auto* vulkan = find_backend_descriptor("vulkan");
  ASSERT_NE(vulkan, nullptr);
  const Json heaps = Json::parse(R"({"driver_version": "24.2.8", "memory_heaps": [
      {"size": 1024, "flags": ["VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"]}, {"size": 4096, "flags": []},
      {"size": 2048, "flags": ["VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"]}]})");
  EXPECT_EQ(vulkan->memory_bytes(heaps), 2048.0);
  EXPECT_EQ(vulkan->driver_version(Json::object(), heaps), "24.2.8");
  const auto* cuda = find_backend_descriptor("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->driver_version(Json::parse(R"({"nvml": {"driver_version": "580.95"}})"),
                                 Json::object()),
            "580.95");
  EXPECT_EQ(cuda->driver_version(Json::object(), Json::object()), "");
  EXPECT_EQ(find_backend_descriptor("test_crash"), nullptr);
}

}  // namespace

// The tuning flags' help is made of the entries: a backend that tunes nothing is not named, the
// others are in probe order, each once.
TEST(BackendDescriptors, TuningWordsNameOnlyTheBackendsThatTune) {
  const std::string budget = tuning_words(&TuningWords::budget);
  EXPECT_EQ(budget.find("cpu:"), std::string::npos) << budget;
  EXPECT_EQ(budget.find("cuda:"), std::string::npos) << budget;  // cuDNN/cuBLASLt: no budget
  ASSERT_NE(budget.find("opencl: "), std::string::npos) << budget;
  ASSERT_NE(budget.find("vulkan: "), std::string::npos) << budget;
  EXPECT_LT(budget.find("opencl: "), budget.find("vulkan: "));
  const std::string searched = tuning_words(&TuningWords::searched);
  EXPECT_EQ(searched.rfind("cuda: ", 0), 0u) << searched;
  for (const char* name : {"cuda: ", "opencl: ", "vulkan: "})
    EXPECT_EQ(searched.find(name), searched.rfind(name)) << name << " twice in " << searched;
  EXPECT_EQ(searched.find("metal:"), std::string::npos) << searched;
}
