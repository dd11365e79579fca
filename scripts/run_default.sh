#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Quick start 1: install what is missing, build, run the default experiment, make its plots.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_packages "${BUILD_PACKAGES[@]}"
# The plot packages (matplotlib with its fonts, NumPy, h5py: 37 s of the 70 s of packages on a
# fresh machine) install while mor compiles; the run waits for them, since it makes the figures.
plot_log="$(mktemp)"
install_packages "${PLOT_PACKAGES[@]}" >"$plot_log" 2>&1 &
plot_packages=$!
# A failed build still lets the installation finish (dpkg's lock released) and leaves no log.
trap 'wait "$plot_packages" 2>/dev/null; rm -f "$plot_log"' EXIT
# A tree not configured yet (a fresh clone) compiles every file once: ccache would only store the
# objects, at about 0.7 s more per file on an empty cache (hashing the precompiled header it
# includes; 0.1-1.2 s over six files), some 20 s of this build. The test command later builds in the same tree and reuses them.
[ -f "$BUILD_DIR/CMakeCache.txt" ] || export CCACHE_DISABLE=1
# Only the program: the tests and benchmarks (and the packages they need) come with the test and
# benchmark commands.
BUILD_TARGETS=mor build_project -DMOR_BUILD_TESTS=OFF -DMOR_BUILD_BENCHMARKS=OFF
wait "$plot_packages" || { cat "$plot_log" >&2; exit 1; }
grep -v '^debconf: delaying' "$plot_log" || true
cd "$ROOT"
echo "== run: build/bin/mor run experiments/default.toml"
"$BUILD_DIR/bin/mor" run experiments/default.toml "$@"
echo "== results: $ROOT/results/default.h5 (inspect: $BUILD_DIR/bin/mor info results/default.h5)"
echo "== plots:   $ROOT/results/default_plots/"
