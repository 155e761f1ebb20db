// The OpenCL bench device: one in-order profiling queue; exp, im2col and GEMM from kernels/*.cl
// (built once per element type and parameters), CLBlast's GEMM as the untuned default, and
// device time from profiling events. The OpenCL objects it runs on are owned by a ClSession and
// cl_handles.h's handles; this file holds the operations.
#include "backends/opencl/opencl_device.h"

#include "backends/device_index.h"
#include "backends/opencl/cl_errors.h"
#include "backends/opencl/cl_session.h"
#include "backends/opencl/clblast_library.h"
#include "backends/opencl/gemm_choice.h"
#include "backends/opencl/opencl_library.h"
#include "backends/opencl/opencl_probe.h"
#include "backends/pageable_host.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "core/sanitize.h"
#include "core/version.h"
#include "host/memory_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

// Kernel sources, embedded at build time (cmake/GpucheckEmbed.cmake).
extern const unsigned char gpucheck_kernel_opencl_exp[];
extern const unsigned long long gpucheck_kernel_opencl_exp_size;
extern const unsigned char gpucheck_kernel_opencl_gemm[];
extern const unsigned long long gpucheck_kernel_opencl_gemm_size;
extern const unsigned char gpucheck_kernel_opencl_im2col[];
extern const unsigned long long gpucheck_kernel_opencl_im2col_size;
extern const unsigned char gpucheck_kernel_opencl_stress[];
extern const unsigned long long gpucheck_kernel_opencl_stress_size;

namespace gpucheck::opencl {

namespace {

namespace k = keys;

constexpr std::size_t kWorkGroup = 256;
// Work items per compute unit for the grid-stride exp: enough to fill an SM (2048 threads) or
// a CPU core's work-group loop several times over.
constexpr std::size_t kItemsPerComputeUnit = 2048;
// The im2col scratch matrix is made for as many images at once as fit in this.
constexpr std::size_t kColBytesCap = std::size_t{256} << 20;
constexpr cl_half kHalfOne = 0x3C00;
constexpr cl_half kHalfZero = 0x0000;
// Default search budgets per dtype (--tune-budget overrides): less on a CPU implementation, where
// each GEMM takes longer and the budget is paid again on every driver update. A CPU device is
// still searched by default: CLBlast's defaults ran pocl's f32 GEMM 512³ at 15.4 GFLOP/s on the
// 2-core development VM, and a 5 s search found a kernel at 225 (docs/PERFORMANCE.md), which
// the cache then keeps, so the first bench is not even slower than an untuned one.
constexpr double kTuneBudgetS = 45;
constexpr double kTuneBudgetCpuS = 5;
// The tuning shape: a multiple of every tile of the space, large enough to fill a GPU; smaller
// on CPUs, where the search would otherwise time few candidates.
constexpr std::uint64_t kTuneSide = 4096;
constexpr std::uint64_t kTuneSideCpu = 1024;

class ClBuffer final : public DeviceBuffer {
 public:
  ClBuffer(ClMem mem, std::size_t bytes) : mem_(std::move(mem)), bytes_(bytes) {}
  std::size_t bytes() const override { return bytes_; }
  cl_mem get() const { return mem_.get(); }

