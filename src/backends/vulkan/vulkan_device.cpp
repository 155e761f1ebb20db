// The Vulkan bench device: exp, GEMM, conv (NCHW as implicit GEMM, else im2col + GEMM) and the
// shaders (shaders/*.comp, SPIR-V embedded at build time), copies as vkCmdCopyBuffer, all on one
// in-order stream (vulkan_runtime.h). Device buffers are device-local; pinned host memory is a
// host-visible buffer the device copies from directly; pageable memory goes through staging.
#include "backends/vulkan/vulkan_device.h"

#include "backends/device_index.h"
#include "backends/pageable_host.h"
#include "backends/vulkan/coopmat_choice.h"
#include "backends/vulkan/gemm_config.h"
#include "backends/vulkan/gemm_tuning.h"
#include "backends/vulkan/vulkan_runtime.h"
#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"
#include "core/version.h"
#include "host/memory_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>

namespace gpucheck::vulkan {

namespace {

namespace k = keys;

// exp.comp and copy.comp: 256 invocations, each loading 4 vectors before it stores them.
constexpr std::uint32_t kStreamGroup = 256;
constexpr std::uint32_t kStreamUnroll = 4;
// On a CPU implementation each work group costs a fixed start-up on one thread: a few per core,
// each looping over many elements, beat one element per invocation.
constexpr std::uint32_t kStreamGroupsMaxCpu = 64;
// maxComputeWorkGroupCount[1] as every device has it (Capabilities keeps only [0]).
constexpr std::uint32_t kGroupsYMax = 65535;
constexpr std::uint32_t kGroupsZMax = 65535;  // maxComputeWorkGroupCount[2]'s least
// The work group of the grid-stride shader (im2col).
constexpr std::uint32_t kGridGroup = 256;
// Work groups of a grid-stride shader at most: enough to fill any GPU several times over.
constexpr std::uint32_t kGridGroupsMax = 16384;
// conv's column matrices at most, as OpenCL's: images go through im2col and the GEMM in chunks
// of this size (at least one image), so that a large batch needs no batch-sized scratch.
constexpr std::size_t kColBytesCap = std::size_t{256} << 20;
// Seconds of untimed work before a GPU's timed runs (and a tuning search): NVIDIA's driver
// raises an H200's clocks under Vulkan work only after about 0.3 s of it (a 5120 GEMM's first
// three runs at 24 ms, then 7.4; exp 2^29 at 2.5 ms, then 1.04) and lowers them in the idle
// gaps between cells, where CUDA holds them.
constexpr double kWarmupS = 1.0;
constexpr std::uint32_t kStressGroup = 256;
// The stress shaders' groups at most: the one-group fold reads this many partials.
constexpr std::size_t kStressGroupsMax = 4096;
// The largest side the GEMM tuner times (it starts at 128 and doubles while the defaults stay
// fast against its budget).
constexpr std::uint64_t kTuneSide = 2048;
constexpr std::uint64_t kTuneSideCpu = 256;
constexpr double kTuneBudgetS = 10;

class VkDeviceBuffer final : public DeviceBuffer {
 public:
  VkDeviceBuffer(std::shared_ptr<Runtime> rt, Allocation a) : rt_(std::move(rt)), a_(a) {}
  ~VkDeviceBuffer() override { rt_->release(a_); }
  VkDeviceBuffer(const VkDeviceBuffer&) = delete;
  VkDeviceBuffer& operator=(const VkDeviceBuffer&) = delete;
  std::size_t bytes() const override { return a_.bytes; }
  VkBuffer get() const { return a_.buffer; }

 private:
  std::shared_ptr<Runtime> rt_;
  Allocation a_;
};

VkBuffer buf(const DeviceBuffer& b) {
  return static_cast<const VkDeviceBuffer&>(b).get();
}

// Pinned host memory as Vulkan has it: a host-visible, mapped buffer.
class HostVisible final : public HostAllocation {
 public:
  HostVisible(std::shared_ptr<Runtime> rt, std::size_t bytes)
      : rt_(std::move(rt)), a_(rt_->allocate_host_visible(bytes)) {}
  ~HostVisible() override { rt_->release(a_); }
  HostVisible(const HostVisible&) = delete;
  HostVisible& operator=(const HostVisible&) = delete;
  void* data() override { return a_.mapped; }
  std::size_t bytes() const override { return a_.bytes; }

