// SPDX-License-Identifier: GPL-3.0-or-later
// Rational Krylov subspace method with adaptive poles (reduction/rational_krylov.hpp).
#include "reduction/rational_krylov.hpp"

#include <Spectra/SymEigsSolver.h>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "reduction/dense_lyapunov.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/progress.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

/// A new direction of the basis V is kept when its norm after two Gram-Schmidt passes is above
/// this fraction of its norm before: below it the direction lies in the span to rounding (a
/// breakdown).
constexpr double kDropTolerance = 1e-12;
/// The same for the basis Q of [B, E V, A V], which only represents the residual (A V = Q GA,
/// E V = Q GE, B = Q GB): a direction dropped there is missing from the reported residual. On
/// the lightly damped chain (N = 1000, complex shifts factorized by LAPACK's zgttrf) dropping
/// at 1e-12 made the reported residual 6.78e-11 against the true 5.99e-11 (13 %; the true one
/// confirmed in long double; the factor was the same); at 1e-14 both agree to five digits.
/// Directions this small get a third Gram-Schmidt pass (kThirdPass), which keeps Q orthonormal
/// to rounding.
constexpr double kResidualDropTolerance = 1e-14;
constexpr double kThirdPass = 1e-8;
/// Number of boundary points the adaptive pole is chosen from.
constexpr std::size_t kCandidatePoints = 600;
/// Relative imaginary part below which a pole counts as real.
constexpr double kRealPoleTolerance = 1e-8;

void validate_options(const RksmOptions& o) {
  require(std::isfinite(o.tolerance) && o.tolerance > 0.0,
          "RKSM: tolerance must be positive and finite, got ", o.tolerance);
  require(o.max_dimension >= 1, "RKSM: max_dimension must be at least 1, got ", o.max_dimension);
  require(o.arnoldi_steps >= 1 && o.inverse_arnoldi_steps >= 1,
          "RKSM: the spectral estimates need at least one Arnoldi step each, got ", o.arnoldi_steps,
          " and ", o.inverse_arnoldi_steps);
  require(o.update_ratio >= 1, "RKSM: update_ratio must be at least 1, got ", o.update_ratio);
  require(std::isfinite(o.stall_factor) && o.stall_factor >= 0.0 && o.stall_factor < 1.0,
          "RKSM: stall_factor must be in [0, 1) (0 disables), got ", o.stall_factor);
  require(o.stall_window >= 0, "RKSM: stall_window must be >= 0 (0 disables), got ",
          o.stall_window);
}

/// An orthonormal basis that grows by blocks: append() orthonormalizes new columns against it
/// (classical Gram-Schmidt, two passes: "twice is enough") and returns their coefficients.
class OrthonormalBasis {
 public:
  /// Directions whose norm falls below drop_tolerance times their norm before are dropped.
  OrthonormalBasis(Index n, double drop_tolerance) : Q_(n, 0), drop_(drop_tolerance) {}
  Index cols() const { return used_; }
  auto matrix() const { return Q_.leftCols(used_); }

  /// Appends the directions of X not yet in the span and returns C with X = Q C to rounding
  /// (C has cols() rows after the call and X.cols() columns).
  Matrix append(const Matrix& X) {
    Matrix C = Matrix::Zero(used_ + X.cols(), X.cols());
    Vector& x = x_;  // workspaces kept across calls: no n-sized allocation per column
    Vector& h = h_;
    for (Index j = 0; j < X.cols(); ++j) {
      x = X.col(j);
      const double before = x.norm();
      double after = before;
      for (int pass = 0; used_ > 0 && (pass < 2 || (pass == 2 && after < kThirdPass * before));
           ++pass) {
        h.noalias() = matrix().transpose() * x;
        x.noalias() -= matrix() * h;
        C.col(j).head(used_) += h;
        after = x.norm();
      }
      if (after > drop_ * before && after > 0.0) {
        if (used_ == Q_.cols())
          Q_.conservativeResize(Eigen::NoChange, std::max<Index>(16, Q_.cols() + Q_.cols() / 2));
        Q_.col(used_) = x / after;
        C(used_, j) = after;
        ++used_;
      }
    }
    C.conservativeResize(used_, Eigen::NoChange);
    return C;
  }

 private:
  Matrix Q_;
  double drop_;
  Index used_ = 0;
  Vector x_, h_;
};

/// Appends rows of zeros so that G has `rows` rows.
void pad_rows(Matrix& G, Index rows) {
  const Index old = G.rows();
  if (rows == old) return;
  G.conservativeResize(rows, Eigen::NoChange);
  G.bottomRows(rows - old).setZero();
}

