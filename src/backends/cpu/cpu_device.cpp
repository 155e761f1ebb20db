// CPU primitives behind the Device interface; every call is synchronous.
#include "backends/cpu/cpu_device.h"

#include "backends/cpu/cpu_blas.h"
#include "backends/cpu/cpu_conv.h"
#include "backends/cpu/cpu_copy.h"
#include "backends/cpu/cpu_exp.h"
#include "backends/cpu/cpu_gemm.h"
#include "backends/cpu/cpu_isa.h"
#include "backends/cpu/cpu_stress.h"
#include "core/environment.h"
#include "core/errors.h"
#include "host/cpu_info.h"
#include "host/memory_info.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

namespace gpucheck {

namespace {

// 64-byte aligned host memory, as the vector kernels and streaming stores want.
class AlignedMemory final : public DeviceBuffer, public HostAllocation {
 public:
  explicit AlignedMemory(std::size_t bytes) : bytes_(bytes) {
    std::size_t rounded = (bytes + 63) / 64 * 64;
    data_ = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (data_ == nullptr)
      throw std::runtime_error(fmt::format("host allocation of {} bytes failed", bytes));
  }
  ~AlignedMemory() override { std::free(data_); }
  AlignedMemory(const AlignedMemory&) = delete;
  AlignedMemory& operator=(const AlignedMemory&) = delete;
  void* data() override { return data_; }
  const void* cdata() const { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

const void* ptr(const DeviceBuffer& b) {
  return static_cast<const AlignedMemory&>(b).cdata();
}
void* ptr(DeviceBuffer& b) {
  return static_cast<AlignedMemory&>(b).data();
}

class CpuDevice final : public Device, public StressOps {
 public:
  explicit CpuDevice(const DeviceOptions& options)
      : threads_(options.threads > 0 ? options.threads
                                     : static_cast<int>(std::thread::hardware_concurrency())),
        blas_(cpu::load_cpu_blas(current_environment(), cpu::running_cpu_isa(),
                                 options.blas_library_kernel, options.blas_dynamic_arch)) {
    auto facts = host::read_cpu_facts("/");
    identity_ = {"cpu", "cpu", facts.model.value_or("unknown CPU"), "", ""};
  }

  const DeviceIdentity& identity() const override { return identity_; }
  bool is_host() const override { return true; }

  MemoryBudget memory_budget() const override {
    auto mem = host::read_memory_facts("/");
    std::size_t avail = mem.available_bytes.value_or(std::size_t{1} << 30);
    return {avail / 2, avail / 2, fmt::format("half of MemAvailable ({} bytes)", avail)};
  }

  std::optional<std::string> unsupported_reason(Op op, DType dtype, Layout layout) const override {
    (void)layout;
    if (dtype == DType::kFp8 && op == Op::kGemm)
      return std::string(
          "no FP8 GEMM on the CPU backend (fp8 runs through cuBLASLt on CUDA devices of compute "
          "capability 8.9 or newer)");
    if (runs_between_devices(op))
      return std::string("peer copies and all-reduce run between CUDA devices");
    switch (op) {
      case Op::kExp:
      case Op::kSeedloop:
        if (dtype == DType::kF32 || dtype == DType::kF64) return std::nullopt;
        return fmt::format("the CPU backend runs {} in f32 and f64 only", gpucheck::to_string(op));
      case Op::kGemm:
        if (dtype != DType::kF32 && dtype != DType::kF64)
          return std::string("the CPU backend runs gemm in f32 and f64 only");
        if (!blas_.library) return cpu::no_blas_reason(blas_.error);
        return std::nullopt;
      case Op::kConv:
        if (dtype != DType::kF32) return std::string("the CPU backend runs conv in f32 only");
        if (!blas_.library) return cpu::no_blas_reason(blas_.error);
        return std::nullopt;
      case Op::kCopy:
        return std::nullopt;
      case Op::kLatency:
        return std::string("kernel launch latency applies to accelerators only");
      default:
        break;
    }
    return std::string("unknown op");
  }

  std::string impl(Op op, DType dtype) const override {
    (void)dtype;
    switch (op) {
      case Op::kGemm:
        return blas_name();
      case Op::kConv:
        return "im2col+" + blas_name();
      case Op::kCopy:
        return "memcpy";
      default:
        return fmt::format("kernel_{}", cpu::to_string(cpu::best_isa_path()));
    }
  }

  std::string compute_type(Op op, DType dtype) const override {
    (void)op;
    return std::string(gpucheck::to_string(dtype));
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override {
    return std::make_unique<AlignedMemory>(bytes);
  }
  std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory) override {
    return std::make_unique<AlignedMemory>(bytes);
  }
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    std::memcpy(ptr(dst), src, bytes);
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    std::memcpy(dst, ptr(src), bytes);
  }
  void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    cpu::copy_bytes(ptr(dst), ptr(src), bytes, threads_);
  }
  void exp(DType dtype, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) override {
    if (dtype == DType::kF64)
      cpu::exp_f64(static_cast<const double*>(ptr(x)), static_cast<double*>(ptr(y)), n, threads_);
    else
      cpu::exp_f32(static_cast<const float*>(ptr(x)), static_cast<float*>(ptr(y)), n, threads_);
  }
  void gemm(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    if (dtype == DType::kF64)
      cpu::gemm_f64(blas(), s.m, s.n, s.k, static_cast<const double*>(ptr(a)),
                    static_cast<const double*>(ptr(b)), static_cast<double*>(ptr(c)), threads_);
    else
      cpu::gemm_f32(blas(), s.m, s.n, s.k, static_cast<const float*>(ptr(a)),
                    static_cast<const float*>(ptr(b)), static_cast<float*>(ptr(c)), threads_);
  }
  void conv2d(DType, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    auto* out = static_cast<float*>(ptr(y));
    auto* in = static_cast<const float*>(ptr(x));
    auto* wt = static_cast<const float*>(ptr(w));
    if (s.layout == Layout::kNhwc)
      cpu::conv2d_nhwc_f32(blas(), s, in, wt, out, threads_);
    else
      cpu::conv2d_nchw_f32(blas(), s, in, wt, out, threads_);
  }
  void launch_empty() override {
    throw std::logic_error("launch_empty on the CPU: the engine must not ask for it");
  }
  void synchronize() override {}
  double time_on_device(const std::function<void()>& enqueue) override {
    auto start = std::chrono::steady_clock::now();
    enqueue();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  nlohmann::json context() const override {
    return {{"threads", threads_},
            {"isa_path", cpu::to_string(cpu::best_isa_path())},
            {"blas", blas_.facts()}};
  }

  StressOps* stress_ops() override { return this; }

  // ---- StressOps ----
  MemoryInfo memory_info() const override {
    auto mem = host::read_memory_facts("/");
    MemoryInfo m;
    m.free_bytes = mem.available_bytes.value_or(mem.free_bytes.value_or(0));
    m.total_bytes = mem.total_bytes.value_or(m.free_bytes);
    m.max_allocation = m.free_bytes;
    m.host_memory = true;
    m.source = mem.available_bytes ? "MemAvailable (/proc/meminfo)" : "MemFree (/proc/meminfo)";
    return m;
  }
  void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                 std::size_t bytes) override {
    check_buffer_range(dst, offset, bytes);
    std::memcpy(static_cast<unsigned char*>(ptr(dst)) + offset, src, bytes);
  }
  void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                   std::size_t bytes) override {
    check_buffer_range(src, offset, bytes);
    std::memcpy(dst, static_cast<const unsigned char*>(ptr(src)) + offset, bytes);
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                std::size_t slot) override {
    check_buffer_range(src, 0, words * 8);
    check_buffer_range(sums, slot * 8, 8);
    static_cast<std::uint64_t*>(ptr(sums))[slot] =
        cpu::checksum_words(static_cast<const std::uint64_t*>(ptr(src)), words, threads_);
  }
  void memtest(DeviceBuffer& buf, std::size_t words, std::uint64_t first_word, MemPattern check,
               MemPattern write, DeviceBuffer& result) override {
    check_buffer_range(buf, 0, words * 8);
    check_buffer_range(result, 0, 16);
    cpu::memtest_words(static_cast<std::uint64_t*>(ptr(buf)), words, first_word, check, write,
                       static_cast<std::uint64_t*>(ptr(result)), threads_);
  }

 private:
  // "openblas", "blis", "mkl"; "blas" when none loaded (the records are unsupported then).
  std::string blas_name() const {
    return blas_.library ? std::string(cpu::to_string(blas_.library->family())) : "blas";
  }
  // Only reached for supported cells: the engine asks unsupported_reason first.
  const cpu::BlasLibrary& blas() const {
    if (!blas_.library) throw std::logic_error("CPU GEMM without a BLAS: the engine must not ask");
    return *blas_.library;
  }

  int threads_;
  cpu::CpuBlas blas_;
  DeviceIdentity identity_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(const DeviceOptions& options) {
  return std::make_unique<CpuDevice>(options);
}

}  // namespace gpucheck
