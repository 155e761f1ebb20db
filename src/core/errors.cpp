// Error types and their messages.
#include "core/errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace gpucheck {

namespace {
int rank(ExitCode c) {
  switch (c) {
    case ExitCode::kUsage: return 3;
    case ExitCode::kDeviceMissing: return 2;
    case ExitCode::kFailed: return 1;
    case ExitCode::kOk: return 0;
  }
  return 0;
}
}  // namespace

ExitCode worse_exit(ExitCode a, ExitCode b) { return rank(a) >= rank(b) ? a : b; }

ApiError::ApiError(std::string api, long long code, std::string code_name, std::string call,
                   const char* file, int line)
    : std::runtime_error(fmt::format("{}: {} failed: {} ({}) at {}:{}", api, call, code_name, code,
                                     file, line)),
      api_(std::move(api)),
      code_(code),
      code_name_(std::move(code_name)),
      call_(std::move(call)) {}

void throw_errno(const char* call, const char* file, int line) {
  int e = errno;
  throw ApiError("posix", e, std::strerror(e), call, file, line);
}

}  // namespace gpucheck
