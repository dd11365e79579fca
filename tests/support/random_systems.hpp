// SPDX-License-Identifier: GPL-3.0-or-later
// Seeded random matrices and systems shared by the reduction tests, so that every suite draws
// its test data the same way.
#pragma once

#include <random>

#include "src/core/types.hpp"
#include "src/systems/lti.hpp"

namespace mor::testing {

/// A rows x cols matrix of standard normal entries, drawn column by column.
inline Matrix random_normal(Index rows, Index cols, std::mt19937& gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix M(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) M(i, j) = normal(gen);
  return M;
}

/// The compressed sparse copy of a dense matrix (exact zeros dropped).
inline SparseMatrix to_sparse(const Matrix& X) {
  SparseMatrix S = X.sparseView();
  S.makeCompressed();
  return S;
}

/// A random sparse stable descriptor system: A = -2 I plus a random sparse part of norm ~0.5
/// (eigenvalues of the pencil near -2), E = I plus a random sparse unsymmetric part of norm
/// ~0.2, with patterns that differ; B, C dense-valued uniform in [-1, 1], D_ff = 0.
inline DescriptorSystem random_descriptor(Index n, Index m, Index p, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  std::uniform_int_distribution<Index> index(0, n - 1);
  Matrix A = -2.0 * Matrix::Identity(n, n), E = Matrix::Identity(n, n);
  for (Index k = 0; k < 3 * n; ++k) A(index(gen), index(gen)) += 0.15 * unif(gen);
  for (Index k = 0; k < 2 * n; ++k) E(index(gen), index(gen)) += 0.07 * unif(gen);
  Matrix B(n, m), C(p, n);
  for (Index i = 0; i < B.size(); ++i) B(i) = unif(gen);
  for (Index i = 0; i < C.size(); ++i) C(i) = unif(gen);
  DescriptorSystem sys;
  sys.A = to_sparse(A);
  sys.E = to_sparse(E);
  sys.B = to_sparse(B);
  sys.C = to_sparse(C);
  sys.D_ff = Matrix::Zero(p, m);
  return sys;
}

}  // namespace mor::testing
