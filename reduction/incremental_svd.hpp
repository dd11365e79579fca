// SPDX-License-Identifier: GPL-3.0-or-later
// A truncated SVD of a snapshot matrix that grows column by column, so that POD of many long runs
// (a parametric model's training at many points) keeps n x c numbers, not n x (all snapshots).
//
// Block update (Brand, Linear Algebra Appl. 415 (2006) 20-30; Baker, Gallivan & Van Dooren,
// Linear Algebra Appl. 436 (2012) 2866-2888): with X_{k-1} ~ U S Y^T (U n x c orthonormal,
// S = diag(s) descending) and a block B of b new snapshots,
//     P = U^T B,   Q R = B - U P   (the part of B outside range(U), orthogonalized twice),
//     [U S, B] = [U Q] K,   K = [S P; 0 R]   ((c + b) x (c + b)),
//     K = U_K S' Y_K^T   (a small dense SVD),   U' = [U Q] U_K,
// and U S is replaced by the leading c' columns of U' S', c' <= max_rank, s'_i > tolerance s'_1.
// No SVD of an n x (c + b) matrix: the n-sized work is two products with U, one QR of n x b and
// the product [U Q] U_K, formed in row blocks into U's own storage. Since
// [U S, B] [U S, B]^T = U S^2 U^T + B B^T, the left singular vectors and values of the
// compressed matrix are those of all snapshots up to the discarded parts: the error in the
// Gram matrix X X^T is at most the sum of the discarded s'^2 (discarded_energy()), and POD of
// the compressed matrix U S gives the POD basis of all snapshots to that accuracy.
//
// The same holds for blocks that are themselves compressions: appending U_k S_k of several
// IncrementalSvds (append_block) gives the truncated SVD of all their snapshots side by side,
// since sum_k U_k S_k^2 U_k^T is the Gram matrix of all of them up to their discarded parts (how
// a parametric training's concurrent runs are merged, in a fixed order).
#pragma once

#include "src/core/types.hpp"

namespace mor {

class IncrementalSvd {
 public:
  /// Snapshots buffered between updates by default: 256, fewer for large n so that the buffer
  /// stays at or below kBlockBytes (at least 16 snapshots).
  static constexpr double kBlockBytes = 256.0 * 1024.0 * 1024.0;
  static Index automatic_block(Index n);

  /// n: rows of every snapshot; at most max_rank columns kept (>= 1); `block` snapshots buffered
  /// between updates (>= 1; 0: automatic_block(n)); tolerance in [0, 1): singular values at or
  /// below tolerance * s_1 are dropped at each update. Memory: n (min(max_rank, n) + block)
  /// doubles, and during an update a few small (c + b)^2 matrices and a row block of U.
  /// @throws InvalidArgument naming the value for n < 1, max_rank < 1, block < 0 or a
  ///         tolerance outside [0, 1).
  IncrementalSvd(Index n, Index max_rank, Index block = 0, double tolerance = 1e-12);

  /// Appends one snapshot (size n, finite). @throws InvalidArgument for another size or a
  /// non-finite entry.
  void append(const Eigen::Ref<const Vector>& x);
  /// Appends the columns of B (n rows, finite) at once, after the buffered snapshots: one update
  /// with B as its block (B is used as the workspace: move it in). Each column counts as a
  /// snapshot. @throws InvalidArgument for another row count or a non-finite entry.
  void append_block(Matrix B);
  /// U S (n x c) of every snapshot appended so far (buffered ones folded in first); n x 0 if
  /// none was.
  Matrix compressed();
  /// compressed(), the object left empty (no snapshots, its memory freed): no copy of U S.
  Matrix take();
  /// The leading singular values s (c), after folding in the buffer.
  Vector singular_values();

  Index rows() const { return n_; }
  Index block() const { return block_; }
  Index snapshots() const { return seen_; }
  /// sum ||x_j||^2 over every snapshot appended (exact, accumulated as they come).
  double energy() const { return energy_; }
  /// The sum of the squared singular values dropped by the truncations (a bound on the change
  /// of X X^T, in Frobenius norm, and on sum_i |s_i^2 - s'_i^2|).
  double discarded_energy() const { return discarded_; }

 private:
  void update();
  void update_with(Matrix& B);  // B destroyed

  Index n_, max_rank_, block_;
  double tolerance_;
  Matrix U_;  // n x min(max_rank, n), its leading c_ columns U (orthonormal)
  Vector s_;  // c_ singular values
  Index c_ = 0;
  Matrix buf_;  // n x block
  Index used_ = 0, seen_ = 0;
  double energy_ = 0, discarded_ = 0;
};

}  // namespace mor
