// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/systems/parametric.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "src/core/errors.hpp"

namespace mor {

using detail::concat;

ParameterDomain::ParameterDomain(std::vector<Parameter> parameters) : p_(std::move(parameters)) {
  std::sort(p_.begin(), p_.end(),
            [](const Parameter& a, const Parameter& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < p_.size(); ++i) {
    const Parameter& p = p_[i];
    require(!p.name.empty(), "parameters: a parameter has an empty name");
    require(i == 0 || p_[i - 1].name != p.name, "parameters: '", p.name, "' is given twice");
    require(std::isfinite(p.min) && std::isfinite(p.max), "parameters: ", p.name,
            " needs finite bounds, got min = ", p.min, ", max = ", p.max);
    require(p.min < p.max, "parameters: ", p.name, " has an empty or inverted range: min = ", p.min,
            " must be below max = ", p.max);
    require(!p.log || p.min > 0.0, "parameters: ", p.name,
            " is sampled on a log scale, which needs min > 0, got min = ", p.min);
  }
}

std::vector<std::string> ParameterDomain::names() const {
  std::vector<std::string> n;
  for (const Parameter& p : p_) n.push_back(p.name);
  return n;
}

Index ParameterDomain::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < p_.size(); ++i)
    if (p_[i].name == name) return static_cast<Index>(i);
  return -1;
}

void ParameterDomain::check(const Vector& mu, std::string_view what) const {
  require(mu.size() == size(), what, ": a point of the parameter domain has ", size(),
          " entries, got ", mu.size());
  for (Index j = 0; j < size(); ++j) {
    const Parameter& p = p_[static_cast<std::size_t>(j)];
    const double slack = kContainsSlack * (p.max - p.min);
    require(std::isfinite(mu[j]) && mu[j] >= p.min - slack && mu[j] <= p.max + slack, what, ": ",
            p.name, " = ", mu[j], " is outside the parameter domain [", p.min, ", ", p.max, "]");
  }
}

bool ParameterDomain::contains(const Vector& mu) const {
  try {
    check(mu, "");
    return true;
  } catch (const InvalidArgument&) {
    return false;
  }
}

Matrix ParameterDomain::sample(Index k, std::uint64_t seed) const {
  require(k >= 0, "parameters: the number of sample points must be >= 0, got ", k);
  std::mt19937_64 gen(seed);
  // u in [0, 1) from the top 53 bits: the same on every platform (std::uniform_real_distribution
  // is not specified to be).
  auto uniform = [&] { return static_cast<double>(gen() >> 11) * 0x1.0p-53; };
  Matrix X(k, size());
  for (Index i = 0; i < k; ++i)
    for (Index j = 0; j < size(); ++j) {
      const Parameter& p = p_[static_cast<std::size_t>(j)];
      const double u = uniform();
      X(i, j) = p.log ? std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min)))
                      : p.min + u * (p.max - p.min);
      X(i, j) = std::clamp(X(i, j), p.min, p.max);
    }
  return X;
}

Vector ParameterDomain::center() const {
  Vector c(size());
  for (Index j = 0; j < size(); ++j) {
    const Parameter& p = p_[static_cast<std::size_t>(j)];
    c[j] = p.log ? std::sqrt(p.min * p.max) : 0.5 * (p.min + p.max);
  }
  return c;
}

std::string ParameterDomain::describe(const Vector& mu) const {
  std::string s;
  for (Index j = 0; j < size() && j < mu.size(); ++j)
    s += concat(j > 0 ? ", " : "", p_[static_cast<std::size_t>(j)].name, " = ", mu[j]);
  return s;
}

NonlinearNetwork ParametricNetwork::at(const Vector& mu) const {
  SecondOrderSystem sys = unit.linear_system();
  sys.M = M.at(mu);
  sys.D = D.at(mu);
  sys.K = K.at(mu);
  return NonlinearNetwork(std::move(sys), unit.G(), force(mu) * unit.coefficients());
}

}  // namespace mor
