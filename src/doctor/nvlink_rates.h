// NVLink error counters judged by kind and by rate, as DCGM's health watch judges them: replay and
// recovery errors growing under load fail; CRC (flit, data) and corrected data-ECC errors are
// judged per second against a healthy band and DCGM's limit. One line per GPU, one per link.
#pragma once

#include "doctor/check_util.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// DCGM_LIMIT_MAX_LWLINK_CRC_ERROR (DCGM's dcgm_gpu_hardware_limits.h): "CRC errors only matter at
// rates of 100+ per second", per GPU and kind of CRC error. At or above it: FAIL.
inline constexpr double kNvlinkCrcLimitPerS = 100.0;
// What a healthy link grows by under load, per second, measured by gpucheck itself on the device
// machine's healthy 2x H200 (NVSwitch, 18 links a GPU; two doctor runs of 8-9 s, 2026-11-27): the
// worst link of each GPU at 4.5-5.9/s CRC-data and 6.6-9.6/s ECC-data, most links at 1-2/s. Twice
// the worst seen leaves room for a busier load without hiding a link that errs ten times as often
// as its siblings. Up to it (inclusive): PASS with the rate said; above it and below DCGM's limit:
// WARN.
inline constexpr double kNvlinkHealthyBandPerS = 20.0;

// The growth of one link's counters between two readings, by NVML's counter name (replay,
// recovery, crc_flit, crc_data, ecc_data); counters read only once are absent.
struct NvlinkLinkGrowth {
  unsigned link = 0;
  std::string remote;  // "an NVSwitch (0000:...)", "cuda1"
  std::map<std::string, std::uint64_t> growth;
  // Counters lower at the second reading (reset between them): "crc_data from 40 to 2".
  std::vector<std::string> went_back;
};

struct NvlinkGpuGrowth {
  std::string label;  // "cuda0"
  std::vector<NvlinkLinkGrowth> links;
};

struct NvlinkJudgement {
  // One per GPU (PASS, WARN or FAIL with its code), then INFO for counters that went back.
  std::vector<Finding> findings;
  std::vector<std::string> links;  // one line per link, for the evidence
};

// `seconds`: the time between the two readings; nullopt when unknown, when any growth of CRC or
// ECC-data warns (as DCGM does without a rate). `during`: "during doctor's load".
NvlinkJudgement judge_nvlink_growth(const std::vector<NvlinkGpuGrowth>& gpus,
                                    std::optional<double> seconds, std::string_view during);

// "0.93" below 10, "12" above: rates as people read them.
std::string rate_text(double per_s);

}  // namespace gpucheck::doctor