 private:
  ClMem mem_;
  std::size_t bytes_;
};

cl_mem mem(const DeviceBuffer& b) {
  return static_cast<const ClBuffer&>(b).get();
}

// Pinned host memory as OpenCL offers it: a CL_MEM_ALLOC_HOST_PTR buffer, mapped for as long as
// it lives; transfers from its pointer run at DMA speed on drivers that recognise it (NVIDIA's
// oclBandwidthTest method).
class PinnedHost final : public HostAllocation {
 public:
  PinnedHost(const OpenClLibrary& lib, std::shared_ptr<ClSession> session, std::size_t bytes)
      : lib_(lib), session_(std::move(session)), bytes_(bytes) {
    const std::size_t size = std::max<std::size_t>(bytes, 1);
    mem_ = create_buffer(lib, session_->context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size);
    cl_int err = CL_SUCCESS;
    ptr_ = lib.clEnqueueMapBuffer(session_->queue(), mem_.get(), CL_TRUE,
                                  CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) throw_cl_error(err, "clEnqueueMapBuffer", __FILE__, __LINE__);
  }
  ~PinnedHost() override {
    GC_CL_CHECK_NOTHROW(
        lib_.clEnqueueUnmapMemObject(session_->queue(), mem_.get(), ptr_, 0, nullptr, nullptr));
    GC_CL_CHECK_NOTHROW(lib_.clFinish(session_->queue()));
  }
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  void* data() override { return ptr_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  const OpenClLibrary& lib_;
  std::shared_ptr<ClSession> session_;
  ClMem mem_;
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// The text of an embedded kernel source (kernels/<source>).
std::string_view kernel_source(const std::string& source) {
  const auto text = [](const unsigned char* t, unsigned long long size) {
    return std::string_view(reinterpret_cast<const char*>(t), static_cast<std::size_t>(size));
  };
  if (source == "opencl_exp.cl")
    return text(gpucheck_kernel_opencl_exp, gpucheck_kernel_opencl_exp_size);
  if (source == "opencl_stress.cl")
    return text(gpucheck_kernel_opencl_stress, gpucheck_kernel_opencl_stress_size);
  if (source == "opencl_gemm.cl")
    return text(gpucheck_kernel_opencl_gemm, gpucheck_kernel_opencl_gemm_size);
  return text(gpucheck_kernel_opencl_im2col, gpucheck_kernel_opencl_im2col_size);
}

std::size_t round_up(std::size_t v, std::size_t to) {
  return (v + to - 1) / to * to;
}

// Codes after which the context may be unusable: the next cell gets a fresh one.
bool leaves_context_unusable(long long code) {
  return code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES ||
         code == CL_OUT_OF_HOST_MEMORY || code == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
}

template <typename T>
T device_info(const OpenClLibrary& lib, cl_device_id d, cl_device_info what) {
  T v{};
  GC_CL_CHECK(lib.clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
  return v;
}

std::string device_string(const OpenClLibrary& lib, cl_device_id d, cl_device_info what) {
  std::size_t size = 0;
  GC_CL_CHECK(lib.clGetDeviceInfo(d, what, 0, nullptr, &size));
  std::vector<char> buf(size + 1, '\0');
  if (size > 0) GC_CL_CHECK(lib.clGetDeviceInfo(d, what, size, buf.data(), nullptr));
  return sanitize_c_buffer(buf.data(), size);
}

std::string platform_name(const OpenClLibrary& lib, cl_platform_id p) {
  std::size_t size = 0;
  GC_CL_CHECK(lib.clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, nullptr, &size));
  std::vector<char> buf(size + 1, '\0');
  if (size > 0) GC_CL_CHECK(lib.clGetPlatformInfo(p, CL_PLATFORM_NAME, size, buf.data(), nullptr));
  return sanitize_c_buffer(buf.data(), size);
}

// What the GEMM kernel's parameters must fit on this device.
GemmLimits gemm_limits(const OpenClLibrary& lib, cl_device_id d) {
  GemmLimits l;
  l.max_work_group = device_info<std::size_t>(lib, d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  cl_uint dims = device_info<cl_uint>(lib, d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  std::vector<std::size_t> items(std::max<cl_uint>(dims, 2), 1);
  GC_CL_CHECK(lib.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t),
                                  items.data(), nullptr));
  l.max_items[0] = items[0];
  l.max_items[1] = items[1];
  l.local_mem_bytes =
      static_cast<std::size_t>(device_info<cl_ulong>(lib, d, CL_DEVICE_LOCAL_MEM_SIZE));
  l.cpu = (device_info<cl_device_type>(lib, d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  return l;
}

// What one timed enqueue recorded: kernels and transfers give their own span; a marker before a
// CLBlast call (which may enqueue several kernels and returns only the last one's event) gives
// the time the call's work could start.
struct Recorded {
  ClEvent event;
  bool marker = false;
};

class OpenClDevice final : public Device, public GemmTuner, public StressOps {
 public:
  OpenClDevice(std::unique_ptr<OpenClLibrary> lib, cl_platform_id platform, cl_device_id device,
               std::string device_id)
      : lib_(std::move(lib)), platform_(platform), device_(device) {
    const OpenClLibrary& L = *lib_;
    const nlohmann::json props = device_properties(L, device);
    identity_.device = std::move(device_id);
    identity_.backend = "opencl";
    identity_.device_name = device_string(L, device, CL_DEVICE_NAME);
    identity_.pci_bus_id = pci_bus_id_of(props);
    if (auto it = props.find("cl_device_uuid_khr"); it != props.end() && it->is_string())
      identity_.device_uuid = it->get<std::string>();
    std::istringstream ext(device_string(L, device, CL_DEVICE_EXTENSIONS));
    std::set<std::string, std::less<>> extensions;
    for (std::string e; ext >> e;) extensions.insert(e);
    fp64_ = extensions.contains("cl_khr_fp64");
    fp16_ = extensions.contains("cl_khr_fp16");
    global_mem_ = device_info<cl_ulong>(L, device, CL_DEVICE_GLOBAL_MEM_SIZE);
    max_alloc_ = device_info<cl_ulong>(L, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    compute_units_ = device_info<cl_uint>(L, device, CL_DEVICE_MAX_COMPUTE_UNITS);
    host_memory_ =
        (device_info<cl_device_type>(L, device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
    max_work_group_ = device_info<std::size_t>(L, device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    context_ = {{"opencl_version", device_string(L, device, CL_DEVICE_VERSION)},
                {"driver_version", device_string(L, device, CL_DRIVER_VERSION)}};
    platform_name_ = platform_name(L, platform);
    limits_ = gemm_limits(L, device);
    session_ = make_session();
    // CLBlast missing or broken: GEMM and conv run gpucheck's kernel untuned as well.
    clblast_ = ClblastLibrary::open(&clblast_error_);
    if (clblast_) context_["clblast"] = clblast_->path();
  }

  ~OpenClDevice() override {
    release_events();
    if (session_) GC_CL_CHECK_NOTHROW(lib_->clFinish(session_->queue()));
  }
  OpenClDevice(const OpenClDevice&) = delete;
  OpenClDevice& operator=(const OpenClDevice&) = delete;

  const DeviceIdentity& identity() const override { return identity_; }
  bool is_host() const override { return false; }

  MemoryBudget memory_budget() const override {
    return {static_cast<std::size_t>(global_mem_ / 4), static_cast<std::size_t>(max_alloc_),
            fmt::format("a quarter of global memory ({} of {} bytes); buffers up to "
                        "CL_DEVICE_MAX_MEM_ALLOC_SIZE ({} bytes)",
                        global_mem_ / 4, global_mem_, max_alloc_)};
  }

  std::optional<std::string> unsupported_reason(Op op, DType dtype, Layout layout) const override {
    (void)layout;
    if (op == Op::kCopy || op == Op::kLatency) return std::nullopt;
    if (dtype == DType::kFp8)
      return std::string(
          "OpenCL has no FP8 arithmetic: no FP8 GEMM here (fp8 runs through cuBLASLt on CUDA "
          "devices of compute capability 8.9 or newer)");
    if (dtype == DType::kTf32 || dtype == DType::kBf16)
      return fmt::format("OpenCL has no {} arithmetic", gpucheck::to_string(dtype));
    if (dtype == DType::kF64 && !fp64_) return std::string("the device lacks cl_khr_fp64");
    switch (op) {
      case Op::kExp:
        return std::nullopt;  // f16 is stored through vload_half/vstore_half: no extension
      case Op::kSeedloop:
        if (dtype != DType::kF32) return std::string("the seed loop is defined in f32");
        return std::nullopt;
      case Op::kGemm:
      case Op::kConv:
        return std::nullopt;  // gpucheck's kernel runs every dtype here; CLBlast where it can
      default:
        return std::string("unknown op");
    }
  }

  std::string impl(Op op, DType dtype) const override {
    switch (op) {
      case Op::kGemm:
        return gemm_run(dtype) ? "kernel" : "clblast";
      case Op::kConv:
        return gemm_run(dtype) ? "im2col+kernel" : "im2col+clblast";
      case Op::kCopy:
        return "clEnqueueBuffer";
      default:
        return "kernel";
    }
  }

  // f16 is computed in float by the exp and GEMM kernels (rounded once); CLBlast's HGEMM
  // accumulates in f16.
  std::string compute_type(Op op, DType dtype) const override {
    if (dtype == DType::kF16 && (op == Op::kExp || gemm_run(dtype))) return "f32";
    return std::string(gpucheck::to_string(dtype));
  }

  std::optional<DType> verify_compute(Op op, DType dtype) const override {
    if ((op == Op::kGemm || op == Op::kConv) && dtype == DType::kF16 && !gemm_run(dtype))
      return DType::kF16;
    return std::nullopt;
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override {
    ClSession& s = fresh_session();
    return guarded([&] {
      return std::make_unique<ClBuffer>(
          create_buffer(*lib_, s.context(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1)),
          bytes);
    });
  }

  std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) override {
    fresh_session();
    if (kind == HostMemory::kPageable) return std::make_unique<PageableHost>(bytes);
    return guarded([&] { return std::make_unique<PinnedHost>(*lib_, session_, bytes); });
  }

  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    guarded([&] {
      GC_CL_CHECK(lib_->clEnqueueWriteBuffer(queue(), mem(dst), CL_FALSE, 0, bytes, src, 0, nullptr,
                                             next_event(false)));
    });
  }

  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    if (bytes == 0) return;
    guarded([&] {
      GC_CL_CHECK(lib_->clEnqueueReadBuffer(queue(), mem(src), CL_FALSE, 0, bytes, dst, 0, nullptr,
                                            next_event(false)));
    });
  }

  void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    if (bytes == 0) return;
    guarded([&] {
      GC_CL_CHECK(lib_->clEnqueueCopyBuffer(queue(), mem(src), mem(dst), 0, 0, bytes, 0, nullptr,
                                            next_event(false)));
    });
  }

  void exp(DType dtype, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) override {
    if (n == 0) return;
    guarded([&] {
      cl_kernel kern = kernel("opencl_exp.cl", exp_options(dtype), "gc_exp");
      const cl_mem xm = mem(x), ym = mem(y);
      const cl_ulong count = n;
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 0, sizeof xm, &xm));
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 1, sizeof ym, &ym));
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 2, sizeof count, &count));
      const std::size_t width = 16 / element_size(dtype);
      const std::size_t wg = work_group();
      const std::size_t items = std::max<std::size_t>(n / width, n % width);
      const std::size_t cap = round_up(compute_units_ * kItemsPerComputeUnit, wg);
      const std::size_t global = std::min(round_up(items, wg), cap);
      GC_CL_CHECK(lib_->clEnqueueNDRangeKernel(queue(), kern, 1, nullptr, &global, &wg, 0, nullptr,
                                               next_event(false)));
    });
  }

