// The people's views of multi-GPU results: P2P records as a GPU×GPU matrix per kind of copy,
// their latency likewise, all-reduce as a size table, the probe's topology as topo -m; and
// report compare matching a concurrent record only with a concurrent one.
#include "report/compare.h"
#include "report/multigpu_tables.h"
#include "report/view_model.h"

#include <gtest/gtest.h>

namespace {

namespace r = gpucheck::report;
using Json = nlohmann::json;

Json p2p(const std::string& src, const std::string& dst, double gbps, bool bi = false,
         bool peer = true, const std::string& status = "ok") {
  Json j = {{"device", src},
            {"backend", "cuda"},
            {"op", "p2p"},
            {"impl", "cudaMemcpyPeerAsync"},
            {"shape",
             {{"bytes", 268435456},
              {"direction", "p2p"},
              {"bidirectional", bi},
              {"src", src},
              {"dst", dst},
              {"peer_access", peer},
              {"engine", "ce"}}},
            {"transfers", "excluded"},
            {"status", status}};
  if (status == "ok") j["throughput"] = {{"value", gbps}, {"unit", "GB/s"}};
  return j;
}

// An ok 256 MiB all-reduce over two GPUs.
Json allreduce() {
  return {{"device", "cuda0"},
          {"backend", "cuda"},
          {"op", "allreduce"},
          {"impl", "nccl"},
          {"dtype", "f32"},
          {"shape", {{"bytes", 268435456}, {"devices", {"cuda0", "cuda1"}}}},
          {"transfers", "excluded"},
          {"status", "ok"},
          {"time_s", {{"median", 0.00092}}},
          {"algbw", 291.8},
          {"busbw", 291.8},
          {"throughput", {{"value", 291.8}, {"unit", "GB/s"}}}};
}

const r::TableSection* find(const std::vector<r::TableSection>& tables, const std::string& part) {
  for (const auto& t : tables)
    if (t.title.find(part) != std::string::npos) return &t;
  return nullptr;
}

TEST(MultiGpuTables, P2pMatrixPerKindOfCopy) {
  Json results = Json::array({p2p("cuda0", "cuda1", 390.12), p2p("cuda1", "cuda0", 388.0),
                              p2p("cuda0", "cuda1", 760.0, true),
                              p2p("cuda0", "cuda1", 0, false, false, "mismatch")});
  const auto tables = r::multigpu_tables(results);
  ASSERT_EQ(tables.size(), 3u);
  const auto* uni = find(tables, "unidirectional, copy engine, peer access on");
  ASSERT_NE(uni, nullptr);
  EXPECT_EQ(uni->columns, (std::vector<std::string>{"src \\ dst", "cuda0", "cuda1"}));
  ASSERT_EQ(uni->rows.size(), 2u);
  EXPECT_EQ(uni->rows[0], (std::vector<std::string>{"cuda0", "-", "390.1"}));
  EXPECT_EQ(uni->rows[1], (std::vector<std::string>{"cuda1", "388.0", "-"}));
  // Bidirectional: one measurement per pair, shown in both cells.
  const auto* bi = find(tables, "bidirectional");
  ASSERT_NE(bi, nullptr);
  EXPECT_EQ(bi->rows[1][1], "760.0");
  EXPECT_EQ(bi->rows[0][2], "760.0");
  // A failed verification stands out in the matrix.
  const auto* staged = find(tables, "peer access off");
  ASSERT_NE(staged, nullptr);
  EXPECT_EQ(staged->rows[0][2], "MISMATCH");
}

TEST(MultiGpuTables, FansHaveATableOfTheirOwnAndStayOutOfThePairMatrices) {
  Json to_one = p2p("all", "cuda2", 750.0);
  to_one["device"] = "cuda2";
  to_one["shape"]["direction"] = "all_to_one";
  to_one["shape"]["copies"] = 3;
  to_one["context"] = {{"direction_gbps", {260.0, 240.5, 249.5}}};
  Json all = p2p("all", "all", 0, false, true, "mismatch");
  all["shape"]["direction"] = "all_to_all";
  all["shape"]["copies"] = 12;
  const auto tables = r::multigpu_tables(Json::array({p2p("cuda0", "cuda1", 390.0), to_one, all}));
  ASSERT_EQ(tables.size(), 2u);
  const auto* uni = find(tables, "unidirectional");
  ASSERT_NE(uni, nullptr);
  EXPECT_EQ(uni->columns, (std::vector<std::string>{"src \\ dst", "cuda0", "cuda1"}));
  const auto* fans = find(tables, "every link loaded at once");
  ASSERT_NE(fans, nullptr);
  ASSERT_EQ(fans->rows.size(), 2u);
  EXPECT_EQ(fans->rows[0], (std::vector<std::string>{"all_to_one", "cuda2", "268435456", "3",
                                                     "750.0", "", "240.5", "ok"}));
  EXPECT_EQ(fans->rows[1][4], "MISMATCH");
}

// A record with a limit shows its share beside the figure (in a matrix cell, else in a column of
// its own); one whose limit is a reason shows the figure alone, no number made up.
TEST(MultiGpuTables, ShareOfTheLimitBesideTheFigureAndNoneForAReason) {
  Json limited = p2p("cuda0", "cuda1", 390.12);
  limited["limit"] = {{"value", 450.0}, {"unit", "GB/s"}, {"fraction", 0.867}};
  Json reason = p2p("cuda1", "cuda0", 388.0);
  reason["limit"] = {{"reason", "no NVLink figure for this GPU"}};
  Json fan = p2p("all", "cuda2", 750.0);
  fan["device"] = "cuda2";
  fan["shape"]["direction"] = "all_to_one";
  fan["shape"]["copies"] = 3;
  fan["limit"] = {{"value", 900.0}, {"unit", "GB/s"}, {"fraction", 0.8333}};
  Json fan_reason = fan;
  fan_reason["shape"]["direction"] = "one_to_all";
  fan_reason["limit"] = {{"reason", "unknown"}};
  Json ar = allreduce();
  ar["limit"] = {{"value", 450.0}, {"unit", "GB/s"}, {"fraction", 0.648}};
  Json ar_reason = ar;
  ar_reason["shape"]["bytes"] = 1048576;
  ar_reason["limit"] = {{"reason", "across processes"}};
  const auto tables =
      r::multigpu_tables(Json::array({limited, reason, fan, fan_reason, ar, ar_reason}));
  const auto* uni = find(tables, "unidirectional");
  ASSERT_NE(uni, nullptr);
  EXPECT_EQ(uni->rows[0][2], "390.1 (87%)");
  EXPECT_EQ(uni->rows[1][1], "388.0");
  const auto* fans = find(tables, "every link loaded at once");
  ASSERT_NE(fans, nullptr);
  ASSERT_EQ(fans->columns[5], "of limit");
  EXPECT_EQ(fans->rows[0][4], "750.0");
  EXPECT_EQ(fans->rows[0][5], "83%");
  EXPECT_EQ(fans->rows[1][5], "");
  const auto* a = find(tables, "all-reduce");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->columns[5], "of limit");
  EXPECT_EQ(a->rows[0][5], "65%");
  EXPECT_EQ(a->rows[1][5], "");
  // A failed record keeps its status in capitals, with no share even where a limit was left.
  Json failed = p2p("cuda0", "cuda1", 0, false, true, "mismatch");
  failed["limit"] = {{"fraction", 0.5}};
  EXPECT_EQ(find(r::multigpu_tables(Json::array({failed})), "unidirectional")->rows[0][2],
            "MISMATCH");
}

