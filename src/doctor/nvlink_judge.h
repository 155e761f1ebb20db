// NVLink error counters judged by kind and by rate, as DCGM's health watch judges them: replay and
// recovery errors growing under load fail; CRC (flit, data) and corrected data-ECC errors are
// judged per second against a healthy band and DCGM's limit (host/nvlink_rates.h, which stress
// shares). One line per GPU, one per link.
#pragma once

#include "doctor/check_util.h"
#include "host/nvlink_rates.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

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

}  // namespace gpucheck::doctor
