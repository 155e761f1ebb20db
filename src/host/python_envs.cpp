// Finding Python environments and reading their GPU frameworks' metadata from files.
#include "host/python_envs.h"
#include "core/files.h"
#include "core/text.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

namespace gpucheck::host {

namespace {

std::string normalise(std::string name) {
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '_' || c == '.') c = '-';
  }
  return name;
}

bool is_gpu_dist(const std::string& n) {
  return n.starts_with("nvidia-") || n == "torch" || n == "jax" || n == "jaxlib" ||
         n.starts_with("jax-cuda") || n.starts_with("jax-rocm") || n.starts_with("cupy") ||
         n == "tensorflow" || n.starts_with("tensorflow-") || n == "tf-nightly" || n == "keras" ||
         n == "tf-keras" || n == "theano" || n == "pytensor" || n == "pygpu";
}

// Site directories of an installation prefix, as CPython, Debian and conda lay them out.
std::vector<std::string> site_dirs_of(const HostView& view, const std::string& prefix) {
  std::string p = prefix == "/" ? "" : prefix;
  std::vector<std::string> out;
  for (const auto& pattern :
       {p + "/lib/python3*/site-packages", p + "/lib/python3*/dist-packages",
        p + "/lib/python3/dist-packages", p + "/local/lib/python3*/dist-packages",
        p + "/lib64/python3*/site-packages"})
    for (const auto& d : view.glob(pattern))
      if (view.is_dir(d)) out.push_back(d);
  return out;
}

bool is_python_name(const std::string& name) {
  static const std::regex kPython(R"(python(3(\.[0-9]+)?)?)");
  return std::regex_match(name, kPython);
}

// pyenv's shims run the version named by PYENV_VERSION or $PYENV_ROOT/version.
std::vector<std::string> pyenv_prefixes(const HostView& view, const std::string& shims_dir) {
  const std::string root = dirname_of(shims_dir);
  std::vector<std::string> out;
  if (!view.is_dir(root + "/versions")) return out;
  std::string versions;
  if (auto v = view.env_value("PYENV_VERSION"); v && !v->empty())
    versions = *v;
  else if (auto f = view.read_file(root + "/version"))
    versions = *f;
  // Several versions may be selected: ':' in the variable, lines or spaces in the file.
  std::replace(versions.begin(), versions.end(), ':', ' ');
  std::stringstream in(versions);
  for (std::string name; in >> name;)
    if (name != "system") out.push_back(root + "/versions/" + name);
  return out;
}

std::string canonical_key(const HostView& view, const std::string& path) {
  std::error_code ec;
  auto c = std::filesystem::canonical(view.host_path(path), ec);
  return ec ? path : c.string();
}

// Every value of a header field; the headers end at the first blank line.
std::vector<std::string> metadata_fields(const std::string& text, const std::string& field) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line == "\r") break;
    if (line.starts_with(field + ":")) {
      std::string v = line.substr(field.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
      out.push_back(std::move(v));
    }
  }
  return out;
}

std::optional<std::string> metadata_field(const std::string& text, const std::string& field) {
  auto all = metadata_fields(text, field);
  if (all.empty()) return std::nullopt;
  return all.front();
}

// A distribution from its .dist-info (METADATA) or .egg-info (PKG-INFO, as Debian's
// python3-* packages and setup.py installs leave them) directory.
Distribution read_distribution(const HostView& view, const std::string& dir,
                               const std::string& entry) {
  const bool egg = entry.ends_with(".egg-info");
  const std::string path = dir + "/" + entry;
  Distribution d;
  d.dist_info = path;
  if (auto meta = view.read_file(path + (egg ? "/PKG-INFO" : "/METADATA"), 64u << 10)) {
    d.name = normalise(metadata_field(*meta, "Name").value_or(""));
    d.version = metadata_field(*meta, "Version").value_or("");
    d.requires_dist = metadata_fields(*meta, "Requires-Dist");
  }
  if (d.name.empty()) {
    // name-version.dist-info
    const std::string stem = entry.substr(0, entry.rfind('.'));
    const auto dash = stem.find('-');
    d.name = normalise(stem.substr(0, dash));
    if (dash != std::string::npos) d.version = stem.substr(dash + 1);
  }
  return d;
}

}  // namespace

