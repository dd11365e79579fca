// SPDX-License-Identifier: GPL-3.0-or-later
// IRKA and SOR-IRKA (see irka.hpp): the shared interpolation loop, real bases from complex
// shifted solves, the pole-residue form of the reduced model and the initial shifts.
#include "reduction/irka.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "reduction/low_rank_adi.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

using detail::concat;

IrkaInitialShifts parse_irka_initial_shifts(std::string_view name) {
  if (name == "ritz") return IrkaInitialShifts::ritz;
  if (name == "given") return IrkaInitialShifts::given;
  throw InvalidArgument(concat("IRKA initial shifts '", name, "' is not one of ritz, given"));
}
std::string_view to_string(IrkaInitialShifts s) {
  return s == IrkaInitialShifts::ritz ? "ritz" : "given";
}
std::string_view to_string(IrkaStatus s) {
  switch (s) {
    case IrkaStatus::converged:
      return "converged";
    case IrkaStatus::max_iterations:
      return "max_iterations";
    case IrkaStatus::unstable:
      return "unstable";
    case IrkaStatus::cycling:
      return "cycling";
  }
  return "?";
}
SoIrkaProjection parse_so_irka_projection(std::string_view name) {
  if (name == "two_sided") return SoIrkaProjection::two_sided;
  if (name == "galerkin") return SoIrkaProjection::galerkin;
  throw InvalidArgument(
      concat("SO-IRKA projection '", name, "' is not one of two_sided, galerkin"));
}
std::string_view to_string(SoIrkaProjection p) {
  return p == SoIrkaProjection::two_sided ? "two_sided" : "galerkin";
}

IrkaCriterion parse_irka_criterion(std::string_view name) {
  if (name == "shifts") return IrkaCriterion::shifts;
  if (name == "h2") return IrkaCriterion::h2;
  throw InvalidArgument(concat("IRKA criterion '", name, "' is not one of shifts, h2"));
}
std::string_view to_string(IrkaCriterion c) {
  return c == IrkaCriterion::shifts ? "shifts" : "h2";
}

double shift_distance(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  if (a.empty() && b.empty()) return 0.0;
  if (a.empty() || b.empty()) return std::numeric_limits<double>::infinity();
  auto one_way = [](const std::vector<Complex>& x, const std::vector<Complex>& y) {
    double worst = 0.0;
    for (Complex s : x) {
      double best = std::numeric_limits<double>::infinity();
      for (Complex t : y) best = std::min(best, std::abs(s - t));
      worst = std::max(worst, best / std::max(std::abs(s), std::numeric_limits<double>::min()));
    }
    return worst;
  };
  return std::max(one_way(a, b), one_way(b, a));
}

PoleResidueForm pole_residue_form(const Matrix& Er, const Matrix& Ar, const Matrix& Br,
                                  const Matrix& Cr) {
  const Index r = Ar.rows();
  const Eigen::PartialPivLU<Matrix> lu(Er);
  // A reduced E_r this close to singular means the bases V and W are (numerically) orthogonal
  // to each other in the E inner product: the projection broke down.
  constexpr double kSingularRcond = 1e-14;
  const double rcond = lu.rcond();
  if (!(rcond > kSingularRcond))
    throw NumericalError(concat("reduced E_r = W^T E V is singular (rcond ", rcond, ")"));
  Matrix At = lu.solve(Ar);
  const Matrix Bt = lu.solve(Br);
  PoleResidueForm f;
  ComplexMatrix X;
  lapack::eigen(At, f.poles, X);
  f.b = lapack::ComplexLu(X).solve(Bt.cast<Complex>()).transpose();  // m x r
  f.c = Cr.cast<Complex>() * X;                                      // p x r
  (void)r;
  return f;
}

