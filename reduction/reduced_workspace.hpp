// SPDX-License-Identifier: GPL-3.0-or-later
// The integrator workspace of the projected second-order models (reduction/reduced_chain.hpp,
// reduction/reduced_network.hpp): dense LUs of M_r and of the r x r iteration matrices
// S = a M_r + b D_r + c (K_r + dg_r/dq_r), as src/integrators/integrate.hpp asks of a workspace.
//
// The reduced step is a few products of matrices of 20 to 100 rows, where allocations, repeated
// passes and triangular solves cost as much as the flops: S is built in preallocated storage,
// LU-factorized and explicitly inverted once per factorization (r^3 flops, reused over the
// Newton iterations and, with reuse_jacobian, the steps that keep it), so that each Newton
// solve is one r x r product; and the models' force evaluations keep their scratch in
// SmallScratch, on the stack.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <memory>

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

/// n doubles of scratch for one call: on the stack up to kInline (4 KiB), on the heap beyond,
/// so that a reduced force evaluation of moderate size allocates nothing and stays reentrant
/// (the models are constant and may be shared between threads).
class SmallScratch {
 public:
  static constexpr Index kInline = 512;
  explicit SmallScratch(Index n) {
    if (n > kInline) heap_ = std::make_unique<double[]>(static_cast<std::size_t>(n));
    data_ = heap_ ? heap_.get() : inline_.data();
  }
  SmallScratch(const SmallScratch&) = delete;
  SmallScratch& operator=(const SmallScratch&) = delete;
  /// The n doubles from offset on, as an Eigen vector (uninitialized).
  Eigen::Map<Vector> vector(Index offset, Index n) { return {data_ + offset, n}; }

 private:
  alignas(64) std::array<double, kInline> inline_;
  std::unique_ptr<double[]> heap_;
  double* data_;
};

/// Model offers M_r(), D_r(), K_r() (r x r), is_linear(), uniform_mass() (std::optional<double>),
/// add_nonlinear_jacobian(q_r, c, S, scratch) (S += c dg_r/dq_r(q_r), scratch a Matrix it may
/// resize) and `static constexpr const char* kWhat` naming it in messages.
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
    if (a != part_a_ || b != part_b_ || c != part_c_) {
      linear_part_ = a * model_.M_r() + b * model_.D_r() + c * model_.K_r();
      part_a_ = a;
      part_b_ = b;
      part_c_ = c;
    }
    S_ = linear_part_;
    if (!linear) model_.add_nonlinear_jacobian(q, c, S_, jacobian_scratch_);
    iteration_lu_.compute(S_);
    inverse_ = iteration_lu_.inverse();
    // The exact 1-norm condition number from the inverse (a NaN or Inf from a zero pivot fails
    // the test), and the pivot ratio, as lu_reciprocal_condition does.
    const auto pivots = iteration_lu_.matrixLU().diagonal().cwiseAbs();
    const double rcond = std::min(1.0 / (S_.cwiseAbs().colwise().sum().maxCoeff() *
                                         inverse_.cwiseAbs().colwise().sum().maxCoeff()),
                                  pivots.minCoeff() / pivots.maxCoeff());
    if (!(rcond > kReducedSingularRcond))
      throw NumericalError(detail::concat(
          Model::kWhat, ": the iteration matrix a M_r + b D_r + c (K_r + dg_r/dq_r) with a = ", a,
          ", b = ", b, ", c = ", c, " is singular (reciprocal condition number ", rcond, ")"));
    ++factorizations_;
    a_ = a;
    b_ = b;
    c_ = c;
  }
  /// x = S^{-1} r by the explicit inverse: one r x r product.
  void solve_iteration(const Vector& r, Vector& x) const {
    x.resize(inverse_.rows());
    x.noalias() = inverse_ * r;
  }
  Index factorizations() const { return factorizations_; }

 private:
  const Model& model_;
  Eigen::PartialPivLU<Matrix> mass_lu_, iteration_lu_;
  Matrix linear_part_, S_, inverse_, jacobian_scratch_;
  double a_ = -1, b_ = -1, c_ = -1;                 // of the last factorization
  double part_a_ = -1, part_b_ = -1, part_c_ = -1;  // of linear_part_
  Index factorizations_ = 0;
};

}  // namespace mor
