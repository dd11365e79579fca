// SPDX-License-Identifier: GPL-3.0-or-later
// Rough cost of one run before it starts: `mor sweep` schedules its points and guards their
// memory with these, `mor run` refuses a run that cannot fit and `mor run --dry-run` prints
// them. Rough means within a factor of a few on this 2-core machine; they are never results.
#pragma once

#include <optional>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/method.hpp"

namespace mor::experiments {

/// Wall time on one core (seconds), from the costs measured in docs/benchmarks.md and by the
/// default sweep: an implicit step of the chain costs about 15 ns per mass when it is linear and
/// 40 when it is not (Newton), an RK4 step 6; plus the reduction method's own estimate
/// (ReductionMethod::estimate_seconds, a parametric training included) and, for linear
/// methods, the frequency analysis; with [parameters], the validation runs
/// (estimate_parametric).
double estimate_run_seconds(const ExperimentConfig& c);

/// The wall time of one full simulation of c on one input (seconds, one core): the `full`
/// term of estimate_run_seconds, and what each training and validation run costs.
double estimate_full_seconds(const ExperimentConfig& c);

/// Seconds per step of a projected reduced model of order r, its force hyper-reduced (DEIM at
/// 2 r points), under an implicit scheme: about 1.6 r^2 ns, as measured for the chain at
/// r = 20..40 (docs/methods/parametric.md, "Measured").
double estimate_reduced_step_seconds(Index r);

/// What [parameters] adds to a run: the training (the method's estimate) and the validation,
/// in full and reduced runs, time and memory.
struct ParametricEstimate {
  ParametricTrainingEstimate training;
  Index validation_points = 0;    ///< validation.parameter_samples: one full, one reduced run each
  double validation_seconds = 0;  ///< those runs on [input], one core
  double validation_mib = 0;      ///< peak besides the run's own model: the model at a point
};
/// nullopt without [parameters] (or for a method without a parametric form).
std::optional<ParametricEstimate> estimate_parametric(const ExperimentConfig& c);

/// Peak memory (MiB): the model and its workspace (about 400 bytes per state, and
/// io::kNetworkRunBytesPerElement per nonlinear element), 50 MB of program, plus the
/// reduction method's ReductionMethod::estimate_bytes (low-rank BT about 6 KiB per state, dense
/// BT a dozen n x n matrices, POD its snapshot matrices; with [parameters] the incremental SVDs
/// and the models at the training points, or the model at a validation point if that is more)
/// and what a kind's own runs keep (ModelSpec::own_runs_mib: the multibody CVODE runs).
double estimate_run_mib(const ExperimentConfig& c);

/// Peak memory (MiB) of building the model alone (`mor export`): the estimate_run_mib figure
/// without the reduction.
double estimate_model_mib(const ExperimentConfig& c);

/// This machine's physical memory in MiB (sysconf), 0 if unknown: what the memory estimates
/// are held against (`mor run`, `mor sweep`, `--dry-run`).
double physical_memory_mib();

}  // namespace mor::experiments
