// SPDX-License-Identifier: GPL-3.0-or-later
// The reduced force of a nearest-neighbour cubic spring stencil on a path with walls, one of
// the force evaluators of the projected model (reduction/projected_model.hpp, which holds the
// projected linear part): the fast path of the nonlinear mass-spring chain
// (models/mass_spring_chain.hpp), whose network form (reduction/network_force.hpp) gives the same
// force through general element kernels, more slowly.
//
// Force (mechanical convention, M q'' + D q' + K q + g(q) = B u):
//   g(q) = k_n Delta^T (Delta q)^3,  Delta the (N+1) x N difference matrix with walls:
//   (Delta q)_s = e_s = q_s - q_{s-1}, s = 0..N (0-based nodes, q_{-1} = q_N = 0), so that
//   g_i = k_n (e_i^3 - e_{i+1}^3) and g = grad V, V(q) = k_n/4 sum_s e_s^4.
// With q ~ V q_r and the residual made orthogonal to range(W):  g_r(q_r) = W^T g(V q_r).
// Sizes: N nodes, r reduced coordinates (1 <= r <= N), V and W N x r, m DEIM samples.
//
// Nonlinear treatments (cost of one evaluation of g_r; of its r x r Jacobian):
//  - full:   g(V q_r) on all N nodes, then W^T g: O(N r); Jacobian W^T J(V q_r) V, O(N r^2).
//            The baseline whose cost still grows with N.
//  - tensor: the exact reduced cubic, precomputed once in O(N r^4 / 6):
//              g_r(q_r)_i = k_n sum_s w_{s,i} (d_s^T q_r)^3
//                         = sum_{j<=k<=l} T_{i,(jkl)} q_j q_k q_l,
//            d_s, w_s the rows s of Delta V, Delta W; T stored over j <= k <= l with the
//            multiplicities (1, 3 or 6) folded in: r C(r+2, 3) ~ r^4 / 6 doubles
//            (8 r C(r+2, 3) bytes: r = 50 needs 8.8 MB, r = 100 137 MB, r = 200 2.2 GB).
//            Evaluation about r^4 / 3 flops, Jacobian about 5 r^4 / 6, independent of N;
//            cheaper than full (4 N r flops) roughly when r^3 < 12 N.
//  - deim:   hyper-reduction (Chaturantabut & Sorensen 2010; see reduction/deim.hpp) from an
//            orthonormal basis U (N x m) of snapshots of the nodal force g and its rows p_1..p_m:
//              g(V q_r) ~ U (P^T U)^{-1} g_P,   g_r ~ W^T U (P^T U)^{-1} g_P,
//            g_P the m sampled entries, each from the elongations of its two springs
//            e_{p}, e_{p+1}, computed from the rows p-1, p, p+1 of V (stored as two m x r
//            difference matrices). The r x m matrix W^T U (P^T U)^{-1} is precomputed.
//            Evaluation O(m r), Jacobian W^T U (P^T U)^{-1} J_P V in O(m r^2), independent of N.
//            Exact when g(V q_r) lies in range(U) (e.g. m = N). Its force is stacked,
//            g_r = P law(E q_r) (reduction/reduced_workspace.hpp), which lets implicit midpoint
//            fold its Newton matrix into the force's products.
// ECSW weights the springs as elements: it is the network form's (refused here).
#pragma once

#include <vector>

#include "reduction/nonlinear_treatment.hpp"
#include "reduction/reduced_workspace.hpp"
#include "src/core/types.hpp"

namespace mor {

/// The stencil: N nodes on a path between two walls, N + 1 cubic springs of coefficient k_n
/// (k_n = 0: no force).
struct CubicPathStencil {
  Index n = 0;
  double k_n = 0.0;
};

/// Bytes of the reduced cubic tensor of order r: 8 r C(r+2, 3) (as a double: no overflow).
double reduced_tensor_bytes(Index r);

/// The reduced stencil force. Keeps no reference to V or W: the full treatment is handed them
/// by the projected model at each call.
class CubicStencilForce {
 public:
  /// The cheap checks of o against the stencil and r, before anything of size N r^3 is formed.
  /// @throws InvalidArgument naming the value for: the ecsw treatment, deim without a
  ///         DeimResult or with one whose basis has a row count other than N, inconsistent
  ///         sizes, indices outside [0, N) or repeated, a tensor above o.tensor_memory_limit
  ///         (naming r and the bytes).
  static void check(const CubicPathStencil& s, Index r, const ProjectionOptions& o);
  /// V: N x r trial basis; W: N x r test basis (V for Galerkin, galerkin true); D_r, K_r, B_r the
  /// projected linear part (for the force's one product). Requires check(s, r, o) passed. Cost: for
  /// tensor O(N r^4 / 6); for deim O(N r m).
  CubicStencilForce(const CubicPathStencil& s, const Matrix& V, const Matrix& W, bool galerkin,
                    const ProjectionOptions& o, const Matrix& D_r, const Matrix& K_r,
                    const Matrix& B_r);