 private:
  std::shared_ptr<Runtime> rt_;
  Allocation a_;
};

std::uint32_t to_u32(std::uint64_t v, const char* what) {
  if (v > 0xFFFFFFFFu)
    throw std::overflow_error(fmt::format("{} {} exceeds the shaders' 32-bit indices", what, v));
  return static_cast<std::uint32_t>(v);
}

class VulkanDevice final : public Device, public GemmTuner, public StressOps {
 public:
  VulkanDevice(std::unique_ptr<Context> ctx, std::string device_id, std::size_t col_bytes_cap)
      : rt_(std::make_shared<Runtime>(std::move(ctx))), col_bytes_cap_(col_bytes_cap) {
    const nlohmann::json& d = rt_->context().description();
    const nlohmann::json& p = d.at(k::kProperties);
    identity_.device = std::move(device_id);
    identity_.backend = "vulkan";
    identity_.device_name = d.value(k::kDeviceName, "");
    identity_.device_uuid = d.value(k::kDeviceUuid, "");
    identity_.pci_bus_id = d.value(k::kPciBusId, "");
    context_ = {{"vulkan_api_version", p.value("api_version", "")},
                {"driver_version", p.value("driver_version", "")}};
    if (p.contains("driver_info")) context_["driver_info"] = p["driver_info"];
    cooperative_ = p.value(std::string(k::kCooperativeMatrix), nlohmann::json::object());
    // Test hook: the copy shader on a CPU implementation too, so that lavapipe tests it.
    const char* shader = std::getenv("GPUCHECK_TEST_VULKAN_COPY_SHADER");
    copy_shader_ = !rt_->caps().cpu || (shader != nullptr && *shader != '\0' && *shader != '0');
    coopmat_ = rt_->caps().coopmat_nv;
    // Test hook: another tile for the cooperative-matrix shader ("256x128x32"), to compare them.
    if (const char* tile = std::getenv("GPUCHECK_TEST_VULKAN_COOPMAT_TILE"); coopmat_ && tile) {
      std::string why;
      auto t = parse_coopmat_tile(tile, *coopmat_, &why);
      if (!t) throw std::invalid_argument("GPUCHECK_TEST_VULKAN_COOPMAT_TILE: " + why);
      const std::size_t shared =
          16 * (t->tile_m * (t->tile_k / 8 + 1) + t->tile_k * (t->tile_n / 8 + 1));
      if (shared > rt_->caps().max_shared_bytes)
        throw std::invalid_argument(fmt::format(
            "GPUCHECK_TEST_VULKAN_COOPMAT_TILE: tile {} needs {} bytes of shared memory, more "
            "than the device's {}",
            t->describe(), shared, rt_->caps().max_shared_bytes));
      coopmat_tile_ = *t;
    }
    // Test and experiment hook: NCHW conv as implicit GEMM (the default) or through a column
    // matrix, so that tests and the GPU runs reach both.
    if (const char* conv = std::getenv("GPUCHECK_TEST_VULKAN_CONV"); conv && *conv) {
      const std::string_view v = conv;
      if (v != "implicit" && v != "im2col")
        throw std::invalid_argument(
            fmt::format("GPUCHECK_TEST_VULKAN_CONV: '{}' is neither implicit nor im2col", v));
      conv_implicit_ = v == "implicit";
    }
  }

  const DeviceIdentity& identity() const override { return identity_; }
  bool is_host() const override { return false; }
  // An H200 through Vulkan stayed at 345–480 MHz for whole rounds of 25 ms GEMMs after a second
  // of verification on the host (a quarter of its speed); CUDA's clocks held at 1980 MHz over
  // the same gaps. A quarter second of work brings the clocks up first.
  double min_warmup_seconds() const override { return rt_->caps().cpu ? 0 : kWarmupS; }

  MemoryBudget memory_budget() const override {
    const auto& c = rt_->caps();
    return {static_cast<std::size_t>(c.device_local_heap / 4),
            static_cast<std::size_t>(c.max_allocation),
            fmt::format("a quarter of the device-local heap ({} of {} bytes); buffers up to "
                        "maxStorageBufferRange and maxMemoryAllocationSize ({} bytes)",
                        c.device_local_heap / 4, c.device_local_heap, c.max_allocation)};
  }

  std::optional<std::string> unsupported_reason(Op op, DType dtype, Layout layout) const override {
    (void)layout;
    if (dtype == DType::kFp8 && op != Op::kCopy && op != Op::kLatency)
      return std::string(
          "no FP8 shaders on the Vulkan backend: no FP8 GEMM here (fp8 runs through cuBLASLt on "
          "CUDA devices of compute capability 8.9 or newer)");
    switch (op) {
      case Op::kCopy:
      case Op::kLatency:
        return std::nullopt;
      case Op::kExp:
        if (dtype == DType::kF32) return std::nullopt;
        if (dtype == DType::kF16) {
          if (rt_->caps().float16) return std::nullopt;
          return fmt::format("the device lacks {}", rt_->caps().float16_missing);
        }
        return fmt::format("the Vulkan exp shader runs f32 and f16, not {}", to_string(dtype));
      case Op::kSeedloop:
        if (dtype != DType::kF32) return std::string("the seed loop is defined in f32");
        return std::nullopt;
      case Op::kGemm:
      case Op::kConv:
        if (dtype == DType::kF32) return std::nullopt;
        if (dtype == DType::kF16) {
          if (rt_->caps().float16) return std::nullopt;
          return fmt::format("the device lacks {}", rt_->caps().float16_missing);
        }
        return fmt::format("the Vulkan {} shaders run f32 and f16, not {}",
                           op == Op::kGemm ? "GEMM" : "conv (im2col and GEMM)", to_string(dtype));
      default:
        return std::string("unknown op");
    }
  }

  std::string impl(Op op, DType dtype) const override {
    (void)dtype;
    if (op == Op::kConv)
      return conv_implicit_ ? "implicit GEMM shader (NCHW), im2col + shader GEMM (NHWC)"
                            : "im2col + shader GEMM";
    if (op != Op::kCopy) return "shader";
    return copy_shader_ ? "vkCmdCopyBuffer to and from the host, a copy shader on the device"
                        : "vkCmdCopyBuffer";
  }

  // f16 exp, GEMM and conv compute in f32 and round once on store.
  std::string compute_type(Op op, DType dtype) const override {
    (void)op;
    return dtype == DType::kF16 ? "f32" : std::string(to_string(dtype));
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override {
    return std::make_unique<VkDeviceBuffer>(rt_, rt_->allocate(bytes, MemoryKind::kDeviceLocal));
  }

  std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) override {
    if (kind == HostMemory::kPageable) return std::make_unique<PageableHost>(bytes);
    return std::make_unique<HostVisible>(rt_, bytes);
  }

  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    rt_->upload(buf(dst), 0, src, bytes);
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    rt_->download(dst, buf(src), 0, bytes);
  }
  // On a GPU through copy.comp (see there why), the last bytes short of a 16-byte word by
  // vkCmdCopyBuffer; on a CPU implementation vkCmdCopyBuffer is its memcpy.
  void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    const std::size_t words = copy_shader_ ? bytes / 16 : 0;
    if (words > 0) {
      const std::uint32_t push[3] = {to_u32(words, "copy length in 16-byte words"), 0, 0};
      rt_->dispatch(Shader::kCopy, {stream_group(), stream_unroll()},
                    {buf(src), buf(dst), VK_NULL_HANDLE}, push, sizeof push, stream_groups(words));
    }
    rt_->copy(buf(dst), words * 16, buf(src), words * 16, bytes - words * 16);
  }

