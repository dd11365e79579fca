// SPDX-License-Identifier: GPL-3.0-or-later
// The validation of a parametric reduced model (reduction/parametric_model.hpp) at unseen
// parameters: at each point of [validation], the full model at that point and the parametric
// reduced model evaluated there both run on the experiment's [input]; /validation records the
// points, the relative output errors and the costs per step (results_layout.hpp).
#pragma once

#include <atomic>

#include "experiments/runner/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "reduction/parametric_model.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"

namespace mor::experiments {

/// The parameters of `domain` against the model `spec`: each a key the model's operators are
/// affine in (ModelSpec::parameter_refusal) and not given in [model] (model_table, or nullptr),
/// at most 16, the model valid at every corner of the box (its keys' bounds are then met inside:
/// each bound is on one key). `where` (the [parameters] table, or nullptr) locates messages.
/// @throws InvalidArgument naming the parameter, the value and the reason.
void check_parameters(const ModelSpec& spec, const ParameterDomain& domain,
                      const toml::table* where, const toml::table* model_table,
                      const std::string& source);

/// /parameters: the domain of c and the run's own point (its center).
void record_parameters(const ExperimentConfig& c, io::ResultsWriter& out);

/// Runs the full and the reduced model at c.validation_samples points (seed c.validation_seed)
/// and writes /validation into out. Polls *stop between and inside the runs.
/// @throws NumericalError naming the point if a run diverges; Interrupted.
RunSummary::Validation validate_parametric(const ExperimentConfig& c,
                                           const ParametricProjectedModel& model,
                                           const Signal& input, io::ResultsWriter& out,
                                           const std::atomic<bool>* stop);

/// The same for a linear method's parametric model, plus at each point the figures of the
/// [analysis] measures that apply to a linear reduced model (||G(mu) - G_r(mu)||_Hinf, ...) as
/// /validation/figures/<name>, and with c.validation_compare_local the method's own local model
/// at the point: its order (local_r), its a priori bound (local_error_bound) and its figures
/// (local_<name>).
RunSummary::Validation validate_parametric_linear(const ExperimentConfig& c,
                                                  const ParametricLtiModel& model,
                                                  const Signal& input, io::ResultsWriter& out,
                                                  const std::atomic<bool>* stop);

}  // namespace mor::experiments