namespace {

/// One interpolation point: a real shift, or (Im sigma > 0) a conjugate pair represented by
/// its member in the upper half plane, with its right and left tangential directions.
struct Point {
  Complex sigma;
  ComplexVector b, c;  ///< empty: not yet chosen (taken from G(sigma) at the first solve)
  bool real() const { return sigma.imag() == 0.0; }
  Index columns() const { return real() ? 1 : 2; }
};

/// Every shift of the points, pairs as both members.
std::vector<Complex> all_shifts(const std::vector<Point>& pts) {
  std::vector<Complex> s;
  for (const Point& p : pts) {
    s.push_back(p.sigma);
    if (!p.real()) s.push_back(std::conj(p.sigma));
  }
  return s;
}

/// Directions as m x r and p x r, pairs as a column and its conjugate.
void all_directions(const std::vector<Point>& pts, ComplexMatrix& b, ComplexMatrix& c) {
  Index r = 0;
  for (const Point& p : pts) r += p.columns();
  b.resize(pts.empty() ? 0 : pts[0].b.size(), r);
  c.resize(pts.empty() ? 0 : pts[0].c.size(), r);
  Index k = 0;
  for (const Point& p : pts) {
    b.col(k) = p.b;
    c.col(k++) = p.c;
    if (!p.real()) {
      b.col(k) = p.b.conjugate();
      c.col(k++) = p.c.conjugate();
    }
  }
}

/// The next interpolation data from the reduced model's poles: sigma = -lambda (an unstable
/// pole mirrored into the right half plane), with its residue directions.
std::vector<Point> points_from_poles(const PoleResidueForm& f) {
  std::vector<Point> pts;
  for (Index i = 0; i < f.poles.size(); ++i) {
    const Complex l = f.poles(i);
    // Eigen's real eigensolver returns real eigenvalues (1 x 1 Schur blocks) with an exactly
    // zero imaginary part and real eigenvectors; pairs come as exact conjugates.
    if (l.imag() > 0.0) continue;  // the pair's representative has Im sigma = -Im l > 0
    Point p;
    p.sigma = Complex(std::abs(l.real()), -l.imag());
    p.b = f.b.col(i);
    p.c = f.c.col(i);
    if (p.real()) {
      p.b = p.b.real().cast<Complex>();
      p.c = p.c.real().cast<Complex>();
    }
    pts.push_back(std::move(p));
  }
  return pts;
}

double spectral_abscissa(const ComplexVector& poles) {
  double a = -std::numeric_limits<double>::infinity();
  for (Index i = 0; i < poles.size(); ++i) a = std::max(a, poles(i).real());
  return a;
}

/// Given shifts and directions as points (pairs matched with their conjugates).
/// @throws InvalidArgument naming the offending shift.
std::vector<Point> given_points(const std::vector<Complex>& shifts, const ComplexMatrix& b,
                                const ComplexMatrix& c, Index r, Index m, Index p) {
  require(static_cast<Index>(shifts.size()) == r, "IRKA: ", shifts.size(),
          " initial shifts given for order r = ", r);
  require(b.size() == 0 || (b.rows() == m && b.cols() == r), "IRKA: initial directions b are ",
          b.rows(), " x ", b.cols(), ", expected ", m, " x ", r);
  require(c.size() == 0 || (c.rows() == p && c.cols() == r), "IRKA: initial directions c are ",
          c.rows(), " x ", c.cols(), ", expected ", p, " x ", r);
  // A given complex shift is matched with a conjugate to this relative accuracy.
  constexpr double kConjugateTol = 1e-12;
  std::vector<Point> pts;
  std::vector<bool> used(shifts.size(), false);
  for (std::size_t i = 0; i < shifts.size(); ++i) {
    const Complex s = shifts[i];
    require(std::isfinite(s.real()) && std::isfinite(s.imag()) && s.real() > 0.0,
            "IRKA: initial shift ", s.real(), (s.imag() < 0 ? "" : "+"), s.imag(),
            "i must be finite with Re > 0");
    if (used[i]) continue;
    used[i] = true;
    Point pt;
    pt.sigma = s;
    if (b.size()) pt.b = b.col(static_cast<Index>(i));
    if (c.size()) pt.c = c.col(static_cast<Index>(i));
    if (s.imag() != 0.0) {
      std::size_t j = i + 1;
      while (j < shifts.size() &&
             (used[j] || std::abs(shifts[j] - std::conj(s)) > kConjugateTol * std::abs(s)))
        ++j;
      require(j < shifts.size(), "IRKA: initial shift ", s.real(), (s.imag() < 0 ? "" : "+"),
              s.imag(),
              "i has no conjugate among the shifts (the set must be closed under "
              "conjugation)");
      used[j] = true;
      if (s.imag() < 0.0) {
        pt.sigma = std::conj(s);
        if (b.size()) pt.b = pt.b.conjugate().eval();
        if (c.size()) pt.c = pt.c.conjugate().eval();
      }
    } else {
      if (b.size()) pt.b = pt.b.real().cast<Complex>();
      if (c.size()) pt.c = pt.c.real().cast<Complex>();
    }
    pts.push_back(std::move(pt));
  }
  return pts;
}

/// r shifts from the smallest-magnitude Ritz values of the pencil (pairs kept together).
std::vector<Point> ritz_points(LtiOperator& sys, Index r, Index steps) {
  if (steps <= 0) steps = std::max(2 * r, r + 10);
  steps = std::min(steps, sys.n());
  const std::vector<Complex> ritz = detail::pencil_ritz_estimates(sys, 0, steps);
  // Ritz values of a real matrix with imaginary parts below this (relative) are taken as real.
  constexpr double kRealTol = 1e-10;
  // Shifts closer than this (relative) give nearly parallel columns of V and W: of a cluster
  // of Ritz values only one is kept.
  constexpr double kSeparation = 1e-2;
  std::vector<Complex> all;
  for (Complex l : ritz) {
    if (!std::isfinite(l.real()) || !std::isfinite(l.imag()) || l == Complex(0.0)) continue;
    Complex s(std::abs(l.real()), std::abs(l.imag()));
    if (s.imag() <= kRealTol * std::abs(s)) s = Complex(s.real(), 0.0);
    if (s.real() > 0.0) all.push_back(s);  // purely imaginary: no usable mirror image
  }
  std::sort(all.begin(), all.end(), [](Complex a, Complex b) { return std::abs(a) < std::abs(b); });
  std::vector<Complex> cand;
  for (Complex s : all)
    if (std::none_of(cand.begin(), cand.end(),
                     [&](Complex t) { return std::abs(t - s) <= kSeparation * std::abs(s); }))
      cand.push_back(s);
  // r of them spread evenly over log |sigma| between the smallest and the largest (pairs
  // count two), the nearest unused candidate to each target; then any left, smallest first.
  std::vector<Point> pts;
  Index filled = 0;
  std::vector<bool> taken(cand.size(), false);
  auto take = [&](std::size_t i) {
    const Index need = cand[i].imag() == 0.0 ? 1 : 2;
    if (taken[i] || filled + need > r) return;
    taken[i] = true;
    pts.push_back(Point{cand[i], {}, {}});
    filled += need;
  };
  if (!cand.empty()) {
    const double lo = std::log(std::abs(cand.front())), hi = std::log(std::abs(cand.back()));
    for (Index k = 0; k < r && filled < r; ++k) {
      const double target = r == 1 ? lo : lo + (hi - lo) * double(k) / double(r - 1);
      std::size_t best = cand.size();
      for (std::size_t i = 0; i < cand.size(); ++i)
        if (!taken[i] &&
            (best == cand.size() || std::abs(std::log(std::abs(cand[i])) - target) <
                                        std::abs(std::log(std::abs(cand[best])) - target)))
          best = i;
      if (best < cand.size()) take(best);
    }
  }
  for (std::size_t i = 0; i < cand.size() && filled < r; ++i) take(i);
  if (filled < r) {  // one slot left and only pairs unused: the modulus of one as a real shift
    for (std::size_t i = 0; i < cand.size() && filled < r; ++i)
      if (!taken[i]) {
        pts.push_back(Point{Complex(std::abs(cand[i]), 0.0), {}, {}});
        ++filled;
      }
  }
  if (filled < r)
    throw NumericalError(concat("IRKA: inverse Arnoldi (", steps, " steps) found ", filled,
                                " usable Ritz values for r = ", r,
                                "; raise ritz_steps or give the shifts"));
  return pts;
}

/// Inverse Arnoldi steps for the initial shifts of MF-IRKA (IrkaOptions::ritz_steps = 0): fewer
/// than plain IRKA's max(2 r, r + 10), since the surrogate corrects rough first shifts in
/// few iterations. Chain N = 10^5, r = 20, criterion h2: 20 steps 9 iterations (1.21 s CPU),
/// 25 steps 8 (1.10 s), 30 steps 8 (1.21 s), 40 steps 8 (1.41 s; the Arnoldi's Gram-Schmidt
/// sweeps grow with the square of the steps).
Index surrogate_ritz_steps(Index r) {
  return r + std::max<Index>(5, r / 4);
}

/// The indices of the nonzero rows of a tall n x k matrix (B, C^T), kept when they are at most
/// n / kSparseShare (inputs and outputs at a few degrees of freedom, as the chain's: `sparse`);
/// otherwise the dense products are used. The sums over the kept rows are those of the dense
/// products without their exactly zero terms.
struct Support {
  bool ready = false, sparse = false;
  std::vector<Index> rows;
  template <class Mat>
  void build(const Mat& M) {
    constexpr Index kSparseShare = 8;
    ready = true;
    rows.clear();
    for (Index i = 0; i < M.rows(); ++i)
      for (Index j = 0; j < M.cols(); ++j)
        if (M(i, j) != 0.0) {
          rows.push_back(i);
          break;
        }
    sparse = static_cast<Index>(rows.size()) * kSparseShare <= M.rows();
  }
};

/// Scratch of one thread's shifted solves (n x 1), kept between iterations.
struct SolveWorkspace {
  Matrix x, v[2], ev[2];
  ComplexMatrix xc;
};

/// The columns of V and W before orthonormalization, each scaled to unit norm (a conjugate
/// pair's real and imaginary parts by the norm of the complex solution), and G(sigma_i) b_i
/// for each point.
struct RawBases {
  Matrix V, W;                    ///< n x r each (W empty if not asked for)
  std::vector<ComplexVector> Gb;  ///< G(sigma_i) b_i (without D_ff), one per point
  /// The shifted systems the columns of V and W solve, (A - sigma_i E) v = B b_i and
  /// (A - sigma_i E)^T w = C^T c_i, as real relations
  ///     A V = E V Sigma + B Bd,     W^T A = Sigma^T W^T E + Cd^T C:
  /// Sigma (r x r) block diagonal, sigma_i for a real shift and [a w; -w a] for a pair
  /// sigma = a + i w (columns Re v, Im v); Bd (m x r), Cd (p x r) the real directions (Re b,
  /// Im b for a pair) divided by the columns' scale factors.
  Matrix Sigma, Bd, Cd;
  Matrix CV;  ///< C V (p x r), from the solves
  /// The diagonal blocks W_i^T E V_i of each point's columns (1 x 1 or 2 x 2; r x r, zero
  /// elsewhere), formed by the thread that solved the point (with W only).
  Matrix WEV;
  Index solves = 0;
  SolveWorkspace ws[2];  ///< per thread
  /// The rows of B and the columns of C with a nonzero entry, when they are few (see
  /// Support); the products with B, C^T and C then touch only those, not n-long dense rows.
  Support b_rows, c_cols;
};

/// x = M d for a real n x k M and a k-vector d (B b or C^T c) as k column updates: without
/// n x k complex temporaries, and for M = C^T (a row-major view) without Eigen's row-by-row
/// matrix-vector product, whose per-row overhead for k = 1 cost as much as a solve.
template <class Mat, class Vec, class Out>
void times_direction(const Mat& M, const Vec& d, Out& x) {
  using T = typename Out::Scalar;
  x.resize(M.rows(), 1);
  x.col(0) = M.col(0).template cast<T>() * d(0);
  for (Index j = 1; j < M.cols(); ++j) x.col(0) += M.col(j).template cast<T>() * d(j);
}

/// C v as dot products of the rows of C (p x n, p small) with v.
template <class Vec>
Vector output_of(const Matrix& C, const Vec& v) {
  Vector y(C.rows());
  for (Index i = 0; i < C.rows(); ++i) y(i) = C.row(i).dot(v);
  return y;
}

/// x = M d with M n x k (B, or the view C^T) when only the rows `rows` of M are nonzero: the
/// same sums as times_direction, in the same order, without the zero rows.
template <class Mat, class Vec, class Out>
void times_direction(const Mat& M, const std::vector<Index>& rows, const Vec& d, Out& x) {
  using T = typename Out::Scalar;
  x.setZero(M.rows(), 1);
  for (Index i : rows) {
    T s = T(M(i, 0)) * d(0);
    for (Index j = 1; j < M.cols(); ++j) s += T(M(i, j)) * d(j);
    x(i, 0) = s;
  }
}

/// C v over the columns `cols` of C (its nonzero ones).
template <class Vec>
Vector output_of(const Matrix& C, const std::vector<Index>& cols, const Vec& v) {
  Vector y = Vector::Zero(C.rows());
  for (Index j : cols) y += C.col(j) * v(j);
  return y;
}

/// The scale factor of a solution of norm nu: nu itself, or 1 for a zero or non-finite norm
/// (the column stays as it is, for orthonormal_basis to report).
double unit_scale(double nu) {
  return nu > 0.0 && std::isfinite(nu) ? nu : 1.0;
}

/// out.WEV's block of the columns [k, k + cols): W_k^T (E V_k), while they are in cache
/// (scratch per block width, which then keeps its size: no allocation per point).
void diagonal_block(const LtiOperator& sys, Index k, Index cols, RawBases& out,
                    SolveWorkspace& ws) {
  Matrix& v = ws.v[cols - 1];
  Matrix& ev = ws.ev[cols - 1];
  v = out.V.middleCols(k, cols);
  sys.apply_E(v, ev);
  out.WEV.block(k, k, cols, cols).noalias() = out.W.middleCols(k, cols).transpose() * ev;
}

/// The solves of one point, into columns k (and k + 1 for a pair) of out: see raw_bases.
/// Touches only those columns, out.Gb[i] and the workspace ws, so that points can be solved on
/// different threads with different operators.
void solve_point(LtiOperator& sys, Point& pt, std::size_t i, Index k, bool with_W, RawBases& out,
                 SolveWorkspace& ws) {
  const Matrix& B = sys.B();
  const Matrix& C = sys.C();
  const Support& bs = out.b_rows;
  const Support& cs = out.c_cols;
  // B d, C^T d and C v through the supports when sparse.
  auto B_times = [&](const auto& d, auto& x) {
    if (bs.sparse)
      times_direction(B, bs.rows, d, x);
    else
      times_direction(B, d, x);
  };
  auto Ct_times = [&](const auto& d, auto& x) {
    if (cs.sparse)
      times_direction(C.transpose(), cs.rows, d, x);
    else
      times_direction(C.transpose(), d, x);
  };
  auto C_times = [&](const auto& v) {
    return cs.sparse ? output_of(C, cs.rows, v) : output_of(C, v);
  };
  const Complex p = -pt.sigma;
  if (pt.b.size() == 0 || pt.c.size() == 0) {
    ComplexMatrix X;
    if (pt.real()) {
      Matrix Xr;
      sys.solve_shifted(p.real(), B, Xr);
      X = Xr.cast<Complex>();
    } else {
      sys.solve_shifted(p, B.cast<Complex>(), X);
    }
    const ComplexMatrix G = -(C.cast<Complex>() * X);
    const lapack::ComplexSvd svd = lapack::thin_complex_svd(G);
    pt.b = svd.V.col(0);
    pt.c = svd.U.col(0).conjugate();
    if (pt.real()) {
      pt.b = pt.b.real().cast<Complex>().eval();
      pt.c = pt.c.real().cast<Complex>().eval();
    }
  }
  Matrix& x = ws.x;
  ComplexMatrix& xc = ws.xc;
  if (pt.real()) {
    // The solution's norm while it is in cache, and the scaled copy in one pass.
    B_times(Vector(pt.b.real()), x);
    sys.solve_shifted(p.real(), x, x);
    const Vector Cx = C_times(x.col(0));
    out.Gb[i] = -Cx.cast<Complex>();
    const double nu = unit_scale(x.norm());
    out.V.col(k) = x.col(0) / nu;
    out.Sigma(k, k) = pt.sigma.real();
    out.Bd.col(k) = pt.b.real() / nu;
    out.CV.col(k) = Cx / nu;
    if (with_W) {
      Ct_times(Vector(pt.c.real()), x);
      sys.solve_shifted(p.real(), x, x, true);
      const double mu = unit_scale(x.norm());
      out.W.col(k) = x.col(0) / mu;
      out.Cd.col(k) = pt.c.real() / mu;
      diagonal_block(sys, k, 1, out, ws);
    }
    return;
  }
  B_times(pt.b, xc);
  sys.solve_shifted(p, xc, xc);
  const Vector Cr = C_times(xc.col(0).real()), Ci = C_times(xc.col(0).imag());
  ComplexVector g(C.rows());
  g.real() = -Cr;
  g.imag() = -Ci;
  out.Gb[i] = std::move(g);
  const double nu = unit_scale(xc.norm());
  out.V.col(k) = xc.col(0).real() / nu;
  out.V.col(k + 1) = xc.col(0).imag() / nu;
  // A v = sigma E v + B b for v = Re v + i Im v: A Re v = a E Re v - w E Im v + B Re b,
  // A Im v = w E Re v + a E Im v + B Im b.
  const double a = pt.sigma.real(), w = pt.sigma.imag();
  out.Sigma(k, k) = a;
  out.Sigma(k + 1, k) = -w;
  out.Sigma(k, k + 1) = w;
  out.Sigma(k + 1, k + 1) = a;
  out.Bd.col(k) = pt.b.real() / nu;
  out.Bd.col(k + 1) = pt.b.imag() / nu;
  out.CV.col(k) = Cr / nu;
  out.CV.col(k + 1) = Ci / nu;
  if (with_W) {
    Ct_times(pt.c, xc);
    sys.solve_shifted(p, xc, xc, true);
    const double mu = unit_scale(xc.norm());
    out.W.col(k) = xc.col(0).real() / mu;
    out.W.col(k + 1) = xc.col(0).imag() / mu;
    out.Cd.col(k) = pt.c.real() / mu;
    out.Cd.col(k + 1) = pt.c.imag() / mu;
    diagonal_block(sys, k, 2, out, ws);
  }
}

/// One shifted solve per point (and one transposed, if with_W), with (sigma E - A) =
/// -(A + p E), p = -sigma; real shifts in real arithmetic, pairs as the real and imaginary
/// parts of one complex solve. Points without directions get the leading singular vectors of
/// G(sigma) (from a solve with all of B, whose factorization the tangential solve reuses).
/// With a `helper` operator (a solver_copy of sys: its own factor cache and scratch), the
/// points are solved on two threads, pairs first, each thread taking the next unsolved point;
/// every point's columns are those a single thread computes (same factorization, same
/// operations), whichever thread solves it. The stop request (`stop` and the process-wide flag)
/// is polled before each point: Interrupted("<what> interrupted in iteration <it>").
void raw_bases(LtiOperator& sys, LtiOperator* helper, std::vector<Point>& pts, bool with_W,
               RawBases& out, const std::atomic<bool>* stop = nullptr, const char* what = "IRKA",
               Index it = 0) {
  const Index n = sys.n();
  Index r = 0;
  for (const Point& p : pts) r += p.columns();
  out.V.resize(n, r);
  if (with_W) out.W.resize(n, r);
  out.Sigma.setZero(r, r);
  out.Bd.setZero(sys.n_inputs(), r);
  out.Cd.setZero(sys.n_outputs(), r);
  out.CV.setZero(sys.n_outputs(), r);
  out.WEV.setZero(r, r);
  out.Gb.assign(pts.size(), ComplexVector());
  if (!out.b_rows.ready) out.b_rows.build(sys.B());
  if (!out.c_cols.ready) out.c_cols.build(sys.C().transpose());
  std::vector<Index> first(pts.size());
  Index k = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    first[i] = k;
    k += pts[i].columns();
  }
  out.solves = static_cast<Index>(pts.size());
  auto poll_stop = [&] {
    if (stop_requested(stop)) throw Interrupted(concat(what, " interrupted in iteration ", it));
  };
  if (!helper) {
    for (std::size_t i = 0; i < pts.size(); ++i) {
      poll_stop();
      solve_point(sys, pts[i], i, first[i], with_W, out, out.ws[0]);
    }
    return;
  }
  // A pair's complex factorization and solves cost about three real ones: pairs go first, so
  // that the last points taken are the short ones.
  std::vector<std::size_t> order(pts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return !pts[i].real(); });
  std::atomic<std::size_t> next{0};
  auto work = [&](LtiOperator& op, SolveWorkspace& ws) {
    for (std::size_t j = next++; j < order.size(); j = next++) {
      poll_stop();
      solve_point(op, pts[order[j]], order[j], first[order[j]], with_W, out, ws);
    }
  };
  std::exception_ptr error;
  std::thread second([&] {
    try {
      detail::SubnormalsFlushed flushed(true);  // as on the calling thread (see irka)
      work(*helper, out.ws[1]);
    } catch (...) {
      error = std::current_exception();
      next = order.size();
    }
  });
  try {
    work(sys, out.ws[0]);
  } catch (...) {
    next = order.size();
    second.join();
    throw;
  }
  second.join();
  if (error) std::rethrow_exception(error);
}

