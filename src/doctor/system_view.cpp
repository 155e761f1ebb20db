// The probe's facts a check requires, and the identity permission checks judge against.
#include "doctor/system_view.h"

#include "core/json_keys.h"
#include "doctor/check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <sstream>

namespace gpucheck::doctor {

namespace {

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

const nlohmann::json* SystemView::backend(std::string_view name) const {
  auto it = facts.find(keys::kBackends);
  if (it == facts.end() || !it->is_array()) return nullptr;
  for (const auto& b : *it)
    if (b.is_object() && b.value(keys::kName, std::string()) == name) return &b;
  return nullptr;
}

const nlohmann::json& SystemView::require_backend(std::string_view name) const {
  const nlohmann::json* b = backend(name);
  if (b == nullptr) {
    std::error_code ec;
    const bool sysroot = !root.empty() && !std::filesystem::equivalent(root, "/", ec);
    throw NotObservable(
        "the probe's facts have no '" + std::string(name) + "' backend section" +
        (sysroot ? " (under --sysroot the backends are not probed, as they would be this host's: "
                   "give the described system's saved probe with --facts)"
                 : ""));
  }
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

std::optional<int> SystemView::open_error(std::string_view path) const {
  std::string p(path);
  while (p.size() > 1 && p.ends_with('/')) p.pop_back();
  if (auto it = open_overrides.find(p); it != open_overrides.end()) return it->second;
  const std::string r = root.string();
  if (!r.empty() && r != "/") return std::nullopt;
  // Non-blocking: a FIFO planted where a node should be must not hang doctor.
  const int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

}  // namespace gpucheck::doctor
