// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the results-file reader behind `mor info` and `mor export`: the bytes as a
// file, read as `mor info` reads it (experiments::print_info: io::ResultsReader,
// check_results_layout, the finiteness of the reduced model, the printers), then exported as
// `mor export FILE --format mat` does up to its renames (experiments::stage_results_export: the
// reduced model, bases and singular values read and checked finite, written by matio into
// memory and copied to a temporary, which is discarded). `mor info` reads in a child process
// (io::read_contained), so the target does too: first in its worker process, then, unless HDF5
// crashed or looped there, again in this process for coverage (fuzz_support.hpp, contained()).
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/export.hpp"
#include "fuzz_support.hpp"
#include "hdf5_free_lists.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mor::fuzz::keep_hdf5_free_lists();  // before the worker is forked: both reuse HDF5's blocks
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = mor::fuzz::as_file(data, size, "results.h5");
  // 1 s of the worker's CPU time (fuzz_support.hpp), about 12 times the slowest clean read in the
  // worker measured on 1 500 executions of the corpus at load 6 (86 ms wall; mean 2.3 ms). HDF5's
  // endless global-heap loop no longer starts (the reader refuses the damaged collection,
  // h5::read_access); the limit stops any other loop. libFuzzer's -timeout=10 is for the whole
  // input.
  const auto exported = mor::fuzz::scratch() / "export.mat";
  mor::io::remove_dead_temporaries(exported);  // of workers killed at the time limit
  mor::fuzz::contained("fuzz_results", data, size, std::chrono::seconds(1), [&](std::ostream& out) {
    // `mor export` reads without print_info's layout check first.
    mor::fuzz::expect_clean([&] { mor::experiments::print_info(file, out); });
    mor::experiments::stage_results_export(file, mor::experiments::ExportFormat::mat, exported);
  });
  return 0;
}
