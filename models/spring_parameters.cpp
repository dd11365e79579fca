// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/spring_parameters.hpp"

#include <algorithm>
#include <utility>

#include "src/core/errors.hpp"

namespace mor {

std::vector<std::string> spring_parameter_keys(SpringDamping damping) {
  if (damping == SpringDamping::rayleigh) return {"alpha", "beta", "k_l", "k_n", "m"};
  return {"d", "k_l", "k_n", "m"};
}

std::string spring_parameter_refusal(const std::string& key, SpringDamping damping) {
  const auto keys = spring_parameter_keys(damping);
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return "";
  if (key == "N" || key == "nx" || key == "ny")
    return "it sets the size of the state, which a parametric reduced model keeps fixed";
  if (key == "d")
    return "the model has damping = \"rayleigh\" (D = alpha M + beta K), where d does not enter";
  if (key == "alpha" || key == "beta")
    return "the model has damping = \"chain\" (D = d D_1), where alpha and beta do not enter; "
           "set model.damping = \"rayleigh\"";
  return "it is not a constant of the model's operators (parameters: m, k_l, k_n, and d or "
         "alpha and beta)";
}

ParametricNetwork spring_parametric_network(NonlinearNetwork unit, const SpringConstants& c,
                                            const ParameterDomain& domain) {
  for (const auto& name : domain.names()) {
    const std::string why = spring_parameter_refusal(name, c.damping);
    require(why.empty(), "parameters: ", name, " cannot be a parameter: ", why);
  }
  // theta = the key's value if it is fixed, else the parameter.
  auto key = [&](const char* name, double value) {
    const Index j = domain.index_of(name);
    return j < 0 ? AffineCoefficient{value, {}} : AffineCoefficient{1.0, {j}};
  };
  auto product = [](AffineCoefficient a, const AffineCoefficient& b) {
    a.scale *= b.scale;
    a.factors.insert(a.factors.end(), b.factors.begin(), b.factors.end());
    return a;
  };
  const SecondOrderSystem s = unit.linear_system();  // a copy: unit moves below
  ParametricNetwork p{std::move(unit), {}, {}, {}, key("k_n", c.k_n)};
  const AffineCoefficient m = key("m", c.m), k_l = key("k_l", c.k_l);
  p.M.terms.push_back({m, s.M});
  p.K.terms.push_back({k_l, s.K});
  if (c.damping == SpringDamping::rayleigh) {
    p.D.terms.push_back({product(key("alpha", c.alpha), m), s.M});
    p.D.terms.push_back({product(key("beta", c.beta), k_l), s.K});
  } else {
    p.D.terms.push_back({key("d", c.d), s.D});
  }
  return p;
}

}  // namespace mor
