// SPDX-License-Identifier: GPL-3.0-or-later
// A small dense linear second-order system as an integrator model (see
// src/integrators/second_order_model.hpp): the reduced models of balanced truncation and POD
// run through the same integrators as the full sparse model.
//
// A first-order reduced model E_r x' = A_r x + B_r u, y = C_r x + D_r u is embedded exactly as
//     M = E_r, D = -A_r, K = 0, B = B_r, C_p = 0, C_v = C_r   with  x = q'
// (from_first_order): the velocity equation is the first-order system itself, so RK4 and the
// implicit midpoint rule act on x exactly as they would on the first-order form.
#pragma once

#include <optional>

#include <Eigen/LU>

#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor {

/// M q'' + D q' + K q = B u,  y = Cp q + Cv q' + D_ff u, dense. Sizes: M, D, K r x r; B r x m;
/// Cp, Cv p x r; D_ff p x m. M must be nonsingular; M, D, K need not be symmetric.
struct DenseSecondOrderSystem {
  Matrix M, D, K, B, Cp, Cv, D_ff;

  Index n() const { return M.rows(); }
  Index n_inputs() const { return B.cols(); }
  Index n_outputs() const { return Cp.rows(); }
};

/// Checks sizes; fills an empty D_ff with zeros. @throws InvalidArgument naming the mismatch.
void validate(DenseSecondOrderSystem& sys);

/// The exact second-order embedding of E x' = A x + B u, y = C x + D_ff u (see the file comment).
/// E empty means the identity.
DenseSecondOrderSystem from_first_order(const Matrix& E, const Matrix& A, const Matrix& B,
                                        const Matrix& C, const Matrix& D_ff = Matrix());

class DenseSecondOrderModel {
 public:
  /// @throws InvalidArgument if the sizes are inconsistent.
  explicit DenseSecondOrderModel(DenseSecondOrderSystem sys);

  Index n() const { return sys_.n(); }
  Index n_inputs() const { return sys_.n_inputs(); }
  Index n_outputs() const { return sys_.n_outputs(); }
  bool is_linear() const { return true; }
  const DenseSecondOrderSystem& system() const { return sys_; }

  /// F = B u - D v - K q.
  template <class Q, class V>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
             Vector& F) const {
    F.noalias() = sys_.B * u;
    F.noalias() -= sys_.D * v;
    F.noalias() -= sys_.K * q;
  }
  void mass(const Vector& x, Vector& out) const { out.noalias() = sys_.M * x; }
  std::optional<double> uniform_mass() const { return std::nullopt; }
  /// y = Cp q + Cv v (the feed-through D_ff u is added by callers that have u).
  void output(const Vector& q, const Vector& v, Vector& y) const {
    y.noalias() = sys_.Cp * q;
    y.noalias() += sys_.Cv * v;
  }

  class Workspace {
   public:
    /// The backend argument is accepted for interface parity and ignored: dense LU is used.
    explicit Workspace(const DenseSecondOrderModel& model,
                       SparseBackend backend = SparseBackend::umfpack);
    void solve_mass(const Vector& r, Vector& x) { x = mass_lu_.solve(r); }
    /// S = a M + b D + c K, refactorized only when (a, b, c) change.
    /// @throws NumericalError if S is numerically singular.
    void factorize_iteration(double a, double b, double c, const Vector& q);
    void solve_iteration(const Vector& r, Vector& x) { x = iteration_lu_.solve(r); }

   private:
    const DenseSecondOrderModel& model_;
    Eigen::PartialPivLU<Matrix> mass_lu_, iteration_lu_;
    double a_ = -1, b_ = -1, c_ = -1;
  };

 private:
  DenseSecondOrderSystem sys_;
};

}  // namespace mor
