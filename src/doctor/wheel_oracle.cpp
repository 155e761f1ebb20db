// The wheel matrices and the choice among them.
#include "doctor/wheel_oracle.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

extern const unsigned char gpucheck_wheels_config[];
extern const unsigned long long gpucheck_wheels_config_size;

namespace gpucheck::doctor {

namespace {

std::vector<int> parts_of(const std::string& v) {
  std::vector<int> out;
  std::istringstream in(v);
  for (std::string p; std::getline(in, p, '.');) {
    if (p.empty() || p.size() > 6 || p.find_first_not_of("0123456789") != std::string::npos)
      return {};
    out.push_back(std::stoi(p));
  }
  return out;
}

std::string text_at(const toml::table& t, std::string_view key, const std::string& where,
                    bool required = true) {
  if (auto v = t[key].value<std::string>()) return *v;
  if (required) throw std::runtime_error(fmt::format("{}: missing text '{}'", where, key));
  return {};
}

template <typename T>
std::vector<T> list_at(const toml::table& t, std::string_view key, const std::string& where) {
  std::vector<T> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) throw std::runtime_error(fmt::format("{}: '{}' is not a list", where, key));
  for (const auto& item : *a) {
    auto v = item.value<T>();
    if (!v)
      throw std::runtime_error(fmt::format("{}: '{}' holds a value of another type", where, key));
    out.push_back(*v);
  }
  return out;
}

// How a wheel serves one capability: 2 machine code, 1 PTX only, 0 not at all.
int serves(const WheelEntry& w, int cc) {
  if (w.sm.empty() && w.ptx.empty()) return cc >= w.sm_min ? 2 : 0;
  for (int s : w.sm)
    if (s / 10 == cc / 10 && s <= cc) return 2;
  if (w.ptx_fails_from != 0 && cc >= w.ptx_fails_from) return 0;
  for (int p : w.ptx)
    if (p <= cc) return 1;
  return 0;
}

bool python_fits(const WheelEntry& w, const std::string& py) {
  return py.empty() || std::find(w.python.begin(), w.python.end(), py) != w.python.end();
}

bool driver_fits(const WheelEntry& w, const WheelQuery& q) {
  if (!q.driver.empty() && !driver_at_least(q.driver, w.min_driver)) return false;
  if (q.driver_cuda != 0) {
    // The CUDA the driver says it supports: its major must reach the wheel's (minor-version
    // compatibility covers the minor).
    const auto parts = parts_of(w.cuda);
    return !parts.empty() && q.driver_cuda / 1000 >= parts[0];
  }
  return true;
}

// 2 every GPU has machine code, 1 some only PTX, 0 one has nothing.
int gpu_fit(const WheelEntry& w, const std::vector<int>& ccs) {
  int worst = 2;
  for (int cc : ccs) worst = std::min(worst, serves(w, cc));
  return worst;
}

std::string sm_list(const std::vector<int>& ccs) {
  std::vector<std::string> out;
  for (int c : ccs) out.push_back(fmt::format("sm_{}", c));
  std::string s;
  for (const auto& o : out) s += (s.empty() ? "" : ", ") + o;
  return s;
}

}  // namespace

std::string WheelEntry::describe() const {
  std::string arch;
  if (!sm.empty())
    arch = fmt::format(", sm_{}…sm_{}{}", sm.front(), sm.back(),
                       ptx.empty() ? "" : fmt::format(" + PTX {}", ptx.back()));
  else if (sm_min != 0)
    arch = fmt::format(", sm_{} and newer", sm_min);
  return fmt::format("{} {} {}: CUDA {}{}", framework, version, variant, cuda, arch);
}

bool driver_at_least(const std::string& have, const std::string& need) {
  const auto a = parts_of(have), b = parts_of(need);
  if (a.empty() || b.empty()) return false;
  return !std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::vector<WheelEntry> parse_wheel_table(std::string_view toml_text) {
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    throw std::runtime_error(fmt::format("configs/wheels.toml: {}", e.description()));
  }
  std::vector<WheelEntry> out;
  const toml::array* wheels = root["wheel"].as_array();
  if (wheels == nullptr) throw std::runtime_error("configs/wheels.toml: no [[wheel]] entries");
  std::size_t i = 0;
  for (const auto& node : *wheels) {
    const toml::table* t = node.as_table();
    const std::string where = fmt::format("configs/wheels.toml wheel #{}", ++i);
    if (t == nullptr) throw std::runtime_error(where + ": not a table");
    WheelEntry w;
    w.framework = text_at(*t, "framework", where);
    w.version = text_at(*t, "version", where);
    w.variant = text_at(*t, "variant", where);
    w.cuda = text_at(*t, "cuda", where);
    w.pip = text_at(*t, "pip", where);
    w.pypi_default = (*t)["pypi_default"].value_or(false);
    w.python = list_at<std::string>(*t, "python", where);
    w.sm = list_at<int>(*t, "sm", where);
    w.ptx = list_at<int>(*t, "ptx", where);
    w.sm_min = static_cast<int>((*t)["sm_min"].value_or(std::int64_t{0}));
    w.ptx_fails_from = static_cast<int>((*t)["ptx_fails_from"].value_or(std::int64_t{0}));
    w.min_driver = text_at(*t, "min_driver_linux", where);
    w.confidence = text_at(*t, "confidence", where);
    w.sources = list_at<std::string>(*t, "source", where);
    if (w.python.empty() || w.sources.empty() || parts_of(w.min_driver).empty())
      throw std::runtime_error(where + ": needs python, source and a dotted min_driver_linux");
    out.push_back(std::move(w));
  }
  return out;
}