/// G = X^T X (r x r, both triangles): one level-3 sweep over X (a symmetric rank update, or
/// for tall X two threads over halves of the rows).
void gram(const Matrix& X, Matrix& G) {
  if (X.rows() >= 2 * detail::kMinRowsPerThread) {
    // Tall: the rows in two halves on two threads, as LR-ADI's and BT's tall products; the
    // lower triangle is mirrored so that G is exactly symmetric.
    G = detail::tall_transpose_product(X, X);
    G = G.selfadjointView<Eigen::Lower>();
    return;
  }
  G.setZero(X.cols(), X.cols());
  G.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  G = G.selfadjointView<Eigen::Lower>();
}

/// The fast path of orthonormal_basis: Q = X R^{-1} by Cholesky QR passes, each one Gram
/// matrix (a single level-3 sweep over n x r data) and one triangular solve. Two passes
/// (CholeskyQR2: Yamamoto, Nakatsukasa, Yanagisawa, Fukaya, "Roundoff error analysis of the
/// CholeskyQR2 algorithm", ETNA 44 (2015) 306-326) give X orthonormal to O(u) for kappa(X) up
/// to about u^{-1/2}; when the first Gram matrix is not numerically positive definite, a
/// shifted first pass and two more (shifted CholeskyQR3: Fukaya, Kannan, Nakatsukasa, Yamamoto,
/// Yanagisawa, "Shifted Cholesky QR for computing the QR factorization of ill-conditioned
/// matrices", SIAM J. Sci. Comput. 42 (2020) A477-A503) extend that to about u^{-1}. The
/// columns are scaled to unit norm inside the first factor (R_1 = chol(D^{-1} G D^{-1}) D with
/// D = diag(||x_j||)), not by a sweep over X. Householder QR with column pivoting makes r
/// level-2 sweeps over X, twice (factor, then form Q): at n = 2 10^5, r = 20 it took half of
/// each IRKA iteration on the chain, this path a fifth of that.
///
/// With `one_pass`, a first factor with kappa(R_1) <= kOnePassCond ends it after one pass
/// (`orthonormal` false): Q^T Q is then within about u kappa^2 <= 1e-8 of I, as good a basis of
/// the same span for the next projection, and IRKA's iterations need no more; the returned
/// bases get one more pass (finish_bases). Returns false when it cannot vouch for the result:
/// a column is zero or not finite, a Cholesky factorization fails, the last Gram matrix is not
/// close to the identity, or kappa(R) > kMaxCond (so that the pivoted QR, which then decides,
/// keeps deciding every case near its rank tolerance).
bool cholesky_qr(Matrix& X, Matrix& Q, bool one_pass, bool& orthonormal, Matrix* R_out) {
  const Index n = X.rows(), r = X.cols();
  // The last pass starts from a Gram matrix this close to I in the Frobenius norm: one more
  // Cholesky QR pass is then orthonormal to O(u) (its error grows with kappa^2 u).
  constexpr double kOrthTol = 0.5;
  // Well below the pivoted QR's rank tolerance 1e-13 on |R_ii| / max |R_ii| (and sigma_min(R)
  // <= min |R_ii|): every basis this path accepts the pivoted QR accepts too.
  constexpr double kMaxCond = 1e12;
  constexpr double kOnePassCond = 1e4;
  constexpr double u = std::numeric_limits<double>::epsilon() / 2;
  const Matrix I = Matrix::Identity(r, r);
  Matrix G;
  gram(X, G);
  const Vector d = G.diagonal().cwiseSqrt();
  if (!(d.minCoeff() > 0.0) || !d.allFinite()) return false;
  G = d.cwiseInverse().asDiagonal() * G * d.cwiseInverse().asDiagonal();
  Eigen::LLT<Matrix> llt(G);
  bool shifted = false;
  if (llt.info() != Eigen::Success) {
    // Shift of Fukaya et al. (2020), Sec. 3: s = 11 (n r + r (r + 1)) u ||X||_2^2, with
    // ||X||_2^2 <= ||X||_F^2 = r for unit columns.
    shifted = true;
    const double s = 11.0 * (double(n) * double(r) + double(r) * double(r + 1)) * u * double(r);
    llt.compute(G + s * I);
    if (llt.info() != Eigen::Success) return false;
  }
  // R: the triangular factor of the unit-column X D^{-1} = Q R, whose condition number is the
  // one the pivoted QR's rank test judges.
  Matrix R = llt.matrixU();
  const auto condition = [&] {
    Matrix Rc = R;
    const Vector sv = lapack::singular_values(Rc);
    return sv(0) / sv(r - 1);
  };
  // Unshifted, R_1 alone is accurate and decides; shifted, the product of all three factors.
  const double cond = shifted ? 0.0 : condition();
  if (!shifted && !(cond < kMaxCond)) return false;
  const Matrix R1 = R * d.asDiagonal();  // X = Q R_1 D: the scaling folded into the solve
  orthonormal = !(one_pass && !shifted && cond <= kOnePassCond);
  if (!orthonormal) {  // nothing can fail from here: solve in X and hand its storage over
    R1.triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(X);
    Q.swap(X);
    if (R_out) *R_out = R1;
    return true;
  }
  Q = X;  // X stays for the pivoted QR until nothing can fail
  R1.triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(Q);
  for (int pass = 1; pass < (shifted ? 3 : 2); ++pass) {
    gram(Q, G);
    const bool last = pass == (shifted ? 2 : 1);
    if (last && (G - I).norm() > kOrthTol) return false;
    llt.compute(G);
    if (llt.info() != Eigen::Success) return false;
    const Matrix Rk = llt.matrixU();
    if (last && !shifted) {
      // kappa(R_k) <= sqrt(3) here: the product with its inverse (a GEMM into the scratch X)
      // is as accurate as the triangular solve and faster.
      const Matrix Rk_inv = Rk.triangularView<Eigen::Upper>().solve(I);
      X.noalias() = Q * Rk_inv;
      Q.swap(X);
    } else {
      Rk.triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(Q);
    }
    R = (Rk * R).eval();
  }
  return !shifted || condition() < kMaxCond;
}

