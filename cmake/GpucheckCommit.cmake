# Script mode (cmake -DSRC=<source dir> -DOUT=<file.cpp> -P GpucheckCommit.cmake), run at every
# build: writes the commit the sources are at into OUT, only when it changed, so a rebuild after a
# commit recompiles this one small file and the documents name the commit they were built from
# (read once at configure time, the commit stayed that of the configure).
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${SRC}
    OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(commit "${head}")
  endif()
endif()
set(text "// Generated at build time by cmake/GpucheckCommit.cmake.
#include \"core/version.h\"

namespace gpucheck {
const char* const kGitCommit = \"${commit}\";
}  // namespace gpucheck
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
