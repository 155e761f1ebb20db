// Output flags, destinations and logging shared by the subcommands.
#include "app/cli_common.h"

#include "core/backend_descriptors.h"
#include "core/output_file.h"
#include "report/text_layout.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string_view>
#include <thread>

namespace gpucheck::app {

CLI::Validator non_empty(const std::string& what, const std::string& instead) {
  return CLI::Validator(
      [what, instead](std::string& value) -> std::string {
        return value.empty() ? fmt::format("an empty {} ({})", what, instead) : "";
      },
      "");
}

CLI::Validator output_file_name() {
  return non_empty("file name", "leave the flag out to write to stdout");
}

void add_output_options(CLI::App& cmd, OutputOptions& opts,
                        const std::vector<std::string>& extra_formats) {
  std::vector<std::string> formats{"table", "json", "csv", "markdown", "md", "html", "prometheus"};
  std::string extra;
  for (const auto& f : extra_formats) {
    formats.push_back(f);
    extra += ", " + f;
  }
  cmd.add_option("--format", opts.format,
                 "Output format: table, json, csv, markdown, html (a self-contained page with "
                 "charts), prometheus (node_exporter textfile)" +
                     extra)
      ->check(CLI::IsMember(formats))
      ->each([&opts](const std::string&) { opts.format_given = true; })
      ->type_name("FORMAT")
      ->group("Output");
  cmd.add_flag("--json", opts.json, "Same as --format json")->group("Output");
  cmd.add_option("-o,--output", opts.output_path,
                 "Write the output to FILE instead of stdout, in the format its extension names "
                 "(.json, .html, .csv, .md, .prom; else --format's) unless --format says; "
                 "replaced whole by a run that ends with exit 0 or 1, keeping its owner and "
                 "mode (a symbolic link's target is written); the closing line and 'wrote FILE' "
                 "go to stderr")
      ->check(output_file_name())
      ->type_name("FILE")
      ->group("Output");
  cmd.add_option("--color", opts.color,
                 "Colour the table view: auto (a terminal without NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->type_name("WHEN")
      ->group("Output");
  cmd.add_flag("-v,--verbose", opts.verbosity, "More log detail on stderr (repeatable)")
      ->group("Output");
  cmd.add_flag("-q,--quiet", opts.quiet, "Only errors on stderr")->group("Output");
}

void add_details_option(CLI::App& cmd, OutputOptions& opts, const std::string& what) {
  cmd.add_flag("--details", opts.details, what)->group("Output");
}

void add_probe_view_options(CLI::App& cmd, OutputOptions& opts) {
  cmd.add_flag("--full", opts.full, "Every field, grouped by section (the table view)")
      ->group("Output");
  cmd.add_flag("-L,--list", opts.list, "One line per device, as nvidia-smi -L and clinfo -l")
      ->group("Output");
  cmd.add_option("--device", opts.device,
                 "Show one device: cpu, cuda0, opencl1 or a stable id (cuda:<uuid>, ...)")
      ->type_name("DEVICE")
      ->group("Output");
}

std::string format_for_file_name(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".json") return "json";
  if (ext == ".html" || ext == ".htm") return "html";
  if (ext == ".csv") return "csv";
  if (ext == ".md" || ext == ".markdown") return "markdown";
  if (ext == ".prom") return "prometheus";
  return {};
}

std::string chosen_format(const OutputOptions& opts) {
  const std::string given = opts.json ? "json" : opts.format_given ? opts.format : "";
  const std::string from_name = format_for_file_name(opts.output_path);
  if (given.empty()) return from_name.empty() ? opts.format : from_name;
  if (!from_name.empty()) {
    const auto a = report::format_from_string(given), b = report::format_from_string(from_name);
    if (!a || !b || *a != *b)
      throw UsageError(fmt::format(
          "-o/--output: '{}' is named for {} but {} asks for {}: drop one, or name the file "
          "for its format",
          opts.output_path, from_name, opts.json ? "--json" : "--format", given));
  }
  return given;
}

namespace {

// Columns of the terminal on fd, or 0 when fd is no terminal.
std::size_t terminal_columns(int fd) {
  winsize ws{};
  return ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20 ? ws.ws_col : 0;
}

}  // namespace

std::size_t output_width() {
  if (const char* cols = std::getenv("COLUMNS"); cols != nullptr && *cols != '\0') {
    std::string_view v(cols);
    std::size_t n = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec == std::errc() && r.ptr == v.data() + v.size() && n >= 20 && n <= 1000) return n;
  }
  if (const std::size_t n = terminal_columns(STDOUT_FILENO)) return n;
  // Piped (`gpucheck probe | less`) in a terminal: that terminal is where it is read.
  const int tty = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (tty >= 0) {
    const std::size_t n = terminal_columns(tty);
    ::close(tty);
    if (n != 0) return n;
  }
  return 80;
}

