// The CPU bench child's side of the OpenBLAS kernel selection: before the child loads
// its BLAS it learns, from a probe child, which kernel the library picks by itself, so that the
// CPU device can select a better one first; and a record that a gpucheck-selected kernel failed
// to verify is measured again with the library's own choice, in a child of its own.
#pragma once

#include "backends/device.h"
#include "bench/cell.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <cstddef>

namespace gpucheck::app {

// Fills options.blas_library_kernel / blas_dynamic_arch from a `__child probe --backend cpu`
// run, unless OPENBLAS_CORETYPE is set (the user's choice) or GPUCHECK_BLAS_SELECT=library.
void learn_library_blas_kernel(const EnvMap& env, DeviceOptions& options);

// True for a CPU GEMM or conv record that failed verification on a kernel gpucheck selected.
bool selected_blas_kernel_failed(const nlohmann::json& record);

// Runs plan.cells[cell] again in a CPU bench child that keeps the library's own kernel, and
// returns its record, whose context says what happened to gpucheck's selection.
nlohmann::json rerun_with_library_kernel(const bench::BenchPlan& plan, std::size_t cell,
                                         const nlohmann::json& failed);

}  // namespace gpucheck::app
