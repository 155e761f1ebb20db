// The process environment as a map, the variables that change GPU behaviour, and how a document
// records them without secrets.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

using EnvMap = std::map<std::string, std::string>;

EnvMap current_environment();

// The variables a report records because they change what GPU stacks do (DESIGN.md): an
// allowlist of names and of prefixes of GPU and BLAS stacks (CUDA_, NCCL_, POCL_, ...) for
// device visibility and order, loader and ICD selection, BLAS threads and library paths.
bool is_gpu_relevant_variable(const std::string& name);

// A name that looks like it holds a credential: it contains TOKEN, SECRET, PASSWORD, PASSWD,
// KEY, CREDENTIAL, AUTH, COOKIE, SESSION or SIGNATURE (any case), or has a part (between _ or
// other punctuation) PW, PWD, SIG or starting with PASS (the variables PWD and OLDPWD excepted).
bool is_credential_name(std::string_view name);

// What a document records for a credential's value: that it is set, nothing more.
inline constexpr std::string_view kSetNotRecorded = "(set, not recorded)";
// What stands in for a secret found inside a value.
inline constexpr std::string_view kRedacted = "(redacted)";

// `text` with secrets found by their shape replaced by kRedacted, for values recorded under
// names that are no credential's: tokens of known forms (GitHub ghp_/github_pat_, GitLab
// glpat-, Slack xox?-, AWS AKIA/ASIA key ids), the value of key=value parts whose key is a
// credential's name (token=, password=, api_key=, a signed URL's sig=), and long random-looking
// strings (32+ characters mixing both letter cases and digits, at least 4 bits of entropy per
// character), base64 ones with '/' and '+' too (an AWS secret access key).
std::string redact_secret_values(std::string_view text);

// `text` with the user information of every URL in it removed: "https://user:pass@host/x" →
// "https://host/x" (also "git+ssh://u@h", and URLs inside "--flag=URL").
std::string strip_url_credentials(std::string_view text);

// The recorded variables: GPU-relevant names only, a credential's value as kSetNotRecorded, URL
// user information stripped from every value and secrets found by shape redacted.
EnvMap recorded_environment(const EnvMap& env);

// The whole environment with credentials' values replaced, URL user information stripped and
// secrets found by shape redacted:
// what doctor's checks see, since their evidence quotes values.
EnvMap redacted_environment(const EnvMap& env);
// gpucheck's directory of the user's cache: $XDG_CACHE_HOME/gpucheck (when absolute, as the XDG
// base directory specification asks), else $HOME/.cache/gpucheck; nullopt when neither is set.
std::optional<std::filesystem::path> user_cache_dir(const EnvMap& env);

}  // namespace gpucheck
