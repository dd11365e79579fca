// SPDX-License-Identifier: GPL-3.0-or-later
// The integrator workspace of the projected second-order model (reduction/projected_model.hpp):
// dense LUs of M_r and of the r x r iteration matrices
// S = a M_r + b D_r + c (K_r + dg_r/dq_r), as src/integrators/integrate.hpp asks of a workspace.
//
// The reduced step is a few products of matrices of 20 to 100 rows, where allocations, repeated
// passes and triangular solves cost as much as the flops: S is built in preallocated storage,
// LU-factorized and explicitly inverted once per factorization (r^3 flops, reused over the
// Newton iterations and, with reuse_jacobian, the steps that keep it), so that each Newton
// solve is one r x r product; and the force evaluations keep their scratch in
// SmallScratch, on the stack.
//
// Implicit midpoint folds S^{-1} further (FoldedMidpointModel, src/integrators/
// second_order_model.hpp) for a model whose nonlinear force is stacked, g_r(q) = P law(E q)
// with E (k x r) and P (r x l) fixed (StackedNonlinearity: the cubic stencil's DEIM rows,
// reduction/cubic_stencil_force.hpp). Its residual is affine in x but for the law,
//   R(x) = S0 x + (S0 - 2 M_r) v + h K_r q - h B_r u + h P law(E q_s),
//   S0 = M_r + h/2 D_r + h^2/4 K_r,  q_s = q + h/4 (v + x),
// so the Newton correction S^{-1} R(x) is, with the r x (r + l) matrix [S^{-1} S0, h S^{-1} P]
// and the r x (2 r + n_u) matrix [S^{-1} (S0 - 2 M_r), h S^{-1} K_r, -h S^{-1} B_r] formed once
// per factorization:
//   once per step:        d = [S^{-1} (S0 - 2 M_r), h S^{-1} K_r, -h S^{-1} B_r] [v; q; u]
//   per Newton iteration: S^{-1} R(x) = [S^{-1} S0, h S^{-1} P] [x; law(E q_s)] + d.
// Per iteration that is two products (k r + r (r + l) multiply-adds) where force and solve take
// three (k r + r (2 r + n_u + l) + r^2): for r = 20, k = 2 l = 76 about 24% fewer, and
// 16% per step of three iterations with d. S^{-1} S0 is not I: S holds the lagged Jacobian.
// The three products run on SmallMatrix (src/linalg/small_gemv.hpp), whose independent
// accumulators take about half the time of Eigen's latency-bound GEMV at these sizes.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <optional>

#include <Eigen/LU>

#include "src/core/errors.hpp"
#include "src/core/types.hpp"
#include "src/linalg/small_gemv.hpp"
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

/// mu if the reduced mass matrix M_r (r x r) is mu I to `tolerance` (relative, max norm), e.g.
/// for M = m I and an orthonormal V = W (mu = m); else nullopt. Lets a workspace skip the mass
/// solve.
inline std::optional<double> uniform_mass_of(const Matrix& M_r, double tolerance) {
  const Index r = M_r.rows();
  const double mu = M_r.trace() / static_cast<double>(r);
  const double deviation = (M_r - mu * Matrix::Identity(r, r)).cwiseAbs().maxCoeff();
  if (mu > 0.0 && deviation <= tolerance * mu) return mu;
  return std::nullopt;
}

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

