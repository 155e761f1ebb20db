// Status lines for stress.
#include "app/stress_status.h"

#include "core/json_keys.h"

#include <fmt/format.h>

namespace gpucheck::app {

namespace k = keys;

StatusBoard::StatusBoard(std::vector<std::string> devices, double duration_s, bool terminal,
                         bool enabled, std::FILE* out)
    : devices_(std::move(devices)),
      lines_(devices_.size()),
      printed_(devices_.size(), std::chrono::steady_clock::time_point{}),
      duration_s_(duration_s),
      terminal_(terminal),
      enabled_(enabled),
      out_(out) {
  for (std::size_t i = 0; i < devices_.size(); ++i) lines_[i] = devices_[i] + "  starting";
}

std::string StatusBoard::line(const std::string& device, const nlohmann::json& s,
                              double duration_s) {
  std::string text = fmt::format("{:<8} {:<6}", device, s.value(std::string(k::kTest), ""));
  if (s.contains(k::kWhat)) {
    text += " " + s[k::kWhat].get<std::string>();
  } else {
    text += fmt::format(" {:>8.4g} {:<7} res {:<8} mism {}", s.value(std::string(k::kValue), 0.0),
                        s.value(std::string(k::kUnit), ""),
                        s.value(std::string(k::kIterations), std::uint64_t{0}),
                        s.value(std::string(k::kMismatches), std::uint64_t{0}));
  }
  if (s.contains(k::kTemperatureC))
    text += fmt::format("  {:.0f} C", s[k::kTemperatureC].get<double>());
  if (s.contains(k::kPowerW)) text += fmt::format("  {:.0f} W", s[k::kPowerW].get<double>());
  if (s.contains(k::kSmClockMhz))
    text += fmt::format("  {:.0f} MHz", s[k::kSmClockMhz].get<double>());
  text += fmt::format("  {:.0f}/{:.0f} s", s.value(std::string(k::kSeconds), 0.0), duration_s);
  return text;
}

void StatusBoard::update(std::size_t device, const nlohmann::json& status) {
  note(device, line(devices_[device], status, duration_s_));
}

void StatusBoard::note(std::size_t device, const std::string& text, bool force) {
  if (device >= lines_.size()) return;
  lines_[device] = text;
  if (!enabled_) return;
  if (terminal_) {
    draw();
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (!force && printed_[device] != std::chrono::steady_clock::time_point{} &&
      std::chrono::duration<double>(now - printed_[device]).count() < kPlainIntervalS)
    return;
  printed_[device] = now;
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void StatusBoard::draw() {
  // Back to the first line of the board, then every line rewritten and cleared to its end.
  if (drawn_) std::fprintf(out_, "\x1b[%zuA", lines_.size());
  for (const auto& l : lines_) std::fprintf(out_, "\r\x1b[K%s\n", l.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void StatusBoard::finish() {
  if (enabled_ && terminal_ && !drawn_) draw();
}

}  // namespace gpucheck::app
