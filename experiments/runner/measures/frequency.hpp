// SPDX-License-Identifier: GPL-3.0-or-later
// What the frequency-domain measures share (reduction/frequency_analysis.hpp computes them): the
// options of the analysis from the run's models, and the Bode measure's product, the curves and
// the frequency range, which the H-infinity measures start from. Internal to
// experiments/runner/measures.
#pragma once

#include "experiments/runner/measure.hpp"
#include "reduction/frequency_analysis.hpp"

namespace mor::experiments {

/// The Bode measure's product (measures/bode.cpp): its range, and the curves if it drew them.
struct BodeProduct {
  double omega_min = 1e-4, omega_max = 10.0;
  BodeCurves curves;
};

/// The analysis options of the run in m: the method's norm settings, what the reduction offers
/// (the a priori bound, ||G||_H2, the reference model, BT's ADI factor), the Bode measure's range.
inline FrequencyAnalysisOptions frequency_options(const MeasureContext& m) {
  FrequencyAnalysisOptions o;
  if (const BodeProduct* b = m.product<BodeProduct>("bode")) {
    o.omega_min = b->omega_min;
    o.omega_max = b->omega_max;
  }
  o.dense_limit = m.linear->norms.dense_limit;
  o.adi = m.linear->norms.adi;
  o.error_bound = m.linear->reduced.error_bound;
  o.h2_full = m.linear->reduced.h2_full;
  o.reference = m.linear->reduced.reference.get();
  o.reference_bound = m.linear->reduced.reference_bound;
  o.CZc = m.linear->reduced.CZc;
  o.adi_shifts = m.linear->reduced.adi_shifts;
  o.adi_residual = m.linear->reduced.adi_residual;
  return o;
}

/// The curves the H-infinity measures start from (empty without the Bode measure's curves).
inline const BodeCurves& bode_curves_of(const MeasureContext& m) {
  static const BodeCurves none;
  const BodeProduct* b = m.product<BodeProduct>("bode");
  return b != nullptr ? b->curves : none;
}

/// One H-infinity norm's attributes in /analysis: `value_key` and prefix_omega, _method, ...
void record_hinf_report(io::RecordSink& out, const std::string& prefix,
                        const std::string& value_key, const NormReport& h);

}  // namespace mor::experiments