/// Appends the columns C (after padding both to the same number of rows).
void append_cols(Matrix& G, const Matrix& C) {
  const Index rows = std::max(G.rows(), C.rows());
  pad_rows(G, rows);
  const Index old = G.cols();
  G.conservativeResize(rows, old + C.cols());
  G.rightCols(C.cols()).setZero();
  G.rightCols(C.cols()).topRows(C.rows()) = C;
}

/// Convex hull (counter-clockwise, Andrew's monotone chain) of points in the plane.
std::vector<Complex> convex_hull(std::vector<Complex> p) {
  std::sort(p.begin(), p.end(), [](Complex a, Complex b) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  });
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() < 3) return p;
  auto cross = [](Complex o, Complex a, Complex b) {
    return (a.real() - o.real()) * (b.imag() - o.imag()) -
           (a.imag() - o.imag()) * (b.real() - o.real());
  };
  std::vector<Complex> hull(2 * p.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], p[i]) <= 0.0) --k;
    hull[k++] = p[i];
  }
  for (std::size_t i = p.size() - 1, t = k + 1; i-- > 0;) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], p[i]) <= 0.0) --k;
    hull[k++] = p[i];
  }
  hull.resize(k - 1);
  return hull;
}

/// The Druskin-Simoncini pole: the point s of the boundary of the convex hull of the region
/// points (mirrored Ritz values and initial estimates, Re > 0, closed under conjugation) that
/// maximizes log prod |s - s_j| - log prod |s - lambda_j|. Each edge is sampled uniformly and
/// geometrically towards both ends (spectra of lightly damped systems span decades).
Complex adaptive_pole(const std::vector<Complex>& region, const std::vector<Complex>& ritz,
                      const std::vector<Complex>& poles) {
  std::vector<Complex> points;
  for (Complex z : region) {
    z = Complex(std::abs(z.real()), std::abs(z.imag()));
    points.push_back(z);
    if (z.imag() != 0.0) points.push_back(std::conj(z));
  }
  std::vector<Complex> hull = convex_hull(points);
  auto score = [&](Complex s) {
    double v = 0.0;
    for (Complex p : poles) v += std::log(std::abs(s - p));
    for (Complex l : ritz) v -= std::log(std::abs(s - l));
    return v;
  };
  // About kCandidatePoints samples in all (each costs O(k) logarithms): a hull of many edges
  // gets fewer samples per edge.
  const std::size_t per_edge = std::max<std::size_t>(2, kCandidatePoints / (3 * hull.size()));
  std::vector<double> ts;
  for (std::size_t i = 0; i <= per_edge; ++i) ts.push_back(static_cast<double>(i) / per_edge);
  for (std::size_t i = 1; i <= per_edge; ++i) {
    const double t = std::pow(10.0, -8.0 * static_cast<double>(i) / per_edge);
    ts.push_back(t);
    ts.push_back(1.0 - t);
  }
  Complex best = hull.front();
  double best_score = -std::numeric_limits<double>::infinity();
  const std::size_t edges = hull.size() == 1 ? 1 : hull.size();
  for (std::size_t e = 0; e < edges; ++e) {
    const Complex a = hull[e], b = hull[(e + 1) % hull.size()];
    if (a.imag() < 0.0 && b.imag() < 0.0) continue;  // the lower half mirrors the upper one
    for (double t : ts) {
      Complex s = a + t * (b - a);
      if (s.imag() < 0.0) s = std::conj(s);
      const double v = score(s);
      if (v > best_score) {
        best_score = v;
        best = s;
      }
    }
  }
  if (std::abs(best.imag()) <= kRealPoleTolerance * std::abs(best)) best = Complex(best.real(), 0);
  return best;
}

/// Mirrored spectral estimates in the closed upper right quarter plane, zero and non-finite
/// values dropped.
std::vector<Complex> mirrored(const std::vector<Complex>& values) {
  std::vector<Complex> out;
  for (Complex v : values) {
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag()) || std::abs(v) == 0.0) continue;
    out.emplace_back(std::abs(v.real()), std::abs(v.imag()));
  }
  return out;
}

/// The symmetric matrix R = FA FE^T + FE FA^T + GB GB^T (q x q) as a Spectra operator: products
/// cost O(q (2 r + m)), R itself is never formed.
struct InnerResidualOp {
  const Matrix& FA;
  const Matrix& FE;
  const Matrix& GB;
  using Scalar = double;
  Index rows() const { return FA.rows(); }
  Index cols() const { return FA.rows(); }
  void perform_op(const double* x_in, double* y_out) const {
    const Eigen::Map<const Vector> x(x_in, rows());
    Eigen::Map<Vector> y(y_out, rows());
    y.noalias() = FA * (FE.transpose() * x);
    y.noalias() += FE * (FA.transpose() * x);
    y.noalias() += GB * (GB.transpose() * x);
  }
};

