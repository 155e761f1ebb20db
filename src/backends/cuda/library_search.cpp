// File-system search for the CUDA libraries and cuDNN's version header.
#include "backends/cuda/library_search.h"

#include "core/sanitize.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace gpucheck::cuda {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string env_or(const EnvMap& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

// Sorted subdirectories of `dir` whose names match `re`.
std::vector<fs::path> subdirs_matching(const fs::path& dir, const std::regex& re) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && std::regex_match(e.path().filename().string(), re))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The toolkit's library folders: /usr/local/cuda*/lib64 and /usr/local/cuda*/targets/*/lib.
std::vector<fs::path> toolkit_lib_dirs(const std::string& usr_local) {
  std::vector<fs::path> out;
  for (const auto& root : subdirs_matching(usr_local, std::regex("cuda.*"))) {
    out.push_back(root / "lib64");
    for (const auto& t : subdirs_matching(root / "targets", std::regex(".*")))
      out.push_back(t / "lib");
  }
  return out;
}

std::optional<int> major_of(const std::string& suffix) {
  if (suffix.empty()) return std::nullopt;
  auto dot = suffix.find('.');
  try {
    return std::stoi(suffix.substr(0, dot));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The version of the header installed beside a library (<dir>/../include), for copies whose file
// name carries only the soname major: Python wheels ship "libcudnn.so.9" with nothing after it.
using HeaderParser = std::optional<std::string> (*)(const std::string&);

// The version `parse` reads from the header file at `path`; nullopt when absent or unreadable.
std::optional<std::string> header_version_at(const fs::path& path, HeaderParser parse) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse(text);
}

std::string sibling_header_version(const LibrarySpec& spec, const fs::path& lib_dir) {
  const bool cudnn = spec.name == "cudnn";
  const fs::path include = lib_dir.parent_path() / "include";
  auto v = cudnn ? header_version_at(include / "cudnn_version.h", parse_cudnn_version_header)
                 : header_version_at(include / "cublas_api.h", parse_cublas_version_header);
  return v.value_or("");
}

struct Collector {
  const LibrarySpec& spec;
  std::vector<FoundCopy> out;
  std::set<std::string> seen;

  void add(const fs::path& p, const std::string& source) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return;
    std::string name = p.filename().string();
    if (name.rfind(spec.stem, 0) != 0) return;
    fs::path real = fs::canonical(p, ec);
    std::string real_s = ec ? p.string() : real.string();
    if (!seen.insert(real_s).second) return;
    FoundCopy c;
    c.path = sanitize(p.string());
    c.real_path = sanitize(real_s);
    c.source = source;
    // The link's own name carries the soname major; the resolved file the full version.
    c.major = major_of(version_suffix(p.string(), spec.stem));
    if (!c.major) c.major = major_of(version_suffix(real_s, spec.stem));
    c.file_version = sanitize(version_suffix(real_s, spec.stem));
    if (c.file_version.find('.') == std::string::npos)
      if (auto v = sibling_header_version(spec, fs::path(real_s).parent_path()); !v.empty())
        c.file_version = sanitize(v);
    c.usable = c.major && *c.major == spec.major;
    out.push_back(std::move(c));
  }

  // Every stem.* in a directory, the soname first so the search order prefers it.
  void scan_dir(const fs::path& dir, const std::string& source) {
    add(dir / spec.soname(), source);
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().rfind(spec.stem + ".", 0) == 0) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(f, source);
  }
};

}  // namespace

LibrarySpec cublas_spec() {
  return {"cublas",
          "libcublas.so",
          13,
          {"nvidia/cublas/lib", "nvidia/cu13/lib"},
          "GPUCHECK_CUBLAS_LIB"};
}
LibrarySpec cublaslt_spec() {
  return {"cublaslt",
          "libcublasLt.so",
          13,
          {"nvidia/cublas/lib", "nvidia/cu13/lib"},
          "GPUCHECK_CUBLASLT_LIB"};
}
LibrarySpec cudnn_spec() {
  return {"cudnn", "libcudnn.so", 9, {"nvidia/cudnn/lib", "nvidia/cu13/lib"}, "GPUCHECK_CUDNN_LIB"};
}

SearchRoots search_roots(const LibrarySpec& spec, const EnvMap& env) {
  SearchRoots r;
  if (auto p = env_or(env, spec.override_env); !p.empty()) r.explicit_path = p;
  r.ld_library_path = split(env_or(env, "LD_LIBRARY_PATH"), ':');
  r.conda_prefix = env_or(env, "CONDA_PREFIX");
  // site-packages of the usual interpreters and environments, read without running Python.
  std::vector<fs::path> bases = {"/usr/lib", "/usr/local/lib"};
  if (auto v = env_or(env, "VIRTUAL_ENV"); !v.empty()) bases.emplace_back(fs::path(v) / "lib");
  if (!r.conda_prefix.empty()) bases.emplace_back(fs::path(r.conda_prefix) / "lib");
  if (auto h = env_or(env, "HOME"); !h.empty()) bases.emplace_back(fs::path(h) / ".local/lib");
  // The environment of every python3 on PATH (a venv's bin/ holds one): torch's own cuDNN and
  // cuBLAS wheels live there, and they are the copies a framework actually loads.
  for (const auto& dir : split(env_or(env, "PATH"), ':')) {
    std::error_code ec;
    if (dir.empty() || !fs::exists(fs::path(dir) / "python3", ec)) continue;
    fs::path lib = fs::path(dir).parent_path() / "lib";
    if (std::find(bases.begin(), bases.end(), lib) == bases.end()) bases.push_back(lib);
  }
  for (const auto& b : bases)
    for (const auto& py : subdirs_matching(b, std::regex("python3.*")))
      for (const char* leaf : {"site-packages", "dist-packages"}) {
        std::error_code ec;
        if (fs::is_directory(py / leaf, ec)) r.site_packages.push_back((py / leaf).string());
      }
  return r;
}

