// Resolving a profile name against the shipped profiles.
#include "qualify/profile_search.h"

#include "core/errors.h"

#include <fmt/format.h>

#include <set>
#include <system_error>

namespace gpucheck::qualify {

namespace fs = std::filesystem;

std::string find_profile(const std::string& arg, const std::vector<fs::path>& data_dirs) {
  std::error_code ec;
  if (arg.empty()) throw UsageError("--profile: empty");
  if (fs::exists(arg, ec) || arg.find('/') != std::string::npos) return arg;
  const std::string file = arg.ends_with(".toml") ? arg : arg + ".toml";
  std::set<std::string> known;
  std::string searched;
  for (const auto& dir : data_dirs) {
    const fs::path qualify_dir = dir / "configs" / "qualify";
    searched += (searched.empty() ? "" : ", ") + qualify_dir.string();
    if (fs::is_regular_file(qualify_dir / file, ec)) return (qualify_dir / file).string();
    for (const auto& e : fs::directory_iterator(qualify_dir, ec))
      if (e.path().extension() == ".toml") known.insert(e.path().stem().string());
  }
  std::string names;
  for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
  throw UsageError(fmt::format("--profile: '{}' is neither a file nor a shipped profile ({}){}",
                               arg, names.empty() ? "none found" : "shipped: " + names,
                               searched.empty() ? "" : " in " + searched));
}

}  // namespace gpucheck::qualify
