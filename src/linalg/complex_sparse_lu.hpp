// SPDX-License-Identifier: GPL-3.0-or-later
// Complex (and real) sparse LU by KLU, for the shifted solves (A + p E) X = R with complex p of
// the low-rank ADI and of frequency-response evaluations.
//
// The symbolic analysis (BTF, AMD ordering) of a sparsity pattern is a separate, shareable object
// (KluPattern): one analysis serves every shift, and several numeric factorizations of matrices
// with that pattern (a multi-shift cache) can live side by side.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "src/core/types.hpp"

namespace mor {

/// The pattern of a square sparse matrix (compressed column storage, int indices) and its KLU
/// symbolic analysis. Immutable after construction; share it via std::shared_ptr.
class KluPattern {
 public:
  /// Copies the pattern of A (values are ignored) and analyses it.
  /// @throws InvalidArgument if A is not square, empty or not compressed;
  ///         NumericalError naming the KLU status if the analysis fails.
  explicit KluPattern(const SparseMatrix& A);
  ~KluPattern();
  KluPattern(const KluPattern&) = delete;
  KluPattern& operator=(const KluPattern&) = delete;

  Index n() const { return n_; }
  Index nonzeros() const { return static_cast<Index>(inner_.size()); }
  const std::vector<int>& outer() const { return outer_; }  ///< n + 1 column pointers
  const std::vector<int>& inner() const { return inner_; }  ///< row indices, sorted per column

  /// KLU's klu_symbolic, type-erased so that klu.h stays out of this header.
  void* symbolic() const { return symbolic_; }

 private:
  Index n_ = 0;
  std::vector<int> outer_, inner_;
  void* symbolic_ = nullptr;
};

/// One numeric LU factorization (KLU: partial pivoting with diagonal preference, row scaling)
/// of a matrix whose pattern is the shared KluPattern, real (Scalar = double, KLU's klu_*) or
/// complex (Scalar = Complex, KLU's klu_z_*). Refactorizing reuses the pivot order of the
/// previous factorization when that stays numerically safe (a much cheaper numeric-only pass);
/// otherwise it pivots afresh.
template <class Scalar>
class KluLu {
 public:
  using DenseMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using SparseType = Eigen::SparseMatrix<Scalar, Eigen::ColMajor, int>;

  explicit KluLu(std::shared_ptr<const KluPattern> pattern);
  ~KluLu();
  KluLu(const KluLu&) = delete;
  KluLu& operator=(const KluLu&) = delete;

  /// Factorizes the matrix whose nonzeros, in the column-major order of the pattern, are
  /// values[0 .. nonzeros()). A previous factorization is replaced (also when this one fails).
  /// @throws NumericalError if the matrix is singular (a zero pivot: names the KLU status and
  ///         the column) or numerically singular (pivot ratio min|U_kk| / max|U_kk| below
  ///         machine epsilon); std::bad_alloc if KLU runs out of memory.
  void factorize(const Scalar* values);
  /// The same for a matrix given with its pattern, which must equal the analysed one.
  /// @throws InvalidArgument if the pattern differs.
  void factorize(const SparseType& A);

  /// X <- A^{-1} X, or A^{-T} X (plain transpose, no conjugation) if transpose; X is n x k.
  /// @throws InvalidArgument if nothing is factorized or X has the wrong number of rows.
  void solve_in_place(DenseMatrix& X, bool transpose = false);
  /// X = A^{-1} B (or A^{-T} B); X may alias B.
  void solve(const DenseMatrix& B, DenseMatrix& X, bool transpose = false);

  bool factorized() const { return numeric_ != nullptr; }
  Index n() const { return pattern_->n(); }
  /// Bytes held by the numeric factorization (KLU's own accounting), 0 if none.
  std::size_t memory_bytes() const;
  const std::shared_ptr<const KluPattern>& pattern() const { return pattern_; }

 private:
  void release();

  std::shared_ptr<const KluPattern> pattern_;
  struct Common;
  std::unique_ptr<Common> common_;
  void* numeric_ = nullptr;
};

/// The complex LU of the ADI's complex shifts (KLU's klu_z_factor / klu_z_solve / klu_z_tsolve).
using ComplexSparseLu = KluLu<Complex>;
/// The real LU with the same shared analysis (klu_factor / klu_solve / klu_tsolve).
using RealSparseLu = KluLu<double>;

extern template class KluLu<double>;
extern template class KluLu<Complex>;

}  // namespace mor
