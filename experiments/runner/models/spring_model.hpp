// SPDX-License-Identifier: GPL-3.0-or-later
// What the spring-and-damper kinds (the chain, the lattice) share in reading [model]: the
// choices of damping and output quantity, and the checks after the keys are read.
#pragma once

#include <string>

#include "experiments/runner/keys.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/mass_spring_chain.hpp"
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

}  // namespace mor::experiments
