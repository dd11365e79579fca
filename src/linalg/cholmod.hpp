// SPDX-License-Identifier: GPL-3.0-or-later
// CHOLMOD behind one thin module, the only one that includes cholmod.h: the CHOLMOD backend of
// SparseSolver, Cholesky factors of many matrices of one analysed pattern, MatrixMarket files.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"

struct cholmod_factor_struct;  // CHOLMOD's cholmod_factor, opaque outside cholmod.cpp

namespace mor {

/// The CHOLMOD backend of make_sparse_solver (SparseBackend::cholmod, see sparse_solver.hpp).
std::unique_ptr<SparseSolver> make_cholmod_solver();

// ---------------------------------------------------------------------------------------------
// One analysis for many shifts

/// CHOLMOD factorizations of several SPD matrices with one pattern: the symbolic analysis
/// (fill-reducing ordering, elimination tree, column counts) is done once, and every numeric
/// factor starts as a copy of that symbolic factor. (The project's SparseSolver holds one
/// factorization per analysis, so a multi-shift cache built on it would analyse per shift.)
class CholmodShared {
 public:
  /// Analyses the pattern of P (square, compressed, both triangles stored; the lower is read).
  explicit CholmodShared(const SparseMatrix& P);
  ~CholmodShared();
  CholmodShared(const CholmodShared&) = delete;
  CholmodShared& operator=(const CholmodShared&) = delete;

 private:
  friend class CholmodFactor;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Owner of one CHOLMOD numeric factor of a CholmodShared pattern.
class CholmodFactor {
 public:
  explicit CholmodFactor(CholmodShared& shared) : shared_(shared) {}
  ~CholmodFactor() { release(); }
  CholmodFactor(const CholmodFactor&) = delete;
  CholmodFactor& operator=(const CholmodFactor&) = delete;

  /// @throws NumericalError if P is not positive definite (nothing stays factorized).
  void factorize(const SparseMatrix& P);
  void solve(const Matrix& B, Matrix& X);
  std::size_t bytes() const { return L_ != nullptr ? bytes_ : 0; }

 private:
  void release();
  CholmodShared& shared_;
  cholmod_factor_struct* L_ = nullptr;
  std::size_t bytes_ = 0;
};

// ---------------------------------------------------------------------------------------------
// MatrixMarket files through CHOLMOD's reader and writer (src/io/matrix_files.cpp checks what
// CHOLMOD does not). `file` is the file's quoted name, for the messages.

/// Writes A (compressed; no entries may be NaN, Inf or of magnitude >= 1e308) as a MatrixMarket
/// coordinate file into the open f.
/// @throws IoError "cannot write <file>: CHOLMOD status ..." if CHOLMOD fails.
void write_matrix_market_cholmod(std::FILE* f, const SparseMatrix& A, const std::string& file);
/// The same for a dense D, as a MatrixMarket array file.
void write_matrix_market_cholmod(std::FILE* f, const Matrix& D, const std::string& file);

/// The matrix of the MatrixMarket file open as f, read by CHOLMOD (cholmod_read_matrix with
/// prefer = 1: symmetric storage expanded to both triangles; "pattern" files read as ones). A
/// dense ("array") file is handed to dense_to_sparse(rows, cols, ld, x), x its column-major
/// values with leading dimension ld, while CHOLMOD's copy is alive.
/// @throws IoError if CHOLMOD fails (its status in the message); InvalidArgument if the matrix
///         is complex or otherwise not real.
SparseMatrix read_matrix_market_cholmod(
    std::FILE* f, const std::string& file,
    const std::function<SparseMatrix(Index rows, Index cols, Index ld, const double* x)>&
        dense_to_sparse);

}  // namespace mor
