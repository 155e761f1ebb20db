// Reading the described system through its root prefix, and the identity permission checks use.
#include "doctor/system_view.h"

#include "core/files.h"
#include "core/json_keys.h"
#include "doctor/check.h"

#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gpucheck::doctor {

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

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto end = s.find(sep, start);
    out.emplace_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

Identity Identity::of_this_process() {
  Identity id;
  id.uid = static_cast<std::uint32_t>(::getuid());
  id.gids.push_back(static_cast<std::uint32_t>(::getgid()));
  const int n = ::getgroups(0, nullptr);
  if (n > 0) {
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    const int got = ::getgroups(n, groups.data());
    for (int i = 0; i < got; ++i) {
      const auto g = static_cast<std::uint32_t>(groups[static_cast<std::size_t>(i)]);
      if (std::find(id.gids.begin(), id.gids.end(), g) == id.gids.end()) id.gids.push_back(g);
    }
  }
  return id;
}

std::string SystemView::host_path(std::string_view path) const {
  const std::string r = root.string();
  if (r.empty() || r == "/") return std::string(path);
  std::string base = strip_trailing_slash(r);
  if (path.starts_with('/')) return base + std::string(path);
  return base + "/" + std::string(path);
}

std::optional<std::string> SystemView::read_file(std::string_view path,
                                                 std::size_t max_bytes) const {
  // Regular files only, opened without blocking: a FIFO under --sysroot must not hang doctor.
  return read_text_file(host_path(path), max_bytes);
}

bool SystemView::exists(std::string_view path) const {
  if (stat_overrides.contains(strip_trailing_slash(path))) return true;
  std::error_code ec;
  return fs::exists(host_path(path), ec);
}

bool SystemView::is_dir(std::string_view path) const {
  std::error_code ec;
  if (fs::is_directory(host_path(path), ec)) return true;
  // A directory that only holds overridden nodes (/dev/dri in a fixture) exists too.
  const std::string dir = strip_trailing_slash(path);
  return std::any_of(stat_overrides.begin(), stat_overrides.end(),
                     [&](const auto& kv) { return parent_of(kv.first) == dir; });
}

std::vector<std::string> SystemView::list_dir(std::string_view dir) const {
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

std::vector<std::string> SystemView::glob(std::string_view pattern) const {
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

std::optional<FileStat> SystemView::stat(std::string_view path) const {
  if (auto it = stat_overrides.find(strip_trailing_slash(path)); it != stat_overrides.end())
    return it->second;
  struct stat st {};
  if (::stat(host_path(path).c_str(), &st) != 0) return std::nullopt;
  return FileStat{static_cast<std::uint32_t>(st.st_mode), static_cast<std::uint32_t>(st.st_uid),
                  static_cast<std::uint32_t>(st.st_gid)};
}

std::optional<std::string> SystemView::read_link(std::string_view path) const {
  std::error_code ec;
  const fs::path host = host_path(path);
  if (!fs::is_symlink(fs::symlink_status(host, ec))) return std::nullopt;
  auto target = fs::read_symlink(host, ec);
  if (ec) return std::nullopt;
  return target.string();
}

std::optional<std::string> SystemView::env_value(std::string_view name) const {
  auto it = env.find(std::string(name));
  if (it == env.end()) return std::nullopt;
  return it->second;
}

bool SystemView::env_set(std::string_view name) const {
  auto v = env_value(name);
  return v && !v->empty();
}

const nlohmann::json* SystemView::backend(std::string_view name) const {
  auto it = facts.find(keys::kBackends);
  if (it == facts.end() || !it->is_array()) return nullptr;
  for (const auto& b : *it)
    if (b.is_object() && b.value(keys::kName, std::string()) == name) return &b;
  return nullptr;
}

const nlohmann::json& SystemView::require_backend(std::string_view name) const {
  const nlohmann::json* b = backend(name);
  if (b == nullptr)
    throw NotObservable("the probe's facts have no '" + std::string(name) + "' backend section");
  return *b;
}

const nlohmann::json& SystemView::require_facts(std::string_view key) const {
  auto it = facts.find(key);
  if (it == facts.end() || !it->is_object())
    throw NotObservable("the probe's facts have no '" + std::string(key) + "' section");
  return *it;
}

std::vector<GroupEntry> read_groups(const SystemView& view) {
  std::vector<GroupEntry> out;
  auto text = view.read_file("/etc/group");
  if (!text) return out;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    auto f = split(line, ':');
    if (f.size() < 4 || f[0].empty()) continue;
    GroupEntry g;
    g.name = f[0];
    try {
      g.gid = static_cast<std::uint32_t>(std::stoul(f[2]));
    } catch (const std::exception&) {
      continue;
    }
    for (auto& m : split(f[3], ','))
      if (!m.empty()) g.members.push_back(m);
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<std::string> user_name(const SystemView& view, std::uint32_t uid) {
  auto text = view.read_file("/etc/passwd");
  if (!text) return std::nullopt;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    auto f = split(line, ':');
    if (f.size() < 3) continue;
    if (f[2] == std::to_string(uid)) return f[0];
  }
  return std::nullopt;
}

bool may_read_write(const FileStat& st, const Identity& who) {
  if (who.uid == 0) return true;
  std::uint32_t bits = 0;
  if (st.uid == who.uid) {
    bits = (st.mode >> 6) & 7;
  } else if (std::find(who.gids.begin(), who.gids.end(), st.gid) != who.gids.end()) {
    bits = (st.mode >> 3) & 7;
  } else {
    bits = st.mode & 7;
  }
  return (bits & 6) == 6;
}

std::string mode_text(std::uint32_t mode) {
  std::string s = "?---------";
  if (S_ISCHR(mode))
    s[0] = 'c';
  else if (S_ISBLK(mode))
    s[0] = 'b';
  else if (S_ISDIR(mode))
    s[0] = 'd';
  else if (S_ISREG(mode))
    s[0] = '-';
  else if (S_ISLNK(mode))
    s[0] = 'l';
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (mode & (1u << (8 - i))) s[static_cast<std::size_t>(i) + 1] = rwx[i];
  return s;
}

}  // namespace gpucheck::doctor
