// gpucheck's own OpenCL GEMM (kernels/opencl_gemm.cl): the parameters of one build, which of
// them a device can run, and the space the tuner searches (seeds, random points, neighbours).
#pragma once

#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <compare>
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace gpucheck::opencl {

// The kernel's build-time parameters (their meaning is in kernels/opencl_gemm.cl).
struct GemmParams {
  unsigned mwg = 64, nwg = 64, kwg = 16;  // tile of C and slice of k per work-group
  unsigned mdim = 8, ndim = 8;            // work-group size along m and n
  unsigned vwm = 4, vwn = 4;              // runs of rows and columns an item owns
  unsigned kva = 1;                       // elements along k per load of A's slice (SA)
  unsigned pada = 0;                      // padding of A's staged rows (SA)
  bool sa = true, sb = true;              // stage A's / B's slice in local memory
  bool mfirst = false;                    // number work-groups down the columns first
  bool pf = false;                        // prefetch the next slice while computing (SA or SB)
  auto operator<=>(const GemmParams&) const = default;
};

// What the device allows, from clGetDeviceInfo.
struct GemmLimits {
  std::size_t max_work_group = 256;       // CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::size_t max_items[2] = {256, 256};  // CL_DEVICE_MAX_WORK_ITEM_SIZES[0..1]
  std::size_t local_mem_bytes = 32768;    // CL_DEVICE_LOCAL_MEM_SIZE
  bool cpu = false;                       // CL_DEVICE_TYPE_CPU: search where CPUs do well
};

// nullopt when the device can build and run p for dtype; else why not.
std::optional<std::string> invalid_reason(const GemmParams& p, const GemmLimits& limits,
                                          DType dtype);

// The clBuildProgram options of one build. b_transposed: op(B) = Bᵀ of a B stored n×k;
// edge: the build that checks indices (for shapes that are not multiples of the tile);
// aligned: vector_aligned() held, so runs of elements load and store as whole vectors.
std::string build_options(const GemmParams& p, DType dtype, bool b_transposed, bool edge,
                          bool aligned);

// The operands' leading dimensions and offsets (in elements) are multiples of the widths the
// kernel reads and writes them in (KVA for a staged A, VWN for B and C), so that each run starts
// on a boundary of its vector type (buffers themselves start on one: CL_DEVICE_MEM_BASE_ADDR_ALIGN
// is at least 128 bytes). Unaligned runs are read element by element, which on NVIDIA's OpenCL
// means one load instruction per element.
struct GemmOperandLayout {
  std::size_t lda = 0, a_off = 0, ldb = 0, b_off = 0, ldc = 0, c_off = 0;
};
bool vector_aligned(const GemmParams& p, bool b_transposed, const GemmOperandLayout& layout);

// Whether m, n and k are multiples of the tile (the build without index checks then serves).
bool fits_tiles(const GemmParams& p, std::size_t m, std::size_t n, std::size_t k);

struct GemmLaunch {
  std::size_t global[2] = {0, 0};
  std::size_t local[2] = {0, 0};
};
GemmLaunch launch_size(const GemmParams& p, std::size_t m, std::size_t n);

// Starting points of the search, for the device's class (CPU or not), valid for it.
std::vector<GemmParams> seeds(const GemmLimits& limits, DType dtype);
// The parameters the kernel runs with untuned (where the library cannot run the dtype).
GemmParams default_params(const GemmLimits& limits, DType dtype);
// A random valid point of the space, drawn where the device's class does well; nullopt when
// none was found (a device too small for any).
std::optional<GemmParams> sample(std::mt19937_64& rng, const GemmLimits& limits, DType dtype);
// Valid points one step away from p (one parameter, or two that must move together).
std::vector<GemmParams> neighbours(const GemmParams& p, const GemmLimits& limits, DType dtype);

nlohmann::json to_json(const GemmParams& p);
// nullopt (and *why) for anything but an object with every parameter as a known value.
std::optional<GemmParams> params_from_json(const nlohmann::json& j, std::string* why);
// "MWG=64 NWG=64 KWG=16 ..." for messages.
std::string describe(const GemmParams& p);

}  // namespace gpucheck::opencl
