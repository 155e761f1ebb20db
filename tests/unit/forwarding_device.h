// A Device that passes every core method (and nothing more) to another device: the base of the
// unit tests' fakes, which override what they change. It implements exactly the pure methods of
// backends/device.h, so it also shows what a new backend must write.
#pragma once

#include "backends/device.h"

#include <memory>
#include <utility>

namespace gpucheck::fakes {

class ForwardingDevice : public Device {
 public:
  explicit ForwardingDevice(std::unique_ptr<Device> inner) : d_(std::move(inner)) {}
  const DeviceIdentity& identity() const override { return d_->identity(); }
  bool is_host() const override { return d_->is_host(); }
  MemoryBudget memory_budget() const override { return d_->memory_budget(); }
  std::optional<std::string> unsupported_reason(Op op, DType dt, Layout l) const override {
    return d_->unsupported_reason(op, dt, l);
  }
  std::string impl(Op op, DType dt) const override { return d_->impl(op, dt); }
  std::string compute_type(Op op, DType dt) const override { return d_->compute_type(op, dt); }
  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override { return d_->allocate(bytes); }
  std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) override {
    return d_->allocate_host(bytes, kind);
  }
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    d_->upload(dst, src, bytes);
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    d_->download(dst, src, bytes);
  }
  void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    d_->copy(dst, src, bytes);
  }
  void exp(DType dt, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) override {
    d_->exp(dt, x, y, n);
  }
  void gemm(DType dt, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    d_->gemm(dt, s, a, b, c);
  }
  void conv2d(DType dt, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    d_->conv2d(dt, s, x, w, y);
  }
  void launch_empty() override { d_->launch_empty(); }
  void synchronize() override { d_->synchronize(); }
  double time_on_device(const std::function<void()>& enqueue) override {
    return d_->time_on_device(enqueue);
  }

 protected:
  Device& inner() { return *d_; }

 private:
  std::unique_ptr<Device> d_;
};

}  // namespace gpucheck::fakes
