// The NVIDIA driver library (libcuda.so.1), opened by gpucheck itself before the CUDA runtime
// does, so that "no driver", "the toolkit's stub", "driver too old", "no device" and "every
// device hidden" are told apart (cudart reports a missing driver as "insufficient").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::cuda {

inline constexpr const char* kDriverSoname = "libcuda.so.1";
// The CUDA version this build's runtime (cudart_static) needs from the driver, as
// cuDriverGetVersion encodes it (1000·major + 10·minor), and the first driver branch with it.
inline constexpr int kRequiredDriverCudaVersion = 13000;
inline constexpr const char* kRequiredDriverBranch = "580";

// What gpucheck saw of the driver; filled by observe_driver(), or by tests.
struct DriverObservation {
  bool loaded = false;
  std::string dlerror;                // when not loaded
  std::string path;                   // as the dynamic linker loaded it (link map)
  std::string real_path;              // symlinks resolved
  std::optional<int> init_result;     // cuInit(0)'s CUresult
  std::string init_error_name;        // cuGetErrorName of it, when the driver could say
  std::optional<int> driver_version;  // cuDriverGetVersion: 13000 = CUDA 13.0
  std::optional<int> device_count;    // cuDeviceGetCount
  std::optional<std::string> cuda_visible_devices;
  std::vector<std::string> dev_nodes;  // /dev/nvidia0, /dev/nvidiactl, ... that exist
};

struct DriverVerdict {
  bool usable = false;
  std::string reason;  // why not, with the fix; empty when usable
  std::string kind;    // no_driver | stub | init_failed | too_old | no_device | hidden | ok
};

// Pure: judges an observation. Order: not loadable, stub, cuInit failure, too old, no device.
DriverVerdict judge_driver(const DriverObservation& o);

// "13.0" for 13000.
std::string cuda_version_string(int encoded);

// The open driver: stays loaded (RTLD_NODELETE) for the process, as cudart shares the handle.
class DriverLibrary {
 public:
  // Opens libcuda.so.1 (or `soname`) and observes it; never throws for a missing driver.
  static DriverObservation observe(const std::string& soname = kDriverSoname);
};

// The /dev/nvidia* character devices present under `dev_dir` (sorted).
std::vector<std::string> nvidia_dev_nodes(const std::string& dev_dir = "/dev");

}  // namespace gpucheck::cuda
