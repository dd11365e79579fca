// SPDX-License-Identifier: GPL-3.0-or-later
// The steps of a run shared by `mor run`, sweep points and the Python module (pipeline.hpp).
#include "experiments/runner/pipeline.hpp"

#include <cmath>

#include "experiments/runner/measure.hpp"
#include "experiments/runner/parametric_linear.hpp"
#include "experiments/runner/parametric_store.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/run_guards.hpp"
#include "src/core/errors.hpp"
#include "src/core/memory.hpp"

namespace mor::experiments {

ReductionMethod::Family reduction_family(const ExperimentConfig& c) {
  return c.reduction->family_for(*c.model);
}

std::string check_run(const ExperimentConfig& c, const KeptSamples& kept) {
  const IntegratorOptions& o = c.integrator;
  // As the [simulation] reader words it (experiment_file.cpp), for every front end.
  const double steps = (o.t_end - o.t0) / o.dt;
  require(!(std::isfinite(steps) && steps > static_cast<double>(c.max_steps)), c.source,
          ": t_end - t0 = ", o.t_end - o.t0, " with dt = ", o.dt, " is ", steps,
          " steps, above max_steps = ", c.max_steps,
          "; a larger dt, or raise max_steps if that many steps are meant");
  // A kept sample is copied once at the end (into the caller's arrays) while its buffer, grown by
  // doubling, may hold twice what it keeps: three times its size at the peak.
  const double kept_mib = 3.0 * 8.0 * static_cast<double>(kept.samples) *
                          static_cast<double>(kept.doubles_per_sample) / (1024.0 * 1024.0);
  const MemoryLimits limits = memory_limits();
  require(!(limits.hard_mib > 0 && kept_mib > limits.hard_mib), c.source, ": keeping ",
          kept.samples, " samples of ", kept.doubles_per_sample, " values needs about ",
          std::llround(kept_mib), " MiB, above this machine's budget of ",
          std::llround(limits.hard_mib), " MiB (", limits.hard_source,
          "); keep fewer (a larger stride, a shorter horizon, no snapshots)");
  return check_run_memory(c, kept_mib);
}

IntegrationStats simulate_full_step(FullModel& model, const Signal& input,
                                    const IntegratorOptions& o, const StepObserver& observe,
                                    ProgressReporter* progress) {
  Vector q = Vector::Zero(model.n()), v = Vector::Zero(model.n());
  return model.simulate(input, o, q, v, observe, progress);
}

ReductionStep reduce_step(const ExperimentConfig& c, const FullModel& model, LtiOperator* full,
                          io::RecordSink& out, const std::atomic<bool>* stop) {
  using Family = ReductionMethod::Family;
  ReductionStep step;
  step.family = reduction_family(c);
  if (step.family == Family::linear) {
    require(full != nullptr, "internal: reduce_step of the linear family without an operator");
    step.linearisation = model.linearisation();
    // With [parameters]: the parametric model (local reductions at the training points, one
    // global basis); `model` and `full` are the center's, which it returns the model of.
    // A sweep's parametric study: its stored model evaluated at the point, no offline work.
    ReducedModel& red = step.linear.emplace(
        c.stored_parametric ? stored_model_at(c)
        : c.parameters.empty()
            ? c.reduction->reduce_linear_in_run(c, model, *full, model.second_order_system(), stop)
            : reduce_linear_parametric(c, stop));
    // The bases served the parametric model; a run at one point does not keep them.
    red.V.resize(0, 0);
    red.W.resize(0, 0);
    if (!step.linearisation.empty())
      red.summary.details.set_attribute(layout::kReduction, "reduces",
                                        "the linearisation about " + step.linearisation);
  } else if (step.family == Family::projection) {
    step.projection.emplace(c.reduction->reduce_projection(c, model, stop));
  }
  if (const ReductionSummary* s = step.summary()) write_reduction(out, *s);
  return step;
}

std::vector<std::pair<std::string, double>> analyse_linear_step(const ExperimentConfig& c,
                                                                LtiOperator& full,
                                                                ReducedModel& reduced,
                                                                io::RecordSink& out) {
  out.create_group(layout::kAnalysis);
  out.set_attribute(
      layout::kAnalysis, "reduced_stable",
      static_cast<std::int64_t>(reduced.summary.spectral_abscissa.value_or(std::nan("")) < 0.0));
  if (c.analysis == nullptr) return {};
  const NormOptions norms = c.reduction->norm_options();
  LinearComparison linear{full, reduced, norms};
  MeasureContext m(out);
  m.linear = &linear;
  c.analysis->run(AppliesTo::linear_reduced, m);
  return m.figures();
}

SnapshotHooks snapshot_step(const ExperimentConfig& c, const FullModel& model,
                            io::ResultsWriter& out) {
  SnapshotHooks hooks{model, out, {}};
  if (c.analysis == nullptr) return hooks;
  MeasureContext m(out);
  m.snapshots = &hooks;
  c.analysis->run(AppliesTo::snapshots, m);
  return hooks;
}

std::vector<std::pair<std::string, double>> analyse_run_step(const ExperimentConfig& c,
                                                             io::RecordSink& out) {
  if (c.analysis == nullptr) return {};
  MeasureContext m(out);
  c.analysis->run(AppliesTo::every_run, m);
  return m.figures();
}

std::vector<std::pair<std::string, double>> analyse_simulated_step(const ExperimentConfig& c,
                                                                   const SimulatedComparison& runs,
                                                                   io::RecordSink& out) {
  if (c.analysis == nullptr) return {};
  MeasureContext m(out);
  m.simulated = &runs;
  c.analysis->run(AppliesTo::simulated, m);
  return m.figures();
}

}  // namespace mor::experiments