bool use_color(const std::string& mode, bool to_terminal) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return to_terminal && (no_color == nullptr || *no_color == '\0');
}

Output::Output(const OutputOptions& opts)
    : format_(report::Format::kTable), opts_(opts), path_(opts.output_path) {
  const std::string chosen = chosen_format(opts);
  auto f = report::format_from_string(chosen);
  if (!f) throw UsageError("--format: unknown format '" + chosen + "'");
  format_ = *f;
  if (!path_.empty()) check_output_path(path_, "-o/--output");
  configure_logging(opts.verbosity, opts.quiet, opts.color);
}

void Output::write(const nlohmann::json& doc) {
  const bool to_terminal = path_.empty() && ::isatty(STDOUT_FILENO) != 0;
  report::RenderOptions ro;
  ro.width = output_width();
  ro.color = use_color(opts_.color, to_terminal);
  ro.details = opts_.details;
  ro.full = opts_.full;
  ro.list = opts_.list;
  ro.device = opts_.device;
  write_text(report::render(doc, format_, ro), path_.empty() ? "" : report::closing_line(doc));
}

void Output::write_text(const std::string& text, const std::string& closing) {
  if (path_.empty()) return write_stdout(text);
  write_output_file(path_, text, "-o/--output");
  // The run's answer stays on the screen though the document went to a file.
  if (opts_.quiet) return;
  std::string note = closing.empty() ? "" : closing + "\n";
  note += fmt::format("wrote {}\n", report::printable(path_));
  std::cerr << note << std::flush;
}

CLI::Validator duration_validator(DurationLimits limits) {
  return CLI::Validator(
      [limits](std::string& text) -> std::string {
        std::string why;
        auto seconds = parse_duration_s(text, &why, limits);
        if (!seconds) return why;
        text = fmt::format("{}", *seconds);  // what the option's double is read from
        return {};
      },
      "");
}

std::string duration_help(DurationLimits limits) {
  return fmt::format("seconds, or with s, m or h (90, 5m, 1h); at most {}",
                     describe_max(limits.max_s));
}

void add_probe_timeout_option(CLI::App& cmd, double& seconds) {
  const DurationLimits limits{kMaxProbeTimeoutS, false};
  cmd.add_option("--probe-timeout", seconds,
                 "Time each backend's probe may take: " + duration_help(limits))
      ->transform(duration_validator(limits))
      ->capture_default_str()
      ->type_name("SECONDS");
}

void add_library_options(CLI::App& cmd, LibraryOptions& opts) {
  cmd.add_option("--cublas", opts.cublas, "Use this libcublas.so instead of searching")
      ->check(CLI::ExistingFile)
      ->group("Libraries")
      ->type_name("FILE");
  cmd.add_option("--cublaslt", opts.cublaslt, "Use this libcublasLt.so instead of searching")
      ->check(CLI::ExistingFile)
      ->group("Libraries")
      ->type_name("FILE");
  cmd.add_option("--cudnn", opts.cudnn, "Use this libcudnn.so instead of searching")
      ->check(CLI::ExistingFile)
      ->group("Libraries")
      ->type_name("FILE");
  cmd.add_option("--blas", opts.blas,
                 "Use this BLAS (libopenblas, libblis, libmkl_rt) for the CPU instead of searching")
      ->check(CLI::ExistingFile)
      ->group("Libraries")
      ->type_name("FILE");
  cmd.add_option("--nccl", opts.nccl, "Use this libnccl.so instead of searching")
      ->check(CLI::ExistingFile)
      ->group("Libraries")
      ->type_name("FILE");
  // For tests: a fake NVML library stands in for the driver's.
  cmd.add_option("--nvml-lib", opts.nvml)->check(CLI::ExistingFile)->group("");
}

