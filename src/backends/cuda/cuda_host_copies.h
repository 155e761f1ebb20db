// Stress's host copies on one GPU: uploads, downloads and checksums on three streams of their
// own, so the copy engines of both directions run at once (StressOps::host_copy_queues).
#pragma once

#include "backends/device.h"

#include <cstddef>
#include <memory>

namespace gpucheck::cuda {

// On device `device` (its index), whose `sms` multiprocessors size the checksum's partials.
std::unique_ptr<HostCopyQueues> open_cuda_host_copy_queues(int device, int sms, std::size_t events);

}  // namespace gpucheck::cuda
