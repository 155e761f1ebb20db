// Peer copies timed as nvbandwidth times them (every stream held by a spin kernel until all
// copies are queued, events around each stream's copies) and NCCL all-reduce timed as
// nccl-tests times it (a batch of group calls on the host clock up to every stream's completion).
#include "backends/cuda/cuda_peer_group.h"

#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/cuda_probe.h"
#include "backends/cuda/nccl_library.h"
#include "core/environment.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/json_keys.h"
#include "core/nccl_log.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <latch>
#include <thread>

namespace gpucheck::cuda {

namespace {

namespace k = keys;

// How long a spin kernel waits for the host before giving up: far longer than enqueueing a
// batch takes, short enough that a host blocked inside an enqueue costs seconds, not a hang.
constexpr double kSpinTimeoutS = 2.0;

int parse_cuda_index(const std::string& id) {
  int index = -1;
  if (id.rfind("cuda", 0) != 0 || id.size() == 4)
    throw UsageError(fmt::format("'{}' is not a CUDA device (cuda0, cuda1, ...)", id));
  auto r = std::from_chars(id.data() + 4, id.data() + id.size(), index);
  if (r.ec != std::errc() || r.ptr != id.data() + id.size() || index < 0)
    throw UsageError(fmt::format("'{}' is not a CUDA device (cuda0, cuda1, ...)", id));
  return index;
}

// Sets the current device for a scope and restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    GC_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) GC_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() { GC_CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

struct Member {
  int index = 0;  // the CUDA device index
  DeviceIdentity identity;
  int sms = 1;
  int clock_khz = 2000000;
  std::vector<cudaStream_t> streams;  // copy streams, made as batches need them
  std::vector<cudaEvent_t> starts, ends;
  cudaStream_t nccl_stream = nullptr;
};

class CudaPeerGroup final : public PeerGroup {
 public:
  explicit CudaPeerGroup(const std::vector<std::string>& ids) {
    DriverVerdict verdict = judge_driver(DriverLibrary::observe());
    if (!verdict.usable) throw std::runtime_error(verdict.reason);
    int count = 0;
    GC_CUDA_CHECK(cudaGetDeviceCount(&count));
    for (const auto& id : ids) {
      Member m;
      m.index = parse_cuda_index(id);
      if (m.index >= count)
        throw std::runtime_error(
            fmt::format("no device '{}': CUDA sees {} device(s) here", id, count));
      GC_CUDA_CHECK(cudaSetDevice(m.index));
      nlohmann::json d = probe_device(m.index);
      m.identity = {d[k::kDevice], "cuda", d[k::kDeviceName],
                    d.value(std::string(k::kDeviceUuid), ""),
                    d.value(std::string(k::kPciBusId), "")};
      GC_CUDA_CHECK(cudaDeviceGetAttribute(&m.sms, cudaDevAttrMultiProcessorCount, m.index));
      if (cudaDeviceGetAttribute(&m.clock_khz, cudaDevAttrClockRate, m.index) != cudaSuccess ||
          m.clock_khz <= 0) {
        cudaGetLastError();
        m.clock_khz = 2000000;
      }
      members_.push_back(std::move(m));
    }
    peer_on_.assign(members_.size(), std::vector<bool>(members_.size(), false));
    // The latch the spin kernels poll and one "gave up" flag per stream slot: mapped, portable
    // host memory, visible to every device of the group.
    flags_ = std::make_unique<PinnedHost>(sizeof(int) * (1 + kMaxSlots),
                                          cudaHostAllocPortable | cudaHostAllocMapped);
  }

