// SPDX-License-Identifier: GPL-3.0-or-later
// Dense Lyapunov solvers that return the Cholesky factor of the solution directly (Hammarling,
// IMA J. Numer. Anal. 2 (1982) 303-323, on Eigen's real Schur form), so that Hankel singular
// values far below sqrt(eps) of the largest keep their relative accuracy. For systems of up to a
// few thousand states; cost about 25 n^3.
#pragma once

#include "reduction/gramian.hpp"

namespace mor {

/// Upper triangular U (n x n) with A X + X A^T + B B^T = 0, X = U U^T, for a stable A
/// (n x n, every eigenvalue with negative real part) and B (n x m, any m >= 1).
/// @throws InvalidArgument on size mismatch; NumericalError naming the eigenvalue if A is not
///         stable (real part >= -tiny * ||A||).
Matrix lyapunov_cholesky_factor(const Matrix& A, const Matrix& B);

/// Factor Z (n x n) of the controllability or observability Gramian of the dense descriptor
/// system (E, A, B, C) as defined in reduction/gramian.hpp; an empty E means the identity.
/// E must be nonsingular: the pencil is reduced to A_hat = E^{-1} A by a pivoted LU of E.
/// @throws NumericalError if E is singular or the system is not stable (naming the value).
Matrix dense_gramian_factor(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                            GramianKind kind);

/// The same for any operator (formed densely with dense_E / dense_A; small n only).
Matrix dense_gramian_factor(const LtiOperator& sys, GramianKind kind);

}  // namespace mor
