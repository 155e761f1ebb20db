// Parses proc/cpuinfo and cpu/node sysfs under a root prefix into CpuFacts; never throws on bad
// input: a field whose file is missing or malformed stays absent.
#include "host/cpu_info.h"
#include "core/json_access.h"
#include "core/text.h"

#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/files.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

namespace gpucheck::host {

namespace fs = std::filesystem;

namespace {

// A cpuinfo of a few thousand logical CPUs stays far below this; anything larger is not one.
constexpr std::size_t kCpuFileBytes = std::size_t{16} << 20;

std::optional<std::string> read_cpu_file(const fs::path& p) {
  return read_text_file(p, kCpuFileBytes);
}

template <typename T>
std::optional<T> parse_number(std::string_view s, int base = 10) {
  s = trim_space(s);
  if (s.empty()) return std::nullopt;
  T v{};
  const auto* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v, base);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

// A clock in MHz; 0 (what some VMs print) or a negative value means unknown.
std::optional<double> parse_double(std::string_view s) {
  s = trim_space(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || ptr != end || !(v > 0) || v > 1e9) return std::nullopt;
  return v;
}

// "0x41" or "41" as hexadecimal.
std::optional<unsigned> parse_hex(std::string_view s) {
  s = trim_space(s);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return parse_number<unsigned>(s, 16);
}

std::optional<std::uint64_t> read_u64(const fs::path& p) {
  auto text = read_cpu_file(p);
  if (!text) return std::nullopt;
  return parse_number<std::uint64_t>(*text);
}

std::optional<double> read_khz_as_mhz(const fs::path& p) {
  auto khz = read_u64(p);
  if (!khz || *khz == 0) return std::nullopt;
  return static_cast<double>(*khz) / 1000.0;
}

// "32K", "1024K", "32M", "512" (bytes) as in sysfs cache/indexN/size; binary multiples.
std::optional<std::uint64_t> parse_size(std::string_view s) {
  s = trim_space(s);
  std::uint64_t mult = 1;
  if (!s.empty()) {
    switch (std::toupper(static_cast<unsigned char>(s.back()))) {
      case 'K':
        mult = std::uint64_t{1} << 10;
        break;
      case 'M':
        mult = std::uint64_t{1} << 20;
        break;
      case 'G':
        mult = std::uint64_t{1} << 30;
        break;
      default:
        break;
    }
    if (mult != 1) s.remove_suffix(1);
  }
  auto n = parse_number<std::uint64_t>(s);
  if (!n || *n > std::numeric_limits<std::uint64_t>::max() / mult) return std::nullopt;
  return *n * mult;
}

// Number of CPUs in a kernel cpu list such as "0-3,8,10-11"; nullopt when malformed or empty.
std::optional<int> count_cpu_list(std::string_view s) {
  s = trim_space(s);
  if (s.empty()) return std::nullopt;
  long long total = 0;
  while (!s.empty()) {
    const auto comma = s.find(',');
    const auto item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    const auto dash = item.find('-');
    const auto lo = parse_number<int>(item.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_number<int>(item.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo) return std::nullopt;
    total += static_cast<long long>(*hi) - *lo + 1;
    if (total > std::numeric_limits<int>::max()) return std::nullopt;
  }
  return static_cast<int>(total);
}

// Directory entries named <prefix><digits>, sorted by the number.
std::vector<std::pair<long, fs::path>> numbered_entries(const fs::path& dir,
                                                        std::string_view prefix) {
  std::vector<std::pair<long, fs::path>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string_view digits = std::string_view(name).substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
      continue;
    if (auto n = parse_number<long>(digits)) out.emplace_back(*n, it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One "processor" block of cpuinfo (or the header block older Arm kernels print); first wins.
using Record = std::vector<std::pair<std::string, std::string>>;

std::optional<std::string_view> field(const Record& r, std::string_view key) {
  for (const auto& [k, v] : r)
    if (k == key) return std::string_view(v);
  return std::nullopt;
}

std::vector<Record> parse_cpuinfo(std::string_view text) {
  std::vector<Record> records;
  Record cur;
  auto flush = [&] {
    if (!cur.empty()) records.push_back(std::move(cur));
    cur.clear();
  };
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (trim_space(line).empty()) {
      flush();
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string key(trim_space(line.substr(0, colon)));
    if (key.empty()) continue;
    // A new "processor" starts a new block even without the blank line between them.
    if (key == "processor" && field(cur, "processor")) flush();
    if (!field(cur, key)) cur.emplace_back(key, std::string(trim_space(line.substr(colon + 1))));
  }
  flush();
  return records;
}

std::optional<std::string_view> first_field(const std::vector<Record>& records,
                                            std::string_view key) {
  for (const auto& r : records)
    if (auto v = field(r, key)) return v;
  return std::nullopt;
}

enum class IsaFamily { kUnknown, kX86, kArm };

IsaFamily family_of(const std::vector<Record>& records) {
  if (first_field(records, "vendor_id") || first_field(records, "flags")) return IsaFamily::kX86;
  if (first_field(records, "CPU implementer") || first_field(records, "Features"))
    return IsaFamily::kArm;
  return IsaFamily::kUnknown;
}

std::optional<std::string> arch_from_cpuinfo(const std::vector<Record>& records) {
  if (first_field(records, "vendor_id")) return "x86_64";
  if (first_field(records, "CPU implementer")) return "aarch64";
  return std::nullopt;
}

std::optional<std::string> uname_machine() {
  struct utsname u {};
  if (uname(&u) != 0) return std::nullopt;
  std::string m = sanitize_c_buffer(u.machine, sizeof u.machine);
  if (m.empty()) return std::nullopt;
  return m;
}

// Arm implementer codes (MIDR_EL1[31:24]) as the kernel and lscpu name them.
std::optional<std::string_view> arm_implementer_name(unsigned id) {
  struct Entry {
    unsigned id;
    std::string_view name;
  };
  static constexpr std::array<Entry, 12> kImplementers{{
      {0x41, "ARM"},
      {0x42, "Broadcom"},
      {0x43, "Cavium"},
      {0x46, "Fujitsu"},
      {0x48, "HiSilicon"},
      {0x4e, "NVIDIA"},
      {0x50, "APM"},
      {0x51, "Qualcomm"},
      {0x56, "Marvell"},
      {0x61, "Apple"},
      {0x69, "Intel"},
      {0xc0, "Ampere"},
  }};
  for (const auto& e : kImplementers)
    if (e.id == id) return e.name;
  return std::nullopt;
}

// Core names for (implementer, part) pairs seen in servers and common boards.
std::optional<std::string_view> arm_part_name(unsigned implementer, unsigned part) {
  struct Entry {
    unsigned implementer, part;
    std::string_view name;
  };
  static constexpr std::array<Entry, 32> kParts{{
      {0x41, 0xd03, "Cortex-A53"},  {0x41, 0xd04, "Cortex-A35"},  {0x41, 0xd05, "Cortex-A55"},
      {0x41, 0xd07, "Cortex-A57"},  {0x41, 0xd08, "Cortex-A72"},  {0x41, 0xd09, "Cortex-A73"},
      {0x41, 0xd0a, "Cortex-A75"},  {0x41, 0xd0b, "Cortex-A76"},  {0x41, 0xd0c, "Neoverse-N1"},
      {0x41, 0xd0d, "Cortex-A77"},  {0x41, 0xd40, "Neoverse-V1"}, {0x41, 0xd41, "Cortex-A78"},
      {0x41, 0xd44, "Cortex-X1"},   {0x41, 0xd46, "Cortex-A510"}, {0x41, 0xd47, "Cortex-A710"},
      {0x41, 0xd48, "Cortex-X2"},   {0x41, 0xd49, "Neoverse-N2"}, {0x41, 0xd4a, "Neoverse-E1"},
      {0x41, 0xd4f, "Neoverse-V2"}, {0x41, 0xd80, "Cortex-A520"}, {0x41, 0xd81, "Cortex-A720"},
      {0x41, 0xd82, "Cortex-X4"},   {0x41, 0xd84, "Neoverse-V3"}, {0x41, 0xd8e, "Neoverse-N3"},
      {0x43, 0x0af, "ThunderX2"},   {0x46, 0x001, "A64FX"},       {0x48, 0xd01, "Kunpeng-920"},
      {0x4e, 0x004, "Carmel"},      {0x51, 0x001, "Oryon"},       {0xc0, 0xac3, "Ampere-1"},
      {0xc0, 0xac4, "Ampere-1a"},   {0x50, 0x000, "X-Gene"},
  }};
  for (const auto& e : kParts)
    if (e.implementer == implementer && e.part == part) return e.name;
  return std::nullopt;
}

// Arm cpuinfo has no "model name" or "vendor_id": name the core and vendor from MIDR fields.
void name_arm_cpu(const std::vector<Record>& records, CpuFacts& f) {
  const auto impl_text = first_field(records, "CPU implementer");
  const auto impl = impl_text ? parse_hex(*impl_text) : std::nullopt;
  if (!impl) return;
  const unsigned impl_id = impl.value_or(0);
  if (!f.vendor) {
    const auto name = arm_implementer_name(impl_id);
    f.vendor = name ? std::string(*name) : sanitize(*impl_text);
  }
  const auto part_text = first_field(records, "CPU part");
  const auto part = part_text ? parse_hex(*part_text) : std::nullopt;
  if (f.model || !part) return;
  const auto name = arm_part_name(impl_id, part.value_or(0));
  f.model = name ? std::string(*name)
                 : sanitize(std::string(*impl_text) + " part " + std::string(*part_text));
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  while (true) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) break;
    s.remove_prefix(b);
    const auto e = s.find_first_of(" \t");
    out.push_back(sanitize(s.substr(0, e)));
    if (e == std::string_view::npos) break;
    s.remove_prefix(e);
  }
  return out;
}

// ISA keys per family: (JSON key, the cpuinfo flag that says it).
constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kX86Isa{{
    {keys::kIsaSse4_2, "sse4_2"},
    {keys::kIsaAvx, "avx"},
    {keys::kIsaAvx2, "avx2"},
    {keys::kIsaFma, "fma"},
    {keys::kIsaF16c, "f16c"},
    {keys::kIsaAvx512f, "avx512f"},
    {keys::kIsaAvx512dq, "avx512dq"},
    {keys::kIsaAvx512cd, "avx512cd"},
    {keys::kIsaAvx512bw, "avx512bw"},
    {keys::kIsaAvx512vl, "avx512vl"},
    {keys::kIsaAvx512Vnni, "avx512_vnni"},
    {keys::kIsaAvx512Bf16, "avx512_bf16"},
    {keys::kIsaAvx512Fp16, "avx512_fp16"},
    {keys::kIsaAmxTile, "amx_tile"},
    {keys::kIsaAmxInt8, "amx_int8"},
    {keys::kIsaAmxBf16, "amx_bf16"},
}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kArmIsa{{
    {keys::kIsaNeon, "asimd"},
    {keys::kIsaSve, "sve"},
    {keys::kIsaSve2, "sve2"},
    {keys::kIsaAsimdhp, "asimdhp"},
    {keys::kIsaBf16, "bf16"},
    {keys::kIsaI8mm, "i8mm"},
}};

template <std::size_t N>
std::map<std::string, bool> isa_map(
    const std::array<std::pair<std::string_view, std::string_view>, N>& table,
    const std::vector<std::string>& flags) {
  std::map<std::string, bool> out;
  for (const auto& [key, flag] : table)
    out[std::string(key)] = std::find(flags.begin(), flags.end(), flag) != flags.end();
  return out;
}

void read_topology(const std::vector<Record>& records, const fs::path& root, CpuFacts& f) {
  std::set<long> packages;
  std::set<std::pair<long, long>> core_pairs;
  int processors = 0;
  int with_core = 0;
  for (const auto& r : records) {
    if (!field(r, "processor")) continue;
    ++processors;
    const auto pkg = field(r, "physical id");
    const auto pkg_id = pkg ? parse_number<long>(*pkg) : std::nullopt;
    if (pkg_id) packages.insert(*pkg_id);
    const auto core = field(r, "core id");
    const auto core_id = core ? parse_number<long>(*core) : std::nullopt;
    if (pkg_id && core_id) {
      core_pairs.emplace(*pkg_id, *core_id);
      ++with_core;
    }
  }
  if (processors > 0 && packages.empty()) {
    // Arm (and some VMs) print no topology in cpuinfo; sysfs has it per logical CPU.
    processors = 0;
    for (const auto& [n, dir] :
         numbered_entries(under_root(root, "sys/devices/system/cpu"), "cpu")) {
      (void)n;
      ++processors;
      const auto pkg = read_cpu_file(dir / "topology/physical_package_id");
      const auto pkg_id = pkg ? parse_number<long>(*pkg) : std::nullopt;
      if (!pkg_id || *pkg_id < 0) continue;  // -1: firmware did not say
      packages.insert(*pkg_id);
      const auto core = read_cpu_file(dir / "topology/core_id");
      if (const auto core_id = core ? parse_number<long>(*core) : std::nullopt) {
        core_pairs.emplace(*pkg_id, *core_id);
        ++with_core;
      }
    }
  }
  if (!packages.empty()) f.sockets = static_cast<int>(packages.size());
  if (!core_pairs.empty() && with_core == processors) {
    f.cores = static_cast<int>(core_pairs.size());
  } else if (f.sockets) {
    const auto per_socket = first_field(records, "cpu cores");
    if (const auto n = per_socket ? parse_number<int>(*per_socket) : std::nullopt; n && *n > 0)
      f.cores = *n * *f.sockets;
  }
}

void read_caches(const fs::path& root, CpuFacts& f) {
  for (const auto& [n, dir] :
       numbered_entries(under_root(root, "sys/devices/system/cpu/cpu0/cache"), "index")) {
    (void)n;
    CacheFacts c;
    if (auto t = read_cpu_file(dir / "level")) c.level = parse_number<int>(*t);
    if (auto t = read_cpu_file(dir / "type"); t && !trim_space(*t).empty()) {
      std::string type = sanitize(trim_space(*t));
      std::transform(type.begin(), type.end(), type.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      c.type = std::move(type);
    }
    if (auto t = read_cpu_file(dir / "size")) c.size_bytes = parse_size(*t);
    if (auto t = read_cpu_file(dir / "shared_cpu_list")) c.shared_by_threads = count_cpu_list(*t);
    if (c.level || c.type || c.size_bytes || c.shared_by_threads) f.caches.push_back(std::move(c));
  }
}

}  // namespace

bool is_live_root(const fs::path& root) {
  return root.empty() || root.lexically_normal() == fs::path("/");
}

std::optional<std::string> detect_arch(const fs::path& root) {
  if (is_live_root(root))
    if (auto m = uname_machine()) return m;
  const auto text = read_cpu_file(under_root(root, "proc/cpuinfo"));
  if (!text) return std::nullopt;
  return arch_from_cpuinfo(parse_cpuinfo(*text));
}

CpuFacts read_cpu_facts(const fs::path& root) {
  CpuFacts f;
  const auto text = read_cpu_file(under_root(root, "proc/cpuinfo"));
  const std::vector<Record> records = text ? parse_cpuinfo(*text) : std::vector<Record>{};
  const IsaFamily family = family_of(records);

  f.arch = is_live_root(root) ? uname_machine() : std::nullopt;
  if (!f.arch) f.arch = arch_from_cpuinfo(records);

  if (auto v = first_field(records, "model name"); v && !v->empty()) f.model = sanitize(*v);
  if (auto v = first_field(records, "vendor_id"); v && !v->empty()) f.vendor = sanitize(*v);
  name_arm_cpu(records, f);

  const int processors = static_cast<int>(std::count_if(
      records.begin(), records.end(), [](const Record& r) { return field(r, "processor"); }));
  if (processors > 0) {
    f.threads = processors;
  } else if (auto online = read_cpu_file(under_root(root, "sys/devices/system/cpu/online"))) {
    f.threads = count_cpu_list(*online);
  }
  read_topology(records, root, f);

  const fs::path cpufreq = under_root(root, "sys/devices/system/cpu/cpu0/cpufreq");
  if (auto mhz = first_field(records, "cpu MHz")) f.mhz_current = parse_double(*mhz);
  if (!f.mhz_current) f.mhz_current = read_khz_as_mhz(cpufreq / "scaling_cur_freq");
  f.mhz_max = read_khz_as_mhz(cpufreq / "cpuinfo_max_freq");
  f.mhz_min = read_khz_as_mhz(cpufreq / "cpuinfo_min_freq");

  read_caches(root, f);
  const auto nodes = numbered_entries(under_root(root, "sys/devices/system/node"), "node");
  if (!nodes.empty()) f.numa_nodes = static_cast<int>(nodes.size());

  if (family == IsaFamily::kX86) {
    if (auto v = first_field(records, "flags")) {
      f.flags = split_words(*v);
      f.isa = isa_map(kX86Isa, f.flags);
    }
  } else if (family == IsaFamily::kArm) {
    if (auto v = first_field(records, "Features")) {
      f.flags = split_words(*v);
      f.isa = isa_map(kArmIsa, f.flags);
    }
  }
  return f;
}

nlohmann::json to_json(const CpuFacts& f) {
  nlohmann::json j = nlohmann::json::object();
  put_if(j, keys::kModel, f.model);
  put_if(j, keys::kVendor, f.vendor);
  put_if(j, keys::kArch, f.arch);
  put_if(j, keys::kSockets, f.sockets);
  put_if(j, keys::kCores, f.cores);
  put_if(j, keys::kThreads, f.threads);
  put_if(j, keys::kMhzCurrent, f.mhz_current);
  put_if(j, keys::kMhzMax, f.mhz_max);
  put_if(j, keys::kMhzMin, f.mhz_min);
  if (!f.caches.empty()) {
    nlohmann::json caches = nlohmann::json::array();
    for (const auto& c : f.caches) {
      nlohmann::json cj = nlohmann::json::object();
      put_if(cj, keys::kLevel, c.level);
      put_if(cj, keys::kType, c.type);
      put_if(cj, keys::kSizeBytes, c.size_bytes);
      put_if(cj, keys::kSharedByThreads, c.shared_by_threads);
      caches.push_back(std::move(cj));
    }
    j[std::string(keys::kCaches)] = std::move(caches);
  }
  put_if(j, keys::kNumaNodes, f.numa_nodes);
  if (!f.isa.empty()) j[std::string(keys::kIsa)] = f.isa;
  if (!f.flags.empty()) j[std::string(keys::kFlags)] = f.flags;
  return j;
}

}  // namespace gpucheck::host
