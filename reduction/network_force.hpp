// SPDX-License-Identifier: GPL-3.0-or-later
// The reduced force of a nonlinear network (src/systems/nonlinear_network.hpp), one of the force
// evaluators of the projected model (reduction/projected_model.hpp, which holds the projected
// linear part): G^T phi(G q) evaluated in full or hyper-reduced through the network's restricted
// evaluation, for any network.
//
// Full model:  M q'' + D q' + K q + G^T phi(G q) = B u,  y = Cp q + Cv q'  (n coordinates, m_e
// elements). With q ~ V q_r and the residual orthogonal to range(W) (W = V: Galerkin):
//   g_r(q_r) = W^T G^T phi(G V q_r).
// Every treatment evaluates g_r in the same form, from k element rows E = (G V)_S (k x r) of a
// set S of elements, their coefficients, and an r x k matrix P fixed offline:
//     g_r(q_r) = P phi(E q_r),       dg_r/dq_r = P diag(phi'(E q_r)) E;
// evaluation O(k r), Jacobian O(k r^2), independent of n once k is:
//  - full:     S every element, P = (G W)^T: exact, k = m_e (the baseline whose cost grows with n).
//  - deim, nodes:    DEIM / Q-DEIM of the nodal force g (Chaturantabut & Sorensen 2010; U: n x m
//              orthonormal, rows p_1..p_m): g ~ U (P^T U)^{-1} g_p, g_p = A phi((G q)_S) with
//              S the elements in the support of the rows p (NonlinearNetwork::restricted_rows),
//              A = G^T(p, S); P = W^T U (P^T U)^{-1} A. The default.
//  - deim, elements: DEIM / Q-DEIM of the element forces f = phi(G q) (m_e), unassembled as in
//              UDEIM (Tiso & Rixen 2013): f ~ U (P^T U)^{-1} f_S with S the sampled elements;
//              P = (G W)^T U (P^T U)^{-1}. Each sample costs one element, not a node's support.
//  - ecsw:     energy-conserving sampling and weighting (Farhat et al. 2014, 2015;
//              reduction/ecsw.hpp): S the elements of positive weight w, P = (G W)_S^T diag(w).
//              With W = V the reduced force is the gradient of sum_{e in S} w_e Phi_e(E_e q_r):
//              a symmetric Jacobian and, under implicit midpoint, the discrete energy balance.
// Exact when the sampled force lies in range(U) (e.g. m = n nodes, or m = m_e elements).
// The tensor treatment is a cubic stencil's (reduction/cubic_stencil_force.hpp): refused here
// for a nonlinear network.
#pragma once

#include "reduction/nonlinear_treatment.hpp"
#include "reduction/reduced_workspace.hpp"
#include "src/core/types.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

class NetworkForce {
 public:
  /// No force: a linear network.
  NetworkForce() = default;
  /// The cheap checks of o against net, before anything of size n r is formed.
  /// @throws InvalidArgument naming the value for: the tensor treatment of a nonlinear network,
  ///         a DEIM result missing, with a basis of the wrong row count (n for nodes, m_e for
  ///         elements) or inconsistent sizes, an ECSW result missing, with bad element counts or
  ///         weights that are not positive and finite, or both a DEIM and an ECSW result;
  ///         DEIM indices outside the rows or repeated (check_deim_result, reduction/deim.hpp).
  static void check(const NonlinearNetwork& net, const ProjectionOptions& o);
  /// V: n x r trial basis; W: n x r test basis (V for Galerkin, galerkin true); D_r, K_r the
  /// projected linear part (for the force's one product). Requires check(net, o) passed.
  /// @throws InvalidArgument for bad or repeated DEIM or ECSW element and node indices.
  NetworkForce(const NonlinearNetwork& net, const Matrix& V, const Matrix& W, bool galerkin,
               const ProjectionOptions& o, const Matrix& D_r, const Matrix& K_r);

  bool is_linear() const { return linear_; }
  /// The same force with every element law scaled by s (phi -> s phi) and D_r, K_r in its
  /// product (the projected model's reparametrised()): O(r^2 + k r).
  NetworkForce reparametrised(double s, const Matrix& D_r, const Matrix& K_r) const;
  /// F = B_r u - D_r v - K_r q - g_r(q) (see ProjectedModel::force).
  template <class Q, class Vq>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v, const Vector& u,
             const Matrix& B_r, Vector& F) const;
  /// g_r(q_r); q_r: size r.
  void nonlinear_force(const Eigen::Ref<const Vector>& q_r, Vector& g_r) const;
  /// dg_r/dq_r (q_r), r x r.
  Matrix nonlinear_jacobian(const Eigen::Ref<const Vector>& q_r) const;
  /// S += c dg_r/dq_r (q_r) (S: r x r); scratch (k x r) is resized as needed and reused.
  void add_nonlinear_jacobian(const Vector& q_r, double c, Matrix& S, Matrix& scratch) const;
  /// k, the elements evaluated online (every element for the full treatment).
  Index sampled_elements() const { return E_.rows(); }
  /// m, the DEIM samples (0 for the other treatments).
  Index deim_samples() const { return deim_samples_; }
  /// True if g_r is the gradient of a reduced energy (Galerkin with the full treatment or
  /// ECSW): then nonlinear_energy is defined.
  bool has_nonlinear_energy() const { return linear_ || energy_weights_.size() == E_.rows(); }
  /// sum_e w_e Phi_e(E_e q_r) (w = 1 for the full treatment), the potential whose gradient is
  /// g_r. @throws InvalidArgument if !has_nonlinear_energy() or q_r.size() != r.
  double nonlinear_energy(const Eigen::Ref<const Vector>& q_r) const;

 private:
  void assemble_product(const Matrix& D_r, const Matrix& K_r);  // DKP_

  Index r_ = 0;
  bool linear_ = true;
  Matrix E_;    // k x r: rows of G V of the elements evaluated online
  Matrix C_;    // k x 4: their coefficients
  Matrix P_;    // r x k: the offline assembly and interpolation
  Matrix DKP_;  // [D_r K_r P]: r x (2 r + k), the force's one product
  Index deim_samples_ = 0;
  Vector energy_weights_;  // k: the weights of a gradient treatment, else empty
};

// ---------------------------------------------------------------------------------------------

template <class Q, class Vq>
void NetworkForce::force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v,
                         const Vector& u, const Matrix& B_r, Vector& F) const {
  // z = [v; q; phi(E q)], each lazy expression evaluated once into it; then one product with
  // the stacked [D_r K_r P] (the last block absent for a linear model).
  const Index r = r_, k = linear_ ? 0 : E_.rows();
  SmallScratch scratch(2 * r + k);
  auto z = scratch.vector(0, 2 * r + k);
  z.head(r) = v;
  z.segment(r, r) = q;
  if (k > 0) {
    auto f = z.tail(k);
    f.noalias() = E_ * z.segment(r, r);
    for (Index e = 0; e < k; ++e) {
      const double c[4] = {C_(e, 0), C_(e, 1), C_(e, 2), C_(e, 3)};
      double dphi;
      element_law(c, f[e], f[e], dphi);
    }
  }
  F.resize(r);
  F.noalias() = B_r * u;
  F.noalias() -= DKP_ * z;
}

}  // namespace mor
