// SPDX-License-Identifier: GPL-3.0-or-later
// Discrete empirical interpolation (DEIM) of a nonlinear term f(t) in R^n from m of its
// entries. With an orthonormal basis U (n x m, typically POD of force snapshots, see
// reduction/pod.hpp) and the selection P = [e_{p_1} ... e_{p_m}],
//     f ~ U (P^T U)^{-1} P^T f,
// exact at the m rows p_i and for every f in range(U), with the a-priori bound
//     ||f - U (P^T U)^{-1} P^T f||_2 <= ||(P^T U)^{-1}||_2 ||(I - U U^T) f||_2
// (Chaturantabut & Sorensen, SIAM J. Sci. Comput. 32 (2010) 2737-2764, Lemma 3.2).
// The rows come from the greedy DEIM (ibid., Algorithm 1) or from Q-DEIM, the first m column
// pivots of the QR factorization of U^T (Drmac & Gugercin, SIAM J. Sci. Comput. 38 (2016)
// A631-A648), which with Businger-Golub pivoting guarantees
//     ||(P^T U)^{-1}||_2 <= sqrt(n - m + 1) sqrt(4^m + 6 m - 1) / 3   (ibid., Theorem 2.1)
// and is usually smaller than DEIM's constant, whose bound is (1 + sqrt(2 n))^(m-1) / ||u_1||_inf.
#pragma once

#include <string_view>
#include <vector>

#include "src/core/types.hpp"

namespace mor {

enum class DeimMethod {
  deim,   ///< greedy: p_l = argmax |u_l - U_{l-1} (P^T U_{l-1})^{-1} P^T u_l| (ties: lowest row)
  qdeim,  ///< the first m column pivots of U^T Pi = Q R (LAPACK dgeqp3)
};
DeimMethod parse_deim_method(std::string_view name);  ///< "deim", "qdeim"
std::string_view to_string(DeimMethod m);

struct DeimResult {
  std::vector<Index> indices;  ///< p_1 .. p_m, distinct 0-based rows, in order of selection
  Matrix U;                    ///< the n x m basis
  Matrix PtU_inv;              ///< (P^T U)^{-1}, m x m
  double error_constant = 0;   ///< ||(P^T U)^{-1}||_2, the constant of the DEIM bound
  DeimMethod method = DeimMethod::deim;
  double seconds = 0;  ///< wall time of deim()
};

/// Columns of U may deviate from orthonormality by this much (max |U^T U - I|): a POD basis
/// meets it to rounding; a basis that does not is not orthonormal and the bound does not hold.
inline constexpr double kDeimOrthonormalityTolerance = 1e-8;

/// P^T U counts as singular when its 2-norm condition number exceeds this: the interpolation
/// coefficients would then carry no correct digit beyond the fourth.
inline constexpr double kDeimMaxCondition = 1e12;

/// The interpolation rows of U (n x m, 1 <= m <= n, orthonormal columns, finite) by `method`.
/// Cost O(n m^2) for either method.
/// @throws InvalidArgument for an empty U, m > n, a non-finite entry, or columns that are not
///         orthonormal to kDeimOrthonormalityTolerance (naming the deviation);
///         NumericalError if cond_2(P^T U) > kDeimMaxCondition (not expected for an
///         orthonormal U, for which P^T U is nonsingular by construction).
DeimResult deim(const Matrix& U, DeimMethod method);

/// Checks a DEIM result handed to a reduced model against the `rows` entries its basis
/// interpolates (rows_are: what they are, for the message, e.g. "the network size n"): U rows x m
/// with m >= 1 and finite, m indices in [0, rows) and distinct, (P^T U)^{-1} m x m and finite.
/// @throws InvalidArgument naming the value, prefixed by `who`.
void check_deim_result(const DeimResult& d, Index rows, std::string_view who,
                       std::string_view rows_are);

/// U (P^T U)^{-1} f(indices): the DEIM approximation of the full vector f (size n). For tests
/// and diagnostics; a reduced model evaluates only the m entries f(indices).
/// @throws InvalidArgument if f.size() != n.
Vector deim_approximation(const DeimResult& d, const Vector& f);

}  // namespace mor
