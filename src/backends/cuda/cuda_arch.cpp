// The architecture table; kept in step with the CUDA samples' _ConvertSMVer2Cores.
#include "backends/cuda/cuda_arch.h"

#include <array>

namespace gpucheck::cuda {

namespace {

struct Row {
  int major, minor;
  ArchFacts facts;
};

constexpr std::array<Row, 23> kTable{{
    {3, 0, {192, "Kepler"}},     {3, 2, {192, "Kepler"}},     {3, 5, {192, "Kepler"}},
    {3, 7, {192, "Kepler"}},     {5, 0, {128, "Maxwell"}},    {5, 2, {128, "Maxwell"}},
    {5, 3, {128, "Maxwell"}},    {6, 0, {64, "Pascal"}},      {6, 1, {128, "Pascal"}},
    {6, 2, {128, "Pascal"}},     {7, 0, {64, "Volta"}},       {7, 2, {64, "Volta"}},
    {7, 5, {64, "Turing"}},      {8, 0, {64, "Ampere"}},      {8, 6, {128, "Ampere"}},
    {8, 7, {128, "Ampere"}},     {8, 9, {128, "Ada"}},        {9, 0, {128, "Hopper"}},
    {10, 0, {128, "Blackwell"}}, {10, 3, {128, "Blackwell"}}, {11, 0, {128, "Blackwell"}},
    {12, 0, {128, "Blackwell"}}, {12, 1, {128, "Blackwell"}},
}};

}  // namespace

std::optional<ArchFacts> arch_facts(int major, int minor) {
  for (const auto& r : kTable)
    if (r.major == major && r.minor == minor) return r.facts;
  return std::nullopt;
}

}  // namespace gpucheck::cuda
