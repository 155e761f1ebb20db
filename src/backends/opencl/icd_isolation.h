// Naming the ICD that crashed or hung the OpenCL probe: each ICD is probed alone in its own
// child, with the loader pointed at a directory that holds only its .icd file.
#pragma once

#include "core/child_process.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::opencl {

// One ICD to probe alone and the loader environment that makes it the only one.
struct LoneIcd {
  std::string name;     // the .icd path, or the library a variable names
  std::string library;  // the library it names
  std::map<std::string, std::optional<std::string>> env;  // set or unset for the child
};

// What the OpenCL loader of this system (read from files only: nothing is loaded here) would
// load, each as a LoneIcd; `scratch` is an existing empty directory the .icd copies go into.
std::vector<LoneIcd> lone_icds(const EnvMap& env, const std::string& scratch);

// Probes every ICD alone (children of `__child probe --backend opencl`, all at once, under
// `limits`) and reports {"culprits": [names], "fine": [names], "icds": [{"icd", "library",
// "outcome": ok|failed, "what", "platforms"}]}. Called by the parent after the opencl probe
// child crashed, hung or failed to enumerate.
nlohmann::json diagnose_failed_probe(const EnvMap& env, const ChildLimits& limits);

// "ICD culprit: /etc/OpenCL/vendors/x.icd (killed by signal 11 (SIGSEGV)); fine: pocl.icd" from
// diagnose_failed_probe's result; empty when no ICD failed alone.
std::string describe_culprits(const nlohmann::json& isolation);

}  // namespace gpucheck::opencl
