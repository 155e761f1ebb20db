// The framework checks' readers: versions and Requires-Dist specifiers, the arch list scan of a
// shared library (a generated ELF whose .rodata holds the list, with a decoy outside it, and
// the real Debian libtorch_python.so where installed), TensorFlow's build_info.py, JAX's
// version.py, Keras's keras.json, Theano's flags, how an arch list serves a GPU, PyTorch's index
// tags for a driver, and the import path of an environment.
#include "doctor/framework_files.h"
#include "doctor/framework_gpus.h"
#include "host/python_envs.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace gpucheck::doctor {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

fs::path temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() /
                     ("gpucheck_frameworks_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write_file(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

template <typename T>
void put(std::string& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

// A minimal 64-bit little-endian ELF: header, .rodata, .shstrtab, then three section headers
// (null, .rodata, .shstrtab). `before` lies between the header and .rodata, in no section.
std::string make_elf(const std::string& before, const std::string& rodata) {
  const std::string names = "\0.rodata\0.shstrtab\0"s;
  const std::size_t rodata_at = 64 + before.size();
  const std::size_t names_at = rodata_at + rodata.size();
  const std::size_t sh_at = names_at + names.size();
  std::string b(sh_at + 3 * 64, '\0');
  std::memcpy(b.data(),
              "\x7f"
              "ELF",
              4);
  b[4] = 2;  // ELFCLASS64
  b[5] = 1;  // little-endian
  b[6] = 1;
  put<std::uint64_t>(b, 0x28, sh_at);
  put<std::uint16_t>(b, 0x34, 64);
  put<std::uint16_t>(b, 0x3a, 64);
  put<std::uint16_t>(b, 0x3c, 3);
  put<std::uint16_t>(b, 0x3e, 2);
  std::memcpy(b.data() + 64, before.data(), before.size());
  std::memcpy(b.data() + rodata_at, rodata.data(), rodata.size());
  std::memcpy(b.data() + names_at, names.data(), names.size());
  auto section = [&](int i, std::uint32_t name, std::uint64_t offset, std::uint64_t size) {
    const std::size_t h = sh_at + static_cast<std::size_t>(i) * 64;
    put<std::uint32_t>(b, h, name);
    put<std::uint64_t>(b, h + 0x18, offset);
    put<std::uint64_t>(b, h + 0x20, size);
  };
  section(1, 1, rodata_at, rodata.size());
  section(2, 9, names_at, names.size());
  return b;
}

TEST(FrameworkVersions, CompareReleaseNumbersIgnoringLocalLabels) {
  EXPECT_LT(compare_versions("2.16.1", "2.17.0"), 0);
  EXPECT_EQ(compare_versions("0.4.35", "0.4.35"), 0);
  EXPECT_EQ(compare_versions("2.3.0+cu121", "2.3"), 0);
  EXPECT_GT(compare_versions("9.13.0.50", "9.8"), 0);
  EXPECT_EQ(release_of("2.11.0+cu130"), "2.11.0");
}

TEST(FrameworkVersions, RequirementsWithMarkersAndSpecifiers) {
  auto r = parse_requirement("nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvidia-cudnn-cu12");
  EXPECT_EQ(r->text, "nvidia-cudnn-cu12==9.1.0.70");
  EXPECT_TRUE(r->extra.empty());
  EXPECT_TRUE(satisfies("9.1.0.70", *r));
  EXPECT_FALSE(satisfies("9.1.0.71", *r));

  r = parse_requirement("nvidia_cudnn_cu13<10.0,>=9.8 ; extra == \"with-cuda\"");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvidia-cudnn-cu13");
  EXPECT_EQ(r->extra, "with-cuda");
  EXPECT_TRUE(satisfies("9.13.0.50", *r));
  EXPECT_FALSE(satisfies("9.1.0.70", *r));
  EXPECT_FALSE(satisfies("10.0.0", *r));

  r = parse_requirement("nvidia-cublas (==12.*)");
  ASSERT_TRUE(r);
  EXPECT_TRUE(satisfies("12.5.3.2", *r));
  EXPECT_FALSE(satisfies("13.0.0", *r));
  r = parse_requirement("foo~=9.1");
  ASSERT_TRUE(r);
  EXPECT_TRUE(satisfies("9.4", *r));
  EXPECT_FALSE(satisfies("10.0", *r));
  EXPECT_FALSE(parse_requirement("  ; extra == \"x\""));
}

TEST(FrameworkArchList, ParsesOnlyListsOfArchitectures) {
  EXPECT_EQ(parse_arch_list("sm_50 sm_90a compute_120"),
            (std::vector<std::string>{"sm_50", "sm_90a", "compute_120"}));
  EXPECT_TRUE(parse_arch_list("sm_50 is not").empty());
}

TEST(FrameworkArchList, FindsTheLiteralBetweenNuls) {
  const std::string bytes = "\0sm_ is bad\0xsm_80 sm_90\0sm_75 sm_80 compute_80\0"s;
  EXPECT_EQ(find_arch_list(bytes), "sm_75 sm_80 compute_80");
  EXPECT_FALSE(find_arch_list("\0sm_80\0"s));  // one entry is no list
}

TEST(FrameworkArchList, ReadsOnlyTheRodataOfAnElf) {
  const fs::path dir = temp_dir("elf");
  const std::string decoy = "\0sm_35 sm_37 sm_50 sm_52 sm_60 sm_61 sm_70\0"s;
  const std::string rodata = "\0other\0sm_80 sm_90\0"s;
  write_file(dir / "lib.so", make_elf(decoy, rodata));
  SystemView view;
  view.root = dir;
  EXPECT_EQ(scan_arch_list(view, "/lib.so"), "sm_80 sm_90");
  // Not ELF: the whole (bounded) file is read.
  write_file(dir / "blob", decoy);
  EXPECT_EQ(scan_arch_list(view, "/blob"), "sm_35 sm_37 sm_50 sm_52 sm_60 sm_61 sm_70");
  EXPECT_FALSE(scan_arch_list(view, "/missing.so"));
  fs::remove_all(dir);
}

// A 264-byte ELF whose header claims 65535 section headers of 65535 bytes: the table was read
// into a 4.2 GB buffer. Nothing past the file is allocated now (peak memory, not time, is
// measured: it holds under any sanitizer and CPU).
TEST(FrameworkArchList, AnElfHeaderClaimingAHugeSectionTableAllocatesNothingOfIt) {
  const fs::path dir = temp_dir("elf_huge");
  std::string elf = make_elf("", "\0sm_80 sm_90\0"s);
  put<std::uint16_t>(elf, 0x3a, 65535);  // e_shentsize
  put<std::uint16_t>(elf, 0x3c, 65535);  // e_shnum
  write_file(dir / "libtorch_python.so", elf);
  SystemView view;
  view.root = dir;
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto list = scan_arch_list(view, "/libtorch_python.so");
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256L << 10) << "KiB of peak memory grown";
  EXPECT_EQ(list, "sm_80 sm_90");  // not an ELF it can trust: the whole small file is read
  fs::remove_all(dir);
}

TEST(FrameworkArchList, ListCutByAChunkBoundaryIsSeenWhole) {
  const fs::path dir = temp_dir("chunks");
  std::string blob((8u << 20) - 6, 'x');
  blob += "\0sm_80 sm_86 sm_90\0"s;
  write_file(dir / "big", blob);
  SystemView view;
  view.root = dir;
  EXPECT_EQ(scan_arch_list(view, "/big"), "sm_80 sm_86 sm_90");
  fs::remove_all(dir);
}

TEST(FrameworkArchList, RealDebianCpuTorchHasNoListAndIsReadFast) {
  const std::string lib = "/usr/lib/python3/dist-packages/torch/lib/libtorch_python.so";
  if (!fs::exists(lib)) GTEST_SKIP() << "python3-torch is not installed here (" << lib << ")";
  SystemView view;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(scan_arch_list(view, lib)) << "Debian's python3-torch is a CPU-only build";
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(FrameworkFiles, TensorflowBuildInfoInBothGeneratedForms) {
  auto info = parse_tf_build_info(
      "import collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', "
      "'/usr/lib/llvm-18/bin/clang'), ('cuda_compute_capabilities', ['sm_60', 'sm_70', "
      "'compute_90']), ('cuda_version', '12.5.1'), ('cudnn_version', '9'), ('is_cuda_build', "
      "True), ('is_rocm_build', False)])\n");
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->is_cuda_build);
  EXPECT_EQ(info->cuda_version, "12.5.1");
  EXPECT_EQ(info->cudnn_version, "9");
  EXPECT_EQ(info->cuda_capabilities, (std::vector<std::string>{"sm_60", "sm_70", "compute_90"}));
  info = parse_tf_build_info(
      "build_info = {'cuda_version': '64_101', 'is_rocm_build': False, 'is_cuda_build': True}");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->cuda_version, "64_101");
  info = parse_tf_build_info("build_info = collections.OrderedDict([('is_cuda_build', False)])");
  ASSERT_TRUE(info);
  EXPECT_FALSE(info->is_cuda_build);
  EXPECT_FALSE(parse_tf_build_info("nothing here"));
  // Hostile lengths are passed over, never a crash.
  const std::string huge(16000, 'x');
  EXPECT_FALSE(parse_tf_build_info("('cuda_version', '" + huge + "')"));
  EXPECT_FALSE(parse_requirement("nvidia-x==" + huge));
  EXPECT_FALSE(parse_jax_version_py("__version__ = \"" + huge + "\"").version);
}

