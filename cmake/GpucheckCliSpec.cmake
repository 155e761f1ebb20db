# For the cmake -P scripts that write the man page and the completions: the command line as the
# built binary describes it (`gpucheck __cli-spec`, src/app/cli_spec.h), so neither can drift
# from the code.

# gpucheck_cli_spec(<gpucheck> <out>): the spec's JSON text.
function(gpucheck_cli_spec gpucheck out)
  execute_process(COMMAND ${gpucheck} __cli-spec OUTPUT_VARIABLE spec ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${gpucheck} __cli-spec exited ${rc}: ${err}")
  endif()
  set(${out} "${spec}" PARENT_SCOPE)
endfunction()

# gpucheck_cli_command(<spec> <index> <prefix>): command <index> of the spec (0 is gpucheck
# itself) as <prefix>_path ("" or "report show"), <prefix>_subcommands and <prefix>_options
# (every option name, "-o" and "--output" alike), both lists.
function(gpucheck_cli_command spec index prefix)
  string(JSON path GET "${spec}" commands ${index} path)
  set(subs "")
  string(JSON n LENGTH "${spec}" commands ${index} subcommands)
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON s GET "${spec}" commands ${index} subcommands ${i})
      list(APPEND subs ${s})
    endforeach()
  endif()
  set(options "")
  string(JSON n LENGTH "${spec}" commands ${index} options)
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      string(JSON m LENGTH "${spec}" commands ${index} options ${i} names)
      math(EXPR mlast "${m} - 1")
      foreach(j RANGE ${mlast})
        string(JSON name GET "${spec}" commands ${index} options ${i} names ${j})
        list(APPEND options ${name})
      endforeach()
    endforeach()
  endif()
  set(${prefix}_path "${path}" PARENT_SCOPE)
  set(${prefix}_subcommands "${subs}" PARENT_SCOPE)
  set(${prefix}_options "${options}" PARENT_SCOPE)
endfunction()

# gpucheck_cli_count(<spec> <out>): how many commands the spec holds, gpucheck itself included.
function(gpucheck_cli_count spec out)
  string(JSON n LENGTH "${spec}" commands)
  set(${out} ${n} PARENT_SCOPE)
endfunction()
