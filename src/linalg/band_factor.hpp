// SPDX-License-Identifier: GPL-3.0-or-later
// Banded matrices given by their values on a compressed sparse pattern, factorized by LAPACK:
// LU (real or complex) and, for symmetric positive definite ones, L D L^T or band Cholesky.
#pragma once

#include <cstddef>
#include <vector>

#include "src/core/types.hpp"
#include "src/linalg/tridiagonal_solver.hpp"

namespace mor {

/// The bandwidth w = max |i - j| over the stored entries of a square compressed matrix.
Index bandwidth(const SparseMatrix& P);

/// LU with partial pivoting of a real or complex banded n x n matrix (entries only where
/// |i - j| <= w), given by its values on a compressed pattern P: LAPACK's dgttrf/zgttrf (w = 1)
/// or dgbtrf/zgbtrf (w > 1). O(n w^2) time and O(n w) memory, no symbolic analysis, no graph
/// searches and no refactorization checks (the sparse LUs' klu_rgrowth / klu_rcond passes).
template <class S>
class BandLu {
 public:
  /// @throws NumericalError if the matrix is singular: a zero pivot, or a pivot ratio
  ///         min |u_kk| / max |u_kk| below machine epsilon (the test of KluLu). Nothing stays
  ///         factorized then.
  void factorize(const SparseMatrix& P, const S* values, Index w);

  /// X <- A^{-1} X, or A^{-T} X (plain transpose) if transpose; X is n x k, column-major.
  void solve_in_place(S* X, int k, bool transpose) const;

  std::size_t bytes() const;

 private:
  bool factorized_ = false;
  int n_ = 0, w_ = 1, ldab_ = 0;
  std::vector<S> d_, dl_, du_, du2_, ab_;  // gttrf's diagonals, or the band (w > 1)
  std::vector<int> ipiv_;
};

extern template class BandLu<double>;
extern template class BandLu<Complex>;

/// Factorization of a real banded n x n matrix (entries only where |i - j| <= w), given by its
/// values on a compressed pattern P: BandLu<double>, or for a symmetric positive definite
/// matrix (spd) L D L^T by the project's TridiagonalSpdSolver (w = 1: 2 to 4 times faster than
/// dpttrf, which it falls back to) or band Cholesky by dpbtrf (lower band). For the chain
/// (w = 1, N = 10^5) a factorization of S(p) took 1.5 ms against CHOLMOD's 3.1 ms (one core of
/// the shared machine, under load).
class BandFactor {
 public:
  /// @throws NumericalError if the matrix is singular (BandLu) or, for spd, not positive
  ///         definite (the tridiagonal L D L^T checks only that, as CHOLMOD does; band Cholesky
  ///         also the pivot ratio). Nothing stays factorized then.
  void factorize(const SparseMatrix& P, const double* values, Index w, bool spd);

  /// X <- A^{-1} X, or A^{-T} X if transpose.
  void solve_in_place(Matrix& X, bool transpose);

  bool spd() const { return spd_; }
  std::size_t bytes() const;

 private:
  bool factorized_ = false;
  int n_ = 0, w_ = 1, ldab_ = 0;
  bool spd_ = false;
  BandLu<double> lu_;                     // not spd
  std::vector<double> ab_;                // band Cholesky (spd, w > 1)
  TridiagonalSpdSolver spd_tridiagonal_;  // w = 1 and spd
  Vector diag_, off_;                     // its input, then solve scratch (no allocations)
};

}  // namespace mor
