// Whether a process has ended, for tests that check what gpucheck leaves running.
#pragma once

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

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

// Waits up to 2 s for both to be gone: SIGKILL is delivered at once, but a grandchild's new parent
// (init) may take a moment to reap it. True when both are.
inline bool processes_gone(int child, int grandchild) {
  for (int i = 0; i < 200 && !(process_gone(child) && process_gone(grandchild)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return process_gone(child) && process_gone(grandchild);
}

}  // namespace gpucheck::testing
