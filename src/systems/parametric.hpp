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

#include <variant>

#include "src/core/types.hpp"
#include "src/systems/lti.hpp"
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
  /// The parameters a coefficient multiplies, "beta*k_l" ("" for a constant).
  std::string factor_names(const std::vector<Index>& factors) const;

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

/// A second-order LTI system affine in mu: M(mu) q'' + D(mu) q' + K(mu) q = B(mu) u,
/// y = Cp(mu) q + Cv(mu) q' (a fixed matrix is one constant term).
struct ParametricSecondOrderSystem {
  AffineOperator<SparseMatrix> M, D, K, B, Cp, Cv;
  /// @throws InvalidArgument as validate(SecondOrderSystem).
  SecondOrderSystem at(const Vector& mu) const;
};

/// A first-order LTI system affine in mu: E(mu) x' = A(mu) x + B(mu) u, y = C(mu) x + D_ff u.
struct ParametricDescriptorSystem {
  AffineOperator<SparseMatrix> E, A, B, C;
  AffineOperator<Matrix> D_ff;  ///< p x m
  /// @throws InvalidArgument as validate(DescriptorSystem).
  DescriptorSystem at(const Vector& mu) const;
};

/// What the linear methods reduce: the system in its own form.
using ParametricLinearSystem =
    std::variant<ParametricDescriptorSystem, ParametricSecondOrderSystem>;

/// The first-order form of each term (to_descriptor in src/systems/lti.hpp, x = [q; v]):
///   E(mu) = [I 0; 0 M(mu)],  A(mu) = [0 I; -K(mu) -D(mu)],  B = [0; B(mu)],  C = [Cp Cv],
/// the identities a constant term of E and of A; to_descriptor(sys).at(mu) equals
/// to_descriptor(sys.at(mu)).
ParametricDescriptorSystem to_descriptor(const ParametricSecondOrderSystem& sys);
/// The energy form of the first-order form, H(mu) times each equation, H = diag(K(mu), I):
///   E(mu) = [K(mu) 0; 0 M(mu)],  A(mu) = [0 K(mu); -K(mu) -D(mu)],  B = [0; B(mu)],  C = [Cp Cv],
/// the same transfer function where K(mu) is nonsingular. For M, D, K symmetric positive
/// definite, E is symmetric positive definite and A + A^T = diag(0, -2 D) <= 0: a Galerkin
/// projection V^T E V, V^T A V is then asymptotically stable at every mu (the energy
/// V(x) = x^T E x decreases), which W = V of the plain first-order form does not promise.
ParametricDescriptorSystem to_descriptor_energy(const ParametricSecondOrderSystem& sys);
/// The first-order form of either form (a first-order system as it is).
ParametricDescriptorSystem first_order_form(const ParametricLinearSystem& sys);
/// The system at mu, in its form.
std::variant<DescriptorSystem, SecondOrderSystem> at(const ParametricLinearSystem& sys,
                                                     const Vector& mu);
/// The second-order linear part of a network: M, D, K affine, B, Cp, Cv constant (its force
/// is left out: a linear method reduces the linearisation about rest, where it vanishes).
ParametricSecondOrderSystem linear_part(const ParametricNetwork& net);

}  // namespace mor
