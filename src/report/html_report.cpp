// The HTML view: one self-contained page (inline CSS and SVG, no script, no external
// reference) with charts of throughput, speedups, sweeps and qualify verdicts, then the
// document's tables. Every string from the document goes through html_escape.
#include "core/json_keys.h"
#include "core/shape_text.h"
#include "report/fleet.h"
#include "report/html_escape.h"
#include "report/render.h"
#include "report/same_gpu.h"
#include "report/svg_charts.h"
#include "report/text_view.h"
#include "report/units.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpucheck::report {

namespace k = keys;

namespace {

constexpr std::string_view kStyle = R"(
body{font-family:"DejaVu Sans",sans-serif;font-size:14px;color:#222;background:#fff;margin:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.meta{color:#555;margin:0 0 12px}.errors{color:#a00}
svg.chart{display:block;margin:8px 0 16px;background:#fafafa;border:1px solid #ddd}
svg text{font-family:"DejaVu Sans",sans-serif;font-size:11px;fill:#222}
svg text.title{font-size:13px;font-weight:bold}svg text.axis{font-size:12px;fill:#444}
svg line.grid{stroke:#ddd;stroke-width:1}svg line.guide{stroke:#000;stroke-width:1.5}
svg line.break-even{stroke-width:1.5;stroke-dasharray:5 3}svg line.range{stroke-width:1}
svg polyline.curve{fill:none;stroke-width:2}svg polyline.dashed{stroke-dasharray:6 3}
table{border-collapse:collapse;margin:6px 0 14px}th,td{border:1px solid #ccc;padding:2px 6px;
text-align:left;vertical-align:top;font-size:12px}th{background:#eee}
td.ok,td.pass,td.met,td.improvement{background:#e6f4e6}
td.warn,td.changed,td.noisy{background:#fff4d6}
td.skip,td.skipped,td.unsupported,td.same,td.missing,td.new{background:#f0f0f0;color:#555}
td.info{background:#e6eefb}
td.fail,td.failed,td.mismatch,td.unmet,td.regression{background:#fbe0e0;font-weight:bold}
div.verdict{border:2px solid;border-radius:4px;padding:8px 12px;margin:12px 0 18px}
div.verdict.good{border-color:#3a3;background:#eef8ee}div.verdict.warn{border-color:#c90;
background:#fff8e6}div.verdict.bad{border-color:#c33;background:#fdeeee}
div.verdict p{margin:0 0 6px;font-weight:bold}div.verdict li{margin:2px 0}
table.pairs th{background:none;border:none;padding:2px 12px 2px 0;white-space:nowrap}
table.pairs td{border:none;padding:2px 0}p.warn{color:#8a5a00}p.bad{color:#a00}
p.good{color:#262}p.muted{color:#666}
details{margin:2px 0}summary{cursor:pointer;font-weight:bold}p.note{margin:-8px 0 16px;color:#333}
)";

double num(const nlohmann::json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0.0;
}

// Device ids in the order they first appear, so each keeps one colour in every chart.
std::vector<std::string> devices_of(const nlohmann::json& results) {
  std::vector<std::string> out;
  for (const auto& r : results) {
    std::string d = text_at(r, k::kDevice);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

std::size_t index_of(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

// Legend entries: the device, its name, and which other devices are the same GPU (CUDA and
// NVIDIA's OpenCL platform drive one card).
std::vector<std::string> device_legend(const nlohmann::json& results,
                                       const std::vector<std::string>& devices) {
  const GpuMap gpus = GpuMap::from_results(results);
  std::vector<std::string> out;
  for (const auto& d : devices) {
    std::string name;
    for (const auto& r : results)
      if (text_at(r, k::kDevice) == d) {
        name = text_at(r, k::kDeviceName);
        break;
      }
    std::string label = name.empty() ? d : d + " " + name;
    std::string same;
    for (const auto& o : gpus.same_as(d)) same += (same.empty() ? "" : ", ") + o;
    if (!same.empty()) label += " (same GPU as " + same + ")";
    out.push_back(label);
  }
  return out;
}

// One chart per op: each dtype and shape a group, each device a bar (device time).
std::string throughput_charts(const nlohmann::json& results) {
  const auto devices = devices_of(results);
  const auto legend = device_legend(results, devices);
  std::vector<std::string> ops;
  std::map<std::string, BarChart> charts;
  for (const auto& r : results) {
    if (text_at(r, k::kStatus) != "ok" || text_at(r, k::kTransfers) != "excluded") continue;
    auto tp = r.find(k::kThroughput);
    if (tp == r.end()) continue;
    std::string op = text_at(r, k::kOp);
    auto [it, fresh] = charts.try_emplace(op);
    BarChart& c = it->second;
    if (fresh) {
      ops.push_back(op);
      c.title = fmt::format("{} throughput (device time)", op);
      c.unit = text_at(*tp, k::kUnit);
      c.kind = "throughput";
      c.series = legend;
    }
    std::string group = fmt::format("{} {}", text_at(r, k::kDtype), shape_label(r[k::kShape]));
    auto g = std::find_if(c.groups.begin(), c.groups.end(),
                          [&](const BarGroup& b) { return b.label == group; });
    if (g == c.groups.end()) g = c.groups.insert(c.groups.end(), BarGroup{group, {}});
    double v = num(*tp, k::kValue);
    g->bars.push_back({index_of(devices, text_at(r, k::kDevice)), v,
                       fmt::format("{} {} {}: {} ({})", text_at(r, k::kDevice), op, group,
                                   format_rate(v, c.unit), text_at(r, k::kImpl)),
                       ""});
  }
  std::string out;
  for (const auto& op : ops) out += svg_bar_chart(charts[op]);
  return out;
}

// Every accelerator record with a speedup: device time and end to end side by side.
std::string speedup_chart(const nlohmann::json& results) {
  BarChart c;
  c.title = "Speedup over the CPU (log scale; 1\xC3\x97 = as fast as the CPU)";
  c.unit = "CPU median time / device median time";
  c.kind = "speedup";
  c.log_scale = true;
  c.guide = 1.0;
  c.series = {"device time (transfers excluded)", "end to end (transfers included)"};
  for (const auto& r : results) {
    auto sp = r.find(k::kSpeedupVsCpu);
    if (sp == r.end() || !sp->is_number() || sp->get<double>() <= 0) continue;
    std::string group = fmt::format("{} {} {} {}", text_at(r, k::kDevice), text_at(r, k::kOp),
                                    text_at(r, k::kDtype), shape_label(r[k::kShape]));
    auto g = std::find_if(c.groups.begin(), c.groups.end(),
                          [&](const BarGroup& b) { return b.label == group; });
    if (g == c.groups.end()) g = c.groups.insert(c.groups.end(), BarGroup{group, {}});
    bool included = text_at(r, k::kTransfers) == "included";
    g->bars.push_back({included ? 1u : 0u, sp->get<double>(),
                       fmt::format("{}, {}: {:.3g}\xC3\x97", group, c.series[included ? 1 : 0],
                                   sp->get<double>()),
                       ""});
  }
  return c.groups.empty() ? std::string() : svg_bar_chart(c);
}

std::string break_even_text(const nlohmann::json& series) {
  auto be = series.find(k::kBreakEven);
  return be != series.end() && be->is_number() ? size_label(be->get<double>()) : "none in range";
}

// One chart per device, dtype and layout: the CPU's, the device's and the end-to-end times per
// size with min–max whiskers, and the break-even sizes marked.
std::string sweep_charts(const nlohmann::json& sweep) {
  struct Group {
    std::string label;
    const nlohmann::json* excluded = nullptr;
    const nlohmann::json* included = nullptr;
  };
  std::vector<Group> groups;
  // Groups point into the document (value() would return a copy that dies with the loop).
  auto all = sweep.find(k::kSeries);
  if (all == sweep.end() || !all->is_array()) return {};
  for (const auto& s : *all) {
    std::string label = fmt::format("{} ({}) {}{}{}", text_at(s, k::kDevice),
                                    text_at(s, k::kDeviceName), text_at(s, k::kDtype),
                                    s.contains(k::kLayout) ? " " : "", text_at(s, k::kLayout));
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const Group& x) { return x.label == label; });
    if (g == groups.end()) g = groups.insert(groups.end(), Group{label});
    (text_at(s, k::kTransfers) == "included" ? g->included : g->excluded) = &s;
  }
  std::string op = text_at(sweep, k::kOp), out;
  for (const auto& g : groups) {
    CurveChart c;
    c.title = fmt::format("{} sweep on {}", op, g.label);
    c.x_label = fmt::format("size ({})", text_at(sweep, k::kParameter));
    c.y_label = "median time per run";
    c.kind = "sweep";
    Curve cpu{"CPU", {}, false};
    Curve dev{"device time", {}, false};
    Curve e2e{"end to end", {}, true};
    const nlohmann::json* first = g.excluded ? g.excluded : g.included;
    for (const auto& p : first->value(std::string(k::kPoints), nlohmann::json::array()))
      if (auto cp = p.find(k::kCpu); cp != p.end())
        cpu.points.push_back({num(p, k::kSize), num(*cp, k::kMedian), num(*cp, k::kMin),
                              num(*cp, k::kMax),
                              fmt::format("CPU {}: {}", size_label(num(p, k::kSize)),
                                          seconds_label(num(*cp, k::kMedian)))});
    auto add = [&](Curve& curve, const nlohmann::json* s, std::size_t colour, const char* what) {
      if (!s) return;
      for (const auto& p : s->value(std::string(k::kPoints), nlohmann::json::array()))
        if (text_at(p, k::kStatus) == "ok" && num(p, k::kMedian) > 0)
          curve.points.push_back({num(p, k::kSize), num(p, k::kMedian), num(p, k::kMin),
                                  num(p, k::kMax),
                                  fmt::format("{} {}: {}", what, size_label(num(p, k::kSize)),
                                              seconds_label(num(p, k::kMedian)))});
      auto be = s->find(k::kBreakEven);
      if (be != s->end() && be->is_number())
        c.markers.push_back({be->get<double>(),
                             fmt::format("break-even, {}: {}", what, size_label(be->get<double>())),
                             colour});
    };
    add(dev, g.excluded, 1, "device time");
    add(e2e, g.included, 2, "end to end");
    c.curves = {cpu, dev, e2e};
    out += svg_curve_chart(c);
    out += fmt::format("<p class=\"note\">Break-even on {}: device time: {}; end to end: {}.</p>\n",
                       html_escape(g.label),
                       g.excluded ? html_escape(break_even_text(*g.excluded)) : "not run",
                       g.included ? html_escape(break_even_text(*g.included)) : "not run");
  }
  return out;
}

// The profile's verdicts, one coloured bar each: met, unmet, skip.
std::string verdict_chart(const nlohmann::json& q) {
  BarChart c;
  c.title = fmt::format("qualify {}: {}",
                        q.contains(k::kProfile) ? text_at(q[k::kProfile], k::kName) : "",
                        text_at(q, k::kVerdict));
  c.unit = "verdict per requirement";
  c.kind = "verdict";
  c.axis = false;
  c.series = {"met", "unmet", "skip"};
  c.colours = {"#2ca02c", "#d62728", "#999999"};
  for (const auto& v : q.value(std::string(k::kVerdicts), nlohmann::json::array())) {
    std::string verdict = text_at(v, k::kVerdict);
    std::size_t i = verdict == "met" ? 0 : verdict == "unmet" ? 1 : 2;
    std::string label = text_at(v, k::kId);
    if (auto d = text_at(v, k::kDevice); !d.empty()) label += " (" + d + ")";
    std::string tip =
        fmt::format("{}: {} (measured {}, threshold {}{}{})", text_at(v, k::kRequirement), verdict,
                    text_at(v, k::kMeasured), text_at(v, k::kThreshold),
                    v.contains(k::kUnit) ? " " : "", text_at(v, k::kUnit));
    std::string text = fmt::format("{}: {}{}{}", verdict, text_at(v, k::kMeasured),
                                   v.contains(k::kUnit) ? " " : "", text_at(v, k::kUnit));
    if (auto reason = text_at(v, k::kReason); !reason.empty()) {
      tip += "; " + reason;
      text = verdict + ": " + reason;
    }
    c.groups.push_back({label, {{i, 1.0, tip, text}}});
  }
  return c.groups.empty() ? std::string() : svg_bar_chart(c);
}

// Table cells whose column is a status or verdict carry it as a class, for colour.
// The answer before anything else: the counts, then each problem with its fix (doctor) or each
// regression and library change with its figures (compare).
std::string verdict_banner(const nlohmann::json& doc) {
  std::string line, tone;
  std::vector<std::pair<std::string, std::string>> items;  // (status class, text)
  if (auto c = doc.find(k::kComparison); c != doc.end() && c->is_object()) {
    const std::string verdict = text_at(*c, k::kVerdict);
    const nlohmann::json s = c->value(std::string(k::kSummary), nlohmann::json::object());
    line = "compare: ";
    // The count of every verdict, as the closing line of the terminal view has them.
    for (const char* key :
         {"regression", "changed", "improvement", "same", "noisy", "missing", "new"})
      line += fmt::format("{}{} {}", key == std::string("regression") ? "" : ", ",
                          s.value(std::string(key), 0), key);
    tone = verdict == "ok" ? "good" : "bad";
    for (const char* wanted : {"regression", "changed"})
      for (const auto& r : c->value(std::string(k::kRows), nlohmann::json::array()))
        if (text_at(r, k::kVerdict) == wanted)
          items.emplace_back(
              wanted,
              fmt::format("{} {}{} on {}: {} \u2192 {} ({:+.1f}%)", upper_case(std::string(wanted)),
                          text_at(r, k::kOp),
                          text_at(r, k::kDtype).empty() ? "" : " " + text_at(r, k::kDtype),
                          text_at(r, k::kDevice),
                          format_measure(r.value(std::string(k::kBase), 0.0), text_at(r, k::kUnit)),
                          format_measure(r.value(std::string(k::kNew), 0.0), text_at(r, k::kUnit)),
                          r.value(std::string(k::kChange), 0.0) * 100));
  } else if (auto ch = doc.find(k::kChecks);
             ch != doc.end() && ch->is_array() && !doc.contains(k::kQualify)) {
    const auto [summary, t] = checks_summary(*ch);
    line = summary;
    tone = t == Tone::kBad ? "bad" : t == Tone::kWarn ? "warn" : "good";
    if (const std::string injected = injected_line(doc); !injected.empty())
      items.emplace_back("warn", injected);
    for (const char* wanted : {"fail", "warn"})
      for (const auto& c : *ch)
        if (text_at(c, k::kStatus) == wanted)
          items.emplace_back(wanted, fmt::format("{} {}: {}{}", upper_case(std::string(wanted)),
                                                 text_at(c, k::kId), text_at(c, k::kFinding),
                                                 text_at(c, k::kFix).empty()
                                                     ? std::string()
                                                     : " \u2014 fix: " + text_at(c, k::kFix)));
  } else {
    return {};
  }
  std::string out = fmt::format("<div class=\"verdict {}\">\n<p>{}</p>\n", tone, html_escape(line));
  if (!items.empty()) {
    out += "<ul>\n";
    for (const auto& [cls, text] : items)
      out += fmt::format("<li class=\"{}\">{}</li>\n", cls, html_escape(text));
    out += "</ul>\n";
  }
  return out + "</div>\n";
}

// A probe document's page: the terminal's summary (probe_view), its closing count line first
// as the page's verdict; the terminal's hint about flags is left out.
std::string probe_summary(const nlohmann::json& doc) {
  TextView view = make_text_view(doc, ViewOptions{});
  if (view.blocks().empty() || view.blocks().back().kind != TextBlock::Kind::kText)
    return view_html(view);
  const std::optional<TextBlock> verdict = view.take_last();
  if (!view.blocks().empty() && view.blocks().back().tone == Tone::kMuted) view.take_last();
  return fmt::format("<div class=\"verdict {}\">\n<p>{}</p>\n</div>\n",
                     verdict->tone == Tone::kGood ? "good" : "warn", html_escape(verdict->text)) +
         view_html(view);
}

bool status_column(const std::string& name) {
  return name == "status" || name == "verdict";
}

std::string table_html(const TableSection& t) {
  std::string out = fmt::format("<h2>{}</h2>\n<table class=\"{}\">\n<tr>", html_escape(t.title),
                                html_escape(t.title));
  for (const auto& c : t.columns) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::string value = row[i];
      std::string cls = i < t.columns.size() && status_column(t.columns[i]) ? value : "";
      for (char& ch : cls) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out += cls.empty() ? "<td>" : "<td class=\"" + html_escape(cls) + "\">";
      out += html_escape(value) + "</td>";
    }
    out += "</tr>\n";
  }
  if (t.rows.empty())
    out += fmt::format("<tr><td colspan=\"{}\">(none)</td></tr>\n", t.columns.size());
  return out + "</table>\n";
}

std::string facts_html(const KeyValueSection& s, bool open) {
  std::string out = fmt::format("<details{}><summary>{}</summary>\n<table class=\"facts\">\n",
                                open ? " open" : "", html_escape(s.title));
  for (const auto& [key, value] : s.rows)
    out += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>\n";
  return out + "</table></details>\n";
}

}  // namespace

std::string render_html(const nlohmann::json& doc) {
  const std::string command = text_at(doc, k::kCommand);
  const nlohmann::json none = nlohmann::json::object();
  const auto& prov = doc.contains(k::kProvenance) ? doc[k::kProvenance] : none;
  const auto& host = doc.contains(k::kHost) ? doc[k::kHost] : none;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>gpucheck {} {}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>gpucheck {}</h1>\n",
      html_escape(command), html_escape(text_at(host, k::kHostname)), kStyle, html_escape(command));
  std::string argv;
  for (const auto& a : prov.value(std::string(k::kArgv), nlohmann::json::array()))
    argv += (argv.empty() ? "" : " ") + scalar_text(a);
  out += fmt::format("<p class=\"meta\">{} · {} · gpucheck {} · <code>{}</code></p>\n",
                     html_escape(text_at(host, k::kHostname)), html_escape(text_at(prov, k::kTime)),
                     html_escape(text_at(prov, k::kGpucheckVersion)), html_escape(argv));
  if (auto e = doc.find(k::kErrors); e != doc.end() && e->is_array() && !e->empty()) {
    out += "<ul class=\"errors\">\n";
    for (const auto& m : *e) out += "<li>" + html_escape(scalar_text(m)) + "</li>\n";
    out += "</ul>\n";
  }
  out += verdict_banner(doc);
  const bool probe = command == "probe";
  if (probe) out += probe_summary(doc);
  if (auto q = doc.find(k::kQualify); q != doc.end() && q->is_object()) {
    out += "<h2>Qualify verdicts</h2>\n" + verdict_chart(*q);
  }
  if (auto s = doc.find(k::kSweep); s != doc.end() && s->is_object()) {
    out +=
        "<h2>Break-even sweep</h2>\n<p>The break-even size is the smallest size from which the "
        "device's median beats the CPU's with non-overlapping min\xE2\x80\x93max ranges, there "
        "and at every larger size measured.</p>\n" +
        sweep_charts(*s);
  }
  if (auto f = doc.find(k::kFleet); f != doc.end() && f->is_object()) {
    const nlohmann::json rules = f->value(std::string(k::kRules), nlohmann::json::object());
    out += fmt::format(
        "<h2>Fleet</h2>\n<p>Each dot is one GPU's figure in a group of records (GPU model, op, "
        "dtype, shape, transfers); the line is the group's median. Per node, its worst GPU is an "
        "outlier (red) when its modified z-score is below {} or, with fewer than {} nodes, when "
        "it is more than {:g} % below the median.</p>\n",
        scalar_text(rules.value(std::string(k::kZThreshold), nlohmann::json(-3.5))),
        scalar_text(rules.value(std::string(k::kSmallFleetNodes), nlohmann::json(10))),
        rules.value(std::string(k::kSmallFleetDrop), 0.07) * 100);
    // The outliers, named, before the strip charts that show them among the rest.
    out += table_html(fleet_tables(*f).front()) + fleet_charts(*f);
  }
  if (auto r = doc.find(k::kResults); r != doc.end() && r->is_array()) {
    std::string charts = throughput_charts(*r);
    if (!charts.empty()) out += "<h2>Throughput</h2>\n" + charts;
    std::string speedups = speedup_chart(*r);
    if (!speedups.empty()) out += "<h2>Speedup over the CPU</h2>\n" + speedups;
  }
  ViewModel vm = make_view_model(doc);
  for (const auto& t : vm.tables)
    if (!(doc.contains(k::kFleet) && t.title == "fleet outliers")) out += table_html(t);
  if (!vm.facts.empty()) {
    out += "<h2>System</h2>\n";
    // The machine's identity is open; the long per-backend and per-device lists are folded.
    // A probe page's summary above says what these hold: all of them are folded there.
    for (const auto& s : vm.facts)
      out += facts_html(
          s, !probe && (s.title == k::kHost || s.title == k::kCpu || s.title == k::kProvenance));
  }
  return out + "</body>\n</html>\n";
}

}  // namespace gpucheck::report
