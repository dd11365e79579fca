# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by the quick-start scripts: install the Debian 12 packages that are missing, then
# configure and build a Release tree in build/. Idempotent: a second run installs nothing and
# rebuilds only what changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${MOR_BUILD_DIR:-$ROOT/build}"

# What the first command needs (build `mor`, run the default experiment, make its plots), from
# Debian's archive only: BUILD_PACKAGES to build it, PLOT_PACKAGES for the figures (which
# scripts/run_default.sh installs while mor compiles).
BUILD_PACKAGES=(
  clang-14 g++ make cmake ninja-build pkg-config git
  libeigen3-dev libspectra-dev libsuitesparse-dev libhdf5-dev
  libtomlplusplus-dev libcli11-dev libsundials-dev
  libopenmpi-dev openmpi-bin libmatio-dev libopenblas-dev liblapacke-dev libdsdp-dev ccache
)
PLOT_PACKAGES=(python3 python3-numpy python3-matplotlib python3-h5py)
RUN_PACKAGES=("${BUILD_PACKAGES[@]}" "${PLOT_PACKAGES[@]}")
# Added by the test, benchmark, sanitizer and fuzz commands: GoogleTest, Google Benchmark, the
# SLICOT oracle, SciPy (independent references in the file tests) and clang with its runtimes
# (llvm-14: llvm-symbolizer, which gives the sanitizers' reports their source lines).
# pybind11, the Python headers and pytest build and test the Python module (python/).
# iproute2 (`ip netns`, veth pairs) makes the two hosts of tests/mpi_two_hosts.sh.
TEST_PACKAGES=(
  libgtest-dev libbenchmark-dev libslicot-dev python3-scipy clang-14 libclang-rt-14-dev llvm-14
  pybind11-dev python3-dev python3-pytest iproute2
)
PACKAGES=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}")

# install_packages [package...]: installs those of the given packages (default: PACKAGES, all of
# them) that are missing.
install_packages() {
  local wanted=("$@") missing=()
  [ ${#wanted[@]} -gt 0 ] || wanted=("${PACKAGES[@]}")
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "== packages: all ${#wanted[@]} present"
    return
  fi
  echo "== packages: installing ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  # dpkg's --force-unsafe-io skips its fsync after unpacking each file: on a bare Debian 12 the
  # first command's 377 packages installed in 160 s instead of about 450 s (a chroot on this
  # machine, docs/benchmarks.md). The cost: after a power cut during the installation, the
  # packages it was unpacking need `apt-get install --reinstall`.
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o DPkg::Options::=--force-unsafe-io "${missing[@]}" >/dev/null
}

# generator_args DIR: "-G Ninja" for a tree not configured yet (an existing tree keeps the generator
# it was made with). Ninja starts a library's compiles while the library below it still compiles;
# Make builds one library after the other, which left a core idle for 50 of the 444 s the first
# command's build took (docs/benchmarks.md, "The first command").
generator_args() {
  [ -f "$1/CMakeCache.txt" ] || ! command -v ninja >/dev/null || echo "-G Ninja"
}

# build_project [cmake -D options...]: configure, then build the targets in BUILD_TARGETS (space
# separated; empty: everything). The default run builds only `mor`; the tests build all.
# A new tree is compiled by clang-14 unless CXX (and CC) name another compiler: it builds mor from
# a fresh clone in about half the time GCC 12 takes (181 s against 327 s on 2 cores, 352 s of
# compiles against 650), and the program it makes ran the default experiment as fast or faster
# (docs/benchmarks.md, "The first command"). A configured tree keeps the compiler it was made with.
build_project() {
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    export CC="${CC:-clang-14}" CXX="${CXX:-clang++-14}"
  fi
  echo "== build: Release in $BUILD_DIR${BUILD_TARGETS:+ (targets: $BUILD_TARGETS)}, $(compiler_of "$BUILD_DIR")"
  # shellcheck disable=SC2046 # generator_args gives two words or none
  cmake -S "$ROOT" -B "$BUILD_DIR" $(generator_args "$BUILD_DIR") -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  # shellcheck disable=SC2086 # BUILD_TARGETS is a space-separated list
  build_in "$BUILD_DIR" ${BUILD_TARGETS:-}
}

# compiler_of DIR: the C++ compiler a configured tree DIR uses, or the one a new tree will use.
compiler_of() {
  local cxx
  cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$1/CMakeCache.txt" 2>/dev/null || true)"
  basename "${cxx:-${CXX:-c++}}"
}

# build_in DIR [target...]: builds the targets (all if none) of the configured tree DIR on every
# core, the full log in DIR/build.log; on failure its end is shown and the script exits.
build_in() {
  local dir="$1" targets=()
  shift
  for t in "$@"; do targets+=(--target "$t"); done
  if ! cmake --build "$dir" -j"$(nproc)" "${targets[@]}" >"$dir/build.log" 2>&1; then
    tail -n 60 "$dir/build.log" >&2
    echo "error: the build failed; full log: $dir/build.log" >&2
    exit 1
  fi
}

# configure_clang DIR FLAGS [cmake -D option...]: configures DIR as a clang-14 RelWithDebInfo tree
# compiled with FLAGS (the sanitizer and fuzz builds); on failure the end of DIR/configure.log is
# shown and the script exits.
configure_clang() {
  local dir="$1" flags="$2"
  shift 2
  mkdir -p "$dir"
  # shellcheck disable=SC2046 # generator_args gives two words or none
  CC=clang-14 CXX=clang++-14 cmake -S "$ROOT" -B "$dir" $(generator_args "$dir") -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" "$@" \
    >"$dir/configure.log" 2>&1 ||
    { tail -n 40 "$dir/configure.log" >&2; echo "error: configuring $dir failed" >&2; exit 1; }
}