std::vector<PythonEnv> python_environments(const HostView& view) {
  std::vector<PythonEnv> envs;
  std::vector<std::string> seen_sites;
  auto add = [&](const std::string& prefix, const std::string& origin) {
    PythonEnv env{prefix, origin, {}};
    for (const auto& d : site_dirs_of(view, prefix)) {
      const std::string key = canonical_key(view, d);
      if (std::find(seen_sites.begin(), seen_sites.end(), key) != seen_sites.end()) continue;
      seen_sites.push_back(key);
      env.site_dirs.push_back(d);
    }
    if (!env.site_dirs.empty()) envs.push_back(std::move(env));
  };
  for (const char* var : {"CONDA_PREFIX", "VIRTUAL_ENV"})
    if (auto v = view.env_value(var); v && !v->empty()) add(*v, var);
  if (auto path = view.env_value("PATH")) {
    std::stringstream in(*path);
    for (std::string dir; std::getline(in, dir, ':');) {
      if (dir.empty() || !dir.starts_with('/')) continue;
      while (dir.size() > 1 && dir.ends_with('/')) dir.pop_back();
      const auto names = view.list_dir(dir);
      const auto python = std::find_if(names.begin(), names.end(), is_python_name);
      if (python == names.end()) continue;
      if (dir.ends_with("/shims")) {
        for (const auto& prefix : pyenv_prefixes(view, dir))
          add(prefix, "pyenv " + dir + "/" + *python);
        continue;
      }
      add(dirname_of(dir), "PATH " + dir + "/" + *python);
    }
  }
  // Debian's system packages, even when no interpreter on PATH leads there.
  add("/usr", "system (/usr/lib/python3/dist-packages)");
  return envs;
}

const Distribution* SitePackages::find(const std::string& name) const {
  for (const auto& d : gpu_dists)
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<std::pair<int, std::string>> SitePackages::cuda_majors() const {
  std::vector<std::pair<int, std::string>> out;
  if (torch && torch->cuda) {
    try {
      out.emplace_back(std::stoi(*torch->cuda), "torch " + torch->version);
    } catch (const std::exception&) {
    }
  }
  for (const auto& d : gpu_dists)
    if (auto m = cuda_major_of_dist(d.name, d.version))
      out.emplace_back(*m, d.name + " " + d.version);
  return out;
}

std::optional<int> cuda_major_of_wheel(const std::string& n) {
  static const std::regex kNvidia(R"(^nvidia-.*-cu([0-9]+)$)");
  static const std::regex kJax(R"(^jax-cuda([0-9]+)-(plugin|pjrt)$)");
  static const std::regex kCupyX(R"(^cupy-cuda([0-9]+)x$)");
  static const std::regex kCupyOld(R"(^cupy-cuda([0-9]+)$)");
  std::smatch m;
  if (std::regex_match(n, m, kNvidia) || std::regex_match(n, m, kJax) ||
      std::regex_match(n, m, kCupyX))
    return std::stoi(m[1].str());
  if (std::regex_match(n, m, kCupyOld)) {
    // cupy-cuda114 is CUDA 11.4, cupy-cuda92 is 9.2: the last digit is the minor version.
    const std::string digits = m[1].str();
    if (digits.size() >= 2) return std::stoi(digits.substr(0, digits.size() - 1));
  }
  return std::nullopt;
}

bool is_library_wheel(const std::string& n, std::string_view library) {
  const std::string base = "nvidia-" + std::string(library);
  static const std::regex kSuffix(R"(-cu[0-9]+)");
  return n == base || (n.starts_with(base) && std::regex_match(n.substr(base.size()), kSuffix));
}

std::optional<int> cuda_major_of_dist(const std::string& n, const std::string& version) {
  if (auto m = cuda_major_of_wheel(n)) return m;
  // CUDA 13's wheels drop the -cuNN suffix (nvidia-cublas 13.1.0.3): for the libraries that
  // share the toolkit's version, its first number is the CUDA major. cuFFT, cuRAND, cuSOLVER,
  // cuSPARSE and cuDNN number themselves (CUDA 13 ships cuRAND 10.4, cuFFT 12.0), and so does
  // nvidia-ml-py.
  static const std::regex kToolkit(
      R"(^nvidia-(cublas|cuda-runtime|cuda-nvrtc|cuda-cupti|nvjitlink)$)");
  static const std::regex kMajor(R"(^([0-9]+)\.)");
  std::smatch m;
  if (std::regex_match(n, kToolkit) && std::regex_search(version, m, kMajor))
    return std::stoi(m[1].str());
  return std::nullopt;
}

bool pyvenv_includes_system_site(std::string_view cfg) {
  // As CPython's site.py reads it: key = value lines, the key's case ignored. No std::regex: it
  // recurses per character, and a long line of spaces overflowed the stack.
  const auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
  };
  bool include = false;
  while (!cfg.empty()) {
    const auto nl = cfg.find('\n');
    const std::string_view line = cfg.substr(0, nl);
    cfg = nl == std::string_view::npos ? std::string_view() : cfg.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    if (lower(trim_space(line.substr(0, eq))) == "include-system-site-packages")
      include = lower(trim_space(line.substr(eq + 1))) == "true";
  }
  return include;
}

