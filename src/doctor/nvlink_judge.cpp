// The NVLink counters' growth per GPU and link, judged by kind and rate.
#include "doctor/nvlink_judge.h"

#include "doctor/check_defs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gpucheck::doctor {

namespace {

using host::kNvlinkCrcLimitPerS;
using host::kNvlinkHealthyBandPerS;
using host::rate_text;

struct Kind {
  std::string_view counter;  // NVML's name, as the facts hold it
  std::string_view shown;    // as the finding says it
  bool fatal;                // any growth under load fails (DCGM_LIMIT_MAX_LWLINK_ERROR 1)
  Code code;
};

constexpr std::array<Kind, 5> kKinds{{
    {"replay", "replay", true, "GC-NVLINK-REPLAY"_gc},
    {"recovery", "recovery", true, "GC-NVLINK-RECOVERY"_gc},
    {"crc_flit", "CRC-flit", false, "GC-NVLINK-CRC"_gc},
    {"crc_data", "CRC-data", false, "GC-NVLINK-CRC"_gc},
    {"ecc_data", "ECC-data", false, "GC-NVLINK-ECC-DATA"_gc},
}};

constexpr std::string_view kFatalFix =
    "drain the node: a link that replays or recovers under load is failing (dcgmi diag -r 3; "
    "reseat or replace the NVLink bridge or board); nvidia-smi nvlink -e -i <index> shows the "
    "counters";
constexpr std::string_view kLimitFix =
    "drain the node: errors at DCGM's limit mean a failing link (dcgmi diag -r 3; reseat or "
    "replace the bridge or board); nvidia-smi nvlink -e -i <index> shows the counters";
constexpr std::string_view kBandFix =
    "watch the rate (nvidia-smi nvlink -e -i <index>, read twice under load); a link that stays "
    "above the band is marginal: reseat the bridge or board, dcgmi diag -r 3";

struct KindTotal {
  std::uint64_t total = 0;
  double worst_rate = 0;  // per link, per second
  std::uint64_t worst_growth = 0;
  unsigned worst_link = 0;
  std::size_t links_grown = 0;
};

Finding judge_gpu(const NvlinkGpuGrowth& g, std::optional<double> seconds,
                  std::string_view during) {
  std::vector<std::string> parts;
  CheckStatus status = CheckStatus::kPass;
  Code code;
  std::string fix, verdict;
  // The first problem at the worst status decides the code, the fix and the verdict.
  auto raise = [&](CheckStatus s, Code c, std::string_view f, std::string v) {
    if (status != CheckStatus::kPass && worse(status, s) == status) return;
    status = s;
    code = c;
    fix = f;
    verdict = std::move(v);
  };
  for (const auto& kind : kKinds) {
    KindTotal t;
    for (const auto& l : g.links) {
      auto it = l.growth.find(std::string(kind.counter));
      if (it == l.growth.end() || it->second == 0) continue;
      ++t.links_grown;
      t.total += it->second;
      if (it->second > t.worst_growth) {
        t.worst_growth = it->second;
        t.worst_link = l.link;
      }
    }
    if (t.total == 0) continue;
    const std::string corrected = kind.counter == "ecc_data" ? " corrected" : "";
    if (!seconds) {
      parts.push_back(fmt::format("{} +{}{} (worst link {}, +{})", kind.shown, t.total, corrected,
                                  t.worst_link, t.worst_growth));
    } else {
      t.worst_rate = static_cast<double>(t.worst_growth) / *seconds;
      parts.push_back(fmt::format("{} +{}{} ({}/s on the worst link, {})", kind.shown, t.total,
                                  corrected, rate_text(t.worst_rate), t.worst_link));
    }
    if (kind.fatal) {
      raise(CheckStatus::kFail, kind.code, kFatalFix,
            fmt::format("{} errors {} fail, as in DCGM's health watch", kind.shown, during));
      continue;
    }
    if (!seconds) {
      raise(CheckStatus::kWarn, kind.code, kBandFix,
            fmt::format("{} grew {} and no duration is known to make it a rate (DCGM warns on "
                        "any growth)",
                        kind.shown, during));
      continue;
    }
    const double gpu_rate = static_cast<double>(t.total) / *seconds;
    if (gpu_rate >= kNvlinkCrcLimitPerS)
      raise(CheckStatus::kFail, kind.code, kLimitFix,
            fmt::format("{} at {}/s on the GPU reaches DCGM's limit of {:g}/s", kind.shown,
                        rate_text(gpu_rate), kNvlinkCrcLimitPerS));
    else if (t.worst_rate > kNvlinkHealthyBandPerS)
      raise(CheckStatus::kWarn, kind.code, kBandFix,
            fmt::format("{} on link {} above the healthy {:g}/s per link (DCGM's limit {:g}/s)",
                        kind.shown, t.worst_link, kNvlinkHealthyBandPerS, kNvlinkCrcLimitPerS));
  }
  std::string line =
      fmt::format("{}: {} link{}", g.label, g.links.size(), g.links.size() == 1 ? "" : "s");
  if (parts.empty()) return {CheckStatus::kPass, {}, line + ", no error counter grew", ""};
  for (const auto& p : parts) line += ", " + p;
  if (status == CheckStatus::kPass)
    verdict = fmt::format("within the healthy {:g}/s per link (DCGM's limit {:g}/s)",
                          kNvlinkHealthyBandPerS, kNvlinkCrcLimitPerS);
  return {status, code, line + ", " + verdict, fix};
}

}  // namespace

NvlinkJudgement judge_nvlink_growth(const std::vector<NvlinkGpuGrowth>& gpus,
                                    std::optional<double> seconds, std::string_view during) {
  NvlinkJudgement out;
  if (seconds && *seconds <= 0) seconds.reset();
  std::vector<Finding> resets;
  for (const auto& g : gpus) {
    if (g.links.empty()) continue;
    out.findings.push_back(judge_gpu(g, seconds, during));
    for (const auto& l : g.links) {
      std::vector<std::string> grown;
      for (const auto& kind : kKinds) {
        auto it = l.growth.find(std::string(kind.counter));
        if (it == l.growth.end() || it->second == 0) continue;
        grown.push_back(seconds ? fmt::format("{} +{} ({}/s)", kind.counter, it->second,
                                              rate_text(static_cast<double>(it->second) / *seconds))
                                : fmt::format("{} +{}", kind.counter, it->second));
      }
      out.links.push_back(fmt::format("{} NVLink {} to {}: {}", g.label, l.link, l.remote,
                                      grown.empty() ? "no counter grew" : join(grown, ", ")));
      for (const auto& back : l.went_back)
        resets.push_back(
            {CheckStatus::kInfo,
             {},
             fmt::format("{}: NVLink {} {} (reset between the readings)", g.label, l.link, back),
             ""});
    }
  }
  out.findings.insert(out.findings.end(), resets.begin(), resets.end());
  return out;
}

}  // namespace gpucheck::doctor
