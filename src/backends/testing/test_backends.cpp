// Backends that crash, hang, flood or report hostile strings, to test isolation and sanitising.
#include "backends/testing/test_backends.h"

#include "core/json_keys.h"
#include "core/sanitize.h"

#include <array>
#include <csignal>
#include <string>
#include <thread>

namespace gpucheck {

namespace {

constexpr std::array<std::string_view, 4> kKinds{"crash", "hang", "flood", "weird"};

// The raw bytes a broken driver might return for a device name.
constexpr std::string_view kWeirdName = "GPU \"quoted\", comma\ttab\nnewline\x1b[31m \xff\xfe end";

class TestBackend final : public Backend {
 public:
  explicit TestBackend(std::string_view kind) : kind_(kind), name_("test_" + std::string(kind)) {}
  std::string_view name() const override { return name_; }

  nlohmann::json probe() override {
    if (kind_ == "crash") std::raise(SIGSEGV);
    if (kind_ == "hang")
      while (true) std::this_thread::sleep_for(std::chrono::hours(1));
    if (kind_ == "flood") {
      // A driver returning absurd amounts of data: more than the parent accepts from a child.
      return {{keys::kName, name_}, {keys::kStatus, "available"},
              {"junk", std::string(std::size_t{17} << 20, 'x')}};  // just over the 16 MiB limit
    }
    namespace k = keys;
    nlohmann::json device = {{k::kDevice, name_ + "0"},
                             {k::kStableId, name_ + ":0"},
                             {k::kDeviceName, sanitize(kWeirdName)},
                             {k::kProperties, {{"vendor", sanitize("Vendor\x01 \xc3\x28")}}}};
    return {{k::kName, name_}, {k::kStatus, "available"}, {k::kDevices, {device}}};
  }

 private:
  std::string kind_;
  std::string name_;
};

}  // namespace

bool is_test_backend_kind(std::string_view kind) {
  for (auto k : kKinds)
    if (k == kind) return true;
  return false;
}

std::unique_ptr<Backend> make_test_backend(std::string_view kind) {
  return std::make_unique<TestBackend>(kind);
}

}  // namespace gpucheck
