// The GEMM kernel's parameter space: one table of fields (name, values, accessors) serves the
// JSON form, the neighbours and the random draws; the validity rules mirror the kernel's loops.
#include "backends/opencl/gemm_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace gpucheck::opencl {

namespace {

struct Field {
  const char* name;
  std::vector<unsigned> values;  // every value the kernel accepts, in order
  unsigned (*get)(const GemmParams&);
  void (*set)(GemmParams&, unsigned);
};

const std::vector<Field>& fields() {
  static const std::vector<Field> f = {
      {"MWG",
       {2, 4, 8, 16, 32, 64, 128},
       [](const GemmParams& p) { return p.mwg; },
       [](GemmParams& p, unsigned v) { p.mwg = v; }},
      {"NWG",
       {8, 16, 32, 64, 128},
       [](const GemmParams& p) { return p.nwg; },
       [](GemmParams& p, unsigned v) { p.nwg = v; }},
      {"KWG",
       {8, 16, 32, 64},
       [](const GemmParams& p) { return p.kwg; },
       [](GemmParams& p, unsigned v) { p.kwg = v; }},
      {"MDIM",
       {1, 2, 4, 8, 16, 32},
       [](const GemmParams& p) { return p.mdim; },
       [](GemmParams& p, unsigned v) { p.mdim = v; }},
      {"NDIM",
       {1, 2, 4, 8, 16, 32},
       [](const GemmParams& p) { return p.ndim; },
       [](GemmParams& p, unsigned v) { p.ndim = v; }},
      {"VWM",
       {1, 2, 4, 8},
       [](const GemmParams& p) { return p.vwm; },
       [](GemmParams& p, unsigned v) { p.vwm = v; }},
      {"VWN",
       {1, 2, 4, 8, 16},
       [](const GemmParams& p) { return p.vwn; },
       [](GemmParams& p, unsigned v) { p.vwn = v; }},
      {"KVA",
       {1, 2, 4},
       [](const GemmParams& p) { return p.kva; },
       [](GemmParams& p, unsigned v) { p.kva = v; }},
      {"PADA",
       {0, 1, 2, 4},
       [](const GemmParams& p) { return p.pada; },
       [](GemmParams& p, unsigned v) { p.pada = v; }},
      {"SA",
       {0, 1},
       [](const GemmParams& p) { return unsigned{p.sa}; },
       [](GemmParams& p, unsigned v) { p.sa = v != 0; }},
      {"SB",
       {0, 1},
       [](const GemmParams& p) { return unsigned{p.sb}; },
       [](GemmParams& p, unsigned v) { p.sb = v != 0; }},
      {"MFIRST",
       {0, 1},
       [](const GemmParams& p) { return unsigned{p.mfirst}; },
       [](GemmParams& p, unsigned v) { p.mfirst = v != 0; }},
      {"PF",
       {0, 1},
       [](const GemmParams& p) { return unsigned{p.pf}; },
       [](GemmParams& p, unsigned v) { p.pf = v != 0; }},
  };
  return f;
}

std::size_t real_bytes(DType dtype) {
  return dtype == DType::kF64 ? 8 : 4;  // f16 is summed and staged in float
}

// Parameters that mean nothing without local staging are fixed, so one kernel has one form.
GemmParams normalized(GemmParams p) {
  if (!p.sa) p.kva = 1, p.pada = 0;
  if (!p.sa && !p.sb) p.pf = false;
  return p;
}

// A draw from a list.
template <typename T>
T pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

bool chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

}  // namespace

