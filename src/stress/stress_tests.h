// The three stress tests of one device. Each runs until `end_s` on the run's clock and returns
// its record; a failure of the device becomes a "failed" record, a wrong result "mismatch".
#pragma once

#include "stress/context.h"

#include <nlohmann/json.hpp>

namespace gpucheck::stress {

// Back-to-back GEMMs into as many result buffers as fit; every result checksummed on the device
// and compared with the first one's checksum, about every k-th brought back and compared element
// by element and by Freivalds' test (bench/verify) on a host thread.
nlohmann::json run_gemm_test(StressRunContext& ctx, DType dtype, double end_s);

// Walking ones, address in address, moving inversions and seeded random patterns over the
// memory fraction of the device's free memory, in rounds until the end.
nlohmann::json run_memory_test(StressRunContext& ctx, double end_s);

// Host-to-device and device-to-host copies at once (on the CPU, memory to memory), each
// transfer a round trip whose every byte the device's checksum verifies; with a peer, then
// copies to the peer, each read back and compared byte for byte.
nlohmann::json run_copy_test(StressRunContext& ctx, double end_s);

}  // namespace gpucheck::stress