/// Q: an orthonormal basis of the columns of X (n x r), which must have full rank; with
/// one_pass possibly only nearly orthonormal (see cholesky_qr), which the return value says
/// (true: orthonormal). X is scratch; Q may take over its storage (no allocation when the
/// sizes stay).
/// @throws NumericalError naming the basis, the iteration and the rank.
bool orthonormal_basis(Matrix& X, Matrix& Q, const char* name, Index iteration,
                       bool one_pass = false, Matrix* R = nullptr) {
  bool orthonormal = true;
  if (R) R->resize(0, 0);
  if (cholesky_qr(X, Q, one_pass, orthonormal, R)) return orthonormal;
  for (Index j = 0; j < X.cols(); ++j) {
    const double nj = X.col(j).norm();
    if (!(nj > 0.0) || !std::isfinite(nj))
      throw NumericalError(concat("IRKA iteration ", iteration, ": column ", j, " of ", name,
                                  " is ", nj == 0.0 ? "zero" : "not finite"));
    X.col(j) /= nj;
  }
  // Unit columns whose span has a direction this thin are taken as dependent: two shifts (or
  // directions) have (nearly) coincided.
  constexpr double kRankTol = 1e-13;
  Eigen::VectorXi perm;
  const Matrix Rp = lapack::pivoted_qr_r_factor(X, perm, &Q);
  // The numerical rank as Eigen's ColPivHouseholderQR counts it: |R(i, i)| > tol |R(0, 0)|.
  Index rank = 0;
  const Index k = std::min(Rp.rows(), Rp.cols());
  while (rank < k && std::abs(Rp(rank, rank)) > kRankTol * std::abs(Rp(0, 0))) ++rank;
  if (rank < X.cols())
    throw NumericalError(concat("IRKA iteration ", iteration, ": the basis ", name, " lost rank (",
                                rank, " < ", X.cols(), "): shifts or directions coincide"));
  return true;
}

/// B_r = W^T B and C_r = C V, over the nonzero rows of B and columns of C when they are few
/// (then two r-wide row reads instead of two sweeps over the n x r bases).
void project_inputs_outputs(LtiOperator& sys, const RawBases& raw, IrkaResult& res) {
  const Matrix& B = sys.B();
  const Matrix& C = sys.C();
  if (raw.b_rows.sparse) {
    res.Br.setZero(res.W.cols(), B.cols());
    for (Index i : raw.b_rows.rows) res.Br += res.W.row(i).transpose() * B.row(i);
  } else {
    res.Br = res.W.transpose() * B;
  }
  if (raw.c_cols.sparse) {
    res.Cr.setZero(C.rows(), res.V.cols());
    for (Index j : raw.c_cols.rows) res.Cr += C.col(j) * res.V.row(j);
  } else {
    res.Cr = C * res.V;
  }
}

/// The reduced model by projection onto orthonormal bases of the columns of raw.V and raw.W
/// (each orthonormalized by orthonormal_basis, fully): E_r = W^T E V, A_r = W^T A V,
/// B_r = W^T B, C_r = C V into res (with res.V, res.W).
/// @throws NumericalError if a basis loses rank (naming the iteration).
void projected_model(LtiOperator& sys, const RawBases& raw, Index it, IrkaResult& res) {
  Matrix X = raw.V, P;
  orthonormal_basis(X, res.V, "V", it);
  X = raw.W;
  orthonormal_basis(X, res.W, "W", it);
  sys.apply_E(res.V, P);
  res.Er = detail::tall_transpose_product(res.W, P);  // two threads when tall
  sys.apply_A(res.V, P);
  res.Ar = detail::tall_transpose_product(res.W, P);
  project_inputs_outputs(sys, raw, res);
}

/// The block X_JI (rows j0.., pj; columns i0.., pi) of the solution of
/// Sigma^T X - X Sigma = F, Sigma block diagonal (1 x 1 or 2 x 2 blocks), for two points with
/// disjoint spectra: vec(Sigma_J^T X - X Sigma_I) = (I (x) Sigma_J^T - Sigma_I^T (x) I) vec(X),
/// a system of at most 4 unknowns.
void sylvester_block(const Matrix& Sigma, const Matrix& F, Index j0, Index pj, Index i0, Index pi,
                     Matrix& X) {
  const Matrix SJt = Sigma.block(j0, j0, pj, pj).transpose();
  const Matrix SI = Sigma.block(i0, i0, pi, pi);
  Matrix K = Matrix::Zero(pj * pi, pj * pi);
  for (Index c = 0; c < pi; ++c) {
    K.block(c * pj, c * pj, pj, pj) += SJt;
    for (Index d = 0; d < pi; ++d)
      K.block(c * pj, d * pj, pj, pj) -= SI(d, c) * Matrix::Identity(pj, pj);
  }
  Vector f(pj * pi);
  for (Index c = 0; c < pi; ++c) f.segment(c * pj, pj) = F.block(j0, i0 + c, pj, 1);
  const Vector x = K.partialPivLu().solve(f);
  for (Index c = 0; c < pi; ++c) X.block(j0, i0 + c, pj, 1) = x.segment(c * pj, pj);
}

