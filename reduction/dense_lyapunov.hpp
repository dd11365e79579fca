// SPDX-License-Identifier: GPL-3.0-or-later
// Dense Lyapunov solvers for systems of up to a few thousand states, two of them:
// - Hammarling's method (IMA J. Numer. Anal. 2 (1982) 303-323) on LAPACK's real Schur form
//   (dgees on OpenBLAS) returns the Cholesky factor of the solution directly, so that Hankel
//   singular values far below sqrt(eps) of the largest are not lost to squaring: their errors
//   stay at the O(eps sigma_1) level of the backward error. The Schur form (dgees, mostly level-2
//   work) dominates its O(n^3) cost; DenseGramianFactors computes it once for both Gramians.
// - The sign-function iteration (Benner, Quintana-Orti, Quintana-Orti, "Balanced truncation model
//   reduction of large-scale dense systems on parallel computers", Math. Comput. Model. Dyn.
//   Syst. 6 (2000) 383-405) computes both Gramian factors, of the numerical rank, from about a
//   dozen n x n inversions (dgetrf + dgetri) and products: level-3 work that runs at dgemm speed
//   on one core and scales with OpenBLAS's threads.
#pragma once

#include <optional>
#include <string_view>

#include <Eigen/LU>

#include "reduction/gramian.hpp"

namespace mor {

/// Upper triangular U (n x n) with A X + X A^T + B B^T = 0, X = U U^T, for a stable A
/// (n x n, every eigenvalue with negative real part) and B (n x m, any m >= 1; rank-deficient
/// B, including B = 0, give a singular U).
/// @throws InvalidArgument on size mismatch or non-finite entries; NumericalError naming the
///         eigenvalue if A is not stable (real part >= -eps * ||A||_F), or if the Schur
///         decomposition does not converge.
/// If `eigenvalues` is given, it receives the n eigenvalues of A from the Schur form (a complex
/// pair as consecutive conjugates), at no extra cost.
Matrix lyapunov_cholesky_factor(const Matrix& A, const Matrix& B,
                                ComplexVector* eigenvalues = nullptr);

/// Factor Z (n x n) of the controllability or observability Gramian of the dense descriptor
/// system (E, A, B, C) as defined in reduction/gramian.hpp; an empty E means the identity.
/// E must be nonsingular: the pencil is reduced to A_hat = E^{-1} A by a pivoted LU of E.
/// @throws NumericalError if E is singular or the system is not stable (naming the value).
/// `eigenvalues`, if given, receives the eigenvalues of the pencil (A, E).
Matrix dense_gramian_factor(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                            GramianKind kind, ComplexVector* eigenvalues = nullptr);

/// The same for any operator (formed densely with dense_E / dense_A; small n only).
Matrix dense_gramian_factor(const LtiOperator& sys, GramianKind kind);

/// How DenseGramianFactors solves its two Lyapunov equations.
enum class DenseLyapunovSolver {
  /// sign_function when n >= kSignFunctionMinStates and LAPACK's estimate of the reciprocal
  /// 1-norm condition number of E^{-1} A (from the first inversion) is >= kSignFunctionMinRcond;
  /// schur otherwise, and schur if the sign iteration does not converge (an unstable A then gets
  /// the Schur path's message naming the eigenvalue).
  automatic,
  /// Newton iteration for sign(E^{-1} A) with the factored right-hand sides carried along and
  /// compressed (see the constructor); the factors have the numerical rank of the Gramians.
  sign_function,
  /// Hammarling's method on one real Schur form (see the constructor); n x n triangular factors.
  /// More accurate for ill-conditioned A, and keeps the HSVs far below eps * sigma_1.
  schur,
};
std::string_view to_string(DenseLyapunovSolver s);  ///< "automatic", "sign_function", "schur"

/// automatic: the sign function from this many states up (below, dgees costs little and the
/// Schur path is the more accurate one; at n = 400 both take about 0.1 s).
inline constexpr Index kSignFunctionMinStates = 400;
/// automatic: the sign function only for rcond_1(E^{-1} A) at least this (its first inversion
/// loses about log10(1 / rcond) digits, which the Schur path does not).
inline constexpr double kSignFunctionMinRcond = 1e-9;

/// Both Gramian factors of the dense stable descriptor system (E, A, B, C) (E nonsingular, empty
/// for the identity; an E equal to the identity is treated as empty).
///
/// Schur path: from one real Schur form E^{-1} A = Q T Q^T. Since A_hat^T = Q T^T Q^T, the
/// observability equation A_hat^T Y + Y A_hat + C^T C = 0 (Y = E^T Q E) becomes, with the
/// reversal permutation J, S Yt + Yt S^T + (J Q^T C^T)(J Q^T C^T)^T = 0 for the upper
/// quasi-triangular S = J T^T J, solved by the same Hammarling step as the controllability one.
/// With upper triangular R_c, R_o (n x n) from those two solves,
///   Z_c = Q R_c,   Z_o = E^{-T} Q J R_o,   Z_o^T E Z_c = R_o^T J R_c,
/// so the Hankel singular values need no product with Q; the projection bases of BT take
/// Z_c Y and Z_o Y for a few columns Y only.
///
/// Sign-function path: with A_0 = E^{-1} A, B_0 = E^{-1} B, C_0 = C^T and the scaling c_k,
///   A_{k+1} = (A_k / c_k + c_k A_k^{-1}) / 2,
///   B_{k+1} = [B_k, c_k A_k^{-1} B_k] / sqrt(2 c_k),   C_{k+1} = [C_k, c_k A_k^{-T} C_k] / sqrt(2
///   c_k)
/// converge to A_inf = sign(A_hat) = -I (A_hat stable), Z_c = B_inf / sqrt(2) and
/// L = C_inf / sqrt(2) with P = Z_c Z_c^T and the observability equation of A_hat solved by
/// L L^T (the (1,2) blocks of the Newton iteration for the sign of [A_hat, B B^T; 0, -A_hat^T]
/// and of its transposed counterpart: Roberts 1971, BQQ 2000 section 3). Each step compresses
/// B_k and C_k by QR with column pivoting of their transposes to the columns whose pivots
/// exceed eps times the largest (dgeqp3), so the factors stay of the numerical rank. The
/// scaling is Frobenius, c_k = sqrt(||A_k||_F / ||A_k^{-1}||_F), until ||A_k + I||_1 < 1e-2, then
/// 1 (quadratic convergence); the iteration stops at ||A_{k+1} + I||_1 <= 100 n eps, or one step
/// after ||A_{k+1} + I||_1 <= sqrt(eps) (quadratic convergence has then reached rounding level),
/// or fails after kSignFunctionMaxSteps. Then Z_o = E^{-T} L and Z_o^T E Z_c = L^T Z_c.
/// @throws InvalidArgument on size mismatch or non-finite entries; NumericalError if E is
///         singular, the system is not stable, the Schur form does not converge or (solver =
///         sign_function) the sign iteration does not converge; Interrupted on a stop request
///         (polled per sign step).
class DenseGramianFactors {
 public:
  DenseGramianFactors(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                      DenseLyapunovSolver solver = DenseLyapunovSolver::automatic);

