// Every backend gpucheck knows, each described once: its name, how its devices are named,
// whether this binary has it, and how its device facts say "GPU" or "the host's own cores". The
// commands, qualify and the report ask here instead of naming a backend, so what they know of a
// new one is its entry in this table (its factory is a line in backends/registry.cpp). It lives
// in core, not beside the registry, because report and qualify may read only core.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpucheck {

// What the tuning flags (--tune-budget, --no-tune, --retune) mean on a backend whose devices
// search among GEMM or conv implementations and keep the choice; their help is made of these.
struct TuningWords {
  std::string_view budget{};    // what --tune-budget bounds there and its default; empty: nothing
  std::string_view untuned{};   // what runs under --no-tune
  std::string_view searched{};  // what --retune searches again
};

// How a backend names its devices in --device, profiles and the document.
enum class DeviceIds {
  kNone,      // no devices on this platform
  kName,      // one device named as the backend ("cpu")
  kNumbered,  // the backend's name and an index ("cuda0")
};

// What a backend's devices are.
enum class DeviceKinds {
  kNone,
  kHostCpu,  // always the host's own cores
  kGpu,      // always a GPU
  kEither,   // a GPU or a CPU implementation of the API (pocl, lavapipe), as its facts say
};

// Which of a backend's GPUs `--device all` takes when each physical GPU is taken once, in the
// table's order (bus ids compared in lower case).
enum class GpuFace {
  kNone,
  kEvery,   // every device: the first face of its GPUs
  kNewBus,  // a GPU whose bus id no device taken before it has, or whose bus id is unknown
  // A GPU with a bus id no earlier backend's device has: without one it may be a twin, and the
  // backend's own devices on one bus are distinct drivers of it.
  kKnownNewBus,
};

struct BackendDescriptor {
  std::string_view name{};  // the probe section's name and the records' backend
  bool built = false;       // compiled into this binary
  std::string_view not_built_reason{};
  DeviceIds ids = DeviceIds::kNone;
  // What follows "name:" in a device's stable id ("<uuid>"); empty where there is none.
  std::string_view stable_id{};
  DeviceKinds kinds = DeviceKinds::kNone;
  // For kEither: from the device's probe properties.
  bool (*host_cpu)(const nlohmann::json& properties) = nullptr;
  bool (*gpu)(const nlohmann::json& properties) = nullptr;
  GpuFace face = GpuFace::kNone;
  // The device memory its properties state, as the bench device budgets by it; nullopt when not
  // stated.
  std::optional<double> (*memory_bytes)(const nlohmann::json& properties) = nullptr;
  // The driver version, from the backend's probe section or the device's properties; empty
  // when not stated.
  std::string (*driver_version)(const nlohmann::json& section,
                                const nlohmann::json& properties) = nullptr;
  // Its devices sample telemetry (clocks, power, temperature: DeviceTelemetry), which stress
  // expects of every one of them.
  bool telemetry = false;
  // It runs the group ops (peer copies, all-reduce) between its devices; bench refuses them the
  // devices of the other accelerators.
  bool group_ops = false;
  // bench runs the Python frameworks (torch, ...) on its devices beside its own records.
  bool framework_peers = false;
  // The maker of every one of its devices, where one maker makes them all ("nvidia"); empty
  // otherwise.
  std::string_view vendor{};
  // Empty where its devices tune nothing.
  TuningWords tuning{};
};

// In probe order (built_backend_names keeps it).
std::span<const BackendDescriptor> backend_descriptors();

// nullptr for a name no backend has (test backends, typing errors).
const BackendDescriptor* find_backend_descriptor(std::string_view name);

// The backend a device name belongs to by its form ("cuda0", "cuda:<uuid>", "cpu"); empty when
// the name has no backend's form.
std::string backend_of_device_name(std::string_view device);

// Whether every device of this backend is the host's own cores (DeviceKinds::kHostCpu).
bool backend_is_host_cpu(std::string_view backend);

// Whether a device of this backend runs on the host's own cores, from its probe properties.
bool device_on_host_cpu(std::string_view backend, const nlohmann::json& properties);

// Whether a device of this backend is a GPU, from its probe properties.
bool device_is_gpu(std::string_view backend, const nlohmann::json& properties);

// Whether a device of this backend is the first face of its GPU (GpuFace::kEvery): the one whose
// records and UUID stand for the GPU where another backend reaches it too.
bool backend_is_first_face(std::string_view backend);

// The maker of every device of this backend (BackendDescriptor::vendor); empty when none is.
std::string_view backend_vendor(std::string_view backend);

// Whether stress expects telemetry from this backend's devices (BackendDescriptor::telemetry).
bool backend_has_telemetry(std::string_view backend);

// Whether bench runs the frameworks on this backend's devices.
bool backend_has_framework_peers(std::string_view backend);

// The backend that runs the group ops between its devices; empty when none is in the table.
std::string group_ops_backend();

// "name: words; name: words" over the backends whose tuning says something for that field
// (budget, untuned or searched), in probe order.
std::string tuning_words(std::string_view TuningWords::*field);

// "cuda0, opencl0, ...": one flat id of each numbered backend, for messages.
std::string numbered_device_examples();

// "cuda:<uuid>, opencl:<pci-bus-id>, ...": the stable forms, for messages.
std::string stable_device_forms();

}  // namespace gpucheck