  bool is_linear() const { return k_n_ == 0.0; }
  /// The same force with k_n scaled by s and the linear part D_r, K_r, B_r in its product (the
  /// projected model's reparametrised()): O(r^2 + r m), the tensor's O(r^4 / 6).
  CubicStencilForce reparametrised(double s, const Matrix& D_r, const Matrix& K_r,
                                   const Matrix& B_r) const;
  /// F = B_r u - D_r v - K_r q - g_r(q) (see ProjectedModel::force); V, W the model's bases
  /// (read by the full treatment only).
  template <class Q, class Vq>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v, const Vector& u,
             const Matrix& V, const Matrix& W, Vector& F) const;
  /// g_r(q_r) by the chosen treatment; q_r: size r.
  void nonlinear_force(const Eigen::Ref<const Vector>& q_r, const Matrix& V, const Matrix& W,
                       Vector& g_r) const;
  /// dg_r/dq_r (q_r), r x r dense, by the chosen treatment (see the file comment for costs).
  Matrix nonlinear_jacobian(const Eigen::Ref<const Vector>& q_r, const Matrix& V,
                            const Matrix& W) const;
  /// S += c dg_r/dq_r (q_r) for the iteration matrix (S: r x r); scratch is resized as needed
  /// and reused between calls (deim: m x r, no other allocation).
  void add_nonlinear_jacobian(const Vector& q_r, double c, const Matrix& V, const Matrix& W,
                              Matrix& S, Matrix& scratch) const;
  NonlinearTreatment treatment() const { return treatment_; }
  /// Doubles read by one evaluation of g_r besides q_r: full 2 N r (V and W; N r for Galerkin),
  /// tensor r C(r+2, 3), deim 3 m r. Independent of N for tensor and deim.
  Index nonlinear_storage() const;
  /// m, the number of DEIM samples (0 for the other treatments).
  Index deim_samples() const { return static_cast<Index>(deim_rows_.size()); }
  /// deim: the elongation rows E = [EL; ER] (2 m x r): e = E q_r holds el = q_p - q_{p-1} over
  /// er = q_p - q_{p+1} at the m samples p, so that g_P = k_n (el^3 + er^3).
  const Matrix& deim_elongations() const { return E_; }
  /// deim: G = W^T U (P^T U)^{-1} (r x m), g_r ~ G g_P.
  const Matrix& deim_interpolation() const { return G_; }
  /// k_n, the cubic spring coefficient.
  double cubic_coefficient() const { return k_n_; }
  /// The stacked form g_r = P law(E q) of reduction/reduced_workspace.hpp (StackedNonlinearity):
  /// deim with k_n != 0, E = [EL; ER] (2 m x r), P = G (r x m), law(e) = k_n (el^3 + er^3).
  bool stacked_nonlinearity() const {
    return treatment_ == NonlinearTreatment::deim && k_n_ != 0.0;
  }
  [[gnu::always_inline]] void stacked_law(const Eigen::Ref<const Vector>& e,
                                          Eigen::Ref<Vector> g_P) const {
    const Index m = deim_samples();
    g_P = k_n_ * (e.head(m).array().cube() + e.tail(m).array().cube()).matrix();
  }

 private:
  /// DKG_ from the linear part (and G_ when the force is stacked).
  void assemble_product(const Matrix& D_r, const Matrix& K_r, const Matrix& B_r);

  NonlinearTreatment treatment_;
  Index N_, r_, nu_;
  double k_n_;
  bool galerkin_;
  // tensor: r x C(r+2, 3), column t for the t-th triple j <= k <= l in lexicographic order,
  // k_n and the multiplicity folded in.
  Matrix T_;
  // deim: sampled rows p_i; elongation rows (e_{p_i} = EL.row(i) q_r, e_{p_i + 1} = -ER.row(i)
  // q_r, i.e. EL = V_p - V_{p-1}, ER = V_p - V_{p+1} with zero rows at the walls), and
  // G = W^T U (P^T U)^{-1}, r x m.
  std::vector<Index> deim_rows_;
  Matrix EL_, ER_, G_;
  Matrix E_;    // deim: [EL; ER], 2m x r
  Matrix DKG_;  // [-D_r -K_r B_r -G] (deim) or [-D_r -K_r B_r]: the force's one product
};

// ---------------------------------------------------------------------------------------------

template <class Q, class Vq>
void CubicStencilForce::force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v,
                              const Vector& u, const Matrix& V, const Matrix& W, Vector& F) const {
  // z = [v; q; u; g_P] (deim) or [v; q; u], each lazy expression evaluated once into it; then
  // F = [-D_r -K_r B_r -G] z (deim) or [-D_r -K_r B_r] z, one product.
  const Index r = r_, m = deim_samples(), nu = nu_;
  const bool deim = stacked_nonlinearity();
  const Index nz = 2 * r + nu + (deim ? m : 0);
  SmallScratch scratch(nz + (deim ? 2 * m : 0));
  auto z = scratch.vector(0, nz);
  z.head(r) = v;
  z.segment(r, r) = q;
  z.segment(2 * r, nu) = u;
  F.resize(r);
  if (deim) {
    // e = [el; er] = E q, g_P = k_n (el^3 + er^3) (the stencil's spring law at the samples).
    auto e = scratch.vector(nz, 2 * m);
    e.noalias() = E_ * z.segment(r, r);
    z.tail(m) = k_n_ * (e.head(m).array().cube() + e.tail(m).array().cube()).matrix();
  }
  F.noalias() = DKG_ * z;
  if (deim) return;
  if (k_n_ != 0.0) {
    Vector g;
    nonlinear_force(z.segment(r, r), V, W, g);
    F -= g;
  }
}

}  // namespace mor
