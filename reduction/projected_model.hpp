// SPDX-License-Identifier: GPL-3.0-or-later
// The projected nonlinear second-order model: one integrator model
// (src/integrators/second_order_model.hpp) for every snapshot method and every nonlinear model
// kind. The full models' projection seam builds it; the runner simulates, lifts and compares it.
//
// Full model:  M q'' + D q' + K q + g(q) = B u,  y = Cp q + Cv q'  (N coordinates).
// With q ~ V q_r and the residual orthogonal to range(W) (W = V: Galerkin):
//   M_r q_r'' + D_r q_r' + K_r q_r + g_r(q_r) = B_r u,   y = Cp_r q_r + Cv_r q_r',
//   M_r = W^T M V,  D_r = W^T D V,  K_r = W^T K V,  B_r = W^T B,  Cp_r = Cp V,  Cv_r = Cv V,
//   g_r(q_r) = W^T g(V q_r).
// The linear part is projected here once (project_second_order, reduction/galerkin.hpp) and
// W^T V checked once; the reduced force g_r is one of two evaluators, chosen at construction:
//  - NetworkForce (reduction/network_force.hpp): g = G^T phi(G q) of any network, in full,
//    DEIM over nodes or elements, or ECSW; P phi(E q_r) from k element rows.
//  - CubicStencilForce (reduction/cubic_stencil_force.hpp): the nearest-neighbour cubic springs
//    of a path, k_n Delta^T (Delta q)^3, on their own stencil kernels (DEIM over nodes, whose
//    stacked form folds implicit midpoint) or as the exact reduced cubic tensor: the fast path
//    of that force, which its network form also evaluates.
// Each call dispatches once on the evaluator: O(1) beside the O(r^2) to O(r^3) work of a call.
#pragma once

#include <memory>
#include <optional>
#include <variant>

#include <Eigen/LU>

#include "reduction/cubic_stencil_force.hpp"
#include "reduction/network_force.hpp"
#include "reduction/nonlinear_treatment.hpp"
#include "reduction/reduced_workspace.hpp"
#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/lti.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// The projected model. Immutable after construction, self-contained (it keeps no reference to
/// the full model or to the DEIM / ECSW results), and const methods may be called concurrently.
/// It copies V (N x r) and, for Petrov-Galerkin, W, for lift / project and the full treatments.
class ProjectedModel {
 public:
  /// A network's projection: network read during construction only; V: n x r, 1 <= r <= n,
  /// finite; W: n x r, finite, or empty (Galerkin, W = V); W^T V nonsingular (reciprocal
  /// condition number above 100 eps). o: full (the default), deim (nodes or elements) or ecsw;
  /// tensor only for a linear network.
  /// @throws InvalidArgument naming the value for wrong sizes, non-finite entries, a singular
  ///         W^T V, and what NetworkForce::check and its constructor refuse.
  ProjectedModel(const NonlinearNetwork& network, const Matrix& V, const Matrix& W = Matrix(),
                 const ProjectionOptions& o = {});
  /// A cubic path stencil's projection: linear the model's M, D, K, B, Cp, Cv (n = stencil.n);
  /// V, W as above. o: full, tensor or deim (nodes).
  /// Cost: O(N r^2) plus, for tensor, O(N r^4 / 6); for deim, O(N r m).
  /// @throws InvalidArgument as above, and what CubicStencilForce::check refuses.
  ProjectedModel(const SecondOrderSystem& linear, const CubicPathStencil& stencil, const Matrix& V,
                 const Matrix& W = Matrix(), const ProjectionOptions& o = {});
  ProjectedModel(ProjectedModel&&) noexcept = default;
  ProjectedModel& operator=(ProjectedModel&&) noexcept = default;
  ProjectedModel(const ProjectedModel&) = delete;
  ProjectedModel& operator=(const ProjectedModel&) = delete;

