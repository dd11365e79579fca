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

std::string ParameterDomain::factor_names(const std::vector<Index>& factors) const {
  std::string f;
  for (Index j : factors) f += (f.empty() ? "" : "*") + p_.at(static_cast<std::size_t>(j)).name;
  return f;
}

NonlinearNetwork ParametricNetwork::at(const Vector& mu) const {
  SecondOrderSystem sys = unit.linear_system();
  sys.M = M.at(mu);
  sys.D = D.at(mu);
  sys.K = K.at(mu);
  return NonlinearNetwork(std::move(sys), unit.G(), force(mu) * unit.coefficients());
}

namespace {

template <class X>
AffineOperator<X> constant(X value) {
  AffineOperator<X> op;
  op.terms.push_back({AffineCoefficient{}, std::move(value)});
  return op;
}

/// The terms of op, each mapped by f (a block placement), plus `extra` as a constant term.
template <class F>
AffineOperator<SparseMatrix> placed(const AffineOperator<SparseMatrix>& op, F f,
                                    const SparseMatrix* extra = nullptr) {
  AffineOperator<SparseMatrix> out = op.map(f);
  if (extra != nullptr) out.terms.insert(out.terms.begin(), {AffineCoefficient{}, *extra});
  return out;
}

/// X placed at block (bi, bj) of a (2n) x (cols) matrix (n rows per block row).
SparseMatrix block(const SparseMatrix& X, Index rows, Index cols, Index r0, Index c0,
                   double scale) {
  std::vector<Eigen::Triplet<double, Index>> t;
  t.reserve(static_cast<std::size_t>(X.nonZeros()));
  for (Index j = 0; j < X.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(X, j); it; ++it)
      t.emplace_back(r0 + it.row(), c0 + it.col(), scale * it.value());
  SparseMatrix out(rows, cols);
  out.setFromTriplets(t.begin(), t.end());
  return out;
}

}  // namespace

SecondOrderSystem ParametricSecondOrderSystem::at(const Vector& mu) const {
  SecondOrderSystem s{M.at(mu), D.at(mu), K.at(mu), B.at(mu), Cp.at(mu), Cv.at(mu)};
  validate(s);
  return s;
}

DescriptorSystem ParametricDescriptorSystem::at(const Vector& mu) const {
  DescriptorSystem s{E.at(mu), A.at(mu), B.at(mu), C.at(mu), D_ff.at(mu)};
  validate(s);
  return s;
}

ParametricDescriptorSystem to_descriptor(const ParametricSecondOrderSystem& sys) {
  const Index n = sys.M.terms.at(0).value.rows();
  const Index N = 2 * n;
  SparseMatrix I_top(N, N), I_right(N, N);
  {
    SparseMatrix I(n, n);
    I.setIdentity();
    I_top = block(I, N, N, 0, 0, 1.0);
    I_right = block(I, N, N, 0, n, 1.0);
  }
  ParametricDescriptorSystem out;
  out.E = placed(
      sys.M, [&](const SparseMatrix& X) { return block(X, N, N, n, n, 1.0); }, &I_top);
  AffineOperator<SparseMatrix> A = placed(
      sys.K, [&](const SparseMatrix& X) { return block(X, N, N, n, 0, -1.0); }, &I_right);
  for (const auto& t : sys.D.terms) A.terms.push_back({t.theta, block(t.value, N, N, n, n, -1.0)});
  out.A = std::move(A);
  const Index m = sys.B.terms.at(0).value.cols();
  out.B = sys.B.map([&](const SparseMatrix& X) { return block(X, N, m, n, 0, 1.0); });
  const Index p = sys.Cp.terms.at(0).value.rows();
  AffineOperator<SparseMatrix> C =
      sys.Cp.map([&](const SparseMatrix& X) { return block(X, p, N, 0, 0, 1.0); });
  for (const auto& t : sys.Cv.terms) C.terms.push_back({t.theta, block(t.value, p, N, 0, n, 1.0)});
  out.C = std::move(C);
  out.D_ff = constant(Matrix(Matrix::Zero(p, m)));
  return out;
}

ParametricDescriptorSystem to_descriptor_energy(const ParametricSecondOrderSystem& sys) {
  const Index n = sys.M.terms.at(0).value.rows();
  const Index N = 2 * n;
  ParametricDescriptorSystem out = to_descriptor(sys);
  AffineOperator<SparseMatrix> E =
      sys.K.map([&](const SparseMatrix& X) { return block(X, N, N, 0, 0, 1.0); });
  for (const auto& t : sys.M.terms) E.terms.push_back({t.theta, block(t.value, N, N, n, n, 1.0)});
  out.E = std::move(E);
  AffineOperator<SparseMatrix> A;
  for (const auto& t : sys.K.terms) {
    SparseMatrix X = block(t.value, N, N, 0, n, 1.0);
    X += block(t.value, N, N, n, 0, -1.0);
    A.terms.push_back({t.theta, std::move(X)});
  }
  for (const auto& t : sys.D.terms) A.terms.push_back({t.theta, block(t.value, N, N, n, n, -1.0)});
  out.A = std::move(A);
  return out;
}

ParametricDescriptorSystem first_order_form(const ParametricLinearSystem& sys) {
  if (const auto* d = std::get_if<ParametricDescriptorSystem>(&sys)) return *d;
  return to_descriptor(std::get<ParametricSecondOrderSystem>(sys));
}

std::variant<DescriptorSystem, SecondOrderSystem> at(const ParametricLinearSystem& sys,
                                                     const Vector& mu) {
  if (const auto* d = std::get_if<ParametricDescriptorSystem>(&sys)) return d->at(mu);
  return std::get<ParametricSecondOrderSystem>(sys).at(mu);
}

ParametricSecondOrderSystem linear_part(const ParametricNetwork& net) {
  const SecondOrderSystem& s = net.unit.linear_system();
  ParametricSecondOrderSystem out;
  out.M = net.M;
  out.D = net.D;
  out.K = net.K;
  out.B = constant(s.B);
  out.Cp = constant(s.Cp);
  out.Cv = constant(s.Cv);
  return out;
}

}  // namespace mor
