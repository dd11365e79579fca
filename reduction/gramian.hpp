// SPDX-License-Identifier: GPL-3.0-or-later
// The two Gramians of a stable descriptor system E x' = A x + B u, y = C x (E nonsingular,
// every finite eigenvalue of the pencil (A, E) in the open left half plane) and their factors.
//
//   controllability P:  A P E^T + E P A^T + B B^T = 0
//   observability   Q:  A^T Q E + E^T Q A + C^T C = 0
//
// Both solvers in this folder (dense Hammarling, low-rank ADI) return a factor Z with X = Z Z^T,
// so the Hankel singular values are the singular values of Z_o^T E Z_c (Penzl; Benner, Saak).
#pragma once

#include <string_view>

#include "reduction/lti_operator.hpp"

namespace mor {

enum class GramianKind { controllability, observability };

std::string_view to_string(GramianKind kind);

/// ||R||_2 / ||B^T B||_2 (controllability) or ||R||_2 / ||C C^T||_2 (observability), where R is
/// the Lyapunov residual of X = Z Z^T. Computed in O(n k^2) from a thin QR of [E Z, A Z, B]
/// (or of the transposed products and C^T): nothing n x n is formed. Z is n x k.
double lyapunov_residual(const LtiOperator& sys, GramianKind kind, const Matrix& Z);

}  // namespace mor
