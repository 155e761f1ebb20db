// Writing outputs completely or not at all: a file is written under a temporary name in its own
// directory and renamed into place (node_exporter's textfile collector needs the same), stdout
// writes are checked, and every failure says why (strerror) and is exit 2.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck {

// Checks, before any work, that `path` can be written: its directory exists and is writable,
// and the path is no directory. Throws UsageError "FLAG: cannot write 'PATH': REASON".
void check_output_path(const std::string& path, std::string_view flag);

// Two outputs of one run naming one file (by device and inode where both exist, else by their
// absolute paths with symbolic links followed): UsageError naming both flags. outputs: (flag,
// path) pairs; empty paths (not given) are skipped.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);
bool same_file(const std::string& a, const std::string& b);

// Writes `data` to `path` atomically: a temporary file beside the destination (beside a
// symbolic link's target), flushed to disk, given the old file's mode (or 0666 & ~umask), then
// renamed over it; an existing file keeps its owner and group (written in place where they
// cannot be given to the new file). A dangling symbolic link's target is created. A destination
// that exists and is not a regular file (/dev/null, a FIFO, /dev/stdout) is written in place. A
// signal during the write removes the temporary file (core/stop_signals.h). Throws UsageError
// naming the flag, the file and the reason.
void write_output_file(const std::string& path, std::string_view data, std::string_view flag);

// Writes all of `data` to standard output; UsageError "cannot write to stdout: REASON" when
// it fails (a full disk, a closed stdout).
void write_stdout(std::string_view data);

// Called first thing in main: a closed stdin, stdout or stderr gets a placeholder descriptor, so
// no file gpucheck opens later takes its number (and data meant for stdout lands in it). The
// placeholder for stdout refuses writes with EBADF, as a closed stdout does.
void reserve_standard_fds();

}  // namespace gpucheck
