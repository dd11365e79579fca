// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank balanced truncation of the Rayleigh-damped linear chain (D = 0.2 M + 0.2 K, one input
// and one output at the last mass, n = 2N states) for N = 10^3 .. 10^6 masses:
//
//   BM_adi/<N>   LR-ADI for the controllability Gramian alone (projection shifts, tol 1e-10)
//   BM_bt/<N>    the whole square-root BT to r = 20: both Gramians, SVD, bases, projection
//   BM_dense_bt/<N>  the same through dense Hammarling Gramians (small N only), for reference
//
// Counters:
//   iterations_c, iterations_o   ADI steps of each Gramian (a complex pair counts two)
//   rank_c, rank_o               columns of the factors Z_c, Z_o
//   factor_MiB                   memory of both factors, 2N * (rank_c + rank_o) * 8 bytes
//   peak_rss_MiB                 the process's peak resident memory after the run (VmHWM; the
//                                benchmarks run in ascending N, so it is that of the largest so
//                                far)
//   residual_c                   final relative Lyapunov residual of Z_c
// Each benchmark iteration builds its operator (symbolic analysis included) and runs the whole
// computation: what a user of `mor run` waits for, minus model assembly and file output.
//
// Run, JSON and README table (a few minutes, 5.2 GiB at N = 10^6):
//   bash scripts/run_benchmarks.sh balanced_truncation
#include <benchmark/benchmark.h>

#include "experiments/runner/experiment.hpp"
#include "models/mass_spring_chain.hpp"
#include "reduction/balanced_truncation.hpp"

namespace mor {
namespace {

constexpr Index kOrder = 20;
constexpr double kAdiTolerance = 1e-10;

SecondOrderSystem rayleigh_chain(Index N) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  p.damping = ChainDamping::rayleigh;
  p.alpha = 0.2;
  p.beta = 0.2;
  return MassSpringChain(p).linear_system();
}

void BM_adi(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  AdiOptions o;
  o.tolerance = kAdiTolerance;
  AdiResult last;
  for (auto _ : state) {
    SecondOrderLtiOperator op(sys);
    last = low_rank_adi(op, GramianKind::controllability, o);
    benchmark::DoNotOptimize(last.Z.data());
  }
  state.counters["iterations_c"] = static_cast<double>(last.iterations);
  state.counters["rank_c"] = static_cast<double>(last.Z.cols());
  state.counters["residual_c"] = last.residual_history.empty() ? -1 : last.residual_history.back();
  state.counters["factor_MiB"] = static_cast<double>(last.Z.size()) * 8.0 / (1 << 20);
  state.counters["peak_rss_MiB"] = experiments::peak_rss_mib();
  if (last.status != AdiStatus::converged) state.SkipWithError(last.message.c_str());
}

void run_bt(benchmark::State& state, GramianMethod method) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  BtOptions o;
  o.selection.order = kOrder;
  o.gramians.method = method;
  o.gramians.adi.tolerance = kAdiTolerance;
  BtResult last;
  for (auto _ : state) {
    SecondOrderLtiOperator op(sys);
    last = balanced_truncation(op, o);
    benchmark::DoNotOptimize(last.Ar.data());
  }
  const auto& g = last.gramians;
  if (g.low_rank_c) state.counters["iterations_c"] = static_cast<double>(g.low_rank_c->iterations);
  if (g.low_rank_o) state.counters["iterations_o"] = static_cast<double>(g.low_rank_o->iterations);
  state.counters["rank_c"] = static_cast<double>(g.rank_c);
  state.counters["rank_o"] = static_cast<double>(g.rank_o);
  state.counters["factor_MiB"] = 2.0 * static_cast<double>(state.range(0)) *
                                 static_cast<double>(g.rank_c + g.rank_o) * 8.0 / (1 << 20);
  state.counters["residual_c"] = g.residual_c;
  state.counters["peak_rss_MiB"] = experiments::peak_rss_mib();
}

void BM_bt(benchmark::State& state) {
  run_bt(state, GramianMethod::low_rank);
}
void BM_dense_bt(benchmark::State& state) {
  run_bt(state, GramianMethod::dense);
}

BENCHMARK(BM_dense_bt)->Arg(250)->Arg(500)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_adi)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_bt)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace mor

BENCHMARK_MAIN();
