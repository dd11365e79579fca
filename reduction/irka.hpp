// SPDX-License-Identifier: GPL-3.0-or-later
// H2-optimal model reduction by the iterative rational Krylov algorithm (IRKA), first order with
// tangential directions for MIMO systems, and its structure-preserving second-order variant:
//   Gugercin, Antoulas, Beattie, "H2 model reduction for large-scale linear dynamical systems",
//   SIAM J. Matrix Anal. Appl. 30 (2008) 609-638 (IRKA, Algorithm 4.1; tangential MIMO form as in
//   Antoulas, Beattie, Gugercin, "Interpolatory Methods for Model Reduction", SIAM 2020, Ch. 5);
//   Beattie, Gugercin, "Interpolatory projection methods for structure-preserving model
//   reduction", Systems & Control Letters 58 (2009) 225-232 (second-order interpolation);
//   Wyatt, "Issues in interpolatory model reduction: inexact solves, second-order systems and
//   DAEs", PhD thesis, Virginia Tech 2012, Sec. 5.3.2 (SOR-IRKA; pyMOR's SORIRKAReductor).
//
// First order, E x' = A x + B u, y = C x + D_ff u, G(s) = C (s E - A)^{-1} B + D_ff. Given shifts
// sigma_1..r (closed under conjugation, Re sigma > 0) and tangential directions b_i (m), c_i (p):
//     V = [(sigma_i E - A)^{-1} B b_i],   W = [(sigma_i E - A)^{-T} C^T c_i]
// (real bases: a conjugate pair contributes the real and imaginary parts of one complex solve),
// orthonormalized; E_r = W^T E V, A_r = W^T A V, B_r = W^T B, C_r = C V, D_r = D_ff. The reduced
// model in pole-residue form, G_r(s) = sum_i c^_i b^_i^T / (s - lambda_i) + D_r (from the
// eigenvectors X of E_r^{-1} A_r: b^_i^T the rows of X^{-1} E_r^{-1} B_r, c^_i the columns of
// C_r X), gives the next shifts sigma_i = -lambda_i and directions b^_i, c^_i. At a fixed point
//     G(sigma_i) b^_i = G_r(sigma_i) b^_i,   c^_i^T G(sigma_i) = c^_i^T G_r(sigma_i),
//     c^_i^T G'(sigma_i) b^_i = c^_i^T G_r'(sigma_i) b^_i,
// the first-order necessary conditions of a local H2-optimum (Gugercin et al. 2008, Thm 3.4).
//
// Cost per iteration: one factorization of A - sigma E per real shift or conjugate pair (shared by
// V and W through the operator's factor cache; complex for a pair; on two threads for large n,
// each with its own LtiOperator::solver_copy), 2 solves with one column each, one product of E
// with each shift's columns and O(r^3) dense work: E_r and A_r come from the Loewner pencil of
// the solves' data (Beattie, Gugercin, "Realization-independent H2-approximation", CDC 2012),
// not from orthonormalized bases; near convergence, and for the returned model, from the
// projection onto orthonormal bases (O(n r^2)). Nothing n x n is formed.
//
// Second order, M q'' + D q' + K q = B u, y = Cp q + Cv q', G(s) = (Cp + s Cv) S(s)^{-1} B with
// S(s) = s^2 M + s D + K: the same loop with
//     V = [S(sigma_i)^{-1} B b_i],   W = [S(sigma_i)^{-T} (Cp + sigma_i Cv)^T c_i]   (n_q x r)
// and the reduced model M_r = W^T M V, D_r = W^T D V, K_r = W^T K V, B_r = W^T B, Cp_r = Cp V,
// Cv_r = Cv V (bitangential Hermite interpolation at sigma_i, Beattie-Gugercin 2009, Thm 5.1).
// The reduced model has 2r poles, too many for r interpolation points; SOR-IRKA reduces its
// first-order form (2r states) by first-order IRKA to r and takes that model's mirrored poles
// and residue directions as the next shifts. No H2-optimality holds for the second-order
// model; the iteration is a heuristic that keeps the structure (M_r, D_r, K_r), so the reduced
// chain runs on the same integrators. With projection = galerkin (W = V) symmetric definite
// M, D, K stay symmetric definite and the reduced model stays stable. On the Rayleigh-damped
// chain the shift set cycles (the inner IRKA finds a different local optimum each time): the
// cycle is detected (status cycling, SoIrkaOptions::cycle_ratio) and the iterate of the
// smallest shift change returned, still the exact structured interpolant of the shifts that
// built it (docs/methods/irka.md has the figures).
#pragma once

