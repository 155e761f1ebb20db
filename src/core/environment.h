// The process environment as a map, and the variables that change GPU behaviour.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace gpucheck {

using EnvMap = std::map<std::string, std::string>;

EnvMap current_environment();

// The variables a report records because they change what GPU stacks do (DESIGN.md):
// device visibility and order, loader and ICD selection, BLAS threads, library paths.
bool is_gpu_relevant_variable(const std::string& name);

// gpucheck's directory of the user's cache: $XDG_CACHE_HOME/gpucheck (when absolute, as the XDG
// base directory specification asks), else $HOME/.cache/gpucheck; nullopt when neither is set.
std::optional<std::filesystem::path> user_cache_dir(const EnvMap& env);

}  // namespace gpucheck
