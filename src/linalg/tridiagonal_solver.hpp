// SPDX-License-Identifier: GPL-3.0-or-later
// Symmetric positive definite tridiagonal systems A x = b in O(n) time and memory, without
// symbolic analysis: the chain's Newton and iteration matrices S = a M + b D + c (K + dg/dq).
//
//   A = tridiag(e, d, e):  A(i, i) = d_i (i < n),  A(i + 1, i) = A(i, i + 1) = e_i (i < n - 1).
//
// Two implementations of the same L D L^T elimination:
//  - TridiagonalSpdSolver, the one the integrators use: a twisted ("burn at both ends")
//    factorization (van der Vorst, Parallel Computing 5 (1987) 45-54): rows 0, 1, ... and rows
//    n-1, n-2, ... are eliminated at the same time and meet at the twist row k = (n-1)/2, so the
//    factorization and each substitution sweep run as two independent recurrences that the
//    processor overlaps. The pivots come from the ratios of principal minors
//        p_i = d_i p_{i-1} - e_{i-1}^2 p_{i-2},   pivot_i = p_i / p_{i-1}
//    (the continuant recurrence; the trailing minors likewise from the bottom), so no division
//    waits on the previous row: the recurrence is one fused multiply-add per row, rescaled every
//    8 rows by a power of two (exact), and the divisions run afterwards, vectorized. The pivots
//    equal those of the usual recurrence pivot_i = d_i - e_{i-1}^2 / pivot_{i-1} up to rounding,
//    and their rounding errors propagate by the same factors (the map is the same). Measured by
//    bench_kernels on this machine: factorization 3 to 4 times, solve 2 to 3 times faster than
//    LAPACK's dpttrf/dpttrs; the solve runs within 20% of the latency of its chained FMAs at
//    N = 1e3, the factorization at 3 times that bound (its divisions and rescaling).
//  - LAPACK's dpttrf/dpttrs (L D L^T from the top), behind lapack_dpttrf()/lapack_dpttrs(): the
//    fallback when the minors leave [2^-900, 2^900] (entries of wildly different magnitude) or a
//    pivot is not positive, so that LAPACK decides, and reports, whether A is positive definite;
//    and the reference of the tests and benchmarks.
//
// A is positive definite iff every pivot is positive (the twisted order is a symmetric
// permutation of the rows). Cost: factorize about 6 n flops, reading d and e and writing the
// two factor vectors once (the minors stay in L1); solve 4 n flops in two sweeps (b and L in,
// y out; y, D and L in, x out).
#pragma once

#include "src/core/types.hpp"

namespace mor {

class TridiagonalSpdSolver {
 public:
  TridiagonalSpdSolver() = default;

  /// Factorizes A = tridiag(off, diag, off). Sizes: diag n >= 1, off n - 1; n < 2^31 (LAPACK).
  /// @throws InvalidArgument if the sizes do not fit; NumericalError if an entry is not finite
  ///         (naming the row and value) or A is not positive definite (naming the row at which
  ///         LAPACK's elimination found the pivot <= 0, and the pivot).
  void factorize(const Vector& diag, const Vector& off);
  /// x = A^{-1} b for the last successful factorize; x may alias b. Backward stable: the
  /// residual ||A x - b|| is a small multiple of the unit roundoff times ||A|| ||x||.
  /// @throws InvalidArgument if nothing is factorized or b.size() != n.
  void solve(const Vector& b, Vector& x) const;

  Index rows() const { return n_; }
  /// True if the last factorize fell back to LAPACK's dpttrf (see the file comment).
  bool used_lapack() const { return lapack_; }

 private:
  Index n_ = 0;
  bool factorized_ = false;
  bool lapack_ = false;
  // Twisted layout (lapack_ false): for rows i < k, inv_pivot_[i] = 1 / pivot_i and
  // coupling_[i] = e_i / pivot_i (the multiplier of row i + 1); for rows i > k, the same with
  // e_{i-1} (the multiplier of row i - 1); inv_pivot_[k] = 1 / pivot_k, coupling_[k] = 0.
  // LAPACK layout (lapack_ true): inv_pivot_ holds dpttrf's D, coupling_ its L (size n - 1).
  Vector inv_pivot_, coupling_;
};

/// LAPACK dpttrf on the arrays: d (n) becomes D, e (n - 1) the subdiagonal of the unit L of
/// A = L D L^T. Returns LAPACK's info: 0, or i > 0 if the leading minor of order i is not
/// positive definite (d[i - 1] then holds the pivot <= 0).
/// @throws InvalidArgument if the sizes do not fit.
int lapack_dpttrf(Vector& d, Vector& e);
/// LAPACK dpttrs with the factors of lapack_dpttrf: b (n) is overwritten by A^{-1} b.
/// @throws InvalidArgument if the sizes do not fit.
void lapack_dpttrs(const Vector& d, const Vector& e, Vector& b);

}  // namespace mor