  void exp(DType dtype, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) override {
    if (n == 0) return;
    const std::uint32_t count = to_u32(n, "exp length");
    rt_->dispatch(dtype == DType::kF16 ? Shader::kExpF16 : Shader::kExpF32,
                  {stream_group(), stream_unroll()}, {buf(x), buf(y), VK_NULL_HANDLE}, &count,
                  sizeof count, stream_groups(count / (dtype == DType::kF16 ? 8 : 4)));
  }

  void gemm(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    if (dtype != DType::kF32 && dtype != DType::kF16)
      throw std::logic_error("GEMM dtype: unsupported_reason says no");
    if (s.m == 0 || s.n == 0) return;
    const std::uint32_t dims[3] = {to_u32(s.m, "GEMM m"), to_u32(s.n, "GEMM n"),
                                   to_u32(s.k, "GEMM k")};
    if (dtype == DType::kF16 && coopmat_ && coopmat_fits(s)) {
      gemm_path_ = fmt::format(
          "cooperative matrices (VK_NV_cooperative_matrix, {} f16·f16+f32, "
          "{} tiles)",
          coopmat_->describe(), coopmat_tile_.describe());
      rt_->dispatch(Shader::kGemmCoopmatNvF16,
                    {256, coopmat_->m, coopmat_->n, coopmat_->k, coopmat_tile_.tile_m,
                     coopmat_tile_.tile_n, coopmat_tile_.tile_k},
                    {buf(a), buf(b), buf(c)}, dims, sizeof dims,
                    {static_cast<std::uint32_t>(s.n / coopmat_tile_.tile_n),
                     static_cast<std::uint32_t>(s.m / coopmat_tile_.tile_m), 1});
      return;
    }
    if (dtype == DType::kF16 && coopmat_)
      gemm_path_ = fmt::format(
          "the tiled shader: cooperative matrices need m and n multiples "
          "of {} and {} and k of {}",
          coopmat_tile_.tile_m, coopmat_tile_.tile_n, coopmat_tile_.tile_k);
    run_gemm(dtype, one_gemm(s.m, s.n, s.k, s.k, s.n, s.n, false), buf(a), buf(b), buf(c));
  }

