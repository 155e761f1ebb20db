# Precompiled headers for the header-only libraries nearly every file pulls in: nlohmann/json,
# fmt and the standard containers for gpucheck_lib, GoogleTest and GoogleMock on top for the
# tests. A cold build spends most of its time parsing and instantiating those in every
# translation unit; with the headers precompiled once a target, each file parses only its own
# code (and clang instantiates the PCH's templates once, -fpch-instantiate-templates, which
# CMake adds for it).
#
# What this hides: a file that uses one of these headers without including it compiles anyway.
# The include check that matters (a file including the gpucheck headers it uses) is unaffected,
# as no gpucheck header is precompiled, and the sanitizer pass still compiles every file alone.
set(GPUCHECK_PCH ON CACHE BOOL "Precompile the header-only libraries (the faster cold build)")

set(GPUCHECK_PCH_LIB_HEADERS
  <algorithm> <cstdint> <filesystem> <functional> <map> <memory> <optional> <string>
  <string_view> <vector> <fmt/format.h> <nlohmann/json.hpp>)

# gpucheck_precompile(target [TESTS]): the target's C++ files use the precompiled headers, except
# a file with compile options, definitions or include folders of its own (the ISA-specific
# kernels, the files told which backends are built), which a header precompiled without them
# would not match.
function(gpucheck_precompile target)
  if(NOT GPUCHECK_PCH)
    return()
  endif()
  cmake_parse_arguments(arg "TESTS" "" "" ${ARGN})
  set(headers ${GPUCHECK_PCH_LIB_HEADERS})
  if(arg_TESTS)
    list(APPEND headers <gmock/gmock.h> <gtest/gtest.h>)
  endif()
  set(cxx_headers)
  foreach(header IN LISTS headers)
    list(APPEND cxx_headers "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${cxx_headers})
  gpucheck_cpp_sources(${target} sources)
  foreach(abs IN LISTS sources)
    foreach(prop COMPILE_OPTIONS COMPILE_DEFINITIONS INCLUDE_DIRECTORIES)
      get_source_file_property(value ${abs} TARGET_DIRECTORY ${target} ${prop})
      if(value)
        set_property(SOURCE ${abs} TARGET_DIRECTORY ${target} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
      endif()
    endforeach()
  endforeach()
endfunction()
