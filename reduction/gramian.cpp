// SPDX-License-Identifier: GPL-3.0-or-later
// Names of the Gramians and the low-rank Lyapunov residual norm (reduction/gramian.hpp).
#include "reduction/gramian.hpp"

#include <Eigen/Eigenvalues>

#include "src/core/errors.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

std::string_view to_string(GramianKind kind) {
  switch (kind) {
    case GramianKind::controllability:
      return "controllability";
    case GramianKind::observability:
      return "observability";
  }
  throw InvalidArgument(detail::concat("unknown GramianKind value ", static_cast<int>(kind)));
}

namespace {
/// ||X||_2 of a symmetric matrix: its largest eigenvalue magnitude.
double symmetric_norm(const Matrix& X) {
  if (X.size() == 0) return 0.0;
  Matrix S = X;
  return lapack::symmetric_eigenvalues(S).cwiseAbs().maxCoeff();
}
}  // namespace

double lyapunov_residual(const LtiOperator& sys, GramianKind kind, const Matrix& Z) {
  const Index n = sys.n();
  require(Z.rows() == n, "lyapunov_residual: Z has ", Z.rows(), " rows, the system has ", n,
          " states");
  const bool obs = kind == GramianKind::observability;
  const Matrix rhs = obs ? Matrix(sys.C().transpose()) : sys.B();
  const Index k = Z.cols(), m = rhs.cols();

  // R = A X E^T + E X A^T + B B^T = F S F^T with F = [E Z, A Z, B] and
  // S = [0 I 0; I 0 0; 0 0 I] (for observability: the transposed products and C^T).
  // With the thin QR F = Q T, ||R||_2 = ||T S T^T||_2, a (2k+m)-square eigenproblem.
  Matrix F(n, 2 * k + m);
  if (k > 0) {
    Matrix product;  // one n x k temporary at a time
    sys.apply_E(Z, product, obs);
    F.leftCols(k) = product;
    sys.apply_A(Z, product, obs);
    F.middleCols(k, k) = product;
  }
  F.rightCols(m) = rhs;
  const Matrix T = lapack::qr_r_factor(F);  // min(n, 2k + m) x (2k + m); F is destroyed
  const auto T1 = T.leftCols(k), T2 = T.middleCols(k, k), T3 = T.rightCols(m);
  Matrix core = T3 * T3.transpose();
  if (k > 0) {
    const Matrix cross = T1 * T2.transpose();
    core += cross + cross.transpose();
  }
  const double residual = symmetric_norm(core);
  const double scale = symmetric_norm(rhs.transpose() * rhs);
  return scale > 0.0 ? residual / scale : residual;
}

}  // namespace mor
