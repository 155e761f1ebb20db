// Reading the environment once, the list of variables worth recording, and keeping secrets out.
#include "core/environment.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

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

constexpr std::array<std::string_view, 10> kCredentialWords{
    "TOKEN",      "SECRET", "PASSWORD", "PASSWD",  "KEY",
    "CREDENTIAL", "AUTH",   "COOKIE",   "SESSION", "SIGNATURE"};

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
  if (std::any_of(kCredentialWords.begin(), kCredentialWords.end(),
                  [&](std::string_view w) { return upper.find(w) != std::string::npos; }))
    return true;
  // Short words only as whole parts of the name (NCCL_NET_PLUGIN_PASS, GPUCHECK_API_PW), so
  // BYPASS or COMPASS are no credentials; PWD and OLDPWD are the shell's directories.
  if (upper == "PWD" || upper == "OLDPWD") return false;
  std::size_t start = 0;
  while (start < upper.size()) {
    std::size_t end = start;
    while (end < upper.size() && std::isalnum(static_cast<unsigned char>(upper[end]))) ++end;
    const std::string_view part = std::string_view(upper).substr(start, end - start);
    // SIG: a signed URL's signature (Azure SAS "sig=", "X-Goog-Sig"), which grants access.
    if (part.rfind("PASS", 0) == 0 || part == "PW" || part == "PWD" || part == "SIG") return true;
    start = end + 1;
  }
  return false;
}

namespace {

bool token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

// Shannon entropy in bits per character.
double entropy(std::string_view s) {
  std::array<int, 256> counts{};
  for (char c : s) ++counts[static_cast<unsigned char>(c)];
  double h = 0;
  for (int n : counts)
    if (n > 0) {
      const double p = static_cast<double>(n) / static_cast<double>(s.size());
      h -= p * std::log2(p);
    }
  return h;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.rfind(prefix, 0) == 0;
}

// A token of a known credential form: GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_),
// GitLab (glpat-), Slack (xoxb-, xoxp-, ...), AWS access key ids (AKIA..., ASIA...).
bool known_token_form(std::string_view t) {
  for (std::string_view p : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"})
    if (starts_with(t, p) && t.size() >= p.size() + 16) return true;
  if (t.size() >= 15 && starts_with(t, "xox") &&
      std::string_view("abprs").find(t[3]) != std::string_view::npos && t[4] == '-')
    return true;
  for (std::string_view p : {"AKIA", "ASIA", "AGPA", "AIDA", "AROA"})
    if (t.size() == 20 && starts_with(t, p) && std::all_of(t.begin(), t.end(), [](char c) {
          return std::isupper(static_cast<unsigned char>(c)) ||
                 std::isdigit(static_cast<unsigned char>(c));
        }))
      return true;
  return false;
}

// A long random-looking piece (32+ characters of letters in both cases and digits, at least 4
// bits of entropy each): an API key or password. Hex digests, UUIDs and Nix-style hashes have
// one letter case only, so GPU UUIDs and store paths stay.
bool random_looking(std::string_view t) {
  if (t.size() < 32) return false;
  bool upper = false, lower = false, digit = false;
  for (char c : t) {
    const auto u = static_cast<unsigned char>(c);
    upper |= std::isupper(u) != 0;
    lower |= std::islower(u) != 0;
    digit |= std::isdigit(u) != 0;
  }
  return upper && lower && digit && entropy(t) >= 4.0;
}

// The text with each longest run of characters that in_run accepts passed to rewrite, which
// appends what stands for it to out; the characters between runs are kept.
template <typename InRun, typename Rewrite>
std::string rewrite_runs(std::string_view text, InRun in_run, Rewrite rewrite) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!in_run(text[i])) {
      out += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && in_run(text[end])) ++end;
    rewrite(text.substr(i, end - i), out);
    i = end;
  }
  return out;
}

bool base64_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=';
}

// Runs of base64 text with a '+' or '/' in them that look random (an AWS secret access key:
// 40 characters with '/' and '+'), which the token pass would cut into short pieces. A run
// that starts with '/' is a path.
std::string redact_base64_runs(std::string_view text) {
  return rewrite_runs(text, base64_char, [](std::string_view run, std::string& out) {
    std::string letters;
    for (char c : run)
      if (std::isalnum(static_cast<unsigned char>(c))) letters += c;
    const bool redact = run.front() != '/' && run.find_first_of("+/") != std::string_view::npos &&
                        random_looking(letters);
    out.append(redact ? kRedacted : run);
  });
}

// The value of every key=value part whose key names a credential (token=..., password=...).
std::string redact_credential_assignments(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos) break;
    std::size_t key = eq;
    while (key > pos && (token_char(text[key - 1]) || text[key - 1] == '.')) --key;
    std::size_t end = eq + 1;
    while (end < text.size() &&
           std::string_view(",;& \t\n\"'").find(text[end]) == std::string_view::npos)
      ++end;
    out.append(text.substr(pos, eq + 1 - pos));
    if (key < eq && end > eq + 1 && is_credential_name(text.substr(key, eq - key)))
      out.append(kRedacted);
    else
      out.append(text.substr(eq + 1, end - eq - 1));
    pos = end;
  }
  out.append(text.substr(std::min(pos, text.size())));
  return out;
}

}  // namespace

std::string redact_secret_values(std::string_view text) {
  const std::string assigned = redact_credential_assignments(text);
  // Tokens first (a GitHub token's "ghp_" is cut off by a base64 run), then base64 runs, whose
  // pieces between '/' and '+' were too short for the token pass.
  return redact_base64_runs(
      rewrite_runs(assigned, token_char, [](std::string_view token, std::string& out) {
        if (known_token_form(token)) {
          out.append(kRedacted);
          return;
        }
        // Pieces between dashes judged alone: a UUID's groups are short.
        std::size_t p = 0;
        while (p <= token.size()) {
          std::size_t dash = token.find('-', p);
          if (dash == std::string_view::npos) dash = token.size();
          const std::string_view piece = token.substr(p, dash - p);
          out.append(random_looking(piece) ? kRedacted : piece);
          if (dash < token.size()) out += '-';
          p = dash + 1;
        }
      }));
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
    out.emplace(name, is_credential_name(name)
                          ? std::string(kSetNotRecorded)
                          : redact_secret_values(strip_url_credentials(value)));
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
