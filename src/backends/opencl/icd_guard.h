// Keeps this process's OpenCL loader away from .icd entries that would hang it. ocl-icd opens
// every *.icd of its vendors directory with a plain fopen: a FIFO there (planted, or left by a
// broken package script) blocks the first OpenCL call of every program until its probe timeout.
// Before the loader's first call, gpucheck's OpenCL children point it (OCL_ICD_VENDORS) at a
// private directory of links to the regular .icd files only; the inventory names what was left
// out (icd_inventory.h), and doctor's opencl_icd_loads reports it.
#pragma once

#include "backends/opencl/icd_inventory.h"
#include "backends/opencl/temp_dir.h"

#include <memory>
#include <vector>

namespace gpucheck::opencl {

class IcdGuard {
 public:
  // Looks at what the loader would read (this process's environment, files only) and, when an
  // entry is no regular file, sets OCL_ICD_VENDORS to the private directory. Call it before
  // the loader's first call (it reads the variable then), while the process has one thread.
  static std::unique_ptr<IcdGuard> protect_this_process();

  // The entries the loader was kept from; empty when nothing needed changing.
  const std::vector<IrregularIcd>& skipped() const { return skipped_; }

 private:
  IcdGuard() = default;
  std::vector<IrregularIcd> skipped_;
  std::unique_ptr<TempDir> dir_;  // removed, with its links, when the guard goes
};

}  // namespace gpucheck::opencl
