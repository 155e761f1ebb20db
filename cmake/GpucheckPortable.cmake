# The portable binary: at load time gpucheck needs only the C library family (libc,
# libm, ld-linux; libdl, libpthread, librt where the toolchain asks). fmt, spdlog and toml++ come
# from their headers alone (fmt's implementation compiled once, in src/core/fmt_impl.cpp),
# libstdc++ and libgcc are linked statically, and every optional library (the BLAS, the GPU
# stacks) is opened at run time. tests/cli/test_binary_deps.cpp holds it to that.
option(GPUCHECK_STATIC_RUNTIME "Link libstdc++ and libgcc statically into gpucheck" ON)

find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)

# fmt: its headers, without FMT_HEADER_ONLY (which compiles fmt's implementation again in every
# file that formats: 6 s of CPU each); src/core/fmt_impl.cpp compiles it once, from the same
# headers, into gpucheck_lib.
get_target_property(gpucheck_fmt_include fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
add_library(gpucheck_fmt INTERFACE)
target_include_directories(gpucheck_fmt SYSTEM INTERFACE ${gpucheck_fmt_include})
add_library(gpucheck::fmt ALIAS gpucheck_fmt)

# spdlog: Debian's spdlog::spdlog_header_only links fmt::fmt, the shared library; take its headers
# and definitions with header-only fmt instead.
get_target_property(gpucheck_spdlog_include spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(gpucheck_spdlog_defs spdlog::spdlog_header_only INTERFACE_COMPILE_DEFINITIONS)
add_library(gpucheck_spdlog INTERFACE)
target_include_directories(gpucheck_spdlog SYSTEM INTERFACE ${gpucheck_spdlog_include})
if(gpucheck_spdlog_defs)
  target_compile_definitions(gpucheck_spdlog INTERFACE ${gpucheck_spdlog_defs})
endif()
target_link_libraries(gpucheck_spdlog INTERFACE gpucheck_fmt Threads::Threads)
add_library(gpucheck::spdlog ALIAS gpucheck_spdlog)

# toml++: Debian's CMake target is its compiled library (libtomlplusplus.so.3); the headers alone
# are the whole library when TOML_HEADER_ONLY is 1.
find_path(GPUCHECK_TOMLPP_INCLUDE_DIR toml++/toml.h DOC "Directory holding toml++/toml.h")
if(NOT GPUCHECK_TOMLPP_INCLUDE_DIR)
  message(FATAL_ERROR "toml++ headers not found: install libtomlplusplus-dev")
endif()
add_library(gpucheck_tomlplusplus INTERFACE)
target_include_directories(gpucheck_tomlplusplus SYSTEM INTERFACE ${GPUCHECK_TOMLPP_INCLUDE_DIR})
target_compile_definitions(gpucheck_tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
add_library(gpucheck::tomlplusplus ALIAS gpucheck_tomlplusplus)

# The installed executable: libstdc++ and libgcc inside it (no GLIBCXX_* or GCC_* versions asked
# of the machine).
# src/app/glibc_floor.cpp keeps what the static runtime calls on glibc 2.34's symbols.
function(gpucheck_portable_executable target)
  if(GPUCHECK_STATIC_RUNTIME AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src/app/glibc_floor.cpp)
    if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
      target_link_options(${target} PRIVATE -Wl,--wrap=hypot)
    endif()
  endif()
endfunction()
