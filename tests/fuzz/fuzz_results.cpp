// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the results-file reader behind `mor info` and `mor export`: the bytes as a
// file, read as `mor info` reads it (experiments::print_info: io::ResultsReader,
// check_results_layout, the finiteness of the reduced model, the printers), then as `mor export
// FILE` does: its child reads the reduced model, bases and singular values and checks them
// finite (experiments::read_results_export) and hands them over as a stream of bytes
// (io::encode_matrices), which the parent decodes (io::decode_matrices: here it must give back
// the same matrices bit for bit) and writes (experiments::stage_export --format mat: matio into
// memory, copied to a temporary, which is discarded). `mor info` and `mor export` read in a
// child process (io::read_contained), so the target does too: first in its worker process, then,
// unless HDF5 crashed or looped there, again in this process for coverage (fuzz_support.hpp,
// contained()).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/export.hpp"
#include "fuzz_support.hpp"
#include "hdf5_free_lists.hpp"
#include "src/io/matrix_stream.hpp"

namespace {

/// Whether b holds a's names in order and its values bit for bit (the export's matrices are
/// dense).
bool same_matrices(const std::vector<mor::io::NamedMatrix>& a,
                   const std::vector<mor::io::NamedMatrix>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const auto* x = std::get_if<mor::Matrix>(&a[k].value);
    const auto* y = std::get_if<mor::Matrix>(&b[k].value);
    if (a[k].name != b[k].name || x == nullptr || y == nullptr || x->rows() != y->rows() ||
        x->cols() != y->cols() ||
        (x->size() > 0 &&
         std::memcmp(x->data(), y->data(), sizeof(double) * static_cast<std::size_t>(x->size()))))
      return false;
  }
  return true;
}

}  // namespace

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
    const auto vars = mor::experiments::read_results_export(file);
    std::ostringstream stream;
    mor::io::encode_matrices(stream, vars);
    // What the child hands over must come back whole: a refusal here would be a finding too
    // (expect_clean would take the IoError for bad input).
    std::vector<mor::io::NamedMatrix> decoded;
    std::string refusal;
    try {
      decoded = mor::io::decode_matrices(stream.str());
    } catch (const std::exception& e) {
      refusal = e.what();
    }
    if (!refusal.empty() || !same_matrices(vars, decoded)) {
      std::fprintf(stderr, "fuzz_results: the matrices did not survive the stream: %s\n",
                   refusal.empty() ? "they differ" : refusal.c_str());
      std::abort();  // a finding: libFuzzer keeps the input
    }
    mor::experiments::stage_export(decoded, mor::experiments::ExportFormat::mat, exported);
  });
  return 0;
}