/// The reduced model W^T E V, W^T A V, W^T B, C V of the scaled raw bases (not orthonormal)
/// from the interpolation data of the solves instead of products with the n x r bases: the
/// two relations of RawBases give W^T A V both as X Sigma + (W^T B) Bd and as
/// Sigma^T X + Cd^T (C V), X = W^T E V, so X solves the Sylvester equation
///     Sigma^T X - X Sigma = (W^T B) Bd - Cd^T (C V),
/// block by block (1 x 1, 1 x 2, 2 x 1 or 2 x 2 for points J, I: a Kronecker system of at most
/// 4 unknowns). Written out for real shifts, X_ji = (w_j^T B b_i - c_j^T C v_i) /
/// (sigma_j - sigma_i): up to the signs of the bases, the tangential Loewner matrix of Mayo and
/// Antoulas, "A framework
/// for the solution of the generalized realization problem", Linear Algebra Appl. 425 (2007)
/// 634-662, and A_r the shifted Loewner matrix; the iteration on them is the
/// realization-independent IRKA of Beattie and Gugercin, "Realization-independent
/// H2-approximation", 51st IEEE CDC (2012) 4953-4958. The blocks the equation does not
/// determine (J = I: the derivative data c_i^T G'(sigma_i) b_i) and those of shifts closer than
/// kLoewnerSeparation (relative: the divided difference would cancel) are the products
/// W_J^T (E V_I), one sweep of two columns each (the diagonal ones formed by raw_bases, on
/// the thread that solved the point). A_r = X Sigma +
/// (W^T B) Bd, B_r = W^T B, C_r = C V. Returns the number of blocks formed by products.
Index loewner_model(LtiOperator& sys, const std::vector<Point>& pts, const RawBases& raw,
                    Matrix& Er, Matrix& Ar, Matrix& Br, Matrix& Cr) {
  // Shifts (or conjugates) closer than this relative to the larger one: the block comes from
  // products. A divided difference loses about eps / separation of its accuracy (at most
  // 1e-13 here); the tests find the whole pencil within 1.1e-14 of W^T E V, W^T A V.
  constexpr double kLoewnerSeparation = 1e-3;
  const Index r = raw.V.cols();
  // W^T B over B's support (the chain: one row), as project_inputs_outputs.
  const Matrix& B = sys.B();
  if (raw.b_rows.sparse) {
    Br.setZero(r, B.cols());
    for (Index i : raw.b_rows.rows) Br += raw.W.row(i).transpose() * B.row(i);
  } else {
    Br = raw.W.transpose() * B;
  }
  Cr = raw.CV;
  const Matrix F = Br * raw.Bd - raw.Cd.transpose() * raw.CV;
  std::vector<Index> first;
  Index k = 0;
  for (const Point& p : pts) {
    first.push_back(k);
    k += p.columns();
  }
  Er.resize(r, r);
  Matrix VI, EVI;
  Index products = 0;
  for (std::size_t J = 0; J < pts.size(); ++J) {
    const Index j0 = first[J], pj = pts[J].columns();
    for (std::size_t I = 0; I < pts.size(); ++I) {
      const Index i0 = first[I], pi = pts[I].columns();
      const Complex sj = pts[J].sigma, si = pts[I].sigma;
      const double sep = std::min(std::abs(sj - si), std::abs(sj - std::conj(si))) /
                         std::max(std::abs(sj), std::abs(si));
      if (I == J) {
        Er.block(j0, i0, pj, pi) = raw.WEV.block(j0, i0, pj, pi);
        ++products;
        continue;
      }
      if (!(sep > kLoewnerSeparation)) {
        VI = raw.V.middleCols(i0, pi);
        sys.apply_E(VI, EVI);
        Er.block(j0, i0, pj, pi).noalias() = raw.W.middleCols(j0, pj).transpose() * EVI;
        ++products;
        continue;
      }
      sylvester_block(raw.Sigma, F, j0, pj, i0, pi, Er);
    }
  }
  Ar = Er * raw.Sigma + Br * raw.Bd;
  return products;
}

/// A small dense model's G_r(sigma) b (first-order form, without D); NaN where sigma is one of
/// its poles (an unstable pole of the previous model mirrored onto itself).
ComplexVector reduced_response(const Matrix& Er, const Matrix& Ar, const Matrix& Br,
                               const Matrix& Cr, Complex sigma, const ComplexVector& b) {
  const lapack::ComplexLu lu(sigma * Er.cast<Complex>() - Ar.cast<Complex>());
  if (lu.singular())
    return ComplexVector::Constant(Cr.rows(), Complex(std::numeric_limits<double>::quiet_NaN()));
  return Cr.cast<Complex>() * lu.solve(Br.cast<Complex>() * b);
}

/// The interpolation data (shifts, directions) of a model and its residues, kept from one
/// iteration to the next for the history.
struct Previous {
  bool valid = false;
  Matrix Er, Ar, Br, Cr;  ///< first-order form of the previous reduced model
};

/// A real realization of the pole-residue form (E_r = I, A_r block diagonal): a real pole
/// lambda with b^, c^ as itself; a pair lambda = a + i w (w < 0 or > 0), b^, c^ and the
/// conjugates as A = [a -w; w a], B = [Re b^^T; Im b^^T], C = [2 Re c^, -2 Im c^] (the states
/// Re and Im of xi' = lambda xi + b^^T u, y = 2 Re(c^ xi)). The same transfer function as the
/// model it came from, in coordinates as well conditioned as its eigenvectors, whichever
/// realization (raw Loewner or projected) gave it: the H2 distance of consecutive models and
/// the history's interpolation residual use it.
Previous modal_model(const PoleResidueForm& f) {
  const Index r = f.poles.size();
  Previous m;
  m.valid = true;
  m.Er = Matrix::Identity(r, r);
  m.Ar = Matrix::Zero(r, r);
  m.Br.resize(r, f.b.rows());
  m.Cr.resize(f.c.rows(), r);
  Index k = 0;
  for (Index i = 0; i < r; ++i) {
    const Complex l = f.poles(i);
    if (l.imag() == 0.0) {
      m.Ar(k, k) = l.real();
      m.Br.row(k) = f.b.col(i).real().transpose();
      m.Cr.col(k) = f.c.col(i).real();
      ++k;
    } else if (l.imag() > 0.0) {  // the conjugate (Im < 0) is its mirror image: skipped
      m.Ar(k, k) = m.Ar(k + 1, k + 1) = l.real();
      m.Ar(k, k + 1) = -l.imag();
      m.Ar(k + 1, k) = l.imag();
      m.Br.row(k) = f.b.col(i).real().transpose();
      m.Br.row(k + 1) = f.b.col(i).imag().transpose();
      m.Cr.col(k) = 2.0 * f.c.col(i).real();
      m.Cr.col(k + 1) = -2.0 * f.c.col(i).imag();
      k += 2;
    }
  }
  return m;
}

/// The model function of MF-IRKA (IrkaOptions::surrogate): the tangential Hermite data of the
/// full model at every point visited so far, kept as the small matrices of each point's columns
/// (nothing n-long): Sigma block, directions Bd, Cd, C v, w^T B and the diagonal block W^T E V.
/// Its Loewner pencil (loewner_model's relations over all points) interpolates G bitangentially
/// with derivatives at every stored point (Mayo, Antoulas 2007; Castagnotto, Panzer, Lohmann,
/// "Fast H2-optimal model order reduction exploiting the local nature of Krylov-subspace
/// methods", ECC 2016). A new point closer than kLoewnerSeparation to a stored one replaces it,
/// so that every off-diagonal block is a divided difference.
struct ModelFunction {
  struct Datum {
    Complex sigma;
    Index cols = 1;
    Matrix Sigma, Bd, Cd, CV, WB, WEV;  ///< cols x cols, m x cols, p x cols, p x cols,
                                        ///< cols x m, cols x cols
  };
  std::vector<Datum> data;

  /// The points of one iteration, with raw's columns and WB = W^T B of raw's (unit) columns.
  void add(const std::vector<Point>& pts, const RawBases& raw, const Matrix& WB) {
    constexpr double kSeparation = 1e-3;  // as kLoewnerSeparation in loewner_model
    Index k = 0;
    for (const Point& p : pts) {
      const Index c = p.columns();
      auto close = [&](const Datum& d) {
        const double sep =
            std::min(std::abs(d.sigma - p.sigma), std::abs(d.sigma - std::conj(p.sigma))) /
            std::max(std::abs(d.sigma), std::abs(p.sigma));
        return !(sep > kSeparation);
      };
      data.erase(std::remove_if(data.begin(), data.end(), close), data.end());
      Datum d;
      d.sigma = p.sigma;
      d.cols = c;
      d.Sigma = raw.Sigma.block(k, k, c, c);
      d.Bd = raw.Bd.middleCols(k, c);
      d.Cd = raw.Cd.middleCols(k, c);
      d.CV = raw.CV.middleCols(k, c);
      d.WB = WB.middleRows(k, c);
      d.WEV = raw.WEV.block(k, k, c, c);
      data.push_back(std::move(d));
      k += c;
    }
  }

