// A bounded reader of an ELF64 file's dynamic section.
#include "host/elf_dynamic.h"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpucheck::host {

namespace {

constexpr std::size_t kMaxHeaders = 256;
constexpr std::size_t kMaxDynamic = 8192;
constexpr std::size_t kMaxString = 4096;

class Reader {
 public:
  explicit Reader(const std::string& path) : in_(path, std::ios::binary) {
    if (in_) {
      in_.seekg(0, std::ios::end);
      const auto end = in_.tellg();
      size_ = end < 0 ? 0 : static_cast<std::uint64_t>(end);
    }
  }
  bool ok() const { return static_cast<bool>(in_); }
  std::uint64_t size() const { return size_; }

  template <typename T>
  bool read(std::uint64_t offset, T& out) {
    if (offset > size_ || sizeof(T) > size_ - offset) return false;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(reinterpret_cast<char*>(&out), sizeof(T));
    return static_cast<bool>(in_);
  }

  std::optional<std::string> string_at(std::uint64_t offset) {
    if (offset >= size_) return std::nullopt;
    std::string s;
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    for (char c; s.size() < kMaxString && in_.get(c);) {
      if (c == '\0') return s;
      s.push_back(c);
    }
    return std::nullopt;
  }

 private:
  std::ifstream in_;
  std::uint64_t size_ = 0;
};

}  // namespace

std::optional<ElfDynamic> read_elf_dynamic(const std::string& path) {
  // Regular files only: opening a FIFO planted where a library should be would block.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  Reader r(path);
  if (!r.ok()) return std::nullopt;
  Elf64_Ehdr eh{};
  if (!r.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > kMaxHeaders)
    return std::nullopt;
  std::vector<Elf64_Phdr> loads;
  std::optional<Elf64_Phdr> dynamic;
  for (std::uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!r.read(eh.e_phoff + std::uint64_t{i} * sizeof(Elf64_Phdr), ph)) return std::nullopt;
    if (ph.p_type == PT_LOAD) loads.push_back(ph);
    if (ph.p_type == PT_DYNAMIC) dynamic = ph;
  }
  if (!dynamic) return std::nullopt;
  // The string table is named by its address: the loadable segment holding it gives its offset.
  auto file_offset = [&](std::uint64_t addr) -> std::optional<std::uint64_t> {
    for (const auto& l : loads)
      if (addr >= l.p_vaddr && addr - l.p_vaddr < l.p_filesz)
        return l.p_offset + (addr - l.p_vaddr);
    return std::nullopt;
  };
  std::vector<std::uint64_t> needed;
  std::optional<std::uint64_t> strtab, soname, rpath, runpath;
  const std::uint64_t count =
      std::min<std::uint64_t>(dynamic->p_filesz / sizeof(Elf64_Dyn), kMaxDynamic);
  for (std::uint64_t i = 0; i < count; ++i) {
    Elf64_Dyn d{};
    if (!r.read(dynamic->p_offset + i * sizeof(Elf64_Dyn), d)) return std::nullopt;
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_NEEDED:
        needed.push_back(d.d_un.d_val);
        break;
      case DT_STRTAB:
        strtab = d.d_un.d_ptr;
        break;
      case DT_SONAME:
        soname = d.d_un.d_val;
        break;
      case DT_RPATH:
        rpath = d.d_un.d_val;
        break;
      case DT_RUNPATH:
        runpath = d.d_un.d_val;
        break;
      default:
        break;
    }
  }
  if (!strtab) return std::nullopt;
  const auto base = file_offset(*strtab);
  if (!base) return std::nullopt;
  auto str = [&](std::uint64_t off) -> std::optional<std::string> {
    if (off > r.size() || *base > r.size() - off) return std::nullopt;
    return r.string_at(*base + off);
  };
  // A name that cannot be read whole (a truncated file) makes the whole answer unknown: a
  // partial list would say a library needs less than it does.
  ElfDynamic out;
  for (auto n : needed) {
    auto s = str(n);
    if (!s) return std::nullopt;
    out.needed.push_back(*s);
  }
  for (auto [offset, field] : {std::pair{soname, &out.soname}, std::pair{rpath, &out.rpath},
                               std::pair{runpath, &out.runpath}})
    if (offset) {
      auto s = str(*offset);
      if (!s) return std::nullopt;
      *field = *s;
    }
  return out;
}

}  // namespace gpucheck::host
