// SPDX-License-Identifier: GPL-3.0-or-later
// What the spring-and-damper kinds (the chain, the lattice) share in reading [model]: the
// choices of damping and output quantity, and the checks after the keys are read.
#pragma once

#include <string>

#include "experiments/runner/keys.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/mass_spring_chain.hpp"
#include "models/spring_parameters.hpp"
#include "src/core/errors.hpp"

namespace mor::experiments {

inline constexpr Choice<SpringDamping> kSpringDampings[] = {{"chain", SpringDamping::dampers},
                                                            {"rayleigh", SpringDamping::rayleigh}};
inline constexpr Choice<OutputQuantity> kOutputQuantities[] = {
    {"position", OutputQuantity::position}, {"velocity", OutputQuantity::velocity}};

/// After a spring model's keys are read: alpha and beta need damping = "rayleigh" (the stored
/// configuration writes them as 0 for chain damping, so other values would be lost), then
/// validate(p), its message prefixed with the file. @throws InvalidArgument.
template <class P>
void check_spring_model(const TableReader& r, const std::string& source, const P& p) {
  require(p.damping == SpringDamping::rayleigh || (p.alpha == 0.0 && p.beta == 0.0),
          r.where(p.alpha != 0.0 ? "alpha" : "beta"),
          ": model: alpha and beta need damping = \"rayleigh\" (got damping = \"chain\")");
  try {
    validate(p);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(detail::concat(source, ": ", e.what()));
  }
}

/// The constants of a spring model's keys.
template <class P>
SpringConstants spring_constants(const P& p) {
  return {p.m, p.k_l, p.d, p.k_n, p.alpha, p.beta, p.damping};
}

/// The spring model p with the parameters of `domain` (names spring_parameter_keys allows) set
/// to mu; validated. @throws InvalidArgument as validate(p).
template <class P>
P spring_model_at(P p, const ParameterDomain& domain, const Vector& mu) {
  domain.check(mu, "parameters");
  for (Index j = 0; j < domain.size(); ++j) {
    const std::string& name = domain.parameters()[static_cast<std::size_t>(j)].name;
    double* key = name == "m"       ? &p.m
                  : name == "k_l"   ? &p.k_l
                  : name == "d"     ? &p.d
                  : name == "k_n"   ? &p.k_n
                  : name == "alpha" ? &p.alpha
                  : name == "beta"  ? &p.beta
                                    : nullptr;
    require(key != nullptr && spring_parameter_refusal(name, p.damping).empty(),
            "parameters: ", name, " is not a parameter of this model");
    *key = mu[j];
  }
  validate(p);
  return p;
}

/// The unit model of spring_parametric_network: m = k_l = d = k_n = 1, dampers.
template <class P>
P spring_unit_model(P p) {
  p.m = p.k_l = p.d = p.k_n = 1.0;
  p.damping = SpringDamping::dampers;
  p.alpha = p.beta = 0.0;
  return p;
}

}  // namespace mor::experiments
