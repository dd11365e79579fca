// SPDX-License-Identifier: GPL-3.0-or-later
// Seeded random matrices and systems shared by the reduction tests, so that every suite draws
// its test data the same way.
#pragma once

#include <random>
#include <utility>

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

/// A symmetric pencil like the rail's on an nx x nx grid: E = (4 I + grid neighbours) / 8 (SPD,
/// a lumped-consistent mass), A = -K + c I with K the 5-point Laplacian (SPD, eigenvalues in
/// (0, 8)): negative definite for c = 0, indefinite for c > lambda_min(K). Inputs at the first
/// and the middle grid point (and, if uniform_input, a third one of 0.1 everywhere); outputs at
/// the last point and at point nx.
inline DescriptorSystem symmetric_grid(Index nx, double c = 0.0, bool uniform_input = false) {
  const Index n = nx * nx;
  Matrix E = Matrix::Zero(n, n), A = Matrix::Zero(n, n);
  for (Index i = 0; i < nx; ++i) {
    for (Index j = 0; j < nx; ++j) {
      const Index k = i * nx + j;
      E(k, k) = 0.5;
      A(k, k) = -4.0 + c;
      for (auto [di, dj] : {std::pair<Index, Index>{1, 0}, {0, 1}}) {
        if (i + di >= nx || j + dj >= nx) continue;
        const Index l = (i + di) * nx + (j + dj);
        E(k, l) = E(l, k) = 0.125;
        A(k, l) = A(l, k) = 1.0;
      }
    }
  }
  const Index m = uniform_input ? 3 : 2;
  Matrix B = Matrix::Zero(n, m), C = Matrix::Zero(2, n);
  B(0, 0) = 1.0;
  B(n / 2, 1) = 1.0;
  if (uniform_input) B.col(2).setConstant(0.1);
  C(0, n - 1) = 1.0;
  C(1, nx) = 1.0;
  DescriptorSystem sys;
  sys.E = to_sparse(E);
  sys.A = to_sparse(A);
  sys.B = to_sparse(B);
  sys.C = to_sparse(C);
  sys.D_ff = Matrix::Zero(2, m);
  return sys;
}

}  // namespace mor::testing
