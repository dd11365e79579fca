// SPDX-License-Identifier: GPL-3.0-or-later
// The nonlinear second-order network (see the header).
#include "src/systems/nonlinear_network.hpp"

#include <algorithm>
#include <cmath>

#include "src/core/errors.hpp"

namespace mor {

namespace {

/// Position of entry (i, j) in the compressed column-major storage of A, or -1.
Index position(const SparseMatrix& A, Index i, Index j) {
  const int* outer = A.outerIndexPtr();
  const int* inner = A.innerIndexPtr();
  const int* begin = inner + outer[j];
  const int* end = inner + outer[j + 1];
  const int* it = std::lower_bound(begin, end, static_cast<int>(i));
  return (it != end && *it == i) ? static_cast<Index>(it - inner) : Index{-1};
}

std::vector<Index> checked_unique(const std::vector<Index>& idx, Index limit, const char* what) {
  std::vector<Index> sorted = idx;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    require(sorted[k] >= 0 && sorted[k] < limit, "network: ", what, " index ", sorted[k],
            " is outside [0, ", limit, ")");
    require(k == 0 || sorted[k] != sorted[k - 1], "network: ", what, " index ", sorted[k],
            " is repeated");
  }
  return sorted;
}

/// The submatrix A(rows, cols) of a column-major sparse matrix; rows in the given order, cols
/// ascending.
SparseMatrix submatrix(const SparseMatrix& A, const std::vector<Index>& rows,
                       const std::vector<Index>& cols) {
  std::vector<Index> local(static_cast<std::size_t>(A.rows()), -1);
  for (std::size_t i = 0; i < rows.size(); ++i) local[static_cast<std::size_t>(rows[i])] = i;
  std::vector<Triplet> t;
  for (std::size_t jj = 0; jj < cols.size(); ++jj)
    for (SparseMatrix::InnerIterator it(A, cols[jj]); it; ++it) {
      const Index li = local[static_cast<std::size_t>(it.row())];
      if (li >= 0) t.emplace_back(static_cast<int>(li), static_cast<int>(jj), it.value());
    }
  SparseMatrix S(static_cast<Index>(rows.size()), static_cast<Index>(cols.size()));
  S.setFromTriplets(t.begin(), t.end());
  S.makeCompressed();
  return S;
}

}  // namespace

NonlinearNetwork::NonlinearNetwork(SecondOrderSystem sys, SparseMatrix G, Matrix coefficients)
    : sys_(std::move(sys)), G_(std::move(G)) {
  validate(sys_);
  const Index n = sys_.n();
  const Index m = G_.rows();
  require(m == 0 || G_.cols() == n, "network: G is ", G_.rows(), " x ", G_.cols(),
          ", expected m x n with n = ", n, " (the size of M)");
  if (m == 0) G_.resize(0, n);
  require(coefficients.cols() == 4 || (m == 0 && coefficients.size() == 0), "network: phi has ",
          coefficients.cols(), " columns, expected 4 (the coefficients of s^2, s^3, s^4, s^5)");
  require(m == 0 || coefficients.rows() == m || coefficients.rows() == 1, "network: phi has ",
          coefficients.rows(), " rows, expected m = ", m, " (one per element of G) or 1");
  for (Index j = 0; j < coefficients.cols(); ++j)
    for (Index i = 0; i < coefficients.rows(); ++i)
      require(std::isfinite(coefficients(i, j)), "network: phi(", i + 1, ", ", j + 1, ") is ",
              coefficients(i, j));
  for (Index k = 0; k < G_.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(G_, k); it; ++it)
      require(std::isfinite(it.value()), "network: G(", it.row() + 1, ", ", it.col() + 1, ") is ",
              it.value());
  coefficients_ =
      (m > 0 && coefficients.rows() == 1) ? Matrix(coefficients.replicate(m, 1)) : coefficients;
  if (m == 0) coefficients_.resize(0, 4);
  G_.prune(0.0);
  G_.makeCompressed();
  Gt_ = G_.transpose();
  Gt_.makeCompressed();
  linear_ = m == 0 || G_.nonZeros() == 0 || (coefficients_.array() == 0.0).all();
  sys_.M.makeCompressed();
  sys_.D.makeCompressed();
  sys_.K.makeCompressed();
  if (sys_.M.nonZeros() == n && n > 0) {
    const double m0 = sys_.M.coeff(0, 0);
    bool uniform = m0 > 0.0;
    for (Index j = 0; j < n && uniform; ++j) {
      SparseMatrix::InnerIterator it(sys_.M, j);
      uniform = it && it.row() == j && it.value() == m0;
    }
    if (uniform) uniform_mass_ = m0;
  }
}

