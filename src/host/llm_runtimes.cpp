// Finding ollama and llama.cpp installs and their ggml backends.
#include "host/llm_runtimes.h"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

namespace gpucheck::host {

namespace {

const std::set<std::string> kGpuKinds{"cuda", "hip", "vulkan", "sycl", "opencl", "musa", "cann"};

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::vector<std::string> path_dirs(const HostView& view) {
  std::vector<std::string> out;
  std::stringstream in(view.env_value("PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
  for (std::string d; std::getline(in, d, ':');)
    if (d.starts_with('/') && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

// libggml-cuda.so -> cuda; libggml-cpu-haswell.so -> cpu; libggml-base.so and libggml.so are
// the loader's own.
std::optional<std::string> backend_kind(const std::string& file) {
  static const std::regex kBackend(R"(^libggml-([a-z0-9]+)(-[A-Za-z0-9_.]+)?\.so$)");
  std::smatch m;
  if (!std::regex_match(file, m, kBackend) || m[1].str() == "base") return std::nullopt;
  return m[1].str();
}

void add_backends(const HostView& view, const std::string& dir, const std::string& runner,
                  LlmRuntime& rt) {
  for (const auto& f : view.list_dir(dir)) {
    const auto kind = backend_kind(f);
    if (!kind) continue;
    const std::string path = dir + "/" + f;
    rt.backends.push_back({path, *kind, runner, read_elf_dynamic(view.host_path(path))});
  }
}

}  // namespace

bool GgmlBackend::gpu() const {
  return kGpuKinds.contains(kind);
}

std::map<std::string, std::string> unit_environment(const std::string& unit_text) {
  std::map<std::string, std::string> env;
  std::istringstream lines(unit_text);
  for (std::string line; std::getline(lines, line);) {
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.starts_with("Environment=")) continue;
    const std::string rest = line.substr(std::string_view("Environment=").size());
    // Words separated by blanks; a double-quoted word may hold blanks.
    std::vector<std::string> words;
    std::string word;
    bool quoted = false, any = false;
    for (char c : rest) {
      if (c == '"') {
        quoted = !quoted;
        any = true;
      } else if ((c == ' ' || c == '\t') && !quoted) {
        if (any) words.push_back(word);
        word.clear();
        any = false;
      } else {
        word.push_back(c);
        any = true;
      }
    }
    if (any) words.push_back(word);
    for (const auto& w : words)
      if (const auto eq = w.find('='); eq != std::string::npos && eq > 0)
        env[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return env;
}

std::vector<LlmRuntime> find_llm_runtimes(const HostView& view) {
  std::vector<LlmRuntime> out;
  std::set<std::string> seen_dirs;
  // ollama: lib/ollama beside the binary's bin/, and the install script's and tarball's places.
  std::vector<std::string> ollama_dirs{"/usr/local/lib/ollama", "/usr/lib/ollama"};
  std::vector<std::string> ollama_bins;
  for (const auto& d : path_dirs(view))
    if (view.exists(d + "/ollama")) {
      ollama_bins.push_back(d + "/ollama");
      ollama_dirs.push_back(folder_of(d) + "/lib/ollama");
    }
  for (const auto& dir : ollama_dirs) {
    if (!view.is_dir(dir) || !seen_dirs.insert(dir).second) continue;
    LlmRuntime rt;
    rt.name = "ollama";
    rt.lib_dir = dir;
    for (const auto& b : ollama_bins)
      if (folder_of(folder_of(b)) + "/lib/ollama" == dir) rt.binaries.push_back(b);
    add_backends(view, dir, "", rt);
    for (const auto& sub : view.list_dir(dir))
      if (view.is_dir(dir + "/" + sub)) add_backends(view, dir + "/" + sub, sub, rt);
    std::string unit_text;
    for (const auto& unit : {std::string("/etc/systemd/system/ollama.service")})
      if (auto t = view.read_file(unit, 256u << 10)) {
        rt.service_unit = unit;
        unit_text += *t + "\n";
      }
    for (const auto& dropin : view.glob("/etc/systemd/system/ollama.service.d/*.conf"))
      if (auto t = view.read_file(dropin, 256u << 10)) {
        rt.service_unit += (rt.service_unit.empty() ? "" : ", ") + dropin;
        unit_text += *t + "\n";
      }
    rt.service_env = unit_environment(unit_text);
    out.push_back(std::move(rt));
  }
  // llama.cpp: its backends beside its binaries (release archives, cmake --install into
  // /usr/local/bin), in the library folders, and Debian's ggml backend folder.
  std::vector<std::string> llama_dirs;
  std::vector<std::string> llama_bins;
  for (const auto& d : path_dirs(view))
    for (const char* b : {"llama-server", "llama-cli"})
      if (view.exists(d + "/" + b)) {
        llama_bins.push_back(d + "/" + b);
        llama_dirs.push_back(d);
        llama_dirs.push_back(folder_of(d) + "/lib");
      }
  for (const char* d : {"/usr/local/lib", "/usr/local/lib64"}) llama_dirs.emplace_back(d);
  for (const auto& d : view.glob("/usr/lib/*-linux-gnu/ggml/*")) llama_dirs.push_back(d);
  for (const auto& dir : llama_dirs) {
    if (!seen_dirs.insert(dir).second || !view.is_dir(dir)) continue;
    LlmRuntime rt;
    rt.name = "llama.cpp";
    rt.lib_dir = dir;
    for (const auto& b : llama_bins)
      if (folder_of(b) == dir || folder_of(folder_of(b)) + "/lib" == dir) rt.binaries.push_back(b);
    add_backends(view, dir, "", rt);
    if (std::any_of(rt.backends.begin(), rt.backends.end(),
                    [](const GgmlBackend& b) { return b.gpu(); }))
      out.push_back(std::move(rt));
  }
  return out;
}

}  // namespace gpucheck::host
