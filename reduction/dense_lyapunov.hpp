// SPDX-License-Identifier: GPL-3.0-or-later
// Dense Lyapunov solvers that return the Cholesky factor of the solution directly (Hammarling,
// IMA J. Numer. Anal. 2 (1982) 303-323, on Eigen's real Schur form), so that Hankel singular
// values far below sqrt(eps) of the largest are not lost to squaring: their errors stay at the
// O(eps sigma_1) level of the backward error. For systems of up to a few thousand states; the
// O(n^3) cost is dominated by Eigen's unblocked real Schur decomposition (about 0.1 s for
// n = 400, 5 s for n = 1000, 60 s for n = 2000 measured on the project machine).
#pragma once

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

}  // namespace mor