  // NCHW as implicit GEMM (conv_implicit below, no column matrix); otherwise im2col into a
  // scratch buffer, a chunk of images at a time, then as GEMM: NCHW a batch of one per image in
  // one dispatch, Y[n] (K × PQ) = W (K × CRS) · col[n] (CRS × PQ); NHWC one per chunk,
  // Y (images·PQ × K) = col (images·PQ × RSC) · Wᵀ. A 1×1 filter of stride 1 without padding
  // multiplies x itself in either layout.
  void conv2d(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    if (dtype != DType::kF32 && dtype != DType::kF16)
      throw std::logic_error("conv dtype: unsupported_reason says no");
    if (s.stride == 0 || s.h + 2 * s.pad < s.r || s.w + 2 * s.pad < s.s)
      throw std::invalid_argument("conv: zero stride or a filter larger than the padded input");
    // Every index the shaders compute stays below one of these counts.
    auto mul = [](std::uint32_t a, std::uint32_t b, const char* what) {
      return to_u32(std::uint64_t{a} * b, what);
    };
    const std::uint32_t N = to_u32(s.n, "conv N"), C = to_u32(s.c, "conv C"),
                        H = to_u32(s.h, "conv H"), W = to_u32(s.w, "conv W"),
                        K = to_u32(s.k, "conv K"), R = to_u32(s.r, "conv R"),
                        S = to_u32(s.s, "conv S"), stride = to_u32(s.stride, "conv stride"),
                        pad = to_u32(s.pad, "conv pad");
    to_u32(std::uint64_t{H} + 2 * std::uint64_t{pad}, "conv's padded height");
    to_u32(std::uint64_t{W} + 2 * std::uint64_t{pad}, "conv's padded width");
    const std::uint32_t P = to_u32(s.p(), "conv P"), Q = to_u32(s.q(), "conv Q");
    mul(mul(mul(N, C, "conv x's element count"), H, "conv x's element count"), W,
        "conv x's element count");
    const std::uint32_t pq = mul(P, Q, "conv's output positions per image");
    const std::uint32_t crs = mul(mul(C, R, "conv's taps"), S, "conv's taps");
    mul(K, crs, "conv w's element count");
    mul(mul(N, K, "conv y's element count"), pq, "conv y's element count");
    if (N == 0 || K == 0 || pq == 0) return;

    const std::size_t es = element_size(dtype);
    const bool nhwc = s.layout == Layout::kNhwc;
    // A 1×1 filter of stride 1 without padding reads x as it is: its column matrix is x.
    const bool direct = R == 1 && S == 1 && stride == 1 && pad == 0;
    // Taps rounded up to 4, zero past C·R·S, so that k and the leading dimensions suit the
    // 16-byte GEMM shader (a 7×7 filter on 3 channels has 147 taps).
    const std::uint32_t taps =
        direct ? crs : to_u32((std::uint64_t{crs} + 3) / 4 * 4, "conv's taps");
    const std::uint64_t per_image = std::uint64_t{taps} * pq;  // column elements
    // NCHW as implicit GEMM (unless the test hook asks for im2col) builds no column matrix.
    const bool implicit = !direct && !nhwc && conv_implicit_;
    std::uint64_t images = N;
    if (!direct && !implicit) {
      const std::uint64_t max_alloc = rt_->caps().max_allocation;
      if (per_image * es > max_alloc)
        throw std::overflow_error(fmt::format(
            "conv: one image's column matrix ({} bytes) exceeds the device's largest buffer ({} "
            "bytes)",
            per_image * es, max_alloc));
      const std::uint64_t cap = std::min<std::uint64_t>(col_bytes_cap_, max_alloc);
      images = std::clamp<std::uint64_t>(cap / std::max<std::uint64_t>(per_image * es, 1), 1, N);
    }
    if (nhwc) {
      // The chunk's GEMM has images·PQ rows: no more than its work groups can cover.
      // Either parameter set may run it (gemm_choice).
      GemmConfig general = default_gemm_config(limits());
      const std::uint64_t rows_max =
          std::uint64_t{kGroupsYMax} * std::min(gemm_config(dtype).block_m(), general.block_m());
      images = std::clamp<std::uint64_t>(rows_max / pq, 1, images);
    } else {
      images = std::min<std::uint64_t>(images, kGroupsZMax);  // one GEMM of the batch each
    }
    const Shader im2col = dtype == DType::kF16 ? Shader::kIm2colF16 : Shader::kIm2colF32;
    // W with its rows padded to `taps`: K images of one pixel with C·R·S channels, NHWC.
    VkBuffer wt = buf(w);
    if (taps != crs) {
      const std::uint32_t padded = mul(K, taps, "conv's padded filters");
      wt = scratch(w_padded_, std::size_t{padded} * es);
      const Grid g = grid(padded, "conv's padded filters");
      const std::uint32_t push[] = {0, K};
      rt_->dispatch(im2col, {g.group, 1, crs, 1, 1, 1, 1, 1, 1, 1, 0, taps},
                    {buf(w), wt, VK_NULL_HANDLE}, push, sizeof push, {g.groups, 1, 1});
    }
    if (implicit) {
      conv_implicit(dtype, {N, C, H, W, K, R, S, P, Q, stride, pad, taps}, wt, buf(x), buf(y));
      return;
    }
    VkBuffer col = buf(x);
    Grid g{};
    if (!direct) {
      const std::uint32_t col_elements = to_u32(images * per_image, "conv's column matrix");
      col = scratch(col_, std::size_t{col_elements} * es);
      g = grid(col_elements, "conv's column matrix");
    }
    for (std::uint32_t n0 = 0; n0 < N; n0 += static_cast<std::uint32_t>(images)) {
      const std::uint32_t count = std::min(static_cast<std::uint32_t>(images), N - n0);
      // The chunk's first column element: in x itself, or at the start of the scratch.
      std::uint64_t col_off = 0;
      if (direct) {
        col_off = std::uint64_t{n0} * per_image;
      } else {
        const std::uint32_t push[] = {n0, count};
        const std::uint32_t chunk_groups = std::min<std::uint64_t>(
            g.groups, (std::uint64_t{count} * per_image + g.group - 1) / g.group);
        rt_->dispatch(im2col, {g.group, nhwc ? 1u : 0u, C, H, W, R, S, P, Q, stride, pad, taps},
                      {buf(x), col, VK_NULL_HANDLE}, push, sizeof push, {chunk_groups, 1, 1});
      }
      if (nhwc) {
        GemmBlocks gb = one_gemm(std::uint64_t{count} * pq, K, taps, taps, taps, K, true);
        gb.a_off = col_off;
        gb.c_off = std::uint64_t{n0} * pq * K;
        run_gemm(dtype, gb, col, wt, buf(y));
      } else {
        GemmBlocks gb = one_gemm(K, pq, taps, taps, pq, pq, false);
        gb.b_off = col_off;
        gb.c_off = std::uint64_t{n0} * K * pq;
        gb.batch = count;
        gb.b_batch = per_image;
        gb.c_batch = std::uint64_t{K} * pq;
        run_gemm(dtype, gb, wt, col, buf(y));
      }
    }
    constexpr std::string_view kDirect = " (1×1, stride 1, no padding: on x itself, no im2col)";
    if (direct && !gemm_path_.ends_with(kDirect)) gemm_path_ += kDirect;
  }

  // conv2d's shape in the shaders' 32-bit terms, taps rounded up to 4.
  struct ConvDims {
    std::uint32_t n, c, h, w, k, r, s, p, q, stride, pad, taps;
  };

