// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/systems/sparse_model.hpp"

#include "src/core/errors.hpp"

namespace mor {

SparseSecondOrderModel::SparseSecondOrderModel(SecondOrderSystem sys) : sys_(std::move(sys)) {
  validate(sys_);
  sys_.M.makeCompressed();
  sys_.D.makeCompressed();
  sys_.K.makeCompressed();
  // M = m I: exactly n stored entries, all on the diagonal and equal.
  const Index n = sys_.n();
  if (sys_.M.nonZeros() == n) {
    const double m0 = sys_.M.coeff(0, 0);
    bool uniform = m0 > 0.0;
    for (Index j = 0; j < n && uniform; ++j) {
      SparseMatrix::InnerIterator it(sys_.M, j);
      uniform = it && it.row() == j && it.value() == m0;
    }
    if (uniform) uniform_mass_ = m0;
  }
}

SparseSecondOrderModel::Workspace::Workspace(const SparseSecondOrderModel& model,
                                             SparseBackend backend)
    : model_(model),
      mass_solver_(make_sparse_solver(backend)),
      iteration_solver_(make_sparse_solver(backend)) {
  mass_solver_->analyze_pattern(model.sys_.M);
  mass_solver_->factorize(model.sys_.M);
}

void SparseSecondOrderModel::Workspace::solve_mass(const Vector& r, Vector& x) {
  mass_solver_->solve(r, x);
}

void SparseSecondOrderModel::Workspace::factorize_iteration(double a, double b, double c,
                                                            const Vector&) {
  if (a == a_ && b == b_ && c == c_) return;
  const auto& s = model_.sys_;
  // The sum keeps the union pattern of M, D, K whatever the coefficients, so the symbolic
  // analysis of the first call serves every later one.
  SparseMatrix S = a * s.M + b * s.D + c * s.K;
  S.makeCompressed();
  if (!analysed_) {
    iteration_solver_->analyze_pattern(S);
    analysed_ = true;
  }
  iteration_solver_->factorize(S);
  ++factorizations_;
  a_ = a;
  b_ = b;
  c_ = c;
}

void SparseSecondOrderModel::Workspace::solve_iteration(const Vector& r, Vector& x) {
  iteration_solver_->solve(r, x);
}

}  // namespace mor
