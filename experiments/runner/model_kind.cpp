// SPDX-License-Identifier: GPL-3.0-or-later
// What the model kinds share: the structure of an LTI model, and the refusal of a network form.
#include "experiments/runner/model_kind.hpp"

namespace mor::experiments {

ModelStructure lti_structure(const LinearSystem& system) {
  ModelStructure s;
  const bool first = std::holds_alternative<DescriptorSystem>(system);
  s.form = first ? ModelStructure::Form::first_order_lti : ModelStructure::Form::second_order_lti;
  s.size = std::visit([](const auto& x) { return x.n(); }, system);
  s.linear_first_order = first;
  return s;
}

const NetworkOperators& network_of(const FullModel& model) {
  const NetworkOperators* net = model.network_operators();
  require(net != nullptr,
          "this model is not a second-order network M q'' + D q' + K q + G^T phi(G q) = B u: "
          "it has no force to sample, project or balance from simulations");
  return *net;
}

NonlinearNetwork ModelSpec::network() const {
  throw InvalidArgument(detail::concat("model.type = \"", kind(),
                                       "\" is nonlinear and has no network form to export"));
}

std::string ModelSpec::parameter_refusal(const std::string& name) const {
  (void)name;
  return detail::concat("model.type = \"", kind(),
                        "\" has no parameters (the kinds with parameters: mass_spring_chain, "
                        "lattice, and file models with affine terms X_<name>)");
}

std::shared_ptr<const ModelSpec> ModelSpec::at(const ParameterDomain& domain,
                                               const Vector& mu) const {
  (void)mu;
  throw InvalidArgument(detail::concat("model.type = \"", kind(), "\" has no parameters (",
                                       domain.size(), " given)"));
}

ParametricNetwork ModelSpec::parametric_network(const ParameterDomain& domain) const {
  throw InvalidArgument(detail::concat("model.type = \"", kind(), "\" has no parameters (",
                                       domain.size(), " given)"));
}

ParametricLinearSystem ModelSpec::parametric_linear_system(const ParameterDomain& domain) const {
  if (projectable()) return linear_part(parametric_network(domain));
  throw InvalidArgument(detail::concat("model.type = \"", kind(),
                                       "\" has no parametric linear system (", domain.size(),
                                       " parameters given)"));
}

std::vector<std::string> ModelSpec::required_parameters() const {
  return {};
}

}  // namespace mor::experiments
