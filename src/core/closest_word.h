// "Did you mean": the known word nearest to a mistyped one (a command, a flag, a value, a check
// id), by edit distance, so a usage error can name what was probably meant.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// two neighbours ("sise" -> "size" is 1, "benc" -> "bench" is 1).
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The candidate nearest to word, when it is near enough to be a typo of it (at most a third of
// the word's letters changed, at least one allowed, at most three); "" when none is. The first
// of equally near candidates wins, so callers list them in their usual order.
inline std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t allowed = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

// " (did you mean 'x'?)" for closest_word's answer, else "".
inline std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = closest_word(word, candidates);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

}  // namespace gpucheck
