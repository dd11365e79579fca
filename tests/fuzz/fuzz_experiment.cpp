// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the experiment file reader (every model kind, the multibody benchmarks
// included), as `mor run` reads a file: TOML text in, a validated configuration or one
// InvalidArgument / IoError out. Relative paths resolve in an empty scratch folder.
#include <cstddef>
#include <cstdint>
#include <string>

#include "experiments/runner/experiment.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto& dir = mor::fuzz::scratch();
  mor::fuzz::expect_clean([&] {
    const auto c = mor::experiments::parse_experiment(text, "fuzz.toml", dir);
    (void)c.model_size();
  });
  return 0;
}
