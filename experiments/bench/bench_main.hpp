// SPDX-License-Identifier: GPL-3.0-or-later
// main() of the suites that register their benchmarks at run time (cases, sizes, orders):
// BENCHMARK_MAIN() with the registration between initialising and running.
#pragma once

#include <benchmark/benchmark.h>

namespace mor {

inline int run_benchmarks(int argc, char** argv, void (*register_benchmarks)()) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace mor