TEST(MultiGpuTables, LatencyMatrixAndAllreduceSizeTable) {
  Json lat = {
      {"device", "cuda0"},
      {"backend", "cuda"},
      {"op", "latency"},
      {"impl", "x"},
      {"shape",
       {{"mode", "p2p"}, {"src", "cuda0"}, {"dst", "cuda1"}, {"peer_access", true}, {"bytes", 4}}},
      {"transfers", "excluded"},
      {"status", "ok"},
      {"time_s", {{"median", 2.5e-6}}}};
  Json ar = allreduce();
  const auto tables = r::multigpu_tables(Json::array({lat, ar}));
  const auto* l = find(tables, "latency");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->rows[0][2], "2.50");
  const auto* a = find(tables, "all-reduce");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->rows.size(), 1u);
  EXPECT_EQ(a->rows[0], (std::vector<std::string>{"268435456", "cuda0,cuda1", "920.0", "291.8",
                                                  "291.8", "", "ok", ""}));
  EXPECT_TRUE(r::multigpu_tables(Json::array()).empty());
}

TEST(MultiGpuTables, TopologyAsTopoM) {
  Json backends = Json::parse(R"([{"name": "cuda", "devices": [
      {"device": "cuda0", "pci_bus_id": "0000:00:06.0",
       "properties": {"nvml": {"cpu_affinity": "0-31", "numa_node": 0}}},
      {"device": "cuda1", "pci_bus_id": "0000:00:07.0",
       "properties": {"nvml": {"cpu_affinity": "0-31"}}}],
    "nvml": {"pairs": [
      {"gpu": "0000:00:06.0", "peer": "0000:00:07.0", "topology": "NV18"},
      {"gpu": "0000:00:07.0", "peer": "0000:00:06.0", "topology": "NV18"}]}}])");
  const auto tables = r::topology_tables(backends);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].columns,
            (std::vector<std::string>{"gpu", "cuda0", "cuda1", "cpu_affinity", "numa_node"}));
  EXPECT_EQ(tables[0].rows[0], (std::vector<std::string>{"cuda0", "X", "NV18", "0-31", "0"}));
  EXPECT_EQ(tables[0].rows[1], (std::vector<std::string>{"cuda1", "NV18", "X", "0-31", ""}));
}

