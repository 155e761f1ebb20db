// Keeps the release binary on glibc 2.34 (RHEL 9, Ubuntu 22.04): the static libgcc and libstdc++
// of a toolchain built against a newer glibc call functions that glibc added later, which would
// make the binary ask the machine for GLIBC_2.35 / GLIBC_2.36. Defined here, inside the binary,
// those calls never reach glibc. Linked into the gpucheck executable only
// (GPUCHECK_STATIC_RUNTIME).
#include <dlfcn.h>
#include <link.h>
#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 35)

namespace {

struct FindObject {
  std::uintptr_t address;
  dl_find_object* result;
  bool found;
};

// The loaded object whose PT_LOAD segments hold the address: its extent and its
// PT_GNU_EH_FRAME segment (what libgcc's unwinder reads).
int visit_object(dl_phdr_info* info, std::size_t, void* data) {
  auto* f = static_cast<FindObject*>(data);
  std::uintptr_t low = std::numeric_limits<std::uintptr_t>::max(), high = 0;
  const void* eh_frame = nullptr;
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      low = start < low ? start : low;
      high = start + ph.p_memsz > high ? start + ph.p_memsz : high;
      contains = contains || (f->address >= start && f->address < start + ph.p_memsz);
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<const void*>(start);
    }
  }
  if (!contains) return 0;
  std::memset(f->result, 0, sizeof(*f->result));
  f->result->dlfo_map_start = reinterpret_cast<void*>(low);
  f->result->dlfo_map_end = reinterpret_cast<void*>(high);
  f->result->dlfo_eh_frame = const_cast<void*>(eh_frame);
  // dlfo_link_map stays null: libgcc's unwinder, the only caller in this binary, reads the
  // eh_frame alone.
  f->found = true;
  return 1;
}

}  // namespace

// glibc 2.35's _dl_find_object, through dl_iterate_phdr (glibc 2.2.4): what libgcc's unwinder
// (GCC 12, built against glibc >= 2.35) calls to find an exception's unwind tables.
extern "C" int _dl_find_object(void* address, dl_find_object* result) noexcept {
  FindObject f{reinterpret_cast<std::uintptr_t>(address), result, false};
  ::dl_iterate_phdr(visit_object, &f);
  return f.found ? 0 : -1;
}

#endif  // glibc >= 2.35

#if __GLIBC_PREREQ(2, 36)

// glibc 2.36's arc4random family, through getrandom (glibc 2.25): libstdc++'s std::random_device
// calls them when the toolchain's glibc had them.
extern "C" void arc4random_buf(void* buffer, std::size_t size) noexcept {
  auto* p = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t got = ::getrandom(p, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::abort();  // no entropy source at all: as glibc's arc4random does
    }
    p += got;
    size -= static_cast<std::size_t>(got);
  }
}

extern "C" std::uint32_t arc4random() noexcept {
  std::uint32_t v = 0;
  arc4random_buf(&v, sizeof(v));
  return v;
}

extern "C" std::uint32_t arc4random_uniform(std::uint32_t upper) noexcept {
  if (upper < 2) return 0;
  // Rejection sampling: values below 2^32 mod upper would make small results likelier.
  const std::uint32_t min = static_cast<std::uint32_t>(-upper) % upper;
  for (;;) {
    const std::uint32_t r = arc4random();
    if (r >= min) return r % upper;
  }
}

#endif  // glibc >= 2.36

#if __GLIBC_PREREQ(2, 35) && defined(__x86_64__)

// glibc 2.35 gave hypot a new symbol version (a faster implementation); its GLIBC_2.2.5 version
// is still there on every glibc. The executable is linked with --wrap=hypot, so every call in
// the program comes here and goes to the old version.
extern "C" double gpucheck_hypot_2_2_5(double x, double y);
__asm__(".symver gpucheck_hypot_2_2_5,hypot@GLIBC_2.2.5");
extern "C" double __wrap_hypot(double x, double y) { return gpucheck_hypot_2_2_5(x, y); }

#endif  // glibc >= 2.35 on x86-64
#endif  // __GLIBC__
