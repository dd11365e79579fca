// SPDX-License-Identifier: GPL-3.0-or-later
// The frequency-domain comparison of a full model G and a reduced one G_r that an experiment
// records: sigma_max curves (Bode), H2 and H-infinity norms of G and of the error G - G_r, each
// norm with an estimate of its accuracy and a status in words. Large models are analysed at the
// cost of tens of shifted solves: the full model's curve at adaptively chosen frequencies
// evaluated on both cores with one symbolic analysis, the H-infinity norms by the subspace
// method (hinf_norm_subspace) started from the curve's peaks and the reduced model's poles.
#pragma once

#include <string>
#include <vector>

#include "reduction/system_norms.hpp"

namespace mor {

/// G(i w_k) for every frequency (rad/s, >= 0), on `threads` threads when the operator offers
/// solver copies (LtiOperator::solver_copy; each copy its own factor cache, the symbolic
/// analysis of the pattern done once per copy), else on one. Results are those of
/// transfer_function, in the order of omega.
std::vector<ComplexMatrix> transfer_functions(LtiOperator& sys, const Vector& omega,
                                              int threads = 2);

/// A sigma_max curve at adaptively chosen frequencies: `budget` points at most in
/// [w_min, w_max], a third on a logarithmic grid (with the seeds inside the range), the rest
/// placed in rounds at the geometric midpoints of the intervals where log sigma_max turns or
/// jumps most (more than 2% between neighbours in log-log slope or value), so a smooth curve
/// costs few solves and a resonance gets the points. Evaluated by transfer_functions.
struct SampledResponse {
  Vector omega;                  ///< increasing
  std::vector<ComplexMatrix> G;  ///< G(i omega_k)
  Vector sigma;                  ///< sigma_max(G(i omega_k))
};
SampledResponse adaptive_response(LtiOperator& sys, double w_min, double w_max, Index budget,
                                  const Vector& seeds = Vector(), int threads = 2);

struct FrequencyAnalysisOptions {
  Index bode_points = 100;  ///< the reduced model's curve (fixed log grid); 0: no curves
  double omega_min = 1e-4, omega_max = 10.0;
  bool h2 = true, hinf = true, hinf_full = false;
  Index dense_limit = 1500;     ///< dense H2 up to this order, low-rank beyond
  Index level_set_limit = 400;  ///< level set up to this order, subspace method beyond
  /// Beyond level_set_limit the full model's curve takes at most this many adaptively placed
  /// frequencies (adaptive_response) instead of bode_points fixed ones.
  Index adaptive_points = 40;
  AdiOptions adi;
  double error_bound = -1.0;  ///< the reduction's a priori Hinf error bound; < 0: none
  /// ||G||_H2 if the reduction knows it (BT's low-rank factor: ||C Z_c||_F); < 0: computed here.
  double h2_full = -1.0;
  /// A more accurate model of G from the reduction (BT of a larger order q from the same
  /// Gramian factors) and a bound on ||G - reference||_Hinf: for large models the Hinf error is
  /// then located on reference - G_r by the level set and climbed on the full model
  /// (hinf_error_with_reference). null: the subspace method alone.
  const DenseLtiOperator* reference = nullptr;
  double reference_bound = -1.0;
  /// The reduction's controllability LR-ADI: C Z_c (p x k) column for column, the shift of each
  /// step and its final relative residual. For large models the H2 error is then
  /// ||C Z_c - C_r Z_r||_F with Z_r from the same shifts on the reduced model
  /// (h2_error_from_adi_factor), no large solve. Empty: LR-ADI on the error system.
  Matrix CZc;
  std::vector<Complex> adi_shifts;
  double adi_residual = -1.0;
  int threads = 2;
};

/// One norm with what is known of its accuracy.
struct NormReport {
  bool computed = false;
  double value = 0.0;
  double omega = 0.0;              ///< Hinf: where the peak is attained
  double relative_accuracy = 0.0;  ///< estimated (see status and evaluation_error)
  double evaluation_error = 0.0;   ///< absolute estimate of the evaluation's rounding error
  double data_sensitivity = -1.0;  ///< what rounding the reduced model's data may change; < 0: n/a
  Index evaluations = 0;
  std::string method;
  std::string status = "not requested";
  double seconds = 0.0;
};

/// The sigma_max curves: full, reduced and error on `omega` (adaptive for large models, else the
/// fixed grid); the reduced model alone on `omega_reduced` (the fixed grid of bode_points).
/// Empty when bode_points < 2.
struct BodeCurves {
  Vector omega, sigma_full, sigma_reduced, sigma_error;
  Vector omega_reduced, sigma_reduced_dense;
  Index solves = 0;
  std::string method;  ///< "fixed" or "adaptive"
  double seconds = 0.0;
};

/// ||G||_H2 and ||G - G_r||_H2 (dense up to dense_limit states, else LR-ADI or the reduction's
/// ADI factor); "not computed" with the reason for an unstable G_r or a failing ADI.
struct H2Reports {
  NormReport full, error;
};

struct FrequencyAnalysis {
  BodeCurves curves;
  NormReport h2_full, h2_error, hinf_error, hinf_full;
};

/// The parts of the analysis, each on its own (the runner's measures call them one by one):
/// the curves (bode_points >= 2), the H2 norms, and the H-infinity norms of G - G_r and of G,
/// started from the curves' peaks when there are curves. An Hinf status is "ok" only when the
/// value is resolved by its evaluation and meets the a priori bound; otherwise it says in words
/// which of these fails: the value is below the evaluation's error estimate (rounding noise near
/// a lightly damped pole), it exceeds the bound, the bound lies below what double precision
/// resolves for this reduced model (data_sensitivity), the subspace iteration did not settle.
BodeCurves bode_curves(LtiOperator& full, DenseLtiOperator& reduced,
                       const FrequencyAnalysisOptions& options);
H2Reports h2_reports(LtiOperator& full, DenseLtiOperator& reduced,
                     const FrequencyAnalysisOptions& options);
NormReport hinf_error_report(LtiOperator& full, DenseLtiOperator& reduced, const BodeCurves& curves,
                             const FrequencyAnalysisOptions& options);
NormReport hinf_full_report(LtiOperator& full, DenseLtiOperator& reduced, const BodeCurves& curves,
                            const FrequencyAnalysisOptions& options);

/// All of them as options says (o.h2, o.hinf, o.hinf_full). Norms that cannot be computed (an
/// unstable reduced model, an ADI that does not converge) carry their reason in status.
FrequencyAnalysis analyse_frequency_response(LtiOperator& full, DenseLtiOperator& reduced,
                                             const FrequencyAnalysisOptions& options);

}  // namespace mor