  // NCHW conv as one GEMM per image on shaders/conv_implicit.comp, which reads B's tiles from x
  // (no column matrix): Y[n] (K × PQ) = W (K × taps) · im2col(x[n]), all images in one dispatch
  // up to maxComputeWorkGroupCount[2]. conv2d has checked that every index fits 32 bits.
  void conv_implicit(DType dtype, const ConvDims& d, VkBuffer wt, VkBuffer x, VkBuffer y) {
    // The defaults' 64×64 tiles of 4×4 sums, not the GEMM's tuned set: each invocation also
    // holds its output positions' coordinates, so the tuned 128×128 tiles of 8×8 sums took 167
    // registers an invocation on an H200 and ran NCHW 3×3 at 17.3 TFLOP/s, the defaults 25.2
    // with 78 (7×7 stride 2 within 3 %; docs/PERFORMANCE.md). GPUCHECK_TEST_GEMM_PARAMS's set
    // runs where it is a 16-byte one (tm, tn, bk multiples of 4), so tests reach other tilings.
    const GemmConfig& forced = gemm_config(dtype);
    const std::uint32_t pq = d.p * d.q;
    const GemmConfig p = fitted_to(
        forced_gemm_.contains(dtype) && forced.vec4 ? forced : default_gemm_config(limits()), d.k,
        pq);
    // Its parameters are not the GEMM's tuned set the record's tuning lists: said here.
    gemm_path_ = fmt::format("implicit GEMM (no column matrix; {})", p.describe());
    const std::uint64_t gx = (pq + p.block_n() - 1) / p.block_n();
    const std::uint64_t gy = (d.k + p.block_m() - 1) / p.block_m();
    if (gx > rt_->caps().max_group_count_x || gy > kGroupsYMax)
      throw std::overflow_error(fmt::format(
          "implicit-GEMM conv of {} filters and {} output positions needs {}x{} work groups an "
          "image, beyond the device's maxComputeWorkGroupCount",
          d.k, pq, gx, gy));
    std::vector<std::uint32_t> constants = p.constants(false);
    constants.push_back(0);  // id 6: unused by the shader
    for (std::uint32_t v : {d.c, d.h, d.w, d.r, d.s, d.p, d.q, d.stride, d.pad, d.taps})
      constants.push_back(v);
    const Shader shader =
        dtype == DType::kF16 ? Shader::kConvImplicitF16 : Shader::kConvImplicitF32;
    const std::uint32_t x_batch = d.c * d.h * d.w, c_batch = d.k * pq;
    for (std::uint32_t n0 = 0; n0 < d.n; n0 += std::min(kGroupsZMax, d.n - n0)) {
      const std::uint32_t count = std::min(kGroupsZMax, d.n - n0);
      const std::uint32_t push[] = {d.k, n0 * x_batch, n0 * c_batch, x_batch, c_batch};
      rt_->dispatch(shader, constants, {wt, x, y}, push, sizeof push,
                    {static_cast<std::uint32_t>(gx), static_cast<std::uint32_t>(gy), count});
    }
  }

  void launch_empty() override {
    rt_->dispatch(Shader::kEmpty, {}, {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE}, nullptr, 0,
                  {1, 1, 1});
  }

  void synchronize() override { rt_->finish(); }

  double time_on_device(const std::function<void()>& enqueue) override {
    TimingSource source = TimingSource::kHostClock;
    const double s = rt_->timed(enqueue, &source);
    // A region mixing both says host: its figures include the CPU's copies.
    if (!region_timing_ || source == TimingSource::kHostClock) region_timing_ = source;
    return s;
  }

  void timed_region_begin(Op op, DType dtype) override {
    (void)op, (void)dtype;
    region_timing_.reset();
    gemm_path_.clear();
  }

  // The timing of the region just ended is said once, to the record that region made: the
  // engine also reads the context before a record's region, where the previous region's timing
  // would be stale (and a latency record, timed on the host by the engine, would inherit it).
  nlohmann::json context() const override {
    nlohmann::json c = context_;
    if (region_timing_) {
      const auto& caps = rt_->caps();
      c["timing"] = *region_timing_ == TimingSource::kTimestamps
                        ? fmt::format("timestamp queries ({} valid bits, {} ns a tick)",
                                      caps.timestamp_bits, caps.timestamp_period_ns)
                    : caps.timestamp_bits == 0
                        ? std::string("host clock: the compute queue has no timestamps")
                        : std::string(
                              "host clock: the transfer is staged through the CPU, "
                              "whose copies the device's timestamps do not see");
      region_timing_.reset();
    }
    if (!gemm_path_.empty()) {
      c["gemm_path"] = gemm_path_;
      gemm_path_.clear();
    }
    return c;
  }

  std::optional<GemmTuning> tune_gemm(DType dtype, const GemmTuningRequest& request,
                                      const GemmTrialFn& trial) override {
    if (dtype != DType::kF32 && dtype != DType::kF16) return std::nullopt;
    const auto& caps = rt_->caps();
    if (dtype == DType::kF16 && coopmat_) {
      // The shapes the cooperative-matrix shader fits have nothing to search; the others run
      // the tiled shader's defaults.
      GemmTuning t;
      t.state = "default";
      t.parameters = {{"impl", "cooperative_matrix"},
                      {"extension", "VK_NV_cooperative_matrix"},
                      {"shape", coopmat_->describe()},
                      {"tile", coopmat_tile_.describe()},
                      {"cooperative_matrix", "used"}};
      t.note = fmt::format(
          "the cooperative-matrix shader has no parameters to search; shapes whose m and n are "
          "not multiples of {} and {} or whose k is not a multiple of {} run the tiled shader "
          "with its defaults",
          coopmat_tile_.tile_m, coopmat_tile_.tile_n, coopmat_tile_.tile_k);
      return t;
    }
    GemmTuningTarget target;
    std::string driver = context_.value("driver_version", "");
    if (context_.contains("driver_info")) driver += " (" + context_["driver_info"].dump() + ")";
    target.identity = {identity_.device_uuid, identity_.device_name, driver, kVersion,
                       gemm_shaders_digest()};
    target.limits = limits();
    target.untuned = default_gemm_config(target.limits);
    target.shape = tuning_shape(dtype);
    target.default_budget_s = kTuneBudgetS;
    target.search_only_when_asked = caps.cpu;
    target.warmup_s = min_warmup_seconds();
    target.use = [this, dtype](const GemmConfig& p) { gemm_[dtype] = p; };
    GemmTuning t = choose_gemm_config(dtype, target, request, trial);
    if (!request.forced_parameters.empty()) forced_gemm_.insert(dtype);
    // Every GEMM record says whether the cooperative-matrix path was there to take.
    t.parameters["cooperative_matrix"] =
        cooperative_.value(std::string(k::kOffered), false) && dtype == DType::kF16
            ? fmt::format("offered; not used: {}", caps.coopmat_why)
        : cooperative_.value(std::string(k::kOffered), false)
            ? std::string("offered; not used: the cooperative-matrix shader runs f16")
            : cooperative_.value("detail", std::string());
    return t;
  }

