// Parsers for the frameworks' own files, and the bounded scan of a shared library for the
// architecture list a torch build was compiled for.
#include "doctor/framework_files.h"
#include "core/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace gpucheck::doctor {

namespace {

// Longer lines are no version or requirement line; std::regex recurses per character.
constexpr std::size_t kMaxParsedLine = 1024;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<long> release_numbers(const std::string& version) {
  std::vector<long> out;
  const std::string r = release_of(version);
  std::size_t i = 0;
  while (i < r.size() && std::isdigit(static_cast<unsigned char>(r[i]))) {
    std::size_t j = i;
    while (j < r.size() && std::isdigit(static_cast<unsigned char>(r[j]))) ++j;
    out.push_back(std::stol(r.substr(i, std::min<std::size_t>(j - i, 15))));
    if (j >= r.size() || r[j] != '.') break;
    i = j + 1;
  }
  return out;
}

// The bytes of a file between offset and offset + size, bounded by the caller and by the file's
// own size (a header may claim any size: nothing is allocated beyond what the file holds).
std::optional<std::string> read_range(const std::string& host_path, std::uint64_t offset,
                                      std::uint64_t size) {
  std::ifstream in(host_path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto end = in.tellg();
  if (end < 0 || offset > static_cast<std::uint64_t>(end)) return std::nullopt;
  size = std::min<std::uint64_t>(size, static_cast<std::uint64_t>(end) - offset);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in) return std::nullopt;
  std::string buf(static_cast<std::size_t>(size), '\0');
  in.read(buf.data(), static_cast<std::streamsize>(size));
  buf.resize(static_cast<std::size_t>(in.gcount()));
  return buf;
}

template <typename T>
T load(const std::string& b, std::size_t at) {
  T v{};
  if (at + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

// Offset and size of a 64-bit little-endian ELF's .rodata section; nullopt for anything else.
std::optional<std::pair<std::uint64_t, std::uint64_t>> elf_rodata(const std::string& host_path) {
  const auto header = read_range(host_path, 0, 64);
  if (!header || header->size() < 64 ||
      header->compare(0, 4,
                      "\x7f"
                      "ELF") != 0 ||
      (*header)[4] != 2 || (*header)[5] != 1)
    return std::nullopt;
  const auto shoff = load<std::uint64_t>(*header, 0x28);
  const auto shentsize = load<std::uint16_t>(*header, 0x3a);
  const auto shnum = load<std::uint16_t>(*header, 0x3c);
  const auto shstrndx = load<std::uint16_t>(*header, 0x3e);
  // An ELF64 section header is 64 bytes: a table of any other entry size is no real library's.
  if (shentsize != 64 || shnum == 0 || shstrndx >= shnum) return std::nullopt;
  const auto table = read_range(host_path, shoff, std::uint64_t{shentsize} * shnum);
  if (!table || table->size() < std::size_t{shentsize} * shnum) return std::nullopt;
  auto field = [&](std::size_t i, std::size_t off) {
    return load<std::uint64_t>(*table, i * shentsize + off);
  };
  const auto names = read_range(host_path, field(shstrndx, 0x18),
                                std::min<std::uint64_t>(field(shstrndx, 0x20), 1u << 20));
  if (!names) return std::nullopt;
  for (std::size_t i = 0; i < shnum; ++i) {
    const auto name_at = load<std::uint32_t>(*table, i * shentsize);
    if (name_at < names->size() && std::strcmp(names->c_str() + name_at, ".rodata") == 0)
      return std::pair{field(i, 0x18), field(i, 0x20)};
  }
  return std::nullopt;
}

// Specifier versions compare on as many numbers as the specifier gives for "==X.*".
bool prefix_match(const std::string& version, const std::string& pattern) {
  const auto v = release_numbers(version);
  const auto p = release_numbers(pattern.substr(0, pattern.size() - 2));
  return v.size() >= p.size() && std::equal(p.begin(), p.end(), v.begin());
}

}  // namespace

std::string release_of(const std::string& version) {
  return version.substr(0, version.find('+'));
}

int compare_versions(const std::string& a, const std::string& b) {
  auto x = release_numbers(a);
  auto y = release_numbers(b);
  const std::size_t n = std::max(x.size(), y.size());
  x.resize(n, 0);
  y.resize(n, 0);
  if (x < y) return -1;
  return x == y ? 0 : 1;
}

std::optional<Requirement> parse_requirement(const std::string& line) {
  static const std::regex kName(
      R"(^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^;)]*)\)?)");
  static const std::regex kSpec(R"(\s*(===|==|!=|>=|<=|~=|>|<)\s*([^,\s]+))");
  static const std::regex kExtra(R"(extra\s*==\s*['"]([^'"]+)['"])");
  // std::regex recurses per character: a hostile METADATA line must not exhaust the stack.
  if (line.size() > kMaxParsedLine) return std::nullopt;
  const std::string body = line.substr(0, line.find(';'));
  std::smatch m;
  if (!std::regex_search(body, m, kName)) return std::nullopt;
  Requirement r;
  r.name = lower(m[1].str());
  for (char& c : r.name)
    if (c == '_' || c == '.') c = '-';
  r.text = trim_space(body);
  const std::string specs = m[3].str();
  for (auto it = std::sregex_iterator(specs.begin(), specs.end(), kSpec);
       it != std::sregex_iterator(); ++it)
    r.specs.emplace_back((*it)[1].str(), (*it)[2].str());
  if (const auto semi = line.find(';'); semi != std::string::npos) {
    const std::string marker = line.substr(semi + 1);
    if (std::regex_search(marker, m, kExtra)) r.extra = m[1].str();
  }
  return r;
}

bool satisfies(const std::string& version, const Requirement& r) {
  for (const auto& [op, want] : r.specs) {
    const bool wildcard = want.ends_with(".*");
    const int c = compare_versions(version, want);
    bool ok = true;
    if (op == "==" || op == "===")
      ok = wildcard ? prefix_match(version, want) : c == 0;
    else if (op == "!=")
      ok = wildcard ? !prefix_match(version, want) : c != 0;
    else if (op == ">=")
      ok = c >= 0;
    else if (op == "<=")
      ok = c <= 0;
    else if (op == ">")
      ok = c > 0;
    else if (op == "<")
      ok = c < 0;
    else if (op == "~=") {
      // ~=9.1 means >=9.1, ==9.*: the last given number may grow.
      auto parts = release_numbers(want);
      if (parts.size() > 1) parts.pop_back();
      std::string prefix;
      for (auto p : parts) prefix += std::to_string(p) + ".";
      ok = c >= 0 && prefix_match(version, prefix + "*");
    }
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> parse_arch_list(const std::string& text) {
  static const std::regex kEntry(R"((sm|compute)_[0-9]+[af]?)");
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string word; in >> word;) {
    if (!std::regex_match(word, kEntry)) return {};
    out.push_back(word);
  }
  return out;
}

std::optional<std::string> find_arch_list(std::string_view bytes) {
  // Literal strings sit between NULs in .rodata; the list is the string that is nothing but
  // entries. Look for each "sm_" that starts a string.
  std::optional<std::string> best;
  std::size_t pos = 0;
  while ((pos = bytes.find("sm_", pos)) != std::string_view::npos) {
    if (pos > 0 && bytes[pos - 1] != '\0') {
      pos += 3;
      continue;
    }
    const std::size_t end = bytes.find('\0', pos);
    if (end == std::string_view::npos || end - pos > 4096) {
      pos += 3;
      continue;
    }
    const std::string candidate(bytes.substr(pos, end - pos));
    const auto entries = parse_arch_list(candidate);
    if (entries.size() >= 2 && (!best || candidate.size() > best->size())) best = candidate;
    pos = end;
  }
  return best;
}

std::optional<std::string> scan_arch_list(const SystemView& view, const std::string& path,
                                          std::size_t max_bytes) {
  const std::string host = view.host_path(path);
  std::uint64_t offset = 0;
  std::uint64_t size = max_bytes;
  if (auto rodata = elf_rodata(host)) {
    offset = rodata->first;
    size = std::min<std::uint64_t>(rodata->second, max_bytes);
  }
  // Chunks that overlap by the longest list kept, so one cut in two is still seen whole.
  constexpr std::uint64_t kChunk = 8u << 20;
  constexpr std::uint64_t kOverlap = 4096;
  std::optional<std::string> best;
  for (std::uint64_t at = 0; at < size; at += kChunk) {
    const auto chunk = read_range(host, offset + at, std::min(kChunk + kOverlap, size - at));
    if (!chunk || chunk->empty()) break;
    // A chunk that starts mid-string must not start a list: read from its first NUL.
    const std::size_t from = at == 0 ? 0 : chunk->find('\0');
    if (from == std::string::npos) continue;
    if (auto found = find_arch_list(std::string_view(*chunk).substr(from)))
      if (!best || found->size() > best->size()) best = found;
    if (chunk->size() < kChunk) break;
  }
  return best;
}

std::optional<TfBuildInfo> parse_tf_build_info(const std::string& text) {
  // ('key', value) in the OrderedDict form, 'key': value in the dict form.
  static const std::regex kPair(
      R"(['"]([a-z_]{1,64})['"]\s*[,:]\s*(\[[^\]]{0,4096}\]|'[^']{0,4096}'|"[^"]{0,4096}"|True|False))");
  static const std::regex kQuoted(R"(['"]([^'"]*)['"])");
  TfBuildInfo info;
  bool any = false;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPair);
       it != std::sregex_iterator(); ++it) {
    const std::string key = (*it)[1].str();
    const std::string value = (*it)[2].str();
    std::smatch q;
    const std::string unquoted =
        std::regex_search(value, q, kQuoted) ? q[1].str() : std::string(value);
    any = true;
    if (key == "is_cuda_build") info.is_cuda_build = value == "True";
    if (key == "is_rocm_build") info.is_rocm_build = value == "True";
    if (key == "cuda_version") info.cuda_version = unquoted;
    if (key == "cudnn_version") info.cudnn_version = unquoted;
    if (key == "cuda_compute_capabilities")
      for (auto c = std::sregex_iterator(value.begin(), value.end(), kQuoted);
           c != std::sregex_iterator(); ++c)
        info.cuda_capabilities.push_back((*c)[1].str());
  }
  if (!any) return std::nullopt;
  return info;
}

JaxVersionPy parse_jax_version_py(const std::string& text) {
  static const std::regex kAssign(
      R"(^\s*(_release_version|__version__|_version|_minimum_jaxlib_version)\s*(:[^=]*)?=\s*['"]([^'"]+)['"])");
  JaxVersionPy out;
  std::optional<std::string> release, dunder, plain;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.size() > kMaxParsedLine || !std::regex_search(line, m, kAssign)) continue;
    const std::string name = m[1].str();
    // The first assignment counts: _write_version's own copy of the line comes later.
    auto& slot = name == "_release_version" ? release
                 : name == "__version__"    ? dunder
                 : name == "_version"       ? plain
                                            : out.minimum_jaxlib;
    if (!slot) slot = m[3].str();
  }
  out.version = release ? release : dunder ? dunder : plain;
  return out;
}

std::optional<std::string> parse_keras_backend(const std::string& json_text) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("backend") ||
      !doc["backend"].is_string())
    return std::nullopt;
  return doc["backend"].get<std::string>();
}

std::map<std::string, std::string> parse_theano_flags(const std::string& flags) {
  std::map<std::string, std::string> out;
  std::stringstream in(flags);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string key = lower(std::string(trim_space(item.substr(0, eq))));
    for (std::size_t p; (p = key.find("__")) != std::string::npos;) key.replace(p, 2, ".");
    out[key] = trim_space(item.substr(eq + 1));
  }
  return out;
}

std::map<std::string, std::string> parse_theanorc(const std::string& ini) {
  std::map<std::string, std::string> out;
  std::string section = "global";
  std::stringstream in(ini);
  for (std::string line; std::getline(in, line);) {
    line = trim_space(line.substr(0, line.find_first_of("#;")));
    if (line.empty()) continue;
    if (line.front() == '[' && line.back() == ']') {
      section = lower(std::string(trim_space(line.substr(1, line.size() - 2))));
      continue;
    }
    const auto eq = line.find_first_of("=:");
    if (eq == std::string::npos) continue;
    const std::string key = lower(std::string(trim_space(line.substr(0, eq))));
    out[section == "global" ? key : section + "." + key] = trim_space(line.substr(eq + 1));
  }
  return out;
}

}  // namespace gpucheck::doctor