  /// The Loewner pencil of all stored data, E_s x' = A_s x + B_s u, y = C_s x (k states).
  void pencil(Matrix& Es, Matrix& As, Matrix& Bs, Matrix& Cs) const {
    Index k = 0;
    std::vector<Index> first;
    for (const Datum& d : data) {
      first.push_back(k);
      k += d.cols;
    }
    const Index m = data.front().Bd.rows(), p = data.front().Cd.rows();
    Matrix Sigma = Matrix::Zero(k, k), Bd(m, k), Cd(p, k);
    Bs.resize(k, m);
    Cs.resize(p, k);
    for (std::size_t i = 0; i < data.size(); ++i) {
      const Datum& d = data[i];
      const Index i0 = first[i];
      Sigma.block(i0, i0, d.cols, d.cols) = d.Sigma;
      Bd.middleCols(i0, d.cols) = d.Bd;
      Cd.middleCols(i0, d.cols) = d.Cd;
      Cs.middleCols(i0, d.cols) = d.CV;
      Bs.middleRows(i0, d.cols) = d.WB;
    }
    const Matrix F = Bs * Bd - Cd.transpose() * Cs;
    Es.resize(k, k);
    for (std::size_t J = 0; J < data.size(); ++J)
      for (std::size_t I = 0; I < data.size(); ++I) {
        if (I == J)
          Es.block(first[J], first[I], data[J].cols, data[I].cols) = data[J].WEV;
        else
          sylvester_block(Sigma, F, first[J], data[J].cols, first[I], data[I].cols, Es);
      }
    As = Es * Sigma + Bs * Bd;
  }
};

/// The surrogate of the model function: its Loewner pencil truncated to its numerical rank
/// (Mayo and Antoulas 2007, Sec. 3.3: Y, X the leading left singular vectors of [E_s, A_s /
/// omega] and right ones of [E_s; A_s / omega], omega = ||A_s|| / ||E_s||, singular values
/// above kTruncation relative to the largest), as a dense system of that order q.
DenseLtiOperator surrogate_model(const ModelFunction& mf) {
  // The divided differences carry about 1e-13 of relative rounding (loewner_model); directions
  // of the pencil below this are the redundancy of nearby points, not data.
  constexpr double kTruncation = 1e-12;
  Matrix Es, As, Bs, Cs;
  mf.pencil(Es, As, Bs, Cs);
  const Index k = Es.rows();
  const double omega = As.norm() / std::max(Es.norm(), std::numeric_limits<double>::min());
  Matrix row(k, 2 * k), col(2 * k, k);
  row << Es, As / omega;
  col << Es, As / omega;
  const lapack::Svd sr = lapack::thin_svd(row), sc = lapack::thin_svd(col);
  const Vector &a = sr.s, &b = sc.s;
  Index q = 0;
  while (q < k && a(q) > kTruncation * a(0) && b(q) > kTruncation * b(0)) ++q;
  const Matrix Y = sr.U.leftCols(q), X = sc.V.leftCols(q);
  // Its modal realization (E = I, A block diagonal: the shifted solves of the IRKA on it are
  // as well conditioned as they can be, unlike those of the raw pencil, whose unit columns span
  // many orders of magnitude), without the poles in the closed right half plane (artefacts of
  // the truncation, with small residues; the data's system is stable).
  // Rows and columns equilibrated (the same transfer function): the unit columns of the data
  // span many orders of magnitude, which E_s's condition number would otherwise count.
  Matrix Eq = Y.transpose() * Es * X, Aq = Y.transpose() * As * X, Bq = Y.transpose() * Bs,
         Cq = Cs * X;
  for (Index i = 0; i < q; ++i) {
    const double rn = std::hypot(Eq.row(i).norm(), Aq.row(i).norm() / omega);
    if (rn > 0.0) {
      Eq.row(i) /= rn;
      Aq.row(i) /= rn;
      Bq.row(i) /= rn;
    }
  }
  for (Index j = 0; j < q; ++j) {
    const double cn = std::hypot(Eq.col(j).norm(), Aq.col(j).norm() / omega);
    if (cn > 0.0) {
      Eq.col(j) /= cn;
      Aq.col(j) /= cn;
      Cq.col(j) /= cn;
    }
  }
  PoleResidueForm f = pole_residue_form(Eq, Aq, Bq, Cq);
  Index kept = 0;
  for (Index i = 0; i < f.poles.size(); ++i)
    if (f.poles(i).real() < 0.0) {
      f.poles(kept) = f.poles(i);
      f.b.col(kept) = f.b.col(i);
      f.c.col(kept) = f.c.col(i);
      ++kept;
    }
  f.poles.conservativeResize(kept);
  f.b.conservativeResize(Eigen::NoChange, kept);
  f.c.conservativeResize(Eigen::NoChange, kept);
  const Previous m = modal_model(f);
  return DenseLtiOperator(m.Er, m.Ar, m.Br, m.Cr);
}

/// History entries from this iteration's solves: the previous model's interpolation residual
/// at the new shifts and (if ||G||_H2 is known) its H2 error from the pole-residue form.
void fill_history(IrkaIteration& h, const std::vector<Point>& pts, const RawBases& raw,
                  const Previous& prev, double full_h2_norm) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  h.interpolation_residual = nan;
  h.h2_error = nan;
  if (!prev.valid) return;
  double worst = 0.0;
  double inner = 0.0, reduced = 0.0;  // <G, G_r'>, ||G_r'||^2
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Point& pt = pts[i];
    const ComplexVector Grb = reduced_response(prev.Er, prev.Ar, prev.Br, prev.Cr, pt.sigma, pt.b);
    const double scale = std::max(raw.Gb[i].norm(), std::numeric_limits<double>::min());
    worst = std::max(worst, (raw.Gb[i] - Grb).norm() / scale);
    // The points of the previous model carry its exact residue directions (sigma_i = -lambda_i),
    // so sum_i c^_i^T G(sigma_i) b^_i is <G, G_r'>_H2 (pairs count twice, as a real part).
    const double weight = pt.real() ? 1.0 : 2.0;
    inner += weight * (pt.c.transpose() * raw.Gb[i]).value().real();
    reduced += weight * (pt.c.transpose() * Grb).value().real();
  }
  h.interpolation_residual = worst;
  if (full_h2_norm > 0.0) {
    const double e2 = full_h2_norm * full_h2_norm - 2.0 * inner + reduced;
    h.h2_error = std::sqrt(std::max(e2, 0.0));
  }
}

/// ||G_r - G_r'||_H2 / ||G_r||_H2 of two small dense models (infinite if either is unstable or
/// the previous one is missing).
double model_change(const Previous& prev, const Matrix& Er, const Matrix& Ar, const Matrix& Br,
                    const Matrix& Cr) {
  if (!prev.valid) return std::numeric_limits<double>::infinity();
  try {
    DenseLtiOperator cur(Er, Ar, Br, Cr), old(prev.Er, prev.Ar, prev.Br, prev.Cr);
    ErrorLtiOperator diff(cur, old);
    return h2_norm_dense(diff) / h2_norm_dense(cur);
  } catch (const NumericalError&) {
    return std::numeric_limits<double>::infinity();
  }
}

std::string status_message(IrkaStatus status, Index iterations, double change, double tol,
                           double abscissa, Index max_iterations, bool converged,
                           IrkaCriterion criterion) {
  const char* what = criterion == IrkaCriterion::shifts ? "shift change " : "model change (H2) ";
  switch (status) {
    case IrkaStatus::converged:
      return concat("converged: ", iterations, " iterations, ", what, change, " <= tolerance ",
                    tol);
    case IrkaStatus::max_iterations:
    case IrkaStatus::cycling:  // (SO-IRKA writes its own message for a cycle)
      return concat("not converged: max_iterations = ", max_iterations, " reached with ", what,
                    change, " > tolerance ", tol);
    case IrkaStatus::unstable:
      return concat("unstable: the reduced model has spectral abscissa ", abscissa, " >= 0 after ",
                    iterations, " iterations (", converged ? "converged" : "not converged", ", ",
                    what, change, ")");
  }
  return "";
}

/// SO-IRKA looks for cycles of at most this many iterations.
constexpr Index kMaxCyclePeriod = 10;

void check_common(Index r, Index n, double tol, Index max_iterations, const char* what) {
  require(r >= 1 && r <= n, what, ": order r must be in [1, ", n, "], got ", r);
  require(tol > 0.0 && std::isfinite(tol), what, ": tolerance must be > 0, got ", tol);
  require(max_iterations >= 1, what, ": max_iterations must be >= 1, got ", max_iterations);
}

/// The options' flag and the process-wide one (src/core/interrupt.hpp: SIGINT in `mor run`,
/// Ctrl-C in Python, neither of which hands a flag to the reduction).
void poll(const std::atomic<bool>* stop, const char* what, Index it) {
  if (stop_requested(stop)) throw Interrupted(concat(what, " interrupted at iteration ", it));
}

}  // namespace

