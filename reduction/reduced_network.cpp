// SPDX-License-Identifier: GPL-3.0-or-later
// The projected nonlinear network (see the header).
#include "reduction/reduced_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reduction/galerkin.hpp"
#include "src/core/errors.hpp"
#include "src/core/finite.hpp"

namespace mor {

namespace {

void validate_deim(const DeimResult& d, Index rows, const char* what) {
  const Index m = d.U.cols();
  require(d.U.rows() == rows, "reduced network: the DEIM basis U has ", d.U.rows(),
          " rows, expected ", rows, " (", what, ")");
  require(m >= 1, "reduced network: the DEIM basis U has no columns (m = 0)");
  require(static_cast<Index>(d.indices.size()) == m, "reduced network: the DEIM result has ",
          d.indices.size(), " indices for m = ", m, " basis vectors");
  require(d.PtU_inv.rows() == m && d.PtU_inv.cols() == m, "reduced network: (P^T U)^{-1} is ",
          d.PtU_inv.rows(), " x ", d.PtU_inv.cols(), ", expected ", m, " x ", m);
  require_finite(d.U, "reduced network: ", "DEIM basis U");
  require_finite(d.PtU_inv, "reduced network: ", "DEIM (P^T U)^{-1}");
}

/// Rows `rows` of the dense X.
Matrix gather_rows(const Matrix& X, const std::vector<Index>& rows) {
  Matrix R(static_cast<Index>(rows.size()), X.cols());
  for (std::size_t k = 0; k < rows.size(); ++k) R.row(static_cast<Index>(k)) = X.row(rows[k]);
  return R;
}

/// The element rows G(S, :) X for the restriction's local G and its dofs: O(nnz r).
Matrix element_rows(const RestrictedNonlinearity& r, const Matrix& X) {
  return r.G_local * gather_rows(X, r.dofs);
}

}  // namespace

DeimSampling parse_deim_sampling(std::string_view name) {
  if (name == "nodes") return DeimSampling::nodes;
  if (name == "elements") return DeimSampling::elements;
  throw InvalidArgument(
      detail::concat("unknown DEIM sampling '", name, "' (expected nodes or elements)"));
}

std::string_view to_string(DeimSampling s) {
  return s == DeimSampling::nodes ? "nodes" : "elements";
}

ReducedNetworkModel::ReducedNetworkModel(const NonlinearNetwork& net, const Matrix& V,
                                         const Matrix& W, const ReducedNetworkOptions& options)
    : n_full_(net.n()), r_(V.cols()), galerkin_(W.size() == 0), linear_(net.is_linear()) {
  require(V.rows() == n_full_, "reduced network: V has ", V.rows(),
          " rows, expected the network size n = ", n_full_);
  require(r_ >= 1 && r_ <= n_full_, "reduced network: V has r = ", r_,
          " columns, expected 1 <= r <= n = ", n_full_);
  if (!galerkin_)
    require(W.rows() == n_full_ && W.cols() == r_, "reduced network: W is ", W.rows(), " x ",
            W.cols(), ", expected ", n_full_, " x ", r_, " (the size of V)");
  require_finite(V, "reduced network: ", "V");
  if (!galerkin_) require_finite(W, "reduced network: ", "W");
  require(!(options.deim && options.ecsw),
          "reduced network: both a DEIM and an ECSW result given; the treatment takes one");
  if (options.ecsw && !linear_) {
    const EcswResult& ec = *options.ecsw;
    require(!ec.elements.empty() && static_cast<Index>(ec.elements.size()) == ec.weights.size(),
            "reduced network: the ECSW result has ", ec.elements.size(), " elements and ",
            ec.weights.size(), " weights, expected as many and at least one");
    for (Index i = 0; i < ec.weights.size(); ++i)
      require(std::isfinite(ec.weights[i]) && ec.weights[i] > 0.0, "reduced network: ECSW weight ",
              i, " (element ", ec.elements[static_cast<std::size_t>(i)], ") is ", ec.weights[i],
              ", expected positive and finite");
  }
  if (options.deim && !linear_)
    validate_deim(
        *options.deim, options.sampling == DeimSampling::nodes ? n_full_ : net.n_elements(),
        options.sampling == DeimSampling::nodes ? "the network size n" : "the number of elements");
  V_ = V;
  if (!galerkin_) W_ = W;
  const Matrix& Wt = this->W();
  WtV_lu_.compute(Wt.transpose() * V_);
  const double rcond = lu_reciprocal_condition(WtV_lu_);
  require(rcond > kReducedSingularRcond,
          "reduced network: W^T V is singular (reciprocal condition number ", rcond, ")");

  DenseSecondOrderSystem linear = project_second_order(net.linear_system(), V_, Wt);
  M_r_ = std::move(linear.M);
  D_r_ = std::move(linear.D);
  K_r_ = std::move(linear.K);
  B_r_ = std::move(linear.B);
  Cp_r_ = std::move(linear.Cp);
  Cv_r_ = std::move(linear.Cv);
  uniform_mass_ = uniform_mass_of(M_r_, kUniformMassTolerance);

  if (!linear_) build_nonlinearity(net, options);
  DKP_.resize(r_, 2 * r_ + P_.cols());
  DKP_.leftCols(r_) = D_r_;
  DKP_.middleCols(r_, r_) = K_r_;
  if (P_.cols() > 0) DKP_.rightCols(P_.cols()) = P_;
}

void ReducedNetworkModel::build_nonlinearity(const NonlinearNetwork& net,
                                             const ReducedNetworkOptions& options) {
  const Matrix& Wt = this->W();
  if (options.ecsw) {
    // Bad or repeated element indices throw in restricted_elements, naming them.
    const RestrictedNonlinearity r = net.restricted_elements(options.ecsw->elements);
    E_ = element_rows(r, V_);
    C_ = r.coefficients;
    const Matrix EW = galerkin_ ? E_ : element_rows(r, Wt);
    P_ = EW.transpose() * options.ecsw->weights.asDiagonal();
    if (galerkin_) energy_weights_ = options.ecsw->weights;
    return;
  }
  if (!options.deim) {
    E_ = net.G() * V_;
    C_ = net.coefficients();
    P_ = galerkin_ ? Matrix(E_.transpose()) : Matrix((net.G() * Wt).transpose());
    if (galerkin_) energy_weights_ = Vector::Ones(E_.rows());
    return;
  }
  const DeimResult& d = *options.deim;
  deim_samples_ = d.U.cols();
  if (options.sampling == DeimSampling::nodes) {
    const RestrictedNonlinearity r = net.restricted_rows(d.indices);
    E_ = element_rows(r, V_);
    C_ = r.coefficients;
    const Matrix WtU = Wt.transpose() * d.U;
    P_ = (WtU * d.PtU_inv) * r.A_local;
  } else {
    const RestrictedNonlinearity r = net.restricted_elements(d.indices);
    E_ = element_rows(r, V_);
    C_ = r.coefficients;
    // (G W)^T U without forming G W: (U^T G W)^T, U^T G is m x n and sparse-times-dense.
    const Matrix GtU = net.G().transpose() * d.U;  // n x m
    P_ = (Wt.transpose() * GtU) * d.PtU_inv;
  }
}

void ReducedNetworkModel::nonlinear_force(const Eigen::Ref<const Vector>& q, Vector& g_r) const {
  require(q.size() == r_, "reduced network: q_r has size ", q.size(), ", expected r = ", r_);
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

Matrix ReducedNetworkModel::nonlinear_jacobian(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == r_, "reduced network: q_r has size ", q.size(), ", expected r = ", r_);
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

void ReducedNetworkModel::add_nonlinear_jacobian(const Vector& q, double c, Matrix& S,
                                                 Matrix& scratch) const {
  require(q.size() == r_ && S.rows() == r_ && S.cols() == r_, "reduced network: q_r has size ",
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

double ReducedNetworkModel::nonlinear_energy(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == r_, "reduced network: q_r has size ", q.size(), ", expected r = ", r_);
  if (linear_) return 0.0;
  require(has_nonlinear_energy(),
          "reduced network: the reduced force has no energy (DEIM or a Petrov-Galerkin "
          "projection): only the full Galerkin and the ECSW treatments are gradients");
  const Vector s = E_ * q;
  double V = 0.0;
  for (Index e = 0; e < s.size(); ++e) {
    const double c[4] = {C_(e, 0), C_(e, 1), C_(e, 2), C_(e, 3)};
    V += energy_weights_[e] * element_energy(c, s[e]);
  }
  return V;
}

Vector ReducedNetworkModel::project(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == n_full_, "reduced network: the full state has size ", q.size(),
          ", expected n = ", n_full_);
  const Vector Wtq = W().transpose() * q;
  return WtV_lu_.solve(Wtq);
}

}  // namespace mor