/// ||FA FE^T + FE FA^T + GB GB^T||_2: the eigenvalue of largest magnitude by Spectra's Lanczos
/// (the residual of a rational Krylov Galerkin solution has low numerical rank, so few
/// iterations converge); a dense eigensolver for small q or if Lanczos does not converge.
double inner_residual_norm(const Matrix& FA, const Matrix& FE, const Matrix& GB) {
  const Index q = FA.rows();
  if (q > 60) {
    InnerResidualOp op{FA, FE, GB};
    Spectra::SymEigsSolver<InnerResidualOp> eigs(op, 1, 20);
    eigs.init();
    eigs.compute(Spectra::SortRule::LargestMagn, 1000, 1e-6);
    if (eigs.info() == Spectra::CompInfo::Successful) return std::abs(eigs.eigenvalues()[0]);
  }
  Matrix R = FA * FE.transpose();
  R = R + R.transpose().eval();
  R.noalias() += GB * GB.transpose();
  return lapack::symmetric_eigenvalues(R).cwiseAbs().maxCoeff();
}

std::string summary(const AdiResult& r, GramianKind kind, const RksmOptions& o, Index dim) {
  const std::string what =
      detail::status_text(r, o.tolerance, detail::concat("basis dimension limit ", o.max_dimension),
                          o.stall_factor, o.stall_window, "updates");
  return detail::concat("RKSM ", to_string(kind), " Gramian: ", what, "; ", r.iterations,
                        " poles, basis dimension ", dim, ", factor rank ", r.Z.cols(), ", ",
                        r.seconds, " s");
}

}  // namespace

