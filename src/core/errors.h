// Typed errors: usage errors (exit 2) and vendor API errors that name the call, code and meaning.
#pragma once

#include <stdexcept>
#include <string>

namespace gpucheck {

// Process exit codes; DESIGN.md "Exit codes". When several apply: 2 over 3 over 1 over 0.
enum class ExitCode : int {
  kOk = 0,
  kFailed = 1,         // a check FAILed, a record failed or mismatched, a requirement unmet
  kUsage = 2,          // a flag, value, device name or config that does not parse
  kDeviceMissing = 3,  // bench only: a named device is not there, or its child died silently
};

// Combines two outcomes by DESIGN.md's precedence (2 > 3 > 1 > 0).
ExitCode worse_exit(ExitCode a, ExitCode b);

// Bad input from the user: main prints the message and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A vendor or system call failed: which API, which call, the code and its name.
class ApiError : public std::runtime_error {
 public:
  ApiError(std::string api, long long code, std::string code_name, std::string call,
           const char* file, int line);
  const std::string& api() const { return api_; }
  long long code() const { return code_; }
  const std::string& code_name() const { return code_name_; }
  const std::string& call() const { return call_; }

 private:
  std::string api_;
  long long code_;
  std::string code_name_;
  std::string call_;
};

// The device is unusable until the process ends (a sticky CUDA error, a lost device): the bench
// engine records the cell and rethrows, so the device's child ends instead of failing every
// later cell the same way.
class DeviceLostError : public ApiError {
 public:
  using ApiError::ApiError;
};

// Throws ApiError for a POSIX call that returned -1 with errno set.
[[noreturn]] void throw_errno(const char* call, const char* file, int line);

}  // namespace gpucheck

// Checks a POSIX call that signals failure with -1 and errno.
#define GC_POSIX_CHECK(expr)                                                         \
  do {                                                                               \
    if ((expr) == -1) ::gpucheck::throw_errno(#expr, __FILE__, __LINE__);            \
  } while (0)