std::optional<TorchBuild> parse_torch_version_py(const std::string& text) {
  // Lines like: __version__ = '2.3.0+cu121'   cuda: Optional[str] = '12.1'   hip = None
  static const std::regex kAssign(R"(^\s*([A-Za-z_]+)\s*(:[^=]*)?=\s*(.*?)\s*$)");
  static const std::regex kQuoted(R"(^['"]([^'"]*)['"]$)");
  TorchBuild b;
  bool have_version = false;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    // std::regex recurses per character: a line longer than any assignment torch writes is
    // passed over rather than risking the stack.
    if (line.size() > 1024 || !std::regex_match(line, m, kAssign)) continue;
    const std::string name = m[1].str();
    const std::string raw = m[3].str();
    std::smatch q;
    std::optional<std::string> value;
    if (std::regex_match(raw, q, kQuoted)) value = q[1].str();
    if (name == "__version__" && value) {
      b.version = *value;
      have_version = true;
    } else if (name == "cuda") {
      b.cuda = value;
    } else if (name == "hip") {
      b.hip = value;
    }
  }
  if (!have_version) return std::nullopt;
  return b;
}

SitePackages read_site_packages(const HostView& view, const std::string& dir) {
  SitePackages sp;
  sp.dir = dir;
  for (const auto& entry : view.list_dir(dir)) {
    if (!entry.ends_with(".dist-info") && !entry.ends_with(".egg-info")) continue;
    // The directory's name starts with the distribution's: only GPU packages' METADATA is
    // read, so a conda environment of hundreds of packages costs a directory listing.
    if (!is_gpu_dist(normalise(entry.substr(0, entry.find('-'))))) continue;
    Distribution d = read_distribution(view, dir, entry);
    if (is_gpu_dist(d.name)) sp.gpu_dists.push_back(std::move(d));
  }
  std::sort(sp.gpu_dists.begin(), sp.gpu_dists.end(),
            [](const Distribution& a, const Distribution& b) { return a.name < b.name; });
  const std::string version_file = dir + "/torch/version.py";
  if (auto text = view.read_file(version_file, 64u << 10)) {
    if (auto t = parse_torch_version_py(*text)) {
      t->version_file = version_file;
      for (const auto& lib : view.list_dir(dir + "/torch/lib"))
        if (lib.starts_with("libcudnn") || lib.starts_with("libcublas"))
          t->bundled_cuda_libs.push_back(lib);
      sp.torch = std::move(t);
    }
  }
  return sp;
}

std::optional<std::string> python_version_of_site(const std::string& site_dir) {
  static const std::regex kVersion(R"(/python(3\.[0-9]+)/)");
  std::smatch m;
  if (std::regex_search(site_dir, m, kVersion)) return m[1].str();
  return std::nullopt;
}

std::vector<std::string> import_path(const HostView& view, const PythonEnv& env) {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (!d.empty() && view.is_dir(d) && std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(d);
  };
  if (auto pp = view.env_value("PYTHONPATH")) {
    std::stringstream in(*pp);
    for (std::string d; std::getline(in, d, ':');)
      if (d.starts_with('/')) add(d);
  }
  bool user_site = !view.env_set("PYTHONNOUSERSITE");
  if (auto cfg = view.read_file(env.prefix + "/pyvenv.cfg", 64u << 10))
    user_site = user_site && pyvenv_includes_system_site(*cfg);
  const auto home = view.env_value("HOME");
  if (user_site && home && !home->empty()) {
    std::set<std::string> versions;
    for (const auto& d : env.site_dirs)
      if (auto v = python_version_of_site(d)) versions.insert(*v);
    // Debian's /usr/lib/python3/dist-packages names no version: its standard library does.
    const std::string prefix = env.prefix == "/" ? "" : env.prefix;
    if (versions.empty())
      for (const auto& d : view.glob(prefix + "/lib/python3.*/"))
        if (auto v = python_version_of_site(d)) versions.insert(*v);
    for (const auto& v : versions) add(*home + "/.local/lib/python" + v + "/site-packages");
  }
  for (const auto& d : env.site_dirs)
    if (d.find("/local/lib/") != std::string::npos) add(d);
  for (const auto& d : env.site_dirs) add(d);
  return out;
}

}  // namespace gpucheck::host
