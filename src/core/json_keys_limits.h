// The keys of a record's `limit` (qualify/limits.h): what the hardware can do at most for the
// record's work, the fraction the record reached, where the figure comes from and what it was
// corrected to; or the reason there is none.
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kLimit = "limit";
inline constexpr K kLimitFraction = "fraction";
inline constexpr K kLimitBasis = "basis";            // what the figure assumes, in words
inline constexpr K kLimitClockMhz = "clock_mhz";     // the clock the figure was corrected to
inline constexpr K kLimitDatasheet = "datasheet";    // {value, clock_mhz}: the table's figure
inline constexpr K kLimitSignalling = "signalling";  // GB/s: a link's raw signalling rate
// kValue, kUnit, kSource and kReason are core/json_keys.h's.

// A comparison row's (report compare): the base's and the new record's limit.fraction.
inline constexpr K kBaseFractionOfLimit = "base_fraction_of_limit";
inline constexpr K kNewFractionOfLimit = "new_fraction_of_limit";

// The probe's device properties a limit is computed from (the CUDA probe writes them).
inline constexpr K kMultiprocessors = "multiprocessors";
inline constexpr K kComputeCapability = "compute_capability";
inline constexpr K kMemoryBusWidthBits = "memory_bus_width_bits";
inline constexpr K kMemoryClockKhz = "memory_clock_khz";
inline constexpr K kPcieLinkGenMax = "pcie_link_gen_max";
inline constexpr K kPcieLinkWidthMax = "pcie_link_width_max";
// An all-reduce record's context (the CUDA peer group writes it): "net" when NCCL's P2P and SHM
// transports were off.
inline constexpr K kTransport = "transport";

}  // namespace gpucheck::keys
