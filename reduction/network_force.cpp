// SPDX-License-Identifier: GPL-3.0-or-later
// The reduced force of a nonlinear network (see the header).
#include "reduction/network_force.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/core/errors.hpp"
#include "src/core/finite.hpp"

namespace mor {

void NetworkForce::check(const NonlinearNetwork& net, const ProjectionOptions& o) {
  require(!(o.deim && o.ecsw),
          "network force: both a DEIM and an ECSW result given; the treatment takes one");
  if (net.is_linear()) return;
  require(o.nonlinear != NonlinearTreatment::tensor,
          "network force: the tensor treatment is a cubic stencil's exact reduced cubic; a "
          "network's element laws take deim, ecsw or full");
  require(!(o.nonlinear == NonlinearTreatment::deim && o.deim == nullptr),
          "network force: the deim treatment needs a DeimResult (options.deim is null)");
  require(!(o.nonlinear == NonlinearTreatment::ecsw && o.ecsw == nullptr),
          "network force: the ecsw treatment needs an EcswResult (options.ecsw is null)");
  if (o.nonlinear == NonlinearTreatment::ecsw) {
    const EcswResult& ec = *o.ecsw;
    require(!ec.elements.empty() && static_cast<Index>(ec.elements.size()) == ec.weights.size(),
            "network force: the ECSW result has ", ec.elements.size(), " elements and ",
            ec.weights.size(), " weights, expected as many and at least one");
    for (Index i = 0; i < ec.weights.size(); ++i)
      require(std::isfinite(ec.weights[i]) && ec.weights[i] > 0.0, "network force: ECSW weight ", i,
              " (element ", ec.elements[static_cast<std::size_t>(i)], ") is ", ec.weights[i],
              ", expected positive and finite");
  }
  if (o.nonlinear == NonlinearTreatment::deim) {
    const bool nodes = o.sampling == DeimSampling::nodes;
    check_deim_result(*o.deim, nodes ? net.n() : net.n_elements(), "network force",
                      nodes ? "the network size n" : "the number of elements");
  }
}

NetworkForce::NetworkForce(const NonlinearNetwork& net, const Matrix& V, const Matrix& Wt,
                           bool galerkin, const ProjectionOptions& options, const Matrix& D_r,
                           const Matrix& K_r)
    : r_(V.cols()), linear_(net.is_linear()) {
  if (!linear_) {
    if (options.nonlinear == NonlinearTreatment::ecsw) {
      // Bad or repeated element indices throw in restricted_elements, naming them.
      const RestrictedNonlinearity r = net.restricted_elements(options.ecsw->elements);
      E_ = r.element_rows(V);
      C_ = r.coefficients;
      const Matrix EW = galerkin ? E_ : r.element_rows(Wt);
      P_ = EW.transpose() * options.ecsw->weights.asDiagonal();
      if (galerkin) energy_weights_ = options.ecsw->weights;
    } else if (options.nonlinear != NonlinearTreatment::deim) {
      E_ = net.G() * V;
      C_ = net.coefficients();
      P_ = galerkin ? Matrix(E_.transpose()) : Matrix((net.G() * Wt).transpose());
      if (galerkin) energy_weights_ = Vector::Ones(E_.rows());
    } else {
      const DeimResult& d = *options.deim;
      deim_samples_ = d.U.cols();
      if (options.sampling == DeimSampling::nodes) {
        const RestrictedNonlinearity r = net.restricted_rows(d.indices);
        E_ = r.element_rows(V);
        C_ = r.coefficients;
        const Matrix WtU = Wt.transpose() * d.U;
        P_ = (WtU * d.PtU_inv) * r.A_local;
      } else {
        const RestrictedNonlinearity r = net.restricted_elements(d.indices);
        E_ = r.element_rows(V);
        C_ = r.coefficients;
        // (G W)^T U without forming G W: (U^T G W)^T, U^T G is m x n and sparse-times-dense.
        const Matrix GtU = net.G().transpose() * d.U;  // n x m
        P_ = (Wt.transpose() * GtU) * d.PtU_inv;
      }
    }
  }
  assemble_product(D_r, K_r);
}

void NetworkForce::assemble_product(const Matrix& D_r, const Matrix& K_r) {
  DKP_.resize(r_, 2 * r_ + P_.cols());
  DKP_.leftCols(r_) = D_r;
  DKP_.middleCols(r_, r_) = K_r;
  if (P_.cols() > 0) DKP_.rightCols(P_.cols()) = P_;
}

NetworkForce NetworkForce::reparametrised(double s, const Matrix& D_r, const Matrix& K_r) const {
  NetworkForce f = *this;
  f.C_ *= s;  // element_law is linear in its coefficients
  f.assemble_product(D_r, K_r);
  return f;
}

void NetworkForce::nonlinear_force(const Eigen::Ref<const Vector>& q, Vector& g_r) const {
  require(q.size() == r_, "network force: q_r has size ", q.size(), ", expected r = ", r_);
  if (linear_) {
    g_r.setZero(r_);
    return;
  }
  Vector f = E_ * q;
  const Index k = f.size();
  for (Index e = 0; e < k; ++e) {
    const double c[4] = {C_(e, 0), C_(e, 1), C_(e, 2), C_(e, 3)};
    double dphi;
    element_law(c, f[e], f[e], dphi);
  }
  g_r.noalias() = P_ * f;
}

Matrix NetworkForce::nonlinear_jacobian(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == r_, "network force: q_r has size ", q.size(), ", expected r = ", r_);
  if (linear_) return Matrix::Zero(r_, r_);
  const Vector s = E_ * q;
  Vector w(s.size());
  for (Index e = 0; e < s.size(); ++e) {
    const double c[4] = {C_(e, 0), C_(e, 1), C_(e, 2), C_(e, 3)};
    double phi;
    element_law(c, s[e], phi, w[e]);
  }
  const Matrix WE = w.asDiagonal() * E_;
  return P_ * WE;
}

void NetworkForce::add_nonlinear_jacobian(const Vector& q, double c, Matrix& S,
                                          Matrix& scratch) const {
  require(q.size() == r_ && S.rows() == r_ && S.cols() == r_, "network force: q_r has size ",
          q.size(), " and S is ", S.rows(), " x ", S.cols(), ", expected r = ", r_);
  if (linear_) return;
  // c P diag(phi'(E q)) E, c folded into the weights.
  const Index k = E_.rows();
  SmallScratch s(k);
  auto w = s.vector(0, k);
  w.noalias() = E_ * q;
  for (Index e = 0; e < k; ++e) {
    const double coef[4] = {C_(e, 0), C_(e, 1), C_(e, 2), C_(e, 3)};
    double phi, dphi;
    element_law(coef, w[e], phi, dphi);
    w[e] = c * dphi;
  }
  scratch.resize(k, r_);
  scratch.noalias() = w.asDiagonal() * E_;
  S.noalias() += P_ * scratch;
}

double NetworkForce::nonlinear_energy(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == r_, "network force: q_r has size ", q.size(), ", expected r = ", r_);
  if (linear_) return 0.0;
  require(has_nonlinear_energy(),
          "network force: the reduced force has no energy (DEIM or a Petrov-Galerkin "
          "projection): only the full Galerkin and the ECSW treatments are gradients");
  const Vector s = E_ * q;
  double V = 0.0;
  for (Index e = 0; e < s.size(); ++e) {
    const double c[4] = {C_(e, 0), C_(e, 1), C_(e, 2), C_(e, 3)};
    V += energy_weights_[e] * element_energy(c, s[e]);
  }
  return V;
}

}  // namespace mor
