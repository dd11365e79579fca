// SPDX-License-Identifier: GPL-3.0-or-later
// IRKA (reduction/irka.hpp) against balanced truncation, the two bars of issue 15:
//
//   BM_rail_irka/1357/<c>/<s>   the steel-profile rail (data/rail_1357.mat, 7 inputs, 6 outputs),
//                       IRKA to r = 20 (Ritz initial shifts, tolerance 1e-4 on criterion c:
//                       0 the shift change, 1 the H2 distance of consecutive models; s = 1:
//                       MF-IRKA, IrkaOptions::surrogate), timed;
//                       afterwards BT to r = 20 (dense Gramians, n < 1500) and both relative
//                       H2 errors from the dense Gramian of each error system. Counters:
//                       converged (1/0), iterations, h2_error_irka, h2_error_bt, h2_ratio (IRKA
//                       / BT: the bar is <= 1), seconds_bt
//   BM_chain_irka_vs_bt/<N>/<s>  the Rayleigh-damped chain (D = 0.2 M + 0.2 K, SISO at the last
//                       mass, 2N states): first-order IRKA to r = 20 through the second-order
//                       operator with the h2 criterion, one LR-ADI BT to r = 20 (tolerance
//                       1e-10, automatic shifts), and IRKA with the shift criterion (both IRKA
//                       runs MF-IRKA for s = 1, IrkaOptions::surrogate), in this
//                       order in the same process; the time reported is IRKA's (h2), counters
//                       seconds_* of each, ratio_h2 and ratio_shifts = IRKA / BT (the bar is
//                       < 1), the same for process CPU time (cpu_seconds_*, ratio_h2_cpu),
//                       iterations_*, loewner_iterations_h2 (iterations whose shifts came from
//                       the Loewner pencil, IrkaOptions::loewner), and h2_distance_of_models =
//                       ||G_r,h2 - G_r,shifts||_H2 / ||G_r,shifts||_H2 (what stopping early
//                       changes)
//   BM_chain_irka/<N>/<s>  IRKA (h2; s = 1: MF-IRKA) alone on the same chain, for profiling
//                       (perf record): counters
//                       iterations, seconds_initial (the initial shifts), cpu_seconds
//   BM_chain_so_irka/<N>  SOR-IRKA (second order, r = 20, two-sided) of the same chain at
//                       N = 10^4: converged (1/0; on this chain it does not), iterations
//
// Run (a minute or two; the machine is shared, so compare ratios, not seconds):
//   build-irka/experiments/bench/bench_irka --benchmark_counters_tabular=true
// The rail is looked up in $MOR_RAIL_DIR if set, else in data/ next to this source.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "models/mass_spring_chain.hpp"
#include "reduction/balanced_truncation.hpp"
#include "reduction/irka.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/timing.hpp"
#include "src/io/model_files.hpp"

