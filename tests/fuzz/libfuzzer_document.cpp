// libFuzzer entry point: saved documents (JSON).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpucheck::fuzz::document(data, size);
  return 0;
}
