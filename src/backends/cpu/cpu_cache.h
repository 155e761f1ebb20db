// The size of the last-level cache, which decides when streaming (non-temporal) stores pay off.
#pragma once

#include <cstddef>

namespace gpucheck::cpu {

// Bytes of the highest cache level of CPU 0, from /sys/devices/system/cpu/cpu0/cache (the
// kernel's view); sysconf's guess where sysfs is missing (glibc can be far off in VMs: it
// reports 320 MiB for a 32 MiB L3 on some AMD guests); 32 MiB where neither answers. Read once.
std::size_t last_level_cache_bytes();

// Parses a sysfs cache size such as "32768K" or "1M" into bytes; 0 when it does not parse.
std::size_t parse_cache_size(const char* text);

}  // namespace gpucheck::cpu
