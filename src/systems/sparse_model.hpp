// SPDX-License-Identifier: GPL-3.0-or-later
// A linear second-order system as an integrator model (see src/integrators/second_order_model.hpp):
// forces by sparse matrix-vector products, iteration matrices factorized by a SuiteSparse
// backend. Serves any SecondOrderSystem, e.g. a linearised multibody model or the chain's
// exported linear part.
#pragma once

#include <memory>
#include <optional>

#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/systems/lti.hpp"

namespace mor {

class SparseSecondOrderModel {
 public:
  /// @throws InvalidArgument if the sizes of sys are inconsistent.
  explicit SparseSecondOrderModel(SecondOrderSystem sys);

  Index n() const { return sys_.n(); }
  Index n_inputs() const { return sys_.n_inputs(); }
  Index n_outputs() const { return sys_.n_outputs(); }
  bool is_linear() const { return true; }
  const SecondOrderSystem& system() const { return sys_; }

  /// F = B u - D v - K q.
  template <class Q, class V>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
             Vector& F) const {
    F.noalias() = sys_.B * u;
    F.noalias() -= sys_.D * v;
    F.noalias() -= sys_.K * q;
  }
  void mass(const Vector& x, Vector& out) const { out.noalias() = sys_.M * x; }
  /// m if M = m I (detected at construction), else nullopt.
  std::optional<double> uniform_mass() const { return uniform_mass_; }
  void output(const Vector& q, const Vector& v, Vector& y) const {
    y.noalias() = sys_.Cp * q;
    y.noalias() += sys_.Cv * v;
  }

  class Workspace {
   public:
    /// backend factorizes M and the iteration matrices; an SPD backend needs symmetric M, D, K.
    Workspace(const SparseSecondOrderModel& model, SparseBackend backend);
    void solve_mass(const Vector& r, Vector& x);
    /// Refactorizes only when (a, b, c) change: the model is linear.
    void factorize_iteration(double a, double b, double c, const Vector& q);
    void solve_iteration(const Vector& r, Vector& x);
    Index factorizations() const { return factorizations_; }

   private:
    const SparseSecondOrderModel& model_;
    std::unique_ptr<SparseSolver> mass_solver_, iteration_solver_;
    double a_ = -1, b_ = -1, c_ = -1;
    bool analysed_ = false;
    Index factorizations_ = 0;
  };

 private:
  SecondOrderSystem sys_;
  std::optional<double> uniform_mass_;
};

}  // namespace mor
