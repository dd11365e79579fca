// SPDX-License-Identifier: GPL-3.0-or-later
// First-order IRKA and its MF-IRKA variant (see irka.hpp): the interpolation loop, the Loewner
// and projected reduced models, the model function and its surrogate.
#include "reduction/irka.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "reduction/irka_interpolation.hpp"
#include "reduction/low_rank_adi.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

using detail::concat;

namespace irka_detail {
namespace {

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

/// Inverse Arnoldi steps for the initial shifts of MF-IRKA (IrkaOptions::ritz_steps = 0): fewer
/// than plain IRKA's max(2 r, r + 10), since the surrogate corrects rough first shifts in
/// few iterations. Chain N = 10^5, r = 20, criterion h2: 20 steps 9 iterations (1.21 s CPU),
/// 25 steps 8 (1.10 s), 30 steps 8 (1.21 s), 40 steps 8 (1.41 s; the Arnoldi's Gram-Schmidt
/// sweeps grow with the square of the steps).
Index surrogate_ritz_steps(Index r) {
  return r + std::max<Index>(5, r / 4);
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

}  // namespace
}  // namespace irka_detail

namespace irka_detail {
namespace {

/// ||G - G_r||_H2 of a small stable model E_r x' = A_r x + B_r u, y = C_r x against the full
/// model sys, from G_r's pole-residue form: ||G||^2 - 2 sum_i c^_i^T G(-lambda_i) b^_i +
/// ||G_r||^2 (fill_history's formula; r shifted solves with one column each, no transposed
/// ones; accurate to about 1e-7 ||G||_H2). @throws NumericalError if the model is unstable
/// (the formula needs Re lambda < 0), E_r is singular or a shifted solve fails.
double model_h2_error(LtiOperator& sys, LtiOperator* helper, const Matrix& Er, const Matrix& Ar,
                      const Matrix& Br, const Matrix& Cr, double full_h2_norm) {
  const PoleResidueForm f = pole_residue_form(Er, Ar, Br, Cr);
  if (!(spectral_abscissa(f.poles) < 0.0))
    throw NumericalError("IRKA: the H2 error of an unstable model is infinite");
  std::vector<Point> pts = points_from_poles(f);
  RawBases raw;
  raw_bases(sys, helper, pts, false, raw);
  IrkaIteration h;
  fill_history(h, pts, raw, modal_model(f), full_h2_norm);
  return h.h2_error;
}

/// One run of IRKA (MF-IRKA with o.surrogate) from o's start; o's comparison is not used.
/// Keeps the best iterate: with o.full_h2_norm, the history's H2 errors of the iterates whose
/// next shifts were their own mirrored poles (an ordinary step: the pole-residue formula of
/// fill_history holds) are compared with the last model's; an iterate whose error is below the
/// last's by more than kBestIterateMargin is rebuilt (one more iteration's solves) and returned.
IrkaResult irka_run(LtiOperator& sys, const IrkaOptions& o) {
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
  // The points each iteration solved at (iteration k at k - 1), and the H2 errors the history
  // gives exactly (iteration, ||G - G_r||_H2), for the best iterate.
  std::vector<std::vector<Point>> iterate_points;
  std::vector<std::pair<Index, double>> known_errors;
  bool exact_error_next = false;
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
    iterate_points.push_back(pts);  // with the directions raw_bases chose, if it chose any
    // h.h2_error is that of the previous iterate if its next shifts were its mirrored poles.
    if (it > 1 && exact_error_next && std::isfinite(h.h2_error))
      known_errors.emplace_back(it - 1, h.h2_error);
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
    // The next iteration's history holds this iterate's H2 error when its shifts are this
    // model's mirrored poles (an ordinary step) and the model is stable.
    exact_error_next = h.surrogate_iterations == 0 && res.spectral_abscissa < 0.0;
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
  res.returned_iteration = res.iterations;
  // The best iterate: the smallest H2 error the history knows exactly, against the last
  // model's (evaluated only when an earlier iterate may be better: its r solves cost half an
  // iteration). Margin: differences of the pole-residue formula below 1 % are rounding and
  // convergence noise near a fixed point, not a better iterate.
  constexpr double kBestIterateMargin = 1e-2;
  if (o.full_h2_norm > 0.0 && !known_errors.empty()) {
    const auto best =
        std::min_element(known_errors.begin(), known_errors.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    const bool last_known = known_errors.back().first == res.iterations - 1;
    if (best->first != res.iterations - 1 || !last_known) {
      if (!last_projected) projected_model(sys, raw, res.iterations, res);
      last_projected = true;
      double last_error = std::numeric_limits<double>::infinity();
      try {
        last_error =
            model_h2_error(sys, helper.get(), res.Er, res.Ar, res.Br, res.Cr, o.full_h2_norm);
      } catch (const NumericalError&) {
        // an unstable or defective last model: any stable iterate with a known error is better
      }
      res.h2_error = last_error;
      if (best->second < (1.0 - kBestIterateMargin) * last_error) {
        std::vector<Point> bp = iterate_points[static_cast<std::size_t>(best->first - 1)];
        raw_bases(sys, helper.get(), bp, true, raw, o.stop_requested, "IRKA", best->first);
        res.shifted_solves += raw.solves;
        projected_model(sys, raw, best->first, res);
        res.returned_iteration = best->first;
        res.h2_error = best->second;
      }
    }
  }
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
  if (res.returned_iteration != res.iterations)
    res.message +=
        concat("; the model of iteration ", res.returned_iteration, " is returned (H2 error ",
               res.h2_error / o.full_h2_norm, " relative, below the last iterate's)");
  res.total_iterations = res.iterations;
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace
}  // namespace irka_detail

IrkaResult irka(LtiOperator& sys, const IrkaOptions& o) {
  using namespace irka_detail;
  const bool compare = o.comparison_Ar.size() > 0;
  if (!compare) return irka_run(sys, o);
  const auto t0 = Clock::now();
  const Index r = o.order;
  check_common(r, sys.n(), o.tolerance, o.max_iterations, "IRKA");
  require(o.comparison_Ar.rows() == r && o.comparison_Ar.cols() == r &&
              o.comparison_Er.rows() == r && o.comparison_Er.cols() == r &&
              o.comparison_Br.rows() == r && o.comparison_Br.cols() == sys.n_inputs() &&
              o.comparison_Cr.rows() == sys.n_outputs() && o.comparison_Cr.cols() == r,
          "IRKA: the comparison model must have order r = ", r, ", ", sys.n_inputs(),
          " inputs and ", sys.n_outputs(), " outputs; got A_r ", o.comparison_Ar.rows(), " x ",
          o.comparison_Ar.cols(), ", B_r ", o.comparison_Br.rows(), " x ", o.comparison_Br.cols(),
          ", C_r ", o.comparison_Cr.rows(), " x ", o.comparison_Cr.cols());
  require(o.full_h2_norm > 0.0, "IRKA: a comparison model needs full_h2_norm > 0");
  require(o.restart_ratio > 1.0 && std::isfinite(o.restart_ratio),
          "IRKA: restart_ratio must be > 1, got ", o.restart_ratio);
  // Relative H2 errors below this are not compared: the pole-residue formula's cancellation
  // (||G||^2 - 2 <G, G_r> + ||G_r||^2) leaves about 1e-7 ||G|| of noise.
  constexpr double kH2Resolution = 1e-6;
  auto two_digits = [](double x) { return std::round(x * 100.0) / 100.0; };
  const double resolution = kH2Resolution * o.full_h2_norm;
  IrkaOptions plain = o;
  plain.comparison_Er.resize(0, 0);
  plain.comparison_Ar.resize(0, 0);
  plain.comparison_Br.resize(0, 0);
  plain.comparison_Cr.resize(0, 0);
  // A comparison that is itself unusable (unstable: BT's from inaccurate Gramians; defective):
  // IRKA alone, and the message says why there is no ratio.
  PoleResidueForm fc;
  double e_cmp = 0.0;
  try {
    fc = pole_residue_form(o.comparison_Er, o.comparison_Ar, o.comparison_Br, o.comparison_Cr);
    e_cmp = model_h2_error(sys, nullptr, o.comparison_Er, o.comparison_Ar, o.comparison_Br,
                           o.comparison_Cr, o.full_h2_norm);
  } catch (const NumericalError& e) {
    IrkaResult alone = irka_run(sys, plain);
    alone.message +=
        concat(" (no comparison with ", o.comparison_name, "'s model: ", e.what(), ")");
    return alone;
  }
  auto error_of = [&](IrkaResult& x) {
    if (std::isnan(x.h2_error)) {
      try {
        x.h2_error = x.status == IrkaStatus::unstable
                         ? std::numeric_limits<double>::infinity()
                         : model_h2_error(sys, nullptr, x.Er, x.Ar, x.Br, x.Cr, o.full_h2_norm);
      } catch (const NumericalError&) {
        x.h2_error = std::numeric_limits<double>::infinity();
      }
    }
    return x.h2_error;
  };
  IrkaResult res = irka_run(sys, plain);
  const double e_first = error_of(res);
  Index total = res.iterations, solves = res.shifted_solves;
  std::string restart_note;
  if (e_first > o.restart_ratio * e_cmp && e_first > resolution) {
    // The comparison's mirrored poles and residue directions as the start.
    IrkaOptions again = plain;
    again.initial = IrkaInitialShifts::given;
    const std::vector<Point> pc = points_from_poles(fc);
    again.shifts = all_shifts(pc);
    all_directions(pc, again.b, again.c);
    IrkaResult second = irka_run(sys, again);
    const double e_second = error_of(second);
    total += second.iterations;
    solves += second.shifted_solves;
    const double first_initial = res.initial_seconds;
    if (e_second < e_first) {
      res = std::move(second);
      res.initial_seconds += first_initial;
      restart_note = concat(
          " (restarted from ", o.comparison_name, "'s mirrored poles: the first run's model ",
          std::isfinite(e_first) ? concat("had ", two_digits(e_first / e_cmp), "x its H2 error")
                                 : std::string("was unstable"),
          ")");
    } else {
      restart_note =
          concat(" (a restart from ", o.comparison_name, "'s mirrored poles gave ",
                 std::isfinite(e_second) ? concat(two_digits(e_second / e_cmp), "x its H2 error")
                                         : std::string("an unstable model"),
                 ")");
    }
    res.runs = 2;
    res.first_run_h2_error = e_first;
  }
  res.comparison_h2_error = e_cmp;
  res.total_iterations = total;
  res.shifted_solves = solves;
  const double ratio = res.h2_error / e_cmp;
  if (res.h2_error > o.restart_ratio * e_cmp && res.h2_error > resolution &&
      std::isfinite(res.h2_error)) {
    const std::string what =
        concat("H2 error ", two_digits(ratio), "x ", o.comparison_name, "'s at this order");
    const std::string head = "converged:";
    if (res.status == IrkaStatus::converged && res.message.rfind(head, 0) == 0)
      res.message =
          concat("converged to a local optimum with ", what, res.message.substr(head.size() - 1));
    else
      res.message += concat("; ", what);
  }
  res.message += restart_note;
  res.seconds = seconds_since(t0);
  return res;
}

detail::IrkaLoewnerPencil detail::irka_loewner_pencil(LtiOperator& sys,
                                                      const std::vector<Complex>& shifts,
                                                      const ComplexMatrix& b,
                                                      const ComplexMatrix& c) {
  using namespace irka_detail;
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

}  // namespace mor
