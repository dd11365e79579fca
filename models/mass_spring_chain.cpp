// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mass_spring_chain.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "src/core/errors.hpp"

namespace mor {

void validate_spring_constants(const char* model, double m, double k_l, double d, double k_n,
                               double alpha, double beta) {
  auto check = [model](double value, const char* name, bool positive) {
    require(std::isfinite(value), model, ": parameter ", name, " must be finite, got ", value);
    if (positive)
      require(value > 0.0, model, ": parameter ", name, " must be > 0, got ", value);
    else
      require(value >= 0.0, model, ": parameter ", name, " must be >= 0, got ", value);
  };
  check(m, "m", true);
  check(k_l, "k_l", false);
  check(d, "d", false);
  check(k_n, "k_n", false);
  check(alpha, "alpha", false);
  check(beta, "beta", false);
}

void validate(const ChainParameters& p) {
  // The iteration matrix has 3N - 2 entries indexed by int (CSC for SuiteSparse).
  constexpr Index kMaxN = (std::numeric_limits<int>::max() - 2) / 3;
  require(p.N >= 1, "chain: N must be a positive number of masses, got N = ", p.N);
  require(p.N <= kMaxN, "chain: N = ", p.N, " exceeds the largest supported size ", kMaxN);
  validate_spring_constants("chain", p.m, p.k_l, p.d, p.k_n, p.alpha, p.beta);
  for (Index i : p.inputs)
    require(i >= 1 && i <= p.N, "chain: input mass index ", i, " is outside [1, N = ", p.N, "]");
  for (Index i : p.outputs)
    require(i >= 1 && i <= p.N, "chain: output mass index ", i, " is outside [1, N = ", p.N, "]");
}

MassSpringChain::MassSpringChain(const ChainParameters& params) : params_(params), n_(params.N) {
  validate(params_);
  for (Index i : params_.inputs) in_.push_back(i - 1);
  for (Index i : params_.outputs) out_.push_back(i - 1);
  if (in_.empty()) in_.push_back(n_ - 1);
  if (out_.empty()) out_.push_back(n_ - 1);
  k_diag_ = 2.0 * params_.k_l;
  k_off_ = -params_.k_l;
  if (params_.damping == SpringDamping::dampers) {
    d_diag_ = 2.0 * params_.d;
    d_off_ = -params_.d;
  } else {
    d_diag_ = params_.alpha * params_.m + params_.beta * k_diag_;
    d_off_ = params_.beta * k_off_;
  }
}

void MassSpringChain::output(const Vector& q, const Vector& v, Vector& y) const {
  const Vector& x = params_.output_quantity == OutputQuantity::position ? q : v;
  y.resize(n_outputs());
  for (std::size_t j = 0; j < out_.size(); ++j) y[static_cast<Index>(j)] = x[out_[j]];
}

void MassSpringChain::nonlinear_force(const Vector& q, Vector& g) const {
  g.resize(n_);
  const double kn = params_.k_n;
  for (Index i = 0; i < n_; ++i) {
    const double el = q[i] - (i > 0 ? q[i - 1] : 0.0);
    const double er = q[i] - (i + 1 < n_ ? q[i + 1] : 0.0);
    g[i] = kn * (el * el * el + er * er * er);
  }
}

namespace {
/// min over the rows first .. first + count - 1 of an n x n symmetric tridiagonal matrix of
/// S_ii - |S_{i,i-1}| - |S_{i,i+1}|, with d[i] = S(first + i, first + i) and e[i] the coupling
/// of row first + i to row first + i - 1 (i = 0 .. count; the couplings to the walls beyond rows
/// 0 and n - 1 are not read). Floored at 0: the bound it gives needs a positive excess.
double row_excess(Index n, Index first, Index count, const double* d, const double* e) {
  double excess = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < count; ++i) {
    const Index row = first + i;
    const double left = row > 0 ? std::abs(e[i]) : 0.0;
    const double right = row + 1 < n ? std::abs(e[i + 1]) : 0.0;
    excess = std::min(excess, d[i] - left - right);
  }
  return std::max(excess, 0.0);
}

/// Symmetric tridiagonal matrix from its diagonal and off-diagonal (size n - 1).
SparseMatrix tridiagonal(const Vector& diag, const Vector& off) {
  const Index n = diag.size();
  std::vector<Triplet> t;
  t.reserve(static_cast<std::size_t>(3 * n));
  for (Index i = 0; i < n; ++i) {
    t.emplace_back(static_cast<int>(i), static_cast<int>(i), diag[i]);
    if (i + 1 < n) {
      t.emplace_back(static_cast<int>(i), static_cast<int>(i + 1), off[i]);
      t.emplace_back(static_cast<int>(i + 1), static_cast<int>(i), off[i]);
    }
  }
  SparseMatrix A(n, n);
  A.setFromTriplets(t.begin(), t.end());
  return A;
}

/// Elongations e_s = q_s - q_{s-1}, s = 0..N (0-based masses, walls at -1 and N).
Vector elongations(const Vector& q) {
  const Index N = q.size();
  Vector e(N + 1);
  e[0] = q[0];
  for (Index s = 1; s < N; ++s) e[s] = q[s] - q[s - 1];
  e[N] = -q[N - 1];
  return e;
}
}  // namespace

