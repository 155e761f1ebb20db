# cmake -DSRC=<src dir> [-DSTAMP=<file>] -P GpucheckCheckLayers.cmake
# Fails (and names each file and include) when a file of one part of src/ includes a header of a
# part it may not use (GpucheckLayersRules.cmake); touches STAMP when all is well.
cmake_minimum_required(VERSION 3.25)
if(NOT SRC)
  message(FATAL_ERROR "GpucheckCheckLayers: -DSRC=<src dir> is required")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/GpucheckLayersRules.cmake)
file(GLOB_RECURSE files RELATIVE ${SRC} ${SRC}/*.h ${SRC}/*.cpp ${SRC}/*.cu ${SRC}/*.cuh)
# The parts are src/'s folders: a header of theirs written <part/x.h> would pass the quoted-form
# check below unseen, and "../part/x.h" or "./x.h" name a part by where the file sits.
set(parts "")
foreach(rel IN LISTS files)
  string(REGEX MATCH "^[^/]+/" part "${rel}")
  if(part)
    string(REGEX REPLACE "/$" "" part "${part}")
    list(APPEND parts ${part})
  endif()
endforeach()
list(REMOVE_DUPLICATES parts)
# The line of `text` in the file `path`, 1-based: file(STRINGS) gives the lines that match
# without their numbers, and a message that names the line sends the reader straight to it.
function(gpucheck_line_of path text out)
  file(READ ${path} content)
  string(FIND "${content}" "${text}" at)
  set(number 0)
  if(NOT at EQUAL -1)
    string(SUBSTRING "${content}" 0 ${at} before)
    string(REGEX REPLACE "[^\n]" "" newlines "${before}")
    string(LENGTH "${newlines}" number)
  endif()
  math(EXPR number "${number} + 1")
  set(${out} ${number} PARENT_SCOPE)
endfunction()
set(problems "")
foreach(rel IN LISTS files)
  string(REGEX MATCH "^[^/]+" part "${rel}")
  if(part STREQUAL rel)
    continue()  # a file at the top of src/ belongs to no part
  endif()
  set(allowed core ${part})
  if(DEFINED GPUCHECK_MAY_USE_${part})
    set(allowed ${GPUCHECK_MAY_USE_${part}})
  endif()
  # Rule "no angle brackets": <part/x.h> is a gpucheck header the quoted-form rules would not
  # see. Rule "no relative path": "../x.h", "./x.h", "part/../x.h" (or <../x.h>) name a header
  # by where the including file sits, which hides the part it belongs to.
  file(STRINGS ${SRC}/${rel} other_forms
       REGEX "^[ \t]*#[ \t]*include[ \t]*(<[A-Za-z0-9_]+/|[<\"][.][.]?/|[<\"][^>\"]*/[.][.]?/)")
  foreach(line IN LISTS other_forms)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*([<\"][^>\"]*[>\"]).*$" "\\1" header "${line}")
    string(REGEX REPLACE "^<([A-Za-z0-9_]+)/.*$" "\\1" used "${header}")
    gpucheck_line_of(${SRC}/${rel} "${line}" number)
    if(header MATCHES "(^.|/)[.][.]?/")
      string(APPEND problems "  src/${rel}:${number} includes ${header}: rule \"no relative path\": "
                             "a gpucheck header is named from src/ (\"part/file.h\"), never "
                             "relative to the file\n")
    elseif(used IN_LIST parts)
      string(APPEND problems "  src/${rel}:${number} includes ${header}: rule \"no angle "
                             "brackets\": a gpucheck header is included in quotes "
                             "(\"${used}/...\"), as the layer check reads it\n")
    endif()
  endforeach()
  # Rule "layers": a part includes only the parts GPUCHECK_MAY_USE_<part> names.
  file(STRINGS ${SRC}/${rel} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[A-Za-z0-9_]+/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([A-Za-z0-9_]+)/.*$" "\\1" used "${line}")
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*$" "\\1" header "${line}")
    if(NOT used IN_LIST allowed)
      list(JOIN allowed ", " words)
      gpucheck_line_of(${SRC}/${rel} "${line}" number)
      string(APPEND problems "  src/${rel}:${number} includes \"${header}\": rule \"layers\": "
                             "${part}/ may use ${words}\n")
    endif()
    # Rule "backend internals": src/backends/<backend>/ is reached from outside it only
    # through the headers GPUCHECK_BACKEND_PUBLIC_<backend> declares.
    if(header MATCHES "^backends/([A-Za-z0-9_]+)/(.+)$")
      set(backend ${CMAKE_MATCH_1})
      set(inner ${CMAKE_MATCH_2})
      if(NOT rel MATCHES "^backends/${backend}/" AND NOT inner IN_LIST GPUCHECK_BACKEND_PUBLIC_${backend})
        list(JOIN GPUCHECK_BACKEND_PUBLIC_${backend} ", " words)
        if(NOT words)
          set(words "none")
        endif()
        gpucheck_line_of(${SRC}/${rel} "${line}" number)
        string(APPEND problems "  src/${rel}:${number} includes \"${header}\": rule \"backend "
                               "internals\": outside backends/${backend}/ its public headers "
                               "are ${words}\n")
      endif()
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "an include crosses the layers of src/ (docs/ARCHITECTURE.md, Layers; "
                      "cmake/GpucheckLayersRules.cmake):\n${problems}")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
