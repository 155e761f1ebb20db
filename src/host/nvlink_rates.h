// The NVLink error rates' bands, as DCGM's health watch judges them and as gpucheck measured a
// healthy link: doctor's nvlink_errors and stress's NVLink notes both judge against them, so
// they sit below both (stress does not use doctor).
#pragma once

#include <string>

namespace gpucheck::host {

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

// "0.93" below 10, "12" above: rates as people read them.
std::string rate_text(double per_s);

}  // namespace gpucheck::host