SparseMatrix MassSpringChain::nonlinear_jacobian(const Vector& q) const {
  const Vector e = elongations(q);
  const Vector ks = 3.0 * params_.k_n * e.array().square();  // tangent stiffness per spring
  const Index N = n_;
  Vector diag = ks.head(N) + ks.tail(N);
  Vector off = -ks.segment(1, std::max<Index>(N - 1, 0));
  return tridiagonal(diag, off);
}

SecondOrderSystem MassSpringChain::linear_system() const {
  const Index N = n_;
  SecondOrderSystem s;
  s.M = tridiagonal(Vector::Constant(N, params_.m), Vector::Zero(std::max<Index>(N - 1, 0)));
  s.M.prune(0.0);
  s.K = tridiagonal(Vector::Constant(N, k_diag_),
                    Vector::Constant(std::max<Index>(N - 1, 0), k_off_));
  s.D = tridiagonal(Vector::Constant(N, d_diag_),
                    Vector::Constant(std::max<Index>(N - 1, 0), d_off_));
  std::vector<Triplet> t;
  for (std::size_t j = 0; j < in_.size(); ++j)
    t.emplace_back(static_cast<int>(in_[j]), static_cast<int>(j), 1.0);
  s.B.resize(N, n_inputs());
  s.B.setFromTriplets(t.begin(), t.end());
  t.clear();
  for (std::size_t j = 0; j < out_.size(); ++j)
    t.emplace_back(static_cast<int>(j), static_cast<int>(out_[j]), 1.0);
  SparseMatrix C(n_outputs(), N);
  C.setFromTriplets(t.begin(), t.end());
  SparseMatrix Z(n_outputs(), N);
  if (params_.output_quantity == OutputQuantity::position) {
    s.Cp = C;
    s.Cv = Z;
  } else {
    s.Cp = Z;
    s.Cv = C;
  }
  return s;
}

DescriptorSystem MassSpringChain::descriptor_system() const {
  return to_descriptor(linear_system());
}

NonlinearNetwork MassSpringChain::network() const {
  const Index N = n_;
  if (is_linear()) return NonlinearNetwork(linear_system(), SparseMatrix(0, N), Matrix(0, 4));
  std::vector<Triplet> t;
  t.reserve(static_cast<std::size_t>(2 * N));
  for (Index s = 0; s <= N; ++s) {
    if (s < N) t.emplace_back(static_cast<int>(s), static_cast<int>(s), 1.0);
    if (s > 0) t.emplace_back(static_cast<int>(s), static_cast<int>(s - 1), -1.0);
  }
  SparseMatrix G(N + 1, N);
  G.setFromTriplets(t.begin(), t.end());
  Matrix phi = Matrix::Zero(1, 4);
  phi(0, 1) = params_.k_n;
  return NonlinearNetwork(linear_system(), std::move(G), std::move(phi));
}

