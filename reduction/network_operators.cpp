// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/network_operators.hpp"

#include <memory>

#include "src/core/errors.hpp"

namespace mor {

void NetworkOperators::nonlinear_force(const Vector& q, Vector& g) const {
  const NonlinearNetwork& net = network();
  if (net.is_linear())
    g.setZero(net.n());
  else
    net.nonlinear_force(q, g);
}

Index NetworkOperators::n_elements() const {
  const NonlinearNetwork& net = network();
  return net.is_linear() ? 0 : net.n_elements();
}

ProjectedModel NetworkOperators::project(const Matrix& V, const Matrix& W,
                                         const ProjectionOptions& o) const {
  const NonlinearNetwork& net = network();
  require(o.nonlinear != NonlinearTreatment::tensor || net.is_linear(),
          "reduction.nonlinear = \"tensor\" is the chain's exact reduced cubic; a network's "
          "element laws take \"deim\", \"ecsw\" or \"full\"");
  require(o.nonlinear != NonlinearTreatment::ecsw || net.is_linear() || o.ecsw != nullptr,
          "reduction.nonlinear = \"ecsw\": no ECSW weights were trained");
  return ProjectedModel(net, V, W, o);
}

EmpiricalBalancingResult NetworkOperators::empirical_balancing(
    const EmpiricalBalancingOptions& o) const {
  return mor::empirical_balancing(network(), o);
}

}  // namespace mor
