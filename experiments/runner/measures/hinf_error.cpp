// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "hinf_error": ||G - G_r||_Hinf with its estimated accuracy and a status in words (level
// set up to 400 states, else BT's reference model or the subspace method started from the error
// curve's peaks: it needs the Bode measure's range and curves).
#include "experiments/runner/measures/frequency.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {

void record_hinf_report(io::RecordSink& out, const std::string& prefix,
                        const std::string& value_key, const NormReport& h) {
  const std::string& grp = layout::kAnalysis;
  if (h.computed) {
    out.set_attribute(grp, value_key, h.value);
    out.set_attribute(grp, prefix + "_omega", h.omega);
    out.set_attribute(grp, prefix + "_method", h.method);
    out.set_attribute(grp, prefix + "_relative_accuracy", h.relative_accuracy);
    out.set_attribute(grp, prefix + "_evaluation_error", h.evaluation_error);
    if (h.data_sensitivity >= 0.0)
      out.set_attribute(grp, prefix + "_data_sensitivity", h.data_sensitivity);
    out.set_attribute(grp, prefix + "_evaluations", static_cast<std::int64_t>(h.evaluations));
  }
  out.set_attribute(grp, prefix + "_status", h.status);
  out.set_attribute(grp, prefix + "_s", h.seconds);
}

namespace {

struct HinfKeys {
  bool hinf = true;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"hinf", "", "H-infinity norm of the error system"}, hinf);
  }
  void check(const TableReader&) const {}
  bool requested() const { return hinf; }
  double estimate_seconds(double n) const { return 2e-7 * n * 40.0; }  // about 40 solves
  std::string progress_text() const { return "H-infinity norms"; }
};

void run_hinf(const HinfKeys&, MeasureContext& m) {
  const NormReport h = hinf_error_report(m.linear->full, *m.linear->reduced.first_order,
                                         bode_curves_of(m), frequency_options(m));
  record_hinf_report(m.out, "hinf", "hinf_error", h);
  if (h.computed) m.set_figure("hinf_error", h.value);
  m.put("hinf_error", h);
}

}  // namespace

extern const MeasureInfo kHinfErrorMeasure;
using HinfMeasure = KeyedMeasure<HinfKeys, kHinfErrorMeasure, &run_hinf>;
extern const MeasureInfo kHinfErrorMeasure{
    "hinf_error",
    "||G - G_r||_Hinf with its accuracy, peak frequency and status (/analysis attributes "
    "hinf_error, hinf_*)",
    AppliesTo::linear_reduced,
    {"bode"},
    {{"hinf_error", "Hinf error %.3g", "", "||G - G_r||_Hinf"}},
    &HinfMeasure::read,
    &HinfMeasure::keys};

}  // namespace mor::experiments