TEST(FrameworkFiles, JaxVersionPyOldAndNew) {
  auto v = parse_jax_version_py(
      "_version = \"0.5.0\"\n_release_version: str = '0.5.1'\n"
      "  old_version_string = \"_release_version: str = '0.5.0'\"\n"
      "__version__ = _get_version_string()\n_minimum_jaxlib_version = \"0.5.0\"\n");
  EXPECT_EQ(v.version, "0.5.1");
  EXPECT_EQ(v.minimum_jaxlib, "0.5.0");
  v = parse_jax_version_py("__version__ = \"0.4.14\"\n_minimum_jaxlib_version = \"0.4.11\"\n");
  EXPECT_EQ(v.version, "0.4.14");
  EXPECT_EQ(v.minimum_jaxlib, "0.4.11");
}

TEST(FrameworkFiles, KerasJsonAndTheanoFlags) {
  EXPECT_EQ(parse_keras_backend("{\"backend\": \"jax\", \"floatx\": \"float32\"}"), "jax");
  EXPECT_FALSE(parse_keras_backend("{\"floatx\": \"float32\"}"));
  EXPECT_FALSE(parse_keras_backend("not json"));
  auto f = parse_theano_flags("device=cuda0, floatX=float64,gpuarray__preallocate=0.8");
  EXPECT_EQ(f["device"], "cuda0");
  EXPECT_EQ(f["floatx"], "float64");
  EXPECT_EQ(f["gpuarray.preallocate"], "0.8");
  auto rc =
      parse_theanorc("[global]\ndevice = cuda # the GPU\nfloatX=float32\n[lib]\ncnmem = 0.5\n");
  EXPECT_EQ(rc["device"], "cuda");
  EXPECT_EQ(rc["floatx"], "float32");
  EXPECT_EQ(rc["lib.cnmem"], "0.5");
}

