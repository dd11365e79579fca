// SPDX-License-Identifier: GPL-3.0-or-later
// The projected nonlinear network (src/systems/nonlinear_network.hpp) as an integrator model
// (src/integrators/second_order_model.hpp), its force G^T phi(G q) evaluated in full or
// hyper-reduced through the network's restricted evaluation, for any network.
//
// Full model:  M q'' + D q' + K q + G^T phi(G q) = B u,  y = Cp q + Cv q'  (n coordinates, m_e
// elements). With q ~ V q_r and the residual orthogonal to range(W) (W = V: Galerkin):
//   M_r = W^T M V, D_r, K_r likewise, B_r = W^T B, Cp_r = Cp V, Cv_r = Cv V,
//   g_r(q_r) = W^T G^T phi(G V q_r).
// Every treatment evaluates g_r in the same form, from k element rows E = (G V)_S (k x r) of a
// set S of elements, their coefficients, and an r x k matrix P fixed offline:
//     g_r(q_r) = P phi(E q_r),       dg_r/dq_r = P diag(phi'(E q_r)) E;
// evaluation O(k r), Jacobian O(k r^2), independent of n once k is:
//  - full:     S every element, P = (G W)^T: exact, k = m_e (the baseline whose cost grows with n).
//  - nodes:    DEIM / Q-DEIM of the nodal force g (Chaturantabut & Sorensen 2010; U: n x m
//              orthonormal, rows p_1..p_m): g ~ U (P^T U)^{-1} g_p, g_p = A phi((G q)_S) with
//              S the elements in the support of the rows p (NonlinearNetwork::restricted_rows),
//              A = G^T(p, S); P = W^T U (P^T U)^{-1} A. The chain's behaviour and the default.
//  - elements: DEIM / Q-DEIM of the element forces f = phi(G q) (m_e), unassembled as in UDEIM
//              (Tiso & Rixen 2013): f ~ U (P^T U)^{-1} f_S with S the sampled elements;
//              P = (G W)^T U (P^T U)^{-1}. Each sample costs one element, not a node's support.
//  - ecsw:     energy-conserving sampling and weighting (Farhat et al. 2014, 2015;
//              reduction/ecsw.hpp): S the elements of positive weight w, P = (G W)_S^T diag(w).
//              With W = V the reduced force is the gradient of sum_{e in S} w_e Phi_e(E_e q_r):
//              a symmetric Jacobian and, under implicit midpoint, the discrete energy balance.
// Exact when the sampled force lies in range(U) (e.g. m = n nodes, or m = m_e elements).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <Eigen/LU>

#include "reduction/deim.hpp"
#include "reduction/ecsw.hpp"
#include "reduction/reduced_workspace.hpp"
#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// What the DEIM samples of a network are.
enum class DeimSampling {
  nodes,     ///< rows of G^T phi(G q), each with the elements in its support (the default)
  elements,  ///< rows of phi(G q), unassembled (UDEIM)
};
/// "nodes", "elements"; @throws InvalidArgument naming the value.
DeimSampling parse_deim_sampling(std::string_view name);
std::string_view to_string(DeimSampling s);

struct ReducedNetworkOptions {
  /// No DEIM result: the full (exact) evaluation of every element.
  const DeimResult* deim = nullptr;  ///< read during construction only
  /// What deim's basis interpolates: the nodal force (n rows) or the element forces (m_e rows).
  DeimSampling sampling = DeimSampling::nodes;
  /// ECSW's elements and weights instead of DEIM (not both): read during construction only.
  const EcswResult* ecsw = nullptr;
};

class ReducedNetworkModel {
 public:
  /// network: read during construction only; V: n x r, 1 <= r <= n, finite; W: n x r or empty
  /// (Galerkin); W^T V nonsingular.
  /// @throws InvalidArgument naming the value for wrong sizes, non-finite entries, a singular
  ///         W^T V, a DEIM result whose basis has the wrong row count or bad indices, an ECSW
  ///         result with bad or repeated elements or weights that are not positive and finite,
  ///         or both a DEIM and an ECSW result.
  ReducedNetworkModel(const NonlinearNetwork& network, const Matrix& V, const Matrix& W = Matrix(),
                      const ReducedNetworkOptions& options = {});

