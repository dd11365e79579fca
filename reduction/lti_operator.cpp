// SPDX-License-Identifier: GPL-3.0-or-later
// The dense and error-system operators; the sparse ones are in sparse_lti_operator.cpp.
#include "reduction/lti_operator.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <limits>
#include <vector>

#include "src/core/errors.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

/// Solves (A + p E) X = R (or its plain transpose) densely; E empty means the identity.
template <class Scalar, class Rhs>
Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic> dense_shifted_solve(const Matrix& E,
                                                                          const Matrix& A, Scalar p,
                                                                          const Rhs& R,
                                                                          bool transpose) {
  using M = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  M S = A.cast<Scalar>();
  if (E.size() == 0)
    S.diagonal().array() += p;
  else
    S += p * E.cast<Scalar>();
  if (transpose) S.transposeInPlace();
  Eigen::PartialPivLU<M> lu(S);
  // PartialPivLU never reports failure, and its rcond() estimate is 1 for an exactly zero
  // pivot: a tiny pivot ratio counts as singular too.
  const Vector pivots = lu.matrixLU().diagonal().cwiseAbs();
  const double rcond = std::min(lu.rcond(), pivots.minCoeff() / pivots.maxCoeff());
  if (!(rcond > 1e3 * std::numeric_limits<double>::epsilon()))
    throw NumericalError(detail::concat("shifted matrix A + p E is singular for p = ", p,
                                        " (reciprocal condition number ", rcond, ")"));
  return lu.solve(R);
}

}  // namespace

DenseLtiOperator::DenseLtiOperator(Matrix E, Matrix A, Matrix B, Matrix C, Matrix D_ff)
    : E_(std::move(E)), A_(std::move(A)), B_(std::move(B)), C_(std::move(C)), D_(std::move(D_ff)) {
  const Index n = A_.rows();
  require(n >= 1 && A_.cols() == n, "dense system: A is ", A_.rows(), "x", A_.cols(),
          ", expected square and non-empty");
  require(E_.size() == 0 || (E_.rows() == n && E_.cols() == n), "dense system: E is ", E_.rows(),
          "x", E_.cols(), ", expected ", n, "x", n, " or empty (identity)");
  require(B_.rows() == n, "dense system: B has ", B_.rows(), " rows, expected ", n);
  require(C_.cols() == n, "dense system: C has ", C_.cols(), " columns, expected ", n);
  if (D_.size() == 0) D_ = Matrix::Zero(C_.rows(), B_.cols());
  require(D_.rows() == C_.rows() && D_.cols() == B_.cols(), "dense system: D is ", D_.rows(), "x",
          D_.cols(), ", expected ", C_.rows(), "x", B_.cols());
}

Matrix DenseLtiOperator::E() const {
  return E_.size() == 0 ? Matrix(Matrix::Identity(n(), n())) : E_;
}

ComplexVector DenseLtiOperator::poles() const {
  Matrix M = E_.size() == 0 ? A_ : Matrix(Eigen::PartialPivLU<Matrix>(E_).solve(A_));
  return lapack::eigenvalues(M);
}

void DenseLtiOperator::apply_A(const Matrix& X, Matrix& Y, bool transpose) const {
  if (transpose)
    Y.noalias() = A_.transpose() * X;
  else
    Y.noalias() = A_ * X;
}

void DenseLtiOperator::apply_E(const Matrix& X, Matrix& Y, bool transpose) const {
  if (E_.size() == 0)
    Y = X;
  else if (transpose)
    Y.noalias() = E_.transpose() * X;
  else
    Y.noalias() = E_ * X;
}

void DenseLtiOperator::solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose) {
  require(R.rows() == n(), "dense system: right-hand side has ", R.rows(), " rows, expected ", n());
  X = dense_shifted_solve<double>(E_, A_, p, R, transpose);
}

void DenseLtiOperator::solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                                     bool transpose) {
  require(R.rows() == n(), "dense system: right-hand side has ", R.rows(), " rows, expected ", n());
  X = dense_shifted_solve<Complex>(E_, A_, p, R, transpose);
}

bool DenseLtiOperator::shifted_residual_extended(Complex p, const ComplexMatrix& R,
                                                 const ComplexMatrix& X, ComplexMatrix& Res) const {
  using LC = std::complex<long double>;
  const Index n = A_.rows();
  require(R.rows() == n && X.rows() == n && R.cols() == X.cols(), "dense system: residual of a ",
          R.rows(), "x", R.cols(), " right-hand side and a ", X.rows(), "x", X.cols(),
          " solution, expected ", n, " rows each");
  const LC pl(p.real(), p.imag());
  Res.resize(n, R.cols());
  std::vector<LC> acc(static_cast<std::size_t>(n));
  for (Index j = 0; j < R.cols(); ++j) {
    for (Index i = 0; i < n; ++i) acc[i] = LC(R(i, j).real(), R(i, j).imag());
    for (Index k = 0; k < n; ++k) {
      const LC x(X(k, j).real(), X(k, j).imag());
      const LC px = pl * x;
      for (Index i = 0; i < n; ++i) {
        acc[i] -= static_cast<long double>(A_(i, k)) * x;
        if (E_.size() != 0) acc[i] -= static_cast<long double>(E_(i, k)) * px;
      }
      if (E_.size() == 0) acc[k] -= px;
    }
    for (Index i = 0; i < n; ++i)
      Res(i, j) = Complex(static_cast<double>(acc[i].real()), static_cast<double>(acc[i].imag()));
  }
  return true;
}

