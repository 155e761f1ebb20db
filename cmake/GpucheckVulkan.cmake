# Finds what the Vulkan backend needs at build time: the Khronos headers only (libvulkan.so.1 is
# opened at run time). AUTO builds it where the headers exist, ON insists, OFF skips it. glslc
# (GPUCHECK_GLSLC) compiles the compute shaders bench runs: without it AUTO builds probe and
# doctor only (bench then says the build lacks the shaders), and ON stops.
set(GPUCHECK_HAVE_VULKAN_HEADERS OFF)
if(NOT GPUCHECK_WITH_VULKAN MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "GPUCHECK_WITH_VULKAN must be AUTO, ON or OFF, not '${GPUCHECK_WITH_VULKAN}'")
endif()
if(NOT GPUCHECK_WITH_VULKAN STREQUAL "OFF")
  find_path(GPUCHECK_VULKAN_INCLUDE_DIR NAMES vulkan/vulkan_core.h
            DOC "Directory holding vulkan/vulkan.h and vulkan/vulkan_core.h")
  find_program(GPUCHECK_GLSLC NAMES glslc DOC "GLSL to SPIR-V compiler (shaderc) for the shaders")
  if(GPUCHECK_VULKAN_INCLUDE_DIR AND EXISTS "${GPUCHECK_VULKAN_INCLUDE_DIR}/vulkan/vulkan.h")
    set(GPUCHECK_HAVE_VULKAN_HEADERS ON)
    if(NOT GPUCHECK_GLSLC AND GPUCHECK_WITH_VULKAN STREQUAL "ON")
      message(FATAL_ERROR "GPUCHECK_WITH_VULKAN=ON but glslc was not found: install it for the "
                          "compute shaders (Debian: apt install glslc)")
    elseif(NOT GPUCHECK_GLSLC)
      message(STATUS "gpucheck: Vulkan bench off: glslc not found (Debian: apt install glslc); "
                     "probe and doctor are built")
    endif()
    file(STRINGS "${GPUCHECK_VULKAN_INCLUDE_DIR}/vulkan/vulkan_core.h" _gc_vk_header
         REGEX "^#define VK_HEADER_VERSION [0-9]+")
    string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _gc_vk_header "${_gc_vk_header}")
    message(STATUS "gpucheck: Vulkan headers (VK_HEADER_VERSION ${_gc_vk_header}) at "
                   "${GPUCHECK_VULKAN_INCLUDE_DIR}; glslc: ${GPUCHECK_GLSLC}")
  elseif(GPUCHECK_WITH_VULKAN STREQUAL "ON")
    message(FATAL_ERROR "GPUCHECK_WITH_VULKAN=ON but vulkan/vulkan.h was not found: install the "
                        "Vulkan headers (Debian: apt install libvulkan-dev)")
  else()
    message(STATUS "gpucheck: Vulkan backend off: vulkan/vulkan.h not found (install libvulkan-dev)")
  endif()
endif()
