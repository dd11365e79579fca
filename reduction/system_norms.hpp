// SPDX-License-Identifier: GPL-3.0-or-later
// Transfer functions, Bode magnitudes and the H2 and H-infinity norms of stable LTI systems and
// of error systems G - G_r (see ErrorLtiOperator), for dense small and sparse large systems.
//   H2:    ||G||_H2^2 = trace(C P C^T) = ||C Z_c||_F^2 (P = Z_c Z_c^T the controllability Gramian)
//   H-inf: ||G||_Hinf = sup_w sigma_max(G(i w))
#pragma once

#include <string>

#include "reduction/low_rank_adi.hpp"

namespace mor {

/// G(s) = C (s E - A)^{-1} B + D_ff (p x m) at one complex frequency s: one complex shifted
/// solve with m right-hand sides, sys.solve_shifted(-s, B).
/// @throws InvalidArgument if s is not finite; NumericalError if s is a pole (A - s E singular).
ComplexMatrix transfer_function(LtiOperator& sys, Complex s);

/// Largest singular value of G(i w) for each w (rad/s, w >= 0), one shifted solve each.
/// @throws InvalidArgument naming a negative or non-finite frequency.
Vector sigma_max(LtiOperator& sys, const Vector& omega);

/// |G_ij(i w_k)| for each frequency w_k (rad/s, >= 0): row k holds the p*m magnitudes of
/// G(i w_k) in column-major order (entry (i, j) in column j * p + i), one shifted solve each.
Matrix bode_magnitude(LtiOperator& sys, const Vector& omega);

/// n logarithmically spaced frequencies from w_min to w_max (both > 0, n >= 2).
/// @throws InvalidArgument naming the value if w_min <= 0, w_max <= w_min or n < 2.
Vector log_frequencies(double w_min, double w_max, Index n);

struct HinfResult {
  double norm = 0.0;               ///< ||G||_Hinf
  double omega = 0.0;              ///< a frequency where the supremum is attained (rad/s)
  double relative_accuracy = 0.0;  ///< certified (level set) or estimated (sweep) relative gap
  Index evaluations = 0;           ///< transfer-function evaluations or Hamiltonian eigen-solves
  std::string method;              ///< "level-set" or "sweep"
};

/// Level-set method of Bruinsma & Steinbuch (Systems & Control Letters 14 (1990) 287-293) on the
/// Hamiltonian matrix, for dense systems with E nonsingular (small n: O(n^3) per iteration).
/// E may be empty (identity), D_ff empty (zero). The pencil is reduced to E^{-1} A, E^{-1} B
/// (so an ill-conditioned E costs accuracy); G(i w) is evaluated in O(n^2 m) on the Hessenberg
/// form of E^{-1} A. Converges quadratically; on return the norm lies in
/// [norm, norm (1 + relative_accuracy)], relative_accuracy <= 2 tolerance. norm is a computed
/// sigma_max(G(i omega)); omega is infinite when the supremum is sigma_max(D_ff), approached as
/// w -> infinity. evaluations counts the Hamiltonian eigensolves (2n x 2n, unstructured QR).
/// @throws InvalidArgument on size mismatch, non-finite entries or tolerance outside (0, 1);
///         NumericalError if E is singular or the system is not stable (naming the eigenvalue
///         of E^{-1} A with real part >= -1e3 eps ||E^{-1} A||_1).
HinfResult hinf_norm_level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                               const Matrix& D_ff, double tolerance = 1e-10);

/// For large systems: sigma_max on a logarithmic grid of n_grid frequencies in [w_min, w_max]
/// and at w = 0 (the static gain), then Brent's parabolic / golden-section refinement on log w
/// between the neighbours of the local maxima of the grid, largest first, until the peak
/// frequency is located to relative accuracy ~tolerance (at most 8 peaks, 30 evaluations per
/// peak, 160 in all: at most n_grid + 161 evaluations, each one complex shifted solve).
/// The result is a lower bound of the true norm: peaks narrower than the grid spacing and peaks
/// outside [w_min, w_max] may be missed; say so in output. relative_accuracy is an estimate of
/// the refinement only (parabolic vertex minus best value), not of what the grid missed.
/// @throws InvalidArgument if w_min <= 0, w_max <= w_min, n_grid < 3 or tolerance not in (0, 1).
HinfResult hinf_norm_sweep(LtiOperator& sys, double w_min, double w_max, Index n_grid = 400,
                           double tolerance = 1e-8);

/// The same, refining first around hint frequencies |hints[k]| inside [w_min, w_max], each in a
/// bracket of one grid spacing either side (3 + up to 30 evaluations per hint, on top of the
/// budget above). Hints catch peaks narrower than the grid: e.g. the imaginary parts of the
/// least damped poles of a reduced model, which approximate the dominant poles of the full one.
/// @throws InvalidArgument as above, or for a non-finite hint.
HinfResult hinf_norm_sweep(LtiOperator& sys, double w_min, double w_max, const Vector& hints,
                           Index n_grid = 400, double tolerance = 1e-8);

/// ||G||_H2 from a controllability Gramian factor: ||C Z_c||_F (requires D_ff = 0 for a finite
/// norm; throws InvalidArgument otherwise).
double h2_norm_from_factor(const LtiOperator& sys, const Matrix& Zc);

/// ||G||_H2 of a dense system via the dense Hammarling factor of the controllability Gramian
/// (small n: the operator is formed densely). @throws InvalidArgument if D_ff != 0;
/// NumericalError if the system is not stable or E is singular.
double h2_norm_dense(const LtiOperator& sys);

struct H2Result {
  double norm = 0.0;
  AdiResult adi;  ///< the LR-ADI run on the (error) system, for its status and history
};
/// ||G||_H2 of a large system via LR-ADI on it (for an ErrorLtiOperator this is the H2 error,
/// computed as a sum of squares, free of the cancellation of ||G||^2 - 2<G,G_r> + ||G_r||^2).
/// Uses the controllability Gramian (||C Z_c||_F), or the observability one (||B^T Z_o||_F)
/// when there are fewer outputs than inputs, as each ADI step solves with that many columns.
/// @throws InvalidArgument if D_ff != 0 or for bad options; NumericalError if LR-ADI does not
///         converge (the message carries its residual) or a shifted solve fails.
H2Result h2_norm_low_rank(LtiOperator& sys, const AdiOptions& options = {});

}  // namespace mor
