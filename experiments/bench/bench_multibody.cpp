// SPDX-License-Identifier: GPL-3.0-or-later
// CPU time of each multibody benchmark's run (models/multibody.hpp), the quantity the IFToMM
// benchmark library compares (OpenSim 3.2 on an i5-4570: A01 10 s of motion in 0.637 s, A04 in
// 0.258 s, A05 in 0.233 s; the robot has no published time).
//
//   BM_benchmark_run/<model>/<digits>  the benchmark's whole horizon with CVODE (the model's
//       method, Jacobian and projection, as `mor run` does), rtol = 10^-digits,
//       atol = rtol / 100, outputs only at the end. The model and its initial state are built
//       outside the timed loop; CVODE's setup (memory, linear solver) is inside, as in a run.
//
// Counters:
//   steps, rhs_per_run   CVODE's work per run
//   error                max |y - y_exact| at the end of the run where the benchmark has an
//                        exact solution (A01); otherwise max |y - y_ref| against a run at
//                        rtol = atol = 10^-12, made once outside the timed loop
//   energy_balance       max_t |E(t) - E(0) - W| (J): the drift of the energy bookkeeping
//   energy_balance_relative   energy_balance / the model's energy scale: for A04 the potential
//                        drop from the start to the equilibrium, V(0) - V(theta*) (the peak
//                        kinetic energy, 4.553 J; E(0) depends on the datum), else |E(0)|
//   bdf, projections_per_step   CVODE's method (1 BDF, 0 Adams) and its projections per step
//   horizon_s            the benchmark's horizon
// experiments/bench_tables.py turns these into the README's CPU-time table.
//
// Run (about a minute):   bash scripts/run_benchmarks.sh multibody
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>

#include "models/bricard.hpp"
#include "models/multibody.hpp"

namespace mor {
namespace {

/// The reference outputs at the horizon: exact, or a run at tolerances far below the timed ones.
Vector reference_outputs(const MultibodyModel& model) {
  Vector y;
  if (model.exact_outputs(model.horizon(), y)) return y;
  CvodeOptions o;
  o.method = model.preferred_method();
  o.t_end = model.horizon();
  o.rtol = 1e-12;  // tighter fails for A04: BDF's steps collapse near the rounding level
  o.atol = 1e-12;
  Vector x = model.initial_state();
  simulate_multibody(model, x, o);
  model.outputs(o.t_end, x, y);
  return y;
}

/// The energy the bookkeeping's drift is judged against (J). A04 is conservative and its E(0)
/// depends on where V is zero, so its scale is the energy that moves: V(0) - V(theta*), as in
/// tests/test_bricard.cpp. Elsewhere |E(0)|.
double energy_scale(const MultibodyModel& model) {
  if (const auto* bricard = dynamic_cast<const Bricard*>(&model)) {
    const Vector theta0 = model.initial_state().head(Bricard::kCoordinates);
    return bricard->potential_energy(theta0) - bricard->potential_energy(bricard->equilibrium());
  }
  return std::abs(model.energy(model.initial_state()));
}

void BM_benchmark_run(benchmark::State& state, const std::string& id) {
  const auto model = make_multibody_model(id);
  const int digits = static_cast<int>(state.range(0));
  CvodeOptions o;
  o.method = model->preferred_method();
  o.t_end = model->horizon();
  o.rtol = std::pow(10.0, -digits);
  o.atol = o.rtol / 100.0;
  MultibodyRunStats stats;
  Vector x, y_ref;
  try {
    y_ref = reference_outputs(*model);
    for (auto _ : state) {
      x = model->initial_state();
      stats = simulate_multibody(*model, x, o);
      benchmark::DoNotOptimize(x.data());
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  Vector y;
  model->outputs(o.t_end, x, y);
  state.counters["steps"] = static_cast<double>(stats.cvode.steps);
  state.counters["rhs_per_run"] = static_cast<double>(stats.cvode.rhs_evaluations);
  state.counters["error"] = (y - y_ref).cwiseAbs().maxCoeff();
  state.counters["energy_balance"] = stats.energy_balance_error;
  state.counters["energy_balance_relative"] = stats.energy_balance_error / energy_scale(*model);
  state.counters["bdf"] = o.method == CvodeMethod::bdf ? 1.0 : 0.0;
  state.counters["projections_per_step"] =
      static_cast<double>(stats.cvode.projections) / static_cast<double>(stats.cvode.steps);
  state.counters["horizon_s"] = o.t_end;
}

const bool kRegistered = [] {
  for (const auto& id : multibody_model_ids())
    benchmark::RegisterBenchmark(("BM_benchmark_run/" + id).c_str(), BM_benchmark_run, id)
        ->ArgName("digits")
        ->DenseRange(6, 10, 2)
        ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace mor

BENCHMARK_MAIN();
