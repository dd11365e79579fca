// SPDX-License-Identifier: GPL-3.0-or-later
// Transfer functions, Bode magnitudes and the H2 and H-infinity norms of stable LTI systems and
// of error systems G - G_r (see ErrorLtiOperator), for dense small and sparse large systems.
//   H2:    ||G||_H2^2 = trace(C P C^T) = ||C Z_c||_F^2 (P = Z_c Z_c^T the controllability Gramian)
//   H-inf: ||G||_Hinf = sup_w sigma_max(G(i w))
#pragma once

#include <functional>
#include <string>
#include <vector>

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
  std::string method;              ///< "level-set", "sweep" or "subspace"
  /// Subspace method: whether the peak value and frequency settled, and the order of the last
  /// interpolating model.
  bool converged = true;
  Index subspace_dimension = 0;
  /// Subspace method: absolute error estimate of the final accurate evaluation (ResponseValue).
  double evaluation_error = 0.0;
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

/// The L-infinity norm sup_w sigma_max(G(i w)) of a dense system that need not be stable, by
/// the same level-set iteration (the Hamiltonian test does not use stability). The interpolating
/// models of the subspace method below are projections, which need not keep stability.
/// @throws NumericalError if a pole lies on the imaginary axis (|Re| below the stability
///         tolerance), besides the conditions of hinf_norm_level_set.
HinfResult linf_norm_level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                               const Matrix& D_ff, double tolerance = 1e-10);

// ---------------------------------------------------------------------------------------------
// Accurate evaluation and the subspace method for large systems

/// sigma_max(G(i w)) (or of G - G_r) with an estimate of its rounding error.
struct ResponseValue {
  double omega = 0.0;
  ComplexMatrix G;            ///< G(i w) (- G_r(i w)), p x m
  double sigma = 0.0;         ///< sigma_max(G)
  double error_estimate = 0;  ///< absolute estimate of the error of G (Frobenius) and so of sigma
  /// True when every solve was refined with extended-precision residuals until its correction
  /// fell to the rounding level: then error_estimate is that last correction, an upper estimate.
  /// (The rounding-level test is strict: a converged refinement may still report false; no
  /// status depends on this flag.)
  /// Otherwise error_estimate is the first correction of a working-precision refinement, the
  /// backward error mapped through (A - i w E)^{-1}: an estimate of the right size, no bound.
  bool refined = false;
};

/// G(i w) - G_r(i w) (reduced may be null: G(i w) alone), each solve refined: the solution X of
/// (A - i w E) X = B is corrected by X += (A - i w E)^{-1} (B - (A - i w E) X) with the residual
/// accumulated in extended precision (LtiOperator::shifted_residual_extended) while the
/// correction of C X shrinks, at most max_steps times (the factorization is reused: one
/// factorization and 1 + steps solves per system). Near a lightly damped pole i w E - A is
/// ill-conditioned (kappa ~ |lambda| / |Re lambda| and more): a plain solve errs by about
/// kappa eps |G|, which in G - G_r can exceed the difference itself.
/// @throws InvalidArgument for a negative or non-finite w; NumericalError for a pole.
ResponseValue accurate_response(LtiOperator& sys, double omega, LtiOperator* reduced = nullptr,
                                Index max_steps = 4);

/// The first-order change of G_r(i w) when every entry of the dense model (E, A, B, C, D) is
/// perturbed by a relative u = eps / 2 (what storing the model in double precision costs):
///   u || |C| |X| + |Y|^T |B| + |Y|^T (|A| + w |E|) |X| + |D| ||_F,
/// X = (i w E - A)^{-1} B, Y^T = C (i w E - A)^{-1}. A reduced model's error cannot be resolved
/// below this; an a priori bound that lies below it cannot be checked in double precision.
double data_sensitivity(const DenseLtiOperator& sys, double omega);

struct SubspaceHinfOptions {
  /// Stop when the interpolating model's peak value matches sigma_max of the full system at that
  /// frequency to this relative accuracy.
  double tolerance = 1e-7;
  Index max_iterations = 30;
  /// Interpolation directions per frequency: the whole input and output blocks when m and p are
  /// both at most this, else the leading `directions` right and left singular vectors of G(i w)
  /// (2 (directions) real columns each, twice that at w > 0).
  Index directions = 2;
  /// Distinct start frequencies used at most (largest sigma_max first).
  Index max_start_points = 8;
};

