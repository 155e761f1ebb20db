// The explicit list of backends this build knows (no static self-registration): the factory of
// each, by name. What the rest of gpucheck knows of a backend (its device names, which devices
// are GPUs or the host's cores, whether it is built) is its entry in core/backend_descriptors.h,
// which the layers that may not include backends/ (report, qualify) read too.
#pragma once

#include "backends/backend.h"
#include "core/build_info.h"
#include "core/child_process.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gpucheck {

// Built backends plus the test-only ones named in GPUCHECK_TEST_BACKENDS (crash, hang, flood,
// weird): those exist so the isolation and sanitising paths can be tested without a GPU.
std::vector<std::string> active_backend_names(const EnvMap& env);

// Creates one backend by name; nullptr when the name is not active in this environment.
std::unique_ptr<Backend> make_backend(const std::string& name, const EnvMap& env);

// After a backend's probe child crashed, hung or failed: what the backend can find out more in
// the parent, added to its section (OpenCL probes each ICD alone and names the one that fails);
// nothing for a backend that has no such step.
void explain_failed_probe(const std::string& name, nlohmann::json& section, const EnvMap& env,
                          const ChildLimits& limits);

}  // namespace gpucheck
