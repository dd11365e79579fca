#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Quick start 2: install what is missing, build, run the whole test suite with ctest.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
install_packages
build_project -DMOR_BUILD_TESTS=ON -DMOR_BUILD_BENCHMARKS=ON -DMOR_BUILD_PYTHON=ON
cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" "$@"
