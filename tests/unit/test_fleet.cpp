// report fleet's section: grouping across documents, per node the worst GPU, the modified
// z-score rule on 64 nodes made from real records (exactly the two planted outliers), the 7 %
// rule below 10 nodes (and not above), and its views (tables, strip charts).
#include "../fixtures/fleet/make_fleet.h"
#include "report/fleet.h"
#include "report/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gpucheck::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

Json fleet_of(const std::vector<Json>& docs) {
  std::vector<FleetDocument> in;
  for (std::size_t i = 0; i < docs.size(); ++i)
    in.push_back({"doc" + std::to_string(i) + ".json", docs[i]});
  return fleet_section(in, FleetRules{});
}

std::set<std::string> flagged_hosts(const Json& fleet) {
  std::set<std::string> out;
  for (const auto& o : fleet["outliers"]) out.insert(o["hostname"].get<std::string>());
  return out;
}

TEST(Fleet, SixtyFourNodesFlagExactlyTheSlowNodeAndTheSlowGpu) {
  const Json fleet = fleet_of(testing::planted_fleet_64());
  EXPECT_EQ(fleet["summary"]["nodes"], 64);
  EXPECT_EQ(fleet["summary"]["documents"], 64);
  EXPECT_EQ(flagged_hosts(fleet), (std::set<std::string>{"node17", "node42"}));
  EXPECT_EQ(fleet["summary"]["outliers"], 2);

  std::size_t node17 = 0, gpu_groups = 0;
  for (const auto& g : fleet["groups"])
    if (g["model"] == "NVIDIA H100 80GB HBM3") ++gpu_groups;
  for (const auto& o : fleet["outliers"]) {
    EXPECT_LT(o["z_score"].get<double>(), -3.5) << o.dump();
    if (o["hostname"] == "node42") {
      // Node 42's worst GPU, 12 % slow, and nothing else of node 42.
      EXPECT_EQ(o["device"], "cuda1") << o.dump();
      EXPECT_EQ(o["device_uuid"], "GPU-node42-cuda1");
      EXPECT_NEAR(o["deviation"].get<double>(), -0.12, 0.025);
    } else {
      EXPECT_NEAR(o["deviation"].get<double>(), -0.08, 0.025);
      ++node17;
    }
  }
  // Node 17 is slow in every group its GPUs are in; its CPU was planted slow too.
  EXPECT_GE(node17, gpu_groups);
  // The nodes' list starts with the slowest.
  EXPECT_EQ(fleet["nodes"][0]["hostname"], "node42");
  EXPECT_EQ(fleet["nodes"][1]["hostname"], "node17");
}

TEST(Fleet, GroupsKeepEveryGpuOnceAndMarkEachNodesWorst) {
  const Json fleet = fleet_of(testing::planted_fleet_64());
  for (const auto& g : fleet["groups"]) {
    std::map<std::string, int> worst;
    for (const auto& m : g["members"])
      if (m["worst"] == true) ++worst[m["hostname"].get<std::string>()];
    EXPECT_EQ(worst.size(), g["nodes"].get<std::size_t>()) << g["description"];
    for (const auto& [host, n] : worst) EXPECT_EQ(n, 1) << host;
    // CUDA groups hold both GPUs of every node: 128 members.
    if (g["backend"] == "cuda") {
      EXPECT_EQ(g["members"].size(), 128u) << g["description"];
    }
  }
}

// Five nodes of two GPUs; node 5 at `slow` of the others' centre. Spread chosen so that the
// MAD is 3 % of the median: a 7.6 % drop has a z-score of only -1.7.
std::vector<Json> five_nodes(double slow, int nodes = 5) {
  const double pattern[4][2] = {{1.04, 0.97}, {0.96, 1.03}, {1.02, 0.98}, {1.01, 0.99}};
  return testing::make_fleet(nodes, [=](int node, const std::string& device, std::size_t) {
    if (device == "cpu") return 1.0;  // the CPUs agree: only the GPUs are judged here
    const int gpu = device == "cuda1" ? 1 : 0;
    if (node == nodes) return gpu == 0 ? slow : 0.93;
    return pattern[(node - 1) % 4][gpu];
  });
}

TEST(Fleet, BelowTenNodesSevenPercentUnderTheMedianIsAnOutlier) {
  const Json fleet = fleet_of(five_nodes(0.91));
  EXPECT_EQ(flagged_hosts(fleet), std::set<std::string>{"node05"});
  for (const auto& o : fleet["outliers"]) {
    EXPECT_EQ(o["device"], "cuda0");
    EXPECT_LT(o["deviation"].get<double>(), -0.07);
    EXPECT_GT(o["z_score"].get<double>(), -3.5);  // the z rule alone would not flag it
  }
  // 6 % under the median is not enough.
  EXPECT_TRUE(fleet_of(five_nodes(0.925))["outliers"].empty());
  // With 12 nodes the relative rule no longer applies, and the z-score is above -3.5.
  EXPECT_TRUE(fleet_of(five_nodes(0.91, 12))["outliers"].empty());
}

