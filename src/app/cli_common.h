// Options every subcommand shares (output format and destination, verbosity) and their effects.
#pragma once

#include "bench/cell.h"
#include "core/duration.h"
#include "core/errors.h"
#include "report/render.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpucheck::app {

struct OutputOptions {
  std::string format = "table";
  bool format_given = false;  // --format on the command line: it wins over -o's extension
  bool json = false;
  std::string output_path;  // empty: stdout
  int verbosity = 0;
  bool quiet = false;
  std::string color = "auto";  // auto | always | never (auto: a terminal without NO_COLOR)
  // How much the table and markdown views show (report/text_view.h).
  bool details = false;
  bool full = false;
  bool list = false;
  std::string device;
};

// An output file flag's check: an empty name is a usage error, not stdout.
CLI::Validator output_file_name();
// Refuses "" with "an empty WHAT (INSTEAD)": an empty value never silently means the default.
CLI::Validator non_empty(const std::string& what, const std::string& instead);
// --format, --json, -o, --color, -v, -q. extra_formats: formats only this command knows
// (doctor's "oneline"), which it writes itself through Output::write_text.
void add_output_options(CLI::App& cmd, OutputOptions& opts,
                        const std::vector<std::string>& extra_formats = {});
// --details: the evidence of every check and the system facts after the result.
void add_details_option(CLI::App& cmd, OutputOptions& opts, const std::string& what);
// probe's views: --full, -L/--list, --device (a probe document's devices).
void add_probe_view_options(CLI::App& cmd, OutputOptions& opts);

// The format -o's file name asks for: json (.json), html (.html, .htm), csv (.csv), markdown
// (.md, .markdown), prometheus (.prom); empty for any other name, which keeps the default.
std::string format_for_file_name(const std::string& path);
// The format a run writes: --json, else --format, else -o's extension, else table. A known
// extension that --format or --json contradicts is a UsageError naming both.
std::string chosen_format(const OutputOptions& opts);

// The width for help and the table view: COLUMNS when set, else stdout's terminal, else the
// controlling terminal's (stdout piped into `head` in a terminal), else 80.
std::size_t output_width();
// Whether to colour: --color always/never, else a terminal and no NO_COLOR.
bool use_color(const std::string& mode, bool to_terminal);

// Resolves the options once the command line is parsed: the format, the destination (checked
// now, so an unwritable file is a usage error before any work, but written only at the end,
// complete, under a temporary name renamed into place) and the log level.
class Output {
 public:
  explicit Output(const OutputOptions& opts);
  report::Format format() const { return format_; }
  // Renders the document in the chosen format to the chosen destination; with -o, the table
  // view's closing line and "wrote FILE" go to stderr, so the run still ends with its result.
  void write(const nlohmann::json& doc);
  // Writes text as it is to the chosen destination (a command's own format), replacing an -o
  // file whole even when the text is empty; with -o, `closing` and "wrote FILE" go to stderr.
  void write_text(const std::string& text, const std::string& closing = {});

 private:
  report::Format format_;
  OutputOptions opts_;
  std::string path_;
};

// Vendor libraries named on the command line, ahead of every search path. They reach the
// backends' children through the environment (GPUCHECK_CUBLAS_LIB, ..., GPUCHECK_BLAS_LIB).
struct LibraryOptions {
  std::string cublas, cublaslt, cudnn, nvml, blas;
  std::string nccl;  // --nccl, the library of the collective group op (GroupOp::collective)
};
void add_library_options(CLI::App& cmd, LibraryOptions& opts);
void apply_library_options(const LibraryOptions& opts);

// Every time flag (--timeout, --max-time, --duration, ...) reads through this: the grammar and
// limits of core/duration.h, a bad value a usage error naming the flag; the option then holds
// seconds ("5m" becomes 300).
CLI::Validator duration_validator(DurationLimits limits = {});
// "seconds, or with s, m or h (90, 5m, 1h); at most 604800 seconds (7 days)": for --help.
std::string duration_help(DurationLimits limits = {});
// --probe-timeout SECONDS: above 0, at most a day (nan or 0 would make every probe child
// "time out", and the culprit search then blames a healthy ICD).
void add_probe_timeout_option(CLI::App& cmd, double& seconds);
// A comma-separated flag value as its items (empty items dropped).
std::vector<std::string> split_list(const std::string& text);
// --threads (or a profile's threads) above the CPU's hardware threads: clamped, with a warning.
int clamp_cpu_threads(int requested, const char* what);

// --threads N: 0 to kMaxThreadsOption (a bad value's message names those bounds, not the
// 309 digits of CLI::NonNegativeNumber's DBL_MAX); clamp_cpu_threads clamps it later.
inline constexpr int kMaxThreadsOption = 1 << 16;
void add_threads_option(CLI::App& cmd, int& threads, const std::string& help);

// How OpenCL's GEMM parameters are chosen: bench and qualify tune, probe and doctor
// never do.
struct TuningOptions {
  std::optional<double> budget_s;
  bool no_tune = false;
  bool retune = false;
};
void add_tuning_options(CLI::App& cmd, TuningOptions& opts);
// UsageError for --no-tune with --retune or --tune-budget.
bench::TuningPlan tuning_plan(const TuningOptions& opts);

// Logs go to stderr only; machine-readable output on stdout never mixes with them. color:
// --color's value (auto: when stderr is a terminal and NO_COLOR is unset).
void configure_logging(int verbosity, bool quiet, const std::string& color = "auto");

// One subcommand: its CLI11 node and what runs when it was chosen.
struct Command {
  CLI::App* app = nullptr;
  std::function<ExitCode()> run;
};

Command add_probe_command(CLI::App& root, const std::vector<std::string>& argv);
Command add_bench_command(CLI::App& root, const std::vector<std::string>& argv);
Command add_child_command(CLI::App& root);
// The hidden "__checks-table": docs/CHECKS.md's generated tables (doctor/checks_doc.h).
Command add_checks_table_command(CLI::App& root);
Command add_doctor_command(CLI::App& root, const std::vector<std::string>& argv);
Command add_qualify_command(CLI::App& root, const std::vector<std::string>& argv);
Command add_stress_command(CLI::App& root, const std::vector<std::string>& argv);
// `report compare` and `report show`: one Command whose run dispatches to the one chosen.
Command add_report_command(CLI::App& root, const std::vector<std::string>& argv);

}  // namespace gpucheck::app
