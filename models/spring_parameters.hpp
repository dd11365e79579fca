// SPDX-License-Identifier: GPL-3.0-or-later
// The parameters of the spring models (the chain, models/mass_spring_chain.hpp; the lattice,
// models/lattice.hpp) and their affine structure (src/systems/parametric.hpp). Both are
//   M = m M_1,  K = k_l K_1,  phi = k_n phi_1,
//   D = d D_1 (dampers, damping = "chain") or alpha M + beta K = alpha m M_1 + beta k_l K_1
//   (Rayleigh),
// M_1, K_1, D_1, phi_1 the model at m = k_l = d = k_n = 1: every operator is a sum of terms with
// coefficients that are products of the keys (beta k_l is one). The size keys (N; nx, ny) change
// the state dimension and are never parameters.
#pragma once

#include <string>
#include <vector>

#include "models/mass_spring_chain.hpp"
#include "src/systems/parametric.hpp"

namespace mor {

/// The values of a spring model's constants and its damping.
struct SpringConstants {
  double m = 1, k_l = 1, d = 1, k_n = 0, alpha = 0, beta = 0;
  SpringDamping damping = SpringDamping::dampers;
};

/// The keys that may be parameters with this damping: m, k_l, k_n, and d (dampers) or alpha and
/// beta (Rayleigh).
std::vector<std::string> spring_parameter_keys(SpringDamping damping);

/// Why `key` cannot be a parameter of a spring model with this damping ("" if it can), for
/// the refusal: a size key, a key of the other damping, or not a key of the model.
std::string spring_parameter_refusal(const std::string& key, SpringDamping damping);

/// The affine structure over `domain` (every name one of spring_parameter_keys(c.damping)): unit
/// is the model's network at m = k_l = d = k_n = 1 with dampers; the constants not in the domain
/// keep their values in c.
/// @throws InvalidArgument naming a parameter that is not a key of this model.
ParametricNetwork spring_parametric_network(NonlinearNetwork unit, const SpringConstants& c,
                                            const ParameterDomain& domain);

}  // namespace mor