TEST(FrameworkGpus, HowAnArchListServesACapability) {
  const std::vector<std::string> list{"sm_80", "sm_90a", "compute_90"};
  EXPECT_EQ(arch_fit(list, 86), ArchFit::kNative);    // sm_80 code runs on 8.6
  EXPECT_EQ(arch_fit(list, 90), ArchFit::kNative);    // sm_90a on exactly 9.0
  EXPECT_EQ(arch_fit(list, 100), ArchFit::kPtxOnly);  // compute_90 JIT-compiles
  EXPECT_EQ(arch_fit(list, 75), ArchFit::kNone);
  EXPECT_EQ(arch_fit({"sm_90a"}, 100), ArchFit::kNone);
  EXPECT_EQ(arch_span({"sm_50", "sm_60", "sm_70", "sm_90"}), "sm_50…sm_90");
}

TEST(FrameworkGpus, InstallAdviceComesFromTheWheelTable) {
  GpuPicture gpus;
  gpus.nvidia = true;
  gpus.driver_version = "575.51.03";
  gpus.gpus.push_back({"cuda0", "NVIDIA GeForce RTX 5090", 120});
  host::PythonEnv env{"/opt/venv", "VIRTUAL_ENV", {"/opt/venv/lib/python3.12/site-packages"}};
  EXPECT_EQ(python_version_of(env), "3.12");
  // 575 cannot run CUDA 13: the cu128 wheel of the newest release, run by the env's python.
  InstallAdvice a = install_advice(gpus, "torch", &env, "3.12");
  ASSERT_TRUE(a.found) << a.line;
  EXPECT_EQ(a.line.find("/opt/venv/bin/python3 -m pip install torch==2.11.* --index-url "
                        "https://download.pytorch.org/whl/cu128"),
            0u)
      << a.line;
  // The release line kept when it fits.
  a = install_advice(gpus, "torch", nullptr, "3.12", "2.7");
  EXPECT_NE(a.line.find("torch==2.7.*"), std::string::npos) << a.line;
  // A driver too old for every wheel that carries sm_120: the driver to install.
  gpus.driver_version = "520.61.05";
  a = install_advice(gpus, "torch", nullptr, "3.12");
  EXPECT_FALSE(a.found);
  EXPECT_NE(a.line.find("update the NVIDIA driver to 525.60.13"), std::string::npos) << a.line;
}

TEST(FrameworkEnvs, ImportPathOrder) {
  const fs::path root = temp_dir("envs");
  for (const char* d : {"opt/venv/lib/python3.12/site-packages", "usr/lib/python3/dist-packages",
                        "usr/local/lib/python3.11/dist-packages", "usr/lib/python3.11",
                        "home/a/.local/lib/python3.11/site-packages",
                        "home/a/.local/lib/python3.12/site-packages", "extra"})
    fs::create_directories(root / d);
  write_file(root / "opt/venv/pyvenv.cfg", "include-system-site-packages = false\n");
  SystemView view;
  view.root = root;
  view.env["HOME"] = "/home/a";
  view.env["PYTHONPATH"] = "/extra:relative";
  const host::PythonEnv venv{
      "/opt/venv", "VIRTUAL_ENV", {"/opt/venv/lib/python3.12/site-packages"}};
  EXPECT_EQ(host::import_path(view, venv),
            (std::vector<std::string>{"/extra", "/opt/venv/lib/python3.12/site-packages"}));
  const host::PythonEnv sys{
      "/usr",
      "PATH /usr/bin/python3",
      {"/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages"}};
  EXPECT_EQ(host::import_path(view, sys),
            (std::vector<std::string>{"/extra", "/home/a/.local/lib/python3.11/site-packages",
                                      "/usr/local/lib/python3.11/dist-packages",
                                      "/usr/lib/python3/dist-packages"}));
  view.env["PYTHONNOUSERSITE"] = "1";
  EXPECT_EQ(host::import_path(view, sys).size(), 3u);
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpucheck::doctor
