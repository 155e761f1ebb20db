// bench on several devices: which children run at the same time (distinct physical GPUs only;
// the CPU, OpenCL CPU devices and a GPU's second face never beside another), and the group plan
// of the work between CUDA devices, with the records that say why it cannot run.
#include "app/bench_multi.h"

#include "app/bench_devices.h"
#include "bench/ops/p2p.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using namespace gpucheck;
using namespace gpucheck::app;
using Json = nlohmann::json;

// Probe sections of a 2-GPU machine with NVIDIA's OpenCL (the same GPUs again) and pocl.
Json backends() {
  return Json::parse(R"([
    {"name": "cpu", "status": "available", "devices": [{"device": "cpu"}]},
    {"name": "cuda", "status": "available", "devices": [
      {"device": "cuda0", "device_uuid": "GPU-0a3df10b-faf5-5512-4744-8c9f8b5bb5da",
       "pci_bus_id": "0000:17:00.0"},
      {"device": "cuda1", "device_uuid": "GPU-11111111-2222-3333-4444-555555555555",
       "pci_bus_id": "0000:2A:00.0"}]},
    {"name": "opencl", "status": "available", "devices": [
      {"device": "opencl0", "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_CPU"]}}},
      {"device": "opencl1", "device_uuid": "0a3df10b-faf5-5512-4744-8c9f8b5bb5da",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"]}}},
      {"device": "opencl2", "pci_bus_id": "0000:2a:00.0"},
      {"device": "opencl3"}]}
  ])");
}

std::vector<BenchTarget> targets(std::initializer_list<const char*> names) {
  std::vector<BenchTarget> out;
  for (const char* n : names) {
    std::string s(n);
    out.push_back({s, s == "cpu" ? "cpu" : s.rfind("cuda", 0) == 0 ? "cuda" : "opencl"});
  }
  return out;
}

TEST(PhysicalKey, SameGpuThroughCudaAndOpenCl) {
  const Json b = backends();
  using V = std::vector<std::string>;
  EXPECT_EQ(physical_keys({"cpu", "cpu"}, b), V{"cpu"});
  EXPECT_EQ(physical_keys({"cuda0", "cuda"}, b),
            (V{"pci:0000:17:00.0", "uuid:0a3df10b-faf5-5512-4744-8c9f8b5bb5da"}));
  EXPECT_EQ(physical_keys({"opencl0", "opencl"}, b), V{"cpu"});  // pocl is the CPU
  EXPECT_EQ(physical_keys({"opencl1", "opencl"}, b),
            V{"uuid:0a3df10b-faf5-5512-4744-8c9f8b5bb5da"});
  EXPECT_EQ(physical_keys({"opencl2", "opencl"}, b), V{"pci:0000:2a:00.0"});  // case folded
  EXPECT_TRUE(physical_keys({"opencl3", "opencl"}, b).empty());               // unknown: alone
  EXPECT_TRUE(physical_keys({"cuda7", "cuda"}, b).empty());
}

// lavapipe is the host's cores; NVIDIA's Vulkan face of cuda0 has its bus id and UUID.
TEST(PhysicalKey, VulkanCpuDeviceIsTheCpuAndAGpuIsMatchedToItsCudaFace) {
  const Json b = Json::parse(R"([
    {"name": "vulkan", "status": "available", "devices": [
      {"device": "vulkan0", "device_uuid": "0a3df10b-faf5-5512-4744-8c9f8b5bb5da",
       "pci_bus_id": "0000:17:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan1", "device_uuid": "6d657361-3232-2e33-2e36-000000000000",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_CPU"}}]}
  ])");
  using V = std::vector<std::string>;
  EXPECT_EQ(physical_keys({"vulkan0", "vulkan"}, b),
            (V{"pci:0000:17:00.0", "uuid:0a3df10b-faf5-5512-4744-8c9f8b5bb5da"}));
  EXPECT_EQ(physical_keys({"vulkan1", "vulkan"}, b), V{"cpu"});
}

// stress --device all: every GPU once. NVIDIA's OpenCL and Vulkan faces of a CUDA GPU (bus ids
// in lower case, CUDA's in upper) and lavapipe are left out; a GPU only Vulkan reaches is in.
TEST(GpuTargets, EachGpuOnceAndVulkanOnlyForGpusNoOtherBackendReaches) {
  Json b = backends();
  b.push_back(Json::parse(R"({"name": "vulkan", "status": "available", "devices": [
      {"device": "vulkan0", "pci_bus_id": "0000:2a:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan1", "pci_bus_id": "0000:c1:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan2", "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_CPU"}},
      {"device": "vulkan3", "pci_bus_id": "0000:00:02.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU"}}]})"));
  std::vector<std::string> names;
  for (const auto& t : gpu_targets(b)) names.push_back(t.device);
  // vulkan3: a VM's GPU through virtio-gpu, which only Vulkan reaches.
  EXPECT_EQ(names, (std::vector<std::string>{"cuda0", "cuda1", "opencl1", "vulkan1", "vulkan3"}));
}

