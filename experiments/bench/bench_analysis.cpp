// SPDX-License-Identifier: GPL-3.0-or-later
// The frequency analysis of `mor run` on the steel-profile rail (data/rail_<n>.mat) after a
// low-rank BT to the bound 1e-4 (experiments/rail_bt.toml's analysis: Bode over 1e-6..1e2 rad/s,
// Hinf of the error and of the full model), in one binary and alternated in the same run:
//   before: the fixed 100-point Bode sweep one solve at a time, and the H-infinity sweep
//           (200-point grid, Brent refinement, the reduced model's poles as hints) for the error
//           and for the full model: every evaluation a fresh complex factorization;
//   after:  analyse_frequency_response: the full model's curve at <= 40 adaptive frequencies on
//           two threads, the subspace method for the full model's norm, the error's located on
//           BT's reference model (order r + up to 100 from the same factors) and climbed on the
//           full model (reduction/frequency_analysis.hpp).
// Counters: seconds and evaluations of each part, the reduction's seconds, and the ratios
// (before / after, analysis / reduction). H2 is left out of both (unchanged, LR-ADI).
//   build/bin/bench_analysis --benchmark_filter=rail/20209
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "reduction/balanced_truncation.hpp"
#include "reduction/frequency_analysis.hpp"
#include "reduction/lti_operator.hpp"
#include "reduction/system_norms.hpp"
#include "src/io/model_files.hpp"

