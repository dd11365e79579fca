// SPDX-License-Identifier: GPL-3.0-or-later
// Transfer functions, Bode magnitudes and the H2 and H-infinity norms of stable LTI systems and
// of error systems G - G_r (see ErrorLtiOperator), for dense small and sparse large systems.
//   H2:    ||G||_H2^2 = trace(C P C^T) = ||C Z_c||_F^2 (P = Z_c Z_c^T the controllability Gramian)
//   H-inf: ||G||_Hinf = sup_w sigma_max(G(i w))
#pragma once

#include <string>

#include "reduction/low_rank_adi.hpp"

namespace mor {

/// G(s) = C (s E - A)^{-1} B + D_ff (p x m) at one complex frequency s.
ComplexMatrix transfer_function(LtiOperator& sys, Complex s);

/// Largest singular value of G(i w) for each w (rad/s, w >= 0).
Vector sigma_max(LtiOperator& sys, const Vector& omega);

/// n logarithmically spaced frequencies from w_min to w_max (both > 0, n >= 2).
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
/// Converges quadratically to relative accuracy `tolerance`.
/// @throws NumericalError if the system is not stable.
HinfResult hinf_norm_level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                               const Matrix& D_ff, double tolerance = 1e-10);

/// For large systems: sigma_max on a logarithmic grid of n_grid frequencies in [w_min, w_max],
/// then local refinement (golden section / parabolic) around every local maximum of the grid
/// until the peak frequency is located to relative accuracy `tolerance`. A lower bound of the
/// true norm (peaks between grid points narrower than the grid may be missed); say so in output.
HinfResult hinf_norm_sweep(LtiOperator& sys, double w_min, double w_max, Index n_grid = 400,
                           double tolerance = 1e-8);

/// ||G||_H2 from a controllability Gramian factor: ||C Z_c||_F (requires D_ff = 0 for a finite
/// norm; throws InvalidArgument otherwise).
double h2_norm_from_factor(const LtiOperator& sys, const Matrix& Zc);

/// ||G||_H2 of a dense system via the dense Hammarling factor.
double h2_norm_dense(const LtiOperator& sys);

struct H2Result {
  double norm = 0.0;
  AdiResult adi;  ///< the LR-ADI run on the (error) system, for its status and history
};
/// ||G||_H2 of a large system via LR-ADI on it (for an ErrorLtiOperator this is the H2 error,
/// computed as a sum of squares, free of the cancellation of ||G||^2 - 2<G,G_r> + ||G_r||^2).
/// @throws NumericalError if LR-ADI does not converge (the message carries its residual).
H2Result h2_norm_low_rank(LtiOperator& sys, const AdiOptions& options = {});

}  // namespace mor
