# Finds a C/C++ library through pkg-config when available, else through find_path/find_library (the GPU
# machine has no pkg-config and gets Debian packages unpacked under a prefix named in CMAKE_PREFIX_PATH).
# Creates the imported target qc::<target>.
function(qwenchat_find_library target pc_name header lib)
  if(TARGET qc::${target})
    return()
  endif()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(QC_${target} QUIET IMPORTED_TARGET ${pc_name})
    if(QC_${target}_FOUND)
      add_library(qc::${target} ALIAS PkgConfig::QC_${target})
      return()
    endif()
  endif()
  find_path(QC_${target}_INCLUDE ${header})
  find_library(QC_${target}_LIB ${lib})
  if(NOT QC_${target}_INCLUDE OR NOT QC_${target}_LIB)
    message(FATAL_ERROR "qwenchat: ${pc_name} not found (header ${header}, library ${lib}); "
                        "on Debian 12: scripts/qwenchat.sh installs it")
  endif()
  add_library(qc::${target} UNKNOWN IMPORTED)
  set_target_properties(qc::${target} PROPERTIES IMPORTED_LOCATION ${QC_${target}_LIB}
                                                 INTERFACE_INCLUDE_DIRECTORIES ${QC_${target}_INCLUDE})
endfunction()
