// SPDX-License-Identifier: GPL-3.0-or-later
// The projected model of the nonlinear mass-spring chain (models/mass_spring_chain.hpp) as an
// integrator model (src/integrators/second_order_model.hpp): Galerkin (W = V) or Petrov-Galerkin
// projection, with three ways to evaluate the projected cubic spring force.
//
// Full model (mechanical convention):  M q'' + D q' + K q + g(q) = B u,  y = Cp q + Cv q',
//   g(q) = k_n Delta^T (Delta q)^3,  Delta the (N+1) x N difference matrix with walls:
//   (Delta q)_s = e_s = q_s - q_{s-1}, s = 0..N (0-based masses, q_{-1} = q_N = 0), so that
//   g_i = k_n (e_i^3 - e_{i+1}^3) and g = grad V, V(q) = k_n/4 sum_s e_s^4.
// With q ~ V q_r and the residual made orthogonal to range(W):
//   M_r q_r'' + D_r q_r' + K_r q_r + g_r(q_r) = B_r u,   y = Cp_r q_r + Cv_r q_r',
//   M_r = W^T M V,  D_r = W^T D V,  K_r = W^T K V,  B_r = W^T B,  Cp_r = Cp V,  Cv_r = Cv V,
//   g_r(q_r) = W^T g(V q_r).
// Sizes: N masses, r reduced coordinates (1 <= r <= N), V and W N x r, m DEIM samples.
//
// Nonlinear treatments (cost of one evaluation of g_r; of its r x r Jacobian):
//  - full:   g(V q_r) on all N masses, then W^T g: O(N r); Jacobian W^T J(V q_r) V, O(N r^2).
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
//            Exact when g(V q_r) lies in range(U) (e.g. m = N).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include <Eigen/LU>

#include "models/mass_spring_chain.hpp"
#include "reduction/deim.hpp"
#include "reduction/reduced_workspace.hpp"
#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor {

enum class NonlinearTreatment {
  full,    ///< g(V q_r) on all N masses: O(N r) per evaluation
  tensor,  ///< the exact reduced cubic tensor: O(r^4 / 6) per evaluation, r^4 / 6 doubles
  deim,    ///< DEIM / Q-DEIM hyper-reduction: O(m r) per evaluation
  ecsw,    ///< ECSW (reduction/ecsw.hpp): k weighted elements, O(k r); networks only (the
           ///< chain's through its network form), ReducedChainModel refuses it
};
/// "full", "tensor", "deim", "ecsw"; @throws InvalidArgument naming the value.
NonlinearTreatment parse_nonlinear_treatment(std::string_view name);
std::string_view to_string(NonlinearTreatment t);

/// The tensor treatment refuses to store more than this (2 GiB) by default.
inline constexpr std::size_t kDefaultReducedTensorMemoryLimit = std::size_t{1} << 31;

/// Bytes of the reduced cubic tensor of order r: 8 r C(r+2, 3) (as a double: no overflow).
double reduced_tensor_bytes(Index r);

struct ReducedChainOptions {
  NonlinearTreatment nonlinear = NonlinearTreatment::deim;
  /// Required for NonlinearTreatment::deim, ignored otherwise: the interpolation of the nodal
  /// force g (U: N x m orthonormal, indices, (P^T U)^{-1}), as returned by deim(). Read only
  /// during construction (the model copies what it needs); may be destroyed afterwards.
  const DeimResult* deim = nullptr;
  /// The tensor treatment throws InvalidArgument if its tensor would exceed this many bytes.
  std::size_t tensor_memory_limit = kDefaultReducedTensorMemoryLimit;
};