IrkaResult irka(LtiOperator& sys, const IrkaOptions& o) {
  // Subnormal numbers flushed to zero (x86 FTZ/DAZ, this thread; restored on return), as in
  // LR-ADI: the solves of a system driven at one end (the chain) decay exponentially along it
  // into the subnormal range, where each operation costs about a hundred cycles. At N = 10^5
  // this halved the chain's iterations. Results change by less than 1e-307 absolute per
  // operation.
  detail::SubnormalsFlushed flushed(true);
  const auto t0 = Clock::now();
  const Index n = sys.n(), r = o.order;
  check_common(r, n, o.tolerance, o.max_iterations, "IRKA");
  require(o.full_h2_norm >= 0.0 && std::isfinite(o.full_h2_norm),
          "IRKA: full_h2_norm must be >= 0, got ", o.full_h2_norm);
  IrkaResult res;
  std::vector<Point> pts =
      o.initial == IrkaInitialShifts::given
          ? given_points(o.shifts, o.b, o.c, r, sys.n_inputs(), sys.n_outputs())
          : ritz_points(sys, r,
                        o.ritz_steps > 0 ? o.ritz_steps
                        : o.surrogate    ? surrogate_ritz_steps(r)
                                         : 0);
  res.initial_seconds = seconds_since(t0);
  // Two threads for the shifted solves from this many states on (below, a solve costs less
  // than starting a thread); with fewer, or when the operator cannot make a solver_copy, one.
  constexpr Index kMinStatesForThreads = 2 * detail::kMinRowsPerThread;
  require(o.solve_threads >= 0 && o.solve_threads <= 2,
          "IRKA: solve_threads must be 0, 1 or 2, got ", o.solve_threads);
  const Index threads = o.solve_threads > 0 ? o.solve_threads : n >= kMinStatesForThreads ? 2 : 1;
  std::unique_ptr<LtiOperator> helper;
  if (threads > 1) helper = sys.solver_copy();

  Previous prev;
  double change = std::numeric_limits<double>::infinity();
  bool converged = false;
  RawBases raw;  // n x r workspaces, kept across iterations
  Matrix Er, Ar, Br, Cr;
  bool last_projected = false;  // res holds the projection of the last iteration's bases
  ModelFunction mf;             // MF-IRKA's data (IrkaOptions::surrogate)
  // The surrogate's IRKA stops at this shift change at the latest (it costs O(k^3) per
  // iteration, nothing n-long): its fixed point, not the outer tolerance, picks the next shifts.
  constexpr double kSurrogateTolerance = 1e-5;
  for (Index it = 1; it <= o.max_iterations; ++it) {
    poll(o.stop_requested, "IRKA", it);
    const auto ti = Clock::now();
    IrkaIteration h;
    h.shifts = all_shifts(pts);
    raw_bases(sys, helper.get(), pts, true, raw, o.stop_requested, "IRKA", it);
    res.shifted_solves += raw.solves;
    fill_history(h, pts, raw, prev, o.full_h2_norm);
    // The poles and residues of this iteration's model from the Loewner pencil of the solves'
    // data when it resolves the change the criterion measures, else (or if its E_r is
    // numerically singular) from the projection onto orthonormal bases. Near convergence the
    // Loewner pencil's poles differed from the projection's by up to 87 eps / rcond(E_r),
    // relative (measured: the MIMO test system up to 33, the chain at N = 100 up to 1.3 and at
    // N = 10^5 up to 87; rcond 1e-7 to 1e-12), so kLoewnerNoise eps / rcond must stay below the
    // larger of the tolerance and the last change: the iteration then does not stall on the
    // pencil's rounding. A change below the tolerance is decided again on the projection.
    constexpr double kLoewnerNoise = 1e2;
    constexpr double eps = std::numeric_limits<double>::epsilon();
    PoleResidueForm f;
    bool from_loewner = false, projected = false;
    if (o.loewner) {
      loewner_model(sys, pts, raw, Er, Ar, Br, Cr);
      const double rcond = Eigen::PartialPivLU<Matrix>(Er).rcond();
      if (kLoewnerNoise * eps <= rcond * std::max(o.tolerance, change)) {
        try {
          f = pole_residue_form(Er, Ar, Br, Cr);
          from_loewner = true;
        } catch (const NumericalError&) {
          // the projected model below decides
        }
      }
    }
    auto from_projection = [&] {
      projected_model(sys, raw, it, res);
      projected = true;
      try {
        f = pole_residue_form(res.Er, res.Ar, res.Br, res.Cr);
      } catch (const NumericalError& e) {
        throw NumericalError(concat("IRKA iteration ", it, ": ", e.what()));
      }
    };
    if (!from_loewner) from_projection();
    std::vector<Point> next;
    std::vector<Complex> next_shifts;
    Previous cur;
    auto judge = [&] {
      res.spectral_abscissa = spectral_abscissa(f.poles);
      next = points_from_poles(f);
      next_shifts = all_shifts(next);
      h.shift_change = shift_distance(next_shifts, h.shifts);
      cur = modal_model(f);
      h.model_change = model_change(prev, cur.Er, cur.Ar, cur.Br, cur.Cr);
      change = o.criterion == IrkaCriterion::shifts ? h.shift_change : h.model_change;
    };
    judge();
    if (from_loewner && change <= o.tolerance) {
      // Converged on the Loewner pencil: decided again on the projection of the same bases,
      // which is the model returned if it holds.
      from_loewner = false;
      from_projection();
      judge();
    }
    res.loewner_iterations += from_loewner ? 1 : 0;
    last_projected = projected;
    // MF-IRKA: the next shifts from IRKA on the surrogate of all data so far, warm-started at
    // the ordinary step's (which stays the fallback: a surrogate of fewer than r stable poles,
    // a failed or unstable surrogate IRKA). The stopping test above is the ordinary one.
    if (o.surrogate) {
      Matrix WB;
      if (raw.b_rows.sparse) {
        WB.setZero(raw.W.cols(), sys.B().cols());
        for (Index i : raw.b_rows.rows) WB += raw.W.row(i).transpose() * sys.B().row(i);
      } else {
        WB = raw.W.transpose() * sys.B();
      }
      mf.add(pts, raw, WB);
      // The surrogate chooses the shifts while the model still moves; once consecutive models
      // agree to kSettled (relative H2), the ordinary steps finish: the shifts then still moving
      // are those of small residues, which the surrogate's truncation does not resolve (with
      // it to the end, criterion shifts did not converge on the chain at N = 10^5 in 100
      // iterations).
      constexpr double kSettled = 1e-6;
      const bool settled = !(h.model_change > kSettled);
      if (change > o.tolerance && !settled) {
        try {
          DenseLtiOperator s = surrogate_model(mf);
          h.surrogate_order = s.n();
          if (s.n() >= r) {
            IrkaOptions in;
            in.order = r;
            in.tolerance = std::min(o.tolerance, kSurrogateTolerance);
            in.max_iterations = o.surrogate_max_iterations;
            in.initial = IrkaInitialShifts::given;
            in.shifts = next_shifts;
            all_directions(next, in.b, in.c);
            in.solve_threads = 1;
            in.surrogate = false;  // plain IRKA on the small surrogate
            in.stop_requested = o.stop_requested;
            const IrkaResult ir = irka(s, in);
            if (ir.status != IrkaStatus::unstable) {
              next = given_points(ir.shifts, ir.b, ir.c, r, sys.n_inputs(), sys.n_outputs());
              next_shifts = all_shifts(next);
              h.surrogate_iterations = ir.iterations;
            }
          }
        } catch (const NumericalError&) {
          // the ordinary step's shifts
        } catch (const InvalidArgument&) {
          // (a surrogate shift with Re <= 0): the ordinary step's shifts
        }
      }
    }
    h.seconds = seconds_since(ti);
    res.history.push_back(std::move(h));
    res.iterations = it;
    prev = std::move(cur);
    pts = std::move(next);
    res.shifts = next_shifts;
    if (change <= o.tolerance) {
      converged = true;
      break;
    }
  }
  // The returned model: the projection onto orthonormal bases of the last iteration's solves,
  // and its poles and residue directions (those of the last iteration's model up to rounding).
  if (!last_projected) projected_model(sys, raw, res.iterations, res);
  try {
    const PoleResidueForm f = pole_residue_form(res.Er, res.Ar, res.Br, res.Cr);
    res.spectral_abscissa = spectral_abscissa(f.poles);
    pts = points_from_poles(f);
    res.shifts = all_shifts(pts);
  } catch (const NumericalError& e) {
    throw NumericalError(concat("IRKA, the returned model: ", e.what()));
  }
  all_directions(pts, res.b, res.c);
  res.r = r;
  res.Dr = sys.D_ff();
  res.status = !(res.spectral_abscissa < 0.0) ? IrkaStatus::unstable
               : converged                    ? IrkaStatus::converged
                                              : IrkaStatus::max_iterations;
  res.message = status_message(res.status, res.iterations, change, o.tolerance,
                               res.spectral_abscissa, o.max_iterations, converged, o.criterion);
  res.seconds = seconds_since(t0);
  return res;
}

