// Drawing the HTML view's charts as SVG text: scales, axes, legends, bars and curves.
#include "report/svg_charts.h"

#include "report/html_escape.h"
#include "report/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

namespace gpucheck::report {

namespace {

constexpr double kWidth = 760;
constexpr std::array<const char*, 8> kPalette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                              "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

std::string value_label(double v) {
  return significant(v);
}

// Axis ticks as people write them: "0", "250", "1k", "2.5k", "10M", "0.01".
std::string tick_label(double v) {
  const double a = std::fabs(v);
  for (auto [scale, suffix] :
       {std::pair{1e12, "T"}, std::pair{1e9, "G"}, std::pair{1e6, "M"}, std::pair{1e3, "k"}})
    if (a >= scale) return fmt::format("{:g}{}", std::round(v / scale * 1000) / 1000, suffix);
  if (a == 0) return "0";
  return fmt::format("{:g}", v);
}

// Long labels are cut for the layout; the full text stays in the mark's tooltip.
std::string cut(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t n = max - 1;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // UTF-8 boundary
  return s.substr(0, n) + "\xE2\x80\xA6";
}

// value_unit: the unit of the values drawn (data-unit), where tick labels carry another.
std::string open_svg(double height, const std::string& title, const std::string& kind,
                     const std::string& value_unit = {}) {
  return fmt::format(
      "<svg class=\"chart\" data-chart=\"{}\"{} width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">\n"
      "<text class=\"title\" x=\"8\" y=\"18\">{}</text>\n",
      html_escape(kind),
      value_unit.empty() ? std::string() : " data-unit=\"" + html_escape(value_unit) + "\"",
      num(kWidth), num(height), num(kWidth), num(height), html_escape(title), html_escape(title));
}

// A log scale over whole decades (or powers of two) covering [lo, hi].
struct LogScale {
  double lo_exp = 0, hi_exp = 1, base = 10;
  double from = 0, to = 1;  // pixels
  double operator()(double v) const {
    double e = std::log(v) / std::log(base);
    return from + (to - from) * (e - lo_exp) / (hi_exp - lo_exp);
  }
};

LogScale log_scale(double lo, double hi, double base, double from, double to) {
  LogScale s;
  s.base = base;
  s.lo_exp = std::floor(std::log(lo) / std::log(base) + 1e-9);
  s.hi_exp = std::ceil(std::log(hi) / std::log(base) - 1e-9);
  if (s.hi_exp <= s.lo_exp) s.hi_exp = s.lo_exp + 1;
  s.from = from;
  s.to = to;
  return s;
}

// Ticks of a linear axis at round steps (1, 2, 2.5 or 5 × 10^k) giving at most six intervals,
// from the last step at or below lo to the first at or above hi, so the axis ends near the
// extreme values and every tick is a number a reader can say.
std::vector<double> round_ticks(double lo, double hi) {
  if (!(hi > lo) || !std::isfinite(hi - lo)) return {lo, lo + 1};
  const double p = std::pow(10, std::floor(std::log10(hi - lo)));
  double step = 10 * p;
  for (double m : {0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0})
    if (std::ceil(hi / (m * p) - 1e-9) - std::floor(lo / (m * p) + 1e-9) <= 6) {
      step = m * p;
      break;
    }
  const double first = std::floor(lo / step + 1e-9);
  const int n = std::max(static_cast<int>(std::ceil(hi / step - 1e-9) - first), 1);
  std::vector<double> ticks;
  for (int i = 0; i <= n; ++i) ticks.push_back((first + i) * step);
  return ticks;
}

// Ticks of a linear axis from 0 (bar lengths): 0 to the first round step at or above hi.
std::vector<double> linear_ticks(double hi) {
  return hi > 0 ? round_ticks(0, hi) : std::vector<double>{0, 1};
}

// The legend's entries left to right, wrapping onto further rows: each entry's position.
struct LegendLayout {
  std::vector<std::pair<double, double>> at;  // x, baseline y
  double bottom = 0;                          // y below the last row
};

LegendLayout legend_layout(const std::vector<std::string>& names, double y) {
  LegendLayout l;
  double x = 8;
  for (const auto& n : names) {
    const double w = 24 + 6.5 * static_cast<double>(std::min<std::size_t>(n.size(), 60));
    if (x > 8 && x + w > kWidth - 8) {
      x = 8;
      y += 16;
    }
    l.at.emplace_back(x, y);
    x += w;
  }
  l.bottom = y + 8;
  return l;
}

std::string legend(const std::vector<std::string>& names, const LegendLayout& at,
                   const std::vector<std::string>& colours = {}) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto [x, y] = at.at[i];
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>", num(x),
                       num(y - 9), i < colours.size() ? colours[i] : series_colour(i));
    out += fmt::format("<text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>\n", num(x + 14), num(y),
                       html_escape(cut(names[i], 60)));
  }
  return out;
}

}  // namespace