TEST(Fleet, ViewsShowOutliersFirstAndOneStripChartPerGroup) {
  Json doc{{"schema", "gpucheck/1"}, {"command", "report"}};
  doc["fleet"] = fleet_of(testing::planted_fleet_64());
  const std::string table = render(doc, Format::kTable);
  EXPECT_THAT(table, HasSubstr("fleet outliers"));
  EXPECT_THAT(table, HasSubstr("node42"));
  const std::string csv = render(doc, Format::kCsv);
  EXPECT_THAT(csv.substr(0, csv.find('\n')), HasSubstr("host,device,pci_bus_id,group"));
  const std::string html = render(doc, Format::kHtml);
  std::size_t charts = 0, red = 0;
  for (auto p = html.find("data-chart=\"fleet\""); p != std::string::npos;
       p = html.find("data-chart=\"fleet\"", p + 1))
    ++charts;
  for (auto p = html.find("data-outlier=\"true\""); p != std::string::npos;
       p = html.find("data-outlier=\"true\"", p + 1))
    ++red;
  EXPECT_EQ(charts, doc["fleet"]["groups"].size());
  EXPECT_EQ(red, doc["fleet"]["outliers"].size());
}

// A saved fleet document: 11 nodes, a few of each node's records (GEMM and exp on both GPUs and
// the CPU), node 07's cuda1 15 % slow and node 11 10 % slow everywhere. It is what the rules
// give today (GPUCHECK_UPDATE_GOLDEN=1 rewrites it; then read the diff), and the HTML test
// (html.fleet) renders it in Chromium.
TEST(Fleet, TheSavedFleetDocumentIsWhatTheRulesGive) {
  auto docs = testing::make_fleet(11, [](int node, const std::string& device, std::size_t record) {
    double f = 1.0 + 0.02 * testing::spread(node, device, record);
    if (node == 7 && device == "cuda1") f *= 0.85;
    if (node == 11) f *= 0.90;
    return f;
  });
  for (auto& d : docs) {
    Json kept = Json::array();
    for (const auto& r : d["results"])
      if ((r["op"] == "gemm" && r["dtype"] == "f32") || (r["op"] == "exp" && r["dtype"] == "f32"))
        kept.push_back(r);
    d["results"] = kept;
  }
  Json doc{{"schema", "gpucheck/1"}, {"command", "report"}};
  doc["fleet"] = fleet_of(docs);
  // As `report fleet --json` writes it, so `report show` reads it.
  doc["provenance"] = {{"argv", {"gpucheck", "report", "fleet", "fleet/", "--json"}},
                       {"backends_built", {"cpu"}},
                       {"environment", Json::object()},
                       {"git_commit", "unknown"},
                       {"gpucheck_version", "0.1.0"},
                       {"time", "2026-11-29T16:00:00Z"}};
  EXPECT_EQ(flagged_hosts(doc["fleet"]), (std::set<std::string>{"node07", "node11"}));
  const std::string path = std::string(GPUCHECK_FIXTURES_DIR) + "/views/fleet_11.json";
  if (std::getenv("GPUCHECK_UPDATE_GOLDEN") != nullptr)
    std::ofstream(path, std::ios::binary) << doc.dump(1) << "\n";
  std::ifstream in(path, std::ios::binary);
  std::stringstream saved;
  saved << in.rdbuf();
  EXPECT_EQ(doc.dump(1) + "\n", saved.str()) << "fleet_section differs from " << path;
}

// The strip charts' ticks are round numbers in the unit people read, no two alike, and each red
// dot is named beside it.
TEST(Fleet, StripChartsHaveRoundDistinctTicksAndNamedOutliers) {
  Json doc{{"schema", "gpucheck/1"}, {"command", "report"}};
  doc["fleet"] = fleet_of(testing::planted_fleet_64());
  const std::string html = render(doc, Format::kHtml);
  std::size_t charts = 0;
  for (auto p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) {
    ++charts;
    const std::string svg = html.substr(p, html.find("</svg>", p) - p);
    std::vector<std::string> labels;
    for (auto t = svg.find("class=\"tick\""); t != std::string::npos;
         t = svg.find("class=\"tick\"", t + 1)) {
      const auto open = svg.find('>', t) + 1;
      labels.push_back(svg.substr(open, svg.find('<', open) - open));
    }
    ASSERT_GE(labels.size(), 2u) << svg;
    EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size())
        << "repeated tick labels in " << svg.substr(0, 300);
    for (const auto& l : labels) EXPECT_THAT(l, Not(HasSubstr("e-"))) << l;
  }
  EXPECT_EQ(charts, doc["fleet"]["groups"].size());
  for (const auto& o : doc["fleet"]["outliers"])
    EXPECT_THAT(html, HasSubstr("class=\"outlier-label\"")) << o.dump();
  std::size_t labels = 0;
  for (auto p = html.find("class=\"outlier-label\""); p != std::string::npos;
       p = html.find("class=\"outlier-label\"", p + 1)) {
    const auto open = html.find('>', p) + 1;
    const std::string name = html.substr(open, html.find('<', open) - open);
    EXPECT_TRUE(name.starts_with("node17") || name.starts_with("node42")) << name;
    ++labels;
  }
  std::size_t red = 0;
  for (auto p = html.find("data-outlier=\"true\""); p != std::string::npos;
       p = html.find("data-outlier=\"true\"", p + 1))
    ++red;
  EXPECT_EQ(labels, red);
}

}  // namespace
}  // namespace gpucheck::report
