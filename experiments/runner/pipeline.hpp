// SPDX-License-Identifier: GPL-3.0-or-later
// The steps of a run, shared by every front end: `mor run` and each sweep point
// (run_experiment, experiment.cpp) and the Python module (mor.reduce, python/src/compute.cpp)
// call the same functions, so that no front end decides again what the runner decides. Each
// step records what it did into a RecordSink: the results file in a run, memory in Python.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "src/io/record.hpp"

namespace mor::experiments {

/// What the reduction step gives: the linear family's reduced model or the projection
/// family's projected nonlinear models, and what every front end reports of them.
struct ReductionStep {
  ReductionMethod::Family family = ReductionMethod::Family::none;
  std::optional<ReducedModel> linear;             ///< Family::linear
  std::optional<ProjectionReduction> projection;  ///< Family::projection
  /// "" unless a linear method reduced a nonlinear model: the state its linearisation is about
  /// (FullModel::linearisation()); the errors then compare with the nonlinear model.
  std::string linearisation;
  Index r = 0;         ///< the main reduced model's order
  double seconds = 0;  ///< offline wall time, all stages
  /// Offline wall time per stage, in the order run ("gramians_s", "projection_s", ...).
  std::vector<std::pair<std::string, double>> stages;
};

/// The family c.reduction reduces c.model by (ReductionMethod::family_for), the one decision
/// every front end takes from here.
ReductionMethod::Family reduction_family(const ExperimentConfig& c);

/// Reduces `model` by c.reduction and records /reduction into out (the method's record; for a
/// linearisation also the attribute reduces = "the linearisation about ..."). The linear family
/// reduces `full`, the model's LtiOperator (FullModel::lti_operator, or the operator a Python
/// model holds), which the caller keeps for the analysis; the projection family projects the
/// model, trained on the runs of c.training. Nothing for Family::none.
/// @param full required for Family::linear, unused otherwise.
/// @throws InvalidArgument as the method; NumericalError as the method (the caller names the
///         method and the linearisation, as its front end words it); Interrupted when *stop.
ReductionStep reduce_step(const ExperimentConfig& c, const FullModel& model, LtiOperator* full,
                          io::RecordSink& out, const std::atomic<bool>* stop);

}  // namespace mor::experiments
