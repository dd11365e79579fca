// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the results-file reader behind `mor info`: the bytes as a file, opened by
// io::ResultsReader, its layout checked (check_results_layout) and printed as `mor info` does.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/run_guards.hpp"
#include "experiments/runner/sweep.hpp"
#include "fuzz_support.hpp"
#include "src/io/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = mor::fuzz::as_file(data, size, "results.h5");
  mor::fuzz::expect_clean([&] {
    const mor::io::ResultsReader reader(file);
    mor::experiments::check_results_layout(reader);
    std::ostringstream out;
    if (mor::experiments::is_sweep_results(reader))
      mor::experiments::print_sweep_info(reader, out);
    else
      mor::experiments::print_results_info(file, out);
  });
  return 0;
}
