// Local LLM runtimes found from their files: ollama (its binary and lib/ollama with one folder
// of ggml backends per runner: cuda_v12, cuda_v13, rocm, vulkan) and llama.cpp (its
// libggml-<backend>.so files beside its binaries or in the library folders), each backend
// library with what its ELF header says it needs, and the environment ollama's systemd unit
// gives the server.
#pragma once

#include "host/elf_dynamic.h"
#include "host/host_view.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::host {

struct GgmlBackend {
  std::string path;    // /usr/local/lib/ollama/cuda_v12/libggml-cuda.so
  std::string kind;    // cuda, hip, vulkan, sycl, opencl, musa, cann, cpu, blas, rpc, ...
  std::string runner;  // ollama's runner folder ("cuda_v12"); empty for llama.cpp
  std::optional<ElfDynamic> elf;  // nullopt: not a readable ELF library
  bool gpu() const;
};

struct LlmRuntime {
  std::string name;                   // "ollama" or "llama.cpp"
  std::string lib_dir;                // /usr/local/lib/ollama, or the folder of the backends
  std::vector<std::string> binaries;  // /usr/local/bin/ollama, .../llama-server
  std::vector<GgmlBackend> backends;
  std::string service_unit;                        // ollama.service and its drop-ins, if any
  std::map<std::string, std::string> service_env;  // their Environment= settings
};

std::vector<LlmRuntime> find_llm_runtimes(const HostView& view);

// systemd's Environment= values of a unit file's text ("A=1" "B=two words" C=3), in order;
// later assignments win.
std::map<std::string, std::string> unit_environment(const std::string& unit_text);

}  // namespace gpucheck::host
