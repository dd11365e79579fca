// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "speedup": the full model's stepping time per step over the reduced model's (same
// integrator, options and steps; the reduced run has no writer, so its integration time is its
// stepping time): what the reduction buys online.
#include <algorithm>

#include "experiments/runner/measure.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct SpeedupKeys {
  // No keys: every run with a reduced model has it (its file says nothing of it).
  template <class V>
  void visit_keys(V&) {}
  void check(const TableReader&) const {}
  bool requested() const { return true; }
  double estimate_seconds(double) const { return 0.0; }
  std::string progress_text() const { return "speed-up"; }
};

void run_speedup(const SpeedupKeys&, MeasureContext& m) {
  const SimulatedComparison& s = *m.simulated;
  const double steps = static_cast<double>(std::max<Index>(1, s.steps));
  const double reduced_per_step = s.orders.front().seconds / steps;
  const double speedup =
      reduced_per_step > 0.0 ? (s.full_stepping_seconds / steps) / reduced_per_step : 0.0;
  m.out.create_group(layout::kTimings);
  m.out.set_attribute(layout::kTimings, "speedup_per_step", speedup);
  if (speedup > 0.0) m.set_figure("speedup", speedup);
}

}  // namespace

extern const MeasureInfo kSpeedupMeasure;
using SpeedupMeasure = KeyedMeasure<SpeedupKeys, kSpeedupMeasure, &run_speedup>;
extern const MeasureInfo kSpeedupMeasure{
    "speedup",
    "the full over the reduced model's stepping time per step (/timings speedup_per_step)",
    AppliesTo::simulated,
    {},
    {{"speedup", "%.3gx faster per step", "speed-up",
      "full stepping time per step / reduced stepping time per step", nullptr, SummaryLine::reduced,
      "%.0fx"}},
    &SpeedupMeasure::read,
    &SpeedupMeasure::keys};

}  // namespace mor::experiments