  void gemm(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    guarded([&] {
      run_gemm(dtype, false, s.m, s.n, s.k, mem(a), 0, s.k, mem(b), 0, s.n, mem(c), 0, s.n);
    });
  }

  // im2col + GEMM per chunk of images. NCHW: Y[n] (K × PQ) = W (K × CRS) · col[n] (CRS × PQ),
  // one GEMM per image. NHWC: Y (images·PQ × K) = col (images·PQ × RSC) · Wᵀ, one GEMM a chunk.
  void conv2d(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    guarded([&] {
      const std::size_t es = element_size(dtype);
      const std::size_t crs = s.c * s.r * s.s;
      const std::size_t pq = s.p() * s.q();
      const std::size_t per_image = crs * pq;
      const std::size_t cap = std::min<std::size_t>(kColBytesCap, max_alloc_);
      const std::size_t images =
          std::clamp<std::size_t>(cap / std::max<std::size_t>(per_image * es, 1), 1, s.n);
      cl_mem col = session_->scratch(ClSession::Scratch::kIm2col, images * per_image * es);
      const bool nhwc = s.layout == Layout::kNhwc;
      cl_kernel kern = kernel("opencl_im2col.cl", im2col_options(dtype),
                              nhwc ? "gc_im2col_nhwc" : "gc_im2col_nchw");
      const cl_mem xm = mem(x);
      const cl_uint dims[] = {to_uint(s.c),   to_uint(s.h),      to_uint(s.w),
                              to_uint(s.r),   to_uint(s.s),      to_uint(s.p()),
                              to_uint(s.q()), to_uint(s.stride), to_uint(s.pad)};
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 0, sizeof xm, &xm));
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 1, sizeof col, &col));
      for (cl_uint i = 0; i < 9; ++i)
        GC_CL_CHECK(lib_->clSetKernelArg(kern, 4 + i, sizeof(cl_uint), &dims[i]));
      for (std::size_t n0 = 0; n0 < s.n; n0 += images) {
        const std::size_t count = std::min(images, s.n - n0);
        const cl_ulong first = n0;
        const cl_uint count_arg = to_uint(count);
        GC_CL_CHECK(lib_->clSetKernelArg(kern, 2, sizeof first, &first));
        GC_CL_CHECK(lib_->clSetKernelArg(kern, 3, sizeof count_arg, &count_arg));
        const std::size_t wg = work_group();
        const std::size_t global = round_up(count * per_image, wg);
        GC_CL_CHECK(lib_->clEnqueueNDRangeKernel(queue(), kern, 1, nullptr, &global, &wg, 0,
                                                 nullptr, next_event(false)));
        if (nhwc) {
          run_gemm(dtype, true, count * pq, s.k, crs, col, 0, crs, mem(w), 0, crs, mem(y),
                   n0 * pq * s.k, s.k);
        } else {
          for (std::size_t j = 0; j < count; ++j)
            run_gemm(dtype, false, s.k, pq, crs, mem(w), 0, crs, col, j * per_image, pq, mem(y),
                     (n0 + j) * s.k * pq, pq);
        }
      }
    });
  }

  void launch_empty() override {
    fresh_session();
    guarded([&] {
      cl_kernel kern = kernel("opencl_exp.cl", exp_options(DType::kF32), "gc_empty");
      const std::size_t one = 1;
      GC_CL_CHECK(lib_->clEnqueueNDRangeKernel(queue(), kern, 1, nullptr, &one, &one, 0, nullptr,
                                               next_event(false)));
    });
  }

  void synchronize() override {
    guarded([&] { GC_CL_CHECK(lib_->clFinish(queue())); });
  }

  // From the first recorded command's start to the last one's end, on the device's clock.
  double time_on_device(const std::function<void()>& enqueue) override {
    release_events();
    recording_ = true;
    struct StopRecording {
      bool* flag;
      ~StopRecording() { *flag = false; }
    } stop{&recording_};
    enqueue();
    recording_ = false;
    std::vector<cl_event> all;
    for (const auto& r : events_)
      if (r.event) all.push_back(r.event.get());
    if (all.empty()) return 0.0;
    guarded(
        [&] { GC_CL_CHECK(lib_->clWaitForEvents(static_cast<cl_uint>(all.size()), all.data())); });
    cl_ulong first = std::numeric_limits<cl_ulong>::max(), last = 0;
    for (const auto& r : events_) {
      if (!r.event) continue;
      const cl_event ev = r.event.get();
      cl_ulong start = 0, end = 0;
      if (r.marker) {
        // A driver without marker timestamps leaves the span to the commands themselves.
        if (lib_->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end,
                                          nullptr) == CL_SUCCESS)
          first = std::min(first, end);
        continue;
      }
      GC_CL_CHECK(lib_->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start,
                                                &start, nullptr));
      GC_CL_CHECK(
          lib_->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr));
      first = std::min(first, start);
      last = std::max(last, end);
    }
    release_events();
    if (last <= first) return 0.0;
    return static_cast<double>(last - first) * 1e-9;
  }

  nlohmann::json context() const override { return context_; }

  GemmTuner* gemm_tuner() override { return this; }
  StressOps* stress_ops() override { return this; }

  // ---- StressOps ----
  // OpenCL has no free-memory query: a CPU device's memory is the host's (MemAvailable), a
  // GPU's is taken as its global memory.
  MemoryInfo memory_info() const override {
    MemoryInfo m;
    m.total_bytes = global_mem_;
    m.max_allocation = max_alloc_;
    m.host_memory = host_memory_;
    if (host_memory_) {
      auto mem = host::read_memory_facts("/");
      m.free_bytes =
          std::min<std::uint64_t>(global_mem_, mem.available_bytes.value_or(global_mem_));
      m.source = "MemAvailable (/proc/meminfo), a CPU device";
    } else {
      m.free_bytes = global_mem_;
      m.source = "CL_DEVICE_GLOBAL_MEM_SIZE (OpenCL cannot say what is free)";
    }
    return m;
  }
  void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                 std::size_t bytes) override {
    check_buffer_range(dst, offset, bytes);
    if (bytes == 0) return;
    guarded([&] {
      GC_CL_CHECK(lib_->clEnqueueWriteBuffer(queue(), mem(dst), CL_FALSE, offset, bytes, src, 0,
                                             nullptr, nullptr));
    });
  }
  void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                   std::size_t bytes) override {
    check_buffer_range(src, offset, bytes);
    if (bytes == 0) return;
    guarded([&] {
      GC_CL_CHECK(lib_->clEnqueueReadBuffer(queue(), mem(src), CL_FALSE, offset, bytes, dst, 0,
                                            nullptr, nullptr));
    });
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                std::size_t slot) override {
    check_buffer_range(src, 0, words * 8);
    check_buffer_range(sums, slot * 8, 8);
    guarded([&] {
      const std::size_t wg = stress_group(), groups = stress_groups(words);
      const cl_mem parts = session_->scratch(ClSession::Scratch::kPartials, groups * 8);
      launch_stress("gc_checksum_partial", groups * wg, mem(src), cl_ulong{words}, parts);
      launch_stress("gc_checksum_final", wg, parts, static_cast<cl_uint>(groups), mem(sums),
                    cl_ulong{slot});
    });
  }
  void memtest(DeviceBuffer& buf, std::size_t words, std::uint64_t first_word, MemPattern check,
               MemPattern write, DeviceBuffer& result) override {
    check_buffer_range(buf, 0, words * 8);
    check_buffer_range(result, 0, 16);
    guarded([&] {
      const std::size_t wg = stress_group(), groups = stress_groups(words);
      const cl_mem parts = session_->scratch(ClSession::Scratch::kPartials, groups * 16);
      launch_stress("gc_memtest", groups * wg, mem(buf), cl_ulong{words}, cl_ulong{first_word},
                    static_cast<cl_uint>(check.kind), cl_ulong{check.param},
                    static_cast<cl_uint>(write.kind), cl_ulong{write.param}, parts);
      launch_stress("gc_memtest_final", wg, parts, static_cast<cl_uint>(groups), mem(result));
    });
  }

  // ---- GemmTuner ----
  std::optional<GemmTuning> tune_gemm(DType dtype, const GemmTuningRequest& request,
                                      const GemmTrialFn& trial) override {
    GemmTuningTarget target;
    target.identity = {platform_name_, identity_.device_name,
                       context_["driver_version"].get<std::string>(), kVersion, clblast_file()};
    target.limits = limits_;
    target.untuned = untuned_gemm(dtype);
    target.default_budget_s = limits_.cpu ? kTuneBudgetCpuS : kTuneBudgetS;
    target.shape = tuning_shape(dtype);
    target.use = [this, dtype](const GemmCandidate& c) { gemm_runs_[dtype] = c; };
    GemmChoice choice = choose_gemm(dtype, target, request, trial);
    return GemmTuning{choice.state, candidate_json(choice.run), choice.note};
  }

 private:
  // The stress kernels' work-group: a power of two up to 256 the device allows.
  std::size_t stress_group() const {
    std::size_t wg = 1;
    while (wg * 2 <= std::min(kWorkGroup, max_work_group_)) wg *= 2;
    return wg;
  }
  std::size_t stress_groups(std::size_t words) const {
    const std::size_t wg = stress_group();
    const std::size_t full = std::max<std::size_t>(compute_units_, 1) * 8;
    return std::clamp<std::size_t>((words + wg - 1) / wg, 1, full);
  }
  std::string stress_options() const { return fmt::format("-DGC_WG={}", stress_group()); }

  // A kernel of kernels/opencl_stress.cl with its arguments in order, on `global` work items in
  // groups of stress_group().
  template <typename... Args>
  void launch_stress(const char* name, std::size_t global, const Args&... args) {
    cl_kernel kern = kernel("opencl_stress.cl", stress_options(), name);
    cl_uint index = 0;
    auto set = [&](const auto& arg) {
      GC_CL_CHECK(lib_->clSetKernelArg(kern, index++, sizeof arg, &arg));
    };
    (set(args), ...);
    const std::size_t wg = stress_group();
    GC_CL_CHECK(
        lib_->clEnqueueNDRangeKernel(queue(), kern, 1, nullptr, &global, &wg, 0, nullptr, nullptr));
  }

  std::shared_ptr<ClSession> make_session() {
    return std::make_shared<ClSession>(*lib_, platform_, device_);
  }

  // The session for a new cell: a fresh context after an allocation failure in an earlier one.
  ClSession& fresh_session() {
    if (poisoned_) {
      release_events();
      session_ = make_session();
      poisoned_ = false;
    }
    return *session_;
  }

  cl_command_queue queue() const { return session_->queue(); }

  // What the dtype's GEMM runs untuned: CLBlast's defaults where CLBlast runs the dtype, else
  // gpucheck's kernel with its built-in parameters.
  GemmCandidate untuned_gemm(DType dtype) const {
    const bool library_runs = clblast_ && (dtype != DType::kF16 || fp16_);
    if (library_runs) return std::nullopt;
    return default_params(limits_, dtype);
  }

  // What the dtype's GEMM runs now: tune_gemm's choice, else the untuned one.
  GemmCandidate gemm_run(DType dtype) const {
    auto it = gemm_runs_.find(dtype);
    return it != gemm_runs_.end() ? it->second : untuned_gemm(dtype);
  }

  // The real file behind libclblast.so.1 (its name carries the version): part of the cache's
  // identity, as the defaults it measured come from it.
  std::string clblast_file() const {
    if (!clblast_) return "";
    std::error_code ec;
    auto real = std::filesystem::canonical(clblast_->path(), ec);
    return ec ? clblast_->path() : real.string();
  }

  // Square, as large as kTuneSide(Cpu) or as fits a third of the memory budget per matrix.
  GemmShape tuning_shape(DType dtype) const {
    std::uint64_t side = limits_.cpu ? kTuneSideCpu : kTuneSide;
    const MemoryBudget budget = memory_budget();
    while (side > 256 && (3 * side * side * element_size(dtype) > budget.max_total ||
                          side * side * element_size(dtype) > budget.max_allocation))
      side /= 2;
    return {side, side, side};
  }

  // Runs fn; an error that may have left the context unusable marks it for replacement.
  template <typename Fn>
  auto guarded(Fn&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const ApiError& e) {
      if (leaves_context_unusable(e.code())) poisoned_ = true;
      throw;
    }
  }

  cl_event* next_event(bool marker) {
    if (!recording_) return nullptr;
    events_.push_back({ClEvent{}, marker});
    return events_.back().event.receive(*lib_);
  }

  void release_events() { events_.clear(); }

  std::size_t work_group() const { return std::min(kWorkGroup, max_work_group_); }

  static cl_uint to_uint(std::size_t v) {
    if (v > std::numeric_limits<cl_uint>::max())
      throw std::overflow_error(fmt::format("{} exceeds the kernel's 32-bit dimensions", v));
    return static_cast<cl_uint>(v);
  }

  static std::string exp_options(DType dtype) {
    switch (dtype) {
      case DType::kF64:
        return "-DGC_F64";
      case DType::kF16:
        return "-DGC_F16";
      default:
        return "-DGC_F32";
    }
  }

  static std::string im2col_options(DType dtype) {
    switch (element_size(dtype)) {
      case 8:
        return "-DGC_ELEM=ulong";
      case 2:
        return "-DGC_ELEM=ushort";
      default:
        return "-DGC_ELEM=uint";
    }
  }

  // A kernel of an embedded source built with options, built once per session.
  cl_kernel kernel(const std::string& source, const std::string& options, const char* name) {
    return session_->kernel("kernels/" + source, kernel_source(source), options, name);
  }

  // Row-major C[m×n] = A[m×k] · op(B), op(B) = B (k×n) or Bᵀ (B stored n×k); offsets and
  // leading dimensions in elements; through the dtype's chosen GEMM.
  void run_gemm(DType dtype, bool b_trans, std::size_t m, std::size_t n, std::size_t kk, cl_mem a,
                std::size_t a_off, std::size_t lda, cl_mem b, std::size_t b_off, std::size_t ldb,
                cl_mem c, std::size_t c_off, std::size_t ldc) {
    if (const GemmCandidate run = gemm_run(dtype)) {
      kernel_gemm(dtype, *run, b_trans, m, n, kk, a, a_off, lda, b, b_off, ldb, c, c_off, ldc);
      return;
    }
    clblast_gemm(dtype, b_trans ? ClblastTranspose::kYes : ClblastTranspose::kNo, m, n, kk, a,
                 a_off, lda, b, b_off, ldb, c, c_off, ldc);
  }

  // gpucheck's kernel (kernels/opencl_gemm.cl), built for the parameters, the layout of B and
  // whether the shape needs index checks.
  void kernel_gemm(DType dtype, const GemmParams& p, bool b_trans, std::size_t m, std::size_t n,
                   std::size_t kk, cl_mem a, std::size_t a_off, std::size_t lda, cl_mem b,
                   std::size_t b_off, std::size_t ldb, cl_mem c, std::size_t c_off,
                   std::size_t ldc) {
    const bool edge = !fits_tiles(p, m, n, kk);
    const bool aligned = vector_aligned(p, b_trans, {lda, a_off, ldb, b_off, ldc, c_off});
    cl_kernel kern =
        kernel("opencl_gemm.cl", build_options(p, dtype, b_trans, edge, aligned), "gc_gemm");
    const cl_uint dims[] = {to_uint(m), to_uint(n), to_uint(kk)};
    const cl_uint lds[] = {to_uint(lda), to_uint(ldb), to_uint(ldc)};
    const cl_ulong offs[] = {a_off, b_off, c_off};
    const cl_mem mems[] = {a, b, c};
    for (cl_uint i = 0; i < 3; ++i)
      GC_CL_CHECK(lib_->clSetKernelArg(kern, i, sizeof(cl_uint), &dims[i]));
    for (cl_uint i = 0; i < 3; ++i) {
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 3 + 3 * i, sizeof(cl_mem), &mems[i]));
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 4 + 3 * i, sizeof(cl_ulong), &offs[i]));
      GC_CL_CHECK(lib_->clSetKernelArg(kern, 5 + 3 * i, sizeof(cl_uint), &lds[i]));
    }
    const GemmLaunch l = launch_size(p, m, n);
    GC_CL_CHECK(lib_->clEnqueueNDRangeKernel(queue(), kern, 2, nullptr, l.global, l.local, 0,
                                             nullptr, next_event(false)));
  }

  // CLBlast; bracketed by a marker when timed (see Recorded).
  void clblast_gemm(DType dtype, ClblastTranspose b_trans, std::size_t m, std::size_t n,
                    std::size_t kk, cl_mem a, std::size_t a_off, std::size_t lda, cl_mem b,
                    std::size_t b_off, std::size_t ldb, cl_mem c, std::size_t c_off,
                    std::size_t ldc) {
    if (!clblast_) throw std::logic_error("CLBlast GEMM without CLBlast: untuned_gemm says no");
    const auto& B = *clblast_;
    if (recording_)
      GC_CL_CHECK(lib_->clEnqueueMarkerWithWaitList(queue(), 0, nullptr, next_event(true)));
    cl_command_queue q = queue();
    const auto row = ClblastLayout::kRowMajor;
    const auto no = ClblastTranspose::kNo;
    switch (dtype) {
      case DType::kF64:
        GC_CLBLAST_CHECK(B.CLBlastDgemm(row, no, b_trans, m, n, kk, 1.0, a, a_off, lda, b, b_off,
                                        ldb, 0.0, c, c_off, ldc, &q, next_event(false)));
        break;
      case DType::kF16:
        GC_CLBLAST_CHECK(B.CLBlastHgemm(row, no, b_trans, m, n, kk, kHalfOne, a, a_off, lda, b,
                                        b_off, ldb, kHalfZero, c, c_off, ldc, &q,
                                        next_event(false)));
        break;
      case DType::kF32:
        GC_CLBLAST_CHECK(B.CLBlastSgemm(row, no, b_trans, m, n, kk, 1.0f, a, a_off, lda, b, b_off,
                                        ldb, 0.0f, c, c_off, ldc, &q, next_event(false)));
        break;
      default:
        throw std::logic_error("GEMM dtype: unsupported_reason says no");
    }
  }

  std::unique_ptr<OpenClLibrary> lib_;
  cl_platform_id platform_;
  cl_device_id device_;
  DeviceIdentity identity_;
  bool fp64_ = false;
  bool fp16_ = false;
  cl_ulong global_mem_ = 0;
  cl_ulong max_alloc_ = 0;
  std::size_t compute_units_ = 1;
  std::size_t max_work_group_ = 1;
  bool host_memory_ = false;  // a CPU device (pocl): its memory is the host's
  nlohmann::json context_;
  std::shared_ptr<ClSession> session_;
  bool poisoned_ = false;
  bool recording_ = false;
  std::vector<Recorded> events_;
  std::unique_ptr<ClblastLibrary> clblast_;
  std::string clblast_error_;
  std::string platform_name_;
  GemmLimits limits_;
  std::map<DType, GemmCandidate> gemm_runs_;  // tune_gemm's choices
};

}  // namespace

