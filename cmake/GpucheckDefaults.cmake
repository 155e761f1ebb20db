# One place for the compile settings every gpucheck target shares.
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
endfunction()
