// What the dynamic linker reads of a shared library before loading it: its DT_NEEDED sonames and
// its RPATH/RUNPATH, from the ELF64 little-endian file itself (no dlopen: a library is judged
// without running its initialisers, and a fixture can describe one). Reads are bounded: a
// truncated, hostile or huge file gives nullopt, never a crash.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::host {

struct ElfDynamic {
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string soname;               // DT_SONAME
  std::string rpath;                // DT_RPATH (searched before LD_LIBRARY_PATH)
  std::string runpath;              // DT_RUNPATH (after it; DT_RPATH is ignored when set)
};

// nullopt when the file is not a readable ELF64 little-endian object with a dynamic section.
std::optional<ElfDynamic> read_elf_dynamic(const std::string& path);

}  // namespace gpucheck::host