#include <atomic>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "reduction/lti_operator.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/lti.hpp"

namespace mor {

/// How IRKA chooses its first shifts.
enum class IrkaInitialShifts {
  /// sigma_i = -lambda_i for r Ritz values lambda_i of the pencil (A, E) from inverse Arnoldi
  /// on A^{-1} E (reduction/low_rank_adi.hpp, pencil_ritz_estimates), which approximates the
  /// small-magnitude end of the spectrum: of clusters closer than 1 % one value is kept, and r
  /// are taken spread evenly over log |lambda| (conjugate pairs kept together). A Ritz value
  /// with Re lambda >= 0 is mirrored into the right half plane.
  ritz,
  /// IrkaOptions::shifts (and the directions, if given).
  given,
};
IrkaInitialShifts parse_irka_initial_shifts(std::string_view name);  ///< "ritz", "given"
std::string_view to_string(IrkaInitialShifts s);

/// What IrkaOptions::tolerance bounds.
enum class IrkaCriterion {
  /// the relative change of the shift set, d(sigma_new, sigma_old) (see shift_distance)
  shifts,
  /// the relative H2 distance of consecutive reduced models, ||G_r^k - G_r^{k-1}||_H2 /
  /// ||G_r^k||_H2 (pyMOR's conv_crit = 'h2'; dense, 2r states): shifts that barely move the
  /// model (high-frequency poles with small residues) do not hold the iteration up
  h2,
};
IrkaCriterion parse_irka_criterion(std::string_view name);  ///< "shifts", "h2"
std::string_view to_string(IrkaCriterion c);

enum class IrkaStatus {
  converged,       ///< shift change below tolerance, reduced model stable
  max_iterations,  ///< the limit was reached first; the last model is returned, stable
  unstable,        ///< the returned reduced model has a pole with Re lambda >= 0
  /// (SO-IRKA) the shift set returns to an earlier one instead of converging (see
  /// SoIrkaOptions::cycle_ratio); the iterate of the smallest shift change is returned
  cycling,
};
std::string_view to_string(IrkaStatus s);

struct IrkaOptions {
  Index order = 0;  ///< r >= 1 (r <= n)
  /// Stops when the relative change of the shift set, d(sigma_new, sigma_old) (the larger of
  /// max_i min_j |sigma_new_i - sigma_old_j| / |sigma_new_i| and the same with the roles
  /// swapped, so independent of the ordering), drops below this.
  double tolerance = 1e-4;  ///< (pyMOR's default; the H2 error settles well before)
  IrkaCriterion criterion = IrkaCriterion::shifts;
  Index max_iterations = 100;  ///< iterations (each: r shifted solves for V and for W)
  IrkaInitialShifts initial = IrkaInitialShifts::ritz;
  /// ritz: inverse Arnoldi steps (0: max(2 r, r + 10); with surrogate r + max(5, r / 4)).
  Index ritz_steps = 0;
  /// given: r initial shifts, Re sigma > 0, closed under conjugation (a complex sigma followed
  /// by its conjugate is not required; the set is).
  std::vector<Complex> shifts;
  /// given (optional): initial tangential directions, m x r and p x r, column i for shifts[i]
  /// (a conjugate pair's second column is the conjugate of the first's). Empty: the leading
  /// right and left singular vectors of G(sigma_i).
  ComplexMatrix b, c;
  /// ||G||_H2 of the full model, if known (> 0): the history then carries the H2 error estimate
  /// per iteration (see IrkaIteration::h2_error). 0: not estimated.
  double full_h2_norm = 0.0;
  /// Each iteration's poles and residues from the Loewner pencil of the solves' data (no
  /// products with the n x r bases beyond E V, no orthonormalization; see the file comment);
  /// false: from the projection onto orthonormal bases every iteration (the reference). The
  /// returned model is the projection either way.
  bool loewner = true;
  /// Threads for the shifted solves of an iteration: 1, 2 (each with its own factorization,
  /// LtiOperator::solver_copy; one if the operator has none), or 0: 2 from n >= 8192 on.
  Index solve_threads = 0;
  /// MF-IRKA (Castagnotto, Panzer, Lohmann, "Fast H2-optimal model order reduction exploiting
  /// the local nature of Krylov-subspace methods", ECC 2016): the tangential Hermite data of
  /// every iteration so far (C v_i, w_i^T B, W_i^T E V_i: nothing n-long) are kept, and the next
  /// shifts are those IRKA converges to on their Loewner pencil truncated to its numerical rank
  /// (the surrogate, dense, a few r states), warm-started at the ordinary step's; an iteration
  /// is still r full-order solves and its convergence test the ordinary one (the model of its
  /// bases against its own mirrored poles), so a fixed point is one of plain IRKA. Once
  /// consecutive models agree to 1e-6 (relative H2) the ordinary steps finish the run.
  bool surrogate = true;
  Index surrogate_max_iterations = 100;  ///< of the IRKA on the surrogate
  /// A cheap model of the same order r to compare with (E_r, A_r, B_r, C_r; empty: none), e.g.
  /// balanced truncation's with dense Gramians; needs full_h2_norm. Its H2 error and that of
  /// IRKA's result are evaluated from their pole-residue forms (IrkaIteration::h2_error's
  /// formula: r shifted solves each, without the transposed ones). If IRKA's error exceeds
  /// restart_ratio times the comparison's, IRKA runs again from the comparison's mirrored
  /// poles and residue directions, and the better of the two results is returned; if even
  /// that exceeds it, the message says so with the ratio ("converged to a local optimum with
  /// H2 error 2.20x BT's at this order"). On lightly damped structures the Ritz start lands in
  /// fixed points 1.2 to 1.5x BT's error, the comparison's start within 1.0x
  /// (docs/benchmarks.md, "IRKA's local optima").
  Matrix comparison_Er, comparison_Ar, comparison_Br, comparison_Cr;
  std::string comparison_name = "BT";                 ///< how the message names the comparison
  double restart_ratio = 1.05;                        ///< > 1
  const std::atomic<bool>* stop_requested = nullptr;  ///< polled once per iteration
};

/// One IRKA iteration: the reduced model built at `shifts` (with directions from the model of
/// the previous iteration, or the initial ones).
struct IrkaIteration {
  std::vector<Complex> shifts;  ///< sigma_i used for V and W (r values)
  /// d(next shifts, shifts): the stopping quantity of criterion shifts after this iteration.
  double shift_change = 0.0;
  /// ||G_r - G_r'||_H2 / ||G_r||_H2 of this iteration's model against the previous one (the
  /// quantity of criterion h2); infinite in the first iteration or when either is unstable.
  double model_change = 0.0;
  /// max_i ||G(sigma_i) b_i - G_r'(sigma_i) b_i|| / ||G(sigma_i) b_i|| for G_r' the model of the
  /// previous iteration, whose mirrored poles are these shifts: 0 at a fixed point, so it
  /// measures how far from the H2 conditions that model was. NaN in the first iteration.
  double interpolation_residual = 0.0;
  /// ||G - G_r'||_H2 of the previous iteration's model G_r' from its pole-residue form,
  ///     ||G - G_r'||^2 = ||G||^2 - 2 sum_i c^_i^T G(-lambda_i) b^_i + ||G_r'||^2
  /// (every G(-lambda_i) b^_i is a column this iteration solves for anyway). Subject to
  /// cancellation: below about 1e-7 ||G||_H2 it is noise. NaN when full_h2_norm is not set or
  /// in the first iteration.
  double h2_error = 0.0;
  double seconds = 0.0;  ///< wall time of the iteration
  /// MF-IRKA (IrkaOptions::surrogate): the order of the surrogate after this iteration's data
  /// and the iterations of the IRKA on it that gave the next shifts (0: the ordinary step's
  /// mirrored poles gave them, as without the surrogate).
  Index surrogate_order = 0;
  Index surrogate_iterations = 0;
};

/// Outcome of IRKA: the reduced model of the last iteration and how it was reached. A run that
/// did not converge, or whose model is unstable, still returns its model with that status and
/// a message; callers decide (the runner refuses it unless told otherwise).
struct IrkaResult {
  Matrix Er, Ar, Br, Cr, Dr;  ///< reduced first-order system (r states)
  Matrix V, W;                ///< n x r orthonormal bases
  Index r = 0;
  IrkaStatus status = IrkaStatus::max_iterations;
  std::string message;  ///< one line: status, iterations, last shift change, tolerance
  Index iterations = 0;
  /// -lambda_i(E_r^{-1} A_r) of the returned model and its residue directions (m x r, p x r):
  /// the interpolation data of the next iteration (at convergence, the H2 conditions' points).
  std::vector<Complex> shifts;
  ComplexMatrix b, c;
  std::vector<IrkaIteration> history;
  /// Iterations whose next shifts came from the Loewner pencil (the others, whose pencil's E_r
  /// was numerically singular, from the projection).
  Index loewner_iterations = 0;
  double spectral_abscissa = 0.0;  ///< max Re lambda of the returned model (< 0: stable)
  Index shifted_solves = 0;        ///< factorizations requested (real shifts and pairs)
  double seconds = 0.0;            ///< wall time, initial shifts included
  double initial_seconds = 0.0;    ///< of which the initial shifts (Ritz values)
  /// The iteration whose model is returned (1-based, of the run that gave it): the last, or an
  /// earlier one whose H2 error (from the history) was smaller than the last's by more than 1 %.
  Index returned_iteration = 0;
  /// ||G - G_r||_H2 of the returned model, when full_h2_norm is given and it was evaluated (a
  /// comparison was given, or an earlier iterate is returned); NaN otherwise.
  double h2_error = std::numeric_limits<double>::quiet_NaN();
  /// With a comparison model: its H2 error (else NaN), and the runs made (1, or 2 after a
  /// restart from its poles); first_run_h2_error: the first run's result's error when it restarted.
  double comparison_h2_error = std::numeric_limits<double>::quiet_NaN();
  Index runs = 1;
  double first_run_h2_error = std::numeric_limits<double>::quiet_NaN();
  Index total_iterations = 0;  ///< over all runs (iterations: of the run returned)
};

/// IRKA for the stable first-order system `sys` (see the file comment).
/// @throws InvalidArgument for r < 1, r > n, tolerance <= 0, max_iterations < 1, given shifts
///         that are not r finite values with Re > 0 closed under conjugation, or directions of
///         the wrong size; NumericalError if a shifted matrix is singular, a basis loses rank or
///         E_r is singular (naming the iteration), or no initial Ritz values are found;
///         Interrupted if stop_requested is set.
IrkaResult irka(LtiOperator& sys, const IrkaOptions& options);

/// The shift distance of IrkaOptions::tolerance (0 for two empty sets).
double shift_distance(const std::vector<Complex>& a, const std::vector<Complex>& b);

/// The pole-residue form of a small dense system E_r x' = A_r x + B_r u, y = C_r x (E_r
/// nonsingular, E_r^{-1} A_r diagonalizable): poles lambda (r), b^ (m x r), c^ (p x r) with
/// G_r(s) = sum_i c^_i b^_i^T / (s - lambda_i) + D_r. Conjugate poles have conjugate columns.
/// @throws NumericalError if E_r is singular or the eigenvalue problem fails.
struct PoleResidueForm {
  ComplexVector poles;
  ComplexMatrix b, c;
};
PoleResidueForm pole_residue_form(const Matrix& Er, const Matrix& Ar, const Matrix& Br,
                                  const Matrix& Cr);

namespace detail {
/// One IRKA iteration's reduced matrices from the Loewner pencil (IrkaOptions::loewner), for
/// tests: at the r given shifts and directions (as IrkaOptions::shifts, b, c; directions
/// required), the unit-column bases V = [(sigma_i E - A)^{-1} B b_i], W = [(sigma_i E -
/// A)^{-T} C^T c_i] (real and imaginary parts for a pair, not orthonormal) and E_r, A_r, B_r,
/// C_r of the iteration's Loewner form, which equal W^T E V, W^T A V, W^T B, C V up to the
/// rounding of the solves and of the divided differences; product_blocks: the blocks of E_r
/// formed by products (diagonal, and close shifts).
struct IrkaLoewnerPencil {
  Matrix V, W, Er, Ar, Br, Cr;
  Index product_blocks = 0;
};
IrkaLoewnerPencil irka_loewner_pencil(LtiOperator& sys, const std::vector<Complex>& shifts,
                                      const ComplexMatrix& b, const ComplexMatrix& c);
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Second order

enum class SoIrkaProjection {
  two_sided,  ///< W from the left solves: bitangential Hermite interpolation at each sigma_i
  galerkin,   ///< W = V: symmetric definite M, D, K stay so, and the reduced model stable
};
SoIrkaProjection parse_so_irka_projection(std::string_view name);  ///< "two_sided", "galerkin"
std::string_view to_string(SoIrkaProjection p);

struct SoIrkaOptions {
  Index order = 0;  ///< r >= 1 coordinates (2r poles)
  double tolerance = 1e-4;
  IrkaCriterion criterion = IrkaCriterion::shifts;  ///< as IrkaOptions
  Index max_iterations = 100;
  SoIrkaProjection projection = SoIrkaProjection::two_sided;
  IrkaInitialShifts initial = IrkaInitialShifts::ritz;
  Index ritz_steps = 0;              ///< as IrkaOptions
  std::vector<Complex> shifts;       ///< as IrkaOptions
  ComplexMatrix b, c;                ///< as IrkaOptions
  Index inner_max_iterations = 200;  ///< the first-order IRKA on the 2r-state reduced model
  /// Cycle detection: the iteration stops with status cycling when, for p consecutive
  /// iterations (2 <= p <= 10), the next shift set lies within cycle_ratio times the iteration's
  /// own shift change of the set p iterations back (it returns to where it was instead of
  /// settling), and returns the iterate of the smallest shift change. 0: no detection.
  double cycle_ratio = 1e-2;
  const std::atomic<bool>* stop_requested = nullptr;
};

struct SoIrkaResult {
  DenseSecondOrderSystem reduced;  ///< M_r = W^T M V, ..., B_r = W^T B, Cp_r = Cp V, Cv_r = Cv V
  Matrix V, W;                     ///< n_q x r orthonormal (W = V for galerkin)
  Index r = 0;
  IrkaStatus status = IrkaStatus::max_iterations;
  std::string message;
  Index iterations = 0;
  std::vector<Complex> shifts;  ///< the next shifts from the last inner IRKA (r values)
  ComplexMatrix b, c;
  /// Per iteration: shifts, shift change, and interpolation_residual (as first order; the
  /// second-order model interpolates at the shifts that built it); h2_error is NaN.
  std::vector<IrkaIteration> history;
  std::vector<Index> inner_iterations;  ///< of each iteration's first-order IRKA
  /// The iteration whose model is returned (1-based; its shifts are history[it - 1].shifts):
  /// the last, or after a cycle the one of the smallest shift change.
  Index returned_iteration = 0;
  Index cycle_period = 0;          ///< status cycling: the period detected
  double spectral_abscissa = 0.0;  ///< max Re of the 2r poles (< 0: stable)
  Index shifted_solves = 0;
  double seconds = 0.0;
  double initial_seconds = 0.0;
};

/// SOR-IRKA (Wyatt 2012, Sec. 5.3.2) for the stable second-order system `sys` (M nonsingular).
/// Shifted solves go through SecondOrderLtiOperator (S(sigma) of size n_q, CHOLMOD for real
/// shifts of a symmetric definite system, KLU otherwise, factors cached across V and W).
/// @throws as irka, with r > n_q.
SoIrkaResult second_order_irka(const SecondOrderSystem& sys, const SoIrkaOptions& options);

}  // namespace mor
