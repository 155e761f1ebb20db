// Reading the described system through its root prefix.
#include "host/host_view.h"

#include "core/files.h"

#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>

namespace gpucheck::host {

namespace fs = std::filesystem;

namespace {

std::string parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? "/" : std::string(path.substr(0, slash));
}

std::string strip_trailing_slash(std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.ends_with('/')) p.pop_back();
  return p;
}

}  // namespace

std::string HostView::host_path(std::string_view path) const {
  const std::string r = root.string();
  if (r.empty() || r == "/") return std::string(path);
  std::string base = strip_trailing_slash(r);
  if (path.starts_with('/')) return base + std::string(path);
  return base + "/" + std::string(path);
}

std::optional<std::string> HostView::read_file(std::string_view path, std::size_t max_bytes) const {
  // Regular files only, opened without blocking: a FIFO under --sysroot must not hang doctor.
  return read_text_file(host_path(path), max_bytes);
}

bool HostView::exists(std::string_view path) const {
  if (stat_overrides.contains(strip_trailing_slash(path))) return true;
  std::error_code ec;
  return fs::exists(host_path(path), ec);
}

bool HostView::is_dir(std::string_view path) const {
  std::error_code ec;
  if (fs::is_directory(host_path(path), ec)) return true;
  // A directory that only holds overridden nodes (/dev/dri in a fixture) exists too.
  const std::string dir = strip_trailing_slash(path);
  return std::any_of(stat_overrides.begin(), stat_overrides.end(),
                     [&](const auto& kv) { return parent_of(kv.first) == dir; });
}

std::vector<std::string> HostView::list_dir(std::string_view dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(host_path(dir), ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  const std::string d = strip_trailing_slash(dir);
  for (const auto& [path, st] : stat_overrides) {
    if (parent_of(path) != d) continue;
    std::string name = path.substr(path.rfind('/') + 1);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> HostView::glob(std::string_view pattern) const {
  std::vector<std::string> out;
  glob_t g{};
  const std::string host = host_path(pattern);
  if (::glob(host.c_str(), 0, nullptr, &g) == 0) {
    const std::string prefix = host.substr(0, host.size() - pattern.size());
    for (std::size_t i = 0; i < g.gl_pathc; ++i) {
      std::string p = g.gl_pathv[i];
      out.push_back(p.starts_with(prefix) ? p.substr(prefix.size()) : p);
    }
  }
  ::globfree(&g);
  const std::string pat(pattern);
  for (const auto& [path, st] : stat_overrides)
    if (::fnmatch(pat.c_str(), path.c_str(), FNM_PATHNAME) == 0 &&
        std::find(out.begin(), out.end(), path) == out.end())
      out.push_back(path);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<FileStat> HostView::stat(std::string_view path) const {
  if (auto it = stat_overrides.find(strip_trailing_slash(path)); it != stat_overrides.end())
    return it->second;
  struct stat st {};
  if (::stat(host_path(path).c_str(), &st) != 0) return std::nullopt;
  return FileStat{static_cast<std::uint32_t>(st.st_mode), static_cast<std::uint32_t>(st.st_uid),
                  static_cast<std::uint32_t>(st.st_gid)};
}

std::optional<std::string> HostView::read_link(std::string_view path) const {
  std::error_code ec;
  const fs::path host = host_path(path);
  if (!fs::is_symlink(fs::symlink_status(host, ec))) return std::nullopt;
  auto target = fs::read_symlink(host, ec);
  if (ec) return std::nullopt;
  return target.string();
}

std::optional<std::string> HostView::env_value(std::string_view name) const {
  auto it = env.find(std::string(name));
  if (it == env.end()) return std::nullopt;
  return it->second;
}

bool HostView::env_set(std::string_view name) const {
  auto v = env_value(name);
  return v && !v->empty();
}

}  // namespace gpucheck::host