Matrix NonlinearNetwork::compact_coefficients() const {
  const Index m = coefficients_.rows();
  if (m == 0) return Matrix(0, 4);
  for (Index e = 1; e < m; ++e)
    if (coefficients_.row(e) != coefficients_.row(0)) return coefficients_;
  return coefficients_.topRows(1);
}

void NonlinearNetwork::element_forces(const Eigen::Ref<const Vector>& q, Vector& f) const {
  require(q.size() == n(), "network: q has size ", q.size(), ", expected n = ", n());
  f.noalias() = G_ * q;
  const double* c = coefficients_.data();
  const Index m = f.size();
  double dphi;
  for (Index e = 0; e < m; ++e) {
    const double cs[4] = {c[e], c[e + m], c[e + 2 * m], c[e + 3 * m]};
    element_law(cs, f[e], f[e], dphi);
  }
}

void NonlinearNetwork::nonlinear_force(const Eigen::Ref<const Vector>& q, Vector& g) const {
  thread_local Vector f;  // as in force(): no allocation per evaluation
  element_forces(q, f);
  g.noalias() = Gt_ * f;
}

SparseMatrix NonlinearNetwork::nonlinear_jacobian(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == n(), "network: q has size ", q.size(), ", expected n = ", n());
  const Vector s = G_ * q;
  Vector w(s.size());
  for (Index e = 0; e < s.size(); ++e) {
    const double cs[4] = {coefficients_(e, 0), coefficients_(e, 1), coefficients_(e, 2),
                          coefficients_(e, 3)};
    double phi;
    element_law(cs, s[e], phi, w[e]);
  }
  SparseMatrix J = Gt_ * w.asDiagonal() * G_;
  J.makeCompressed();
  return J;
}

RestrictedNonlinearity NonlinearNetwork::restricted_rows(const std::vector<Index>& rows) const {
  checked_unique(rows, n(), "row");
  RestrictedNonlinearity r;
  r.rows = rows;
  // The elements in the support of the rows: the nonzeros of the columns `rows` of G.
  std::vector<char> used(static_cast<std::size_t>(n_elements()), 0);
  for (Index i : rows)
    for (SparseMatrix::InnerIterator it(G_, i); it; ++it)
      used[static_cast<std::size_t>(it.row())] = 1;
  for (Index e = 0; e < n_elements(); ++e)
    if (used[static_cast<std::size_t>(e)]) r.elements.push_back(e);
  RestrictedNonlinearity from_elements = restricted_elements(r.elements);
  r.dofs = std::move(from_elements.dofs);
  r.G_local = std::move(from_elements.G_local);
  r.coefficients = std::move(from_elements.coefficients);
  r.A_local = submatrix(Gt_, rows, r.elements);
  return r;
}

RestrictedNonlinearity NonlinearNetwork::restricted_elements(
    const std::vector<Index>& elements) const {
  checked_unique(elements, n_elements(), "element");
  RestrictedNonlinearity r;
  r.elements = elements;
  std::vector<char> used(static_cast<std::size_t>(n()), 0);
  for (Index e : elements)
    for (SparseMatrix::InnerIterator it(Gt_, e); it; ++it)
      used[static_cast<std::size_t>(it.row())] = 1;
  for (Index j = 0; j < n(); ++j)
    if (used[static_cast<std::size_t>(j)]) r.dofs.push_back(j);
  r.G_local = submatrix(G_, elements, r.dofs);
  r.coefficients.resize(static_cast<Index>(elements.size()), 4);
  for (std::size_t k = 0; k < elements.size(); ++k)
    r.coefficients.row(static_cast<Index>(k)) = coefficients_.row(elements[k]);
  return r;
}

double NonlinearNetwork::kinetic_energy(const Vector& v) const {
  return 0.5 * v.dot(sys_.M * v);
}

double NonlinearNetwork::potential_energy(const Vector& q) const {
  double V = 0.5 * q.dot(sys_.K * q);
  if (!linear_) {
    const Vector s = G_ * q;
    for (Index e = 0; e < s.size(); ++e) {
      const double cs[4] = {coefficients_(e, 0), coefficients_(e, 1), coefficients_(e, 2),
                            coefficients_(e, 3)};
      V += element_energy(cs, s[e]);
    }
  }
  return V;
}

double NonlinearNetwork::dissipation_power(const Vector& v) const {
  return v.dot(sys_.D * v);
}

double NonlinearNetwork::input_power(const Vector& v, const Vector& u) const {
  return v.dot(sys_.B * u);
}

