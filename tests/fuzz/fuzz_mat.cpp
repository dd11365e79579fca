// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the MATLAB .mat importer (matio): the bytes as a .mat file, its variables
// listed and read, then imported as a model as `[model] type = "file"` does. Each input is read
// first in a child process and, unless HDF5 or matio crashed or looped there, again in this
// process (fuzz_support.hpp, contained()): v7.3 files are HDF5 files, and HDF5 1.10.8 over-reads
// on some damaged ones (docs/hardening.md).
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "hdf5_free_lists.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/model_files.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  mor::fuzz::keep_hdf5_free_lists();  // before the worker is forked: both reuse HDF5's blocks
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = mor::fuzz::as_file(data, size, "model.mat");
  // 3 s of the worker's CPU time (fuzz_support.hpp), about 3 times the slowest clean read in the
  // worker measured on 1 200 executions of the corpus at load 7 (978 ms wall; mean 11.6 ms): some
  // damaged files are slow but finish.
  mor::fuzz::contained("fuzz_mat", data, size, std::chrono::seconds(3), [&](std::ostream&) {
    mor::fuzz::expect_clean([&] {
      int read = 0;
      for (const auto& name : mor::io::mat_variable_names(file)) {
        if (++read > 8) break;
        mor::fuzz::expect_clean([&] { (void)mor::io::read_mat_variable(file, name); });
      }
    });
    mor::io::ModelFileSpec spec;
    spec.path = file;
    (void)mor::io::import_model(spec);
  });
  return 0;
}
