// SPDX-License-Identifier: GPL-3.0-or-later
// Sparse direct solvers behind one interface, so the integrators (and later the ADI shifted
// solves) choose CHOLMOD, UMFPACK, KLU or Eigen's own factorizations at run time.
//
// Contract: analyze_pattern(A) once for a sparsity pattern (fill-reducing ordering, symbolic
// factorization), then factorize(A) any number of times for matrices with exactly that pattern
// (numeric refactorization only), then solve(). This is the "analyse once, refactorize
// numerically" cycle of Newton iterations and of shifted solves.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "src/core/types.hpp"

namespace mor {

enum class SparseBackend {
  cholmod,     ///< CHOLMOD supernodal/simplicial Cholesky; A symmetric positive definite
  umfpack,     ///< UMFPACK multifrontal LU; any square nonsingular A
  klu,         ///< KLU left-looking LU with BTF; circuit-like and banded A
  eigen_ldlt,  ///< Eigen::SimplicialLDLT; A symmetric positive definite (no SuiteSparse)
  eigen_lu,    ///< Eigen::SparseLU; any square nonsingular A (no SuiteSparse)
};

/// Parses "cholmod", "umfpack", "klu", "eigen_ldlt", "eigen_lu"; throws InvalidArgument naming
/// the value and the accepted names otherwise.
SparseBackend parse_sparse_backend(std::string_view name);
std::string_view to_string(SparseBackend backend);
/// True for backends that need a symmetric positive definite matrix.
bool requires_spd(SparseBackend backend);

class SparseSolver {
 public:
  virtual ~SparseSolver() = default;
  SparseSolver(const SparseSolver&) = delete;
  SparseSolver& operator=(const SparseSolver&) = delete;

  /// Symbolic analysis of the pattern of A (n x n, compressed). For SPD backends only the
  /// lower triangle of A is read (A must still be stored in full: both triangles).
  /// @throws InvalidArgument if A is not square or not compressed.
  virtual void analyze_pattern(const SparseMatrix& A) = 0;
  /// Numeric factorization of A, whose pattern must equal the one analysed.
  /// @throws InvalidArgument if analyze_pattern was not called or the size differs;
  /// @throws NumericalError if A is singular or (for SPD backends) not positive definite,
  ///         naming the backend and the status / failing column.
  virtual void factorize(const SparseMatrix& A) = 0;
  /// x = A^{-1} b for the last factorization; x may alias b.
  /// @throws InvalidArgument if nothing is factorized or sizes differ.
  virtual void solve(const Vector& b, Vector& x) = 0;
  /// Multiple right-hand sides: X = A^{-1} B (B is n x k, dense).
  virtual void solve(const Matrix& B, Matrix& X) = 0;

  virtual SparseBackend backend() const = 0;
  virtual Index rows() const = 0;

 protected:
  SparseSolver() = default;
};

/// Creates a solver of the chosen backend.
std::unique_ptr<SparseSolver> make_sparse_solver(SparseBackend backend);

}  // namespace mor
