// The private vendors directory that hides irregular .icd entries from the loader.
#include "backends/opencl/icd_guard.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace gpucheck::opencl {

namespace fs = std::filesystem;

std::unique_ptr<IcdGuard> IcdGuard::protect_this_process() {
  const SystemFacts facts = SystemFacts::of_this_process();
  std::unique_ptr<IcdGuard> guard(new IcdGuard());
  guard->skipped_ = irregular_icds(facts, loader_kind_from_files(facts));
  if (guard->skipped_.empty()) return guard;
  guard->dir_ = std::make_unique<TempDir>();
  const std::string& dir = guard->dir_->path();
  if (dir.empty()) {
    spdlog::warn("OpenCL: {} is {}; no private directory to keep the loader from it (mkdtemp)",
                 guard->skipped_.front().path, guard->skipped_.front().what);
    return guard;
  }
  // The regular .icd files of the same source, each a link in the private directory. A source
  // that is itself the irregular .icd (OCL_ICD_VENDORS naming a FIFO) leaves the directory empty.
  const std::string source = guard->skipped_.front().source;
  std::error_code ec;
  if (fs::is_directory(source, ec)) {
    for (fs::directory_iterator it(source, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path p = it->path();
      std::error_code st_ec;
      if (p.extension() != ".icd" || !fs::is_regular_file(fs::status(p, st_ec))) continue;
      std::error_code link_ec;
      fs::create_symlink(fs::absolute(p, link_ec), fs::path(dir) / p.filename(), link_ec);
      if (link_ec)
        spdlog::warn("OpenCL: cannot link {} into {}: {}", p.string(), dir, link_ec.message());
    }
  }
  for (const auto& s : guard->skipped_)
    spdlog::debug("OpenCL: {} is {}: the loader is kept from it (OCL_ICD_VENDORS={})", s.path,
                  s.what, dir);
  if (::setenv("OCL_ICD_VENDORS", dir.c_str(), 1) != 0)
    spdlog::warn("OpenCL: setenv(OCL_ICD_VENDORS) failed");
  return guard;
}

}  // namespace gpucheck::opencl
