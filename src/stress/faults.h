// Planted faults, for tests only (GPUCHECK_TEST_STRESS_FAULT, as GPUCHECK_TEST_PLANT is for
// bench): each must turn only its device's verdict to FAIL, for the right reason.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpucheck::stress {

inline constexpr const char* kFaultEnv = "GPUCHECK_TEST_STRESS_FAULT";

enum class FaultKind {
  kGemmBit,     // one bit of one GEMM result flipped after it was computed, at iteration `at`
  kMemoryWord,  // one bit of one tested word flipped between memory-test passes, at pass `at`
  kHang,        // the child stops making progress `at` seconds into the run
  kDie,         // the child kills itself (SIGKILL) `at` seconds into the run
  kPeerByte,    // one byte of a peer copy's read-back flipped before it is compared, at copy `at`
  kCopyByte,    // one byte of a host copy's download flipped in host memory, at transfer `at`
  kCopySkip,    // the download of host-copy transfer `at` never enqueued (a copy that did nothing)
};

struct Fault {
  FaultKind kind = FaultKind::kGemmBit;
  std::uint64_t at = 0;
};

// The faults of `device` in a spec "DEVICE:KIND[@N],..." (KIND: gemm_bit, memory_word, hang,
// die, peer_byte, copy_byte, copy_skip; N defaults to 3 iterations, pass 1, 1 second, copy 3,
// transfer 3). Throws std::invalid_argument naming the bad entry.
std::vector<Fault> faults_for(std::string_view spec, std::string_view device);

}  // namespace gpucheck::stress
