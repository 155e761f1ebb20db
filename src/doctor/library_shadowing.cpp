// The NVIDIA wheels' libraries against LD_LIBRARY_PATH's copies.
#include "doctor/library_shadowing.h"

#include "doctor/cuda_facts.h"
#include "doctor/framework_gpus.h"
#include "host/python_envs.h"

#include <algorithm>
#include <filesystem>
#include <regex>

namespace gpucheck::doctor {

namespace {

// The wheel that ships a library: libcublasLt is in nvidia-cublas, libcudnn_graph in
// nvidia-cudnn.
std::string wheel_of(std::string_view stem) {
  std::string s(stem.substr(3));  // without "lib"
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.starts_with("cublas")) return "cublas";
  if (s.starts_with("cudnn")) return "cudnn";
  return s;
}

// The version a library file's real name carries (libnvJitLink.so.12.1.105 -> 12.1.105),
// following its symbolic links inside the view; empty when the name carries none beyond the
// soname's major.
std::string file_version(const SystemView& view, const std::string& path) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(view.host_path(path), ec);
  const std::string name = ec ? path : real.filename().string();
  static const std::regex kVersioned(R"(\.so\.([0-9]+\.[0-9]+(\.[0-9]+)*)$)");
  std::smatch m;
  return std::regex_search(name, m, kVersioned) ? m[1].str() : std::string();
}

}  // namespace

bool ShadowedLibrary::versions_differ() const {
  return wheel_version.empty() || version.empty() ||
         major_minor_patch(wheel_version) != major_minor_patch(version);
}

std::vector<ShadowedLibrary> shadowed_wheel_libraries(const SystemView& view,
                                                      const std::vector<std::string_view>& stems) {
  const std::vector<std::string> ld = search_dirs(view.env_value("LD_LIBRARY_PATH").value_or(""));
  if (ld.empty()) return {};
  std::vector<ShadowedLibrary> out;
  const auto envs = host::python_environments(view);
  for (const auto& scan : scan_environments(view, envs))
    for (const auto& site : scan.sites)
      for (const auto& lib_dir : wheel_lib_dirs(view, site.dir))
        for (const auto& file : view.list_dir(lib_dir)) {
          // The soname itself (libcublasLt.so.12), not the versioned names beside it.
          const auto so = file.find(".so.");
          if (so == std::string::npos ||
              file.find_first_not_of("0123456789", so + 4) != std::string::npos)
            continue;
          const std::string stem = file.substr(0, so);
          if (std::find(stems.begin(), stems.end(), stem) == stems.end()) continue;
          for (const auto& dir : ld) {
            if (lib_dir == dir || !view.exists(dir + "/" + file)) continue;
            ShadowedLibrary s;
            s.soname = file;
            s.environment = scan.env->prefix;
            s.wheel_path = lib_dir + "/" + file;
            for (const auto& d : site.gpu_dists)
              if (host::is_library_wheel(d.name, wheel_of(stem))) s.wheel_version = d.version;
            s.path = dir + "/" + file;
            s.version = file_version(view, s.path);
            if (std::none_of(out.begin(), out.end(), [&](const ShadowedLibrary& o) {
                  return o.wheel_path == s.wheel_path && o.path == s.path;
                }))
              out.push_back(std::move(s));
            break;  // the first LD_LIBRARY_PATH directory holding it wins
          }
        }
  return out;
}

}  // namespace gpucheck::doctor
