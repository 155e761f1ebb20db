// One stress child's whole run: the plan's tests on one device, one after another, each until
// its share of the duration ends, with telemetry throughout; everything reported as event lines.
#pragma once

#include "backends/device.h"
#include "stress/context.h"
#include "stress/faults.h"
#include "stress/plan.h"

#include <vector>

namespace gpucheck::stress {

// open_peers: for the copy test's peer copies (plan.peer); empty where the backend has none.
void run_stress(const StressPlan& plan, Device& device, std::vector<Fault> faults, const Emit& emit,
                PeerOpener open_peers = {});

// The GEMM dtypes of a plan on a device: those named, else the backend's default, falling back
// to f16 and then f32 where the device cannot run it.
std::vector<DType> gemm_dtypes(const StressPlan& plan, const Device& device);

}  // namespace gpucheck::stress