const std::vector<WheelEntry>& wheel_table() {
  static const std::vector<WheelEntry> kTable = parse_wheel_table(std::string_view(
      reinterpret_cast<const char*>(gpucheck_wheels_config), gpucheck_wheels_config_size));
  return kTable;
}

WheelAdvice advise_wheel(const std::vector<WheelEntry>& table, const WheelQuery& q) {
  std::vector<const WheelEntry*> mine;
  for (const auto& w : table)
    if (w.framework == q.framework) mine.push_back(&w);
  if (mine.empty()) return {nullptr, false, "no wheel of " + q.framework + " is listed"};
  // Release lines newest first, the one to keep ahead of them.
  std::vector<std::string> lines;
  for (auto it = mine.rbegin(); it != mine.rend(); ++it)
    if (std::find(lines.begin(), lines.end(), (*it)->version) == lines.end())
      lines.push_back((*it)->version);
  if (auto k = std::find(lines.begin(), lines.end(), q.keep); k != lines.end())
    std::rotate(lines.begin(), k, k + 1);
  for (int wanted : {2, 1})  // machine code for every GPU first, then PTX
    for (const auto& line : lines) {
      const WheelEntry* best = nullptr;
      for (const WheelEntry* w : mine) {
        if (w->version != line || !python_fits(*w, q.python) || !driver_fits(*w, q) ||
            gpu_fit(*w, q.ccs) < wanted)
          continue;
        // PyPI's default when it fits, else the newest CUDA (the table lists it last).
        if (best == nullptr || !best->pypi_default) best = w;
      }
      if (best != nullptr) return {best, wanted == 1, {}};
    }
  // Nothing fits: say which constraint stops every wheel, and what would lift it.
  const std::string driver_text =
      q.driver.empty() ? fmt::format("CUDA {}.{}", q.driver_cuda / 1000, q.driver_cuda % 1000 / 10)
      : q.driver_cuda == 0 ? q.driver
                           : fmt::format("{}, CUDA {}.{}", q.driver, q.driver_cuda / 1000,
                                         q.driver_cuda % 1000 / 10);
  std::vector<const WheelEntry*> py_ok, gpu_ok;
  for (const WheelEntry* w : mine)
    if (python_fits(*w, q.python)) py_ok.push_back(w);
  if (py_ok.empty()) {
    std::vector<std::string> pys;
    for (const WheelEntry* w : mine)
      for (const auto& p : w->python)
        if (std::find(pys.begin(), pys.end(), p) == pys.end() && p.find('t') == std::string::npos)
          pys.push_back(p);
    std::sort(pys.begin(), pys.end(),
              [](const std::string& a, const std::string& b) { return parts_of(a) < parts_of(b); });
    return {nullptr, false,
            fmt::format("no {} wheel listed is built for Python {} (they are for Python {} to "
                        "{}): use an environment of one of those (python{} -m venv ...)",
                        q.framework, q.python, pys.front(), pys.back(), pys.back())};
  }
  for (const WheelEntry* w : py_ok)
    if (gpu_fit(*w, q.ccs) > 0) gpu_ok.push_back(w);
  if (gpu_ok.empty()) {
    // Older than every build's oldest architecture, or newer than what any build carries.
    int newest = 0, oldest = 1 << 30;
    for (const WheelEntry* w : py_ok) {
      for (int a : w->sm) newest = std::max(newest, a), oldest = std::min(oldest, a);
      for (int a : w->ptx) newest = std::max(newest, a);
      if (w->sm.empty()) oldest = std::min(oldest, w->sm_min);
    }
    const bool too_new =
        std::all_of(q.ccs.begin(), q.ccs.end(), [&](int cc) { return cc > newest; });
    if (too_new)
      return {nullptr, false,
              fmt::format("no {} wheel listed has kernels for {} (the newest carry up to sm_{}, "
                          "and their PTX does not run there): the GPU is newer than every "
                          "build; wait for a release that adds it, or build from source",
                          q.framework, sm_list(q.ccs), newest)};
    return {nullptr, false,
            fmt::format("no {} wheel listed has kernels for {} (the oldest listed start at "
                        "sm_{}): the GPU is older than every current build; build it from "
                        "source or use an older release from the project's archive",
                        q.framework, sm_list(q.ccs), oldest)};
  }
  const WheelEntry* easiest = gpu_ok.front();
  for (const WheelEntry* w : gpu_ok)
    if (driver_at_least(easiest->min_driver, w->min_driver) && easiest->min_driver != w->min_driver)
      easiest = w;
  return {nullptr, false,
          fmt::format("every {} wheel with kernels for {} needs a newer driver than this one "
                      "({}): update the NVIDIA driver to {} or later (then {})",
                      q.framework, sm_list(q.ccs), driver_text, easiest->min_driver, easiest->pip)};
}

}  // namespace gpucheck::doctor
