// stress's status lines on stderr: on a terminal one line per device, redrawn in place; else a
// line per device every 10 s (logs and CI output stay readable).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace gpucheck::app {

class StatusBoard {
 public:
  static constexpr double kPlainIntervalS = 10;

  // enabled: false with --quiet or machine-readable output on stderr's terminal.
  StatusBoard(std::vector<std::string> devices, double duration_s, bool terminal, bool enabled,
              std::FILE* out = stderr);
  // A status event's data (stress/events.h) or a fate ("FAIL: could not start") for a device.
  void update(std::size_t device, const nlohmann::json& status);
  // force: printed at once even between the plain intervals (a device's fate).
  void note(std::size_t device, const std::string& text, bool force = false);
  // Leaves the last state on screen.
  void finish();

  // The line shown for a status event: "cuda0  gemm  712.3 TFLOP/s  res 12000  mism 0  71 C
  // 690 W  1755 MHz  23/60 s".
  static std::string line(const std::string& device, const nlohmann::json& status,
                          double duration_s);

 private:
  void draw();

  std::vector<std::string> devices_, lines_;
  std::vector<std::chrono::steady_clock::time_point> printed_;
  double duration_s_;
  bool terminal_, enabled_, drawn_ = false;
  std::FILE* out_;
};

}  // namespace gpucheck::app
