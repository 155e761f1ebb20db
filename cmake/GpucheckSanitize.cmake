# GPUCHECK_SANITIZE / GPUCHECK_FUZZ: every target built with ASan + UBSan (undefined behaviour
# aborts instead of printing and going on), and with GPUCHECK_FUZZ the code instrumented for
# libFuzzer's coverage (the fuzz targets link -fsanitize=fuzzer themselves).
if(GPUCHECK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPUCHECK_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(GPUCHECK_SANITIZE ON)
endif()
if(GPUCHECK_SANITIZE)
  set(sanitizers -fsanitize=address,undefined -fno-sanitize-recover=undefined
                 -fno-omit-frame-pointer)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${sanitizers}>")
  add_link_options(-fsanitize=address,undefined)
  if(GPUCHECK_FUZZ)
    add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
  endif()
endif()
