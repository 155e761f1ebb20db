// The kernel log, read as dmesg reads it (/dev/kmsg, else syslog(2)), and the NVIDIA Xid lines
// in it: doctor's nvidia_xid check reads all of it, stress watches what is new during a run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::host {

// At most this much of the log is judged: its newest whole lines (a live kmsg ring buffer is at
// most 32 MiB; a saved copy may be any size).
inline constexpr std::size_t kMaxKernelLogBytes = std::size_t{32} << 20;

// Which kernel-log interface answered and the text, or why none did.
struct KernelLog {
  std::optional<std::string> text;
  std::string source;
  std::vector<std::string> unreadable;
  // Bytes before `text` that were not read (the log was longer than kMaxKernelLogBytes).
  std::uint64_t skipped_bytes = 0;
};

// The newest whole lines the log holds, up to kMaxKernelLogBytes. root is the described system's
// "/" (--sysroot): a saved kmsg under it (a regular file) is read from its tail by lines, and
// syslog(2) is tried only for the running system (root "/").
KernelLog read_kernel_log(const std::string& root);

// One "NVRM: Xid (PCI:0000:17:00): 79, pid=..., GPU has fallen off the bus." line.
struct XidEvent {
  int code = 0;
  std::string pci;     // as the driver wrote it: "0000:17:00"
  std::string detail;  // the rest of the line after the code
  // Where the line stands in the log: kmsg's sequence number ("4,1100,9000000,-;NVRM: ...") or
  // syslog(2)'s timestamp in microseconds ("<4>[ 9.000000] NVRM: ..."); nullopt when the line
  // has neither. Only comparable between lines of the same kind.
  std::optional<std::uint64_t> position;
  std::string line;  // the whole line as logged
};
std::vector<XidEvent> parse_xids(std::string_view text);

// True when an Xid's PCI address ("0000:17:00", domain optional) names the device whose bus id
// is pci_bus_id ("00000000:17:00.0" or "0000:17:00.0"): domain, bus and device compared as
// numbers, the function ignored.
bool same_pci_device(std::string_view xid_pci, std::string_view pci_bus_id);

// What the kernel logs from now on. /dev/kmsg is read from its end (a saved file too, so a test
// can append to it); syslog(2), which has no position, by the lines that were not there at the
// start. A log that cannot be read is not an error: readable() is false and why() says why.
class KernelLogWatch {
 public:
  explicit KernelLogWatch(const std::string& root);
  ~KernelLogWatch();
  KernelLogWatch(const KernelLogWatch&) = delete;
  KernelLogWatch& operator=(const KernelLogWatch&) = delete;

  bool readable() const { return readable_; }
  const std::string& source() const { return source_; }
  const std::string& why() const { return why_; }
  // The text logged since the watch began (or since the last call).
  std::string read_new();

 private:
  bool readable_ = false;
  std::string source_, why_;
  int fd_ = -1;
  bool regular_file_ = false;      // a saved log: read by lines, a partial last line kept back
  std::string partial_;            // a regular file's last line while it has no newline yet
  std::vector<std::string> seen_;  // syslog(2): the lines at the start
};

}  // namespace gpucheck::host
