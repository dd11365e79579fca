// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "bode": sigma_max(G(i w)), sigma_max(G_r(i w)) and sigma_max(G(i w) - G_r(i w)) over
// [omega_min, omega_max] (reduction/frequency_analysis.hpp: the fixed logarithmic grid, or for
// models above 400 states adaptively placed frequencies). Its range and curves are where the
// H-infinity measures start.
#include <cstdint>

#include "experiments/runner/measures/frequency.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct BodeKeys {
  Index bode_points = 100;
  double omega_min = 1e-4, omega_max = 10.0;
  Index hinf_grid = 200;  ///< unused (was the large-system H-infinity sweep's grid)

  template <class V>
  void visit_keys(V& v) {
    v(Key{"bode_points", "", "frequencies of the sigma_max(G(i w)) curves, at most 10^6; 0: none"},
      bode_points);
    v(Key{"omega_min", "rad/s", "lowest frequency of the curves and the H-infinity grid"},
      omega_min);
    v(Key{"omega_max", "rad/s", "highest frequency"}, omega_max);
    v(Key{"hinf_grid", "",
          "no longer used (models above 400 states get their H-infinity norms from the subspace "
          "method, docs/results.md); kept so that existing files parse, >= 10"},
      hinf_grid);
  }
  void check(const TableReader& r) const {
    // 2e9 points ran out of memory after seconds (or computed for days): a cap well above any
    // plot, as for the steps of a run.
    constexpr Index kMaxBodePoints = 1'000'000;
    require(bode_points >= 0 && bode_points != 1 && bode_points <= kMaxBodePoints,
            r.where("bode_points"), ": analysis.bode_points must be 0 (none) or in 2..",
            kMaxBodePoints, ", got ", bode_points);
    require(omega_min > 0.0 && omega_max > omega_min, r.where("omega_min"),
            ": analysis needs 0 < omega_min < omega_max, got omega_min = ", omega_min,
            ", omega_max = ", omega_max);
    require(hinf_grid >= 10, r.where("hinf_grid"), ": analysis.hinf_grid must be >= 10, got ",
            hinf_grid);
  }
  bool requested() const { return bode_points >= 2; }
  double estimate_seconds(double n) const { return 1.3e-7 * n * static_cast<double>(bode_points); }
  std::string progress_text() const { return detail::concat(bode_points, " Bode points"); }
};

void run_bode(const BodeKeys& k, MeasureContext& m) {
  BodeProduct p;
  p.omega_min = k.omega_min;
  p.omega_max = k.omega_max;
  if (k.bode_points >= 2) {
    FrequencyAnalysisOptions o = frequency_options(m);
    o.omega_min = k.omega_min;
    o.omega_max = k.omega_max;
    o.bode_points = k.bode_points;
    p.curves = bode_curves(m.linear->full, *m.linear->reduced.first_order, o);
    const BodeCurves& f = p.curves;
    const std::string& grp = layout::kAnalysis;
    m.out.write_vector(layout::kAnalysisOmega, f.omega);
    m.out.write_vector(layout::kAnalysisSigmaFull, f.sigma_full);
    m.out.write_vector(layout::kAnalysisSigmaReduced, f.sigma_reduced);
    m.out.write_vector(layout::kAnalysisSigmaError, f.sigma_error);
    m.out.write_vector(layout::kAnalysisOmegaReduced, f.omega_reduced);
    m.out.write_vector(layout::kAnalysisSigmaReducedDense, f.sigma_reduced_dense);
    m.out.set_attribute(grp, "bode_method", f.method);
    m.out.set_attribute(grp, "bode_solves", static_cast<std::int64_t>(f.solves));
    m.out.set_attribute(grp, "bode_s", f.seconds);
  }
  m.put("bode", std::move(p));
}

}  // namespace

extern const MeasureInfo kBodeMeasure;
using BodeMeasure = KeyedMeasure<BodeKeys, kBodeMeasure, &run_bode>;
extern const MeasureInfo kBodeMeasure{
    "bode",
    "sigma_max curves of G, G_r and G - G_r over [omega_min, omega_max] (/analysis/omega, "
    "sigma_full, sigma_reduced, sigma_error; the reduced model alone on the fixed grid)",
    AppliesTo::linear_reduced,
    {},
    {},
    &BodeMeasure::read,
    &BodeMeasure::keys};

}  // namespace mor::experiments
