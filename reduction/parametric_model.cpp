// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/parametric_model.hpp"

#include <utility>

#include "src/core/errors.hpp"

namespace mor {

ParametricProjectedModel::ParametricProjectedModel(ParameterDomain domain, ProjectedModel reference,
                                                   const Vector& mu_ref,
                                                   const ParametricNetwork& net)
    : domain_(std::move(domain)),
      reference_(std::move(reference)),
      mu_ref_(mu_ref),
      force_(net.force) {
  domain_.check(mu_ref_, "parametric model: the reference point");
  require(net.unit.n() == reference_.full_size(),
          "parametric model: the network has n = ", net.unit.n(),
          ", the reference model's bases N = ", reference_.full_size(), " rows");
  require(!net.M.terms.empty() && !net.D.terms.empty() && !net.K.terms.empty(),
          "parametric model: M, D and K need at least one affine term each");
  force_ref_ = force_(mu_ref_);
  require(reference_.is_linear() || force_ref_ != 0.0,
          "parametric model: the force's coefficient is 0 at the reference point (",
          domain_.describe(mu_ref_), "): its reduced force would be lost");
  const Matrix& V = reference_.V();
  const Matrix& W = reference_.W();
  auto project = [&](const SparseMatrix& X) { return Matrix(W.transpose() * (X * V)); };
  M_r_ = net.M.map(project);
  D_r_ = net.D.map(project);
  K_r_ = net.K.map(project);
}

ProjectedModel ParametricProjectedModel::at(const Vector& mu) const {
  domain_.check(mu, "parametric model");
  const double s = reference_.is_linear() ? 1.0 : force_(mu) / force_ref_;
  return reference_.reparametrised(M_r_.at(mu), D_r_.at(mu), K_r_.at(mu), s);
}

}  // namespace mor
