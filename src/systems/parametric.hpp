// SPDX-License-Identifier: GPL-3.0-or-later
// Parametric systems: a parameter domain and operators affine in functions of the parameters.
//
// Domain: a box P = [a_1, b_1] x ... x [a_p, b_p], each parameter on a linear scale or a log
// scale (sampled uniformly in log mu; then a_j > 0). Parameters are held sorted by name: a point
// mu is a vector in that order.
//
// Affine operators (Benner, Gugercin & Willcox, SIAM Review 57 (2015), sec. 3.1):
//   X(mu) = sum_i theta_i(mu) X_i,   theta_i(mu) = s_i prod_{j in J_i} mu_j,
// the J_i possibly empty (a constant term) or of several parameters (Rayleigh damping's
// beta k_l K_1). A projection W^T X(mu) V = sum_i theta_i(mu) (W^T X_i V) is then formed once per
// term offline and evaluated at any mu online at a cost independent of n.
//
// A parametric network (src/systems/nonlinear_network.hpp): M, D, K affine in mu, B, Cp, Cv and
// G fixed, and the element laws scaled by one coefficient, phi(mu; s) = theta_f(mu) phi_1(s)
// (the cubic springs' k_n; theta_f = 1 for a network whose laws do not depend on mu).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/types.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// One parameter: its name and range [min, max], min < max, both finite; log: sampled uniformly
/// in log mu (then min > 0).
struct Parameter {
  std::string name;
  double min = 0.0, max = 0.0;
  bool log = false;
};

class ParameterDomain {
 public:
  /// No parameters (a model at one point).
  ParameterDomain() = default;
  /// @throws InvalidArgument naming the parameter and the value for: an empty name, a
  ///         repeated name, non-finite bounds, min >= max (an empty or inverted range), a log
  ///         scale with min <= 0.
  explicit ParameterDomain(std::vector<Parameter> parameters);

  Index size() const { return static_cast<Index>(p_.size()); }
  bool empty() const { return p_.empty(); }
  /// Sorted by name: the order of a point's entries.
  const std::vector<Parameter>& parameters() const { return p_; }
  std::vector<std::string> names() const;
  /// The position of `name`, or -1.
  Index index_of(std::string_view name) const;

  /// @throws InvalidArgument naming `what`, the parameter, the value and the range if mu has the
  ///         wrong size, a non-finite entry or an entry outside its range (relative slack
  ///         kContainsSlack of the range, for points computed in the other scale).
  void check(const Vector& mu, std::string_view what) const;
  bool contains(const Vector& mu) const;
  static constexpr double kContainsSlack = 1e-12;

  /// k points (rows of a k x p matrix), each entry uniform in its parameter's scale, from a
  /// 64-bit Mersenne twister seeded with `seed` (the same points on every platform).
  Matrix sample(Index k, std::uint64_t seed) const;
  /// The midpoint of each range in its scale (the geometric mean for a log scale).
  Vector center() const;
  /// "name = value, name = value" (shortest round-trip values).
  std::string describe(const Vector& mu) const;

 private:
  std::vector<Parameter> p_;
};

/// theta(mu) = scale prod_{j in factors} mu_j.
struct AffineCoefficient {
  double scale = 1.0;
  std::vector<Index> factors;
  double operator()(const Vector& mu) const {
    double t = scale;
    for (Index j : factors) t *= mu[j];
    return t;
  }
};

/// X(mu) = sum_i theta_i(mu) X_i.
template <class X>
struct AffineOperator {
  struct Term {
    AffineCoefficient theta;
    X value;
  };
  std::vector<Term> terms;

  /// The sum at mu (a zero-term operator has no size: callers add at least one term).
  X at(const Vector& mu) const {
    X sum = terms.at(0).theta(mu) * terms[0].value;
    for (std::size_t i = 1; i < terms.size(); ++i) sum += terms[i].theta(mu) * terms[i].value;
    return sum;
  }
  /// The operator with every term mapped by f (a projection W^T X_i V).
  template <class F>
  auto map(F f) const {
    using Y = decltype(f(terms.front().value));
    AffineOperator<Y> out;
    for (const Term& t : terms) out.terms.push_back({t.theta, f(t.value)});
    return out;
  }
};

/// A network with M, D, K affine in mu and its element laws scaled by force(mu).
struct ParametricNetwork {
  /// B, Cp, Cv, G and the laws phi_1 (force(mu) = 1); its M, D, K are not used.
  NonlinearNetwork unit;
  AffineOperator<SparseMatrix> M, D, K;
  AffineCoefficient force;

  /// The network at mu. @throws InvalidArgument as NonlinearNetwork's constructor.
  NonlinearNetwork at(const Vector& mu) const;
};

}  // namespace mor
