// SPDX-License-Identifier: GPL-3.0-or-later
// A truncated SVD of a snapshot matrix that grows column by column, so that POD of many long runs
// (a parametric model's training at many points) keeps n x c numbers, not n x (all snapshots).
//
// Block update (Brand, Linear Algebra Appl. 415 (2006) 20-30; Baker, Gallivan & Van Dooren,
// Linear Algebra Appl. 436 (2012) 2866-2888): with X_{k-1} ~ U S Y^T (U n x c orthonormal,
// S = diag(s) descending) and a block B of b new snapshots,
//     [U S, B] = U' S' Y'^T      (a thin SVD of an n x (c + b) matrix, O(n (c + b)^2)),
// and U S is replaced by the leading c' columns of U' S', c' <= max_rank, s'_i > tolerance s'_1.
// Since [U S, B] [U S, B]^T = U S^2 U^T + B B^T, the left singular vectors and values of the
// compressed matrix are those of all snapshots up to the discarded parts: the error in the
// Gram matrix X X^T is at most the sum of the discarded s'^2 (discarded_energy()), and POD of
// the compressed matrix U S gives the POD basis of all snapshots to that accuracy.
#pragma once

#include "src/core/types.hpp"

namespace mor {

class IncrementalSvd {
 public:
  /// n: rows of every snapshot; at most max_rank columns kept (>= 1); `block` snapshots buffered
  /// between updates (>= 1); tolerance in [0, 1): singular values at or below tolerance * s_1
  /// are dropped at each update. Memory: n (max_rank + block) doubles.
  /// @throws InvalidArgument naming the value for n < 1, max_rank < 1, block < 1 or a
  ///         tolerance outside [0, 1).
  IncrementalSvd(Index n, Index max_rank, Index block = 256, double tolerance = 1e-12);

  /// Appends one snapshot (size n, finite). @throws InvalidArgument for another size or a
  /// non-finite entry.
  void append(const Eigen::Ref<const Vector>& x);
  /// U S (n x c) of every snapshot appended so far (buffered ones folded in first); n x 0 if
  /// none was.
  Matrix compressed();
  /// The leading singular values s (c), after folding in the buffer.
  Vector singular_values();

  Index rows() const { return n_; }
  Index snapshots() const { return seen_; }
  /// sum ||x_j||^2 over every snapshot appended (exact, accumulated as they come).
  double energy() const { return energy_; }
  /// The sum of the squared singular values dropped by the truncations (a bound on the change
  /// of X X^T, in Frobenius norm, and on sum_i |s_i^2 - s'_i^2|).
  double discarded_energy() const { return discarded_; }

 private:
  void update();

  Index n_, max_rank_, block_;
  double tolerance_;
  Matrix US_;   // n x c: U S
  Matrix buf_;  // n x block
  Index used_ = 0, seen_ = 0;
  double energy_ = 0, discarded_ = 0;
};

}  // namespace mor
