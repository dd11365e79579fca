// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "hinf_full": ||G||_Hinf of the full model, with its accuracy and status (started from
// the full curve's peaks and the reduced model's peak: it needs the Bode measure).
#include "experiments/runner/measures/frequency.hpp"

namespace mor::experiments {
namespace {

struct HinfFullKeys {
  bool hinf_full = false;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"hinf_full", "", "also ||G||_Hinf of the full model"}, hinf_full);
  }
  void check(const TableReader&) const {}
  bool requested() const { return hinf_full; }
  double estimate_seconds(double n) const { return 2e-7 * n * 40.0; }
  std::string progress_text() const { return "||G||_Hinf"; }
};

void run_hinf_full(const HinfFullKeys&, MeasureContext& m) {
  const NormReport h = hinf_full_report(m.linear->full, *m.linear->reduced.first_order,
                                        bode_curves_of(m), frequency_options(m));
  record_hinf_report(m.out, "hinf_full", "hinf_full", h);
  if (h.computed) m.set_figure("hinf_full", h.value);
  m.put("hinf_full", h);
}

}  // namespace

extern const MeasureInfo kHinfFullMeasure;
using HinfFullMeasure = KeyedMeasure<HinfFullKeys, kHinfFullMeasure, &run_hinf_full>;
extern const MeasureInfo kHinfFullMeasure{
    "hinf_full",
    "||G||_Hinf of the full model with its accuracy and status (/analysis attributes hinf_full, "
    "hinf_full_*)",
    AppliesTo::linear_reduced,
    {"bode"},
    {{"hinf_full", "", "", "||G||_Hinf"}},
    &HinfFullMeasure::read,
    &HinfFullMeasure::keys};

}  // namespace mor::experiments
