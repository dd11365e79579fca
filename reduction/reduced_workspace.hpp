// SPDX-License-Identifier: GPL-3.0-or-later
// The integrator workspace of the projected second-order models (reduction/reduced_chain.hpp,
// reduction/reduced_network.hpp): dense LUs of M_r and of the r x r iteration matrices
// S = a M_r + b D_r + c (K_r + dg_r/dq_r), as src/integrators/integrate.hpp asks of a workspace.
#pragma once

#include <algorithm>
#include <limits>

#include <Eigen/LU>

#include "src/core/errors.hpp"
#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor {

/// The reciprocal condition number of an LU-factorized matrix as in src/systems/dense_model.cpp:
/// PartialPivLU never reports failure and its rcond() estimate is 1 for an exactly zero pivot,
/// so the smaller of the estimate and the pivot ratio.
inline double lu_reciprocal_condition(const Eigen::PartialPivLU<Matrix>& lu) {
  const Vector pivots = lu.matrixLU().diagonal().cwiseAbs();
  return std::min(lu.rcond(), pivots.minCoeff() / pivots.maxCoeff());
}

/// Below this reciprocal condition number a reduced matrix counts as singular.
inline constexpr double kReducedSingularRcond = 1e2 * std::numeric_limits<double>::epsilon();

/// Model offers M_r(), D_r(), K_r() (r x r), is_linear(), uniform_mass() (std::optional<double>),
/// nonlinear_jacobian(q_r) (r x r) and `static constexpr const char* kWhat` naming it in messages.
/// The model must outlive the workspace.
template <class Model>
class DenseReducedWorkspace {
 public:
  /// The backend argument is accepted for interface parity and ignored: dense LU is used.
  /// @throws NumericalError if M_r is numerically singular.
  explicit DenseReducedWorkspace(const Model& model, SparseBackend = SparseBackend::umfpack)
      : model_(model), mass_lu_(model.M_r()) {
    const double rcond = lu_reciprocal_condition(mass_lu_);
    if (!(rcond > kReducedSingularRcond))
      throw NumericalError(detail::concat(Model::kWhat,
                                          ": M_r = W^T M V is singular (reciprocal condition "
                                          "number ",
                                          rcond, ")"));
  }
  /// x = M_r^{-1} r (a division for a uniform mass).
  void solve_mass(const Vector& r, Vector& x) const {
    if (const auto m = model_.uniform_mass())
      x = r / *m;
    else
      x = mass_lu_.solve(r);
  }
  /// S = a M_r + b D_r + c (K_r + dg_r/dq_r(q)), LU-factorized; skipped for a linear model with
  /// unchanged (a, b, c). @throws NumericalError if S is numerically singular.
  void factorize_iteration(double a, double b, double c, const Vector& q) {
    const bool linear = model_.is_linear();
    if (linear && a == a_ && b == b_ && c == c_) return;
    Matrix S = a * model_.M_r() + b * model_.D_r() + c * model_.K_r();
    if (!linear) S.noalias() += c * model_.nonlinear_jacobian(q);
    iteration_lu_.compute(S);
    const double rcond = lu_reciprocal_condition(iteration_lu_);
    if (!(rcond > kReducedSingularRcond))
      throw NumericalError(detail::concat(
          Model::kWhat, ": the iteration matrix a M_r + b D_r + c (K_r + dg_r/dq_r) with a = ", a,
          ", b = ", b, ", c = ", c, " is singular (reciprocal condition number ", rcond, ")"));
    ++factorizations_;
    a_ = a;
    b_ = b;
    c_ = c;
  }
  void solve_iteration(const Vector& r, Vector& x) const { x = iteration_lu_.solve(r); }
  Index factorizations() const { return factorizations_; }

 private:
  const Model& model_;
  Eigen::PartialPivLU<Matrix> mass_lu_, iteration_lu_;
  double a_ = -1, b_ = -1, c_ = -1;
  Index factorizations_ = 0;
};

}  // namespace mor