std::optional<std::string> invalid_reason(const GemmParams& p, const GemmLimits& limits,
                                          DType dtype) {
  for (const auto& f : fields()) {
    const unsigned v = f.get(p);
    if (std::find(f.values.begin(), f.values.end(), v) == f.values.end())
      return fmt::format("{}={} is not a value the kernel takes", f.name, v);
  }
  if (normalized(p) != p)
    return std::string("KVA and PADA must be 1 and 0 without SA, PF 0 without SA and SB");
  const std::size_t threads = std::size_t{p.mdim} * p.ndim;
  if (threads > limits.max_work_group)
    return fmt::format("{} work items exceed the device's work-group limit {}", threads,
                       limits.max_work_group);
  if (p.ndim > limits.max_items[0] || p.mdim > limits.max_items[1])
    return fmt::format("work-group {}x{} exceeds the device's item sizes {}x{}", p.ndim, p.mdim,
                       limits.max_items[0], limits.max_items[1]);
  if (p.mwg % (p.mdim * p.vwm) != 0)
    return fmt::format("MWG={} is not a multiple of MDIM*VWM={}", p.mwg, p.mdim * p.vwm);
  if (p.nwg % (p.ndim * p.vwn) != 0)
    return fmt::format("NWG={} is not a multiple of NDIM*VWN={}", p.nwg, p.ndim * p.vwn);
  const std::size_t per_item = std::size_t{p.mwg / p.mdim} * (p.nwg / p.ndim) * real_bytes(dtype);
  const std::size_t private_cap = limits.cpu ? 2048 : 512;  // bytes of accumulators per item
  if (per_item > private_cap)
    return fmt::format("{} bytes of accumulators per item exceed {}", per_item, private_cap);
  if (p.sa) {
    if (p.kwg % p.kva != 0) return fmt::format("KWG={} is not a multiple of KVA={}", p.kwg, p.kva);
    if ((std::size_t{p.mwg} * p.kwg) % (p.kva * threads) != 0)
      return fmt::format("A's slice ({}x{}) does not split into {} items' loads of {}", p.mwg,
                         p.kwg, threads, p.kva);
  }
  if (p.sb) {
    // Both layouts of B must split: op(B) = Bᵀ loads one element per item and step.
    if ((std::size_t{p.kwg} * p.nwg) % (p.vwn * threads) != 0)
      return fmt::format("B's slice ({}x{}) does not split into {} items' loads of {}", p.kwg,
                         p.nwg, threads, p.vwn);
  }
  const std::size_t local = real_bytes(dtype) * (p.pf ? 2 : 1) *
                            ((p.sa ? std::size_t{p.kwg} * (p.mwg + p.pada) : 0) +
                             (p.sb ? std::size_t{p.kwg} * p.nwg : 0));
  if (local > limits.local_mem_bytes)
    return fmt::format("{} bytes of local memory exceed the device's {}", local,
                       limits.local_mem_bytes);
  return std::nullopt;
}

std::string build_options(const GemmParams& p, DType dtype, bool b_transposed, bool edge,
                          bool aligned) {
  const char* type = dtype == DType::kF64   ? "-DGC_F64"
                     : dtype == DType::kF16 ? "-DGC_F16"
                                            : "-DGC_F32";
  std::string o = type;
  for (const auto& f : fields()) o += fmt::format(" -D{}={}", f.name, f.get(p));
  o += fmt::format(" -DBT={} -DEDGE={} -DGALIGN={}", b_transposed ? 1 : 0, edge ? 1 : 0,
                   aligned ? 1 : 0);
  return o;
}

bool vector_aligned(const GemmParams& p, bool b_transposed, const GemmOperandLayout& l) {
  auto multiple = [](std::size_t v, unsigned w) { return v % w == 0; };
  const unsigned wa = p.sa ? p.kva : 1;
  const unsigned wb = b_transposed ? 1 : p.vwn;
  return multiple(l.lda, wa) && multiple(l.a_off, wa) && multiple(l.ldb, wb) &&
         multiple(l.b_off, wb) && multiple(l.ldc, p.vwn) && multiple(l.c_off, p.vwn);
}

bool fits_tiles(const GemmParams& p, std::size_t m, std::size_t n, std::size_t k) {
  return m % p.mwg == 0 && n % p.nwg == 0 && k % p.kwg == 0;
}

