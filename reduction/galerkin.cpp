// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/galerkin.hpp"

#include "src/core/errors.hpp"

namespace mor {
namespace {

void check_basis(Index n, const Matrix& V) {
  require(V.rows() == n && V.cols() >= 1, "Galerkin projection: the basis is ", V.rows(), " x ",
          V.cols(), ", the system has n = ", n, " (need n x r, r >= 1)");
}

}  // namespace

DenseFirstOrderSystem galerkin_first_order(const LtiOperator& sys, const Matrix& V) {
  check_basis(sys.n(), V);
  DenseFirstOrderSystem r;
  Matrix X;
  sys.apply_E(V, X);
  r.E.noalias() = V.transpose() * X;
  sys.apply_A(V, X);
  r.A.noalias() = V.transpose() * X;
  r.B.noalias() = V.transpose() * sys.B();
  r.C.noalias() = sys.C() * V;
  r.D = sys.D_ff().size() > 0 ? sys.D_ff() : Matrix::Zero(sys.n_outputs(), sys.n_inputs());
  return r;
}

DenseSecondOrderSystem galerkin_second_order(const SecondOrderSystem& sys, const Matrix& V) {
  check_basis(sys.n(), V);
  return project_second_order(sys, V, V);
}

DenseSecondOrderSystem project_second_order(const SecondOrderSystem& sys, const Matrix& V,
                                            const Matrix& W) {
  DenseSecondOrderSystem r;
  const auto project = [&](const SparseMatrix& X) -> Matrix {
    const Matrix XV = X * V;
    return W.transpose() * XV;
  };
  r.M = project(sys.M);
  r.D = project(sys.D);
  r.K = project(sys.K);
  r.B = W.transpose() * sys.B;
  r.Cp = sys.Cp * V;
  r.Cv = sys.Cv * V;
  r.D_ff = Matrix::Zero(sys.n_outputs(), sys.n_inputs());
  return r;
}

}  // namespace mor
