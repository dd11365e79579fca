#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CI, after the test command: the test suite built with AddressSanitizer and
# UndefinedBehaviorSanitizer (MOR_SANITIZE) in a tree of its own, build-asan/ (tests, the mor
# program they run and the Python module, no benchmarks), then run with ctest. Any report fails
# the test that made it.
# Extra arguments go to ctest, for example -R hdf5.
# Compiler and flags, chosen for the cost of a cold build on 2 cores (docs/hardening.md has the
# figures): clang-14, which compiles the instrumented code in about half the CPU time and memory
# GCC 12 needs (reduction/deim.cpp: 20.9 s and 0.57 GB against 37.3 s and 1.13 GB); -O2, since at
# -O1 the suite ran about 50 times slower than in Release (Eigen's kernels need inlining); line
# tables only (-gline-tables-only), enough for the reports' source lines through llvm-symbolizer.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_packages

ASAN_DIR="${MOR_ASAN_BUILD_DIR:-$ROOT/build-asan}"
FLAGS="-O2 -gline-tables-only -DNDEBUG"
echo "== build: AddressSanitizer + UndefinedBehaviorSanitizer (clang-14, $FLAGS) in $ASAN_DIR"
# The Python module too: its tests run in an interpreter with the ASan runtime preloaded
# (tests/CMakeLists.txt, tests/python/conftest.py).
configure_clang "$ASAN_DIR" "$FLAGS" -DMOR_SANITIZE=ON -DMOR_BUILD_TESTS=ON -DMOR_BUILD_BENCHMARKS=OFF \
  -DMOR_BUILD_PYTHON=ON
start=$SECONDS
build_in "$ASAN_DIR"
echo "   built in $((SECONDS - start)) s"

# Leaks are checked (LeakSanitizer, part of ASan), except those of third-party libraries listed
# with their reason in scripts/lsan.supp. The settings reach every process the tests start
# (mor, mpirun's ranks). Settings already in the environment are kept.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/scripts/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# clang's runtime looks for llvm-symbolizer on PATH; Debian's llvm-14 puts it in its own folder.
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-14/bin/llvm-symbolizer}"
echo "== tests under the sanitizers"
cd "$ASAN_DIR"
start=$SECONDS
# The sweep test runs mor under mpirun: Open MPI's leaks at exit are suppressed by library
# (scripts/lsan.supp), which needs whole allocation stacks through its frame-pointer-less code,
# i.e. the slow unwinder; it costs every malloc, so only the tests with mpirun get it.
slow_unwind="$LSAN_OPTIONS:fast_unwind_on_malloc=0"
if [ $# -gt 0 ]; then
  case " $* " in *sweep* | *parametric*) export LSAN_OPTIONS="$slow_unwind" ;; esac
  ctest --output-on-failure -j"$(nproc)" "$@"
else
  # The tests that start ranks under mpirun (the sweep's, the parametric training's): Open MPI's
  # leaks match scripts/lsan.supp only with the slow unwinder.
  ctest --output-on-failure -j"$(nproc)" -E '^(sweep|parametric_experiment)$'
  LSAN_OPTIONS="$slow_unwind" ctest --output-on-failure -j"$(nproc)" -R '^(sweep|parametric_experiment)$'
fi
echo "   tests in $((SECONDS - start)) s"