double MassSpringChain::kinetic_energy(const Vector& v) const {
  return 0.5 * params_.m * v.squaredNorm();
}

double MassSpringChain::potential_energy(const Vector& q) const {
  const Vector e = elongations(q);
  return 0.5 * params_.k_l * e.squaredNorm() + 0.25 * params_.k_n * e.array().pow(4).sum();
}

double MassSpringChain::dissipation_power(const Vector& v) const {
  // v' D v for the three-point stencil, with the walls at rest.
  double s = 0.0;
  for (Index i = 0; i < n_; ++i) {
    const double vm = i > 0 ? v[i - 1] : 0.0, vp = i + 1 < n_ ? v[i + 1] : 0.0;
    s += v[i] * (d_diag_ * v[i] + d_off_ * (vm + vp));
  }
  return s;
}

double MassSpringChain::input_power(const Vector& v, const Vector& u) const {
  double s = 0.0;
  for (std::size_t j = 0; j < in_.size(); ++j) s += v[in_[j]] * u[static_cast<Index>(j)];
  return s;
}

// ---------------------------------------------------------------------------------------------

MassSpringChain::Workspace::Workspace(const MassSpringChain& chain, SparseBackend backend,
                                      ChainSolver solver)
    : chain_(chain), solver_kind_(solver) {
  const Index N = chain.n_;
  diag_.resize(N);
  off_.resize(std::max<Index>(N - 1, 0));
  if (solver_kind_ == ChainSolver::sparse) {
    sparse_ = make_sparse_solver(backend);
    S_ = tridiagonal(Vector::Ones(N), Vector::Ones(std::max<Index>(N - 1, 0)));
    S_.makeCompressed();
    sparse_->analyze_pattern(S_);
  }
}

std::string_view MassSpringChain::Workspace::solver_name() const {
  return sparse_ ? to_string(sparse_->backend()) : std::string_view("tridiagonal");
}

void MassSpringChain::Workspace::factorize_iteration(double a, double b, double c,
                                                     const Vector& q) {
  const bool linear = chain_.is_linear();
  if (linear && a == a_ && b == b_ && c == c_) return;
  const Index N = chain_.n_;
  require(q.size() == N, "chain: factorize_iteration got q of size ", q.size(),
          ", the chain has n = ", N);
  const auto& p = chain_.params_;
  const double kl = p.k_l, kn3 = linear ? 0.0 : 3.0 * p.k_n;
  const double diag0 = a * p.m + b * chain_.d_diag_, off0 = b * chain_.d_off_;
  // Tangent stiffness k_l + 3 k_n e^2 of the spring with elongation e. Spring j joins masses
  // j - 1 and j (walls at -1 and N); row j has springs j and j + 1.
  auto tangent = [=](double e) { return kl + kn3 * e * e; };
  double* dg = diag_.data();
  double* of = off_.data();
  const double* x = q.data();
  if (N == 1) {
    dg[0] = diag0 + c * (tangent(x[0]) + tangent(-x[0]));
  } else {
    dg[0] = diag0 + c * (tangent(x[0]) + tangent(x[1] - x[0]));
    of[0] = off0 - c * tangent(x[1] - x[0]);
    for (Index j = 1; j < N - 1; ++j) {
      const double right = tangent(x[j + 1] - x[j]);
      dg[j] = diag0 + c * (tangent(x[j] - x[j - 1]) + right);
      of[j] = off0 - c * right;
    }
    dg[N - 1] = diag0 + c * (tangent(x[N - 1] - x[N - 2]) + tangent(-x[N - 1]));
  }
  // The arithmetic of row_excess, which the streamed path applies to the same rows.
  double excess = std::numeric_limits<double>::infinity();
  for (Index j = 0; j < N; ++j) {
    const double left = j > 0 ? std::abs(of[j - 1]) : 0.0;
    const double right = j + 1 < N ? std::abs(of[j]) : 0.0;
    excess = std::min(excess, dg[j] - left - right);
  }
  excess_ = std::max(excess, 0.0);
  if (sparse_) {
    // Column j of the CSC storage holds rows j-1, j, j+1 (those that exist), in that order.
    double* val = S_.valuePtr();
    Index pos = 0;
    for (Index j = 0; j < N; ++j) {
      if (j > 0) val[pos++] = of[j - 1];  // S(j-1, j)
      val[pos++] = dg[j];
      if (j + 1 < N) val[pos++] = of[j];  // S(j+1, j)
    }
    sparse_->factorize(S_);
  } else {
    tridiagonal_.factorize(diag_, off_);
  }
  ++factorizations_;
  a_ = a;
  b_ = b;
  c_ = c;
}

