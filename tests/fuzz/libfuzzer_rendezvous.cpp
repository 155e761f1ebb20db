// libFuzzer entry point: what reaches a rendezvous from outside (hello lines, files, replies).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpucheck::fuzz::rendezvous(data, size);
  return 0;
}