  // --- SecondOrderModel -----------------------------------------------------------------------
  Index n() const { return r_; }
  Index n_inputs() const { return B_r_.cols(); }
  Index n_outputs() const { return Cp_r_.rows(); }
  bool is_linear() const { return linear_; }
  template <class Q, class Vq>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v, const Vector& u,
             Vector& F) const;
  void output(const Vector& q, const Vector& v, Vector& y) const {
    y.noalias() = Cp_r_ * q;
    y.noalias() += Cv_r_ * v;
  }
  void mass(const Vector& x, Vector& out) const { out.noalias() = M_r_ * x; }
  std::optional<double> uniform_mass() const { return uniform_mass_; }
  static constexpr double kUniformMassTolerance = 1e-12;

  // --- The reduced nonlinearity ---------------------------------------------------------------
  void nonlinear_force(const Eigen::Ref<const Vector>& q_r, Vector& g_r) const;
  Matrix nonlinear_jacobian(const Eigen::Ref<const Vector>& q_r) const;
  /// S += c dg_r/dq_r (q_r) (S: r x r); scratch (k x r) is resized as needed and reused.
  void add_nonlinear_jacobian(const Vector& q_r, double c, Matrix& S, Matrix& scratch) const;
  /// k, the elements evaluated online (every element for the full treatment).
  Index sampled_elements() const { return E_.rows(); }
  /// m, the DEIM samples (0 for the full treatment).
  Index deim_samples() const { return deim_samples_; }
  /// True if g_r is the gradient of a reduced energy (Galerkin with the full treatment or
  /// ECSW): then nonlinear_energy is defined.
  bool has_nonlinear_energy() const { return linear_ || energy_weights_.size() == E_.rows(); }
  /// sum_e w_e Phi_e(E_e q_r) (w = 1 for the full treatment), the potential whose gradient is
  /// g_r. @throws InvalidArgument if !has_nonlinear_energy() or q_r.size() != r.
  double nonlinear_energy(const Eigen::Ref<const Vector>& q_r) const;

  // --- States and matrices (as ReducedChainModel) ------------------------------------------------
  Index full_size() const { return n_full_; }
  Vector lift(const Eigen::Ref<const Vector>& q_r) const { return V_ * q_r; }
  /// (W^T V)^{-1} W^T q. @throws InvalidArgument if q.size() != n.
  Vector project(const Eigen::Ref<const Vector>& q) const;
  const Matrix& M_r() const { return M_r_; }
  const Matrix& D_r() const { return D_r_; }
  const Matrix& K_r() const { return K_r_; }
  const Matrix& B_r() const { return B_r_; }
  const Matrix& Cp_r() const { return Cp_r_; }
  const Matrix& Cv_r() const { return Cv_r_; }
  const Matrix& V() const { return V_; }
  const Matrix& W() const { return galerkin_ ? V_ : W_; }

  /// Dense LU of the r x r iteration matrices (reduction/reduced_workspace.hpp).
  using Workspace = DenseReducedWorkspace<ReducedNetworkModel>;
  static constexpr const char* kWhat = "reduced network";

 private:
  /// E_, C_, P_ of a nonlinear network (the constructor's last part).
  void build_nonlinearity(const NonlinearNetwork& net, const ReducedNetworkOptions& options);

  Index n_full_, r_;
  bool galerkin_, linear_;
  Matrix V_, W_;
  Eigen::PartialPivLU<Matrix> WtV_lu_;
  Matrix M_r_, D_r_, K_r_, B_r_, Cp_r_, Cv_r_;
  std::optional<double> uniform_mass_;
  Matrix E_;    // k x r: rows of G V of the elements evaluated online
  Matrix C_;    // k x 4: their coefficients
  Matrix P_;    // r x k: the offline assembly and interpolation
  Matrix DKP_;  // [D_r K_r P]: r x (2 r + k), the force's one product
  Index deim_samples_ = 0;
  Vector energy_weights_;  // k: the weights of a gradient treatment, else empty
};

// ---------------------------------------------------------------------------------------------

template <class Q, class Vq>
void ReducedNetworkModel::force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v,
                                const Vector& u, Vector& F) const {
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
  F.noalias() = B_r_ * u;
  F.noalias() -= DKP_ * z;
}

}  // namespace mor
