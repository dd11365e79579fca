# SPDX-License-Identifier: GPL-3.0-or-later
# One line registers a test or a benchmark:
#   mor_add_test(chain)            -> tests/test_chain.cpp, run by ctest as "chain"
#   mor_add_test(chain LABELS slow)
#   mor_add_benchmark(integrators) -> experiments/bench/bench_integrators.cpp

function(mor_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS" ${ARGN})
  add_executable(test_${name} ${CMAKE_CURRENT_SOURCE_DIR}/test_${name}.cpp)
  target_link_libraries(test_${name} PRIVATE mor_testing GTest::gtest_main)
  if(TARGET mor)
    add_dependencies(test_${name} mor)
  endif()
  add_test(NAME ${name} COMMAND test_${name} --gtest_brief=1
           WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}"
    ENVIRONMENT "MOR_SOURCE_DIR=${PROJECT_SOURCE_DIR};MOR_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()

function(mor_add_benchmark name)
  add_executable(bench_${name} ${CMAKE_CURRENT_SOURCE_DIR}/bench_${name}.cpp)
  target_link_libraries(bench_${name} PRIVATE mor_experiments benchmark::benchmark)
endfunction()

# The libraries' precompiled header (MOR_PCH): the Eigen modules and standard headers that nearly
# every translation unit includes, parsed once per library instead of once per file, with the
# explicit instantiation declarations of src/linalg/eigen_instances.hpp; further headers of the
# library (ARGN) may follow.
function(mor_precompile_headers target)
  if(MOR_PCH)
    target_precompile_headers(${target} PRIVATE <Eigen/Dense> <Eigen/SparseCore>
                              <Eigen/Eigenvalues> <functional> <memory> <string> <vector>
                              ${PROJECT_SOURCE_DIR}/src/linalg/eigen_instances.hpp ${ARGN})
  endif()
endfunction()

# The libraries that need no header beyond mor_precompile_headers' list reuse mor_core's
# precompiled header instead of compiling their own copy of it (8 s each, and their compiles
# need not wait for it); they share mor_core's flags through mor_flags.
function(mor_reuse_precompiled_headers target)
  if(MOR_PCH)
    target_precompile_headers(${target} REUSE_FROM mor_core)
  endif()
endfunction()

