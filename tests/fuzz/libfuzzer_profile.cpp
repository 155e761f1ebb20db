// libFuzzer entry point: qualify profiles (TOML).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpucheck::fuzz::profile(data, size);
  return 0;
}
