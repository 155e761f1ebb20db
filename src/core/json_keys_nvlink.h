// The NVLink counters a stress run's telemetry keeps per kind (summed over the GPU's active
// links) beside core/json_keys.h's nvlink_errors total, so stress judges them as doctor does.
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kCounterNvlinkReplay = "nvlink_replay";
inline constexpr K kCounterNvlinkRecovery = "nvlink_recovery";
inline constexpr K kCounterNvlinkCrcFlit = "nvlink_crc_flit";
inline constexpr K kCounterNvlinkCrcData = "nvlink_crc_data";
inline constexpr K kCounterNvlinkEccData = "nvlink_ecc_data";
inline constexpr K kCounterNvlinkActiveLinks = "nvlink_active_links";  // links read, not a count

}  // namespace gpucheck::keys