std::string version_suffix(const std::string& path, const std::string& stem) {
  std::string name = fs::path(path).filename().string();
  if (name.rfind(stem + ".", 0) != 0) return {};
  return name.substr(stem.size() + 1);
}

std::vector<std::string> ld_cache_entries(const std::string& cache_file, const std::string& stem) {
  std::ifstream in(cache_file, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  // The cache's string table holds NUL-terminated names and absolute paths; keep the paths.
  std::size_t start = 0;
  for (std::size_t i = 0; i <= data.size(); ++i) {
    if (i < data.size() && data[i] != '\0') continue;
    std::string s = data.substr(start, i - start);
    start = i + 1;
    if (s.empty() || s[0] != '/') continue;
    if (fs::path(s).filename().string().rfind(stem, 0) == 0 &&
        std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  }
  return out;
}

std::vector<FoundCopy> find_copies(const LibrarySpec& spec, const SearchRoots& roots) {
  Collector c{spec, {}, {}};
  if (roots.explicit_path) c.add(*roots.explicit_path, "explicit");
  for (const auto& d : roots.ld_library_path) c.scan_dir(d, "LD_LIBRARY_PATH");
  auto cached = ld_cache_entries(roots.ld_cache_file, spec.stem);
  std::stable_partition(cached.begin(), cached.end(), [&](const std::string& p) {
    return fs::path(p).filename() == spec.soname();
  });
  for (const auto& p : cached) c.add(p, "ld.so cache");
  for (const auto& d : toolkit_lib_dirs(roots.usr_local)) c.scan_dir(d, "toolkit");
  if (!roots.conda_prefix.empty()) c.scan_dir(fs::path(roots.conda_prefix) / "lib", "conda");
  for (const auto& sp : roots.site_packages)
    for (const auto& w : spec.wheel_dirs) c.scan_dir(fs::path(sp) / w, "wheel");
  return c.out;
}

namespace {

// "MAJOR.MINOR.PATCH" from three #define lines of a version header.
std::optional<std::string> version_defines(const std::string& text, const char* major_name,
                                           const char* minor_name, const char* patch_name) {
  auto field = [&](const char* name) -> std::optional<std::string> {
    std::smatch m;
    std::regex re(fmt::format(R"(#define\s+{}\s+(\d+))", name));
    if (std::regex_search(text, m, re)) return m[1].str();
    return std::nullopt;
  };
  auto major = field(major_name), minor = field(minor_name), patch = field(patch_name);
  if (!major || !minor) return std::nullopt;
  return fmt::format("{}.{}.{}", *major, *minor, patch.value_or("0"));
}

// Every copy of one header in the system, toolkit, conda and wheel include folders, with the
// version `parse` reads from it; each real file once.
std::vector<HeaderVersion> find_headers(const SearchRoots& roots, const char* file,
                                        const char* wheel_include, HeaderParser parse) {
  std::vector<fs::path> dirs = {"/usr/include", "/usr/include/x86_64-linux-gnu",
                                "/usr/include/aarch64-linux-gnu"};
  for (const auto& root : subdirs_matching(roots.usr_local, std::regex("cuda.*"))) {
    dirs.push_back(root / "include");
    for (const auto& t : subdirs_matching(root / "targets", std::regex(".*")))
      dirs.push_back(t / "include");
  }
  if (!roots.conda_prefix.empty()) dirs.push_back(fs::path(roots.conda_prefix) / "include");
  for (const auto& sp : roots.site_packages) dirs.push_back(fs::path(sp) / wheel_include);
  std::vector<HeaderVersion> out;
  std::set<std::string> seen;
  for (const auto& d : dirs) {
    std::error_code ec;
    fs::path f = d / file;
    if (!fs::is_regular_file(f, ec)) continue;
    fs::path real = fs::canonical(f, ec);
    if (!seen.insert(ec ? f.string() : real.string()).second) continue;
    if (auto v = header_version_at(f, parse)) out.push_back({sanitize(f.string()), *v});
  }
  return out;
}

}  // namespace

std::optional<std::string> parse_cudnn_version_header(const std::string& text) {
  return version_defines(text, "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL");
}

std::optional<std::string> parse_cublas_version_header(const std::string& text) {
  return version_defines(text, "CUBLAS_VER_MAJOR", "CUBLAS_VER_MINOR", "CUBLAS_VER_PATCH");
}

std::vector<HeaderVersion> find_cudnn_headers(const SearchRoots& roots) {
  return find_headers(roots, "cudnn_version.h", "nvidia/cudnn/include", parse_cudnn_version_header);
}

std::vector<HeaderVersion> find_cublas_headers(const SearchRoots& roots) {
  return find_headers(roots, "cublas_api.h", "nvidia/cublas/include", parse_cublas_version_header);
}

}  // namespace gpucheck::cuda
