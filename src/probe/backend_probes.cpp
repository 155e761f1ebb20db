// Parent and child halves of the isolated backend probe.
#include "probe/backend_probes.h"

#include "backends/probe_steps.h"
#include "backends/registry.h"
#include "core/concurrently.h"
#include "core/errors.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/json_keys_infiniband.h"
#include "core/sanitize.h"
#include "host/cpu_info.h"
#include "host/host_info.h"
#include "host/infiniband.h"
#include "host/memory_info.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpucheck::probe {

namespace k = keys;

namespace {

// The last non-empty line a child wrote to stderr: usually its own error message.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return {};
  std::size_t start = text.find_last_of('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return sanitize(text.substr(start, end - start + 1));
}

nlohmann::json failed_section(const std::string& name, const std::string& reason) {
  return {{k::kName, name}, {k::kStatus, "failed"}, {k::kReason, reason}};
}

nlohmann::json section_from_child(const std::string& name, const ChildResult& r,
                                  const ChildLimits& limits) {
  if (!r.exited_ok()) {
    std::string reason =
        fmt::format("probe child {}", r.describe(limits.timeout, limits.max_output));
    std::string tail = last_line(r.err);
    if (!tail.empty() && r.end != ChildResult::End::kOutputTooLarge) reason += ": " + tail;
    return failed_section(name, reason);
  }
  nlohmann::json section;
  try {
    section = parse_json_input(r.out, "probe child's output");
  } catch (const UsageError& e) {
    return failed_section(name, e.what());
  }
  if (!section.is_object())
    return failed_section(name, "probe child wrote JSON that is not an object");
  section[k::kName] = name;
  // The child's own step times are for -v, not the document.
  if (auto steps = section.find(kProbeStepsKey); steps != section.end()) {
    std::string text;
    if (steps->is_object())
      for (const auto& [step, seconds] : steps->items())
        if (seconds.is_number())
          text +=
              fmt::format("{}{} {:.3f} s", text.empty() ? "" : ", ", step, seconds.get<double>());
    spdlog::info("probe child {}: its steps: {}", name, text);
    section.erase(steps);
  }
  return section;
}

}  // namespace

nlohmann::json probe_backends(const EnvMap& env, const ChildLimits& limits) {
  auto names = active_backend_names(env);
  std::vector<ChildSpec> specs;
  for (const auto& n : names) specs.push_back({{"__child", "probe", "--backend", n}, {}});
  auto results = run_children(specs, limits);
  nlohmann::json sections = nlohmann::json::array();
  for (std::size_t i = 0; i < names.size(); ++i) {
    spdlog::info("probe child {}: {} in {:.3f} s", names[i],
                 results[i].describe(limits.timeout, limits.max_output), results[i].seconds);
    sections.push_back(section_from_child(names[i], results[i], limits));
    // A crashed, hung or failed probe: what more its backend can find out, if anything.
    if (sections.back().value(std::string(k::kStatus), "") == "failed")
      explain_failed_probe(names[i], sections.back(), env, limits);
  }
  for (const auto& [name, reason] : not_built_backends())
    sections.push_back({{k::kName, name}, {k::kStatus, "not_built"}, {k::kReason, reason}});
  return sections;
}

int run_probe_child(const std::string& backend, const EnvMap& env) {
  int result_fd = reserve_stdout_for_result();
  auto b = make_backend(backend, env);
  if (!b) throw UsageError(fmt::format("__child probe: no backend named '{}'", backend));
  nlohmann::json section = b->probe();
  write_all(result_fd, section.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return 0;
}

nlohmann::json probe_sections(const std::filesystem::path& root, const EnvMap& env,
                              const ChildLimits& limits, bool live_backends) {
  // The backend children start first: the files are read while the drivers initialise.
  auto backends = std::async(kConcurrently, [&] {
    return live_backends ? probe_backends(env, limits) : nlohmann::json::array();
  });
  nlohmann::json out = {{k::kHost, host::to_json(host::read_host_facts(root))},
                        {k::kCpu, host::to_json(host::read_cpu_facts(root))},
                        {k::kMemory, host::to_json(host::read_memory_facts(root))},
                        {k::kInfiniband, host::to_json(host::read_infiniband_facts(root))}};
  out[k::kBackends] = backends.get();
  return out;
}

}  // namespace gpucheck::probe