// Two OpenCL platforms on one GPU (rusticl beside the vendor's) give it once; two Vulkan drivers
// of one GPU (a GPU no earlier backend reached) are both taken, and Vulkan without a bus id never.
TEST(GpuTargets, OpenClTakesABusOnceVulkanOnlyWithABusIdNoEarlierBackendHas) {
  const Json b = Json::parse(R"([
    {"name": "opencl", "status": "available", "devices": [
      {"device": "opencl0", "pci_bus_id": "0000:c1:00.0",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"]}}},
      {"device": "opencl1", "pci_bus_id": "0000:C1:00.0",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"]}}}]},
    {"name": "vulkan", "status": "available", "devices": [
      {"device": "vulkan0", "pci_bus_id": "0000:03:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan1", "pci_bus_id": "0000:03:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan2",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU"}}]}
  ])");
  std::vector<std::string> names;
  for (const auto& t : gpu_targets(b)) names.push_back(t.device + "/" + t.backend);
  EXPECT_EQ(names,
            (std::vector<std::string>{"opencl0/opencl", "vulkan0/vulkan", "vulkan1/vulkan"}));
}

TEST(ConcurrencyWaves, DistinctGpusTogetherCpuFirstAndAlone) {
  const auto w = concurrency_waves(targets({"cpu", "cuda0", "cuda1"}), backends(), false);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], std::vector<std::size_t>({0}));
  EXPECT_EQ(w[1], std::vector<std::size_t>({1, 2}));
}

TEST(ConcurrencyWaves, AGpusSecondFaceWaitsForTheFirst) {
  // opencl2 is cuda1's GPU: never with it. opencl0 (pocl) and opencl3 (unknown) run alone.
  const auto w = concurrency_waves(targets({"cuda0", "cuda1", "opencl2", "opencl0", "opencl3"}),
                                   backends(), false);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0], std::vector<std::size_t>({0, 1}));
  EXPECT_EQ(w[1], std::vector<std::size_t>({2}));
  EXPECT_EQ(w[2], std::vector<std::size_t>({3}));
  EXPECT_EQ(w[3], std::vector<std::size_t>({4}));
  // opencl1 is cuda0's GPU by UUID; with cuda1 it may share a wave.
  const auto v = concurrency_waves(targets({"cuda0", "opencl1", "cuda1"}), backends(), false);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], std::vector<std::size_t>({0, 2}));
  EXPECT_EQ(v[1], std::vector<std::size_t>({1}));
}

