// SPDX-License-Identifier: GPL-3.0-or-later
// Dense Lyapunov solvers that return the Cholesky factor of the solution directly (Hammarling,
// IMA J. Numer. Anal. 2 (1982) 303-323, on LAPACK's real Schur form, dgees on OpenBLAS), so that
// Hankel singular values far below sqrt(eps) of the largest are not lost to squaring: their
// errors stay at the O(eps sigma_1) level of the backward error. For systems of up to a few
// thousand states; the O(n^3) cost is dominated by the Schur form, which DenseGramianFactors
// computes once for both Gramians.
#pragma once

#include <optional>

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

/// Both Gramian factors of the dense stable descriptor system (E, A, B, C) (E nonsingular, empty
/// for the identity) from one real Schur form E^{-1} A = Q T Q^T. Since A_hat^T = Q T^T Q^T, the
/// observability equation A_hat^T Y + Y A_hat + C^T C = 0 (Y = E^T Q E) becomes, with the
/// reversal permutation J, S Yt + Yt S^T + (J Q^T C^T)(J Q^T C^T)^T = 0 for the upper
/// quasi-triangular S = J T^T J, solved by the same Hammarling step as the controllability one.
/// With upper triangular R_c, R_o (n x n) from those two solves,
///   Z_c = Q R_c,   Z_o = E^{-T} Q J R_o,   Z_o^T E Z_c = R_o^T J R_c,
/// so the Hankel singular values need no product with Q; the projection bases of BT take
/// Z_c Y and Z_o Y for a few columns Y only.
/// @throws InvalidArgument on size mismatch or non-finite entries; NumericalError if E is
///         singular, the system is not stable or the Schur form does not converge.
class DenseGramianFactors {
 public:
  DenseGramianFactors(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C);

  Index n() const { return Q_.rows(); }
  /// Z_o^T E Z_c = R_o^T J R_c (n x n), whose singular values are the Hankel singular values.
  Matrix hankel_product() const;
  /// Z_c Y and Z_o Y for Y with n rows, without forming Z_c or Z_o.
  Matrix controllability_times(const Matrix& Y) const;
  Matrix observability_times(const Matrix& Y) const;
  /// Z_c and Z_o themselves (n x n): P = Z_c Z_c^T, Q = Z_o Z_o^T.
  Matrix controllability_factor() const;
  Matrix observability_factor() const;
  /// The relative residual ||R||_2 / ||G^T G||_2 of the equation in Schur coordinates
  /// (T X + X T^T + G G^T for the controllability Gramian, G = Q^T E^{-1} B; likewise for the
  /// observability one): for E = I the residual of A P + P A^T + B B^T = 0 itself (Q is
  /// orthogonal), otherwise that of the equation of E^{-1} A. ||R||_2 is estimated from below
  /// by 30 Lanczos steps on R applied in factored form (O(n^2) each): an exact 2-norm would
  /// cost a symmetric eigenvalue solve as expensive as the Lyapunov solve itself.
  double residual(GramianKind kind) const;
  /// The eigenvalues of the pencil (A, E) from the Schur form (complex pairs consecutive).
  const ComplexVector& eigenvalues() const { return eigenvalues_; }

 private:
  Matrix T_, Q_;    ///< standardized real Schur form of E^{-1} A
  Matrix Bt_, Ct_;  ///< Q^T E^{-1} B and Q^T C^T
  Matrix Rc_, Ro_;  ///< upper triangular Schur-coordinate factors
  std::optional<Eigen::PartialPivLU<Matrix>> lu_E_;
  ComplexVector eigenvalues_;
};

}  // namespace mor
