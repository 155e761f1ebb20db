// Test-only backends that misbehave on purpose: enabled by GPUCHECK_TEST_BACKENDS only.
#pragma once

#include "backends/backend.h"

#include <memory>
#include <string_view>

namespace gpucheck {

// crash: SIGSEGV while probing; hang: never returns; flood: endless output;
// weird: a device whose name holds quotes, control characters and invalid UTF-8.
bool is_test_backend_kind(std::string_view kind);
std::unique_ptr<Backend> make_test_backend(std::string_view kind);

}  // namespace gpucheck