  GemmTuner* gemm_tuner() override { return this; }
  StressOps* stress_ops() override { return this; }

  // ---- StressOps ----
  MemoryInfo memory_info() const override {
    const auto& c = rt_->caps();
    MemoryInfo m;
    m.total_bytes = c.device_local_heap;
    m.max_allocation = c.max_allocation;
    m.host_memory = c.cpu;
    if (c.cpu) {
      auto mem = host::read_memory_facts("/");
      m.free_bytes = std::min<std::uint64_t>(c.device_local_heap,
                                             mem.available_bytes.value_or(c.device_local_heap));
      m.source = "MemAvailable (/proc/meminfo), a CPU device";
    } else {
      m.free_bytes = c.device_local_heap;
      m.source = "the device-local heap's size (Vulkan core cannot say what is free)";
    }
    return m;
  }
  void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                 std::size_t bytes) override {
    check_buffer_range(dst, offset, bytes);
    rt_->upload(buf(dst), offset, src, bytes);
  }
  void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                   std::size_t bytes) override {
    check_buffer_range(src, offset, bytes);
    rt_->download(dst, buf(src), offset, bytes);
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                std::size_t slot) override {
    check_buffer_range(src, 0, words * 8);
    check_buffer_range(sums, slot * 8, 8);
    const std::uint32_t groups = stress_groups(words);
    const VkBuffer parts = partials(std::size_t{groups} * 8);
    stress(0, groups, {buf(src), parts, parts}, {words, 0, 0, 0, 0, 0});
    stress(1, 1, {parts, parts, buf(sums)}, {groups, slot, 0, 0, 0, 0});
  }
  void memtest(DeviceBuffer& words_buf, std::size_t words, std::uint64_t first_word,
               MemPattern check, MemPattern write, DeviceBuffer& result) override {
    check_buffer_range(words_buf, 0, words * 8);
    check_buffer_range(result, 0, 16);
    const std::uint32_t groups = stress_groups(words);
    const VkBuffer parts = partials(std::size_t{groups} * 16);
    stress(2, groups, {buf(words_buf), parts, parts},
           {words, first_word, check.param, write.param, static_cast<std::uint32_t>(check.kind),
            static_cast<std::uint32_t>(write.kind)});
    stress(3, 1, {parts, parts, buf(result)}, {groups, 0, 0, 0, 0, 0});
  }

 private:
  // A GEMM on blocks of buffers: each matrix starts at an element offset, its rows ld elements
  // apart; b_transposed: B is stored n×k.
  // A batch of `batch` GEMMs (one dispatch, the z work groups), the j-th's matrices
  // j·a_batch, j·b_batch and j·c_batch elements after the first's.
  struct GemmBlocks {
    std::uint64_t m, n, k;
    std::uint64_t a_off, lda, b_off, ldb, c_off, ldc;
    bool b_transposed;
    std::uint64_t batch, a_batch, b_batch, c_batch;
  };
  static GemmBlocks one_gemm(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint64_t lda,
                             std::uint64_t ldb, std::uint64_t ldc, bool b_transposed) {
    return {m, n, k, 0, lda, 0, ldb, 0, ldc, b_transposed, 1, 0, 0, 0};
  }

  // The parameters a block runs with: the dtype's tuned set (fitted to a thin block), on the
  // 16-byte shader where the block allows it. A set tuned for that shader (8×8 sums, 128-wide
  // tiles) is far too heavy for the general one (conv at a tenth of its speed on an H200), so a
  // block that cannot take 16-byte loads runs the defaults on the general shader instead.
  struct GemmChoice {
    GemmConfig p;
    bool vec4;
  };
  GemmChoice gemm_choice(DType dtype, const GemmBlocks& g) {
    const GemmConfig& tuned = gemm_config(dtype);
    if (!tuned.vec4) return {tuned, false};
    if (gemm_vec4_fits(g)) return {fitted_to(tuned, g.m, g.n), true};
    GemmConfig general = default_gemm_config(limits());
    general.vec4 = 0;
    return {general, false};
  }

  // Refuses a block whose last element lies beyond the shader's 32-bit indices.
  void run_gemm(DType dtype, const GemmBlocks& g, VkBuffer a, VkBuffer b, VkBuffer c) {
    if (g.m == 0 || g.n == 0 || g.batch == 0) return;
    const auto [p, vec4] = gemm_choice(dtype, g);
    if (gemm_path_.empty())
      gemm_path_ = vec4 ? "the tiled shader, 16-byte loads"
                   : gemm_config(dtype).vec4
                       ? fmt::format("the tiled shader ({}: the block does not fit 16-byte loads)",
                                     p.describe())
                       : std::string("the tiled shader");
    // One past the last element each matrix reaches, in the batch's last GEMM.
    const std::uint64_t last = g.batch - 1;
    const std::uint64_t a_end = g.a_off + last * g.a_batch + (g.m - 1) * g.lda + g.k;
    const std::uint64_t b_end = g.k == 0 ? g.b_off
                                : g.b_transposed
                                    ? g.b_off + last * g.b_batch + (g.n - 1) * g.ldb + g.k
                                    : g.b_off + last * g.b_batch + (g.k - 1) * g.ldb + g.n;
    const std::uint64_t c_end = g.c_off + last * g.c_batch + (g.m - 1) * g.ldc + g.n;
    const std::uint32_t push[] = {to_u32(g.m, "GEMM m"),
                                  to_u32(g.n, "GEMM n"),
                                  to_u32(g.k, "GEMM k"),
                                  to_u32(g.a_off, "GEMM A's offset"),
                                  to_u32(g.b_off, "GEMM B's offset"),
                                  to_u32(g.c_off, "GEMM C's offset"),
                                  to_u32(g.lda, "GEMM lda"),
                                  to_u32(g.ldb, "GEMM ldb"),
                                  to_u32(g.ldc, "GEMM ldc"),
                                  to_u32(g.a_batch, "GEMM A's batch stride"),
                                  to_u32(g.b_batch, "GEMM B's batch stride"),
                                  to_u32(g.c_batch, "GEMM C's batch stride")};
    to_u32(a_end, "GEMM A's element count");
    to_u32(b_end, "GEMM B's element count");
    to_u32(c_end, "GEMM C's element count");
    const std::uint64_t gx = (g.n + p.block_n() - 1) / p.block_n();
    const std::uint64_t gy = (g.m + p.block_m() - 1) / p.block_m();
    if (gx > rt_->caps().max_group_count_x || gy > kGroupsYMax || g.batch > kGroupsZMax)
      throw std::overflow_error(
          fmt::format("GEMM {}x{} (a batch of {}) needs {}x{}x{} work groups, beyond the "
                      "device's maxComputeWorkGroupCount",
                      g.m, g.n, g.batch, gx, gy, g.batch));
    const Shader shader = dtype == DType::kF16 ? (vec4 ? Shader::kGemmVec4F16 : Shader::kGemmF16)
                                               : (vec4 ? Shader::kGemmVec4F32 : Shader::kGemmF32);
    rt_->dispatch(shader, p.constants(g.b_transposed), {a, b, c}, push, sizeof push,
                  {static_cast<std::uint32_t>(gx), static_cast<std::uint32_t>(gy),
                   static_cast<std::uint32_t>(g.batch)});
  }

  // shaders/gemm_vec4.comp reads whole 16-byte vectors of A (and Bᵀ) along k and of B along n,
  // and writes C's: every offset, batch stride, leading dimension, k and n a multiple of 4.
  static bool gemm_vec4_fits(const GemmBlocks& g) {
    for (std::uint64_t v : {g.k, g.n, g.a_off, g.lda, g.b_off, g.ldb, g.c_off, g.ldc, g.a_batch,
                            g.b_batch, g.c_batch})
      if (v % 4 != 0) return false;
    return true;
  }

  // A grid-stride shader's work group and group count for `count` elements. The shader's loop
  // index must not wrap past 2^32 on its last step.
  struct Grid {
    std::uint32_t group, groups;
  };
  Grid grid(std::uint32_t count, const char* what) const {
    const auto& c = rt_->caps();
    const std::uint32_t group = std::min({kGridGroup, c.max_group_x, c.max_group_invocations});
    const std::uint32_t groups =
        std::max(1u, std::min({(count + group - 1) / group,
                               c.cpu ? kStreamGroupsMaxCpu : kGridGroupsMax, c.max_group_count_x}));
    to_u32(std::uint64_t{count} + std::uint64_t{group} * groups, what);
    return {group, groups};
  }

  // shaders/stress.comp's push constants, in its std430 layout.
  struct StressPush {
    std::uint64_t n, first, check_param, write_param;
    std::uint32_t check_kind, write_kind;
  };
  static_assert(sizeof(StressPush) == 40, "shaders/stress.comp's push constants");

  // exp.comp's and copy.comp's work group.
  std::uint32_t stream_group() const {
    const auto& c = rt_->caps();
    return std::min({kStreamGroup, c.max_group_x, c.max_group_invocations});
  }
  // Experiment hook GPUCHECK_TEST_VULKAN_STREAM_UNROLL=N (1 to 16): another unroll.
  static std::uint32_t stream_unroll() {
    static const std::uint32_t u = [] {
      const char* v = std::getenv("GPUCHECK_TEST_VULKAN_STREAM_UNROLL");
      const int n = v != nullptr ? std::atoi(v) : 0;
      return n >= 1 && n <= 16 ? static_cast<std::uint32_t>(n) : kStreamUnroll;
    }();
    return u;
  }
  // Their groups, numbered over x and y: one per kStreamUnroll vectors of each invocation on a
  // GPU, a few on a CPU implementation; the shaders loop over what the groups do not cover.
  std::array<std::uint32_t, 3> stream_groups(std::uint64_t vectors) const {
    const auto& c = rt_->caps();
    const std::uint64_t per_group = std::uint64_t{stream_group()} * stream_unroll();
    std::uint64_t need = std::max<std::uint64_t>(1, (vectors + per_group - 1) / per_group);
    if (c.cpu) need = std::min<std::uint64_t>(need, kStreamGroupsMaxCpu);
    // Experiment hook GPUCHECK_TEST_VULKAN_STREAM_GROUPS=N: at most N groups, which then loop.
    static const std::uint64_t cap = [] {
      const char* v = std::getenv("GPUCHECK_TEST_VULKAN_STREAM_GROUPS");
      const long long n = v != nullptr ? std::atoll(v) : 0;
      return n > 0 ? static_cast<std::uint64_t>(n) : std::uint64_t{0};
    }();
    if (cap > 0) need = std::min(need, cap);
    const std::uint64_t x = std::min<std::uint64_t>(need, c.max_group_count_x);
    const std::uint64_t y = std::min<std::uint64_t>((need + x - 1) / x, kGroupsYMax);
    return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), 1};
  }

  // The stress shader's work group: a power of two up to 256 the device allows.
  std::uint32_t stress_group() const {
    const auto& c = rt_->caps();
    std::uint32_t wg = 1;
    while (wg * 2 <= std::min({kStressGroup, c.max_group_x, c.max_group_invocations})) wg *= 2;
    return wg;
  }
  std::uint32_t stress_groups(std::size_t words) const {
    const std::size_t wg = stress_group();
    return static_cast<std::uint32_t>(
        std::clamp<std::size_t>((words + wg - 1) / wg, 1, kStressGroupsMax));
  }

  // Unused bindings name a valid buffer too: before specialization every mode reaches them.
  void stress(std::uint32_t mode, std::uint32_t groups, const Bindings& bindings,
              const StressPush& push) {
    if (!rt_->caps().int64)
      throw std::runtime_error("the device lacks shaderInt64, which the stress shaders need");
    rt_->dispatch(Shader::kStress, {stress_group(), mode}, bindings, &push, sizeof push,
                  {groups, 1, 1});
  }

  // The per-group results of the stress shaders, grown to at least `bytes`.
  VkBuffer partials(std::size_t bytes) { return scratch(partials_, bytes); }

  // A scratch buffer kept between calls, grown to at least `bytes`.
  VkBuffer scratch(std::unique_ptr<DeviceBuffer>& b, std::size_t bytes) {
    if (!b || b->bytes() < bytes) {
      b.reset();
      b = allocate(bytes);
    }
    return buf(*b);
  }

  // The cooperative-matrix shader has no edges: the tile divides m and n and k, and every index
  // stays within 32 bits.
  bool coopmat_fits(const GemmShape& s) const {
    const CoopmatTile& t = coopmat_tile_;
    constexpr std::uint64_t kMax = 0xFFFFFFFFu;
    return s.m % t.tile_m == 0 && s.n % t.tile_n == 0 && s.k > 0 && s.k % t.tile_k == 0 &&
           s.m * s.n <= kMax && s.m * s.k <= kMax && s.k * s.n <= kMax &&
           s.n / t.tile_n <= rt_->caps().max_group_count_x && s.m / t.tile_m <= kGroupsYMax;
  }

  // What the dtype's GEMM runs: tune_gemm's choice, else the defaults.
  const GemmConfig& gemm_config(DType dtype) {
    auto it = gemm_.find(dtype);
    if (it == gemm_.end()) it = gemm_.emplace(dtype, default_gemm_config(limits())).first;
    return it->second;
  }

  // Square, at most kTuneSide(Cpu), three matrices within the memory budget.
  GemmShape tuning_shape(DType dtype) const {
    std::uint64_t side = rt_->caps().cpu ? kTuneSideCpu : kTuneSide;
    const MemoryBudget budget = memory_budget();
    while (side > 256 && (3 * side * side * element_size(dtype) > budget.max_total ||
                          side * side * element_size(dtype) > budget.max_allocation))
      side /= 2;
    return {side, side, side};
  }

  GemmLimits limits() const {
    const auto& c = rt_->caps();
    return {c.max_group_x, c.max_group_invocations, c.max_shared_bytes};
  }

  std::shared_ptr<Runtime> rt_;
  std::size_t col_bytes_cap_;  // kColBytesCap, or the test hook's
  DeviceIdentity identity_;
  nlohmann::json context_;
  std::map<DType, GemmConfig> gemm_;                   // tune_gemm's choice per dtype
  mutable std::optional<TimingSource> region_timing_;  // see context()
  nlohmann::json cooperative_;                         // the probe's cooperative-matrix summary
  bool copy_shader_ = false;                           // device-to-device copies by copy.comp
  std::optional<CoopmatShape> coopmat_;                // f16 GEMM on cooperative matrices
  CoopmatTile coopmat_tile_;
  mutable std::string gemm_path_;           // see context()
  std::unique_ptr<DeviceBuffer> partials_;  // after rt_: released before it
  std::unique_ptr<DeviceBuffer> col_;       // conv's column matrices, likewise
  std::unique_ptr<DeviceBuffer> w_padded_;  // conv's filters with their taps padded to 4
  // NCHW conv as implicit GEMM rather than im2col (GPUCHECK_TEST_VULKAN_CONV=im2col: false).
  // On an H200 it ran f32 3×3 at 1.46× and 7×7 stride 2 at 1.28× im2col's speed, f16 1.44×
  // and 1.40×, building no column matrix (docs/PERFORMANCE.md).
  bool conv_implicit_ = true;
  std::set<DType> forced_gemm_;  // dtypes whose GEMM set GPUCHECK_TEST_GEMM_PARAMS gave
};

}  // namespace

