// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/systems/dense_model.hpp"

#include <algorithm>
#include <limits>

#include "src/core/errors.hpp"

namespace mor {

namespace {
/// PartialPivLU never reports failure, and its rcond() estimate is 1 for an exactly zero pivot;
/// so both a tiny pivot ratio and a tiny reciprocal condition number count as singular.
void require_nonsingular(const Eigen::PartialPivLU<Matrix>& lu, const char* what) {
  const Vector pivots = lu.matrixLU().diagonal().cwiseAbs();
  const double eps = std::numeric_limits<double>::epsilon();
  const double rcond = std::min(lu.rcond(), pivots.minCoeff() / pivots.maxCoeff());
  if (!(rcond > 1e2 * eps))
    throw NumericalError(detail::concat("dense second-order model: ", what,
                                        " is singular (reciprocal condition number ", rcond, ")"));
}
}  // namespace

void validate(DenseSecondOrderSystem& s) {
  const Index n = s.M.rows();
  require(n >= 1 && s.M.cols() == n, "dense second-order system: M is ", s.M.rows(), "x",
          s.M.cols(), ", expected square and non-empty");
  auto square = [n](const Matrix& X, const char* name) {
    require(X.rows() == n && X.cols() == n, "dense second-order system: ", name, " is ", X.rows(),
            "x", X.cols(), ", expected ", n, "x", n);
  };
  square(s.D, "D");
  square(s.K, "K");
  require(s.B.rows() == n, "dense second-order system: B has ", s.B.rows(), " rows, expected ", n);
  require(s.Cp.cols() == n && s.Cv.cols() == n && s.Cp.rows() == s.Cv.rows(),
          "dense second-order system: Cp is ", s.Cp.rows(), "x", s.Cp.cols(), " and Cv is ",
          s.Cv.rows(), "x", s.Cv.cols(), ", expected p x ", n);
  if (s.D_ff.size() == 0) s.D_ff = Matrix::Zero(s.Cp.rows(), s.B.cols());
  require(s.D_ff.rows() == s.Cp.rows() && s.D_ff.cols() == s.B.cols(),
          "dense second-order system: D_ff is ", s.D_ff.rows(), "x", s.D_ff.cols(), ", expected ",
          s.Cp.rows(), "x", s.B.cols());
}

DenseSecondOrderSystem from_first_order(const Matrix& E, const Matrix& A, const Matrix& B,
                                        const Matrix& C, const Matrix& D_ff) {
  const Index r = A.rows();
  DenseSecondOrderSystem s;
  s.M = E.size() == 0 ? Matrix(Matrix::Identity(r, r)) : E;
  s.D = -A;
  s.K = Matrix::Zero(r, r);
  s.B = B;
  s.Cp = Matrix::Zero(C.rows(), r);
  s.Cv = C;
  s.D_ff = D_ff;
  validate(s);
  return s;
}

DenseSecondOrderModel::DenseSecondOrderModel(DenseSecondOrderSystem sys) : sys_(std::move(sys)) {
  validate(sys_);
}

DenseSecondOrderModel::Workspace::Workspace(const DenseSecondOrderModel& model, SparseBackend)
    : model_(model), mass_lu_(model.sys_.M) {
  require_nonsingular(mass_lu_, "M");
}

void DenseSecondOrderModel::Workspace::factorize_iteration(double a, double b, double c,
                                                           const Vector&) {
  if (a == a_ && b == b_ && c == c_) return;
  const auto& s = model_.sys_;
  iteration_lu_.compute(a * s.M + b * s.D + c * s.K);
  require_nonsingular(iteration_lu_, "the iteration matrix a M + b D + c K");
  a_ = a;
  b_ = b;
  c_ = c;
}

}  // namespace mor
