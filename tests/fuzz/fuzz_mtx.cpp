// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the MatrixMarket importer: the bytes as a .mtx file, checked strictly and
// read as a matrix (the reader every MatrixMarket model matrix goes through).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "src/io/matrix_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = mor::fuzz::as_file(data, size, "model.A.mtx");
  mor::fuzz::expect_clean([&] { (void)mor::io::read_matrix_market_variable(file); });
  return 0;
}
