// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to the sparse solvers (sparse_solver.cpp, cholmod.cpp), not a public API: the base
// class of every SparseSolver backend, which checks the arguments and handles aliased solves.
#pragma once

#include <algorithm>
#include <string_view>

#include "src/core/errors.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor::detail {

/// The argument checks and the aliasing rule shared by every backend, so that all of them
/// throw the same InvalidArgument messages and a backend implements only the numerical work.
/// State machine: empty -> analysed -> factorized; a failed factorize() leaves "analysed" (no
/// stale factor can be used by mistake), a failed analyze_pattern() leaves "empty".
class CheckedSparseSolver : public SparseSolver {
 public:
  void analyze_pattern(const SparseMatrix& A) final {
    require(A.rows() == A.cols(), name(), ": analyze_pattern needs a square matrix, got ", A.rows(),
            "x", A.cols());
    require(A.rows() > 0, name(), ": analyze_pattern needs a nonempty matrix, got 0x0");
    require(A.isCompressed(), name(),
            ": analyze_pattern needs a compressed matrix (call makeCompressed())");
    analysed_ = false;
    factorized_ = false;
    n_ = 0;
    do_analyze(A);
    n_ = A.rows();
    nnz_ = A.nonZeros();
    analysed_ = true;
  }

  void factorize(const SparseMatrix& A) final {
    require(analysed_, name(), ": factorize called before analyze_pattern");
    require(A.rows() == n_ && A.cols() == n_, name(), ": factorize got a ", A.rows(), "x", A.cols(),
            " matrix but the analysed pattern is ", n_, "x", n_);
    // Comparing the whole pattern would cost O(nnz) per Newton step; the nonzero count catches
    // the usual mistake (a different matrix) for free.
    require(A.nonZeros() == nnz_, name(), ": factorize got a pattern with ", A.nonZeros(),
            " nonzeros but the analysed pattern has ", nnz_);
    require(A.isCompressed(), name(), ": factorize needs a compressed matrix");
    factorized_ = false;
    do_factorize(A);
    factorized_ = true;
  }

  void solve(const Vector& b, Vector& x) final {
    check_solve(b.rows(), 1);
    if (static_cast<const void*>(&b) == static_cast<const void*>(&x)) {
      do_solve_in_place(x.data(), 1);
    } else {
      x.resize(n_);
      do_solve(b.data(), x.data(), 1);
    }
  }

  void solve(const Matrix& B, Matrix& X) final {
    check_solve(B.rows(), B.cols());
    if (B.cols() == 0) {
      X.resize(n_, 0);
      return;
    }
    if (static_cast<const void*>(&B) == static_cast<const void*>(&X)) {
      do_solve_in_place(X.data(), X.cols());
    } else {
      X.resize(n_, B.cols());
      do_solve(B.data(), X.data(), B.cols());
    }
  }

  Index rows() const final { return n_; }

 protected:
  std::string_view name() const { return to_string(backend()); }

  /// Symbolic analysis; A is square, nonempty and compressed. Must discard any earlier analysis
  /// and factorization first.
  virtual void do_analyze(const SparseMatrix& A) = 0;
  /// Numeric factorization; A has the analysed size and nonzero count.
  /// @throws NumericalError if A is singular (or not positive definite for SPD backends).
  virtual void do_factorize(const SparseMatrix& A) = 0;
  /// X = A^{-1} B for k columns of length n stored contiguously (column-major, leading
  /// dimension n); B and X do not overlap.
  virtual void do_solve(const double* B, double* X, Index k) = 0;
  /// BX = A^{-1} BX. The default copies the right-hand side to a scratch buffer because most
  /// libraries document their input and output as distinct arrays; a backend that solves in
  /// place natively (KLU) overrides this.
  virtual void do_solve_in_place(double* BX, Index k) {
    const Index size = n_ * k;
    if (scratch_.size() != size) scratch_.resize(size);
    std::copy(BX, BX + size, scratch_.data());
    do_solve(scratch_.data(), BX, k);
  }

 private:
  void check_solve(Index rhs_rows, Index rhs_cols) const {
    require(factorized_, name(), ": solve called without a successful factorize");
    require(rhs_rows == n_, name(), ": solve got a ", rhs_rows, "x", rhs_cols,
            " right-hand side for a ", n_, "x", n_, " matrix");
  }

  Index n_ = 0;
  Index nnz_ = 0;
  bool analysed_ = false;
  bool factorized_ = false;
  Vector scratch_;  // right-hand side copy for aliased solves, kept to avoid reallocation
};

}  // namespace mor::detail
