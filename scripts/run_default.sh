#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Quick start 1: install what is missing, build, run the default experiment, make its plots.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_packages "${RUN_PACKAGES[@]}"
# Only the program: the tests and benchmarks (and the packages they need) come with the test and
# benchmark commands.
BUILD_TARGETS=mor build_project -DMOR_BUILD_TESTS=OFF -DMOR_BUILD_BENCHMARKS=OFF
cd "$ROOT"
echo "== run: build/bin/mor run experiments/default.toml"
"$BUILD_DIR/bin/mor" run experiments/default.toml "$@"
echo "== results: $ROOT/results/default.h5 (inspect: $BUILD_DIR/bin/mor info results/default.h5)"
echo "== plots:   $ROOT/results/default_plots/"
