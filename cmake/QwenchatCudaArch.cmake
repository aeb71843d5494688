# The CUDA architectures a build compiles for, when the user names none (CMAKE_CUDA_ARCHITECTURES):
# machine code for Ampere (80, 86), Ada (89), Hopper (90) and Blackwell (100 data centre, 120 desktop:
# RTX 50xx, RTX PRO 6000) as far as the installed nvcc knows them, plus PTX of the newest one so that a
# later card JIT-compiles instead of failing. `nvcc --list-gpu-arch` says what this nvcc supports (13.0:
# 75 to 121; 12.4: up to 90), so an older toolkit still configures, with the parts it cannot target
# left out (reported). Each architecture adds compile time; a build for one machine can pass
# -DCMAKE_CUDA_ARCHITECTURES=native (scripts/qwenchat.sh run does when a GPU is present).
function(qwenchat_default_cuda_architectures compiler out_var)
  set(wanted 80 86 89 90 100 120)
  execute_process(COMMAND ${compiler} --list-gpu-arch OUTPUT_VARIABLE listed RESULT_VARIABLE rc ERROR_QUIET)
  set(have "")
  if(rc EQUAL 0)
    string(REGEX MATCHALL "compute_([0-9]+)" found "${listed}")
    foreach(f IN LISTS found)
      string(REPLACE "compute_" "" n "${f}")
      list(APPEND have ${n})
    endforeach()
  else()
    set(have 80 86 89 90)  # an nvcc without --list-gpu-arch (< 11.5) is older than anything newer
  endif()
  set(archs "")
  set(skipped "")
  foreach(a IN LISTS wanted)
    if(a IN_LIST have)
      list(APPEND archs ${a}-real)
    else()
      list(APPEND skipped ${a})
    endif()
  endforeach()
  if(NOT archs)
    message(FATAL_ERROR "nvcc (${compiler}) supports none of the architectures ${wanted}")
  endif()
  list(POP_BACK archs newest)
  string(REPLACE "-real" "" newest_both "${newest}")
  list(APPEND archs ${newest_both})  # SASS + PTX for the newest
  if(skipped)
    message(STATUS "qwenchat: this nvcc cannot target sm_${skipped}; left out")
  endif()
  set(${out_var} ${archs} PARENT_SCOPE)
endfunction()
