// SPDX-License-Identifier: GPL-3.0-or-later
// FullModel's snapshot-method seam, for the kinds that do not offer it: the methods' checks
// (ModelSpec::projectable, simulation_balancing) refuse such a model before anything runs, so
// these are reached only by a method that skipped its check.
#include "experiments/runner/model_kind.hpp"

namespace mor::experiments {

namespace {
[[noreturn]] void refuse(const char* what) {
  throw InvalidArgument(detail::concat("this model has no ", what));
}
}  // namespace

ModelStructure lti_structure(const LinearSystem& system) {
  ModelStructure s;
  const bool first = std::holds_alternative<DescriptorSystem>(system);
  s.form = first ? ModelStructure::Form::first_order_lti : ModelStructure::Form::second_order_lti;
  s.size = std::visit([](const auto& x) { return x.n(); }, system);
  s.linear_first_order = first;
  return s;
}

NonlinearNetwork ModelSpec::network() const {
  throw InvalidArgument(detail::concat("model.type = \"", kind(),
                                       "\" is nonlinear and has no network form to export"));
}

void FullModel::nonlinear_force(const Vector&, Vector&) const {
  refuse("nodal nonlinear force to sample (it is not a second-order model)");
}

void FullModel::element_forces(const Vector&, Vector&) const {
  refuse("nonlinear elements to sample (use reduction.deim_sampling = \"nodes\")");
}

EcswResult FullModel::ecsw(const Matrix&, const Matrix&, const Matrix&, const EcswOptions&) const {
  refuse("ECSW (weighted elements of a network's force)");
}

ProjectedModel FullModel::project(const Matrix&, const Matrix&, const ProjectionOptions&) const {
  refuse("second-order projection (it is not a second-order model)");
}

EmpiricalBalancingResult FullModel::empirical_balancing(const EmpiricalBalancingOptions&) const {
  refuse("empirical balancing (implemented for the chain's structure)");
}

DifferentialBalancing FullModel::differential_balancing(const DifferentialGramianOptions&) const {
  refuse("differential balancing (implemented for second-order networks)");
}

}  // namespace mor::experiments
