// Without libFuzzer (GCC builds): every corpus file, then a fixed number of seeded random
// mutations of them (bit flips, byte changes, insertions of syntax characters, deletions,
// truncations, splices of two inputs, repeated slices), through a fuzz target. A mutation that
// lets anything but a UsageError escape is printed (hex) and fails the test.
//   seeded_mutations profile|document|rendezvous CORPUS_DIR MUTATIONS SEED
#include "fuzz_targets.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes mutate(const Bytes& in, const std::vector<Bytes>& corpus, std::mt19937_64& rng) {
  static const std::string kSyntax = "{}[]\",:=.\\n#'-+eE0129\x00\xff";
  Bytes b = in;
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int s = 0; s < steps; ++s) {
    const std::size_t n = b.size();
    auto at = [&](std::size_t extra = 0) { return n + extra == 0 ? 0 : rng() % (n + extra); };
    switch (rng() % 8) {
      case 0:
        if (n) b[at()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (n) b[at()] = static_cast<std::uint8_t>(rng());
        break;
      case 2:
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at(1)),
                 static_cast<std::uint8_t>(kSyntax[rng() % kSyntax.size()]));
        break;
      case 3:
        if (n) b.erase(b.begin() + static_cast<std::ptrdiff_t>(at()));
        break;
      case 4:
        b.resize(at(1));
        break;
      case 5: {
        const Bytes& other = corpus[rng() % corpus.size()];
        if (other.empty()) break;
        const std::size_t from = rng() % other.size();
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at(1)),
                 other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 6: {
        if (!n) break;
        const std::size_t from = at(), len = 1 + rng() % std::min<std::size_t>(n - from, 64);
        Bytes slice(b.begin() + static_cast<std::ptrdiff_t>(from),
                    b.begin() + static_cast<std::ptrdiff_t>(from + len));
        const std::size_t times = 1 + rng() % 200;
        for (std::size_t t = 0; t < times; ++t) b.insert(b.end(), slice.begin(), slice.end());
        break;
      }
      default: {
        // A number replaced by an extreme one.
        static const char* kExtremes[] = {
            "1e999", "-0", "18446744073709551616", "9223372036854775807", "nan", "inf", "-1", "0"};
        const std::string x = kExtremes[rng() % 8];
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at(1)), x.begin(), x.end());
        break;
      }
    }
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(
        stderr,
        "usage: %s profile|document|rendezvous|framework_answer CORPUS_DIR MUTATIONS SEED\n",
        argv[0]);
    return 2;
  }
  const std::string target = argv[1];
  auto run = target == "profile"      ? gpucheck::fuzz::profile
             : target == "rendezvous" ? gpucheck::fuzz::rendezvous
             : target == "document"   ? gpucheck::fuzz::document
                                      : gpucheck::fuzz::framework_answer;
  std::vector<Bytes> corpus;
  for (const auto& e : std::filesystem::directory_iterator(argv[2])) {
    std::ifstream in(e.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "no corpus in %s\n", argv[2]);
    return 2;
  }
  const long mutations = std::atol(argv[3]);
  std::mt19937_64 rng(std::strtoull(argv[4], nullptr, 10));
  long failures = 0;
  auto one = [&](const Bytes& input) {
    try {
      run(input.data(), input.size());
    } catch (const std::exception& e) {
      if (++failures <= 5) {
        std::fprintf(stderr, "escaped: %s\ninput (%zu bytes):", e.what(), input.size());
        for (std::uint8_t c : input) std::fprintf(stderr, "%02x", c);
        std::fprintf(stderr, "\n");
      }
    }
  };
  for (const auto& c : corpus) one(c);
  for (long i = 0; i < mutations; ++i) one(mutate(corpus[rng() % corpus.size()], corpus, rng));
  std::printf("%s: %zu corpus inputs and %ld mutations, %ld failures\n", target.c_str(),
              corpus.size(), mutations, failures);
  return failures == 0 ? 0 : 1;
}
