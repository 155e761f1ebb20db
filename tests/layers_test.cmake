# cmake -DCHECKER=<GpucheckCheckLayers.cmake> -DFIXTURE=<src tree> -DREAL=<src> -DSCRATCH=<dir>
#       -P layers_test.cmake
# The layer check refuses each forbidden include of the fixture tree, naming the file, the line,
# the header and the rule, lets the allowed ones be, and passes the real src/. In SCRATCH it
# plants each refused spelling alone in an otherwise clean tree, so that no rule passes only
# because another one fired in the same file.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${FIXTURE} -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layer check passed a tree with forbidden includes:\n${out}${err}")
endif()
foreach(expected
    "src/backends/cuda/reaches_up.cpp:3 includes \"bench/engine.h\": rule \"layers\": backends/ may use core, host, backends"
    "src/bench/reaches_probe.cpp:2 includes \"probe/backend_probes.h\": rule \"layers\": bench/ may use core, host, backends, bench"
    "src/core/reaches_report.h:4 includes \"report/views.h\": rule \"layers\": core/ may use core"
    "src/host/reaches_doctor.cpp:3 includes \"doctor/system_view.h\": rule \"layers\": host/ may use core, host"
    "src/probe/reaches_internals.cpp:4 includes \"backends/cuda/cuda_memory.h\": rule \"backend internals\": outside backends/cuda/ its public headers are cuda_backend.h, cuda_driver.h"
    "src/backends/vulkan/reaches_cuda.cpp:2 includes \"backends/cuda/nvml_session.h\": rule \"backend internals\""
    "src/bench/other_forms.cpp:3 includes <bench/engine.h>: rule \"no angle brackets\": a gpucheck header is included in quotes"
    "src/bench/other_forms.cpp:4 includes \"../probe/backend_probes.h\": rule \"no relative path\": a gpucheck header is named from src/")
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check did not say '${expected}':\n${err}")
  endif()
endforeach()
foreach(allowed "allowed.cpp" "<vector>" "backends/device.h\"" "backends/registry.h\"" "core/errors.h\""
                "core/files.h\"" "host/cpu_info.h\"" "host/memory_info.h\""
                "icd_isolation.h\"")
  string(FIND "${err}" "${allowed}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the layer check refused an allowed include (${allowed}):\n${err}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${REAL} -P ${CHECKER}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "src/ crosses its own layers:\n${err}")
endif()

# Each refused spelling alone, in a tree that passes without it.
function(scratch_tree dir planted)
  file(REMOVE_RECURSE ${dir})
  file(WRITE ${dir}/bench/engine.h "#pragma once\n")
  file(WRITE ${dir}/app/main.cpp "// clean\n#include \"bench/engine.h\"\n#include <vector>\n${planted}")
endfunction()
scratch_tree(${SCRATCH}/clean "")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${SCRATCH}/clean -P ${CHECKER}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the layer check refused a clean tree:\n${err}")
endif()
foreach(case
    "#include <bench/engine.h>\n|src/app/main.cpp:4 includes <bench/engine.h>: rule \"no angle brackets\""
    "#include \"../bench/engine.h\"\n|src/app/main.cpp:4 includes \"../bench/engine.h\": rule \"no relative path\""
    "#include \"./main.h\"\n|src/app/main.cpp:4 includes \"./main.h\": rule \"no relative path\""
    "#include <../bench/engine.h>\n|src/app/main.cpp:4 includes <../bench/engine.h>: rule \"no relative path\""
    "#include \"bench/../bench/engine.h\"\n|src/app/main.cpp:4 includes \"bench/../bench/engine.h\": rule \"no relative path\"")
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} planted)
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${case}" ${bar} -1 expected)
  scratch_tree(${SCRATCH}/planted "${planted}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${SCRATCH}/planted -P ${CHECKER}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "the layer check passed a tree with ${planted}")
  endif()
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check did not say '${expected}':\n${err}")
  endif()
endforeach()