NewtonNorms MassSpringChain::Workspace::midpoint_newton(bool refactorize, bool bound, double h,
                                                        const Vector& q, const Vector& v,
                                                        const Vector& u, Vector& x) {
  const MassSpringChain& ch = chain_;
  const Index N = ch.n_;
  require(q.size() == N && v.size() == N && x.size() == N && u.size() == ch.n_inputs(),
          "chain: midpoint_newton got q, v, x, u of sizes ", q.size(), ", ", v.size(), ", ",
          x.size(), ", ", u.size(), " for n = ", N, " and ", ch.n_inputs(), " input(s)");
  const auto& p = ch.params_;
  const double a = 1.0, b = 0.5 * h, c = 0.25 * h * h;  // S = a M + b D + c (K + dg/dq)
  const bool linear = ch.is_linear();
  if (linear && a == a_ && b == b_ && c == c_) refactorize = false;  // as factorize_iteration
  const double half_h = 0.5 * h, m = p.m;
  const double* Q = q.data();
  const double* V = v.data();
  double* X = x.data();
  constexpr Index kBlock = TridiagonalSpdSolver::kStreamBlock;
  // The stage state of rows first - 1 .. first + count at qb[0 .. count + 1] (walls 0), with
  // the arithmetic of integrate's lazy q + h/2 v_s, v_s = (v + x) / 2.
  auto stage = [=](Index first, Index count, double* qb, double* vb) {
    const Index lo = std::max<Index>(first - 1, 0), hi = std::min<Index>(first + count + 1, N);
    qb[0] = vb[0] = qb[count + 1] = vb[count + 1] = 0.0;
    for (Index r = lo; r < hi; ++r) {
      const double vs = 0.5 * (V[r] + X[r]);
      vb[r - first + 1] = vs;
      qb[r - first + 1] = Q[r] + half_h * vs;
    }
  };
  // R = M (x - v) - h F at the stage, F with the inputs (the plain path's arithmetic).
  auto residual = [&](Index first, Index count, const double* qb, const double* vb, double* r) {
    ch.stencil_rows(qb + 1, vb + 1, count, r);
    for (std::size_t j = 0; j < ch.in_.size(); ++j)
      if (ch.in_[j] >= first && ch.in_[j] < first + count)
        r[ch.in_[j] - first] += u[static_cast<Index>(j)];
    for (Index i = 0; i < count; ++i) r[i] = m * (X[first + i] - V[first + i]) - h * r[i];
  };
  auto rhs = [&](Index first, Index count, double* r) {
    alignas(64) double qb[kBlock + 2], vb[kBlock + 2];
    stage(first, count, qb, vb);
    residual(first, count, qb, vb, r);
  };
  const double kl = p.k_l, kn3 = linear ? 0.0 : 3.0 * p.k_n;
  const double diag0 = a * p.m + b * ch.d_diag_, off0 = b * ch.d_off_;
  // S's rows as factorize_iteration assembles them: spring first + i (tangent k_l + 3 k_n e^2
  // at tg[i]) joins rows first + i - 1 and first + i.
  double excess = std::numeric_limits<double>::infinity();  // of the rows generated
  auto rows = [&](Index first, Index count, double* d, double* e, double* r) {
    alignas(64) double qb[kBlock + 2], vb[kBlock + 2], tg[kBlock + 1];
    stage(first, count, qb, vb);
    for (Index i = 0; i <= count; ++i) {
      const double el = qb[i + 1] - qb[i];
      tg[i] = kl + kn3 * el * el;
    }
    for (Index i = 0; i < count; ++i) d[i] = diag0 + c * (tg[i] + tg[i + 1]);
    for (Index i = 0; i <= count; ++i) e[i] = off0 - c * tg[i];
    excess = std::min(excess, row_excess(N, first, count, d, e));
    residual(first, count, qb, vb, r);
  };
  y_.resize(N);
  bool streamed = false;
  if (refactorize) {
    streamed = tridiagonal_.factorize_forward(N, rows, y_.data());
    if (streamed) {
      ++factorizations_;
      excess_ = excess;
      a_ = a;
      b_ = b;
      c_ = c;
    } else {  // LAPACK decides (and reports) through the plain path
      stage_ = q + half_h * (0.5 * (v + x));
      a_ = -1.0;
      factorize_iteration(a, b, c, stage_);
    }
  } else if (tridiagonal_.twisted()) {
    tridiagonal_.forward(rhs, y_.data());
    streamed = true;
  }
  // The bound on the next correction (NewtonNorms::next) from R at the new x; not for a
  // linear chain, whose one iteration is exact.
  bound = bound && !linear && excess_ > 0.0;
  if (!streamed) {  // the plain iteration on the last factorization
    const auto v_stage = 0.5 * (v + x);
    ch.force(q + half_h * v_stage, v_stage, u, residual_);
    residual_ = m * (x - v) - h * residual_;
    solve_iteration(residual_, delta_);
    NewtonNorms norms = detail::subtract_with_norms(N, X, delta_.data());
    if (bound) {
      ch.force(q + half_h * v_stage, v_stage, u, residual_);
      residual_ = m * (x - v) - h * residual_;
      norms.next = detail::max_abs(N, residual_.data()) / excess_;
    }
    return norms;
  }
  // The back sweep hands over x's rows from the twist row outwards, so the rows updated so far
  // are one interval [lo, hi]; the residual of a row is taken once its neighbours are updated
  // (rows [taken_lo, taken_hi]), while they are in L1.
  constexpr std::uint64_t kMagnitude = 0x7fff'ffff'ffff'ffffu;
  std::uint64_t delta_max = 0, x_max = 0, r_max = 0;
  Index lo = N, hi = -1, taken_lo = N, taken_hi = -1;
  auto take = [&](Index from, Index to) {  // rows from .. to
    alignas(64) double qb[kBlock + 2], vb[kBlock + 2], r[kBlock];
    for (Index first = from; first <= to; first += kBlock) {
      const Index count = std::min(kBlock, to + 1 - first);
      stage(first, count, qb, vb);
      residual(first, count, qb, vb, r);
      for (Index i = 0; i < count; ++i)
        r_max = std::max(r_max, std::bit_cast<std::uint64_t>(r[i]) & kMagnitude);
    }
  };
  tridiagonal_.backward(y_.data(), [&](Index first, Index count, const double* z) {
    detail::subtract_with_norms(count, X + first, z, delta_max, x_max);
    if (!bound) return;
    lo = std::min(lo, first);
    hi = std::max(hi, first + count - 1);
    const Index from = lo == 0 ? 0 : lo + 1, to = hi == N - 1 ? N - 1 : hi - 1;
    if (from > to) return;
    if (taken_lo > taken_hi) {
      take(from, to);
    } else {
      if (from < taken_lo) take(from, taken_lo - 1);
      if (to > taken_hi) take(taken_hi + 1, to);
    }
    taken_lo = from;
    taken_hi = to;
  });
  NewtonNorms norms{std::bit_cast<double>(delta_max), std::bit_cast<double>(x_max)};
  if (bound) norms.next = std::bit_cast<double>(r_max) / excess_;
  return norms;
}

void MassSpringChain::Workspace::solve_iteration(const Vector& r, Vector& x) {
  if (sparse_)
    sparse_->solve(r, x);
  else
    tridiagonal_.solve(r, x);
}

}  // namespace mor
