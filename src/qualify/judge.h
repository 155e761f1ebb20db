// Judging a profile's requirements against what probe, doctor and bench observed: one verdict
// per requirement, or per device for device = "each". Pure functions of the document's sections.
#pragma once

#include "qualify/profile.h"
#include "qualify/skus.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::qualify {

enum class Outcome { kMet, kUnmet, kSkip };
std::string_view to_string(Outcome o);

struct Verdict {
  std::string id;
  Kind kind = Kind::kBackend;
  std::string requirement;  // in words
  nlohmann::json measured;  // number, string, bool or null
  nlohmann::json threshold;
  std::string unit;
  Outcome outcome = Outcome::kSkip;
  std::string reason;
  std::string device, device_name;
  int line = 0;

  nlohmann::json to_json() const;
};

// A device as the probe listed it.
struct DeviceFacts {
  std::string device;  // flat id: cpu, cuda0, opencl0
  std::string backend;
  std::string name, stable_id, uuid, pci_bus_id;
  nlohmann::json properties;
};
std::vector<DeviceFacts> list_devices(const nlohmann::json& backends);

// The devices a device or bench requirement is about; empty when none is there.
std::vector<DeviceFacts> select_devices(const Requirement& r, const std::vector<DeviceFacts>& all);

// The PCI device id ("0x2330") of a PCI bus id from <root>/sys/bus/pci/devices/<bus>/device;
// nullopt when the file is not there.
std::optional<std::string> read_pci_device_id(const std::string& root, const std::string& bus_id);

// Why a named device or a device of a backend is absent, from the backend's section.
std::string why_no_device(const Requirement& r, const nlohmann::json& backends);

// The leading numeric tuple of a version ("580.159.04" → 580,159,4; "3.1+debian" → 3,1).
std::optional<std::vector<long>> version_tuple(std::string_view text);
// -1, 0, 1 comparing as numeric tuples, missing parts counting as 0.
int compare_versions(const std::vector<long>& a, const std::vector<long>& b);

struct Observations {
  nlohmann::json backends = nlohmann::json::array();  // probe's sections
  nlohmann::json memory = nlohmann::json::object();   // probe's memory section (the CPU's)
  nlohmann::json checks = nlohmann::json::array();    // doctor's results
  nlohmann::json results = nlohmann::json::array();   // bench records, speedups added
  nlohmann::json stress = nlohmann::json::object();   // the stress run's section
  // The probe's infiniband section.
  nlohmann::json infiniband = nlohmann::json::object();
  const std::vector<Sku>* skus = nullptr;
  // The PCI device id ("0x2330") of a PCI bus id, read from sysfs; nullopt when unknown.
  std::function<std::optional<std::string>(const std::string&)> pci_device_id;
};

std::vector<Verdict> judge(const Requirement& r, const Observations& obs);

// A verdict for requirement r, not yet decided: its id, kind, profile line, the requirement in
// words and the device it is about ("" for the machine).
Verdict verdict_for(const Requirement& r, std::string words, std::string device = "");

// device = "any": the first met verdict, else the first skip, else unmet naming every device.
Verdict pick_any(const std::vector<Verdict>& per_device);

// --strict: a skip counts as unmet, and says so.
void apply_strict(std::vector<Verdict>& verdicts);

// The record a bench requirement reads on one device: matched on device, op, dtype, shape and
// transfers; nullptr when the bench wrote none.
const nlohmann::json* find_record(const Requirement& r, const std::string& device,
                                  const nlohmann::json& results);

}  // namespace gpucheck::qualify
