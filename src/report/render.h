// Every view of the document: table (terminal), JSON, CSV, markdown, HTML and Prometheus.
#pragma once

#include "report/text_view.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::report {

enum class Format { kTable, kJson, kCsv, kMarkdown, kHtml, kPrometheus };

std::optional<Format> format_from_string(std::string_view s);
std::string_view to_string(Format f);

// Width, colour and how much to show (text_view.h); only the table and markdown views use them.
using RenderOptions = ViewOptions;

std::string render(const nlohmann::json& doc, Format format, const RenderOptions& options = {});

std::string render_table(const nlohmann::json& doc, const RenderOptions& options);
// The table view's last line, uncoloured and unwrapped: the closing count or verdict ("bench: 34
// records: 34 ok, ...", "qualify: met (...)"), what a run that wrote its document to a file
// still tells the person who ran it.
std::string closing_line(const nlohmann::json& doc);
std::string render_json(const nlohmann::json& doc);
// One table: the records (bench), verdicts (qualify), checks (doctor), comparison rows or the
// probe's facts; numbers at full precision with their units in columns of their own.
std::string render_csv(const nlohmann::json& doc);
std::string render_markdown(const nlohmann::json& doc, const RenderOptions& options);
// One self-contained page: inline CSS and SVG charts, no script, no external reference.
std::string render_html(const nlohmann::json& doc);
// node_exporter's textfile-collector format (report/prometheus.h).
std::string render_prometheus(const nlohmann::json& doc);

// RFC 4180 field: quoted when it holds a comma, quote, CR or LF; quotes doubled.
std::string csv_field(std::string_view s);

}  // namespace gpucheck::report
