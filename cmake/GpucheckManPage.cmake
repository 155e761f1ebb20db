# cmake -P: gpucheck.1 from the built binary's --help with help2man, each subcommand's --help in
# a COMMANDS section of the same page: every subcommand path the binary's `__cli-spec` names.
# Inputs: GPUCHECK, HELP2MAN, OUT.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/GpucheckCliSpec.cmake)
gpucheck_cli_spec(${GPUCHECK} spec)
gpucheck_cli_count("${spec}" count)
math(EXPR last "${count} - 1")
set(COMMANDS "")
foreach(i RANGE 1 ${last})
  gpucheck_cli_command("${spec}" ${i} cmd)
  list(APPEND COMMANDS "${cmd_path}")
endforeach()
get_filename_component(out_dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${out_dir})
set(include_file ${OUT}.h2m)
set(text "[COMMANDS]\n")
foreach(cmd IN LISTS COMMANDS)
  separate_arguments(words UNIX_COMMAND "${cmd}")
  execute_process(COMMAND ${GPUCHECK} ${words} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc
                  ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gpucheck ${cmd} --help exited ${rc}")
  endif()
  # CLI11 prints the path it was run as: the page names the command.
  string(REPLACE "${GPUCHECK}" "gpucheck" help "${help}")
  # roff: backslashes doubled, a line starting with . or ' protected.
  string(REPLACE "\\" "\\\\" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND text ".SS \"gpucheck ${cmd}\"\n.nf\n${help}\n.fi\n")
endforeach()
string(APPEND text "[SEE ALSO]\nThe JSON schema and the shipped profiles are in /usr/share/gpucheck (or \
<prefix>/share/gpucheck). README.md, docs/CHECKS.md and docs/PERFORMANCE.md in the sources.\n")
file(WRITE ${include_file} "${text}")
execute_process(
  COMMAND ${HELP2MAN} --no-info --section 1 --name "is this machine's GPU stack set up right, and how fast is it really?"
          --include ${include_file} --output ${OUT} ${GPUCHECK}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
