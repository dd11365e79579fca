// SPDX-License-Identifier: GPL-3.0-or-later
// What IRKA and SOR-IRKA share (irka_interpolation.hpp): option names, shift distance, pole-residue
// form, interpolation points, real bases from complex shifted solves, history entries.
#include "reduction/irka_interpolation.hpp"

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

namespace irka_detail {

std::vector<Complex> all_shifts(const std::vector<Point>& pts) {
  std::vector<Complex> s;
  for (const Point& p : pts) {
    s.push_back(p.sigma);
    if (!p.real()) s.push_back(std::conj(p.sigma));
  }
  return s;
}

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

double spectral_abscissa(const ComplexVector& poles) {
  double a = -std::numeric_limits<double>::infinity();
  for (Index i = 0; i < poles.size(); ++i) a = std::max(a, poles(i).real());
  return a;
}

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

namespace {

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

/// A small dense model's G_r(sigma) b (first-order form, without D); NaN where sigma is one of
/// its poles (an unstable pole of the previous model mirrored onto itself).
ComplexVector reduced_response(const Matrix& Er, const Matrix& Ar, const Matrix& Br,
                               const Matrix& Cr, Complex sigma, const ComplexVector& b) {
  const lapack::ComplexLu lu(sigma * Er.cast<Complex>() - Ar.cast<Complex>());
  if (lu.singular())
    return ComplexVector::Constant(Cr.rows(), Complex(std::numeric_limits<double>::quiet_NaN()));
  return Cr.cast<Complex>() * lu.solve(Br.cast<Complex>() * b);
}

}  // namespace

void raw_bases(LtiOperator& sys, LtiOperator* helper, std::vector<Point>& pts, bool with_W,
               RawBases& out, const std::atomic<bool>* stop, const char* what, Index it) {
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

bool orthonormal_basis(Matrix& X, Matrix& Q, const char* name, Index iteration, bool one_pass,
                       Matrix* R) {
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

void check_common(Index r, Index n, double tol, Index max_iterations, const char* what) {
  require(r >= 1 && r <= n, what, ": order r must be in [1, ", n, "], got ", r);
  require(tol > 0.0 && std::isfinite(tol), what, ": tolerance must be > 0, got ", tol);
  require(max_iterations >= 1, what, ": max_iterations must be >= 1, got ", max_iterations);
}

void poll(const std::atomic<bool>* stop, const char* what, Index it) {
  if (stop_requested(stop)) throw Interrupted(concat(what, " interrupted at iteration ", it));
}

}  // namespace irka_detail

}  // namespace mor
