# `cmake --build BUILD --target wheel`: BUILD/dist/gpucheck-<version>-py3-none-manylinux_2_34_<arch>.whl
# from the built binary, configs, schema, man page and completions (tools/wheel/build_wheel.py,
# the Python standard library alone). It compiles nothing the gpucheck target has not; the
# stripped binary is staged in BUILD/wheel, away from BUILD/src where the build's own
# src/gpucheck lives. The binary is checked before it is tagged: the C library family alone at
# load time, no symbol newer than GLIBC_2.34.
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  message(STATUS "gpucheck: no python3, so no wheel target (Debian: apt install python3)")
  return()
endif()
set(gpucheck_wheel_strip "")
if(CMAKE_STRIP)
  set(gpucheck_wheel_strip ${CMAKE_STRIP})
endif()
add_custom_target(wheel
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/wheel/build_wheel.py
          --binary $<TARGET_FILE:gpucheck> --version ${PROJECT_VERSION}
          --source-root ${PROJECT_SOURCE_DIR} --generated ${gpucheck_doc_dir}
          --stage ${PROJECT_BINARY_DIR}/wheel --out ${PROJECT_BINARY_DIR}/dist
          --strip "${gpucheck_wheel_strip}" --summary "${PROJECT_DESCRIPTION}"
  COMMENT "Writing the gpucheck wheel into ${PROJECT_BINARY_DIR}/dist"
  VERBATIM)
add_dependencies(wheel gpucheck gpucheck_completion)
if(TARGET gpucheck_man)
  add_dependencies(wheel gpucheck_man)
endif()
