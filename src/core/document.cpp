// Building the document's opening: schema tag and provenance.
#include "core/document.h"

#include "core/build_info.h"
#include "core/json_keys.h"
#include "core/sanitize.h"
#include "core/version.h"

#include <ctime>

namespace gpucheck {

std::string utc_timestamp() {
  return utc_timestamp(std::chrono::system_clock::now());
}

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

nlohmann::json make_provenance(const std::vector<std::string>& argv, const EnvMap& env) {
  namespace k = keys;
  nlohmann::json vars = nlohmann::json::object();
  // Secrets stay out: an allowlist of names, credentials recorded as set only, no user:pass@,
  // secrets found by their shape redacted.
  for (const auto& [name, value] : recorded_environment(env))
    vars[sanitize(name)] = sanitize(value);
  nlohmann::json args = nlohmann::json::array();
  // An argument may carry a secret too (-o out/ghp_....json, a signed URL): redacted by shape.
  for (const auto& a : argv)
    args.push_back(sanitize(redact_secret_values(strip_url_credentials(a))));
  return {{k::kGpucheckVersion, kVersion}, {k::kGitCommit, kGitCommit},
          {k::kTime, utc_timestamp()},     {k::kArgv, args},
          {k::kEnvironment, vars},         {k::kBackendsBuilt, built_backend_names()}};
}

nlohmann::json make_document(const std::string& command, const std::vector<std::string>& argv,
                             const EnvMap& env) {
  return {{keys::kSchema, keys::kSchemaVersion},
          {keys::kCommand, command},
          {keys::kProvenance, make_provenance(argv, env)}};
}

}  // namespace gpucheck
