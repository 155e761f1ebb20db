// The ELF dynamic-section reader: a fixture library, a real system one, and hostile files.
#include "host/elf_dynamic.h"

#include "scratch_root.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace gpucheck::host {
namespace {

namespace fs = std::filesystem;
const fs::path kSample = fs::path(GPUCHECK_FIXTURES_DIR) / "elf" / "sample.so";

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ElfDynamic, ReadsTheFixtureLibraryAsReadelfDoes) {
  // tests/fixtures/elf/make_elf.py wrote it; `readelf -d` lists the same entries.
  const auto d = read_elf_dynamic(kSample.string());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->needed, (std::vector<std::string>{"libcudart.so.12", "libcublas.so.12",
                                                 "libcuda.so.1", "libc.so.6"}));
  EXPECT_EQ(d->soname, "libggml-cuda.so");
  EXPECT_EQ(d->runpath, "$ORIGIN");
  EXPECT_TRUE(d->rpath.empty());
}

TEST(ElfDynamic, ReadsARealSystemLibrary) {
  for (const char* p : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                        "/lib64/libm.so.6"}) {
    if (!fs::exists(p)) continue;
    const auto d = read_elf_dynamic(p);
    ASSERT_TRUE(d) << p;
    EXPECT_NE(std::find(d->needed.begin(), d->needed.end(), "libc.so.6"), d->needed.end()) << p;
    EXPECT_EQ(d->soname, "libm.so.6");
    return;
  }
  GTEST_SKIP() << "no libm.so.6 in /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu or /lib64";
}

class ElfHostile : public gpucheck::testing::ScratchRoot {};

TEST_F(ElfHostile, TruncatedGarbageDirectoriesAndFifosAreNotLibraries) {
  const std::string sample = bytes_of(kSample);
  for (std::size_t cut :
       {std::size_t{0}, std::size_t{10}, std::size_t{64}, std::size_t{100}, sample.size() - 20}) {
    write("cut.so", sample.substr(0, cut));
    EXPECT_FALSE(read_elf_dynamic((root_ / "cut.so").string())) << "cut at " << cut;
  }
  write("garbage.so", std::string(4096, '\x7f'));
  EXPECT_FALSE(read_elf_dynamic((root_ / "garbage.so").string()));
  // A header claiming 65535 program headers far past the end.
  std::string huge = sample;
  huge[56] = '\xff';
  huge[57] = '\xff';
  write("huge.so", huge);
  EXPECT_FALSE(read_elf_dynamic((root_ / "huge.so").string()));
  // The string table's address outside every loadable segment.
  std::string stray = sample;
  for (std::size_t i = 0; i + 16 <= stray.size(); i += 8)
    if (stray.compare(i, 8, std::string("\x05\0\0\0\0\0\0\0", 8)) == 0) {
      stray[i + 8] = '\x7f';
      stray[i + 14] = '\x7f';
    }
  write("stray.so", stray);
  EXPECT_FALSE(read_elf_dynamic((root_ / "stray.so").string()));
  EXPECT_FALSE(read_elf_dynamic(root_.string()));
  const fs::path fifo = root_ / "fifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(read_elf_dynamic(fifo.string()));  // returns at once, never blocks
  EXPECT_FALSE(read_elf_dynamic((root_ / "absent.so").string()));
}

}  // namespace
}  // namespace gpucheck::host
