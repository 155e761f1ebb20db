// Whether a process has ended, for tests that check what gpucheck leaves running.
#pragma once

#include <fstream>
#include <string>

namespace gpucheck::testing {

// True when the process is gone or a zombie (it runs nothing; an init that does not reap, as in
// a container, may keep it listed).
inline bool process_gone(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

}  // namespace gpucheck::testing