const char* series_colour(std::size_t i) {
  return kPalette[i % kPalette.size()];
}

std::string size_label(double size) {
  return format_count(static_cast<std::uint64_t>(std::llround(size)));
}

std::string seconds_label(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3g} \xC2\xB5s", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}

std::string svg_bar_chart(const BarChart& c) {
  constexpr double kLeft = 280, kRight = 70, kBar = 12, kGap = 2, kGroupGap = 8;
  const LegendLayout legend_at = legend_layout(c.series, 36);
  const double kTop = legend_at.bottom;
  double rows = 0;
  double lo = c.guide.value_or(1e300), hi = c.guide.value_or(0);
  for (const auto& g : c.groups)
    for (const auto& b : g.bars) {
      rows += 1;
      lo = std::min(lo, b.value);
      hi = std::max(hi, b.value);
    }
  const double plot_bottom =
      kTop + rows * (kBar + kGap) + static_cast<double>(c.groups.size()) * kGroupGap;
  const double height = plot_bottom + (c.axis ? 36 : 8);
  const double x0 = kLeft, x1 = kWidth - kRight;
  std::string out = open_svg(height, c.title, c.kind);
  out += legend(c.series, legend_at, c.colours);

  // Axis: decades for a log scale; round steps from 0 to just above the largest bar otherwise.
  LogScale ls = log_scale(lo > 0 ? lo : 1, hi > 0 ? hi : 1, 10, x0, x1);
  std::vector<double> ticks;
  if (c.log_scale)
    for (double e = ls.lo_exp; e <= ls.hi_exp + 1e-9; e += 1) ticks.push_back(std::pow(10, e));
  else
    ticks = linear_ticks(hi);
  const double lin_max = ticks.back();
  auto xpos = [&](double v) { return c.log_scale ? ls(v) : x0 + (x1 - x0) * v / lin_max; };
  if (!c.axis) ticks.clear();
  for (double t : ticks) {
    double x = xpos(t);
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", num(x),
                       num(kTop - 4), num(plot_bottom));
    out += fmt::format(
        "<text class=\"tick\" data-value=\"{}\" x=\"{}\" y=\"{}\" "
        "text-anchor=\"middle\">{}</text>\n",
        t, num(x), num(plot_bottom + 14), tick_label(t));
  }
  if (c.axis)
    out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       num((x0 + x1) / 2), num(plot_bottom + 30), html_escape(c.unit));
  const double base_x = c.log_scale && c.guide ? xpos(*c.guide) : x0;
  if (c.guide)
    out += fmt::format("<line class=\"guide\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
                       num(xpos(*c.guide)), num(kTop - 6), num(plot_bottom));

  double y = kTop;
  for (const auto& g : c.groups) {
    double group_h = static_cast<double>(g.bars.size()) * (kBar + kGap);
    out += fmt::format(
        "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{}</title></text>\n",
        num(x0 - 6), num(y + group_h / 2 + 4), html_escape(cut(g.label, 46)), html_escape(g.label));
    for (const auto& b : g.bars) {
      double xv = c.axis ? xpos(b.value) : x0 + 40;
      double left = std::min(base_x, xv), width = std::max(std::abs(xv - base_x), 1.0);
      out += fmt::format(
          "<rect class=\"mark\" data-kind=\"{}\" data-value=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" "
          "height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
          html_escape(c.kind), b.value, num(left), num(y), num(width), num(kBar),
          b.series < c.colours.size() ? c.colours[b.series] : series_colour(b.series),
          html_escape(b.tooltip));
      out += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">{}</text>\n",
                         num(std::max(xv, base_x) + 4), num(y + kBar - 2),
                         b.text.empty() ? value_label(b.value) : html_escape(cut(b.text, 60)));
      y += kBar + kGap;
    }
    y += kGroupGap;
  }
  return out + "</svg>\n";
}

