// Human units and the fitted text layout of the terminal views: the numbers people read and the
// promise that no line is longer than the width, whatever the data.
#include "report/text_layout.h"
#include "report/same_gpu.h"
#include "report/text_view.h"
#include "report/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <sstream>

namespace {

using namespace gpucheck::report;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(Units, TimesKeepThreeSignificantDigitsInTheirUnit) {
  EXPECT_EQ(format_seconds(5.3e-6), "5.30 \xC2\xB5s");
  EXPECT_EQ(format_seconds(0.001234), "1.23 ms");
  EXPECT_EQ(format_seconds(0.1234), "123 ms");
  EXPECT_EQ(format_seconds(2.5), "2.50 s");
  EXPECT_EQ(format_seconds(4.2e-8), "42.0 ns");
  EXPECT_EQ(format_seconds(1234), "1234 s");
}

TEST(Units, RatesTakeTheUnitThatKeepsThreeToFourDigits) {
  EXPECT_EQ(format_rate(4136.2, "GB/s"), "4136 GB/s");
  EXPECT_EQ(format_rate(294.1, "GB/s"), "294 GB/s");
  EXPECT_EQ(format_rate(0.512, "GB/s"), "512 MB/s");
  EXPECT_EQ(format_rate(12000, "GB/s"), "12.0 TB/s");
  EXPECT_EQ(format_rate(11.03, "TFLOP/s"), "11.0 TFLOP/s");
  EXPECT_EQ(format_rate(989.4, "TFLOP/s"), "989 TFLOP/s");
  EXPECT_EQ(format_rate(0.0166, "TFLOP/s"), "16.6 GFLOP/s");
  EXPECT_EQ(format_rate(1.5, "TFLOP/s"), "1.50 TFLOP/s");
  EXPECT_EQ(format_rate(9.053, "GB/s"), "9.05 GB/s");
  EXPECT_EQ(format_rate(0.000463, "TFLOP/s"), "463 MFLOP/s");
}

// What a fleet group or a record carries, in the unit a person reads: seconds, rates, or the
// number with its own unit.
TEST(Units, MeasuresTakeTheirUnitsOwnScale) {
  EXPECT_EQ(format_measure(4.542e-05, "s"), "45.4 \xC2\xB5s");
  EXPECT_EQ(format_measure(0.0466, "TFLOP/s"), "46.6 GFLOP/s");
  EXPECT_EQ(format_measure(0.512, "GB/s"), "512 MB/s");
  EXPECT_EQ(format_measure(1.234, "x"), "1.23 x");
  EXPECT_EQ(format_measure(7, ""), "7.00");
}

TEST(Units, SizesSpeedupsAndCounts) {
  EXPECT_EQ(format_size(256u << 20), "256 MiB");
  EXPECT_EQ(format_size(1 << 20), "1 MiB");
  EXPECT_EQ(format_size(49152), "48 KiB");
  EXPECT_EQ(format_size(100), "100 B");
  EXPECT_EQ(format_size(150109880320ull), "139.8 GiB");
  EXPECT_EQ(format_memory(151397597184ull), "141.0 GiB");
  EXPECT_EQ(format_speedup(3.4123), "3.41\xC3\x97");
  EXPECT_EQ(format_speedup(0.3123), "0.31\xC3\x97");
  EXPECT_EQ(format_speedup(0.0398), "0.04\xC3\x97");
  EXPECT_EQ(format_speedup(12.06), "12.1\xC3\x97");
  EXPECT_EQ(format_count(1048576), "2^20");
  EXPECT_EQ(format_count(1000), "1000");
}

TEST(Units, ShapesAsPeopleReadThem) {
  EXPECT_EQ(shape_label({{"n", 1048576}}), "2^20");
  EXPECT_EQ(shape_label({{"m", 512}, {"n", 512}, {"k", 512}}), "512\xC2\xB3");
  EXPECT_EQ(shape_label({{"m", 64}, {"n", 32}, {"k", 16}}), "64x32x16");
  EXPECT_EQ(shape_label({{"bytes", 1 << 20}, {"direction", "h2d"}, {"host_memory", "pinned"}}),
            "1 MiB h2d pinned");
  EXPECT_EQ(shape_label({{"mode", "async"}}), "async");
}

TEST(TextLayout, WrapKeepsWordsAndSplitsOnlyOverlongOnes) {
  EXPECT_EQ(wrap("the quick brown fox", 10), (std::vector<std::string>{"the quick", "brown fox"}));
  EXPECT_EQ(wrap("/a/very/long/path/name", 8),
            (std::vector<std::string>{"/a/very/", "long/pat", "h/name"}));
  EXPECT_EQ(wrap("one two three", 3, 5), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(wrap("", 10), (std::vector<std::string>{""}));
}

TEST(TextLayout, ShortenMarksTheCutAndCountsCodePoints) {
  EXPECT_EQ(shorten("abcdef", 4), "abc\xE2\x80\xA6");
  EXPECT_EQ(shorten("abc", 4), "abc");
  EXPECT_EQ(display_width("5.30 \xC2\xB5s"), 7u);
}

TEST(TextLayout, ColourAddsCodesButNoWidth) {
  EXPECT_EQ(paint("FAIL", Tone::kBad, false), "FAIL");
  EXPECT_EQ(paint("FAIL", Tone::kBad, true), "\x1b[1;31mFAIL\x1b[0m");
  EXPECT_EQ(tone_of("PASS"), Tone::kGood);
  EXPECT_EQ(tone_of("regression"), Tone::kBad);
  EXPECT_EQ(tone_of("whatever"), Tone::kPlain);
}

TEST(TextTable, DropsEmptyColumnsAndAlignsNumbersRight) {
  TextTable t;
  t.columns = {{"device"}, {"unused"}, {"time", true}};
  t.add({"cpu", "", "1.23 ms"});
  t.add({"cuda0", "", "12.3 \xC2\xB5s"});
  auto lines = t.render(80, false);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "device     time");
  EXPECT_EQ(lines[1], "cpu     1.23 ms");
  EXPECT_EQ(lines[2], "cuda0   12.3 \xC2\xB5s");
}

TEST(TextTable, FlexibleColumnsWrapAndNotesFollowTheRow) {
  TextTable t;
  t.columns = {{"id"}, {"text", false, true, true, false, 6}};
  t.add({"a", "one two three four five six"}, {"fix: do the thing that fixes it"});
  auto lines = t.render(20, false);
  for (const auto& l : lines) EXPECT_LE(display_width(l), 20u) << l;
  EXPECT_EQ(lines[1], "a   one two three");
  EXPECT_EQ(lines[2], "    four five six");
  EXPECT_THAT(lines[3], ::testing::StartsWith("    fix: do the"));
}

// Whatever the cells, the widths and the colour, no line is wider than the width.
TEST(TextTable, NoLineIsEverWiderThanTheWidth) {
  std::mt19937 rng(7);
  auto word = [&](std::size_t max) {
    std::string w(std::uniform_int_distribution<std::size_t>(0, max)(rng), 'x');
    if (!w.empty() && rng() % 3 == 0) w += " \xC2\xB5s more words here";
    return w;
  };
  for (int round = 0; round < 300; ++round) {
    TextTable t;
    const std::size_t ncols = 1 + rng() % 9;
    for (std::size_t c = 0; c < ncols; ++c)
      t.columns.push_back({"col" + std::to_string(c), rng() % 2 == 0, rng() % 2 == 0,
                           rng() % 2 == 0, rng() % 2 == 0, 1 + rng() % 8});
    t.indent = rng() % 4;
    for (int r = 0; r < 5; ++r) {
      std::vector<std::string> cells;
      for (std::size_t c = 0; c < ncols; ++c) cells.push_back(word(40));
      t.add(cells, {word(120)});
    }
    const std::size_t width = 20 + rng() % 140;
    for (const auto& l : t.render(width, false)) ASSERT_LE(display_width(l), width) << l;
  }
}

TEST(TextView, FlowKeepsItemsWholeUnderTheLabel) {
  TextView v;
  v.flow("cuda0", {"GPU-0a3df10b", "PCI 0000:00:06.0", "140.4 GiB", "compute 9.0 (Hopper)"}, 2, 9);
  auto lines = lines_of(render_text(v, 44, false));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "  cuda0    GPU-0a3df10b, PCI 0000:00:06.0,");
  EXPECT_EQ(lines[1], "           140.4 GiB, compute 9.0 (Hopper)");
  lines = lines_of(render_text(v, 40, false));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "  cuda0    GPU-0a3df10b,");
  EXPECT_EQ(lines[1], "           PCI 0000:00:06.0, 140.4 GiB,");
  EXPECT_EQ(lines[2], "           compute 9.0 (Hopper)");
  // An item longer than the room left is wrapped on its own lines.
  lines = lines_of(render_text(v, 30, false));
  EXPECT_EQ(lines[lines.size() - 2], "           compute 9.0");
  EXPECT_EQ(lines.back(), "           (Hopper)");
}

