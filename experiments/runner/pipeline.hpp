// SPDX-License-Identifier: GPL-3.0-or-later
// The steps of a run, shared by every front end: `mor run` and each sweep point
// (run_experiment, experiment.cpp) and the Python module (mor.reduce, mor.simulate:
// python/src/compute.cpp) call the same functions, so that no front end decides again what the
// runner decides, and no front end lacks a guard that another has. The steps: check what a run
// will need (check_run), reduce (reduce_step), simulate the full model (simulate_full_step) and a
// reduced one (simulate_reduced_step), and analyse (analyse_linear_step). Each step records what it
// did into a RecordSink: the results file in a run, memory in Python; the reduction step writes the
// method's typed summary (reduction_run.hpp: ReductionSummary, write_reduction).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "src/core/errors.hpp"
#include "src/core/progress.hpp"
#include "src/integrators/integrate.hpp"
#include "src/io/record.hpp"
#include "src/signals/signal.hpp"

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
  /// What the method reports (the summary of `linear` or `projection`); null for Family::none.
  const ReductionSummary* summary() const {
    return linear ? &linear->summary : projection ? &projection->summary : nullptr;
  }
  /// The main reduced model's order, and the offline wall time (all stages); 0 without one.
  Index r() const { return summary() != nullptr ? summary()->r : 0; }
  double seconds() const { return summary() != nullptr ? summary()->seconds : 0.0; }
};

/// The family c.reduction reduces c.model by (ReductionMethod::family_for), the one decision
/// every front end takes from here.
ReductionMethod::Family reduction_family(const ExperimentConfig& c);

/// Reduces `model` by c.reduction and writes its summary (write_reduction) as /reduction into out
/// (for a linearisation also the attribute reduces = "the linearisation about ..."). The method
/// records nothing while it runs: a failed reduction leaves no /reduction. The linear family
/// reduces `full`, the model's LtiOperator (FullModel::lti_operator, or the operator a Python
/// model holds), which the caller keeps for the analysis; the projection family projects the
/// model, trained on the runs of c.training. Nothing for Family::none.
/// @param full required for Family::linear, unused otherwise.
/// @throws InvalidArgument as the method; NumericalError as the method (the caller names the
///         method and the linearisation, as its front end words it); Interrupted when *stop.
ReductionStep reduce_step(const ExperimentConfig& c, const FullModel& model, LtiOperator* full,
                          io::RecordSink& out, const std::atomic<bool>* stop);

/// What a front end keeps of a run besides what it streams: doubles per kept sample (1 + p + the
/// state entries a snapshot keeps) and the number of samples, for check_run's memory estimate.
struct KeptSamples {
  Index samples = 0;
  Index doubles_per_sample = 0;
};

/// The guards of every run, before anything is built or allocated: (t_end - t0) / dt within
/// c.max_steps, and the run's memory (check_run_memory: the model, its factor, the method) plus
/// the samples the front end keeps in memory within this machine's budget. Returns a warning
/// line (empty if none) when the estimate exceeds the memory available now.
/// @throws InvalidArgument naming the step count and c.max_steps, or the estimate and the budget.
std::string check_run(const ExperimentConfig& c, const KeptSamples& kept = {});

/// The full model's run from rest (q = v = 0; a model that owns its simulation starts at its own
/// rest state): observe(k, t, q, v, u) at step 0, every o.observe_stride steps and the last one.
/// Polls o.stop_requested every step.
/// @throws NumericalError as the integrator; Interrupted when *o.stop_requested.
IntegrationStats simulate_full_step(FullModel& model, const Signal& input,
                                    const IntegratorOptions& o, const StepObserver& observe,
                                    ProgressReporter* progress = nullptr);

/// The analysis step of a linear reduced model: /analysis (its attribute reduced_stable) and the
/// measures of c.analysis that apply to a linear reduced model (experiments/runner/measure.hpp),
/// each after the measures it needs, recorded into out. Returns their figures by name (the run
/// summary's, the sweep columns'). Nothing but the group when c.analysis is null.
/// @throws Interrupted; a norm that cannot be computed is recorded with its reason instead.
std::vector<std::pair<std::string, double>> analyse_linear_step(const ExperimentConfig& c,
                                                                LtiOperator& full,
                                                                ReducedModel& reduced,
                                                                io::RecordSink& out);

/// What the measures of c.analysis that apply to snapshots (the stored energy, ...) do at each
/// snapshot of the full run of `model`: their row streams opened in out, their observers
/// returned in hooks.observers (empty when c.analysis is null or no measure applies).
SnapshotHooks snapshot_step(const ExperimentConfig& c, const FullModel& model,
                            io::ResultsWriter& out);

/// The comparison step of a run with a reduced model, after the full and the reduced runs: the
/// measures of c.analysis that apply to simulated runs (the output and state errors, ...),
/// recorded into out. Returns their figures by name.
std::vector<std::pair<std::string, double>> analyse_simulated_step(const ExperimentConfig& c,
                                                                   const SimulatedComparison& runs,
                                                                   io::RecordSink& out);

/// The last step of every run: the measures of c.analysis that apply to every run (its costs,
/// such as the memory peak), recorded into out. Returns their figures by name.
std::vector<std::pair<std::string, double>> analyse_run_step(const ExperimentConfig& c,
                                                             io::RecordSink& out);

/// A reduced model's run from rest, observed as in simulate_full_step. The observer is a template
/// parameter: the reduced model's steps are the cheap ones whose speed-up the run measures.
/// @throws NumericalError "reduced model (<label>): ..."; Interrupted when *o.stop_requested.
template <class Model, class Observer>
IntegrationStats simulate_reduced_step(const Model& model, const Signal& input,
                                       const IntegratorOptions& o, Observer&& observe,
                                       const std::string& label) {
  typename Model::Workspace ws(model);
  Vector q = Vector::Zero(model.n()), v = Vector::Zero(model.n());
  ProgressReporter progress(label + ": reduced run", g_progress_enabled.load());
  try {
    return integrate(model, ws, input, o, q, v, std::forward<Observer>(observe), &progress);
  } catch (const NumericalError& e) {
    throw NumericalError(detail::concat("reduced model (", label, "): ", e.what()));
  }
}

}  // namespace mor::experiments