std::string svg_curve_chart(const CurveChart& c) {
  constexpr double kLeft = 70, kRight = 20, kPlotH = 260;
  std::vector<std::string> names;
  for (const auto& cv : c.curves) names.push_back(cv.name);
  const LegendLayout legend_at = legend_layout(names, 36);
  const double kTop = legend_at.bottom + 4;
  const double height = kTop + kPlotH + 44;
  // A log axis holds finite positive values only: a zero or negative figure in a hostile or
  // broken document would make an axis start at log(0) = -inf, and its tick loop never end.
  auto drawable = [](double v) { return std::isfinite(v) && v > 0; };
  double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0;
  for (const auto& cv : c.curves)
    for (const auto& p : cv.points) {
      if (!drawable(p.x) || !drawable(p.y)) continue;
      xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x);
      ylo = std::min({ylo, p.y, drawable(p.lo) ? p.lo : p.y});
      yhi = std::max({yhi, p.y, drawable(p.hi) ? p.hi : p.y});
    }
  for (const auto& m : c.markers)
    if (drawable(m.x)) xlo = std::min(xlo, m.x), xhi = std::max(xhi, m.x);
  if (xhi <= 0) xlo = 1, xhi = 2;
  if (yhi <= 0) ylo = 1e-6, yhi = 1e-3;
  const double x0 = kLeft, x1 = kWidth - kRight, y0 = kTop + kPlotH, y1 = kTop;
  LogScale xs = log_scale(xlo, xhi, 2, x0, x1);
  LogScale ys = log_scale(ylo, yhi, 10, y0, y1);
  std::string out = open_svg(height, c.title, c.kind);
  out += legend(names, legend_at);

  const int xsteps = static_cast<int>(xs.hi_exp - xs.lo_exp);
  const int every = xsteps > 12 ? 2 : 1;
  for (int i = 0; i <= xsteps; i += every) {
    double v = std::pow(2, xs.lo_exp + i), x = xs(v);
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", num(x),
                       num(y1), num(y0));
    out += fmt::format(
        "<text class=\"tick\" data-value=\"{}\" x=\"{}\" y=\"{}\" "
        "text-anchor=\"middle\">{}</text>\n",
        v, num(x), num(y0 + 14), size_label(v));
  }
  for (double e = ys.lo_exp; e <= ys.hi_exp + 1e-9; e += 1) {
    double v = std::pow(10, e), y = ys(v);
    out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>",
                       num(x0), num(x1), num(y));
    out += fmt::format(
        "<text class=\"tick\" data-value=\"{}\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        v, num(x0 - 4), num(y + 4), seconds_label(v));
  }
  out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     num((x0 + x1) / 2), num(y0 + 32), html_escape(c.x_label));
  out += fmt::format(
      "<text class=\"axis\" transform=\"translate(14 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>\n",
      num((y0 + y1) / 2), html_escape(c.y_label));

  for (std::size_t i = 0; i < c.markers.size(); ++i) {
    const auto& m = c.markers[i];
    if (!drawable(m.x)) continue;
    double x = xs(m.x);
    const bool right_half = x > (x0 + x1) / 2;  // the label goes left of the line there
    out += fmt::format(
        "<line class=\"break-even\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>"
        "<text class=\"marker\" x=\"{4}\" y=\"{5}\" style=\"fill:{3}\" "
        "text-anchor=\"{7}\">{6}</text>\n",
        num(x), num(y1), num(y0), series_colour(m.series), num(right_half ? x - 3 : x + 3),
        num(y1 + 12 + 12 * static_cast<double>(i)), html_escape(m.label),
        right_half ? "end" : "start");
  }
  for (std::size_t i = 0; i < c.curves.size(); ++i) {
    const auto& cv = c.curves[i];
    std::string path;
    for (const auto& p : cv.points)
      if (drawable(p.x) && drawable(p.y)) path += fmt::format("{},{} ", num(xs(p.x)), num(ys(p.y)));
    out += fmt::format("<polyline class=\"curve{}\" points=\"{}\" stroke=\"{}\"/>\n",
                       cv.dashed ? " dashed" : "", path, series_colour(i));
    for (const auto& p : cv.points) {
      if (!drawable(p.x) || !drawable(p.y)) continue;
      double x = xs(p.x);
      if (drawable(p.lo) && drawable(p.hi))
        out += fmt::format(
            "<line class=\"range\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>",
            num(x), num(ys(p.lo)), num(ys(p.hi)), series_colour(i));
      out += fmt::format(
          "<circle class=\"mark\" data-kind=\"{}\" cx=\"{}\" cy=\"{}\" r=\"3\" "
          "fill=\"{}\"><title>{}</title></circle>\n",
          html_escape(c.kind), num(x), num(ys(p.y)), series_colour(i), html_escape(p.tooltip));
    }
  }
  return out + "</svg>\n";
}