std::unique_ptr<Device> make_opencl_device(const std::string& device_id,
                                           const DeviceOptions& options) {
  (void)options;
  const auto found = flat_device_index(device_id, "opencl");
  if (!found) return nullptr;
  const std::size_t index = *found;

  std::string error;
  auto lib = OpenClLibrary::open(kLoaderSoname, &error);
  if (!lib) throw std::runtime_error(loader_error(kLoaderSoname, error));
  if (!lib->bench_missing().empty())
    throw std::runtime_error(
        fmt::format("{}: missing symbols: {}", lib->path(), lib->bench_missing()));
  cl_uint count = 0;
  const cl_int status = lib->clGetPlatformIDs(0, nullptr, &count);
  if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && count == 0)) return nullptr;
  GC_CL_CHECK(status);
  std::vector<cl_platform_id> platforms(count);
  GC_CL_CHECK(lib->clGetPlatformIDs(count, platforms.data(), nullptr));
  // The probe's flat order: platforms in enumeration order, each one's devices of every type.
  std::size_t next = 0;
  for (cl_platform_id p : platforms) {
    cl_uint ndev = 0;
    cl_int s = lib->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev);
    if (s != CL_SUCCESS || ndev == 0) continue;  // the probe lists no devices for it either
    std::vector<cl_device_id> devices(ndev);
    GC_CL_CHECK(lib->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, devices.data(), nullptr));
    if (index < next + ndev)
      return std::make_unique<OpenClDevice>(std::move(lib), p, devices[index - next], device_id);
    next += ndev;
  }
  return nullptr;
}

}  // namespace gpucheck::opencl
