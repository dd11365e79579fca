// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank Cholesky-factor ADI (LR-ADI) for the Gramians of large sparse stable systems, in the
// residual-factor formulation with complex shift pairs handled in real arithmetic:
//   Benner, Kuerschner, Saak, "Efficient handling of complex shift parameters in the low-rank
//   ADI method", Numer. Algorithms 62 (2013) 225-251;
//   Benner, Kuerschner, Saak, "Self-generating and efficient shift parameters in ADI methods for
//   large Lyapunov and Sylvester equations", ETNA 43 (2014) 142-162 (projection shifts);
//   Penzl, "A cyclic low-rank Smith method for large sparse Lyapunov equations", SISC 21 (2000)
//   (heuristic shifts from Ritz values).
// Each step costs one shifted sparse solve with m (or p) right-hand sides and O(n m) vector work;
// nothing n x n is formed. The iteration stops when the residual norm ||W^T W||_2, exact for the
// factor computed so far, drops below tolerance * ||B^T B||_2 (or ||C C^T||_2).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "reduction/gramian.hpp"

namespace mor {

enum class ShiftStrategy {
  projection,  ///< self-generating: Ritz values of the pencil projected on the last block
  penzl,       ///< Penzl's heuristic on Ritz values of E^{-1} A and its inverse (Spectra Arnoldi)
  given,       ///< the shifts in AdiOptions::shifts, used cyclically
};

ShiftStrategy parse_shift_strategy(std::string_view name);  ///< "projection", "penzl", "given"
std::string_view to_string(ShiftStrategy s);

struct AdiOptions {
  double tolerance = 1e-10;  ///< on the relative residual norm ||W^T W|| / ||B^T B||
  /// ADI steps (a complex pair counts as two; a pair is never split, so a run may stop one
  /// step short of the limit).
  Index max_iterations = 500;
  ShiftStrategy strategy = ShiftStrategy::projection;
  Index penzl_shifts = 20;                 ///< number of Penzl shifts l0
  Index penzl_arnoldi_steps = 40;          ///< Arnoldi steps on E^{-1} A (k_+)
  Index penzl_inverse_arnoldi_steps = 25;  ///< Arnoldi steps on A^{-1} E (k_-)
  std::vector<Complex> shifts;  ///< for ShiftStrategy::given; every Re p < 0, pairs complete
                                ///< (a complex p is followed by its conjugate)
  /// Projection shifts: the pencil is projected on the span of the residual factor W and of the
  /// last projection_columns columns of Z; 0 chooses min(8 m, 64) for m inputs (or outputs),
  /// the columns of the last 8 steps (on the chain fewer steps than with 4 or 16 m columns).
  Index projection_columns = 0;
  /// Stops with AdiStatus::stalled when the best residual of the last stall_window steps is not
  /// below stall_factor times the best residual before them (0 disables either).
  double stall_factor = 0.9;
  Index stall_window = 100;
  const std::atomic<bool>* stop_requested = nullptr;  ///< polled once per step
};

enum class AdiStatus { converged, max_iterations, stalled };
std::string_view to_string(AdiStatus s);

/// Outcome of LR-ADI: X ~ Z Z^T. A run that did not converge still returns its factor, with a
/// status and a message saying what was reached; callers decide (BT refuses by default).
struct AdiResult {
  Matrix Z;  ///< n x k real factor
  AdiStatus status = AdiStatus::max_iterations;
  std::string message;                   ///< one line: status, steps, final residual
  Index iterations = 0;                  ///< ADI steps taken
  std::vector<double> residual_history;  ///< relative residual after each step
  std::vector<Complex> shifts;           ///< the shift of each step
  double seconds = 0.0;                  ///< wall time
  double shift_seconds = 0.0;            ///< of which computing shifts
};

/// LR-ADI for the Gramian `kind` of `sys` (see reduction/gramian.hpp).
/// @throws InvalidArgument for bad options (tolerance <= 0, given shifts with Re p >= 0 or an
///         unpaired complex shift); NumericalError if a shifted matrix is singular (naming p)
///         or the iterate becomes non-finite; Interrupted if stop_requested is set.
AdiResult low_rank_adi(LtiOperator& sys, GramianKind kind, const AdiOptions& options = {});

namespace detail {
/// Finite eigenvalues of the small dense pencil (Ah, Eh) (LU of Eh, QZ if Eh is nearly singular,
/// dropping infinite ones); empty if neither converges. Shared with the rational Krylov solver.
std::vector<Complex> pencil_eigenvalues(const Matrix& Ah, const Matrix& Eh);
/// Estimates of the outer and inner spectrum of the pencil (A, E): Ritz values of E^{-1} A from
/// arnoldi_steps unrestarted Arnoldi steps and reciprocals of Ritz values of A^{-1} E from
/// inverse_arnoldi_steps steps (Penzl's heuristic and the RKSM start both use them).
std::vector<Complex> pencil_ritz_estimates(LtiOperator& sys, Index arnoldi_steps,
                                           Index inverse_arnoldi_steps);
/// The status part of a low-rank solver's message (LR-ADI and RKSM share AdiStatus):
/// "converged: ...", "not converged: <limit> reached at ...", or "stalled: ... over the last
/// <stall_window> <unit>", each with the final relative residual and the tolerance.
std::string status_text(const AdiResult& r, double tolerance, const std::string& limit,
                        double stall_factor, Index stall_window, const char* unit);
}  // namespace detail

}  // namespace mor