std::unique_ptr<Device> make_vulkan_device(const std::string& device_id,
                                           const DeviceOptions& options) {
  (void)options;
  const auto index = flat_device_index(device_id, "vulkan");
  if (!index) return nullptr;
  // Test hook: the device is treated as lacking shaderFloat16.
  const char* hide = std::getenv("GPUCHECK_TEST_VULKAN_NO_FLOAT16");
  // Test hook: conv's column matrices at most this many bytes, so that small shapes run in chunks.
  std::size_t col_bytes_cap = kColBytesCap;
  if (const char* cap = std::getenv("GPUCHECK_TEST_VULKAN_COL_BYTES"); cap != nullptr && *cap) {
    const char* end = cap + std::strlen(cap);
    const auto [ptr, ec] = std::from_chars(cap, end, col_bytes_cap);
    if (ec != std::errc() || ptr != end || col_bytes_cap == 0)
      throw std::invalid_argument(
          fmt::format("GPUCHECK_TEST_VULKAN_COL_BYTES: '{}' is not a positive byte count", cap));
  }
  auto ctx = Context::open(*index, hide != nullptr && *hide != '\0' && *hide != '0');
  if (!ctx) return nullptr;
  return std::make_unique<VulkanDevice>(std::move(ctx), device_id, col_bytes_cap);
}

}  // namespace gpucheck::vulkan