// ---------------------------------------------------------------------------------------------

NonlinearNetwork::Workspace::Workspace(const NonlinearNetwork& network, SparseBackend backend)
    : net_(network), mass_(make_sparse_solver(backend)), iteration_(make_sparse_solver(backend)) {
  const SecondOrderSystem& s = net_.sys_;
  mass_->analyze_pattern(s.M);
  mass_->factorize(s.M);
  // The union pattern of M, D, K and G^T G (ones: no cancellation can drop an entry).
  auto ones = [](const SparseMatrix& A) {
    SparseMatrix P = A;
    for (Index k = 0; k < P.nonZeros(); ++k) P.valuePtr()[k] = 1.0;
    return P;
  };
  SparseMatrix pattern = ones(s.M) + ones(s.D) + ones(s.K);
  if (!net_.linear_) {
    const SparseMatrix Gp = ones(net_.G_);
    pattern += SparseMatrix(Gp.transpose() * Gp);
  }
  S_ = pattern;
  S_.makeCompressed();
  auto positions = [&](const SparseMatrix& A) {
    std::vector<Index> pos;
    pos.reserve(static_cast<std::size_t>(A.nonZeros()));
    for (Index j = 0; j < A.outerSize(); ++j)
      for (SparseMatrix::InnerIterator it(A, j); it; ++it)
        pos.push_back(position(S_, it.row(), it.col()));
    return pos;
  };
  m_pos_ = positions(s.M);
  d_pos_ = positions(s.D);
  k_pos_ = positions(s.K);
  if (!net_.linear_) {
    // Element e adds phi_e' G_ei G_ej to S(i, j) for every pair of its nonzeros.
    const SparseMatrix& Gt = net_.Gt_;
    for (Index e = 0; e < Gt.outerSize(); ++e)
      for (SparseMatrix::InnerIterator a(Gt, e); a; ++a)
        for (SparseMatrix::InnerIterator b(Gt, e); b; ++b) {
          j_pos_.push_back(position(S_, a.row(), b.row()));
          j_elem_.push_back(e);
          j_coef_.push_back(a.value() * b.value());
        }
    s_.resize(net_.n_elements());
    dphi_.resize(net_.n_elements());
  }
  iteration_->analyze_pattern(S_);
}

void NonlinearNetwork::Workspace::solve_mass(const Vector& r, Vector& x) {
  if (net_.uniform_mass_)
    x = r / *net_.uniform_mass_;
  else
    mass_->solve(r, x);
}

void NonlinearNetwork::Workspace::factorize_iteration(double a, double b, double c,
                                                      const Vector& q) {
  if (net_.linear_ && a == a_ && b == b_ && c == c_) return;
  const SecondOrderSystem& s = net_.sys_;
  double* val = S_.valuePtr();
  std::fill(val, val + S_.nonZeros(), 0.0);
  auto scatter = [val](const SparseMatrix& A, const std::vector<Index>& pos, double w) {
    const double* x = A.valuePtr();
    for (std::size_t k = 0; k < pos.size(); ++k) val[pos[k]] += w * x[k];
  };
  scatter(s.M, m_pos_, a);
  scatter(s.D, d_pos_, b);
  scatter(s.K, k_pos_, c);
  if (!net_.linear_) {
    require(q.size() == net_.n(), "network: factorize_iteration got q of size ", q.size(),
            ", expected n = ", net_.n());
    s_.noalias() = net_.G_ * q;
    const Matrix& C = net_.coefficients_;
    for (Index e = 0; e < s_.size(); ++e) {
      const double cs[4] = {C(e, 0), C(e, 1), C(e, 2), C(e, 3)};
      double phi;
      element_law(cs, s_[e], phi, dphi_[e]);
    }
    for (std::size_t k = 0; k < j_pos_.size(); ++k)
      val[j_pos_[k]] += c * dphi_[j_elem_[k]] * j_coef_[k];
  }
  // Varah's bound ||S^{-1}||_inf <= 1 / excess needs the rows of S (stored by columns).
  const Index n = S_.rows();
  row_diag_.setZero(n);
  row_off_.setZero(n);
  for (Index j = 0; j < S_.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(S_, j); it; ++it)
      (it.row() == j ? row_diag_ : row_off_)[it.row()] += std::abs(it.value());
  excess_ = n > 0 ? std::max((row_diag_ - row_off_).minCoeff(), 0.0) : 0.0;
  if (!std::isfinite(excess_)) excess_ = 0.0;
  iteration_->factorize(S_);
  ++factorizations_;
  a_ = a;
  b_ = b;
  c_ = c;
}

}  // namespace mor
