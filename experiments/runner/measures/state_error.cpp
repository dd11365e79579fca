// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "state_error": the error q - V q_r of a projection's lifted reduced state against the
// full run's state, compared every state_stride steps while the full model runs (its states are
// not kept): ||q - V q_r|| / ||q|| over all of them and the largest pointwise relative error.
#include <cmath>
#include <cstdint>

#include "experiments/runner/measure.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct StateErrorKeys {
  // No keys: every run with a reduced model has it (its file says nothing of it).
  template <class V>
  void visit_keys(V&) {}
  void check(const TableReader&) const {}
  bool requested() const { return true; }
  double estimate_seconds(double) const { return 0.0; }
  std::string progress_text() const { return "state errors"; }
};

void run_state_error(const StateErrorKeys&, MeasureContext& m) {
  const StateComparison* s = m.simulated->states;
  if (s == nullptr) return;  // not a projection: no lifted state to compare
  const double relative = s->ref2 > 0.0 ? std::sqrt(s->err2 / s->ref2) : std::sqrt(s->err2);
  m.out.create_group(layout::kError);
  m.out.set_attribute(layout::kError, "state_relative_l2", relative);
  m.out.set_attribute(layout::kError, "state_relative_max", s->max_relative);
  m.out.set_attribute(layout::kError, "state_stride", static_cast<std::int64_t>(s->stride));
  m.out.set_attribute(layout::kError, "state_definition",
                      std::string("q - V q_r every state_stride steps; state_relative_l2 = "
                                  "||q - V q_r|| / ||q|| over all of them, state_relative_max = "
                                  "max over time of the pointwise relative error"));
  m.set_figure("state_error", relative);
}

}  // namespace

extern const MeasureInfo kStateErrorMeasure;
using StateErrorMeasure = KeyedMeasure<StateErrorKeys, kStateErrorMeasure, &run_state_error>;
extern const MeasureInfo kStateErrorMeasure{
    "state_error",
    "||q - V q_r|| / ||q|| of a projection's lifted state against the full run (/error "
    "state_relative_l2, state_relative_max)",
    AppliesTo::simulated,
    {},
    {{"state_error", "relative state error %.3g", "",
      "||q - V q_r|| / ||q|| over the compared steps"}},
    &StateErrorMeasure::read,
    &StateErrorMeasure::keys};

}  // namespace mor::experiments
