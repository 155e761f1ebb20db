// Building the document's opening: schema tag and provenance.
#include "core/document.h"

#include "core/build_info.h"
#include "core/json_keys.h"
#include "core/sanitize.h"
#include "core/version.h"

#include <ctime>

namespace gpucheck {

std::string utc_timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

nlohmann::json make_provenance(const std::vector<std::string>& argv, const EnvMap& env) {
  namespace k = keys;
  nlohmann::json vars = nlohmann::json::object();
  for (const auto& [name, value] : env)
    if (is_gpu_relevant_variable(name)) vars[sanitize(name)] = sanitize(value);
  nlohmann::json args = nlohmann::json::array();
  for (const auto& a : argv) args.push_back(sanitize(a));
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
