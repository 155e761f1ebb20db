# Unity groups and the hot/control split of gpucheck_lib: the two levers on a cold build.
#
# A cold build spends its time instantiating the same templates in every file: nlohmann/json is
# included by 141 of 201 translation units, fmt by 140, CLI11, toml++ and spdlog by the files
# that parse or log. A unity build compiles each folder's files in groups of
# GPUCHECK_UNITY_GROUP_SIZE, so those instantiations happen once per group instead of once per
# file. CMake leaves a file with options of its own (the ISA-specific kernels) out of any group.
# OFF by default: after an edit, a file alone recompiles faster than its group. The quickstart,
# tools/build.sh (the test command and CI), tools/package.sh and the quick/ci/release presets turn
# it on: they build from cold, and CI's main pass then fails on a name two files of one group both
# define. The sanitizer pass keeps it off, so a file that does not include what it uses fails there.
set(GPUCHECK_UNITY OFF CACHE BOOL "Compile gpucheck_lib's files in unity groups per folder (the \
faster cold build; OFF: every file alone, the faster rebuild after an edit)")
set(GPUCHECK_UNITY_GROUP_SIZE 8 CACHE STRING "Files per unity group")

# gpucheck_cpp_sources(target out): the target's own .cpp files as absolute paths (generator
# expressions, such as another target's objects, left out).
function(gpucheck_cpp_sources target out)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(found)
  foreach(src IN LISTS sources)
    if(NOT src MATCHES "[.]cpp$" OR src MATCHES "^[$]<")
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${source_dir} OUTPUT_VARIABLE abs)
    list(APPEND found ${abs})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Groups a target's C++ sources by folder, GPUCHECK_UNITY_GROUP_SIZE at a time. A rebuild after
# touching one file recompiles its group (one compiler run, about as long as its slowest file
# times a small factor), not the whole folder.
function(gpucheck_unity_groups target)
  if(NOT GPUCHECK_UNITY)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  gpucheck_cpp_sources(${target} sources)
  foreach(abs IN LISTS sources)
    cmake_path(GET abs PARENT_PATH folder)
    file(RELATIVE_PATH folder_rel ${PROJECT_SOURCE_DIR} ${folder})
    string(MAKE_C_IDENTIFIER "${folder_rel}" folder_id)
    if(NOT DEFINED count_${folder_id})
      set(count_${folder_id} 0)
    endif()
    math(EXPR group "${count_${folder_id}} / ${GPUCHECK_UNITY_GROUP_SIZE}")
    math(EXPR count_${folder_id} "${count_${folder_id}} + 1")
    set_property(SOURCE ${abs} TARGET_DIRECTORY ${target} PROPERTY UNITY_GROUP "${folder_id}_${group}")
  endforeach()
endfunction()

# Moves a target's C++ files under the given folders (relative to the current source directory)
# into the object library ${target}_hot, built with the build type's optimisation instead of
# GPUCHECK_CONTROL_OPT, and links its objects back into the target. A separate target rather
# than per-file options because a file with options of its own can join no unity group.
function(gpucheck_split_hot target)
  if(NOT GPUCHECK_CONTROL_OPT OR NOT CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    return()
  endif()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" type)
  separate_arguments(type_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS_${type}}")
  list(FILTER type_flags INCLUDE REGEX "^-O")
  get_target_property(sources ${target} SOURCES)
  set(control)
  set(hot)
  foreach(src IN LISTS sources)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE abs)
    set(is_hot FALSE)
    foreach(dir IN LISTS ARGN)
      if(abs MATCHES "^${CMAKE_CURRENT_SOURCE_DIR}/${dir}/.*[.]cpp$")
        set(is_hot TRUE)
      endif()
    endforeach()
    if(is_hot)
      list(APPEND hot ${abs})
    else()
      list(APPEND control ${src})
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY SOURCES ${control})
  add_library(${target}_hot OBJECT ${hot})
  gpucheck_target_defaults(${target}_hot)
  get_target_property(libs ${target} LINK_LIBRARIES)
  target_link_libraries(${target}_hot PRIVATE ${libs})
  # The target's own settings (its include folders, definitions and those of what it links),
  # then the build type's -O after GPUCHECK_CONTROL_OPT: the last -O wins.
  target_include_directories(${target}_hot PRIVATE $<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>)
  target_compile_definitions(${target}_hot PRIVATE $<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>)
  target_compile_options(${target}_hot PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${type_flags}>)
  target_sources(${target} PRIVATE $<TARGET_OBJECTS:${target}_hot>)
  # Generated files the target waits for (the Vulkan shaders' SPIR-V) are included by hot files.
  get_target_property(waits ${target} MANUALLY_ADDED_DEPENDENCIES)
  if(waits)
    add_dependencies(${target}_hot ${waits})
  endif()
  gpucheck_unity_groups(${target}_hot)
endfunction()
