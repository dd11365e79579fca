// SPDX-License-Identifier: GPL-3.0-or-later
// The rational Krylov subspace method (RKSM) with adaptive poles for the Gramians of large sparse
// stable systems, the alternative to LR-ADI where ADI converges slowly (lightly damped systems):
//   Druskin, Simoncini, "Adaptive rational Krylov subspaces for large-scale dynamical systems",
//   Systems & Control Letters 60 (2011) 546-560;
//   Druskin, Knizhnerman, Simoncini, "Analysis of the rational Krylov subspace and ADI methods
//   for solving the Lyapunov equation", SIAM J. Numer. Anal. 49 (2011) 1875-1898.
//
// For the controllability Gramian  A P E^T + E P A^T + B B^T = 0  an orthonormal basis V of
//     span{ (A - s_1 E)^{-1} B, (A - s_2 E)^{-1} E v_1, (A - s_3 E)^{-1} E v_2, ... }
// is built (for E = I the space starts with B itself, the pole at infinity), with real poles
// s_j > 0 or complex ones whose real and imaginary parts both enter V (the space is closed under
// conjugation, so V stays real). The Galerkin condition V^T R V = 0 gives the small equation
//     A_k Y E_k^T + E_k Y A_k^T + B_k B_k^T = 0,   A_k = V^T A V, E_k = V^T E V, B_k = V^T B,
// solved densely (Hammarling), and P ~ V Y V^T = Z Z^T. The next pole maximizes
//     prod_j |s - s_j| / prod_j |s - lambda_j|
// over the boundary of the convex hull of the mirrored Ritz values -lambda_j of (A_k, E_k) and
// of initial spectral estimates (Druskin-Simoncini). The observability Gramian is the same with
// A^T, E^T, C^T. The residual norm is exact for the current factor: an orthonormal basis Q of
// span[E V, A V, B] is kept alongside V, so ||R||_2 is the norm of a small matrix.
//
// Costs: one shifted sparse solve per pole (two real columns per input for a complex pole), O(n k)
// orthogonalization per step and O(k^3) dense work whenever Ritz values and the projected
// equation are updated, which happens after a growing number of steps (about k / 20). Memory:
// V and Q, about 3 n k doubles. Galerkin projection keeps the projected pencil stable when
// A + A^T is negative definite and E = E^T > 0; otherwise (as for a second-order system in
// first-order form) a projected pencil can become unstable, and the run stops with a
// NumericalError naming the step and the eigenvalue.
#pragma once

#include "reduction/low_rank_adi.hpp"

namespace mor {

struct RksmOptions {
  double tolerance = 1e-10;    ///< on the relative residual ||R||_2 / ||B^T B||_2
  Index max_dimension = 1000;  ///< largest basis dimension k (columns of V)
  /// Arnoldi steps for the initial outer and inner spectral estimates (see
  /// detail::pencil_ritz_estimates); they bound the region the poles are chosen in.
  Index arnoldi_steps = 20;
  Index inverse_arnoldi_steps = 20;
  /// Ritz values and the projected equation are updated every max(1, k / update_ratio) steps
  /// (every step while the basis is small): the O(k^3) work stays a fraction of the total.
  Index update_ratio = 20;
  /// Stops with AdiStatus::stalled when the best residual of the last stall_window updates is
  /// not below stall_factor times the best before them (0 disables either).
  double stall_factor = 0.9;
  Index stall_window = 30;
  const std::atomic<bool>* stop_requested = nullptr;  ///< polled once per step
};

/// RKSM for the Gramian `kind` of `sys`. The result has the form of an LR-ADI result: Z (n x
/// rank, compressed to the numerical rank of Y), status, message, `iterations` = poles used
/// (a complex pole counts once), residual_history (one entry per update, after `iterations`
/// poles), `shifts` = -s_j (the equivalent ADI shift of each pole, Re < 0), timings (shift_seconds
/// covers the Ritz values and pole selection).
/// @throws InvalidArgument for bad options; NumericalError if a shifted matrix is singular, the
///         projected pencil is not stable, or the iterate becomes non-finite (naming the step and
///         the value); Interrupted if stop_requested is set.
AdiResult rational_krylov(LtiOperator& sys, GramianKind kind, const RksmOptions& options = {});

}  // namespace mor