TEST(SameGpu, CudaAndOpenclDevicesOfOneCardShareOneUuid) {
  nlohmann::json backends = nlohmann::json::parse(R"([
    {"name": "cuda", "devices": [
      {"device": "cuda0", "device_uuid": "GPU-0a3df10b-faf5-5512-4744-8c9f8b5bb5da",
       "pci_bus_id": "0000:00:06.0"},
      {"device": "cuda1", "device_uuid": "GPU-11111111-2222-3333-4444-555555555555",
       "pci_bus_id": "0000:00:07.0"}]},
    {"name": "opencl",
     "platforms": [{"index": 0, "family": "pocl"}, {"index": 1, "family": "nvidia"}],
     "devices": [
      {"device": "opencl0", "platform": 0},
      {"device": "opencl1", "platform": 1, "device_uuid": "11111111-2222-3333-4444-555555555555"},
      {"device": "opencl2", "platform": 1, "device_uuid": "0a3df10b-faf5-5512-4744-8c9f8b5bb5da",
       "pci_bus_id": "0000:00:06.0"},
      {"device": "opencl3", "platform": 1, "device_uuid": "99999999-2222-3333-4444-555555555555"}]}
  ])");
  GpuMap m = GpuMap::from_backends(backends);
  EXPECT_EQ(m.same_as("cuda0"), (std::vector<std::string>{"opencl2"}));
  EXPECT_EQ(m.same_as("opencl1"), (std::vector<std::string>{"cuda1"}));
  EXPECT_TRUE(m.same_as("opencl0").empty());
  EXPECT_EQ(m.uuid("opencl2"), "GPU-0a3df10b-faf5-5512-4744-8c9f8b5bb5da");
  EXPECT_EQ(m.uuid("opencl1"), m.uuid("cuda1"));
  // NVIDIA's OpenCL device with no CUDA twin still gets NVIDIA's form; pocl has none.
  EXPECT_EQ(m.uuid("opencl3"), "GPU-99999999-2222-3333-4444-555555555555");
  EXPECT_EQ(m.uuid("opencl0"), "");
}

}  // namespace
