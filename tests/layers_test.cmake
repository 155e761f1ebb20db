# cmake -DCHECKER=<GpucheckCheckLayers.cmake> -DFIXTURE=<src tree> -DREAL=<src> -P layers_test.cmake
# The layer check refuses each forbidden include of the fixture tree, naming the file and the
# header, lets the allowed ones be, and passes the real src/.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${FIXTURE} -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layer check passed a tree with forbidden includes:\n${out}${err}")
endif()
foreach(expected
    "src/backends/cuda/reaches_up.cpp includes \"bench/engine.h\": backends/ may use core, host, backends"
    "src/bench/reaches_probe.cpp includes \"probe/backend_probes.h\": bench/ may use core, host, backends, bench"
    "src/core/reaches_report.h includes \"report/views.h\": core/ may use core"
    "src/host/reaches_doctor.cpp includes \"doctor/system_view.h\": host/ may use core, host"
    "src/bench/other_forms.cpp includes <bench/engine.h>: a gpucheck header is included in quotes"
    "src/bench/other_forms.cpp includes \"../probe/backend_probes.h\": a gpucheck header is named from src/")
  string(FIND "${err}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check did not say '${expected}':\n${err}")
  endif()
endforeach()
foreach(allowed "allowed.cpp" "<vector>" "backends/device.h\"" "backends/registry.h\"" "core/errors.h\""
                "core/files.h\"" "host/cpu_info.h\"" "host/memory_info.h\"")
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