ErrorLtiOperator::ErrorLtiOperator(LtiOperator& full, LtiOperator& reduced)
    : full_(full), reduced_(reduced) {
  require(full.n_inputs() == reduced.n_inputs() && full.n_outputs() == reduced.n_outputs(),
          "error system: the full system has ", full.n_inputs(), " inputs and ", full.n_outputs(),
          " outputs, the reduced one ", reduced.n_inputs(), " and ", reduced.n_outputs());
  const Index n1 = full.n(), n2 = reduced.n();
  B_.resize(n1 + n2, full.n_inputs());
  B_.topRows(n1) = full.B();
  B_.bottomRows(n2) = reduced.B();
  C_.resize(full.n_outputs(), n1 + n2);
  C_.leftCols(n1) = full.C();
  C_.rightCols(n2) = -reduced.C();
  D_ = full.D_ff() - reduced.D_ff();
}

namespace {
/// Applies op1 to the top n1 rows and op2 to the bottom rows of X.
template <class Op1, class Op2>
void block_diagonal(const Matrix& X, Matrix& Y, Index n1, Op1&& op1, Op2&& op2) {
  Matrix y1, y2;
  op1(Matrix(X.topRows(n1)), y1);
  op2(Matrix(X.bottomRows(X.rows() - n1)), y2);
  Y.resize(X.rows(), X.cols());
  Y.topRows(n1) = y1;
  Y.bottomRows(X.rows() - n1) = y2;
}
}  // namespace

void ErrorLtiOperator::apply_A(const Matrix& X, Matrix& Y, bool transpose) const {
  block_diagonal(
      X, Y, full_.n(), [&](const Matrix& x, Matrix& y) { full_.apply_A(x, y, transpose); },
      [&](const Matrix& x, Matrix& y) { reduced_.apply_A(x, y, transpose); });
}

void ErrorLtiOperator::apply_E(const Matrix& X, Matrix& Y, bool transpose) const {
  block_diagonal(
      X, Y, full_.n(), [&](const Matrix& x, Matrix& y) { full_.apply_E(x, y, transpose); },
      [&](const Matrix& x, Matrix& y) { reduced_.apply_E(x, y, transpose); });
}

void ErrorLtiOperator::solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose) {
  const Index n1 = full_.n(), n2 = reduced_.n();
  require(R.rows() == n1 + n2, "error system: right-hand side has ", R.rows(), " rows, expected ",
          n1 + n2);
  Matrix x1, x2;
  full_.solve_shifted(p, Matrix(R.topRows(n1)), x1, transpose);
  reduced_.solve_shifted(p, Matrix(R.bottomRows(n2)), x2, transpose);
  X.resize(n1 + n2, R.cols());
  X.topRows(n1) = x1;
  X.bottomRows(n2) = x2;
}

void ErrorLtiOperator::solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                                     bool transpose) {
  const Index n1 = full_.n(), n2 = reduced_.n();
  require(R.rows() == n1 + n2, "error system: right-hand side has ", R.rows(), " rows, expected ",
          n1 + n2);
  ComplexMatrix x1, x2;
  full_.solve_shifted(p, ComplexMatrix(R.topRows(n1)), x1, transpose);
  reduced_.solve_shifted(p, ComplexMatrix(R.bottomRows(n2)), x2, transpose);
  X.resize(n1 + n2, R.cols());
  X.topRows(n1) = x1;
  X.bottomRows(n2) = x2;
}

bool ErrorLtiOperator::shifted_residual_extended(Complex p, const ComplexMatrix& R,
                                                 const ComplexMatrix& X, ComplexMatrix& Res) const {
  const Index n1 = full_.n(), n2 = reduced_.n();
  ComplexMatrix r1, r2;
  if (!full_.shifted_residual_extended(p, ComplexMatrix(R.topRows(n1)),
                                       ComplexMatrix(X.topRows(n1)), r1) ||
      !reduced_.shifted_residual_extended(p, ComplexMatrix(R.bottomRows(n2)),
                                          ComplexMatrix(X.bottomRows(n2)), r2))
    return false;
  Res.resize(n1 + n2, R.cols());
  Res.topRows(n1) = r1;
  Res.bottomRows(n2) = r2;
  return true;
}

DenseLtiOperator to_first_order(const DenseSecondOrderSystem& s) {
  const Index r = s.n();
  Matrix E = Matrix::Identity(2 * r, 2 * r), A = Matrix::Zero(2 * r, 2 * r);
  E.bottomRightCorner(r, r) = s.M;
  A.topRightCorner(r, r).setIdentity();
  A.bottomLeftCorner(r, r) = -s.K;
  A.bottomRightCorner(r, r) = -s.D;
  Matrix B = Matrix::Zero(2 * r, s.n_inputs()), C(s.n_outputs(), 2 * r);
  B.bottomRows(r) = s.B;
  C << s.Cp, s.Cv;
  return DenseLtiOperator(std::move(E), std::move(A), std::move(B), std::move(C), s.D_ff);
}

Matrix dense_E(const LtiOperator& sys) {
  Matrix E;
  sys.apply_E(Matrix::Identity(sys.n(), sys.n()), E);
  return E;
}

Matrix dense_A(const LtiOperator& sys) {
  Matrix A;
  sys.apply_A(Matrix::Identity(sys.n(), sys.n()), A);
  return A;
}

}  // namespace mor
