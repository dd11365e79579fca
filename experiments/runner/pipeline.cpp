// SPDX-License-Identifier: GPL-3.0-or-later
// The steps of a run shared by `mor run`, sweep points and the Python module (pipeline.hpp).
#include "experiments/runner/pipeline.hpp"

#include "experiments/runner/results_layout.hpp"
#include "src/core/errors.hpp"

namespace mor::experiments {

ReductionMethod::Family reduction_family(const ExperimentConfig& c) {
  return c.reduction->family_for(*c.model);
}

ReductionStep reduce_step(const ExperimentConfig& c, const FullModel& model, LtiOperator* full,
                          io::RecordSink& out, const std::atomic<bool>* stop) {
  using Family = ReductionMethod::Family;
  ReductionStep step;
  step.family = reduction_family(c);
  if (step.family == Family::linear) {
    require(full != nullptr, "internal: reduce_step of the linear family without an operator");
    step.linearisation = model.linearisation();
    ReducedModel& red = step.linear.emplace(
        c.reduction->reduce_linear_in_run(c, model, *full, model.second_order_system(), out, stop));
    if (!step.linearisation.empty())
      out.set_attribute(layout::kReduction, "reduces",
                        "the linearisation about " + step.linearisation);
    step.r = red.r;
    step.seconds = red.seconds;
    step.stages = red.stages;
  } else if (step.family == Family::projection) {
    ProjectionReduction& red =
        step.projection.emplace(c.reduction->reduce_projection(c, model, out, stop));
    step.r = red.main.r;
    step.seconds = red.seconds;
    step.stages = red.stages;
  }
  return step;
}

}  // namespace mor::experiments
