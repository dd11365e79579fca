// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "h2_error": ||G - G_r||_H2 and ||G||_H2 (dense up to the method's dense limit, else
// LR-ADI, or BT's own ADI factor with the same shifts on G_r), and their ratio, the relative H2
// error (the sweep column h2_error). Not computed, with the reason, for an unstable G_r.
#include <cstdint>

#include "experiments/runner/measures/frequency.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct H2Keys {
  bool h2 = true;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"h2", "", "H2 norm of the error system (and of the full system)"}, h2);
  }
  void check(const TableReader&) const {}
  bool requested() const { return h2; }
  double estimate_seconds(double n) const { return 1.5e-5 * n; }
  std::string progress_text() const { return "H2 norms"; }
};

void run_h2(const H2Keys&, MeasureContext& m) {
  const H2Reports f =
      h2_reports(m.linear->full, *m.linear->reduced.first_order, frequency_options(m));
  const std::string& grp = layout::kAnalysis;
  if (f.error.computed) {
    const double relative = f.error.value / f.full.value;
    m.set_figure("h2_error", relative);
    m.out.set_attribute(grp, "h2_full", f.full.value);
    m.out.set_attribute(grp, "h2_error", f.error.value);
    m.out.set_attribute(grp, "h2_error_relative", relative);
    m.out.set_attribute(grp, "h2_method", f.error.method);
    m.out.set_attribute(grp, "h2_full_method", f.full.method);
  }
  m.out.set_attribute(grp, "h2_status", f.error.status);
  m.out.set_attribute(grp, "h2_s", f.error.seconds);
}

}  // namespace

extern const MeasureInfo kH2ErrorMeasure;
using H2Measure = KeyedMeasure<H2Keys, kH2ErrorMeasure, &run_h2>;
extern const MeasureInfo kH2ErrorMeasure{
    "h2_error",
    "||G - G_r||_H2 / ||G||_H2 (/analysis attributes h2_error, h2_full, h2_error_relative, "
    "h2_method, h2_status)",
    AppliesTo::linear_reduced,
    {},
    {{"h2_error", "relative H2 error %.3g", "H2 err", "||G - G_r||_H2 / ||G||_H2"}},
    &H2Measure::read,
    &H2Measure::keys};

}  // namespace mor::experiments
