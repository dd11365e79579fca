// SPDX-License-Identifier: GPL-3.0-or-later
// The projected nonlinear second-order model (see the header), its workspace, and the names of
// the nonlinear treatments (reduction/nonlinear_treatment.hpp).
#include "reduction/projected_model.hpp"

#include <cmath>
#include <utility>

#include "reduction/galerkin.hpp"
#include "src/core/errors.hpp"
#include "src/core/finite.hpp"

namespace mor {

NonlinearTreatment parse_nonlinear_treatment(std::string_view name) {
  if (name == "full") return NonlinearTreatment::full;
  if (name == "tensor") return NonlinearTreatment::tensor;
  if (name == "deim") return NonlinearTreatment::deim;
  if (name == "ecsw") return NonlinearTreatment::ecsw;
  throw InvalidArgument(detail::concat("unknown nonlinear treatment '", name,
                                       "' (expected full, tensor, deim or ecsw)"));
}

std::string_view to_string(NonlinearTreatment t) {
  switch (t) {
    case NonlinearTreatment::full:
      return "full";
    case NonlinearTreatment::tensor:
      return "tensor";
    case NonlinearTreatment::deim:
      return "deim";
    case NonlinearTreatment::ecsw:
      return "ecsw";
  }
  return "unknown";
}

DeimSampling parse_deim_sampling(std::string_view name) {
  if (name == "nodes") return DeimSampling::nodes;
  if (name == "elements") return DeimSampling::elements;
  throw InvalidArgument(
      detail::concat("unknown DEIM sampling '", name, "' (expected nodes or elements)"));
}

std::string_view to_string(DeimSampling s) {
  return s == DeimSampling::nodes ? "nodes" : "elements";
}

// --- The model
// ------------------------------------------------------------------------------------

void ProjectedModel::check_bases(Index n, const Matrix& V, const Matrix& W) {
  // Cheap checks first: nothing of size n r is formed before the arguments are known good.
  const Index r = V.cols();
  require(V.rows() == n, "projected model: V has ", V.rows(),
          " rows, expected the full size n = ", n);
  require(r >= 1 && r <= n, "projected model: V has r = ", r,
          " columns, expected 1 <= r <= n = ", n);
  if (W.size() != 0) {
    require(W.rows() == n, "projected model: W has ", W.rows(),
            " rows, expected the full size n = ", n);
    require(W.cols() == r, "projected model: W has ", W.cols(), " columns, expected r = ", r,
            " (the columns of V)");
  }
  require_finite(V, "projected model: ", "V");
  if (W.size() != 0) require_finite(W, "projected model: ", "W");
}

void ProjectedModel::project_linear_part(const SecondOrderSystem& linear, const Matrix& V,
                                         const Matrix& W) {
  r_ = V.cols();
  galerkin_ = W.size() == 0;
  V_ = std::make_shared<const Matrix>(V);
  if (!galerkin_) W_ = std::make_shared<const Matrix>(W);
  const Matrix& Wt = this->W();
  WtV_lu_.compute(Wt.transpose() * *V_);
  const double rcond = lu_reciprocal_condition(WtV_lu_);
  require(rcond > kReducedSingularRcond,
          "projected model: W^T V is singular (reciprocal condition number ", rcond,
          "): some direction of range(V) is orthogonal to range(W)");

  r_sys_ = project_second_order(linear, *V_, Wt);
  uniform_mass_ = uniform_mass_of(r_sys_.M, kUniformMassTolerance);
  observes_velocity_ = !r_sys_.Cv.isZero(0.0);
}

ProjectedModel::ProjectedModel(const NonlinearNetwork& network, const Matrix& V, const Matrix& W,
                               const ProjectionOptions& o) {
  check_bases(network.n(), V, W);
  NetworkForce::check(network, o);
  project_linear_part(network.linear_system(), V, W);
  linear_ = network.is_linear();
  g_.emplace<NetworkForce>(network, *V_, this->W(), galerkin_, o, r_sys_.D, r_sys_.K);
}

ProjectedModel::ProjectedModel(const SecondOrderSystem& linear, const CubicPathStencil& stencil,
                               const Matrix& V, const Matrix& W, const ProjectionOptions& o) {
  require(stencil.n == linear.n(), "projected model: the cubic stencil has n = ", stencil.n,
          " nodes, the linear part n = ", linear.n());
  check_bases(linear.n(), V, W);
  CubicStencilForce::check(stencil, V.cols(), o);
  project_linear_part(linear, V, W);
  linear_ = stencil.k_n == 0.0;
  g_.emplace<CubicStencilForce>(stencil, *V_, this->W(), galerkin_, o, r_sys_.D, r_sys_.K,
                                r_sys_.B);
}

void ProjectedModel::nonlinear_force(const Eigen::Ref<const Vector>& q_r, Vector& g_r) const {
  if (const auto* s = std::get_if<CubicStencilForce>(&g_))
    s->nonlinear_force(q_r, *V_, W(), g_r);
  else
    std::get_if<NetworkForce>(&g_)->nonlinear_force(q_r, g_r);
}

Matrix ProjectedModel::nonlinear_jacobian(const Eigen::Ref<const Vector>& q_r) const {
  if (const auto* s = std::get_if<CubicStencilForce>(&g_))
    return s->nonlinear_jacobian(q_r, *V_, W());
  return std::get_if<NetworkForce>(&g_)->nonlinear_jacobian(q_r);
}

void ProjectedModel::add_nonlinear_jacobian(const Vector& q_r, double c, Matrix& S,
                                            Matrix& scratch) const {
  if (const auto* s = std::get_if<CubicStencilForce>(&g_))
    s->add_nonlinear_jacobian(q_r, c, *V_, W(), S, scratch);
  else
    std::get_if<NetworkForce>(&g_)->add_nonlinear_jacobian(q_r, c, S, scratch);
}

ProjectedModel ProjectedModel::reparametrised(const Matrix& M_r, const Matrix& D_r,
                                              const Matrix& K_r, double s) const {
  const std::pair<const char*, const Matrix*> parts[] = {
      {"M_r", &M_r}, {"D_r", &D_r}, {"K_r", &K_r}};
  for (const auto& [name, X] : parts) {
    require(X->rows() == r_ && X->cols() == r_, "projected model: the reparametrised ", name,
            " is ", X->rows(), " x ", X->cols(), ", expected r x r with r = ", r_);
    require_finite(*X, "projected model: reparametrised ", name);
  }
  require(std::isfinite(s), "projected model: the force's scale must be finite, got ", s);
  ProjectedModel p;
  p.r_ = r_;
  p.galerkin_ = galerkin_;
  p.linear_ = linear_;
  p.V_ = V_;
  p.W_ = W_;
  p.WtV_lu_ = WtV_lu_;
  p.r_sys_ = r_sys_;
  p.r_sys_.M = M_r;
  p.r_sys_.D = D_r;
  p.r_sys_.K = K_r;
  p.uniform_mass_ = uniform_mass_of(M_r, kUniformMassTolerance);
  p.observes_velocity_ = observes_velocity_;
  if (const auto* c = std::get_if<CubicStencilForce>(&g_))
    p.g_.emplace<CubicStencilForce>(c->reparametrised(s, D_r, K_r, r_sys_.B));
  else
    p.g_.emplace<NetworkForce>(std::get_if<NetworkForce>(&g_)->reparametrised(s, D_r, K_r));
  return p;
}

Vector ProjectedModel::project(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == V_->rows(), "projected model: the full state has size ", q.size(),
          ", expected N = ", V_->rows());
  const Vector Wtq = W().transpose() * q;
  return WtV_lu_.solve(Wtq);
}

