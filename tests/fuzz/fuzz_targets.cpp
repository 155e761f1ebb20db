// The fuzz targets' bodies, shared by the libFuzzer executables and the seeded replay test.
#include "fuzz_targets.h"

#include "bench/framework_run.h"
#include "core/errors.h"
#include "core/json_input.h"
#include "qualify/judge.h"
#include "qualify/profile.h"
#include "qualify/skus.h"
#include "report/compare.h"
#include "report/render.h"
#include "report/schema_check.h"

#include <string_view>
#include <tuple>
#include <vector>

namespace gpucheck::fuzz {

namespace {

std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A small machine for the judges: a CPU, one CUDA device with a driver version and a compute
// capability, and one ok GEMM record.
qualify::Observations observations() {
  qualify::Observations obs;
  obs.backends = nlohmann::json::parse(R"([
    {"name": "cpu", "status": "available", "devices": [{"device": "cpu", "name": "Xeon"}]},
    {"name": "cuda", "status": "available", "nvml": {"driver_version": "580.65.06"},
     "devices": [{"device": "cuda0", "name": "NVIDIA H100 80GB HBM3",
                  "compute_capability": "9.0", "global_memory_bytes": 85899345920}]}])");
  obs.memory = {{"total_bytes", 1u << 30}};
  obs.results = nlohmann::json::parse(R"([
    {"device": "cuda0", "backend": "cuda", "op": "gemm", "impl": "cublas", "dtype": "f16",
     "shape": {"m": 4096, "n": 4096, "k": 4096}, "transfers": "excluded", "status": "ok",
     "time_s": {"median": 0.001, "min": 0.001, "max": 0.001, "stddev": 0, "reps": 3,
                "truncated": false},
     "throughput": {"value": 137.4, "unit": "TFLOP/s"}, "speedup_vs_cpu": 90.0}])");
  obs.checks = nlohmann::json::array();
  obs.skus = &qualify::builtin_skus();
  obs.pci_device_id = [](const std::string&) { return std::optional<std::string>("0x2330"); };
  return obs;
}

}  // namespace

void framework_answer(const std::uint8_t* data, std::size_t size) {
  static const bench::FrameworkJob job = [] {
    bench::FrameworkJob j;
    j.framework = "torch";
    j.python = "/fuzz/bin/python3";
    j.device = j.backend = "cpu";
    j.device_name = "fuzz CPU";
    j.seed = 7;
    for (auto [op, dtype, shape] :
         {std::tuple{Op::kExp, DType::kF32, bench::Shape{ExpShape{64}}},
          std::tuple{Op::kGemm, DType::kBf16, bench::Shape{GemmShape{8, 8, 8}}},
          std::tuple{Op::kCopy, DType::kF32, bench::Shape{CopyShape{64}}}}) {
      bench::Cell c;
      c.op = op;
      c.dtype = dtype;
      c.shape = shape;
      c.explicit_request = true;
      j.cells.push_back(c);
    }
    return j;
  }();
  // No such directory: every output is "wrote no output file", nothing is read from the disk.
  const auto run =
      bench::read_framework_answers(job, text_of(data, size), "/nonexistent-gpucheck-fuzz");
  for (const auto& r : run.records) {
    const std::string status = r.at("status").get<std::string>();
    if (status != "failed" && status != "mismatch" && status != "unsupported" && status != "ok")
      __builtin_trap();
    (void)r.dump();
  }
}

void profile(const std::uint8_t* data, std::size_t size) {
  static const qualify::Observations obs = observations();
  qualify::Profile p;
  try {
    p = qualify::parse_profile(text_of(data, size), "fuzz.toml");
  } catch (const UsageError&) {
    return;  // refused with a message: what bad input must get
  }
  std::vector<qualify::Verdict> verdicts;
  for (const auto& r : p.requirements)
    for (auto& v : qualify::judge(r, obs)) verdicts.push_back(std::move(v));
  qualify::apply_strict(verdicts);
  for (const auto& v : verdicts) (void)v.to_json().dump();
}

void document(const std::uint8_t* data, std::size_t size) {
  const auto& schema = report::SchemaCheck::gpucheck();
  nlohmann::json records = nlohmann::json::array();
  nlohmann::json doc;
  try {
    doc = parse_json_input(text_of(data, size), "fuzz.json", [&](std::size_t, nlohmann::json&& r) {
      records.push_back(std::move(r));
    });
  } catch (const UsageError&) {
    return;
  }
  if (!doc.is_object()) return;
  if (doc.contains("results")) doc["results"] = std::move(records);
  if (schema.first_problem(doc)) return;  // report show and compare refuse it: exit 2
  for (auto format :
       {report::Format::kTable, report::Format::kJson, report::Format::kCsv,
        report::Format::kMarkdown, report::Format::kHtml, report::Format::kPrometheus})
    (void)report::render(doc, format, {});
  if (auto it = doc.find("results"); it != doc.end()) {
    report::CompareOptions o;
    nlohmann::json c = report::compare_results(*it, *it, o);
    o.match_by_name = true;
    c = report::compare_results(std::vector<nlohmann::json>{*it, *it}, *it, o);
    nlohmann::json shown = doc;
    c["base"] = {{"path", "a"}};
    c["new"] = {{"path", "b"}};
    shown["comparison"] = c;
    (void)report::render(shown, report::Format::kTable, {});
    (void)report::render(shown, report::Format::kHtml, {});
  }
}

}  // namespace gpucheck::fuzz
