# One place for the compile settings every gpucheck target shares.

# Most of a cold build's time is the optimiser, not the parser: in a command file such as
# app/bench_command.cpp, -ftime-report gives 64 % to "opt and generate" at -O3 (nlohmann/json
# and CLI11 templates instantiated in every file), and -O1 takes its CPU time from 27 s to 15.5 s
# (precompiling json, CLI11 and fmt saved nothing measurable). The code that moves or checks
# data in bulk (backends/, bench/, stress/) keeps the build type's flags; the rest is control
# code (argument parsing, JSON documents, views, checks) whose speed nobody can measure, and is
# built at GPUCHECK_CONTROL_OPT. docs/design/build.md, "Build time", has the measurements.
set(GPUCHECK_CONTROL_OPT "-O1" CACHE STRING
    "Optimisation for control code (app, core, doctor, probe, qualify, report, tests) in \
Release and RelWithDebInfo builds; empty: the build type's own")

# ccache, where present and no launcher was chosen: a rebuild after a branch switch or in a
# second checkout costs what changed. CCACHE_BASEDIR makes the cache hit across checkouts (the
# project's paths become relative to the build directory).
set(GPUCHECK_CCACHE AUTO CACHE STRING "Compile through ccache (AUTO: where it is found; ON; OFF)")
set_property(CACHE GPUCHECK_CCACHE PROPERTY STRINGS AUTO ON OFF)
if(NOT GPUCHECK_CCACHE STREQUAL "OFF" AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(GPUCHECK_CCACHE_PROGRAM ccache)
  if(GPUCHECK_CCACHE_PROGRAM)
    set(gpucheck_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
        ${GPUCHECK_CCACHE_PROGRAM})
    foreach(lang C CXX CUDA)
      set(CMAKE_${lang}_COMPILER_LAUNCHER ${gpucheck_launcher})
    endforeach()
    message(STATUS "gpucheck: compiling through ${GPUCHECK_CCACHE_PROGRAM}")
  elseif(GPUCHECK_CCACHE STREQUAL "ON")
    message(FATAL_ERROR "GPUCHECK_CCACHE=ON but ccache was not found (apt install ccache)")
  endif()
endif()

function(gpucheck_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  # C++ only: these flags must never reach nvcc (it gets its own through -Xcompiler).
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra>)
  # GCC 12 reports -Wrestrict inside libstdc++'s own std::string copies when they are inlined at
  # -O2 (GCC bug 105329: "literal" + std::string, even a one-character assignment); the warning
  # points at char_traits.h, not at our code. Fixed in GCC 13.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  # Every target is control code (GPUCHECK_CONTROL_OPT after the build type's flags: the last -O
  # wins) but for gpucheck_lib's bulk-data folders, which gpucheck_split_hot
  # (cmake/GpucheckUnity.cmake) builds with the build type's flags. Tests are control code too:
  # the kernels they run are in gpucheck_lib.
  if(GPUCHECK_CONTROL_OPT AND CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${GPUCHECK_CONTROL_OPT}>)
  endif()
endfunction()