  // --- SecondOrderModel -----------------------------------------------------------------------
  Index n() const { return r_; }
  Index n_inputs() const { return r_sys_.B.cols(); }
  Index n_outputs() const { return r_sys_.Cp.rows(); }
  bool is_linear() const { return linear_; }
  /// F = B_r u - D_r v - K_r q - g_r(q). q, v: any Eigen column expressions of size r (each is
  /// evaluated once); u: size n_inputs().
  template <class Q, class Vq>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v, const Vector& u,
             Vector& F) const {
    if (const auto* s = std::get_if<CubicStencilForce>(&g_))
      s->force(q, v, u, *V_, W(), F);
    else
      std::get_if<NetworkForce>(&g_)->force(q, v, u, r_sys_.B, F);
  }
  /// y = Cp_r q + Cv_r v.
  void output(const Vector& q, const Vector& v, Vector& y) const {
    // A dot product per output (a GEMV call costs more than the r multiplications of one).
    const Matrix &Cp = r_sys_.Cp, &Cv = r_sys_.Cv;
    y.resize(Cp.rows());
    for (Index i = 0; i < Cp.rows(); ++i)
      y[i] = Cp.row(i).dot(q) + (observes_velocity_ ? Cv.row(i).dot(v) : 0.0);
  }
  /// out = M_r x.
  void mass(const Vector& x, Vector& out) const { out.noalias() = r_sys_.M * x; }
  /// mu if M_r = mu I to kUniformMassTolerance (relative, max norm), e.g. for M = m I and an
  /// orthonormal V = W (mu = m); else nullopt.
  std::optional<double> uniform_mass() const { return uniform_mass_; }
  static constexpr double kUniformMassTolerance = 1e-12;

  // --- Parametric models (reduction/parametric_model.hpp) --------------------------------------
  /// This model with another reduced linear part and its nonlinear force scaled by s: M_r, D_r,
  /// K_r (r x r, finite) replace W^T M V, W^T D V, W^T K V, and g_r becomes s g_r (B_r, Cp_r, Cv_r,
  /// V, W, the DEIM points and bases unchanged; V and W shared, not copied). What a parametric
  /// model with M, D, K affine in its parameters and a force linear in one coefficient evaluates
  /// at a parameter: cost O(r^2 + r k) (k the force's sampled rows), independent of N except
  /// for the full treatment (which copies its N-sized data).
  /// @throws InvalidArgument naming the matrix for a wrong size or a non-finite entry, or s.
  ProjectedModel reparametrised(const Matrix& M_r, const Matrix& D_r, const Matrix& K_r,
                                double s) const;

  // --- The reduced nonlinearity (public for tests and diagnostics) ---------------------------
  /// g_r(q_r); q_r: size r.
  void nonlinear_force(const Eigen::Ref<const Vector>& q_r, Vector& g_r) const;
  /// dg_r/dq_r (q_r), r x r dense.
  Matrix nonlinear_jacobian(const Eigen::Ref<const Vector>& q_r) const;
  /// S += c dg_r/dq_r (q_r) for the iteration matrix (S: r x r); scratch is resized as needed
  /// and reused between calls.
  void add_nonlinear_jacobian(const Vector& q_r, double c, Matrix& S, Matrix& scratch) const;
  /// m, the number of DEIM samples (0 for the other treatments).
  Index deim_samples() const {
    return std::visit([](const auto& g) { return g.deim_samples(); }, g_);
  }
  /// The force evaluator if it is a Force (NetworkForce or CubicStencilForce), else nullptr: for
  /// its own diagnostics and for benchmarks of its kernels.
  template <class Force>
  const Force* held() const {
    return std::get_if<Force>(&g_);
  }
  /// The stacked form g_r = P law(E q) of reduction/reduced_workspace.hpp (StackedNonlinearity),
  /// which lets implicit midpoint fold its Newton matrix into the force's products: the cubic
  /// stencil's DEIM (CubicStencilForce::stacked_nonlinearity).
  bool stacked_nonlinearity() const {
    const auto* s = std::get_if<CubicStencilForce>(&g_);
    return s && s->stacked_nonlinearity();
  }
  /// E and P of the stacked form, and its law; require stacked_nonlinearity(). The law runs once
  /// per Newton iteration inside the folded correction: forced inline there (left to the
  /// compiler, it stayed a call and the default experiment's reduced step took about 5% longer).
  const Matrix& stacked_rows() const { return stencil().deim_elongations(); }
  const Matrix& stacked_weights() const { return stencil().deim_interpolation(); }
  [[gnu::always_inline]] void stacked_law(const Eigen::Ref<const Vector>& e,
                                          Eigen::Ref<Vector> out) const {
    stencil().stacked_law(e, out);
  }

  // --- States -----------------------------------------------------------------------------------
  Index full_size() const { return V_->rows(); }
  /// V q_r: the full positions (or velocities) from reduced coordinates, O(N r).
  Vector lift(const Eigen::Ref<const Vector>& q_r) const { return *V_ * q_r; }
  /// Reduced coordinates of a full state q (size N): (W^T V)^{-1} W^T q, the coordinates whose
  /// lift has the same Petrov-Galerkin residual W^T (V q_r - q) = 0. For W = V this is the
  /// least-squares fit argmin ||V q_r - q||_2 (V^T q for orthonormal V; V^T M q for M-orthonormal
  /// V with M = m I); it is exact for q in range(V). O(N r).
  /// @throws InvalidArgument if q.size() != N.
  Vector project(const Eigen::Ref<const Vector>& q) const;

  // --- Reduced matrices -------------------------------------------------------------------------
  const Matrix& M_r() const { return r_sys_.M; }    ///< W^T M V, r x r
  const Matrix& D_r() const { return r_sys_.D; }    ///< W^T D V, r x r
  const Matrix& K_r() const { return r_sys_.K; }    ///< W^T K V, r x r
  const Matrix& B_r() const { return r_sys_.B; }    ///< W^T B, r x n_inputs
  const Matrix& Cp_r() const { return r_sys_.Cp; }  ///< Cp V, n_outputs x r
  const Matrix& Cv_r() const { return r_sys_.Cv; }  ///< Cv V, n_outputs x r
  const Matrix& V() const { return *V_; }           ///< N x r trial basis
  /// N x r test basis (V for Galerkin).
  const Matrix& W() const { return galerkin_ ? *V_ : *W_; }

  static constexpr const char* kWhat = "projected model";

  /// The integrator workspace: dense LUs of M_r and of the r x r iteration matrices, and the
  /// folded implicit midpoint where the force is stacked (reduction/reduced_workspace.hpp).
  /// Defined in projected_model.cpp, which alone instantiates the dense workspace: inline here,
  /// every file that includes this header compiled it again (about 2 s each, the runner's 30
  /// files). The model must outlive the workspace.
  class Workspace {
   public:
    explicit Workspace(const ProjectedModel& model, SparseBackend backend = SparseBackend::umfpack);
    ~Workspace();
    Workspace(Workspace&&) noexcept;
    void solve_mass(const Vector& r, Vector& x);
    void factorize_iteration(double a, double b, double c, const Vector& q);
    void solve_iteration(const Vector& r, Vector& x);
    Index factorizations() const;
    // Folded implicit midpoint (reduction/reduced_workspace.hpp), where the force is stacked.
    bool midpoint_folded() const;
    void midpoint_prepare(double h, const Vector& q, const Vector& v, const Vector& u);
    void midpoint_correction(const Vector& x, Vector& delta);

   private:
    std::unique_ptr<DenseReducedWorkspace<ProjectedModel>> ws_;
  };

 private:
  ProjectedModel() = default;  // reparametrised() fills it
  /// Checks V and W against the full size n, copies them, checks W^T V, projects linear.
  void project_linear_part(const SecondOrderSystem& linear, const Matrix& V, const Matrix& W);
  /// Sizes and finite entries of V and W for n full coordinates (before anything is formed).
  static void check_bases(Index n, const Matrix& V, const Matrix& W);
  const CubicStencilForce& stencil() const { return *std::get_if<CubicStencilForce>(&g_); }

  Index r_ = 0;
  bool galerkin_ = true, linear_ = true;
  // V and W (W_ null for Galerkin), shared by the models reparametrised() gives: their copies do
  // no N-sized work.
  std::shared_ptr<const Matrix> V_, W_;
  Eigen::PartialPivLU<Matrix> WtV_lu_;
  DenseSecondOrderSystem r_sys_;  // M_r, D_r, K_r, B_r, Cp_r, Cv_r (D_ff zero)
  std::optional<double> uniform_mass_;
  bool observes_velocity_ = true;  // Cv_r != 0
  std::variant<NetworkForce, CubicStencilForce> g_;
};

}  // namespace mor
