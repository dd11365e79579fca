// SPDX-License-Identifier: GPL-3.0-or-later
// Rough cost of one run before it starts: `mor sweep` schedules its points and guards their
// memory with these, `mor run` refuses a run that cannot fit and `mor run --dry-run` prints
// them. Rough means within a factor of a few on this 2-core machine; they are never results.
#pragma once

#include "experiments/runner/experiment.hpp"

namespace mor::experiments {

/// Wall time on one core (seconds), from the costs measured in docs/benchmarks.md and by the
/// default sweep: an implicit step of the chain costs about 15 ns per mass when it is linear and
/// 40 when it is not (Newton), an RK4 step 6; plus the reduction method's own estimate
/// (ReductionMethod::estimate_seconds) and, for linear methods, the frequency analysis.
double estimate_run_seconds(const ExperimentConfig& c);

/// Peak memory (MiB): the model and its workspace (about 400 bytes per state, and
/// io::kNetworkRunBytesPerElement per nonlinear element), 50 MB of program, plus the
/// reduction method's ReductionMethod::estimate_bytes (low-rank BT about 6 KiB per state, dense
/// BT a dozen n x n matrices, POD its snapshot matrices) and what a kind's own runs keep
/// (ModelSpec::own_runs_mib: the multibody CVODE runs).
double estimate_run_mib(const ExperimentConfig& c);

/// Peak memory (MiB) of building the model alone (`mor export`): the estimate_run_mib figure
/// without the reduction.
double estimate_model_mib(const ExperimentConfig& c);

/// This machine's physical memory in MiB (sysconf), 0 if unknown: what the memory estimates
/// are held against (`mor run`, `mor sweep`, `--dry-run`).
double physical_memory_mib();

}  // namespace mor::experiments
