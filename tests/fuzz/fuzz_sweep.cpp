// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the sweep file reader, as `mor sweep` reads a file: TOML text in, the
// expanded grid of validated experiments or one InvalidArgument / IoError out. Studies may name
// "exp.toml", a small chain experiment in the scratch folder (as the seed corpus does).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "experiments/runner/sweep.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::ofstream(mor::fuzz::scratch() / "exp.toml")
      << "[experiment]\nname = \"e\"\n[model]\nN = 20\n[simulation]\ndt = 0.1\nt_end = 1.0\n"
         "[reduction]\nmethod = \"bt\"\norder = 4\n";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mor::fuzz::expect_clean([&] {
    const auto c = mor::experiments::parse_sweep(text, "fuzz_sweep.toml", mor::fuzz::scratch());
    (void)c.points.size();
  });
  return 0;
}