GemmLaunch launch_size(const GemmParams& p, std::size_t m, std::size_t n) {
  const std::size_t mgroups = (m + p.mwg - 1) / p.mwg;
  const std::size_t ngroups = (n + p.nwg - 1) / p.nwg;
  GemmLaunch l;
  l.local[0] = p.ndim;
  l.local[1] = p.mdim;
  l.global[0] = (p.mfirst ? mgroups : ngroups) * p.ndim;
  l.global[1] = (p.mfirst ? ngroups : mgroups) * p.mdim;
  return l;
}

std::vector<GemmParams> seeds(const GemmLimits& limits, DType dtype) {
  // {mwg, nwg, kwg, mdim, ndim, vwm, vwn, kva, pada, sa, sb, mfirst, pf}
  // GPUs: the first is what runs untuned where the library cannot (f16 on NVIDIA's OpenCL);
  // the first three were the fastest on an H100 (2026-11-27, docs/PERFORMANCE.md).
  static const std::vector<GemmParams> gpu = {
      {128, 128, 8, 8, 32, 4, 4, 4, 0, true, true, false, true},
      {128, 128, 16, 8, 16, 4, 4, 4, 0, true, true, false, true},
      {128, 128, 16, 16, 16, 8, 4, 4, 0, true, true, false, false},
      {128, 128, 16, 16, 16, 4, 4, 4, 2, true, true, false},
      {128, 128, 8, 16, 16, 4, 4, 4, 0, true, true, false, true},
      {64, 64, 16, 16, 16, 4, 4, 1, 0, true, true, false},
      {128, 128, 8, 16, 16, 8, 4, 2, 1, true, true, false},
      {128, 64, 16, 16, 16, 4, 4, 4, 4, true, true, false},
      {64, 128, 16, 8, 16, 4, 8, 2, 1, true, true, false},
      {128, 128, 32, 16, 16, 4, 4, 4, 2, true, true, false},
      {64, 64, 32, 8, 8, 4, 4, 4, 1, true, true, false},
      {32, 32, 16, 8, 8, 4, 4, 1, 0, true, true, false},
  };
  // CPUs: one item per work-group, a block of rows times vectors of columns in accumulators,
  // nothing staged (a barrier is a pass over the work-group there), groups down the columns.
  static const std::vector<GemmParams> cpu = {
      {4, 64, 16, 1, 1, 1, 16, 1, 0, false, false, true},
      {8, 32, 16, 1, 1, 1, 16, 1, 0, false, false, true},
      {4, 32, 32, 1, 1, 1, 16, 1, 0, false, false, true},
      {8, 64, 16, 1, 1, 1, 16, 1, 0, false, false, true},
      {4, 64, 16, 1, 1, 1, 8, 1, 0, false, false, true},
      {2, 128, 16, 1, 1, 1, 16, 1, 0, false, false, true},
      {8, 32, 32, 2, 2, 1, 16, 1, 0, false, false, true},
      {16, 16, 16, 1, 1, 1, 16, 1, 0, false, false, true},
  };
  std::vector<GemmParams> out;
  for (const auto& p : limits.cpu ? cpu : gpu)
    if (!invalid_reason(p, limits, dtype)) out.push_back(p);
  return out;
}

GemmParams default_params(const GemmLimits& limits, DType dtype) {
  auto s = seeds(limits, dtype);
  if (!s.empty()) return s.front();
  // A device below every seed: the smallest work there is, valid everywhere.
  return {8, 8, 8, 1, 1, 1, 1, 1, 0, false, false, false};
}