/// ||G||_Hinf (reduced null) or ||G - G_r||_Hinf of a large system by the subspace method of
/// Aliyev, Benner, Mengi, Schwerdtner & Voigt (SIAM J. Matrix Anal. Appl. 38 (2017) 1496-1516):
/// the full system is projected, E_k = V^T E V, A_k = V^T A V, B_k = V^T B, C_k = C V, onto a
/// real orthonormal V holding (i w_j E - A)^{-1} B and (i w_j E - A)^{-H} C^H at the
/// interpolation frequencies w_j (or their products with the leading singular vectors of
/// G(i w_j) for many inputs and outputs: tangential interpolation), so that G_k interpolates G
/// with its derivative there (Hermite) and sigma_max of the two agree with their slopes; the
/// interpolating model's (minus G_r's) L-infinity norm is computed exactly by the level set, its
/// peak frequency is added, and the loop stops when the model's peak value equals the full
/// system's sigma_max at that frequency (superlinear convergence, the paper's Theorem 4.3).
/// Starts from start_frequencies (e.g. the reduced model's peak and the imaginary parts of its
/// least damped poles); each interpolation frequency costs one complex factorization. The
/// returned norm is the largest sigma_max of the full system evaluated (a lower bound, up to the
/// evaluation's error), omega its frequency, after a final accurate evaluation there
/// (accurate_response) and a local check at w (1 +- delta) (Brent's refinement if one exceeds;
/// when the iteration did not settle, Brent's climb from the best evaluation over w/2 .. 3w/2);
/// relative_accuracy combines the last mismatch of model and system with the evaluation's error
/// estimate. A peak far from every start frequency and every peak of the interpolating models may
/// be missed: the method is local, like every method of this cost.
/// @throws InvalidArgument for bad options or no usable start frequency; NumericalError from
///         the solves.
HinfResult hinf_norm_subspace(LtiOperator& sys, const Vector& start_frequencies,
                              DenseLtiOperator* reduced = nullptr,
                              const SubspaceHinfOptions& options = {});

/// ||G - G_r||_Hinf of a large system from a more accurate reduced model G_ref of G with
/// ||G - G_ref||_Hinf <= reference_bound (BT of a larger order from the same Gramian factors,
/// BtResult::Aref ..): the level set on the dense surrogate S = G_ref - G_r (order q + r) finds
/// its peak s*, and the frequencies where S >= s* - 2 reference_bound, which hold every point
/// where G - G_r can exceed S's peak (|(G - G_r) - S| <= reference_bound everywhere); on the full
/// system Brent's method climbs sigma_max(G - G_r) over each such interval in log w from S's
/// maximum there (to 1e-6 relative in w), and the best point is re-evaluated with refinement
/// (accurate_response). The global search costs no large solve; each evaluation one complex
/// factorization. converged is false when the full system disagrees with S by more than
/// 4 reference_bound at an evaluated frequency (the bound does not hold: call the subspace
/// method instead), or a climb ran out of evaluations; relative_accuracy combines Brent's
/// estimate of the remaining climb with the evaluation's error estimate.
/// @throws InvalidArgument on size mismatch or reference_bound < 0; NumericalError from the
///         level set or the solves.
HinfResult hinf_error_with_reference(LtiOperator& sys, DenseLtiOperator& reduced,
                                     const DenseLtiOperator& reference, double reference_bound);

/// The H2 norm of the error system G - G_r of a large system, from the controllability LR-ADI
/// factor of G that the reduction computed (CZc = C Z_c column for column, shifts: the shift of
/// each step, pairs as both members, as AdiResult::shifts): LR-ADI on the block-diagonal error
/// system with the same shifts produces the factor [Z_c; Z_r], Z_r from the same steps on the
/// small model alone, so ||G - G_r||_H2 ~ ||C Z_c - C_r Z_r||_F, a sum of squares of the
/// error's own outputs (no cancellation of ||G||^2 - 2 <G, G_r> + ||G_r||^2) at the cost of the
/// small dense solves. The reduced part, under shifts chosen for the full pencil, may converge
/// more slowly: it continues alone with the same cycle of shifts (at most 20 cycles) until its
/// residual is as small as the full run's, the full part's further columns (of the size of its
/// final residual) left out. residual: the error ADI's relative residual ||W_e^T W_e||_2 /
/// ||B_e^T B_e||_2, bounded from the full run's final relative residual (full_residual) and the
/// small run's exact one.
struct ErrorH2 {
  double norm = 0.0;
  double residual = 0.0;
};
/// @throws InvalidArgument if the sizes disagree or D_ff != 0; NumericalError if a shifted
///         reduced matrix is singular.
ErrorH2 h2_error_from_adi_factor(const Matrix& CZc, const std::vector<Complex>& shifts,
                                 double full_residual, const Matrix& B_full,
                                 const DenseLtiOperator& reduced);

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

/// Calls f(op, k) for k = 0 .. count - 1: on sys, and on copy (a solver_copy() of sys with its
/// own factor cache) from a second thread when copy is not null; the two take the indices in turn
/// from a shared counter, so neither idles while the other has work. The first exception of
/// either thread is rethrown after both stopped.
void for_each_point(LtiOperator& sys, LtiOperator* copy, Index count,
                    const std::function<void(LtiOperator&, Index)>& f);

}  // namespace mor
