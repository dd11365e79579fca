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
// factor computed so far, drops below tolerance * ||B^T B||_2 (or ||C C^T||_2); the Frobenius
// norm instead (AdiOptions::residual_norm) is the test of M-M.E.S.S. (opts.norm = 'fro'). On
// the rail both stop after the same steps at tolerance 1e-10.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "reduction/gramian.hpp"

namespace mor {

enum class ShiftStrategy {
  /// penzl for a symmetric pencil (LtiOperator::symmetric_pencil), projection otherwise. A
  /// symmetric pencil with E > 0 has a real spectrum, for which the classical min-max theory
  /// (Wachspress; Penzl) makes one cycle of shifts from the two ends of the spectrum close to
  /// optimal; the cycle's factorizations are then reused every cycle and, since A + p E is its
  /// own transpose, by the other Gramian too, so that most steps cost one solve and no
  /// factorization. On the rail (n = 20209, 7 inputs, 6 outputs): 55 / 48 steps and 22
  /// factorizations for both Gramians, against 137 / 111 steps and as many factorizations with
  /// projection shifts.
  automatic,
  projection,  ///< self-generating: Ritz values of the pencil projected on the last block
  penzl,       ///< Penzl's heuristic on Ritz values of E^{-1} A and its inverse (Spectra Arnoldi)
  given,       ///< the shifts in AdiOptions::shifts, used cyclically
};

/// "automatic", "projection", "penzl", "given".
ShiftStrategy parse_shift_strategy(std::string_view name);
std::string_view to_string(ShiftStrategy s);

/// The norm of the residual test ||W^T W|| <= tolerance ||B^T B||.
enum class ResidualNorm {
  spectral,   ///< ||.||_2, the largest eigenvalue (the default)
  frobenius,  ///< ||.||_F (M-M.E.S.S.'s opts.norm = 'fro')
};
ResidualNorm parse_residual_norm(std::string_view name);  ///< "spectral", "frobenius"
std::string_view to_string(ResidualNorm n);

struct AdiOptions {
  double tolerance = 1e-10;  ///< on the relative residual norm ||W^T W|| / ||B^T B||
  ResidualNorm residual_norm = ResidualNorm::spectral;
  /// ADI steps (a complex pair counts as two; a pair is never split, so a run may stop one
  /// step short of the limit).
  Index max_iterations = 500;
  ShiftStrategy strategy = ShiftStrategy::automatic;
  Index penzl_shifts = 20;                 ///< number of Penzl shifts l0
  Index penzl_arnoldi_steps = 40;          ///< Arnoldi steps on E^{-1} A (k_+)
  Index penzl_inverse_arnoldi_steps = 25;  ///< Arnoldi steps on A^{-1} E (k_-)
  /// For ShiftStrategy::given: the cycle. For penzl (also as automatic's choice): if not
  /// empty, the cycle instead of a new heuristic (AdiResult::shift_cycle of an earlier run on
  /// the same pencil or its transpose, which has the same spectrum). Every Re p < 0, pairs
  /// complete (a complex p is followed by its conjugate).
  std::vector<Complex> shifts;
  /// Projection shifts: the pencil is projected on the span of the residual factor W and of the
  /// last projection_columns columns of Z; 0 chooses min(8 m, 64) for m inputs (or outputs),
  /// the columns of the last 8 steps (on the chain fewer steps than with 4 or 16 m columns).
  Index projection_columns = 0;
  /// Projection shifts: whether the span includes the residual factor W besides the columns of
  /// Z. Benner, Kuerschner and Saak (2014) project on Z's newest columns alone; W adds the
  /// large Ritz values of the pencil. On the chain either way takes 80-96 steps, on the rail
  /// (with 175 columns and 25 shifts) 74 / 69 steps with W and 69 / 68 without.
  bool projection_with_residual = true;
  /// Projection shifts: when a projection gives more than this many shifts, Penzl's min-max
  /// rule selects this many (0: all). M-M.E.S.S. takes 25 from the last 25 m columns of Z.
  Index projection_shifts = 0;
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
  std::string message;                                 ///< one line: status, steps, final residual
  Index iterations = 0;                                ///< ADI steps taken
  std::vector<double> residual_history;                ///< relative residual after each step
  std::vector<Complex> shifts;                         ///< the shift of each step
  ShiftStrategy strategy = ShiftStrategy::projection;  ///< the strategy used (never automatic)
  /// penzl and given: the cycle of shifts, pairs as both members (for AdiOptions::shifts).
  std::vector<Complex> shift_cycle;
  double seconds = 0.0;        ///< wall time
  double shift_seconds = 0.0;  ///< of which computing shifts
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
/// X^T Y (k x c) and X Z (n x c) for tall X, Y (n rows) and small Z, the products of the
/// low-rank Gramian methods whose cost grows with n (projection shifts, Zo^T E Zc, BT's bases).
/// With at least 2 kMinRowsPerThread rows the rows are split in two halves, the second computed
/// on a second thread; both threads flush subnormals to zero, which low-rank factors of systems
/// driven at one end reach in many entries (OpenBLAS's own threads do not, so its dgemm is not
/// used here). Eigen's products in each half; the result equals the one-thread product up to
/// the order of summation of the two halves.
constexpr Index kMinRowsPerThread = 4096;
Matrix tall_transpose_product(const Eigen::Ref<const Matrix>& X, const Eigen::Ref<const Matrix>& Y);
Matrix tall_product(const Eigen::Ref<const Matrix>& X, const Eigen::Ref<const Matrix>& Z);
/// The status part of a low-rank solver's message (LR-ADI and RKSM share AdiStatus):
/// "converged: ...", "not converged: <limit> reached at ...", or "stalled: ... over the last
/// <stall_window> <unit>", each with the final relative residual and the tolerance.
std::string status_text(const AdiResult& r, double tolerance, const std::string& limit,
                        double stall_factor, Index stall_window, const char* unit);
}  // namespace detail

}  // namespace mor
