// Inline SVG charts for the HTML view: grouped horizontal bars and log–log curves. Every data
// mark is an element of class "mark" with a data-kind, so tests can count what was drawn.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::report {

struct Bar {
  std::size_t series = 0;  // index into BarChart::series (colour and legend)
  double value = 0;        // > 0
  std::string tooltip;
  std::string text;  // beside the bar instead of the value when not empty
};

struct BarGroup {
  std::string label;
  std::vector<Bar> bars;
};

struct BarChart {
  std::string title;
  std::string unit;             // axis label
  std::string kind;             // data-kind of the marks: throughput, speedup, verdict
  bool log_scale = false;       // for ratios: decades around 1
  std::optional<double> guide;  // a reference line (1× for speedups)
  bool axis = true;             // false: bars are equal swatches of a state, not quantities
  std::vector<std::string> series;
  std::vector<std::string> colours;  // per series; empty: the palette
  std::vector<BarGroup> groups;
};

std::string svg_bar_chart(const BarChart& chart);

struct CurvePoint {
  double x = 0;           // > 0
  double y = 0;           // > 0
  double lo = 0, hi = 0;  // the y range drawn as a whisker (min–max); 0: none
  std::string tooltip;
};

struct Curve {
  std::string name;
  std::vector<CurvePoint> points;
  bool dashed = false;
};

struct VerticalMarker {
  double x = 0;
  std::string label;
  std::size_t series = 0;  // colour of the curve it belongs to
};

struct CurveChart {
  std::string title;
  std::string x_label, y_label;
  std::string kind;  // data-kind of the marks
  std::vector<Curve> curves;
  std::vector<VerticalMarker> markers;
};

// Both axes logarithmic: x in powers of two (sizes), y in decades of seconds.
std::string svg_curve_chart(const CurveChart& chart);

// One row of dots on a linear axis: a group's figures across many machines (report fleet),
// the median as a guide line, the highlighted dots (outliers) in red and named, round ticks in
// human units.
struct StripPoint {
  double value = 0;
  bool highlight = false;
  std::string tooltip;
  std::string label;  // written beside a highlighted dot (the node's name)
};

struct StripChart {
  std::string title;
  std::string unit;        // axis label
  std::string value_unit;  // the values' unit ("s", "GB/s", "TFLOP/s"): ticks in human units
  std::string kind;  // data-kind of the marks
  std::optional<double> median;
  std::vector<StripPoint> points;
};

std::string svg_strip_chart(const StripChart& chart);

// The colour of series i (a fixed palette, so devices keep their colour across charts).
const char* series_colour(std::size_t i);

// "2^16" for powers of two from 1024 on, else the integer: how sweep sizes are labelled.
std::string size_label(double size);

// Seconds with a unit that keeps 1–3 digits before the point: "250 ns", "1.5 ms", "2 s".
std::string seconds_label(double s);

}  // namespace gpucheck::report
