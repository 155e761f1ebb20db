// Reading files: small text files (proc, sys, etc) under a root prefix, never throwing, and the
// files a user names (profiles, presets, documents), each bounded and refused with a reason.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

// root / rel, with an empty root meaning "/".
std::filesystem::path under_root(const std::filesystem::path& root, std::string_view rel);

// The folder part of a path as text ("/" for a file at the root or a bare name), as dirname(1)
// gives it for absolute paths.
std::string dirname_of(const std::string& path);

// The whole file, or nullopt when it cannot be opened or read, is no regular file (a FIFO, a
// device, a directory: opened without blocking, never read), or is larger than max_bytes (a
// wrong file must not exhaust memory).
// *why (when given) says why not: strerror, "it is a FIFO", "it is N bytes; the limit is M".
std::optional<std::string> read_text_file(const std::filesystem::path& path,
                                          std::size_t max_bytes = std::size_t{1} << 20,
                                          std::string* why = nullptr);

// Limits for files named on the command line.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;   // profiles, presets
inline constexpr std::size_t kMaxDocumentBytes = std::size_t{1} << 30;  // saved documents

// Opens a file the user named for reading: a regular file of at most max_bytes (checked
// without blocking on a FIFO or reading a device). Returns the descriptor (O_CLOEXEC); throws
// UsageError "FLAG: cannot read 'PATH': REASON".
int open_input_file(const std::string& path, std::size_t max_bytes, std::string_view flag);

// A file the user named: a regular file of at most max_bytes, read whole. Throws UsageError
// "FLAG: cannot read 'PATH': REASON" (No such file or directory, a directory, a FIFO, larger
// than the limit) without blocking on a FIFO or reading a device.
std::string read_input_file(const std::string& path, std::size_t max_bytes, std::string_view flag);

}  // namespace gpucheck