std::string svg_strip_chart(const StripChart& c) {
  constexpr double kLeft = 50, kRight = 50, kTop = 40, kRow = 30;  // room for the end ticks
  const double height = kTop + kRow + 34;
  const double x0 = kLeft, x1 = kWidth - kRight;
  double lo = c.median.value_or(1e300), hi = c.median.value_or(-1e300);
  for (const auto& p : c.points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  if (c.points.empty() && !c.median) lo = 0, hi = 1;
  // A group whose figures all agree still gets a visible span.
  if (hi - lo < std::abs(hi) * 0.02) {
    lo -= std::abs(hi) * 0.01 + 1e-300;
    hi += std::abs(hi) * 0.01 + 1e-300;
  }
  // The axis runs between round ticks in the unit people read (format_ticks).
  const std::vector<double> ticks = round_ticks(lo, hi);
  lo = ticks.front();
  hi = ticks.back();
  auto xpos = [&](double v) { return x0 + (x1 - x0) * (v - lo) / (hi - lo); };
  std::string out = open_svg(height, c.title, c.kind, c.value_unit);
  const double axis_y = kTop + kRow;
  out += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\"/>\n",
                     num(x0), num(x1), num(axis_y));
  const std::vector<std::string> labels = format_ticks(ticks, c.value_unit);
  for (std::size_t i = 0; i < ticks.size(); ++i)
    out += fmt::format(
        "<text class=\"tick\" data-value=\"{}\" x=\"{}\" y=\"{}\" "
        "text-anchor=\"middle\">{}</text>\n",
        ticks[i], num(xpos(ticks[i])), num(axis_y + 14), html_escape(labels[i]));
  out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     num((x0 + x1) / 2), num(axis_y + 30), html_escape(c.unit));
  if (c.median)
    out += fmt::format(
        "<line class=\"guide\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"><title>median "
        "{3}</title>"
        "</line>\n",
        num(xpos(*c.median)), num(kTop - 6), num(axis_y),
        html_escape(format_measure(*c.median, c.value_unit)));
  // Dots spread over five rows by their index, so equal figures stay countable; a highlighted
  // dot is named beside it (towards the middle of the plot), so the chart answers "which node"
  // without a tooltip.
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const auto& p = c.points[i];
    const double y = kTop + 3 + static_cast<double>(i % 5) * (kRow - 6) / 4;
    const double x = xpos(p.value);
    out += fmt::format(
        "<circle class=\"mark\" data-kind=\"{}\" data-outlier=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\" "
        "fill=\"{}\"><title>{}</title></circle>\n",
        html_escape(c.kind), p.highlight ? "true" : "false", num(x), num(y),
        p.highlight ? "5" : "3", p.highlight ? kPalette[1] : kPalette[0], html_escape(p.tooltip));
    if (p.highlight && !p.label.empty()) {
      const bool right_half = x > (x0 + x1) / 2;
      out += fmt::format(
          "<text class=\"outlier-label\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>\n",
          num(right_half ? x - 8 : x + 8), num(y + 4), right_half ? "end" : "start",
          html_escape(cut(p.label, 40)));
    }
  }
  return out + "</svg>\n";
}

}  // namespace gpucheck::report
