// On a machine with two or more NVIDIA GPUs: the probe's topology, CPU/NUMA affinity, NVLink
// states and speeds, error counters and P2P status against nvidia-smi (topo -m, nvlink -s/-e,
// topo -p2p r), GPU by UUID; and the p2p and allreduce bench verified, a planted fault caught.
// Elsewhere every test skips and prints why.
#include "device_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

using gpucheck::testing::have_program;
using gpucheck::testing::run_program;
using namespace gpucheck::device_testing;
using Json = nlohmann::json;

namespace {

#define SKIP_WITHOUT_TWO_GPUS()                                                        \
  do {                                                                                 \
    SKIP_WITHOUT_GPU();                                                                \
    if (cuda_probe().section["devices"].size() < 2) {                                  \
      std::printf("device test skipped: one CUDA device here, this test needs two\n"); \
      GTEST_SKIP() << "needs two CUDA devices";                                        \
    }                                                                                  \
    if (!have_program("nvidia-smi")) GTEST_SKIP() << "nvidia-smi not on PATH";         \
  } while (0)

// Without blanks around it and without terminal escapes (topo -m underlines its header).
std::string trim(const std::string& text) {
  static const std::regex kEscape("\x1b\\[[0-9;]*m");
  const std::string s = std::regex_replace(text, kEscape, "");
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// nvidia-smi's GPU index → (UUID, PCI bus id as gpucheck writes it).
std::map<int, std::pair<std::string, std::string>> smi_gpus() {
  auto r =
      run_program("nvidia-smi", {"--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<int, std::pair<std::string, std::string>> out;
  std::stringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    auto v = split_csv(line);
    if (v.size() != 3) continue;
    out[std::stoi(v[0])] = {v[1], lower(v[2]).substr(4)};  // 00000000:17:00.0 → 0000:17:00.0
  }
  return out;
}

// A tab-separated nvidia-smi matrix (topo -m, topo -p2p r): row name → column name → cell.
std::map<std::string, std::map<std::string, std::string>> smi_matrix(const std::string& text) {
  std::map<std::string, std::map<std::string, std::string>> m;
  std::vector<std::string> header;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cells.push_back(trim(c));
    if (header.empty()) {
      if (line.find("GPU0") != std::string::npos && !cells.empty() && cells[0].empty())
        header = cells;
      continue;
    }
    if (cells.empty() || cells[0].rfind("GPU", 0) != 0) {
      if (trim(line).empty() || trim(line).rfind("Legend", 0) == 0) break;
      continue;
    }
    for (std::size_t i = 1; i < cells.size() && i < header.size(); ++i)
      m[cells[0]][header[i]] = cells[i];
  }
  return m;
}

// gpucheck's CUDA device JSON by PCI bus id, and the NVML pair entries by (gpu, peer).
std::map<std::string, Json> devices_by_pci() {
  std::map<std::string, Json> out;
  for (const auto& d : cuda_probe().section["devices"]) out[d["pci_bus_id"]] = d;
  return out;
}

Json pair_of(const std::string& a, const std::string& b) {
  for (const auto& p : cuda_probe().section["nvml"].value("pairs", Json::array()))
    if (p["gpu"] == a && p["peer"] == b) return p;
  return Json();
}

}  // namespace

TEST(MultiGpuDevice, TopologyMatchesNvidiaSmiTopoM) {
  SKIP_WITHOUT_TWO_GPUS();
  auto r = run_program("nvidia-smi", {"topo", "-m"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = smi_matrix(r.out);
  ASSERT_FALSE(m.empty()) << "could not read nvidia-smi topo -m:\n" << r.out;
  const auto gpus = smi_gpus();
  const auto ours = devices_by_pci();
  int compared = 0;
  for (const auto& [i, a] : gpus)
    for (const auto& [j, b] : gpus) {
      if (i == j || !ours.count(a.second) || !ours.count(b.second)) continue;
      const std::string theirs = m.at("GPU" + std::to_string(i)).at("GPU" + std::to_string(j));
      const Json p = pair_of(a.second, b.second);
      ASSERT_FALSE(p.is_null()) << "no NVML pair for " << a.second << " -> " << b.second;
      EXPECT_EQ(p.value("topology", ""), theirs)
          << "GPU" << i << " (" << a.first << ") -> GPU" << j << " (" << b.first << ")";
      ++compared;
    }
  for (const auto& [i, a] : gpus) {
    if (!ours.count(a.second)) continue;
    const auto& row = m.at("GPU" + std::to_string(i));
    const Json nvml = ours.at(a.second)["properties"].value("nvml", Json::object());
    if (row.count("CPU Affinity") && !not_available(row.at("CPU Affinity"))) {
      EXPECT_EQ(nvml.value("cpu_affinity", ""), row.at("CPU Affinity")) << "GPU" << i;
      ++compared;
    }
    if (row.count("NUMA Affinity") && !not_available(row.at("NUMA Affinity")) &&
        nvml.contains("numa_node")) {
      EXPECT_EQ(std::to_string(nvml["numa_node"].get<int>()), row.at("NUMA Affinity"));
      ++compared;
    }
  }
  std::printf("topo -m: %d cells compared\n%s", compared, r.out.c_str());
  EXPECT_GE(compared, 2);
}

TEST(MultiGpuDevice, NvlinkStatesAndSpeedsMatchNvidiaSmi) {
  SKIP_WITHOUT_TWO_GPUS();
  const auto ours = devices_by_pci();
  int links_compared = 0;
  static const std::regex kLink(R"(^\s*Link (\d+): (.*)$)");
  for (const auto& [i, g] : smi_gpus()) {
    if (!ours.count(g.second)) continue;
    auto r = run_program("nvidia-smi", {"nvlink", "-s", "-i", std::to_string(i)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<int, std::string> smi;
    std::stringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch mm;
      if (std::regex_match(line, mm, kLink)) smi[std::stoi(mm[1])] = trim(mm[2]);
    }
    const Json links = ours.at(g.second)["properties"]
                           .value("nvml", Json::object())
                           .value("nvlink", Json::object())
                           .value("links", Json::array());
    std::size_t active_ours = 0;
    for (const auto& l : links) {
      const int n = l["link"].get<int>();
      const bool up = l["state"] == "active";
      active_ours += up ? 1 : 0;
      if (!smi.count(n)) {
        EXPECT_FALSE(up) << "GPU" << i << " link " << n << ": active for gpucheck, absent in "
                         << "nvidia-smi nvlink -s:\n"
                         << r.out;
        continue;
      }
      const bool smi_up =
          smi[n].find("inactive") == std::string::npos && smi[n].find("GB/s") != std::string::npos;
      EXPECT_EQ(up, smi_up) << "GPU" << i << " link " << n << ": nvidia-smi says " << smi[n];
      if (up && smi_up && l.contains("speed_mbps")) {
        const double smi_gbps = std::stod(smi[n]);
        EXPECT_NEAR(l["speed_mbps"].get<double>() / 1000.0, smi_gbps, 0.005 * smi_gbps)
            << "GPU" << i << " link " << n;
      }
      ++links_compared;
    }
    std::printf("GPU%d (%s): %zu active links for gpucheck, %zu listed by nvidia-smi\n", i,
                g.first.c_str(), active_ours, smi.size());
  }
  EXPECT_GT(links_compared, 0) << "no NVLink compared (a PCIe-only machine?)";
}

TEST(MultiGpuDevice, NvlinkErrorCountersNeverAheadOfNvidiaSmi) {
  SKIP_WITHOUT_TWO_GPUS();
  // The probe read first, nvidia-smi after: its counts can only be equal or larger.
  const auto ours = devices_by_pci();
  static const std::regex kCounter(R"(^\s*Link (\d+): (Replay|Recovery) Errors: (\d+))");
  int compared = 0;
  for (const auto& [i, g] : smi_gpus()) {
    if (!ours.count(g.second)) continue;
    auto r = run_program("nvidia-smi", {"nvlink", "-e", "-i", std::to_string(i)});
    if (r.exit_code != 0) GTEST_SKIP() << "nvidia-smi nvlink -e: " << r.err;
    std::map<std::pair<int, std::string>, unsigned long long> smi;
    std::stringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      std::smatch mm;
      if (std::regex_search(line, mm, kCounter))
        smi[{std::stoi(mm[1]), lower(mm[2])}] = std::stoull(mm[3]);
    }
    for (const auto& l : ours.at(g.second)["properties"]
                             .value("nvml", Json::object())
                             .value("nvlink", Json::object())
                             .value("links", Json::array())) {
      const Json c = l.value("error_counters", Json::object());
      for (const char* name : {"replay", "recovery"}) {
        auto it = smi.find({l["link"].get<int>(), name});
        if (it == smi.end() || !c.contains(name)) continue;
        EXPECT_LE(c[name].get<unsigned long long>(), it->second)
            << "GPU" << i << " link " << l["link"] << " " << name;
        ++compared;
      }
    }
    if (compared == 0) std::printf("nvidia-smi nvlink -e printed:\n%s", r.out.c_str());
  }
  std::printf("%d NVLink error counters compared\n", compared);
}

TEST(MultiGpuDevice, P2pStatusMatchesNvidiaSmiTopoP2p) {
  SKIP_WITHOUT_TWO_GPUS();
  auto r = run_program("nvidia-smi", {"topo", "-p2p", "r"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = smi_matrix(r.out);
  ASSERT_FALSE(m.empty()) << "could not read nvidia-smi topo -p2p r:\n" << r.out;
  const auto gpus = smi_gpus();
  const auto ours = devices_by_pci();
  int compared = 0;
  for (const auto& [i, a] : gpus)
    for (const auto& [j, b] : gpus) {
      if (i == j || !ours.count(a.second) || !ours.count(b.second)) continue;
      const Json p = pair_of(a.second, b.second);
      const std::string read = p.value("p2p", Json::object()).value("read", "");
      if (read.empty()) continue;
      EXPECT_EQ(read == "ok", m.at("GPU" + std::to_string(i)).at("GPU" + std::to_string(j)) == "OK")
          << "GPU" << i << " -> GPU" << j << ": gpucheck " << read;
      ++compared;
    }
  std::printf("%s", r.out.c_str());
  EXPECT_GT(compared, 0);
}

TEST(MultiGpuDevice, PeerCopiesAreVerifiedAndAPlantedFaultIsCaught) {
  SKIP_WITHOUT_TWO_GPUS();
  const std::vector<std::string> args = {"bench", "--device", "cuda0,cuda1", "--ops",
                                         "p2p",   "--copy",   "16MiB",       "--reps",
                                         "2",     "--warmup", "1",           "--json"};
  auto r = gpucheck_run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out.substr(0, 4000);
  const Json doc = Json::parse(r.out);
  std::size_t ok = 0;
  for (const auto& rec : doc["results"]) {
    const std::string status = rec["status"];
    EXPECT_TRUE(status == "ok" || status == "unsupported") << rec.dump();
    if (status != "ok") continue;
    ++ok;
    EXPECT_EQ(rec["verification"]["method"], "exact") << rec.dump();
    EXPECT_EQ(rec["verification"]["max_rel_error"], 0);
  }
  EXPECT_GE(ok, 4u) << "staged copies run on every pair, so at least four records are ok";
  auto planted = gpucheck_run(args, {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(planted.exit_code, 1) << planted.err;
  std::size_t mismatches = 0;
  for (const Json parsed = Json::parse(planted.out); const auto& rec : parsed["results"])
    mismatches += rec["status"] == "mismatch" ? 1 : 0;
  EXPECT_GE(mismatches, 4u);
}

// stress's copy test with two GPUs: each copies to the other, reads the copy back and compares
// it; a flipped byte of cuda1's read-back fails cuda1 alone.
TEST(MultiGpuDevice, StressCopiesToThePeerAreCheckedAndAPlantedFaultIsCaught) {
  SKIP_WITHOUT_TWO_GPUS();
  const std::vector<std::string> args = {"stress", "--device",   "cuda0,cuda1", "--tests",
                                         "copy",   "--duration", "6s",          "--json"};
  auto r = gpucheck_run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out.substr(0, 4000);
  std::map<std::string, std::string> peer_of;
  for (const Json doc = Json::parse(r.out); const auto& dev : doc["stress"]["devices"]) {
    EXPECT_EQ(dev["verdict"], "pass") << dev.dump();
    for (const auto& rec : dev["records"]) {
      if (rec["test"] != "copy") continue;
      const Json& peer = rec["copy"]["peer"];
      peer_of[dev["device"]] = peer["device"];
      EXPECT_GT(peer["transfers_verified"].get<int>(), 0) << rec.dump();
      EXPECT_EQ(peer["mismatches"], 0);
      EXPECT_GT(peer["gbps"].get<double>(), 1.0);
    }
  }
  EXPECT_EQ(peer_of, (std::map<std::string, std::string>{{"cuda0", "cuda1"}, {"cuda1", "cuda0"}}));
  auto planted = gpucheck_run(args, {{"GPUCHECK_TEST_STRESS_FAULT", "cuda1:peer_byte@1"}});
  EXPECT_EQ(planted.exit_code, 1) << planted.err;
  for (const Json doc = Json::parse(planted.out); const auto& dev : doc["stress"]["devices"])
    EXPECT_EQ(dev["verdict"], dev["device"] == "cuda1" ? "fail" : "pass") << dev.dump();
}

TEST(MultiGpuDevice, AllreduceIsVerifiedOrSaysWhatWasSearched) {
  SKIP_WITHOUT_TWO_GPUS();
  auto r = gpucheck_run({"bench", "--device", "cuda0,cuda1", "--ops", "allreduce", "--allreduce",
                         "4MiB", "--reps", "2", "--warmup", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out.substr(0, 4000);
  const Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 1u) << r.out;
  const Json& rec = doc["results"][0];
  if (rec["status"] == "unsupported") {
    EXPECT_THAT(rec["reason"].get<std::string>(), ::testing::HasSubstr("searched"));
    GTEST_SKIP() << "no NCCL here: " << rec["reason"];
  }
  EXPECT_EQ(rec["status"], "ok") << rec.dump();
  EXPECT_GT(rec["busbw"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(rec["busbw"].get<double>(), rec["algbw"].get<double>());  // n = 2: factor 1
  EXPECT_EQ(rec["context"]["nccl_nvls_enable"].get<std::string>().substr(0, 1), "0");
}
