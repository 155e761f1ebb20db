// Probing every backend, each in its own child, all at once.
#pragma once

#include "core/child_process.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace gpucheck::probe {

// One section per active backend (built ones, then test-only ones), then the backends that are
// not built here. A child that crashes, hangs, floods or writes garbage becomes a "failed"
// section naming what happened; the others are unaffected.
nlohmann::json probe_backends(const EnvMap& env, const ChildLimits& limits);

// The facts sections of a probe document: host, cpu and memory read under root, and every
// backend's section (probe_backends). Shared by probe-like steps of other commands (qualify).
// Without live_backends the backends list is empty: their children probe this host, which is
// not the system a --sysroot describes.
nlohmann::json probe_sections(const std::filesystem::path& root, const EnvMap& env,
                              const ChildLimits& limits, bool live_backends = true);

// Inside the child: probes one backend and writes its section to the reserved stdout.
int run_probe_child(const std::string& backend, const EnvMap& env);

}  // namespace gpucheck::probe