TEST(ConcurrencyWaves, SerialRunsEachAloneInOrder) {
  const auto w = concurrency_waves(targets({"cuda1", "cpu", "cuda0"}), backends(), true);
  ASSERT_EQ(w.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(w[i], std::vector<std::size_t>({i}));
}

GroupRequest request(bool p2p, bool allreduce) {
  GroupRequest r;
  if (p2p) r.ops.insert(Op::kP2p);
  if (allreduce) r.ops.insert(Op::kAllreduce);
  r.sizes = bench::with_size_flags({}, {});  // the units' fallback sizes: 256 MiB; 1 MiB, 1 GiB
  return r;
}

TEST(PlanGroup, OneGpuIsUnsupportedWithTheReason) {
  const auto g = plan_group(request(true, true), targets({"cuda0"}), {}, 1);
  EXPECT_FALSE(g.plan);
  ASSERT_EQ(g.refused.size(), 2u);
  for (const auto& r : g.refused) {
    EXPECT_EQ(r["status"], "unsupported");
    EXPECT_EQ(r["device"], "cuda0");
    EXPECT_NE(r["reason"].get<std::string>().find("at least two CUDA devices"), std::string::npos);
  }
  EXPECT_EQ(g.refused[0]["op"], "p2p");
  EXPECT_EQ(g.refused[0]["shape"]["direction"], "p2p");
  EXPECT_EQ(g.refused[1]["op"], "allreduce");
  EXPECT_EQ(g.refused[1]["dtype"], "f32");
}

TEST(PlanGroup, RefusalsNameTheUnitsImplAndTheShapeOfTheFirstSize) {
  const auto g = plan_group(request(true, true), targets({"cuda0"}), {}, 1);
  ASSERT_EQ(g.refused.size(), 2u);
  // A copy from the one device to nowhere: no dst, and no dtype (a copy moves bytes).
  EXPECT_EQ(g.refused[0]["impl"], "cudaMemcpyPeerAsync");
  EXPECT_EQ(g.refused[0]["shape"], nlohmann::json({{"bytes", 256u << 20},
                                                   {"direction", "p2p"},
                                                   {"bidirectional", false},
                                                   {"src", "cuda0"},
                                                   {"peer_access", true},
                                                   {"engine", "ce"}}));
  EXPECT_FALSE(g.refused[0].contains("dtype"));
  EXPECT_EQ(g.refused[1]["impl"], "nccl");
  EXPECT_EQ(g.refused[1]["shape"],
            nlohmann::json({{"bytes", 1u << 20}, {"devices", nlohmann::json::array({"cuda0"})}}));
  EXPECT_EQ(g.refused[1]["transfers"], "excluded");
}

TEST(PlanGroup, OtherBackendsSayWhyAndTheCpuBaselineIsIgnored) {
  const auto g =
      plan_group(request(true, false), targets({"cpu", "opencl1", "cuda0", "cuda1"}), {}, 1);
  ASSERT_TRUE(g.plan);
  ASSERT_EQ(g.refused.size(), 1u);
  EXPECT_EQ(g.refused[0]["device"], "opencl1");
  EXPECT_NE(g.refused[0]["reason"].get<std::string>().find("between CUDA devices"),
            std::string::npos);
  EXPECT_EQ(g.plan->group, std::vector<std::string>({"cuda0", "cuda1"}));
  EXPECT_EQ(g.plan->device, "cuda0,cuda1");
}

TEST(PlanGroup, EveryKindOfCopyPerPairAndAllreducePerSize) {
  const auto g = plan_group(request(true, true), targets({"cuda0", "cuda1", "cuda2"}), {}, 1);
  ASSERT_TRUE(g.plan);
  std::size_t uni_peer = 0, uni_staged = 0, sm = 0, bi = 0, latency = 0, allreduce = 0;
  std::map<bench::P2pFan, std::set<std::string>> fans;  // each fan's devices
  for (const auto& c : g.plan->cells) {
    EXPECT_TRUE(c.explicit_request);
    if (c.op == Op::kP2p) {
      const auto& s = std::get<bench::P2pShape>(c.shape);
      if (s.fan == bench::P2pFan::kPair) {
        EXPECT_NE(s.src, s.dst);
      }
      if (s.fan != bench::P2pFan::kPair) {
        EXPECT_TRUE(s.peer_access);
        EXPECT_EQ(s.copies, s.fan == bench::P2pFan::kAllToAll ? 6u : 2u);
        fans[s.fan].insert(s.fan == bench::P2pFan::kAllToOne ? s.dst : s.src);
      } else if (s.bidirectional) {
        ++bi;
        EXPECT_LT(s.src, s.dst);  // each unordered pair once
      } else if (s.engine == bench::CopyEngine::kSm) {
        ++sm;
      } else {
        ++(s.peer_access ? uni_peer : uni_staged);
      }
    } else if (c.op == Op::kLatency) {
      ++latency;
      EXPECT_EQ(std::get<bench::LatencyShape>(c.shape).bytes, bench::kP2pLatencyBytes);
    } else if (c.op == Op::kAllreduce) {
      ++allreduce;
      EXPECT_EQ(std::get<bench::AllreduceShape>(c.shape).devices.size(), 3u);
    }
  }
  EXPECT_EQ(uni_peer, 6u);  // ordered pairs of three
  EXPECT_EQ(uni_staged, 6u);
  EXPECT_EQ(sm, 6u);
  EXPECT_EQ(bi, 6u);         // three unordered pairs, peer on and off
  EXPECT_EQ(latency, 12u);   // ordered pairs, peer on and off
  EXPECT_EQ(allreduce, 2u);  // one per size
  // nvbandwidth's tests: all_to_one and one_to_all per device, one all_to_all.
  EXPECT_EQ(fans[bench::P2pFan::kAllToOne], (std::set<std::string>{"cuda0", "cuda1", "cuda2"}));
  EXPECT_EQ(fans[bench::P2pFan::kOneToAll], (std::set<std::string>{"cuda0", "cuda1", "cuda2"}));
  EXPECT_EQ(fans[bench::P2pFan::kAllToAll], (std::set<std::string>{"all"}));
  // Two GPUs: the fans would be the pair copies again.
  const auto two = plan_group(request(true, false), targets({"cuda0", "cuda1"}), {}, 1);
  ASSERT_TRUE(two.plan);
  for (const auto& c : two.plan->cells) {
    if (const auto* s = std::get_if<bench::P2pShape>(&c.shape)) {
      EXPECT_EQ(s->fan, bench::P2pFan::kPair);
    }
  }
}

TEST(PlanGroup, NothingAskedNothingPlanned) {
  const auto g = plan_group(request(false, false), targets({"cuda0", "cuda1"}), {}, 1);
  EXPECT_FALSE(g.plan);
  EXPECT_TRUE(g.refused.empty());
}

}  // namespace