void apply_library_options(const LibraryOptions& opts) {
  const std::pair<const char*, const std::string*> vars[] = {
      {"GPUCHECK_CUBLAS_LIB", &opts.cublas}, {"GPUCHECK_CUBLASLT_LIB", &opts.cublaslt},
      {"GPUCHECK_CUDNN_LIB", &opts.cudnn},   {"GPUCHECK_NVML_LIB", &opts.nvml},
      {"GPUCHECK_BLAS_LIB", &opts.blas},     {"GPUCHECK_NCCL_LIB", &opts.nccl}};
  for (const auto& [name, value] : vars)
    if (!value->empty()) ::setenv(name, value->c_str(), 1);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int clamp_cpu_threads(int requested, const char* what) {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  if (hardware <= 0 || requested <= hardware) return requested;
  spdlog::warn("{} {} is more than this CPU's {} hardware threads: using {}", what, requested,
               hardware, hardware);
  return hardware;
}

void add_threads_option(CLI::App& cmd, int& threads, const std::string& help) {
  cmd.add_option("--threads", threads, help)
      ->check(CLI::Range(0, kMaxThreadsOption))
      ->capture_default_str()
      ->type_name("N");
}

void add_tuning_options(CLI::App& cmd, TuningOptions& opts) {
  cmd.add_option("--tune-budget", opts.budget_s,
                 "Seconds the search for a device's fastest GEMM may take, per dtype (" +
                     tuning_words(&TuningWords::budget) + ")")
      ->check(CLI::Range(0.1, 3600.0))
      ->type_name("SECONDS")
      ->group("Tuning");
  cmd.add_flag("--no-tune", opts.no_tune,
               "Nothing read from or written to the tuning cache (" +
                   tuning_words(&TuningWords::untuned) + ")")
      ->group("Tuning");
  cmd.add_flag("--retune", opts.retune,
               "Search again even where the cache holds a device's choices (" +
                   tuning_words(&TuningWords::searched) + ")")
      ->group("Tuning");
}

bench::TuningPlan tuning_plan(const TuningOptions& opts) {
  if (opts.no_tune && opts.retune) throw UsageError("--no-tune and --retune contradict each other");
  if (opts.no_tune && opts.budget_s)
    throw UsageError("--tune-budget: nothing is tuned with --no-tune");
  bench::TuningPlan plan;
  plan.mode = opts.no_tune  ? TuningMode::kOff
              : opts.retune ? TuningMode::kRetune
                            : TuningMode::kAuto;
  plan.budget_s = opts.budget_s;
  return plan;
}

void configure_logging(int verbosity, bool quiet, const std::string& color) {
  const char* no_color = std::getenv("NO_COLOR");
  auto mode = color == "always"         ? spdlog::color_mode::always
              : color == "never"        ? spdlog::color_mode::never
              : (no_color && *no_color) ? spdlog::color_mode::never
                                        : spdlog::color_mode::automatic;
  spdlog::drop("gpucheck");
  auto logger = spdlog::stderr_color_mt("gpucheck", mode);
  logger->set_pattern("%^gpucheck %l:%$ %v");
  spdlog::set_default_logger(logger);
  if (quiet)
    spdlog::set_level(spdlog::level::err);
  else if (verbosity >= 2)
    spdlog::set_level(spdlog::level::debug);
  else if (verbosity == 1)
    spdlog::set_level(spdlog::level::info);
  else
    spdlog::set_level(spdlog::level::warn);
}

}  // namespace gpucheck::app