namespace mor {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// data/rail_<n>.mat in $MOR_RAIL_DIR, else in the data folder next to this source.
std::filesystem::path rail_file(Index n) {
  const std::string name = "rail_" + std::to_string(n) + ".mat";
  if (const char* dir = std::getenv("MOR_RAIL_DIR")) return std::filesystem::path(dir) / name;
  return std::filesystem::path(__FILE__).parent_path() / "../../data" / name;
}

constexpr double kOmegaMin = 1e-6, kOmegaMax = 1e2;  // experiments/rail_bt.toml
constexpr Index kBodePoints = 100, kHinfGrid = 200;

/// The analysis before issue 28, as experiments/runner/reduction_run.cpp ran it.
struct Before {
  double bode_s = 0, hinf_error_s = 0, hinf_full_s = 0;
  HinfResult error, full;
};
Before run_before(LtiOperator& full, DenseLtiOperator& red) {
  Before b;
  auto t0 = Clock::now();
  const Vector omega = log_frequencies(kOmegaMin, kOmegaMax, kBodePoints);
  for (Index k = 0; k < omega.size(); ++k) {
    benchmark::DoNotOptimize(transfer_function(full, Complex(0.0, omega[k])).data());
    benchmark::DoNotOptimize(transfer_function(red, Complex(0.0, omega[k])).data());
  }
  b.bode_s = since(t0);
  // The reduced model's least damped poles as hints (the rail's are real: none).
  std::vector<std::pair<double, double>> poles;
  for (const Complex& l : red.poles())
    if (l.imag() > 0.0) poles.emplace_back(-l.real() / std::abs(l), l.imag());
  std::sort(poles.begin(), poles.end());
  Vector hints(static_cast<Index>(std::min<std::size_t>(poles.size(), 12)));
  for (Index i = 0; i < hints.size(); ++i) hints[i] = poles[static_cast<std::size_t>(i)].second;
  ErrorLtiOperator err(full, red);
  t0 = Clock::now();
  b.error = hinf_norm_sweep(err, kOmegaMin, kOmegaMax, hints, kHinfGrid);
  b.hinf_error_s = since(t0);
  t0 = Clock::now();
  b.full = hinf_norm_sweep(full, kOmegaMin, kOmegaMax, hints, kHinfGrid);
  b.hinf_full_s = since(t0);
  return b;
}

void BM_rail_analysis(benchmark::State& state) {
  const std::filesystem::path file = rail_file(state.range(0));
  if (!std::filesystem::exists(file)) {
    state.SkipWithError(("rail model not found: " + file.string()).c_str());
    return;
  }
  io::ModelFileSpec spec;
  spec.path = file;
  const io::ImportedModel model = io::import_model(spec);
  const auto& sys = std::get<DescriptorSystem>(model.system);
  BtOptions o;
  o.selection.tolerance = 1e-4;
  o.gramians.method = GramianMethod::low_rank;
  o.reference_extra_order = 100;  // as experiments/runner/methods/bt.cpp
  FrequencyAnalysisOptions fo;
  fo.bode_points = kBodePoints;
  fo.omega_min = kOmegaMin;
  fo.omega_max = kOmegaMax;
  fo.h2 = false;
  fo.hinf = fo.hinf_full = true;
  for (auto _ : state) {
    double reduction_s = 0;
    BtResult bt;
    {
      SparseLtiOperator op(sys);
      const auto t0 = Clock::now();
      bt = balanced_truncation(op, o);
      reduction_s = since(t0);
    }
    fo.error_bound = bt.error_bound;
    DenseLtiOperator red(bt.Er, bt.Ar, bt.Br, bt.Cr, bt.Dr);
    std::unique_ptr<DenseLtiOperator> ref;
    if (bt.q > 0) {
      ref = std::make_unique<DenseLtiOperator>(Matrix::Identity(bt.q, bt.q), bt.Aref, bt.Bref,
                                               bt.Cref, bt.Dr);
      fo.reference = ref.get();
      fo.reference_bound = bt.reference_bound;
    }
    // Alternated twice, each on a fresh operator (no factor cached from the other): the best of
    // two for each.
    Before before;
    FrequencyAnalysis after;
    double before_s = 1e300, after_s = 1e300;
    for (int round = 0; round < 2; ++round) {
      {
        SparseLtiOperator full(sys);
        const auto t0 = Clock::now();
        Before b = run_before(full, red);
        const double s = since(t0);
        if (s < before_s) before_s = s, before = b;
      }
      {
        SparseLtiOperator full(sys);
        const auto t0 = Clock::now();
        FrequencyAnalysis a = analyse_frequency_response(full, red, fo);
        const double s = since(t0);
        if (s < after_s) after_s = s, after = std::move(a);
      }
    }
    state.counters["n"] = static_cast<double>(sys.n());
    state.counters["r"] = static_cast<double>(bt.r);
    state.counters["q"] = static_cast<double>(bt.q);
    state.counters["reduction_s"] = reduction_s;
    state.counters["before_s"] = before_s;
    state.counters["after_s"] = after_s;
    state.counters["speedup"] = before_s / after_s;
    state.counters["before_over_reduction"] = before_s / reduction_s;
    state.counters["after_over_reduction"] = after_s / reduction_s;
    state.counters["before_bode_s"] = before.bode_s;
    state.counters["after_bode_s"] = after.curves.seconds;
    state.counters["after_bode_solves"] = static_cast<double>(after.curves.solves);
    state.counters["before_hinf_error_s"] = before.hinf_error_s;
    state.counters["after_hinf_error_s"] = after.hinf_error.seconds;
    state.counters["before_hinf_error_evals"] = static_cast<double>(before.error.evaluations);
    state.counters["after_hinf_error_evals"] = static_cast<double>(after.hinf_error.evaluations);
    state.counters["before_hinf_full_s"] = before.hinf_full_s;
    state.counters["after_hinf_full_s"] = after.hinf_full.seconds;
    state.counters["before_hinf_full_evals"] = static_cast<double>(before.full.evaluations);
    state.counters["after_hinf_full_evals"] = static_cast<double>(after.hinf_full.evaluations);
    state.counters["hinf_error_before"] = before.error.norm;
    state.counters["hinf_error_after"] = after.hinf_error.value;
    state.counters["hinf_full_before"] = before.full.norm;
    state.counters["hinf_full_after"] = after.hinf_full.value;
    state.SetLabel("hinf_error status: " + after.hinf_error.status);
  }
}

BENCHMARK(BM_rail_analysis)
    ->Name("rail")
    ->Arg(1357)
    ->Arg(20209)
    ->Arg(79841)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
}  // namespace mor

BENCHMARK_MAIN();
