// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "hinf_error_relative": ||G - G_r||_Hinf / ||G||_Hinf, the error relative to the size of
// the system (comparable across models and scalings). It needs both norms, so it runs the
// hinf_error and hinf_full measures whether their keys ask for them or not; its status names the
// norm that could not be computed.
#include <cmath>

#include "experiments/runner/measures/frequency.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct HinfRelativeKeys {
  bool hinf_relative = false;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"hinf_relative", "",
          "also ||G - G_r||_Hinf / ||G||_Hinf (computes ||G||_Hinf, as hinf_full, and the error "
          "norm, as hinf, whatever those keys say)"},
      hinf_relative);
  }
  void check(const TableReader&) const {}
  bool requested() const { return hinf_relative; }
  double estimate_seconds(double) const { return 0.0; }  // the norms are their measures'
  std::string progress_text() const { return "relative H-infinity error"; }
};

void run_hinf_relative(const HinfRelativeKeys&, MeasureContext& m) {
  const NormReport* error = m.product<NormReport>("hinf_error");
  const NormReport* full = m.product<NormReport>("hinf_full");
  const std::string& grp = layout::kAnalysis;
  std::string status = "ok";
  if (error == nullptr || !error->computed)
    status = "not computed: ||G - G_r||_Hinf is not known (hinf_status)";
  else if (full == nullptr || !full->computed)
    status = "not computed: ||G||_Hinf is not known (hinf_full_status)";
  else if (!(full->value > 0.0))
    status = "not computed: ||G||_Hinf is 0";
  if (status == "ok") {
    const double relative = error->value / full->value;
    m.out.set_attribute(grp, "hinf_error_relative", relative);
    // Both values carry their own relative accuracy; the ratio's is at most their sum.
    m.out.set_attribute(grp, "hinf_error_relative_accuracy",
                        error->relative_accuracy + full->relative_accuracy);
    m.set_figure("hinf_error_relative", relative);
    if (error->status != "ok" || full->status != "ok")
      status = "warning: see hinf_status and hinf_full_status";
  }
  m.out.set_attribute(grp, "hinf_error_relative_status", status);
}

}  // namespace

extern const MeasureInfo kHinfRelativeMeasure;
using HinfRelativeMeasure =
    KeyedMeasure<HinfRelativeKeys, kHinfRelativeMeasure, &run_hinf_relative>;
extern const MeasureInfo kHinfRelativeMeasure{
    "hinf_error_relative",
    "||G - G_r||_Hinf / ||G||_Hinf (/analysis attributes hinf_error_relative, its accuracy and "
    "status)",
    AppliesTo::linear_reduced,
    {"hinf_error", "hinf_full"},
    {{"hinf_error_relative", "relative Hinf error %.3g", "Hinf rel.",
      "||G - G_r||_Hinf / ||G||_Hinf"}},
    &HinfRelativeMeasure::read,
    &HinfRelativeMeasure::keys};

}  // namespace mor::experiments
