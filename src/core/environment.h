// The process environment as a map, and the variables that change GPU behaviour.
#pragma once

#include <map>
#include <string>

namespace gpucheck {

using EnvMap = std::map<std::string, std::string>;

EnvMap current_environment();

// The variables a report records because they change what GPU stacks do (DESIGN.md):
// device visibility and order, loader and ICD selection, BLAS threads, library paths.
bool is_gpu_relevant_variable(const std::string& name);

}  // namespace gpucheck