/// A model whose reduced nonlinear force is g_r(q) = stacked_weights() law(stacked_rows() q):
/// stacked_rows() E (k x r), stacked_weights() P (r x l), stacked_law(e, out) out = law(e)
/// (e: size k, out: size l, both Eigen::Ref), and stacked_nonlinearity() true when that form holds
/// for this instance (it may hold for some treatments only); and B_r() (r x n_u).
template <class Model>
concept StackedNonlinearity = requires(const Model& model, const Eigen::Ref<const Vector>& e,
                                       Eigen::Ref<Vector> out) {
  { model.stacked_nonlinearity() } -> std::convertible_to<bool>;
  { model.stacked_rows() } -> std::convertible_to<const Matrix&>;
  { model.stacked_weights() } -> std::convertible_to<const Matrix&>;
  { model.B_r() } -> std::convertible_to<const Matrix&>;
  model.stacked_law(e, out);
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

  // --- Folded implicit midpoint (see the file comment) ----------------------------------------
  /// True if the model's nonlinear force is stacked and nonzero (a linear model needs one solve
  /// per step, which the plain path already does).
  bool midpoint_folded() const {
    if constexpr (StackedNonlinearity<Model>)
      return !model_.is_linear() && model_.stacked_nonlinearity();
    else
      return false;
  }
  /// Forms the folded matrices if the factorization or h changed since they were formed, then
  /// d and q + h/4 v for this step. Requires midpoint_folded() and a factorization.
  void midpoint_prepare(double h, const Vector& q, const Vector& v, const Vector& u) {
    if constexpr (StackedNonlinearity<Model>) {
      if (folded_at_ != factorizations_ || h != folded_h_) fold(h);
      const Index r = inverse_.rows(), nu = u.size();
      qvu_.head(r) = v;
      qvu_.segment(r, r) = q;
      qvu_.tail(nu) = u;
      step_part_.multiply(qvu_.data(), d_.data());
      q0_ = q + (0.25 * h) * v;
    } else {
      require(false, Model::kWhat, ": no folded midpoint correction");
    }
  }
  /// delta = S^{-1} R(x) = [S^{-1} S0, h S^{-1} P] [x; law(E q_s)] + d, q_s = q + h/4 (v + x).
  void midpoint_correction(const Vector& x, Vector& delta) {
    if constexpr (StackedNonlinearity<Model>) {
      const Index r = inverse_.rows();
      qs_ = q0_ + (0.25 * folded_h_) * x;
      rows_.multiply(qs_.data(), e_.data());
      z_.head(r) = x;
      model_.stacked_law(e_.head(rows_.rows()), z_.tail(z_.size() - r));
      iteration_part_.multiply(z_.data(), y_.data(), d_.data());
      delta = y_.head(r);
    } else {
      require(false, Model::kWhat, ": no folded midpoint correction");
    }
  }

 private:
  /// The folded matrices of the current inverse for step h (see the file comment).
  void fold(double h) {
    const Matrix& M = model_.M_r();
    const Matrix& P = model_.stacked_weights();
    const Matrix& B = model_.B_r();
    const Index r = inverse_.rows(), l = P.cols(), nu = B.cols();
    S0_ = M + (0.5 * h) * model_.D_r() + (0.25 * h * h) * model_.K_r();
    fold_.resize(r, r + l);
    fold_.leftCols(r).noalias() = inverse_ * S0_;
    fold_.rightCols(l).noalias() = h * (inverse_ * P);
    iteration_part_.assign(fold_);
    fold_.resize(r, 2 * r + nu);
    fold_.leftCols(r).noalias() = inverse_ * S0_;
    fold_.leftCols(r).noalias() -= 2.0 * (inverse_ * M);
    fold_.middleCols(r, r).noalias() = h * (inverse_ * model_.K_r());
    fold_.rightCols(nu).noalias() = -h * (inverse_ * B);
    step_part_.assign(fold_);
    if (rows_.cols() == 0) rows_.assign(model_.stacked_rows());
    qvu_.resize(2 * r + nu);
    d_.resize(iteration_part_.padded_rows());
    y_.resize(iteration_part_.padded_rows());
    q0_.resize(r);
    qs_.resize(r);
    e_.resize(rows_.padded_rows());
    z_.resize(r + l);
    folded_at_ = factorizations_;
    folded_h_ = h;
  }

  const Model& model_;
  Eigen::PartialPivLU<Matrix> mass_lu_, iteration_lu_;
  Matrix linear_part_, S_, inverse_, jacobian_scratch_;
  // Folded midpoint: E; [S^{-1} S0, h S^{-1} P]; [S^{-1} (S0 - 2 M_r), h S^{-1} K_r,
  // -h S^{-1} B_r], formed at factorization folded_at_ (-1: never) for step folded_h_; S0 and
  // the matrix they are formed in; the vectors of the step and the iteration (d_, e_, y_ padded).
  SmallMatrix rows_, iteration_part_, step_part_;
  Matrix S0_, fold_;
  Vector qvu_, d_, q0_, qs_, e_, z_, y_;
  Index folded_at_ = -1;
  double folded_h_ = 0.0;
  double a_ = -1, b_ = -1, c_ = -1;                 // of the last factorization
  double part_a_ = -1, part_b_ = -1, part_c_ = -1;  // of linear_part_
  Index factorizations_ = 0;
};

}  // namespace mor