std::optional<GemmParams> sample(std::mt19937_64& rng, const GemmLimits& limits, DType dtype) {
  for (int attempt = 0; attempt < 20000; ++attempt) {
    GemmParams p;
    if (limits.cpu) {
      p.mdim = pick<unsigned>(rng, {1, 1, 2, 4});
      p.ndim = pick<unsigned>(rng, {1, 1, 2, 4});
      p.mwg = pick<unsigned>(rng, {2, 4, 8, 16});
      p.nwg = pick<unsigned>(rng, {16, 32, 64, 128});
      p.kwg = pick<unsigned>(rng, {8, 16, 32, 64});
      p.vwm = pick<unsigned>(rng, {1, 1, 2});
      p.vwn = pick<unsigned>(rng, {4, 8, 16});
      p.sa = chance(rng, 0.1);
      p.sb = chance(rng, 0.1);
      p.mfirst = chance(rng, 0.8);
    } else {
      p.mdim = pick<unsigned>(rng, {8, 16, 32});
      p.ndim = pick<unsigned>(rng, {8, 16, 32});
      p.mwg = pick<unsigned>(rng, {32, 64, 128});
      p.nwg = pick<unsigned>(rng, {32, 64, 128});
      p.kwg = pick<unsigned>(rng, {8, 16, 32});
      p.vwm = pick<unsigned>(rng, {1, 2, 4, 8});
      p.vwn = pick<unsigned>(rng, {1, 2, 4, 8});
      p.sa = chance(rng, 0.85);
      p.sb = chance(rng, 0.85);
      p.mfirst = chance(rng, 0.2);
      p.pf = chance(rng, 0.6);
    }
    p.kva = pick<unsigned>(rng, {1, 2, 4});
    p.pada = pick<unsigned>(rng, {0, 1, 2, 4});
    p = normalized(p);
    if (!invalid_reason(p, limits, dtype)) return p;
  }
  return std::nullopt;
}

std::vector<GemmParams> neighbours(const GemmParams& p, const GemmLimits& limits, DType dtype) {
  std::vector<GemmParams> out;
  auto add = [&](GemmParams q) {
    q = normalized(q);
    if (q != p && !invalid_reason(q, limits, dtype) &&
        std::find(out.begin(), out.end(), q) == out.end())
      out.push_back(q);
  };
  const auto& fs = fields();
  // Index of a field's value one step up or down its list, if there is one.
  auto step = [](const Field& f, const GemmParams& q, int dir) -> std::optional<unsigned> {
    auto it = std::find(f.values.begin(), f.values.end(), f.get(q));
    const auto i = static_cast<long>(it - f.values.begin()) + dir;
    if (it == f.values.end() || i < 0 || i >= static_cast<long>(f.values.size()))
      return std::nullopt;
    return f.values[static_cast<std::size_t>(i)];
  };
  for (const auto& f : fs)
    for (int dir : {-1, 1})
      if (auto v = step(f, p, dir)) {
        GemmParams q = p;
        f.set(q, *v);
        add(q);
      }
  // Pairs that must move together to stay valid: a tile and its work-group side, both tiles.
  const std::array<std::array<int, 2>, 4> pairs = {{{0, 3}, {1, 4}, {0, 1}, {3, 4}}};
  for (const auto& pr : pairs)
    for (int dir : {-1, 1}) {
      auto a = step(fs[pr[0]], p, dir), b = step(fs[pr[1]], p, dir);
      if (!a || !b) continue;
      GemmParams q = p;
      fs[pr[0]].set(q, *a);
      fs[pr[1]].set(q, *b);
      add(q);
    }
  return out;
}

nlohmann::json to_json(const GemmParams& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : fields()) j[f.name] = f.get(p);
  return j;
}

std::optional<GemmParams> params_from_json(const nlohmann::json& j, std::string* why) {
  if (!j.is_object()) {
    *why = "the parameters are not an object";
    return std::nullopt;
  }
  GemmParams p;
  for (const auto& f : fields()) {
    auto it = j.find(f.name);
    if (it == j.end() || !it->is_number_integer()) {
      *why = fmt::format("parameter {} is missing or not a whole number", f.name);
      return std::nullopt;
    }
    const auto v = it->get<long long>();
    if (std::find(f.values.begin(), f.values.end(), v) == f.values.end()) {
      *why = fmt::format("{}={} is not a value the kernel takes", f.name, v);
      return std::nullopt;
    }
    f.set(p, static_cast<unsigned>(v));
  }
  if (j.size() != fields().size()) {
    *why = "unknown parameters";
    return std::nullopt;
  }
  return p;
}

std::string describe(const GemmParams& p) {
  std::string s;
  for (const auto& f : fields())
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", f.name, f.get(p));
  return s;
}

}  // namespace gpucheck::opencl