namespace mor {
namespace {

constexpr Index kOrder = 20;

SecondOrderSystem rayleigh_chain(Index N) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  p.damping = SpringDamping::rayleigh;
  p.alpha = 0.2;
  p.beta = 0.2;
  return MassSpringChain(p).linear_system();
}

std::filesystem::path rail_file(Index n) {
  const std::string name = "rail_" + std::to_string(n) + ".mat";
  if (const char* dir = std::getenv("MOR_RAIL_DIR")) return std::filesystem::path(dir) / name;
  return std::filesystem::path(__FILE__).parent_path() / "../../data" / name;
}

double relative_h2_error(LtiOperator& full, double h2_full, const Matrix& Er, const Matrix& Ar,
                         const Matrix& Br, const Matrix& Cr) {
  DenseLtiOperator red(Er, Ar, Br, Cr);
  ErrorLtiOperator err(full, red);
  return h2_norm_dense(err) / h2_full;
}

void BM_rail_irka(benchmark::State& state) {
  const std::filesystem::path file = rail_file(state.range(0));
  if (!std::filesystem::exists(file)) {
    state.SkipWithError(("rail model not found: " + file.string()).c_str());
    return;
  }
  io::ModelFileSpec spec;
  spec.path = file;
  const io::ImportedModel model = io::import_model(spec);
  const auto& sys = std::get<DescriptorSystem>(model.system);
  IrkaOptions o;
  o.order = kOrder;
  o.criterion = state.range(1) == 0 ? IrkaCriterion::shifts : IrkaCriterion::h2;
  o.surrogate = state.range(2) != 0;
  IrkaResult last;
  for (auto _ : state) {
    SparseLtiOperator op(sys);
    last = irka(op, o);
    benchmark::DoNotOptimize(last.Ar.data());
  }
  SparseLtiOperator op(sys);
  const double h2 = h2_norm_dense(op);
  const double e_irka = relative_h2_error(op, h2, last.Er, last.Ar, last.Br, last.Cr);
  BtOptions bo;
  bo.selection.order = kOrder;
  const auto t0 = Clock::now();
  const BtResult bt = balanced_truncation(op, bo);
  state.counters["seconds_bt"] = seconds_since(t0);
  const double e_bt = relative_h2_error(op, h2, bt.Er, bt.Ar, bt.Br, bt.Cr);
  state.counters["converged"] = last.status == IrkaStatus::converged ? 1.0 : 0.0;
  state.counters["iterations"] = static_cast<double>(last.iterations);
  state.counters["h2_error_irka"] = e_irka;
  state.counters["h2_error_bt"] = e_bt;
  state.counters["h2_ratio"] = e_irka / e_bt;
  if (last.status != IrkaStatus::converged) state.SkipWithError(last.message.c_str());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// IRKA's reduced model as a dense operator.
DenseLtiOperator reduced(const IrkaResult& r) {
  return DenseLtiOperator(r.Er, r.Ar, r.Br, r.Cr);
}

void BM_chain_irka_vs_bt(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  IrkaOptions by_shifts;
  by_shifts.order = kOrder;
  by_shifts.surrogate = state.range(1) != 0;
  IrkaOptions by_h2 = by_shifts;
  by_h2.criterion = IrkaCriterion::h2;
  BtOptions bo;
  bo.selection.order = kOrder;
  bo.gramians.method = GramianMethod::low_rank;
  bo.gramians.adi.tolerance = 1e-10;
  std::vector<double> t_h2, t_shifts, t_bt, cpu_h2, cpu_bt;
  IrkaResult last_h2, last_shifts;
  auto timed = [](auto&& f, std::vector<double>& t, std::vector<double>* cpu = nullptr) {
    const std::clock_t c0 = std::clock();
    const auto t0 = Clock::now();
    f();
    t.push_back(seconds_since(t0));
    if (cpu) cpu->push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
  };
  for (auto _ : state) {
    timed(
        [&] {
          SecondOrderLtiOperator op(sys);
          last_h2 = irka(op, by_h2);
        },
        t_h2, &cpu_h2);
    timed(
        [&] {
          SecondOrderLtiOperator op(sys);
          const BtResult bt = balanced_truncation(op, bo);
          benchmark::DoNotOptimize(bt.Ar.data());
        },
        t_bt, &cpu_bt);
    timed(
        [&] {
          SecondOrderLtiOperator op(sys);
          last_shifts = irka(op, by_shifts);
        },
        t_shifts);
    state.SetIterationTime(t_h2.back());
  }
  state.counters["converged_h2"] = last_h2.status == IrkaStatus::converged ? 1.0 : 0.0;
  state.counters["converged_shifts"] = last_shifts.status == IrkaStatus::converged ? 1.0 : 0.0;
  state.counters["iterations_h2"] = static_cast<double>(last_h2.iterations);
  state.counters["iterations_shifts"] = static_cast<double>(last_shifts.iterations);
  state.counters["loewner_iterations_h2"] = static_cast<double>(last_h2.loewner_iterations);
  state.counters["seconds_irka_h2"] = median(t_h2);
  state.counters["seconds_irka_shifts"] = median(t_shifts);
  state.counters["seconds_bt"] = median(t_bt);
  state.counters["ratio_h2"] = median(t_h2) / median(t_bt);
  state.counters["ratio_shifts"] = median(t_shifts) / median(t_bt);
  // CPU time of the process (this thread's work, plus any BLAS threads): on the shared machine
  // the wall-clock ratio moves with the other engineers' load, the CPU ratio much less.
  state.counters["cpu_seconds_irka_h2"] = median(cpu_h2);
  state.counters["cpu_seconds_bt"] = median(cpu_bt);
  state.counters["ratio_h2_cpu"] = median(cpu_h2) / median(cpu_bt);
  // How far the early (h2 criterion) model is from the one at the shift tolerance, relative:
  // ||G_r,h2 - G_r,shifts||_H2 / ||G_r,shifts||_H2 (dense, 2r states).
  DenseLtiOperator a = reduced(last_h2), b = reduced(last_shifts);
  ErrorLtiOperator diff(a, b);
  state.counters["h2_distance_of_models"] = h2_norm_dense(diff) / h2_norm_dense(b);
}

void BM_chain_irka(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  IrkaOptions o;
  o.order = kOrder;
  o.criterion = IrkaCriterion::h2;
  o.surrogate = state.range(1) != 0;
  IrkaResult last;
  double cpu = 0.0;
  for (auto _ : state) {
    const std::clock_t c0 = std::clock();
    SecondOrderLtiOperator op(sys);
    last = irka(op, o);
    cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
    benchmark::DoNotOptimize(last.Ar.data());
  }
  state.counters["converged"] = last.status == IrkaStatus::converged ? 1.0 : 0.0;
  state.counters["iterations"] = static_cast<double>(last.iterations);
  state.counters["loewner_iterations"] = static_cast<double>(last.loewner_iterations);
  state.counters["seconds_initial"] = last.initial_seconds;
  state.counters["cpu_seconds"] = cpu;
}

void BM_chain_so_irka(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  SoIrkaOptions o;
  o.order = kOrder;
  SoIrkaResult last;
  for (auto _ : state) {
    last = second_order_irka(sys, o);
    benchmark::DoNotOptimize(last.reduced.M.data());
  }
  state.counters["converged"] = last.status == IrkaStatus::converged ? 1.0 : 0.0;
  state.counters["iterations"] = static_cast<double>(last.iterations);
  state.counters["spectral_abscissa"] = last.spectral_abscissa;
  state.counters["seconds"] = last.seconds;
}

BENCHMARK(BM_rail_irka)
    ->Args({1357, 0, 0})
    ->Args({1357, 1, 0})
    ->Args({1357, 0, 1})
    ->Args({1357, 1, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_chain_irka_vs_bt)
    ->Args({100000, 0})
    ->Args({100000, 1})
    ->Unit(benchmark::kSecond)
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK(BM_chain_irka)
    ->Args({100000, 0})
    ->Args({100000, 1})
    ->Args({10000, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_chain_so_irka)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace mor

BENCHMARK_MAIN();
