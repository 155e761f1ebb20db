// What the stress CLI tests share: short-run flags and the lookups into a stress document.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace gpucheck::testing {

// A short run's flags: small sizes and memory, so a test leaves the CI machine's RAM alone.
inline std::vector<std::string> stress_quick(std::vector<std::string> args, int threads) {
  for (const char* a : {"--memory-fraction", "0.02", "--gemm", "256", "--json", "--threads"})
    args.emplace_back(a);
  args.push_back(std::to_string(threads));
  return args;
}

// A device's entry in the document's stress section (the document must outlive it).
inline const nlohmann::json& stress_device(const nlohmann::json& doc, const std::string& device) {
  for (const auto& d : doc["stress"]["devices"])
    if (d["device"] == device) return d;
  throw std::runtime_error("no device " + device + " in " + doc.dump());
}

}  // namespace gpucheck::testing
