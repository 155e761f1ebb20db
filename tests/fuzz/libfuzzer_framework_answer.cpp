// libFuzzer entry point: a framework child's answer lines (bench --framework).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpucheck::fuzz::framework_answer(data, size);
  return 0;
}
