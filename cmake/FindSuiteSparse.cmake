# SPDX-License-Identifier: GPL-3.0-or-later
# FindSuiteSparse: imported targets for the SuiteSparse 5.x components this project uses.
# Debian 12 ships SuiteSparse 5.12 without CMake package files, so we look for the headers
# and libraries ourselves.
#
# Result targets (each only if found):
#   SuiteSparse::config SuiteSparse::AMD SuiteSparse::COLAMD SuiteSparse::CAMD
#   SuiteSparse::CCOLAMD SuiteSparse::CHOLMOD SuiteSparse::UMFPACK SuiteSparse::BTF
#   SuiteSparse::KLU
# Variables: SuiteSparse_FOUND, SuiteSparse_VERSION, SuiteSparse_<C>_FOUND.

find_path(SuiteSparse_INCLUDE_DIR SuiteSparse_config.h PATH_SUFFIXES suitesparse)

if(SuiteSparse_INCLUDE_DIR AND EXISTS "${SuiteSparse_INCLUDE_DIR}/SuiteSparse_config.h")
  file(STRINGS "${SuiteSparse_INCLUDE_DIR}/SuiteSparse_config.h" _ss_ver REGEX
       "^#define SUITESPARSE_(MAIN|SUB)_VERSION[ \t]+[0-9]+")
  string(REGEX REPLACE ".*MAIN_VERSION[ \t]+([0-9]+).*" "\\1" _ss_major "${_ss_ver}")
  string(REGEX REPLACE ".*SUB_VERSION[ \t]+([0-9]+).*" "\\1" _ss_minor "${_ss_ver}")
  set(SuiteSparse_VERSION "${_ss_major}.${_ss_minor}")
endif()

# component -> library name, and the components it links against
set(_ss_lib_config suitesparseconfig)
set(_ss_lib_AMD amd)
set(_ss_lib_COLAMD colamd)
set(_ss_lib_CAMD camd)
set(_ss_lib_CCOLAMD ccolamd)
set(_ss_lib_CHOLMOD cholmod)
set(_ss_lib_UMFPACK umfpack)
set(_ss_lib_BTF btf)
set(_ss_lib_KLU klu)
set(_ss_deps_AMD config)
set(_ss_deps_COLAMD config)
set(_ss_deps_CAMD config)
set(_ss_deps_CCOLAMD config)
set(_ss_deps_CHOLMOD AMD COLAMD CAMD CCOLAMD config)
set(_ss_deps_UMFPACK CHOLMOD AMD config)
set(_ss_deps_BTF config)
set(_ss_deps_KLU BTF AMD COLAMD config)

set(_ss_all config AMD COLAMD CAMD CCOLAMD CHOLMOD UMFPACK BTF KLU)
if(NOT SuiteSparse_FIND_COMPONENTS)
  set(SuiteSparse_FIND_COMPONENTS ${_ss_all})
endif()
# find every component the requested ones depend on
set(_ss_needed ${SuiteSparse_FIND_COMPONENTS})
foreach(_c IN LISTS SuiteSparse_FIND_COMPONENTS)
  list(APPEND _ss_needed ${_ss_deps_${_c}})
endforeach()
list(APPEND _ss_needed config AMD COLAMD)
list(REMOVE_DUPLICATES _ss_needed)

foreach(_c IN LISTS _ss_all)
  list(FIND _ss_needed ${_c} _idx)
  if(_idx EQUAL -1)
    continue()
  endif()
  find_library(SuiteSparse_${_c}_LIBRARY NAMES ${_ss_lib_${_c}})
  if(SuiteSparse_${_c}_LIBRARY AND SuiteSparse_INCLUDE_DIR)
    set(SuiteSparse_${_c}_FOUND TRUE)
  else()
    set(SuiteSparse_${_c}_FOUND FALSE)
  endif()
  mark_as_advanced(SuiteSparse_${_c}_LIBRARY)
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SuiteSparse
  REQUIRED_VARS SuiteSparse_INCLUDE_DIR
  VERSION_VAR SuiteSparse_VERSION
  HANDLE_COMPONENTS)
mark_as_advanced(SuiteSparse_INCLUDE_DIR)

if(SuiteSparse_FOUND)
  foreach(_c IN LISTS _ss_all)
    if(SuiteSparse_${_c}_FOUND AND NOT TARGET SuiteSparse::${_c})
      add_library(SuiteSparse::${_c} UNKNOWN IMPORTED)
      set_target_properties(SuiteSparse::${_c} PROPERTIES
        IMPORTED_LOCATION "${SuiteSparse_${_c}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${SuiteSparse_INCLUDE_DIR}")
    endif()
  endforeach()
  foreach(_c IN LISTS _ss_all)
    if(TARGET SuiteSparse::${_c})
      foreach(_d IN LISTS _ss_deps_${_c})
        if(TARGET SuiteSparse::${_d})
          set_property(TARGET SuiteSparse::${_c} APPEND PROPERTY INTERFACE_LINK_LIBRARIES SuiteSparse::${_d})
        endif()
      endforeach()
    endif()
  endforeach()
endif()
