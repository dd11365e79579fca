// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the results-file reader behind `mor info`: the bytes as a file, read as
// `mor info` reads it (experiments::print_info: io::ResultsReader, check_results_layout, the
// printers). `mor info` reads in a child process (io::read_contained), so the target does too:
// first in its worker process, then, unless HDF5 crashed or looped there, again in this process
// for coverage (fuzz_support.hpp, contained()).
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "experiments/runner/experiment.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = mor::fuzz::as_file(data, size, "results.h5");
  // 3 s: a results file of this size reads in milliseconds; HDF5's loops on damaged global
  // heaps never end (libFuzzer's -timeout=10 is for the whole input).
  mor::fuzz::contained("fuzz_results", data, size, std::chrono::seconds(3),
                       [&](std::ostream& out) { mor::experiments::print_info(file, out); });
  return 0;
}
