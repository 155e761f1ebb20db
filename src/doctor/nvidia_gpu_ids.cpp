// Blackwell's PCI ids and the BAR1 aperture, read from sysfs and procfs.
#include "doctor/nvidia_gpu_ids.h"

#include <fmt/format.h>

#include <array>
#include <sstream>
#include <utility>

namespace gpucheck::doctor {

namespace {

// Every id of the README's table at or above 0x2900 that names a Blackwell product (0x29BB, a
// DRIVE board of unnamed architecture, is left out). A new id NVIDIA adds is not known here
// until this table gains it: a guessed range would call a future non-Blackwell part one.
constexpr std::array<std::pair<unsigned int, std::string_view>, 45> kBlackwell{{
    {0x2901, "NVIDIA B200"},
    {0x2941, "NVIDIA GB200"},
    {0x2B85, "NVIDIA GeForce RTX 5090"},
    {0x2B87, "NVIDIA GeForce RTX 5090 D"},
    {0x2B8C, "NVIDIA GeForce RTX 5090 D v2"},
    {0x2BB1, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"},
    {0x2BB3, "NVIDIA RTX PRO 5000 Blackwell"},
    {0x2BB4, "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"},
    {0x2BB5, "NVIDIA RTX PRO 6000 Blackwell Server Edition"},
    {0x2BB9, "NVIDIA RTX 6000D"},
    {0x2C02, "NVIDIA GeForce RTX 5080"},
    {0x2C05, "NVIDIA GeForce RTX 5070 Ti"},
    {0x2C18, "NVIDIA GeForce RTX 5090 Laptop GPU"},
    {0x2C19, "NVIDIA GeForce RTX 5080 Laptop GPU"},
    {0x2C31, "NVIDIA RTX PRO 4500 Blackwell"},
    {0x2C33, "NVIDIA RTX PRO 4000 Blackwell SFF Edition"},
    {0x2C34, "NVIDIA RTX PRO 4000 Blackwell"},
    {0x2C38, "NVIDIA RTX PRO 5000 Blackwell Generation Laptop GPU"},
    {0x2C39, "NVIDIA RTX PRO 4000 Blackwell Generation Laptop GPU"},
    {0x2C58, "NVIDIA GeForce RTX 5090 Laptop GPU"},
    {0x2C59, "NVIDIA GeForce RTX 5080 Laptop GPU"},
    {0x2C77, "NVIDIA RTX PRO 5000 Blackwell Embedded GPU"},
    {0x2C79, "NVIDIA RTX PRO 4000 Blackwell Embedded GPU"},
    {0x2D04, "NVIDIA GeForce RTX 5060 Ti"},
    {0x2D05, "NVIDIA GeForce RTX 5060"},
    {0x2D18, "NVIDIA GeForce RTX 5070 Laptop GPU"},
    {0x2D19, "NVIDIA GeForce RTX 5060 Laptop GPU"},
    {0x2D30, "NVIDIA RTX PRO 2000 Blackwell"},
    {0x2D39, "NVIDIA RTX PRO 2000 Blackwell Generation Laptop GPU"},
    {0x2D58, "NVIDIA GeForce RTX 5070 Laptop GPU"},
    {0x2D59, "NVIDIA GeForce RTX 5060 Laptop GPU"},
    {0x2D79, "NVIDIA RTX PRO 2000 Blackwell Embedded GPU"},
    {0x2D83, "NVIDIA GeForce RTX 5050"},
    {0x2D98, "NVIDIA GeForce RTX 5050 Laptop GPU"},
    {0x2DB8, "NVIDIA RTX PRO 1000 Blackwell Generation Laptop GPU"},
    {0x2DB9, "NVIDIA RTX PRO 500 Blackwell Generation Laptop GPU"},
    {0x2DD8, "NVIDIA GeForce RTX 5050 Laptop GPU"},
    {0x2DF9, "NVIDIA RTX PRO 500 Blackwell Embedded GPU"},
    {0x2E12, "NVIDIA GB10"},
    {0x2F04, "NVIDIA GeForce RTX 5070"},
    {0x2F18, "NVIDIA GeForce RTX 5070 Ti Laptop GPU"},
    {0x2F38, "NVIDIA RTX PRO 3000 Blackwell Generation Laptop GPU"},
    {0x2F58, "NVIDIA GeForce RTX 5070 Ti Laptop GPU"},
    {0x3182, "NVIDIA B300 SXM6 AC"},
    {0x31C2, "NVIDIA GB300"},
}};

std::optional<std::uint64_t> parse_u64(const std::string& t, int base) {
  try {
    std::size_t used = 0;
    const unsigned long long v = std::stoull(t, &used, base);
    if (used != t.size()) return std::nullopt;
    return static_cast<std::uint64_t>(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string_view> blackwell_name(unsigned int device_id) {
  for (const auto& [id, name] : kBlackwell)
    if (id == device_id) return name;
  return std::nullopt;
}

std::optional<std::string> kernel_module_flavor(const SystemView& view) {
  auto t = view.read_file("/proc/driver/nvidia/version", 4096);
  if (!t) return std::nullopt;
  const std::string first = t->substr(0, t->find('\n'));
  if (first.find("Open Kernel Module") != std::string::npos) return "open";
  if (first.find("Kernel Module") != std::string::npos) return "proprietary";
  return std::nullopt;
}

std::optional<Bar1> read_bar1(const SystemView& view, const std::string& pci_address) {
  const std::string base = "/sys/bus/pci/devices/" + pci_address;
  auto t = view.read_file(base + "/resource", 4096);
  if (!t) return std::nullopt;
  std::istringstream lines(*t);
  std::string line;
  for (int i = 0; i <= 1; ++i)
    if (!std::getline(lines, line)) return std::nullopt;
  std::istringstream fields(line);
  std::string start_text, end_text;
  fields >> start_text >> end_text;
  const auto start = parse_u64(start_text, 16);
  const auto end = parse_u64(end_text, 16);
  if (!start || !end || *start == 0 || *end < *start) return std::nullopt;
  Bar1 bar{*end - *start + 1, 0};
  // resource1_resize: a bitmap of the sizes offered, bit n = 2^(n+20) bytes.
  if (auto r = view.read_file(base + "/resource1_resize", 64)) {
    std::string hex = *r;
    while (!hex.empty() && (hex.back() == '\n' || hex.back() == ' ')) hex.pop_back();
    if (auto bits = parse_u64(hex, 16); bits && *bits != 0) {
      int top = 63;
      while (((*bits >> top) & 1u) == 0) --top;
      if (top + 20 < 64) bar.largest_offered = std::uint64_t{1} << (top + 20);
    }
  }
  return bar;
}

}  // namespace gpucheck::doctor