detail::IrkaLoewnerPencil detail::irka_loewner_pencil(LtiOperator& sys,
                                                      const std::vector<Complex>& shifts,
                                                      const ComplexMatrix& b,
                                                      const ComplexMatrix& c) {
  const Index r = static_cast<Index>(shifts.size());
  require(b.cols() == r && c.cols() == r, "irka_loewner_pencil: directions for every shift");
  std::vector<Point> pts = given_points(shifts, b, c, r, sys.n_inputs(), sys.n_outputs());
  RawBases raw;
  raw_bases(sys, nullptr, pts, true, raw);
  IrkaLoewnerPencil out;
  out.product_blocks = loewner_model(sys, pts, raw, out.Er, out.Ar, out.Br, out.Cr);
  out.V = raw.V;
  out.W = raw.W;
  return out;
}

SoIrkaResult second_order_irka(const SecondOrderSystem& sys, const SoIrkaOptions& o) {
  detail::SubnormalsFlushed flushed(true);  // as in irka
  const auto t0 = Clock::now();
  validate(sys);
  const Index nq = sys.n(), r = o.order;
  check_common(r, nq, o.tolerance, o.max_iterations, "SO-IRKA");
  require(o.inner_max_iterations >= 1, "SO-IRKA: inner_max_iterations must be >= 1, got ",
          o.inner_max_iterations);
  require(o.cycle_ratio >= 0.0 && std::isfinite(o.cycle_ratio),
          "SO-IRKA: cycle_ratio must be >= 0, got ", o.cycle_ratio);
  SecondOrderLtiOperator op(sys);
  SoIrkaResult res;
  std::vector<Point> pts =
      o.initial == IrkaInitialShifts::given
          ? given_points(o.shifts, o.b, o.c, r, sys.n_inputs(), sys.n_outputs())
          : ritz_points(op, r, o.ritz_steps);
  res.initial_seconds = seconds_since(t0);
  const bool two_sided = o.projection == SoIrkaProjection::two_sided;

  Previous prev;
  double change = std::numeric_limits<double>::infinity();
  bool converged = false;
  RawBases raw;
  // The iterate of the smallest shift change so far (what a cycle returns) and the recurrence
  // of the shift set (see SoIrkaOptions::cycle_ratio).
  struct Iterate {
    Index iteration = 0;
    double shift_change = std::numeric_limits<double>::infinity();
    DenseSecondOrderSystem reduced;
    Matrix V, W;
    double spectral_abscissa = 0.0;
    std::vector<Point> next;
    std::vector<Complex> next_shifts;
  } best;
  Index period = 0, repeats = 0, recurs_to = 0;
  double cycle_distance = 0.0;
  bool cycling = false;
  for (Index it = 1; it <= o.max_iterations; ++it) {
    poll(o.stop_requested, "SO-IRKA", it);
    const auto ti = Clock::now();
    IrkaIteration h;
    h.shifts = all_shifts(pts);
    // The operator's state is x = [q; v]: a solve with B = [0; B] has q-block -S(sigma)^{-1} B b,
    // a transposed solve with C^T = [Cp^T; Cv^T] has v-block -S(sigma)^{-T} (Cp + sigma Cv)^T c
    // (see SecondOrderLtiOperator): the second-order bases up to sign.
    raw_bases(op, nullptr, pts, two_sided, raw, o.stop_requested, "SO-IRKA", it);
    res.shifted_solves += raw.solves;
    fill_history(h, pts, raw, prev, 0.0);
    Matrix X = raw.V.topRows(nq);
    orthonormal_basis(X, res.V, "V", it);
    if (two_sided) {
      X = raw.W.bottomRows(nq);
      orthonormal_basis(X, res.W, "W", it);
    } else {
      res.W = res.V;
    }
    DenseSecondOrderSystem& red = res.reduced;
    const Matrix MV = sys.M * res.V, DV = sys.D * res.V, KV = sys.K * res.V;
    red.M = res.W.transpose() * MV;
    red.D = res.W.transpose() * DV;
    red.K = res.W.transpose() * KV;
    red.B = res.W.transpose() * sys.B;
    red.Cp = sys.Cp * res.V;
    red.Cv = sys.Cv * res.V;
    red.D_ff = Matrix::Zero(sys.n_outputs(), sys.n_inputs());
    const Eigen::PartialPivLU<Matrix> mlu(red.M);
    constexpr double kSingularRcond = 1e-14;  // as for E_r in pole_residue_form
    if (!(mlu.rcond() > kSingularRcond))
      throw NumericalError(concat("SO-IRKA iteration ", it,
                                  ": reduced M_r = W^T M V is singular (rcond ", mlu.rcond(), ")"));
    DenseLtiOperator first(to_first_order(red));
    const Matrix E1 = first.E();
    res.spectral_abscissa = spectral_abscissa(first.poles());
    // Wyatt's SOR-IRKA step: the 2r-state first-order form reduced to r by IRKA, warm-started
    // at the current interpolation data; its mirrored poles are the next shifts.
    IrkaOptions inner;
    inner.order = r;
    inner.tolerance = o.tolerance;
    inner.max_iterations = o.inner_max_iterations;
    inner.surrogate = false;  // (2r states: the solves cost no more than a surrogate's)
    inner.stop_requested = o.stop_requested;
    inner.initial = IrkaInitialShifts::given;
    inner.shifts = h.shifts;
    all_directions(pts, inner.b, inner.c);
    IrkaResult ir;
    try {
      ir = irka(first, inner);
    } catch (const NumericalError& e) {
      throw NumericalError(concat("SO-IRKA iteration ", it, ", inner IRKA: ", e.what()));
    }
    res.inner_iterations.push_back(ir.iterations);
    std::vector<Point> next =
        given_points(ir.shifts, ir.b, ir.c, r, sys.n_inputs(), sys.n_outputs());
    const std::vector<Complex> next_shifts = all_shifts(next);
    h.shift_change = shift_distance(next_shifts, h.shifts);
    h.model_change = model_change(prev, E1, first.A(), first.B(), first.C());
    change = o.criterion == IrkaCriterion::shifts ? h.shift_change : h.model_change;
    h.seconds = seconds_since(ti);
    // A cycle: the next shift set comes back to the set of an iteration p >= 2 back, closer
    // than cycle_ratio times the step it just made, for p iterations in a row (a whole period
    // repeated). A converging sequence does not: monotone, the set p back is farther than one
    // step; oscillating with contraction q, the ratio is (1 - q) / q.
    Index p_found = 0;
    double d_found = 0.0;
    if (!(change <= o.tolerance) && o.cycle_ratio > 0.0) {
      const Index max_p = std::min<Index>(it, kMaxCyclePeriod);
      for (Index p = 2; p <= max_p && p_found == 0; ++p) {
        const double d =
            shift_distance(next_shifts, res.history[static_cast<std::size_t>(it - p)].shifts);
        if (d <= o.cycle_ratio * h.shift_change) {
          p_found = p;
          d_found = d;
        }
      }
    }
    repeats = p_found == 0 ? 0 : p_found == period ? repeats + 1 : 1;
    period = p_found;
    if (p_found != 0) {
      cycle_distance = d_found;
      recurs_to = it + 1 - p_found;
    }
    if (h.shift_change < best.shift_change) {
      best.iteration = it;
      best.shift_change = h.shift_change;
      best.reduced = res.reduced;
      best.V = res.V;
      best.W = res.W;
      best.spectral_abscissa = res.spectral_abscissa;
      best.next = next;
      best.next_shifts = next_shifts;
    }
    res.history.push_back(std::move(h));
    res.iterations = it;
    res.returned_iteration = it;
    prev = Previous{true, E1, first.A(), first.B(), first.C()};
    pts = std::move(next);
    res.shifts = next_shifts;
    if (change <= o.tolerance) {
      converged = true;
      break;
    }
    if (period != 0 && repeats >= period) {
      cycling = true;
      break;
    }
  }
  if (cycling && best.iteration != res.returned_iteration) {
    res.reduced = std::move(best.reduced);
    res.V = std::move(best.V);
    res.W = std::move(best.W);
    res.spectral_abscissa = best.spectral_abscissa;
    pts = std::move(best.next);
    res.shifts = std::move(best.next_shifts);
    res.returned_iteration = best.iteration;
  }
  res.cycle_period = cycling ? period : 0;
  all_directions(pts, res.b, res.c);
  res.r = r;
  res.status = !(res.spectral_abscissa < 0.0) ? IrkaStatus::unstable
               : converged                    ? IrkaStatus::converged
               : cycling                      ? IrkaStatus::cycling
                                              : IrkaStatus::max_iterations;
  if (res.status == IrkaStatus::cycling)
    res.message =
        concat("not converged: the shift set cycles with period ", period, " (after iteration ",
               res.iterations, " it came back to that of iteration ", recurs_to, " within ",
               cycle_distance, ", relative, for a whole period; shift change ", change,
               " > tolerance ", o.tolerance, "); returned the iterate of iteration ",
               res.returned_iteration, ", the smallest shift change (", best.shift_change, ")");
  else
    res.message = status_message(res.status, res.iterations, change, o.tolerance,
                                 res.spectral_abscissa, o.max_iterations, converged, o.criterion);
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace mor
