// SPDX-License-Identifier: GPL-3.0-or-later
// The parametric projected model: one reduced nonlinear second-order model over a parameter
// domain, evaluated at any parameter at a cost independent of N.
//
// Full model (src/systems/parametric.hpp, ParametricNetwork):
//   M(mu) q'' + D(mu) q' + K(mu) q + theta_f(mu) G^T phi_1(G q) = B u,   y = Cp q + Cv q',
//   X(mu) = sum_i theta_i(mu) X_i  (X = M, D, K).
// With one pair of bases V, W for the whole domain (POD of snapshots at several parameters) and
// the force's hyper-reduction trained on forces at those parameters:
//   M_r(mu) = sum_i theta_i(mu) W^T M_i V   (r x r terms formed once, offline),
//   g_r(mu; q_r) = theta_f(mu) / theta_f(mu_ref) g_r(mu_ref; q_r),
// g_r(mu_ref; .) the reference model's reduced force (DEIM, ECSW, the cubic stencil's tensor or
// DEIM: every one linear in the law's coefficient). at(mu) costs O(terms r^2 + r k), k the
// force's sampled rows (ProjectedModel::reparametrised); nothing of size N is formed or copied
// (V and W are shared), except by the full treatment, whose online cost is O(N) anyway.
#pragma once

#include "reduction/projected_model.hpp"
#include "src/systems/parametric.hpp"

namespace mor {

class ParametricProjectedModel {
 public:
  /// reference: the projection (V, W, options) of net.at(mu_ref); mu_ref in domain, with
  /// theta_f(mu_ref) != 0 if the force is nonlinear. Projects each affine term of net: O(nnz(X_i)
  /// r + N r^2) each.
  /// @throws InvalidArgument naming the value if mu_ref is outside the domain, theta_f(mu_ref) is
  ///         0 for a nonlinear force, or net's size differs from the reference's.
  ParametricProjectedModel(ParameterDomain domain, ProjectedModel reference, const Vector& mu_ref,
                           const ParametricNetwork& net);
  ParametricProjectedModel(ParametricProjectedModel&&) noexcept = default;
  ParametricProjectedModel& operator=(ParametricProjectedModel&&) noexcept = default;

  /// The reduced model at mu, O(terms r^2 + r k).
  /// @throws InvalidArgument naming the parameter, its value and its range if mu is outside the
  ///         domain (or of the wrong size).
  ProjectedModel at(const Vector& mu) const;

  const ParameterDomain& domain() const { return domain_; }
  Index n() const { return reference_.n(); }
  /// The reduced affine terms W^T X_i V with their coefficients (for export and the record).
  const AffineOperator<Matrix>& M_r() const { return M_r_; }
  const AffineOperator<Matrix>& D_r() const { return D_r_; }
  const AffineOperator<Matrix>& K_r() const { return K_r_; }
  /// theta_f; the reference model's force is that at theta_f(mu_ref).
  const AffineCoefficient& force_coefficient() const { return force_; }
  const ProjectedModel& reference() const { return reference_; }
  const Vector& reference_point() const { return mu_ref_; }

 private:
  ParameterDomain domain_;
  ProjectedModel reference_;
  Vector mu_ref_;
  AffineOperator<Matrix> M_r_, D_r_, K_r_;
  AffineCoefficient force_;
  double force_ref_ = 1.0;
};

}  // namespace mor