  ~CudaPeerGroup() override {
    for (std::size_t i = 0; i < comms_.size(); ++i)
      if (comms_[i] != nullptr) {
        const auto r =
            nccl_broken_ ? nccl_->ncclCommAbort(comms_[i]) : nccl_->ncclCommDestroy(comms_[i]);
        if (r != nccl::kSuccess) log_api_error("NCCL", r, "ncclCommDestroy", __FILE__, __LINE__);
      }
    for (auto& m : members_) {
      GC_CUDA_CHECK_NOTHROW(cudaSetDevice(m.index));
      for (auto s : m.streams) GC_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s));
      for (auto e : m.starts) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
      for (auto e : m.ends) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(e));
      if (m.nccl_stream) GC_CUDA_CHECK_NOTHROW(cudaStreamDestroy(m.nccl_stream));
    }
    if (!nccl_log_.empty()) ::unlink(nccl_log_.c_str());
  }
  CudaPeerGroup(const CudaPeerGroup&) = delete;
  CudaPeerGroup& operator=(const CudaPeerGroup&) = delete;

  std::size_t size() const override { return members_.size(); }
  const DeviceIdentity& identity(std::size_t i) const override { return members_.at(i).identity; }

  MemoryBudget memory_budget(std::size_t i) const override {
    DeviceScope scope(members_.at(i).index);
    std::size_t free = 0, total = 0;
    GC_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return {free / 2, free / 2,
            fmt::format("half of {}'s free memory ({} of {} bytes free)",
                        members_[i].identity.device, free, total)};
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t device, std::size_t bytes) override {
    return std::make_unique<CudaBuffer>(bytes, members_.at(device).index);
  }
  void upload(std::size_t device, DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    DeviceScope scope(members_.at(device).index);
    GC_CUDA_CHECK(cudaMemcpy(dptr(dst), src, bytes, cudaMemcpyHostToDevice));
  }
  void download(std::size_t device, void* dst, const DeviceBuffer& src,
                std::size_t bytes) override {
    DeviceScope scope(members_.at(device).index);
    GC_CUDA_CHECK(cudaMemcpy(dst, dptr(src), bytes, cudaMemcpyDeviceToHost));
  }

  void fill(std::size_t device, DeviceBuffer& dst, unsigned char value,
            std::size_t bytes) override {
    DeviceScope scope(members_.at(device).index);
    GC_CUDA_CHECK(cudaMemset(dptr(dst), value, bytes));
    GC_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::optional<std::string> peer_access_unavailable(std::size_t a, std::size_t b) const override {
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      int can = 0;
      GC_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, members_.at(x).index, members_.at(y).index));
      if (can == 0)
        return fmt::format(
            "cudaDeviceCanAccessPeer({}, {}) = 0: the driver allows no peer access between these "
            "GPUs (no NVLink and no PCIe peer path: IOMMU or ACS redirecting peer traffic, GPUs "
            "under different CPU sockets, or a virtual machine); `gpucheck doctor --only "
            "p2p_access` says which",
            members_[x].identity.device, members_[y].identity.device);
    }
    return std::nullopt;
  }

  void set_peer_access(std::size_t a, std::size_t b, bool enabled) override {
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      if (peer_on_[x][y] == enabled) continue;
      DeviceScope scope(members_.at(x).index);
      const cudaError_t e = enabled ? cudaDeviceEnablePeerAccess(members_[y].index, 0)
                                    : cudaDeviceDisablePeerAccess(members_[y].index);
      // Already in the wanted state (another part of the process set it): not an error.
      if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled)
        cudaGetLastError();
      else
        GC_CUDA_CHECK(e);
      peer_on_[x][y] = enabled;
    }
  }

  CopyTiming timed_copies(const std::vector<PeerCopy>& copies, int repeats) override {
    if (copies.empty() || copies.size() > kMaxSlots || repeats < 1)
      throw std::logic_error("timed_copies: 1 to 64 copies, at least one repetition");
    // A staged copy's enqueue can wait for the copy itself: behind a spin latch that the host
    // releases only after enqueueing everything, it would hold the host until the spin kernel
    // gave up (kSpinTimeoutS a repetition).
    const bool staged = std::any_of(copies.begin(), copies.end(), [&](const PeerCopy& c) {
      return !c.sm && !peer_on_.at(c.src_device).at(c.dst_device);
    });
    if (staged) return timed_copies_threaded(copies, repeats);
    auto* flags = static_cast<volatile int*>(flags_->data());
    // A spin kernel left running by an earlier failure must not hold this batch.
    *flags = 1;
    for (auto& m : members_) {
      DeviceScope scope(m.index);
      GC_CUDA_CHECK(cudaDeviceSynchronize());
    }
    for (std::size_t i = 0; i <= kMaxSlots; ++i) flags[i] = 0;
    // Release the latch whatever happens below: a stream left spinning would hold the device.
    struct Release {
      volatile int* latch;
      ~Release() { *latch = 1; }
    } release{flags};
    const auto slots = assign_streams(copies);
    int* dev_flags = nullptr;
    for (std::size_t c = 0; c < copies.size(); ++c) {
      Member& m = *slots[c].first;
      DeviceScope scope(m.index);
      GC_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_flags),
                                             const_cast<int*>(flags), 0));
      const auto clocks = static_cast<unsigned long long>(kSpinTimeoutS * 1000.0 * m.clock_khz);
      GC_CUDA_CHECK(
          launch_spin_kernel(dev_flags, dev_flags + 1 + c, clocks, m.streams[slots[c].second]));
    }
    // Every stream starts when the first does (nvbandwidth): the others wait on its start event.
    cudaEvent_t first_start = slots[0].first->starts[slots[0].second];
    for (std::size_t c = 0; c < copies.size(); ++c) {
      Member& m = *slots[c].first;
      DeviceScope scope(m.index);
      cudaStream_t s = m.streams[slots[c].second];
      if (c > 0) GC_CUDA_CHECK(cudaStreamWaitEvent(s, first_start, 0));
      GC_CUDA_CHECK(cudaEventRecord(m.starts[slots[c].second], s));
    }
    for (std::size_t c = 0; c < copies.size(); ++c) {
      const PeerCopy& pc = copies[c];
      Member& m = *slots[c].first;
      DeviceScope scope(m.index);
      cudaStream_t s = m.streams[slots[c].second];
      enqueue_copies(pc, m, s, repeats);
      GC_CUDA_CHECK(cudaEventRecord(m.ends[slots[c].second], s));
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *flags = 1;
    CopyTiming t;
    for (std::size_t c = 0; c < copies.size(); ++c) {
      Member& m = *slots[c].first;
      DeviceScope scope(m.index);
      GC_CUDA_CHECK(cudaEventSynchronize(m.ends[slots[c].second]));
      float ms = 0;
      GC_CUDA_CHECK(cudaEventElapsedTime(&ms, m.starts[slots[c].second], m.ends[slots[c].second]));
      t.seconds.push_back(static_cast<double>(ms) * 1e-3 / repeats);
      t.spin_timed_out = t.spin_timed_out || flags[1 + c] != 0;
    }
    return t;
  }

  std::string copy_impl(bool sm) const override { return sm ? "kernel" : "cudaMemcpyPeerAsync"; }

  std::optional<std::string> allreduce_unavailable() const override {
    if (members_.size() < 2 && !span_)
      return std::string("all-reduce needs at least two CUDA devices");
    if (!nccl_tried_) {
      nccl_tried_ = true;
      nccl_ = NcclLibrary::open(current_environment(), &nccl_error_);
    }
    if (!nccl_) return nccl_error_;
    return std::nullopt;
  }

  std::string allreduce_impl() const override { return "nccl"; }

  double timed_allreduce_f32(const std::vector<const DeviceBuffer*>& send,
                             const std::vector<DeviceBuffer*>& recv, std::size_t count,
                             int repeats) override {
    if (allreduce_unavailable()) throw std::logic_error("all-reduce is unavailable");
    if (send.size() != members_.size() || recv.size() != members_.size() || repeats < 1)
      throw std::logic_error("timed_allreduce_f32: one send and recv buffer per device");
    init_nccl();
    const NcclLibrary& L = *nccl_;
    for (auto& m : members_) {
      DeviceScope scope(m.index);
      GC_CUDA_CHECK(cudaStreamSynchronize(m.nccl_stream));
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r) {
      GC_NCCL_CHECK(L, nullptr, L.ncclGroupStart());
      for (std::size_t i = 0; i < members_.size(); ++i) {
        const nccl::Result res =
            L.ncclAllReduce(dptr(*send[i]), dptr(*recv[i]), count, nccl::kFloat32, nccl::kSum,
                            comms_[i], members_[i].nccl_stream);
        if (res != nccl::kSuccess) {
          nccl_broken_ = true;
          L.ncclGroupEnd();
          L.fail(res, "ncclAllReduce", comms_[i], __FILE__, __LINE__);
        }
      }
      const nccl::Result end = L.ncclGroupEnd();
      if (end != nccl::kSuccess) {
        nccl_broken_ = true;
        L.fail(end, "ncclGroupEnd", nullptr, __FILE__, __LINE__);
      }
    }
    for (std::size_t i = 0; i < members_.size(); ++i) {
      DeviceScope scope(members_[i].index);
      GC_CUDA_CHECK(cudaStreamSynchronize(members_[i].nccl_stream));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      nccl::Result async = nccl::kSuccess;
      GC_NCCL_CHECK(L, comms_[i], L.ncclCommGetAsyncError(comms_[i], &async));
      if (async != nccl::kSuccess) {
        nccl_broken_ = true;
        L.fail(async, "ncclCommGetAsyncError", comms_[i], __FILE__, __LINE__);
      }
    }
    return seconds / repeats;
  }

  std::optional<std::string> setup_allreduce(const CollectiveSetup& setup) override {
    if (!comms_.empty()) throw std::logic_error("setup_allreduce after the first all-reduce");
    if (setup.span) {
      if (setup.span->id.size() != nccl::kUniqueIdBytes)
        return fmt::format("the NCCL unique id from rank 0 is {} bytes, not {}",
                           setup.span->id.size(), nccl::kUniqueIdBytes);
      if (setup.span->first_rank < 0 ||
          setup.span->first_rank + static_cast<int>(members_.size()) > setup.span->ranks)
        return fmt::format(
            "ranks {}..{} are outside the all-reduce's {} ranks", setup.span->first_rank,
            setup.span->first_rank + static_cast<int>(members_.size()) - 1, setup.span->ranks);
      span_ = setup.span;
    }
    network_only_ = setup.network_only;
    route_nccl();
    return std::nullopt;
  }

  nlohmann::json context() const override {
    nlohmann::json c = nlohmann::json::object();
    if (nccl_) {
      c["nccl_version"] = nccl_->version();
      c["nccl_path"] = nccl_->library().real_path;
      c["nccl_source"] = nccl_->library().source;
      c["nccl_nvls_enable"] = nvls_note_;
      c["transport"] = network_only_ ? "net" : "auto";
      if (network_only_)
        c["nccl_transports_disabled"] = "P2P and SHM (NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1)";
      if (!nccl_log_.empty() && !comms_.empty()) {
        // NCCL's own word on the path its channels took.
        const auto text = read_text_file(nccl_log_, std::size_t{16} << 20);
        const NcclPath path = parse_nccl_log(text.value_or(""));
        c["nccl_transports"] = path.transports;
        if (!path.network.empty()) c["nccl_network"] = path.network;
        if (path.transports.empty())
          c["nccl_transports_unknown"] =
              fmt::format("NCCL's log ({}) names no channel transport", nccl_log_);
      }
    }
    if (span_) {
      c["ranks"] = span_->ranks;
      c["first_rank"] = span_->first_rank;
    }
    return c;
  }

 private:
  static constexpr std::size_t kMaxSlots = 64;

  // Each copy's issuer and a stream of its own there: (issuer, its stream index).
  std::vector<std::pair<Member*, std::size_t>> assign_streams(const std::vector<PeerCopy>& copies) {
    std::vector<std::pair<Member*, std::size_t>> slots;
    for (const auto& c : copies) {
      Member& m = members_.at(c.issuer);
      std::size_t used = 0;
      for (const auto& s : slots)
        if (s.first == &m) ++used;
      ensure_streams(m, used + 1);
      slots.emplace_back(&m, used);
    }
    return slots;
  }

  // One copy's `repeats` repetitions on stream s of its issuer m (current device: m's).
  void enqueue_copies(const PeerCopy& pc, Member& m, cudaStream_t s, int repeats) {
    auto* dst = static_cast<unsigned char*>(dptr(*pc.dst));
    const auto* src = static_cast<const unsigned char*>(dptr(*pc.src));
    const std::size_t piece = pc.bytes / std::max<std::size_t>(pc.pieces, 1);
    for (int r = 0; r < repeats; ++r) {
      if (pc.sm) {
        GC_CUDA_CHECK(launch_sm_copy(dst, src, pc.bytes, m.sms, s));
        continue;
      }
      for (std::size_t p = 0; p < pc.pieces; ++p)
        GC_CUDA_CHECK(cudaMemcpyPeerAsync(dst + p * piece, members_.at(pc.dst_device).index,
                                          src + p * piece, members_.at(pc.src_device).index, piece,
                                          s));
    }
  }

  // Copies whose enqueue may block (staged through the host): each from its own thread, which
  // starts when all are ready, times its copies with its own events and waits for them.
  CopyTiming timed_copies_threaded(const std::vector<PeerCopy>& copies, int repeats) {
    for (auto& m : members_) {
      DeviceScope scope(m.index);
      GC_CUDA_CHECK(cudaDeviceSynchronize());
    }
    const auto slots = assign_streams(copies);
    std::vector<std::exception_ptr> errors(copies.size());
    std::latch ready(static_cast<std::ptrdiff_t>(copies.size()));
    std::vector<std::thread> threads;
    threads.reserve(copies.size());  // push_back below must not throw with a thread in hand
    auto join_all = [&] {
      for (auto& t : threads) t.join();
    };
    auto copy_thread = [&](std::size_t c) {
      return std::thread([&, c] {
        bool arrived = false;
        try {
          Member& m = *slots[c].first;
          GC_CUDA_CHECK(cudaSetDevice(m.index));
          cudaStream_t s = m.streams[slots[c].second];
          ready.arrive_and_wait();
          arrived = true;
          GC_CUDA_CHECK(cudaEventRecord(m.starts[slots[c].second], s));
          enqueue_copies(copies[c], m, s, repeats);
          GC_CUDA_CHECK(cudaEventRecord(m.ends[slots[c].second], s));
          GC_CUDA_CHECK(cudaEventSynchronize(m.ends[slots[c].second]));
        } catch (...) {
          errors[c] = std::current_exception();
          if (!arrived) ready.count_down();  // the others must not wait for this one
        }
      });
    };
    for (std::size_t c = 0; c < copies.size(); ++c) {
      try {
        threads.push_back(copy_thread(c));
      } catch (...) {
        // No thread for this copy and those after it: release the started ones, then report.
        ready.count_down(static_cast<std::ptrdiff_t>(copies.size() - c));
        join_all();
        throw;
      }
    }
    join_all();
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    CopyTiming t;
    for (std::size_t c = 0; c < copies.size(); ++c) {
      Member& m = *slots[c].first;
      DeviceScope scope(m.index);
      float ms = 0;
      GC_CUDA_CHECK(cudaEventElapsedTime(&ms, m.starts[slots[c].second], m.ends[slots[c].second]));
      t.seconds.push_back(static_cast<double>(ms) * 1e-3 / repeats);
    }
    return t;
  }

  void ensure_streams(Member& m, std::size_t n) {
    DeviceScope scope(m.index);
    while (m.streams.size() < n) {
      cudaStream_t s = nullptr;
      cudaEvent_t a = nullptr, b = nullptr;
      GC_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      m.streams.push_back(s);
      GC_CUDA_CHECK(cudaEventCreate(&a));
      m.starts.push_back(a);
      GC_CUDA_CHECK(cudaEventCreate(&b));
      m.ends.push_back(b);
    }
  }

  // The environment NCCL reads when it starts (it reads it once per process): the network path
  // only when asked, and its INFO log into a file of this group's, so the record can say which
  // transport it chose. A log the user sent elsewhere (NCCL_DEBUG_FILE) is left alone.
  void route_nccl() {
    if (network_only_) {
      ::setenv("NCCL_P2P_DISABLE", "1", 1);
      ::setenv("NCCL_SHM_DISABLE", "1", 1);
    }
    const char* user_file = std::getenv("NCCL_DEBUG_FILE");
    const char* user_level = std::getenv("NCCL_DEBUG");
    if (user_file != nullptr || (user_level != nullptr && !network_only_)) return;
    const char* tmp = std::getenv("TMPDIR");
    std::string path =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpucheck-nccl-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) return;  // no log: the record says the transport is unknown
    ::close(fd);
    nccl_log_ = path;
    ::setenv("NCCL_DEBUG", "INFO", 1);
    ::setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
    ::setenv("NCCL_DEBUG_FILE", nccl_log_.c_str(), 1);
  }

  void init_nccl() {
    if (!comms_.empty()) return;
    nvls_note_ = pin_nccl_nvls_off();
    std::vector<int> devlist;
    for (auto& m : members_) {
      devlist.push_back(m.index);
      DeviceScope scope(m.index);
      GC_CUDA_CHECK(cudaStreamCreateWithFlags(&m.nccl_stream, cudaStreamNonBlocking));
    }
    std::vector<nccl::Comm> comms(members_.size(), nullptr);
    if (span_) {
      // One communicator per device of this process, each a rank of the span: initialised
      // together (a group), as NCCL asks of a process holding several ranks.
      nccl::UniqueId id{};
      std::memcpy(id.internal, span_->id.data(), nccl::kUniqueIdBytes);
      GC_NCCL_CHECK(*nccl_, nullptr, nccl_->ncclGroupStart());
      for (std::size_t i = 0; i < members_.size(); ++i) {
        DeviceScope scope(members_[i].index);
        const nccl::Result r = nccl_->ncclCommInitRank(&comms[i], span_->ranks, id,
                                                       span_->first_rank + static_cast<int>(i));
        if (r != nccl::kSuccess) {
          nccl_->ncclGroupEnd();
          nccl_->fail(r, "ncclCommInitRank", nullptr, __FILE__, __LINE__);
        }
      }
      GC_NCCL_CHECK(*nccl_, nullptr, nccl_->ncclGroupEnd());
    } else {
      GC_NCCL_CHECK(
          *nccl_, nullptr,
          nccl_->ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devlist.data()));
    }
    comms_ = std::move(comms);
  }

  std::vector<Member> members_;
  std::vector<std::vector<bool>> peer_on_;
  std::unique_ptr<PinnedHost> flags_;
  mutable bool nccl_tried_ = false;
  mutable std::unique_ptr<NcclLibrary> nccl_;
  mutable std::string nccl_error_;
  std::vector<nccl::Comm> comms_;
  bool nccl_broken_ = false;
  std::string nvls_note_;
  std::optional<CollectiveSpan> span_;
  bool network_only_ = false;
  std::string nccl_log_;  // NCCL's INFO log of this process, where gpucheck chose the file
};

}  // namespace

std::string pin_nccl_nvls_off() {
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  if (v != nullptr && std::string(v) == "0") return "0 (from the environment)";
  std::string before = v == nullptr ? "unset" : fmt::format("'{}'", v);
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  return fmt::format("0 (set by gpucheck; was {}): gpucheck never uses NVLink multicast", before);
}

std::string start_nccl_root(std::string* error) {
  // Kept loaded: the bootstrap root's thread runs inside it after this returns.
  static std::unique_ptr<NcclLibrary> lib;
  if (!lib) lib = NcclLibrary::open(current_environment(), error);
  if (!lib) return {};
  nccl::UniqueId id{};
  const nccl::Result r = lib->ncclGetUniqueId(&id);
  if (r != nccl::kSuccess) {
    *error =
        fmt::format("ncclGetUniqueId: {} ({})", lib->ncclGetErrorString(r), nccl_result_name(r));
    return {};
  }
  return std::string(id.internal, nccl::kUniqueIdBytes);
}

std::unique_ptr<PeerGroup> make_cuda_peer_group(const std::vector<std::string>& device_ids) {
  return std::make_unique<CudaPeerGroup>(device_ids);
}

}  // namespace gpucheck::cuda
