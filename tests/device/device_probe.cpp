// The device tests' shared helpers (device_probe.h).
#include "device_probe.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace gpucheck::device_testing {

std::string binary() {
  const char* b = std::getenv("GPUCHECK_BIN");
  return b != nullptr ? b : GPUCHECK_BINARY;
}

gpucheck::testing::RunResult gpucheck_run(
    const std::vector<std::string>& args,
    const std::map<std::string, std::optional<std::string>>& env) {
  return gpucheck::testing::run_program(binary(), args, env);
}

const CudaProbe& cuda_probe() {
  static const CudaProbe probe = [] {
    CudaProbe p;
    auto r = gpucheck_run({"probe", "--json"});
    if (r.exit_code != 0) {
      p.skip_reason = "gpucheck probe failed: " + r.err;
      return p;
    }
    const auto doc = nlohmann::json::parse(r.out);  // kept alive: the loop refers into it
    for (const auto& b : doc["backends"])
      if (b["name"] == "cuda") p.section = b;
    if (p.section.is_null())
      p.skip_reason = "this gpucheck has no CUDA backend";
    else if (p.section["status"] != "available")
      p.skip_reason = "no usable CUDA device: " + p.section.value("reason", std::string("?"));
    return p;
  }();
  return probe;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) {
    auto b = f.find_first_not_of(' ');
    auto e = f.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : f.substr(b, e - b + 1));
  }
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool not_available(const std::string& v) {
  return v.empty() || v[0] == '[' || v == "N/A";
}

}  // namespace gpucheck::device_testing
