// The engine or algorithm a vendor library chose for one op (cuDNN's engine, cuBLASLt's
// algorithm), kept per device so that every run times the same kernel: a search picks once, later
// runs read the pick, --retune searches again. Keyed by library and version, op, dtype, shape and
// layout inside one file per device UUID (backends/kept_cache.h, as the OpenCL GEMM tuning).
#pragma once

#include "backends/device.h"
#include "backends/kept_cache.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

struct ChoiceCacheIdentity {
  std::string device_uuid;       // owns the file
  std::string device_name;       // readable part of the file's name
  std::string gpucheck_version;  // another gpucheck lists candidates its own way: search again
};

// "LIBRARY VERSION|OP|DTYPE|SHAPE|LAYOUT": one entry's key.
std::string choice_key(std::string_view library, std::string_view version, std::string_view op,
                       std::string_view dtype, std::string_view shape, std::string_view layout);

class LibraryChoiceCache {
 public:
  using Log = std::function<void(TuningLog, const std::string&)>;
  // Reads DIR's file of the device once. Nothing is read or kept when dir is empty or the mode
  // is kOff (every run searches); kRetune reads nothing but keeps what the searches choose.
  void open(const std::filesystem::path& dir, const ChoiceCacheIdentity& id, TuningMode mode,
            Log log);
  bool is_open() const { return open_; }
  // The kept choice of `key` (an object naming library and id), or nullopt. An entry that is
  // not such an object is dropped with a warning, and the op searches again.
  std::optional<nlohmann::json> find(const std::string& key);
  // Keeps a search's choice and writes the file, whole (a failure to write is a warning).
  void keep(const std::string& key, const nlohmann::json& choice);
  // Drops an entry the library can no longer run, with a warning saying why.
  void forget(const std::string& key, const std::string& why);
  const std::filesystem::path& path() const { return path_; }

 private:
  void say(TuningLog level, const std::string& text) const {
    if (log_) log_(level, text);
  }
  void write();
  bool open_ = false;
  bool read_ = true;  // false under --retune
  std::filesystem::path path_;
  CacheLayout layout_;
  nlohmann::json doc_;
  Log log_;
};

// Which of the timed candidates to keep (ms in the library's own order; a negative ms did not
// run): the fastest, except that candidates within `noise` (relative) of it count as tied, and
// of tied ones the library's first wins, so two runs that time the same candidates a little
// differently still choose alike. nullopt when none ran.
std::optional<std::size_t> pick_within_noise(const std::vector<double>& ms, double noise);

// The noise the CUDA libraries' searches allow: candidates timed within 3 % of the fastest are
// tied, so a search's pick does not hang on the last percent of a short timing.
inline constexpr double kChoiceTieNoise = 0.03;

}  // namespace gpucheck