  Index n() const { return n_; }
  /// The solver used (never automatic) and, for the sign function, its number of inversions.
  DenseLyapunovSolver solver() const { return solver_; }
  Index sign_steps() const { return sign_steps_; }
  /// Columns of Z_c and Z_o: n for the Schur path, the numerical ranks for the sign function.
  Index rank_c() const { return sign() ? Zc_.cols() : n_; }
  Index rank_o() const { return sign() ? L_.cols() : n_; }
  /// Z_o^T E Z_c (rank_o x rank_c), whose singular values are the Hankel singular values:
  /// R_o^T J R_c (Schur), L^T Z_c (sign function).
  Matrix hankel_product() const;
  /// Z_c Y (Y with rank_c rows) and Z_o Y (rank_o rows), without forming Z_o.
  Matrix controllability_times(const Matrix& Y) const;
  Matrix observability_times(const Matrix& Y) const;
  /// Z_c and Z_o themselves (n x rank_c, n x rank_o): P = Z_c Z_c^T, Q = Z_o Z_o^T.
  Matrix controllability_factor() const;
  Matrix observability_factor() const;
  /// The relative residual ||R||_2 / ||G^T G||_2 of the equation in Schur coordinates
  /// (T X + X T^T + G G^T for the controllability Gramian, G = Q^T E^{-1} B; likewise for the
  /// observability one): for E = I the residual of A P + P A^T + B B^T = 0 itself (Q is
  /// orthogonal), otherwise that of the equation of E^{-1} A. ||R||_2 is estimated from below
  /// by 30 Lanczos steps on R applied in factored form (O(n^2) each): an exact 2-norm would
  /// cost a symmetric eigenvalue solve as expensive as the Lyapunov solve itself.
  /// For the sign function: the same estimate for the equation of E^{-1} A in the original
  /// coordinates (A_hat X + X A_hat^T + B_hat B_hat^T, A_hat^T Y + Y A_hat + C^T C).
  double residual(GramianKind kind) const;
  /// The eigenvalues of the pencil (A, E) from the Schur form (complex pairs consecutive);
  /// empty for the sign function, which does not compute them.
  const ComplexVector& eigenvalues() const { return eigenvalues_; }

 private:
  bool sign() const { return solver_ == DenseLyapunovSolver::sign_function; }
  void solve_by_schur(const Matrix& A_hat, const Matrix& B_hat, const Matrix& C);

  Index n_ = 0;
  DenseLyapunovSolver solver_ = DenseLyapunovSolver::schur;
  Index sign_steps_ = 0;
  Matrix T_, Q_;                ///< Schur: standardized real Schur form of E^{-1} A
  Matrix Bt_, Ct_;              ///< Schur: Q^T E^{-1} B and Q^T C^T
  Matrix Rc_, Ro_;              ///< Schur: upper triangular Schur-coordinate factors
  Matrix A_hat_, B_hat_, C_t_;  ///< sign: E^{-1} A, E^{-1} B and C^T (for the residual)
  Matrix Zc_, L_;               ///< sign: Z_c and L = E^T Z_o
  std::optional<Eigen::PartialPivLU<Matrix>> lu_E_;
  ComplexVector eigenvalues_;
};

/// The sign iteration's step limit: with Frobenius scaling it takes about 10 + log2 of the
/// spread of the eigenvalues' magnitudes steps; more means eigenvalues near the imaginary axis.
inline constexpr Index kSignFunctionMaxSteps = 60;

}  // namespace mor
