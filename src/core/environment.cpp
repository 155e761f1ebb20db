// Reading the environment once, the list of variables worth recording, and keeping secrets out.
#include "core/environment.h"

#include <algorithm>
#include <array>
#include <cctype>

extern char** environ;

namespace gpucheck {

namespace {

constexpr std::array<std::string_view, 16> kExact{"LD_LIBRARY_PATH",
                                                  "LIBRARY_PATH",
                                                  "LD_PRELOAD",
                                                  "PATH",
                                                  "OMP_NUM_THREADS",
                                                  "MKL_NUM_THREADS",
                                                  "OPENCL_VENDOR_PATH",
                                                  "XLA_FLAGS",
                                                  "CONDA_PREFIX",
                                                  "VIRTUAL_ENV",
                                                  "GPU_DEVICE_ORDINAL",
                                                  "HSA_OVERRIDE_GFX_VERSION",
                                                  "PYTORCH_CUDA_ALLOC_CONF",
                                                  "TF_FORCE_GPU_ALLOW_GROWTH",
                                                  "MKL_DEBUG_CPU_TYPE",
                                                  "CI"};

// Families of GPU and BLAS set-up variables. NV_ is not one: NVIDIA's own variables start with
// NVIDIA_ or CUDA_, and NV_ names are as often a site's API tokens.
constexpr std::array<std::string_view, 12> kPrefixes{"CUDA_", "NVIDIA_",  "CUBLAS", "CUDNN_",
                                                     "NCCL_", "OCL_ICD_", "POCL_",  "OPENBLAS_",
                                                     "GOTO_", "ROCR_",    "HIP_",   "GPUCHECK_"};

constexpr std::array<std::string_view, 9> kCredentialWords{
    "TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"};

bool scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

}  // namespace

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

bool is_gpu_relevant_variable(const std::string& name) {
  for (auto e : kExact)
    if (name == e) return true;
  for (auto p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

bool is_credential_name(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::any_of(kCredentialWords.begin(), kCredentialWords.end(),
                     [&](std::string_view w) { return upper.find(w) != std::string::npos; });
}

std::string strip_url_credentials(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t sep = text.find("://", pos);
    if (sep == std::string_view::npos) break;
    // A scheme: letters, digits, + - . right before "://", starting with a letter.
    std::size_t start = sep;
    while (start > pos && scheme_char(text[start - 1])) --start;
    const std::size_t authority = sep + 3;
    if (start == sep || !std::isalpha(static_cast<unsigned char>(text[start]))) {
      out.append(text.substr(pos, authority - pos));
      pos = authority;
      continue;
    }
    // The authority ends at / ? # or whitespace; user information is what precedes its last @.
    std::size_t end = authority;
    while (end < text.size() &&
           std::string_view("/?# \t\n\"'").find(text[end]) == std::string_view::npos)
      ++end;
    const std::size_t at = text.substr(authority, end - authority).rfind('@');
    out.append(text.substr(pos, authority - pos));
    pos = at == std::string_view::npos ? authority : authority + at + 1;
  }
  out.append(text.substr(pos));
  return out;
}

EnvMap recorded_environment(const EnvMap& env) {
  EnvMap out;
  for (const auto& [name, value] : redacted_environment(env))
    if (is_gpu_relevant_variable(name)) out.emplace(name, value);
  return out;
}

EnvMap redacted_environment(const EnvMap& env) {
  EnvMap out;
  for (const auto& [name, value] : env)
    out.emplace(name, is_credential_name(name) ? std::string(kSetNotRecorded)
                                               : strip_url_credentials(value));
  return out;
}

std::optional<std::filesystem::path> user_cache_dir(const EnvMap& env) {
  auto xdg = env.find("XDG_CACHE_HOME");
  if (xdg != env.end() && !xdg->second.empty() && xdg->second.front() == '/')
    return std::filesystem::path(xdg->second) / "gpucheck";
  auto home = env.find("HOME");
  if (home != env.end() && !home->second.empty())
    return std::filesystem::path(home->second) / ".cache" / "gpucheck";
  return std::nullopt;
}

}  // namespace gpucheck
