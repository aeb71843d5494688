# The include graph points down: app (3) -> the engine's face (2: its public headers engine/include/qwenchat and
# the runtime that implements them, engine/runtime and engine/remote) -> engine internals (1: model, gguf,
# tokenizer, generate, reference, cuda, ...) -> kernels (0).
# Run as `cmake -DROOT=<repo> [-DEXCEPTIONS=<file>] -P check_include_layers.cmake`; fails listing every
# #include "..." of a file that names a header of a higher layer, unless the pair is in the exceptions file
# (default include_exceptions.txt beside this script; each line names the issue that removes it). An
# exception whose include is gone fails too, so the list only shrinks. Resolution like the compiler's quoted includes: the including file's directory first,
# then the include roots (engine/include, engine, kernels, kernels/include, app). An include that resolves to no repository
# file (a system or third-party header) is not checked. Some public headers are ground-floor vocabulary, plain
# structs the internals use (qwenchat/result.h, kernel_config.h, sampling.h, chat.h, stats.h, json_depth.h):
# layer 1.
#
# One face (issue #11): a file under app/ includes from the engine only its public headers
# (engine/include/qwenchat/*), except the tools that are meant to reach inside: app/bench, app/convert,
# app/mkmodel and app/cli (qwenchat-cli's tokenize, logits and info commands inspect the internals). The
# build enforces the same with include paths (engine/CMakeLists.txt: qwenchat_tools); this check names the
# file. The exceptions file covers these too.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<repository root> -P check_include_layers.cmake")
endif()
set(roots "${ROOT}/engine/include" "${ROOT}/engine" "${ROOT}/kernels" "${ROOT}/kernels/include" "${ROOT}/app")
set(vocabulary "engine/include/qwenchat/result.h" "engine/include/qwenchat/kernel_config.h"
    "engine/include/qwenchat/sampling.h" "engine/include/qwenchat/chat.h" "engine/include/qwenchat/stats.h"
    "engine/include/qwenchat/json_depth.h")
set(tools_reaching_inside "^app/(bench|convert|mkmodel|cli)/")

function(layer_of rel out)
  if(rel MATCHES "^kernels/")
    set(l 0)
  elseif(rel IN_LIST vocabulary)
    set(l 1)
  elseif(rel MATCHES "^engine/(include|runtime|remote)/")
    set(l 2)
  elseif(rel MATCHES "^engine/")
    set(l 1)
  elseif(rel MATCHES "^app/")
    set(l 3)
  else()
    set(l -1)
  endif()
  set(${out} ${l} PARENT_SCOPE)
endfunction()

if(NOT EXCEPTIONS)
  set(EXCEPTIONS "${CMAKE_CURRENT_LIST_DIR}/include_exceptions.txt")
endif()
file(STRINGS "${EXCEPTIONS}" exception_lines REGEX "^[^#].* -> ")
set(exceptions "")
foreach(line IN LISTS exception_lines)
  string(REGEX REPLACE "^([^ ]+) -> ([^ ]+).*$" "\\1 -> \\2" pair "${line}")
  list(APPEND exceptions "${pair}")
endforeach()

file(GLOB_RECURSE files RELATIVE "${ROOT}"
     "${ROOT}/kernels/*.h" "${ROOT}/kernels/*.cuh" "${ROOT}/kernels/*.cu" "${ROOT}/kernels/*.cpp"
     "${ROOT}/engine/*.h" "${ROOT}/engine/*.cpp" "${ROOT}/engine/*.cu"
     "${ROOT}/app/*.h" "${ROOT}/app/*.cpp" "${ROOT}/app/*.cu")
set(violations "")
set(used_exceptions "")
set(checked 0)
foreach(f IN LISTS files)
  layer_of("${f}" from)
  get_filename_component(dir "${ROOT}/${f}" DIRECTORY)
  file(STRINGS "${ROOT}/${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" inc "${line}")
    set(target "")
    foreach(base IN ITEMS "${dir}" ${roots})
      if(EXISTS "${base}/${inc}" AND NOT IS_DIRECTORY "${base}/${inc}")
        file(REAL_PATH "${base}/${inc}" abs)
        file(RELATIVE_PATH target "${ROOT}" "${abs}")
        break()
      endif()
    endforeach()
    if(target STREQUAL "")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    layer_of("${target}" to)
    set(problem "")
    if(to GREATER from)
      set(problem "  ${f} (layer ${from}) includes ${target} (layer ${to})")
    elseif(f MATCHES "^app/" AND NOT f MATCHES "${tools_reaching_inside}" AND target MATCHES "^engine/"
           AND NOT target MATCHES "^engine/include/qwenchat/")
      set(problem "  ${f} (app) includes ${target}, inside the engine (the app includes engine/include/qwenchat only)")
    endif()
    if(problem)
      if("${f} -> ${target}" IN_LIST exceptions)
        list(APPEND used_exceptions "${f} -> ${target}")
      else()
        list(APPEND violations "${problem}")
      endif()
    endif()
  endforeach()
endforeach()
foreach(e IN LISTS exceptions)
  if(NOT e IN_LIST used_exceptions)
    list(APPEND violations "  stale exception (the include is gone: delete its line): ${e}")
  endif()
endforeach()
list(LENGTH files n_files)
list(LENGTH used_exceptions n_exc)
if(violations)
  list(JOIN violations "\n" text)
  message(FATAL_ERROR "include arrows pointing up (layers: kernels 0, engine internals 1, engine face 2, app 3) "
                      "or into the engine past its face:\n${text}")
endif()
message(STATUS "include layers: ${n_files} files, ${checked} repository includes, none pointing up, "
               "none from the app past the engine's face "
               "(${n_exc} listed exceptions, ${EXCEPTIONS})")
