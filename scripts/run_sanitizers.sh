#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CI, after the test command: the test suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer (MOR_SANITIZE) in a tree of its own, build-asan/ (tests and the mor
# program they run, no benchmarks; RelWithDebInfo: -O2 with line tables (-g1), so that the
# reports name source lines and Eigen's kernels keep their speed (full -g costs a third more
# compile time, spent on variable locations the reports do not use): at -O1 the suite ran about 50
# times slower than in Release, with the sweep and model-file tests beyond ctest's 600 s), then
# run with ctest. Any report fails the test that made it. Extra arguments go to ctest, for
# example -R hdf5.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_packages

ASAN_DIR="${MOR_ASAN_BUILD_DIR:-$ROOT/build-asan}"
echo "== build: AddressSanitizer + UndefinedBehaviorSanitizer (RelWithDebInfo, -O2 -g1) in $ASAN_DIR"
cmake -S "$ROOT" -B "$ASAN_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DMOR_SANITIZE=ON -DMOR_BUILD_TESTS=ON -DMOR_BUILD_BENCHMARKS=OFF >/dev/null
build_in "$ASAN_DIR"

# Leaks are checked (LeakSanitizer, part of ASan), except those of third-party libraries listed
# with their reason in scripts/lsan.supp. The settings reach every process the tests start
# (mor, mpirun's ranks). Settings already in the environment are kept.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
echo "== tests under the sanitizers"
cd "$ASAN_DIR"
ctest --output-on-failure -j"$(nproc)" "$@"
