// configs/skus.toml (embedded): reference figures per card, keyed by PCI device id and NVML
// name, for `min_fraction_of_reference`. Measured figures name card, date and command;
// datasheet peaks are labelled as such with their source.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::qualify {

struct Reference {
  std::string source;  // "measured" | "datasheet"
  std::string op, dtype, transfers = "excluded";
  nlohmann::json shape = nlohmann::json::object();  // keys the record's shape must hold
  double value = 0;
  std::string unit;                  // TFLOP/s | GB/s (the record's unit)
  std::string provenance;            // card, date and command, or the datasheet and its address
  std::optional<double> signalling;  // GB/s: a link's raw signalling rate beside its data rate
};

struct Sku {
  std::string model;
  std::vector<std::string> pci_device_ids;  // "0x2330", lower case
  std::vector<std::string> names;           // NVML / CUDA device names, exact
  std::optional<int> sm_count;  // the SMs a datasheet peak counts: its clock is peak ÷ SMs ÷ rate
  std::vector<Reference> references;
};

// Throws UsageError naming file:line and key.
std::vector<Sku> parse_skus(std::string_view toml_text, const std::string& path);
// The embedded configs/skus.toml.
const std::vector<Sku>& builtin_skus();

// The SKU of a device: by PCI device id first, then by exact name; nullptr when neither is known.
const Sku* find_sku(const std::vector<Sku>& skus, const std::optional<std::string>& pci_device_id,
                    const std::string& name);

// The reference of this cell and source; nullptr when the SKU has none.
const Reference* find_reference(const Sku& sku, const std::string& source, const std::string& op,
                                const std::string& dtype, const nlohmann::json& shape,
                                const std::string& transfers);

}  // namespace gpucheck::qualify