/// The reduced chain. Immutable after construction, self-contained (it keeps no reference to the
/// chain or the DeimResult), and const methods may be called concurrently. It copies V (N x r)
/// and, for Petrov-Galerkin, W, for lift / project and the full treatment.
class ReducedChainModel {
 public:
  /// chain: the full model (read during construction only);
  /// V: N x r position (trial) basis, 1 <= r <= N, finite;
  /// W: N x r test basis, finite; empty means W = V (Galerkin);
  /// W^T V must be nonsingular (reciprocal condition number above 100 eps).
  /// Cost: O(N r^2) plus, for tensor, O(N r^4 / 6); for deim, O(N r m).
  /// @throws InvalidArgument naming the value for: V or W with a row count other than N, r = 0
  ///         or r > N, W with a column count other than r, a non-finite entry of V or W (naming
  ///         (row, column)), a singular W^T V, deim treatment without a DeimResult or with one
  ///         whose basis has a row count other than N, inconsistent sizes, indices outside
  ///         [0, N) or repeated, a tensor above options.tensor_memory_limit (naming r and the
  ///         bytes).
  ReducedChainModel(const MassSpringChain& chain, const Matrix& V, const Matrix& W = Matrix(),
                    const ReducedChainOptions& options = {});

  // --- SecondOrderModel -----------------------------------------------------------------------
  Index n() const { return r_; }
  Index n_inputs() const { return B_r_.cols(); }
  Index n_outputs() const { return Cp_r_.rows(); }
  bool is_linear() const { return k_n_ == 0.0; }

  /// F = B_r u - D_r v - K_r q - g_r(q). q, v: any Eigen column expressions of size r (each is
  /// evaluated once); u: size n_inputs().
  template <class Q, class Vq>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v, const Vector& u,
             Vector& F) const;
  /// y = Cp_r q + Cv_r v.
  void output(const Vector& q, const Vector& v, Vector& y) const {
    // A dot product per output (a GEMV call costs more than the r multiplications of one).
    y.resize(Cp_r_.rows());
    for (Index i = 0; i < Cp_r_.rows(); ++i)
      y[i] = Cp_r_.row(i).dot(q) + (observes_velocity_ ? Cv_r_.row(i).dot(v) : 0.0);
  }
  /// out = M_r x.
  void mass(const Vector& x, Vector& out) const { out.noalias() = M_r_ * x; }
  /// mu if M_r = mu I to kUniformMassTolerance (relative, max norm), e.g. for M = m I and an
  /// orthonormal V = W (mu = m); else nullopt.
  std::optional<double> uniform_mass() const { return uniform_mass_; }
  static constexpr double kUniformMassTolerance = 1e-12;

  // --- The reduced nonlinearity (public for tests and diagnostics) ---------------------------
  /// g_r(q_r) by the chosen treatment; q_r: size r.
  void nonlinear_force(const Eigen::Ref<const Vector>& q_r, Vector& g_r) const;
  /// dg_r/dq_r (q_r), r x r dense, by the chosen treatment (see the file comment for costs).
  Matrix nonlinear_jacobian(const Eigen::Ref<const Vector>& q_r) const;
  /// S += c dg_r/dq_r (q_r) for the iteration matrix (S: r x r); scratch is resized as needed
  /// and reused between calls (deim: m x r, no other allocation).
  void add_nonlinear_jacobian(const Vector& q_r, double c, Matrix& S, Matrix& scratch) const;
  NonlinearTreatment treatment() const { return treatment_; }
  /// Doubles read by one evaluation of g_r besides q_r: full 2 N r (V and W; N r for Galerkin),
  /// tensor r C(r+2, 3), deim 3 m r. Independent of N for tensor and deim.
  Index nonlinear_storage() const;
  /// m, the number of DEIM samples (0 for the other treatments).
  Index deim_samples() const { return deim_rows_.size(); }
  /// deim: the elongation rows E = [EL; ER] (2 m x r): e = E q_r holds el = q_p - q_{p-1} over
  /// er = q_p - q_{p+1} at the m samples p, so that g_P = k_n (el^3 + er^3).
  const Matrix& deim_elongations() const { return E_; }
  /// deim: G = W^T U (P^T U)^{-1} (r x m), g_r ~ G g_P.
  const Matrix& deim_interpolation() const { return G_; }
  /// k_n, the cubic spring coefficient.
  double cubic_coefficient() const { return k_n_; }
  /// The stacked form g_r = P law(E q) of reduction/reduced_workspace.hpp (StackedNonlinearity),
  /// which lets implicit midpoint fold its Newton matrix into the force's products: deim with
  /// k_n != 0, E = [EL; ER] (2 m x r), P = G (r x m), law(e) = k_n (el^3 + er^3).
  bool stacked_nonlinearity() const {
    return treatment_ == NonlinearTreatment::deim && k_n_ != 0.0;
  }
  const Matrix& stacked_rows() const { return E_; }
  const Matrix& stacked_weights() const { return G_; }
  void stacked_law(const Eigen::Ref<const Vector>& e, Eigen::Ref<Vector> g_P) const {
    const Index m = deim_samples();
    g_P = k_n_ * (e.head(m).array().cube() + e.tail(m).array().cube()).matrix();
  }

  // --- States -----------------------------------------------------------------------------------
  Index full_size() const { return N_; }
  /// V q_r: the full positions (or velocities) from reduced coordinates, O(N r).
  Vector lift(const Eigen::Ref<const Vector>& q_r) const { return V_ * q_r; }
  /// Reduced coordinates of a full state q (size N): (W^T V)^{-1} W^T q, the coordinates whose
  /// lift has the same Petrov-Galerkin residual W^T (V q_r - q) = 0. For W = V this is the
  /// least-squares fit argmin ||V q_r - q||_2 (V^T q for orthonormal V; V^T M q for M-orthonormal
  /// V with M = m I); it is exact for q in range(V). O(N r).
  /// @throws InvalidArgument if q.size() != N.
  Vector project(const Eigen::Ref<const Vector>& q) const;

  // --- Reduced matrices -------------------------------------------------------------------------
  const Matrix& M_r() const { return M_r_; }    ///< W^T M V, r x r
  const Matrix& D_r() const { return D_r_; }    ///< W^T D V, r x r
  const Matrix& K_r() const { return K_r_; }    ///< W^T K V, r x r
  const Matrix& B_r() const { return B_r_; }    ///< W^T B, r x n_inputs
  const Matrix& Cp_r() const { return Cp_r_; }  ///< Cp V, n_outputs x r
  const Matrix& Cv_r() const { return Cv_r_; }  ///< Cv V, n_outputs x r
  const Matrix& V() const { return V_; }        ///< N x r trial basis
  /// N x r test basis (V for Galerkin).
  const Matrix& W() const { return galerkin_ ? V_ : W_; }

  /// Dense LU of the r x r iteration matrices (reduction/reduced_workspace.hpp).
  using Workspace = DenseReducedWorkspace<ReducedChainModel>;
  static constexpr const char* kWhat = "reduced chain";

 private:
  NonlinearTreatment treatment_;
  Index N_, r_;
  double k_n_;
  bool galerkin_;
  Matrix V_, W_;  // W_ empty for Galerkin
  Eigen::PartialPivLU<Matrix> WtV_lu_;
  Matrix M_r_, D_r_, K_r_, B_r_, Cp_r_, Cv_r_;
  std::optional<double> uniform_mass_;
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
  bool observes_velocity_ = true;  // Cv_r != 0
};