AdiResult rational_krylov(LtiOperator& sys, GramianKind kind, const RksmOptions& options) {
  validate_options(options);
  // Subnormals flushed to zero on this thread while it runs, as in LR-ADI (low_rank_adi.cpp):
  // basis vectors of a system driven at one end decay into the subnormal range.
  detail::SubnormalsFlushed flushed(true);
  const auto t0 = Clock::now();
  const bool tr = kind == GramianKind::observability;  // work with A^T, E^T, C^T
  const Index n = sys.n();
  const Matrix W0 = tr ? Matrix(sys.C().transpose()) : sys.B();
  const Index m = W0.cols();
  AdiResult result;
  require(W0.allFinite(), "RKSM: the ", tr ? "output matrix C" : "input matrix B",
          " has non-finite entries");
  const double scale = m > 0 ? (W0.transpose() * W0).norm() : 0.0;
  if (!(scale > 0.0)) {  // B = 0 (or C = 0): the Gramian is zero
    result.Z = Matrix(n, 0);
    result.status = AdiStatus::converged;
    result.seconds = seconds_since(t0);
    result.message = summary(result, kind, options, 0);
    return result;
  }
  const bool E_identity = sys.E_is_identity();

  // Initial spectral estimates: they fix the region and the first two (real) poles.
  auto st = Clock::now();
  const std::vector<Complex> region0 = mirrored(detail::pencil_ritz_estimates(
      sys, std::min(options.arnoldi_steps, n), std::min(options.inverse_arnoldi_steps, n)));
  if (region0.empty())
    throw NumericalError(
        "RKSM: the Arnoldi estimates of the spectrum are all zero or non-finite; no poles");
  double s_min = std::numeric_limits<double>::infinity(), s_max = 0.0;
  for (Complex z : region0) {
    s_min = std::min(s_min, std::abs(z));
    s_max = std::max(s_max, std::abs(z));
  }
  result.shift_seconds += seconds_since(st);

  // Petrov-Galerkin in the energy inner product when the operator knows one (test space
  // W = H V): the projected pencil then stays stable. Otherwise plain Galerkin (W = V).
  Matrix probe;
  const bool weighted = sys.apply_energy_weight(W0, probe, tr);
  Matrix Wt(n, 0);  // the test basis H V when weighted

  OrthonormalBasis V(n, kDropTolerance), Q(n, kResidualDropTolerance);
  Matrix Ak(0, 0), Ek(0, 0), Bk(0, m);  // projected pencil and input
  Matrix GA(0, 0), GE(0, 0);            // A V = Q GA, E V = Q GE
  Matrix GB = Q.append(W0);             // B = Q GB
  std::vector<Complex> poles;           // every pole used, conjugates included
  std::vector<Complex> ritz;            // Ritz values of the last update
  std::vector<Complex> planned = {Complex(s_min, 0.0), Complex(s_max, 0.0)};
  Matrix Zk;  // factor of Y from the last update
  Index last_update_dim = -1;
  // n-sized workspaces of the steps, kept across them: a step of the same width as the last
  // one (the usual case) allocates nothing of size n.
  Matrix Vn, Wn, AVn, EVn, AtWn, EtWn, EA, Vc, rhs, X;
  ComplexMatrix Rc, Xc;

  // Adds new basis directions X; updates the projected pencil and the residual basis.
  auto extend = [&](const Matrix& X) -> Index {
    const Index k_old = V.cols();
    V.append(X);
    const Index c = V.cols() - k_old;
    if (c == 0) return 0;
    Vn = V.matrix().rightCols(c);
    const Index k = k_old + c;
    // A_k = W^T A V: new columns W^T (A V_n), new rows (V_old^T A^T W_n)^T; likewise E_k.
    if (weighted) {
      if (!sys.apply_energy_weight(Vn, Wn, tr))
        throw NumericalError("RKSM: the operator's energy weight became unavailable");
      Wt.conservativeResize(Eigen::NoChange, k);
      Wt.rightCols(c) = Wn;
    } else {
      Wn = Vn;
    }
    sys.apply_A(Vn, AVn, tr);
    sys.apply_A(Wn, AtWn, !tr);
    if (E_identity) {
      EVn = Vn;
      EtWn = Wn;
    } else {
      sys.apply_E(Vn, EVn, tr);
      sys.apply_E(Wn, EtWn, !tr);
    }
    if (!AVn.allFinite() || !EVn.allFinite() || !AtWn.allFinite() || !EtWn.allFinite())
      throw NumericalError(
          detail::concat("RKSM step ", result.iterations, ": a product with A or E is non-finite"));
    const Eigen::Ref<const Matrix> Wk =
        weighted ? Eigen::Ref<const Matrix>(Wt.leftCols(k)) : Eigen::Ref<const Matrix>(V.matrix());
    Ak.conservativeResize(k, k);
    Ek.conservativeResize(k, k);
    Ak.rightCols(c) = Wk.transpose() * AVn;
    Ek.rightCols(c) = Wk.transpose() * EVn;
    Ak.bottomLeftCorner(c, k_old) = (V.matrix().leftCols(k_old).transpose() * AtWn).transpose();
    Ek.bottomLeftCorner(c, k_old) = (V.matrix().leftCols(k_old).transpose() * EtWn).transpose();
    Bk.conservativeResize(k, Eigen::NoChange);
    Bk.bottomRows(c) = Wk.rightCols(c).transpose() * W0;
    EA.resize(n, 2 * c);
    EA.leftCols(c) = EVn;
    EA.rightCols(c) = AVn;
    const Matrix C = Q.append(EA);
    append_cols(GE, C.leftCols(c));
    append_cols(GA, C.rightCols(c));
    pad_rows(GB, Q.cols());
    pad_rows(GE, Q.cols());
    pad_rows(GA, Q.cols());
    return c;
  };

  // Solves the projected equation; returns the relative residual; refreshes the Ritz values
  // (the eigenvalues of the Schur form the dense solver computes anyway).
  auto update = [&]() -> double {
    const Index k = V.cols();
    ComplexVector eigenvalues;
    try {
      Zk = dense_gramian_factor(E_identity && !weighted ? Matrix() : Ek, Ak, Bk, Matrix(0, k),
                                GramianKind::controllability, &eigenvalues);
    } catch (const NumericalError& e) {
      throw NumericalError(detail::concat(
          "RKSM (", to_string(kind), ") at basis dimension ", k, ", projected equation: ", e.what(),
          weighted ? std::string()
                   : std::string("; the operator offers no energy weight, and Galerkin "
                                 "projection keeps stability only for dissipative realisations: "
                                 "use LR-ADI for this system")));
    }
    ritz.assign(eigenvalues.data(), eigenvalues.data() + eigenvalues.size());
    // R = Q (FA FE^T + FE FA^T + GB GB^T) Q^T with FA = GA Zk, FE = GE Zk.
    const Matrix FA = GA * Zk, FE = GE * Zk;
    last_update_dim = k;
    return inner_residual_norm(FA, FE, GB) / scale;
  };

  // The start: B itself when E = I (the pole at infinity), else the first pole's solve.
  if (E_identity) {
    extend(W0);
  } else {
    sys.solve_shifted(-s_min, W0, X, tr);
    poles.push_back(Complex(s_min, 0.0));
    result.shifts.push_back(Complex(-s_min, 0.0));
    ++result.iterations;
    planned.erase(planned.begin());
    extend(X);
  }

  Index block_start = 0;  // first column of the newest block (the continuation vectors)
  ResidualProgress progress(detail::concat("RKSM (", to_string(kind), " Gramian)"),
                            options.tolerance);
  while (true) {
    if (stop_requested(options.stop_requested))
      throw Interrupted(detail::concat("RKSM (", to_string(kind), ") interrupted after ",
                                       result.iterations, " poles"));
    const Index k = V.cols();
    const Index every = std::max<Index>(1, k / options.update_ratio);
    if (k - std::max<Index>(last_update_dim, 0) >= every || last_update_dim < 0) {
      const double residual = update();
      result.residual_history.push_back(residual);
      progress.update(result.iterations, residual);
      if (residual <= options.tolerance) {
        result.status = AdiStatus::converged;
        break;
      }
      const Index window = options.stall_window;
      const auto& h = result.residual_history;
      const Index u = static_cast<Index>(h.size());
      if (options.stall_factor > 0.0 && window > 0 && u > window) {
        const double recent = *std::min_element(h.end() - window, h.end());
        const double before = *std::min_element(h.begin(), h.end() - window);
        if (recent > options.stall_factor * before) {
          result.status = AdiStatus::stalled;
          break;
        }
      }
    }

    // The next pole: planned ones first, then adaptive.
    st = Clock::now();
    Complex s;
    if (!planned.empty()) {
      s = planned.front();
      planned.erase(planned.begin());
    } else {
      std::vector<Complex> region = region0;
      for (Complex l : ritz) region.push_back(-l);
      s = adaptive_pole(mirrored(region), ritz, poles);
    }
    result.shift_seconds += seconds_since(st);
    const bool complex_pole = s.imag() != 0.0;
    const Index cont = k - block_start;  // continuation block: the newest directions
    const Index grow = (complex_pole ? 2 : 1) * std::min(cont, m);
    if (k + grow > options.max_dimension) {
      if (last_update_dim != k) result.residual_history.push_back(update());
      result.status = result.residual_history.back() <= options.tolerance
                          ? AdiStatus::converged
                          : AdiStatus::max_iterations;
      break;
    }
    Vc = V.matrix().middleCols(block_start, std::min(cont, m));
    if (E_identity) {
      rhs = Vc;
    } else {
      sys.apply_E(Vc, rhs, tr);
    }
    try {
      if (!complex_pole) {
        sys.solve_shifted(-s.real(), rhs, X, tr);
      } else {
        Rc = rhs.cast<Complex>();
        sys.solve_shifted(-s, Rc, Xc, tr);
        X.resize(n, 2 * Xc.cols());
        X.leftCols(Xc.cols()) = Xc.real();
        X.rightCols(Xc.cols()) = Xc.imag();
      }
    } catch (const NumericalError& e) {
      throw NumericalError(detail::concat("RKSM (", to_string(kind), ") pole ",
                                          result.iterations + 1, ", s = ", s, ": ", e.what()));
    }
    if (!X.allFinite())
      throw NumericalError(detail::concat("RKSM (", to_string(kind), ") pole ",
                                          result.iterations + 1, ", s = ", s,
                                          ": the new basis vectors are non-finite"));
    poles.push_back(s);
    if (complex_pole) poles.push_back(std::conj(s));
    result.shifts.push_back(-s);
    ++result.iterations;
    block_start = k;
    if (extend(X) == 0) {
      // Breakdown: the space is invariant, so the Galerkin solution is exact to rounding.
      result.residual_history.push_back(update());
      result.status = result.residual_history.back() <= options.tolerance ? AdiStatus::converged
                                                                          : AdiStatus::stalled;
      break;
    }
  }

  // Z = V Zk, compressed to the numerical rank of Zk (singular values below eps * s_1 change
  // Y = Zk Zk^T by less than its rounding error).
  const lapack::Svd svd = lapack::thin_svd(Zk);
  const Vector& sv = svd.s;
  Index rank = 0;
  while (rank < sv.size() && sv[rank] > std::numeric_limits<double>::epsilon() * sv[0]) ++rank;
  const Index k = last_update_dim;
  result.Z.noalias() = V.matrix().leftCols(k) * (svd.U.leftCols(rank) * sv.head(rank).asDiagonal());
  result.seconds = seconds_since(t0);
  result.message = summary(result, kind, options, V.cols());
  return result;
}

}  // namespace mor
