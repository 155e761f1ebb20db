// Ranks with ties averaged, U, and its distribution: exact by counting or normal.
#include "report/rank_test.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace gpucheck::report {

namespace {

constexpr std::size_t kExactMaxTotal = 60;

// P(U <= v) for every v, sizes n1, n2 without ties: the count of orderings with U = v over all
// C(n1 + n2, n1), summed. c(i, j, v) = c(i - 1, j, v - j) + c(i, j - 1, v).
std::vector<double> exact_cdf(std::size_t n1, std::size_t n2) {
  const std::size_t vmax = n1 * n2;
  std::vector<std::vector<double>> prev(n2 + 1, std::vector<double>(vmax + 1, 0.0));
  for (auto& row : prev) row[0] = 1;  // i = 0: one ordering, U = 0
  for (std::size_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> cur(n2 + 1, std::vector<double>(vmax + 1, 0.0));
    cur[0][0] = 1;  // j = 0
    for (std::size_t j = 1; j <= n2; ++j)
      for (std::size_t v = 0; v <= vmax; ++v)
        cur[j][v] = (v >= j ? prev[j][v - j] : 0.0) + cur[j - 1][v];
    prev = std::move(cur);
  }
  double total = 0;
  for (double c : prev[n2]) total += c;
  std::vector<double> cdf(vmax + 1);
  double below = 0;
  for (std::size_t v = 0; v <= vmax; ++v) cdf[v] = (below += prev[n2][v]) / total;
  return cdf;
}

}  // namespace

const std::vector<double>& MannWhitney::cdf(std::size_t n1, std::size_t n2) {
  auto key = std::make_pair(n1, n2);
  auto it = cdf_.find(key);
  if (it == cdf_.end()) it = cdf_.emplace(key, exact_cdf(n1, n2)).first;
  return it->second;
}

double MannWhitney::p_value(std::span<const double> a, std::span<const double> b) {
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) return 1;
  std::vector<std::pair<double, bool>> all;  // (value, from a)
  all.reserve(n);
  for (double v : a) all.emplace_back(v, true);
  for (double v : b) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;  // average
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second) rank_sum_a += rank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2),
               dn = static_cast<double>(n);
  const double u1 = rank_sum_a - d1 * (d1 + 1) / 2;
  const double u = std::min(u1, d1 * d2 - u1);
  if (!ties && n <= kExactMaxTotal)
    return std::min(1.0, 2 * cdf(n1, n2)[static_cast<std::size_t>(std::llround(u))]);
  const double mu = d1 * d2 / 2;
  const double var = d1 * d2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (!(var > 0)) return 1;
  const double z = std::max(0.0, std::abs(u1 - mu) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

double MannWhitney::min_p(std::size_t n1, std::size_t n2) {
  auto key = std::make_pair(n1, n2);
  if (auto it = min_p_.find(key); it != min_p_.end()) return it->second;
  std::vector<double> a(n1), b(n2);
  for (std::size_t i = 0; i < n1; ++i) a[i] = static_cast<double>(i);
  for (std::size_t i = 0; i < n2; ++i) b[i] = static_cast<double>(n1 + i);
  return min_p_[key] = p_value(a, b);
}

double mann_whitney_p(std::span<const double> a, std::span<const double> b) {
  return MannWhitney().p_value(a, b);
}

double mann_whitney_min_p(std::size_t n1, std::size_t n2) {
  return MannWhitney().min_p(n1, n2);
}

}  // namespace gpucheck::report