// ---------------------------------------------------------------------------------------------

template <class Q, class Vq>
void ReducedChainModel::force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v,
                              const Vector& u, Vector& F) const {
  // z = [v; q; u; g_P] (deim) or [v; q; u], each lazy expression evaluated once into it; then
  // F = [-D_r -K_r B_r -G] z (deim) or [-D_r -K_r B_r] z, one product.
  const Index r = r_, m = deim_samples(), nu = B_r_.cols();
  const bool deim = treatment_ == NonlinearTreatment::deim && k_n_ != 0.0;
  const Index nz = 2 * r + nu + (deim ? m : 0);
  SmallScratch scratch(nz + (deim ? 2 * m : 0));
  auto z = scratch.vector(0, nz);
  z.head(r) = v;
  z.segment(r, r) = q;
  z.segment(2 * r, nu) = u;
  F.resize(r);
  if (deim) {
    // e = [el; er] = E q, g_P = k_n (el^3 + er^3) (the chain's spring law at the samples).
    auto e = scratch.vector(nz, 2 * m);
    e.noalias() = E_ * z.segment(r, r);
    z.tail(m) = k_n_ * (e.head(m).array().cube() + e.tail(m).array().cube()).matrix();
  }
  F.noalias() = DKG_ * z;
  if (deim) return;
  if (k_n_ != 0.0) {
    Vector g;
    nonlinear_force(z.segment(r, r), g);
    F -= g;
  }
}

}  // namespace mor