// --- The workspace ----------------------------------------------------------------------------

ProjectedModel::Workspace::Workspace(const ProjectedModel& model, SparseBackend backend)
    : ws_(std::make_unique<DenseReducedWorkspace<ProjectedModel>>(model, backend)) {}
ProjectedModel::Workspace::~Workspace() = default;
ProjectedModel::Workspace::Workspace(Workspace&&) noexcept = default;

void ProjectedModel::Workspace::solve_mass(const Vector& r, Vector& x) {
  ws_->solve_mass(r, x);
}
void ProjectedModel::Workspace::factorize_iteration(double a, double b, double c, const Vector& q) {
  ws_->factorize_iteration(a, b, c, q);
}
void ProjectedModel::Workspace::solve_iteration(const Vector& r, Vector& x) {
  ws_->solve_iteration(r, x);
}
Index ProjectedModel::Workspace::factorizations() const {
  return ws_->factorizations();
}
bool ProjectedModel::Workspace::midpoint_folded() const {
  return ws_->midpoint_folded();
}
void ProjectedModel::Workspace::midpoint_prepare(double h, const Vector& q, const Vector& v,
                                                 const Vector& u) {
  ws_->midpoint_prepare(h, q, v, u);
}
void ProjectedModel::Workspace::midpoint_correction(const Vector& x, Vector& delta) {
  ws_->midpoint_correction(x, delta);
}

}  // namespace mor