TEST(MultiGpuTables, InTheBenchViewAfterTheResults) {
  Json doc = {{"schema", "gpucheck/1"},
              {"command", "bench"},
              {"results", Json::array({p2p("cuda0", "cuda1", 390.0)})}};
  const auto vm = r::make_view_model(doc);
  ASSERT_EQ(vm.tables.size(), 2u);
  EXPECT_EQ(vm.tables[0].title, "results");
  EXPECT_NE(vm.tables[1].title.find("p2p GB/s"), std::string::npos);
}

TEST(CompareConcurrency, ConcurrentMatchesConcurrentOnly) {
  Json a = p2p("cuda0", "cuda1", 390.0);
  a["time_s"] = {{"median", 0.001}, {"stddev", 0.0}, {"reps", 4}};
  Json alone = a;
  Json beside = a;
  beside["concurrent_with"] = Json::array({"cuda1"});
  auto c = r::compare_results(Json::array({alone}), Json::array({beside}), {});
  ASSERT_EQ(c["rows"].size(), 2u);
  EXPECT_EQ(c["rows"][0]["verdict"], "missing");
  EXPECT_EQ(c["rows"][1]["verdict"], "new");
  auto same = r::compare_results(Json::array({beside}), Json::array({beside}), {});
  ASSERT_EQ(same["rows"].size(), 1u);
  EXPECT_EQ(same["rows"][0]["verdict"], "same");
}

}  // namespace

TEST(MultigpuTables, NetRecordsReadAsOneRowPerDirectionWithBothHosts) {
  auto net = [](int src, int dst, double gbps, const std::string& status) {
    Json j = {{"device", "rank" + std::to_string(src) + "->rank" + std::to_string(dst)},
              {"backend", "host"},
              {"op", "net"},
              {"impl", "tcp"},
              {"shape", {{"bytes", 2097152}}},
              {"transfers", "excluded"},
              {"src", {{"rank", src}, {"host", "n" + std::to_string(src)}}},
              {"dst", {{"rank", dst}, {"host", "n" + std::to_string(dst)}}},
              {"status", status}};
    if (status == "ok") {
      j["throughput"] = {{"unit", "GB/s"}, {"value", gbps}};
      j["spread"] = 0.125;
      j["latency_us"] = {{"median", 31.25}, {"p99", 80.0}, {"round_trips", 1000}};
    } else {
      j["reason"] = "rank 1 (host n1 at 10.0.0.2) closed the connection (bulk transfer)";
    }
    return j;
  };
  const auto tables =
      r::multigpu_tables(Json::array({net(0, 1, 0.00238, "ok"), net(1, 0, 1.5, "failed")}));
  ASSERT_EQ(tables.size(), 1u);
  const auto& t = tables[0];
  EXPECT_NE(t.title.find("host network"), std::string::npos);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][0], "n0 (rank 0)");
  EXPECT_EQ(t.rows[0][1], "n1 (rank 1)");
  EXPECT_EQ(t.rows[0][3], "0.00238");  // a slow link keeps its digits
  EXPECT_EQ(t.rows[0][4], "0.12");
  EXPECT_EQ(t.rows[0][5], "31.2");
  EXPECT_EQ(t.rows[1][3], "");  // no rate for a failed direction
  EXPECT_EQ(t.rows[1][7], "failed");
  EXPECT_NE(t.rows[1][8].find("closed the connection"), std::string::npos);
}
