// SPDX-License-Identifier: GPL-3.0-or-later
// H-infinity norms (see system_norms.hpp): Bruinsma-Steinbuch level sets for small dense systems,
// frequency sweeps with Brent refinement and the subspace method for large ones, errors.
#include "reduction/system_norms.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>

#include "reduction/dense_lyapunov.hpp"
#include "reduction/system_norms_detail.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

using norms_detail::complex_text;
using norms_detail::dense_response;
using norms_detail::kEps;
using norms_detail::largest_singular_value;

namespace {

/// lapack::eigenvalues(M) (M destroyed), a failure's message led by what was being computed.
ComplexVector eigenvalues_of(Matrix& M, std::string_view what) {
  try {
    return lapack::eigenvalues(M);
  } catch (const NumericalError& e) {
    throw NumericalError(detail::concat(what, ": ", e.what()));
  }
}

// ---------------------------------------------------------------------------------------------
// Dense evaluation for the level-set method. E^{-1} A is reduced once to upper Hessenberg form
// H = Q^T E^{-1} A Q; then (i w I - H) X = Q^T E^{-1} B costs O(n^2 m) per frequency instead of
// O(n^3) (Laub's frequency-response method), so the O(n) candidate frequencies of the initial
// lower bound and the midpoints of every iteration stay cheap next to the Hamiltonian eigensolve.

class HessenbergResponse {
 public:
  HessenbergResponse(const Matrix& A_hat, const Matrix& B_hat, const Matrix& C, const Matrix& D)
      : D_(D) {
    H_ = A_hat;
    Matrix Q;
    lapack::hessenberg(H_, Q);
    Bh_ = Q.transpose() * B_hat;
    Ch_ = C * Q;
  }

  /// G(i w) = C_h (i w I - H)^{-1} B_h + D.
  ComplexMatrix operator()(double w) const {
    const Index n = H_.rows();
    ComplexMatrix T = (-H_).cast<Complex>();
    T.diagonal().array() += Complex(0.0, w);
    ComplexMatrix X = Bh_.cast<Complex>();
    // Gaussian elimination with partial pivoting: in column k only rows k and k + 1 are nonzero
    // below the diagonal, so pivoting is a choice between two adjacent rows.
    for (Index k = 0; k + 1 < n; ++k) {
      if (std::abs(T(k + 1, k)) > std::abs(T(k, k))) {
        T.row(k).tail(n - k).swap(T.row(k + 1).tail(n - k));
        X.row(k).swap(X.row(k + 1));
      }
      if (T(k + 1, k) == Complex(0.0)) continue;
      const Complex l = T(k + 1, k) / T(k, k);
      T.row(k + 1).tail(n - k - 1) -= l * T.row(k).tail(n - k - 1);
      T(k + 1, k) = 0.0;
      X.row(k + 1) -= l * X.row(k);
    }
    for (Index k = 0; k < n; ++k)
      if (T(k, k) == Complex(0.0))
        throw NumericalError(detail::concat("H-infinity norm: i w E - A is singular at w = ", w));
    T.triangularView<Eigen::Upper>().solveInPlace(X);
    return Ch_.cast<Complex>() * X + D_.cast<Complex>();
  }

  double sigma(double w) const { return largest_singular_value((*this)(w)); }

 private:
  Matrix H_, Bh_, Ch_, D_;
};

/// Bruinsma & Steinbuch's Hamiltonian for the standard system (A, B, C, D) and gamma >
/// sigma_max(D): gamma is a singular value of G(i w) exactly when i w is one of its eigenvalues.
///   R = D^T D - gamma^2 I,  S = D D^T - gamma^2 I  (both negative definite)
///   H = [A - B R^{-1} D^T C,  -gamma B R^{-1} B^T;  gamma C^T S^{-1} C,  -(A - B R^{-1} D^T C)^T]
Matrix hamiltonian(const Matrix& A, const Matrix& B, const Matrix& C, const Matrix& D,
                   double gamma) {
  const Index n = A.rows(), m = B.cols(), p = C.rows();
  const double g2 = gamma * gamma;
  // -R and -S are symmetric positive definite: Cholesky gives their inverses stably.
  const Matrix minus_R = g2 * Matrix::Identity(m, m) - D.transpose() * D;
  const Matrix minus_S = g2 * Matrix::Identity(p, p) - D * D.transpose();
  const Eigen::LLT<Matrix> llt_R(minus_R), llt_S(minus_S);
  if (llt_R.info() != Eigen::Success || llt_S.info() != Eigen::Success)
    throw NumericalError(detail::concat("H-infinity norm: gamma = ", gamma,
                                        " is not above the largest singular value of D"));
  // R^{-1} = -(-R)^{-1}.
  const Matrix Rinv_Bt = -llt_R.solve(Matrix(B.transpose()));  // m x n
  const Matrix Sinv_C = -llt_S.solve(C);                       // p x n
  Matrix H(2 * n, 2 * n);
  const Matrix H11 = A - Rinv_Bt.transpose() * D.transpose() * C;  // R symmetric
  H.topLeftCorner(n, n) = H11;
  H.topRightCorner(n, n) = -gamma * B * Rinv_Bt;
  H.bottomLeftCorner(n, n) = gamma * C.transpose() * Sinv_C;
  H.bottomRightCorner(n, n) = -H11.transpose();
  return H;
}

/// Relative distance from the imaginary axis, in units of ||H||_1, below which an eigenvalue of
/// the Hamiltonian counts as imaginary. Deliberately loose: a genuine crossing pushed off the
/// axis by rounding (O(eps ||H||) for simple eigenvalues, O(sqrt(eps) ||H||) for pairs about to
/// coalesce at a peak) would end the iteration early, whereas a spurious one only adds a midpoint
/// evaluation: the midpoints of all consecutive candidates still include a point inside every
/// genuine interval where sigma_max > gamma, and the lower bound is always a computed value.
constexpr double kImaginaryAxisTol = 1e-6;

/// Eigenvalues with real part at or above -kStabilityTol * ||A||_1 count as unstable.
constexpr double kStabilityTol = 1e3 * kEps;

constexpr Index kMaxLevelSetIterations = 100;
/// At most this many points (4 per decade) on the initial grid of the level-set method.
constexpr Index kInitialGridPoints = 200;

// ---------------------------------------------------------------------------------------------
// Brent's minimisation without derivatives (R. P. Brent, Algorithms for Minimization without
// Derivatives, 1973, ch. 5): golden section steps safeguarding parabolic interpolation, here on
// f(x) = -sigma_max(G(i e^x)) over a bracket of log-frequencies around a grid maximum.

struct BrentPoint {
  double x, f;
};

struct BrentOutcome {
  BrentPoint best;
  double estimated_gap;  ///< relative distance of the parabolic vertex from the best value
  Index evaluations;
};

/// Minimises f on [a, b] starting from x (with value fx) and the two neighbours w, v (known
/// values), to absolute accuracy ~tol in x, with at most max_evaluations calls of f.
template <class F>
BrentOutcome brent_minimize(F&& f, double a, double b, BrentPoint x, BrentPoint w, BrentPoint v,
                            double tol, Index max_evaluations) {
  const double golden = 0.5 * (3.0 - std::sqrt(5.0));
  // d, e (the last two steps) start large so that the first two steps may be parabolic.
  double d = b - a, e = b - a;
  Index evaluations = 0;
  while (evaluations < max_evaluations) {
    const double m = 0.5 * (a + b);
    const double tol1 = tol + 2.0 * kEps * std::abs(x.x), tol2 = 2.0 * tol1;
    if (std::abs(x.x - m) <= tol2 - 0.5 * (b - a)) break;
    bool golden_step = true;
    if (std::abs(e) > tol1) {
      double r = (x.x - w.x) * (x.f - v.f);
      double q = (x.x - v.x) * (x.f - w.f);
      double p = (x.x - v.x) * q - (x.x - w.x) * r;
      q = 2.0 * (q - r);
      if (q > 0.0)
        p = -p;
      else
        q = -q;
      const double e_previous = e;
      if (std::abs(p) < std::abs(0.5 * q * e_previous) && p > q * (a - x.x) && p < q * (b - x.x)) {
        e = d;
        d = p / q;
        const double u = x.x + d;
        if (u - a < tol2 || b - u < tol2) d = x.x < m ? tol1 : -tol1;
        golden_step = false;
      }
    }
    if (golden_step) {
      e = x.x < m ? b - x.x : a - x.x;
      d = golden * e;
    }
    const double u = std::abs(d) >= tol1 ? x.x + d : x.x + (d > 0 ? tol1 : -tol1);
    const BrentPoint pu{u, f(u)};
    ++evaluations;
    if (pu.f <= x.f) {
      (u < x.x ? b : a) = x.x;
      v = w;
      w = x;
      x = pu;
    } else {
      (u < x.x ? a : b) = u;
      if (pu.f <= w.f || w.x == x.x) {
        v = w;
        w = pu;
      } else if (pu.f <= v.f || v.x == x.x || v.x == w.x) {
        v = pu;
      }
    }
  }
  // Vertex of the parabola through the three best points: how much the peak may still exceed
  // the best value found (an estimate, not a bound).
  double gap = std::abs(w.f - x.f);
  const double r = (x.x - w.x) * (x.f - v.f), q = (x.x - v.x) * (x.f - w.f);
  const double denominator = 2.0 * (q - r);
  if (denominator != 0.0 && x.x != w.x && x.x != v.x && w.x != v.x) {
    const double step = -((x.x - v.x) * q - (x.x - w.x) * r) / denominator;
    // Value of the interpolating parabola at x + step (Lagrange form).
    const double t = x.x + step;
    const double lx = (t - w.x) * (t - v.x) / ((x.x - w.x) * (x.x - v.x));
    const double lw = (t - x.x) * (t - v.x) / ((w.x - x.x) * (w.x - v.x));
    const double lv = (t - x.x) * (t - w.x) / ((v.x - x.x) * (v.x - w.x));
    const double vertex = lx * x.f + lw * w.f + lv * v.f;
    if (std::isfinite(vertex)) gap = std::abs(x.f - vertex);
  }
  return {x, std::abs(x.f) > 0 ? gap / std::abs(x.f) : 0.0, evaluations};
}

/// Refinement budget of the sweep (see hinf_norm_sweep in the header).
constexpr Index kMaxRefinedPeaks = 8;
constexpr Index kMaxEvaluationsPerPeak = 30;
constexpr Index kRefinementBudget = 160;

}  // namespace

namespace {
HinfResult level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                     const Matrix& D_ff, double tolerance, bool require_stable);
}  // namespace

HinfResult hinf_norm_level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                               const Matrix& D_ff, double tolerance) {
  return level_set(E, A, B, C, D_ff, tolerance, true);
}

HinfResult linf_norm_level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                               const Matrix& D_ff, double tolerance) {
  return level_set(E, A, B, C, D_ff, tolerance, false);
}

namespace {
HinfResult level_set(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                     const Matrix& D_ff, double tolerance, bool require_stable) {
  const Index n = A.rows(), m = B.cols(), p = C.rows();
  require(n >= 1 && A.cols() == n, "H-infinity norm: A is ", A.rows(), "x", A.cols(),
          ", expected square and non-empty");
  require(E.size() == 0 || (E.rows() == n && E.cols() == n), "H-infinity norm: E is ", E.rows(),
          "x", E.cols(), ", expected ", n, "x", n, " or empty (identity)");
  require(B.rows() == n && m >= 1, "H-infinity norm: B is ", B.rows(), "x", m, ", expected ", n,
          " rows and at least one column");
  require(C.cols() == n && p >= 1, "H-infinity norm: C is ", p, "x", C.cols(),
          ", expected at least one row and ", n, " columns");
  const Matrix D = D_ff.size() == 0 ? Matrix(Matrix::Zero(p, m)) : D_ff;
  require(D.rows() == p && D.cols() == m, "H-infinity norm: D is ", D.rows(), "x", D.cols(),
          ", expected ", p, "x", m);
  require(std::isfinite(tolerance) && tolerance > 0.0 && tolerance < 1.0,
          "H-infinity norm: tolerance = ", tolerance, ", expected in (0, 1)");
  require(A.allFinite() && B.allFinite() && C.allFinite() && D.allFinite() &&
              (E.size() == 0 || E.allFinite()),
          "H-infinity norm: the system matrices contain non-finite entries");

  // Standard form A_hat = E^{-1} A, B_hat = E^{-1} B.
  Matrix A_hat = A, B_hat = B;
  if (E.size() != 0) {
    const Eigen::PartialPivLU<Matrix> lu(E);
    const double rcond = lu.rcond();
    if (!(rcond > 1e3 * kEps))
      throw NumericalError(detail::concat(
          "H-infinity norm: E is singular (reciprocal condition number ", rcond, ")"));
    A_hat = lu.solve(A);
    B_hat = lu.solve(B);
  }

  // Stability: every eigenvalue of A_hat in the open left half plane.
  Matrix A_work = A_hat;
  const ComplexVector poles = eigenvalues_of(A_work, "H-infinity norm: the poles (E^{-1} A)");
  const double a_norm = A_hat.cwiseAbs().colwise().sum().maxCoeff();
  for (Index i = 0; i < n; ++i) {
    if (require_stable && !(poles[i].real() < -kStabilityTol * a_norm))
      throw NumericalError(detail::concat(
          "H-infinity norm: the system is not stable: eigenvalue ", complex_text(poles[i]),
          " of E^{-1} A has real part >= ", -kStabilityTol * a_norm));
    if (!require_stable && !(std::abs(poles[i].real()) > kStabilityTol * a_norm))
      throw NumericalError(detail::concat("L-infinity norm: eigenvalue ", complex_text(poles[i]),
                                          " of E^{-1} A lies on the imaginary axis"));
  }

  const HessenbergResponse response(A_hat, B_hat, C, D);
  HinfResult result;
  result.method = "level-set";

  // Initial lower bound: G at infinity (= D), at 0, and at the modulus and the imaginary part of
  // every pole (a lightly damped pole peaks near its imaginary part).
  double lower = largest_singular_value(D);
  double omega = std::numeric_limits<double>::infinity();
  auto try_frequency = [&](double w) {
    const double s = response.sigma(w);
    if (s > lower) {
      lower = s;
      omega = w;
    }
  };
  try_frequency(0.0);
  double pole_min = std::numeric_limits<double>::infinity(), pole_max = 0.0;
  for (Index i = 0; i < n; ++i) {
    const double modulus = std::abs(poles[i]);
    try_frequency(modulus);
    if (poles[i].imag() > 0.0) try_frequency(poles[i].imag());
    pole_min = std::min(pole_min, modulus);
    pole_max = std::max(pole_max, modulus);
  }
  // A coarse logarithmic grid over the band of the poles: a peak that rises only slightly above
  // sigma_max(D) or lies between poles would otherwise start the iteration from a poor bound.
  // Each point costs O(n^2 m), next to O(n^3) for one Hamiltonian eigensolve.
  if (pole_min > 0.0) {
    const double lo = std::log(0.1 * pole_min), hi = std::log(10.0 * pole_max);
    const Index points = std::clamp<Index>(static_cast<Index>(4.0 * (hi - lo) / std::log(10.0)), 2,
                                           kInitialGridPoints);
    for (Index k = 0; k < points; ++k)
      try_frequency(std::exp(lo + (hi - lo) * static_cast<double>(k) / double(points - 1)));
  }
  if (lower == 0.0) {  // G = 0 identically (B or C zero)
    result.relative_accuracy = 0.0;
    result.omega = 0.0;
    return result;
  }

  for (Index iteration = 0;; ++iteration) {
    if (iteration == kMaxLevelSetIterations)
      throw NumericalError(
          detail::concat("H-infinity norm: level-set iteration did not converge in ",
                         kMaxLevelSetIterations, " steps (lower bound ", lower, ")"));
    const double gamma = (1.0 + 2.0 * tolerance) * lower;
    Matrix H = hamiltonian(A_hat, B_hat, C, D, gamma);
    const double threshold = kImaginaryAxisTol * H.cwiseAbs().colwise().sum().maxCoeff();
    const ComplexVector eigenvalues =
        eigenvalues_of(H, detail::concat("H-infinity norm: the Hamiltonian at gamma = ", gamma));
    ++result.evaluations;
    std::vector<double> crossings;
    for (const Complex& z : eigenvalues)
      if (std::abs(z.real()) <= threshold) crossings.push_back(z.imag());
    // Both signs are kept: the interval around w = 0 has the midpoint 0 between -w1 and w1.
    std::sort(crossings.begin(), crossings.end());
    double best = lower, best_omega = omega;
    auto try_midpoint = [&](double w) {
      const double s = response.sigma(w);
      if (s > best) {
        best = s;
        best_omega = w;
      }
    };
    for (std::size_t k = 0; k + 1 < crossings.size(); ++k) {
      const double a = crossings[k], b = crossings[k + 1];
      try_midpoint(std::abs(0.5 * (a + b)));
      // Also the geometric mean: an interval that reaches far up in frequency (sigma_max just
      // above sigma_max(D) up to w -> infinity) would otherwise be probed near its upper end
      // only, and the lower bound would creep up linearly.
      if (a * b > 0.0) try_midpoint(std::sqrt(a * b));
    }
    if (!(best > gamma)) {
      // No frequency with sigma_max > gamma: the norm lies in [lower, gamma].
      result.norm = lower;
      result.omega = omega;
      result.relative_accuracy = (gamma - lower) / lower;
      return result;
    }
    lower = best;
    omega = best_omega;
  }
}

}  // namespace

HinfResult hinf_norm_sweep(LtiOperator& sys, double w_min, double w_max, Index n_grid,
                           double tolerance) {
  return hinf_norm_sweep(sys, w_min, w_max, Vector(), n_grid, tolerance);
}

HinfResult hinf_norm_sweep(LtiOperator& sys, double w_min, double w_max, const Vector& hints,
                           Index n_grid, double tolerance) {
  require(n_grid >= 3, "H-infinity sweep: n_grid = ", n_grid, ", expected at least 3");
  require(std::isfinite(tolerance) && tolerance > 0.0 && tolerance < 1.0,
          "H-infinity sweep: tolerance = ", tolerance, ", expected in (0, 1)");
  const Vector grid = log_frequencies(w_min, w_max, n_grid);  // checks the range
  for (Index k = 0; k < hints.size(); ++k)
    require(std::isfinite(hints[k]), "H-infinity sweep: hint frequency ", k, " is ", hints[k]);
  HinfResult result;
  result.method = "sweep";

  auto sigma_at = [&](double w) {
    ++result.evaluations;
    return largest_singular_value(transfer_function(sys, Complex(0.0, w)));
  };
  Vector values(n_grid);
  for (Index k = 0; k < n_grid; ++k) values[k] = sigma_at(grid[k]);

  Index best = 0;
  values.maxCoeff(&best);
  result.norm = values[best];
  result.omega = grid[best];
  // The static gain, which a logarithmic grid never reaches: mechanical systems with stiffness
  // often peak there (the static compliance), and it costs one solve at p = 0.
  const double dc = sigma_at(0.0);

  const Vector log_grid = grid.array().log();
  const double spacing = log_grid[1] - log_grid[0];
  double gap_of_best = 0.0;
  // Brent on f = -sigma_max in the bracket [lo, hi] of log w, from x with neighbours w, v.
  auto refine = [&](double lo, double hi, BrentPoint x, BrentPoint w, BrentPoint v,
                    Index max_evaluations, bool is_grid_best) {
    const BrentOutcome out = brent_minimize([&](double t) { return -sigma_at(std::exp(t)); }, lo,
                                            hi, x, w, v, tolerance, max_evaluations);
    if (-out.best.f > result.norm) {
      result.norm = -out.best.f;
      result.omega = std::exp(out.best.x);
      gap_of_best = out.estimated_gap;
    } else if (is_grid_best && result.omega == grid[best]) {
      gap_of_best = out.estimated_gap;
    }
    return out.evaluations;
  };

  // Hints first, each in a bracket of one grid spacing either side: a peak narrower than the
  // grid is found if a hint falls inside it (or close enough for Brent to climb it).
  for (Index h = 0; h < hints.size(); ++h) {
    const double x0 = std::log(std::abs(hints[h]));
    if (!(x0 >= log_grid[0] && x0 <= log_grid[n_grid - 1])) continue;
    const double lo = std::max(x0 - spacing, log_grid[0]);
    const double hi = std::min(x0 + spacing, log_grid[n_grid - 1]);
    const BrentPoint x{x0, -sigma_at(std::exp(x0))};
    const BrentPoint w{lo, lo == x0 ? x.f : -sigma_at(std::exp(lo))};
    const BrentPoint v{hi, hi == x0 ? x.f : -sigma_at(std::exp(hi))};
    // Start from the best of the three, as Brent expects.
    BrentPoint p[3] = {x, w, v};
    std::sort(p, p + 3, [](const BrentPoint& a, const BrentPoint& b) { return a.f < b.f; });
    refine(lo, hi, p[0], p[1], p[2], kMaxEvaluationsPerPeak, false);
  }

  // Local maxima of the grid, largest first.
  std::vector<Index> peaks;
  for (Index k = 0; k < n_grid; ++k) {
    const bool left = k == 0 || values[k] > values[k - 1];
    const bool right = k == n_grid - 1 || values[k] >= values[k + 1];
    if (left && right) peaks.push_back(k);
  }
  std::stable_sort(peaks.begin(), peaks.end(),
                   [&](Index i, Index j) { return values[i] > values[j]; });
  Index budget = kRefinementBudget;
  for (std::size_t r = 0; r < peaks.size() && r < kMaxRefinedPeaks && budget > 0; ++r) {
    const Index k = peaks[r];
    const Index lo = std::max<Index>(k - 1, 0), hi = std::min<Index>(k + 1, n_grid - 1);
    const BrentPoint x{log_grid[k], -values[k]};
    // The neighbours seed the first parabola; at an end of the grid both are the inner one.
    const BrentPoint w{log_grid[lo == k ? hi : lo], -values[lo == k ? hi : lo]};
    const BrentPoint v{log_grid[hi == k ? lo : hi], -values[hi == k ? lo : hi]};
    budget -= refine(log_grid[lo], log_grid[hi], x, w, v, std::min(budget, kMaxEvaluationsPerPeak),
                     k == best);
  }
  result.relative_accuracy = gap_of_best;
  if (dc > result.norm) {
    result.norm = dc;
    result.omega = 0.0;
    result.relative_accuracy = 0.0;  // nothing to refine at the end of the frequency axis
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Subspace method (Aliyev, Benner, Mengi, Schwerdtner & Voigt 2017)

HinfResult hinf_norm_subspace(LtiOperator& sys, const Vector& start_frequencies,
                              DenseLtiOperator* reduced, const SubspaceHinfOptions& options) {
  require(std::isfinite(options.tolerance) && options.tolerance > 0.0 && options.tolerance < 1.0,
          "H-infinity subspace method: tolerance = ", options.tolerance, ", expected in (0, 1)");
  require(options.max_iterations >= 1 && options.directions >= 1 && options.max_start_points >= 1,
          "H-infinity subspace method: max_iterations = ", options.max_iterations,
          ", directions = ", options.directions, ", max_start_points = ", options.max_start_points,
          ", expected all >= 1");
  const Index n = sys.n(), m = sys.n_inputs(), p = sys.n_outputs();
  if (reduced != nullptr)
    require(reduced->n_inputs() == m && reduced->n_outputs() == p,
            "H-infinity subspace method: the reduced model has ", reduced->n_inputs(),
            " inputs and ", reduced->n_outputs(), " outputs, expected ", m, " and ", p);
  std::vector<double> starts;
  for (Index k = 0; k < start_frequencies.size(); ++k) {
    const double w = std::abs(start_frequencies[k]);
    if (!std::isfinite(w)) continue;
    const bool seen = std::any_of(starts.begin(), starts.end(), [&](double x) {
      return std::abs(x - w) <= 1e-10 * std::max(x, w);
    });
    if (!seen && static_cast<Index>(starts.size()) < options.max_start_points) starts.push_back(w);
  }
  require(!starts.empty(), "H-infinity subspace method: no finite start frequency among ",
          start_frequencies.size());

  const bool blocks = m <= options.directions && p <= options.directions;
  const Matrix D = sys.D_ff().size() == 0 ? Matrix(Matrix::Zero(p, m)) : sys.D_ff();
  const Matrix D_total = reduced != nullptr ? Matrix(D - reduced->D_ff()) : D;
  const ComplexMatrix Bc = sys.B().cast<Complex>(), Ct = sys.C().transpose().cast<Complex>();

  HinfResult result;
  result.method = "subspace";
  result.converged = false;
  double best = -1.0, best_omega = 0.0;
  Matrix V(n, 0), AV(n, 0), EV(n, 0);

  // sigma_max of the full (error) system at w; with `extend`, the interpolation directions at w
  // join the basis. Returns the number of columns added through `added`.
  // One frequency on operator `op`: G(i w) (- G_r), its sigma_max and, with `directions`, the
  // interpolation directions. Touches nothing shared (runs on a helper thread too).
  struct Point {
    double w = 0.0, sigma = 0.0;
    ComplexMatrix right, left;
  };
  auto solve_point = [&](LtiOperator& op, double w, bool directions) {
    throw_if_stop_requested("H-infinity norm");
    Point pt;
    pt.w = w;
    const Complex shift(0.0, -w);  // A + shift E = A - i w E
    ComplexMatrix X;
    op.solve_shifted(shift, Bc, X);
    ComplexMatrix G = -(sys.C().cast<Complex>() * X) + D.cast<Complex>();
    if (reduced != nullptr) G -= dense_response(*reduced, w);
    if (!directions || blocks) pt.sigma = lapack::spectral_norm(G);
    if (!directions) return pt;
    if (blocks) {
      pt.right = std::move(X);
      op.solve_shifted(shift, Ct, pt.left, true);
    } else {
      const lapack::ComplexSvd svd = lapack::thin_complex_svd(G);
      pt.sigma = svd.s.size() == 0 ? 0.0 : svd.s(0);
      const Index d = std::min<Index>(options.directions, std::min(m, p));
      pt.right = X * svd.V.leftCols(d);
      op.solve_shifted(shift, ComplexMatrix(Ct * svd.U.leftCols(d).conjugate()), pt.left, true);
    }
    return pt;
  };
  // Counts the evaluation, keeps the best and adds the point's directions to the basis; returns
  // the number of columns added.
  auto absorb = [&](const Point& pt) {
    ++result.evaluations;
    if (pt.sigma > best) {
      best = pt.sigma;
      best_omega = pt.w;
    }
    std::vector<Vector> candidates;
    for (const ComplexMatrix* Z : {&pt.right, &pt.left})
      for (Index j = 0; j < Z->cols(); ++j) {
        candidates.emplace_back(Z->col(j).real());
        if (pt.w > 0.0) candidates.emplace_back(Z->col(j).imag());
      }
    // Gram-Schmidt twice against the basis and the accepted candidates; a candidate that keeps
    // less than 1e-10 of its norm adds nothing new.
    Matrix fresh(n, 0);
    for (Vector& c : candidates) {
      const double norm0 = c.norm();
      if (!(norm0 > 0.0)) continue;
      for (int pass = 0; pass < 2; ++pass) {
        if (V.cols() > 0) c -= V * (V.transpose() * c);
        if (fresh.cols() > 0) c -= fresh * (fresh.transpose() * c);
      }
      const double norm1 = c.norm();
      if (!(norm1 > 1e-10 * norm0)) continue;
      fresh.conservativeResize(Eigen::NoChange, fresh.cols() + 1);
      fresh.col(fresh.cols() - 1) = c / norm1;
    }
    if (fresh.cols() > 0) {
      Matrix Af, Ef;
      sys.apply_A(fresh, Af);
      sys.apply_E(fresh, Ef);
      const Index k = V.cols(), f = fresh.cols();
      V.conservativeResize(Eigen::NoChange, k + f);
      AV.conservativeResize(Eigen::NoChange, k + f);
      EV.conservativeResize(Eigen::NoChange, k + f);
      V.rightCols(f) = fresh;
      AV.rightCols(f) = Af;
      EV.rightCols(f) = Ef;
    }
    return fresh.cols();
  };
  auto evaluate = [&](double w, bool extend, Index* added) {
    const Point pt = solve_point(sys, w, extend);
    *added = absorb(pt);
    return pt.sigma;
  };

  // The start frequencies on two threads when the operator offers a solver copy (its own factor
  // cache): each point is one complex factorization and a few solves.
  std::vector<Point> points(starts.size());
  {
    std::unique_ptr<LtiOperator> copy = starts.size() > 1 ? sys.solver_copy() : nullptr;
    for_each_point(sys, copy.get(), static_cast<Index>(starts.size()),
                   [&](LtiOperator& op, Index k) {
                     const auto i = static_cast<std::size_t>(k);
                     points[i] = solve_point(op, starts[i], true);
                   });
  }
  Index added = 0;
  for (const Point& pt : points) added = absorb(pt);

  double last_gap = std::numeric_limits<double>::infinity();
  std::vector<double> peaks;  // the interpolating models' peak frequencies
  for (Index iteration = 0; iteration < options.max_iterations; ++iteration) {
    // The interpolating model (minus G_r), dense.
    const Index k = V.cols(), r = reduced != nullptr ? reduced->n() : 0;
    Matrix Ek = Matrix::Zero(k + r, k + r), Ak = Matrix::Zero(k + r, k + r), Bk(k + r, m),
           Ck(p, k + r);
    Ek.topLeftCorner(k, k) = V.transpose() * EV;
    Ak.topLeftCorner(k, k) = V.transpose() * AV;
    Bk.topRows(k) = V.transpose() * sys.B();
    Ck.leftCols(k) = sys.C() * V;
    if (reduced != nullptr) {
      Ek.bottomRightCorner(r, r) = reduced->E();
      Ak.bottomRightCorner(r, r) = reduced->A();
      Bk.bottomRows(r) = reduced->B();
      Ck.rightCols(r) = -reduced->C();
    }
    HinfResult model;
    try {
      model = linf_norm_level_set(Ek, Ak, Bk, Ck, D_total, 1e-10);
    } catch (const NumericalError&) {
      break;  // a singular projected E or a pole on the axis: keep the best evaluation
    }
    result.subspace_dimension = k;
    if (!std::isfinite(model.omega)) {
      // The model peaks at w -> infinity, where G - G_r tends to D - D_r exactly.
      const double at_infinity = largest_singular_value(D_total);
      if (at_infinity >= best) {
        best = at_infinity;
        best_omega = std::numeric_limits<double>::infinity();
      }
      last_gap = std::abs(model.norm - at_infinity) / std::max(at_infinity, 1e-300);
      result.converged = last_gap <= options.tolerance;
      break;
    }
    const double w = std::abs(model.omega);
    peaks.push_back(w);
    const double sigma = evaluate(w, true, &added);
    last_gap = std::abs(model.norm - sigma) / std::max(sigma, 1e-300);
    if (last_gap <= options.tolerance) {
      result.converged = true;
      break;
    }
    if (added == 0) break;  // nothing new to interpolate: the model cannot improve
  }

  result.norm = best;
  result.omega = best_omega;
  if (!std::isfinite(best_omega)) {
    result.relative_accuracy = last_gap;
    return result;
  }
  // Check on the full system: sigma_max at w (1 +- delta), Brent's climb if either side is
  // higher, then one accurate evaluation at the final frequency.
  if (best_omega > 0.0) {
    double delta = 1e-4;
    if (peaks.size() >= 2) {
      const double a = peaks[peaks.size() - 1], b = peaks[peaks.size() - 2];
      delta = std::clamp(std::abs(a - b) / best_omega, 1e-7, 1e-2);
    }
    // Unsettled: the best evaluation is only a sample of the curve; climb it on a bracket of a
    // factor 2 either side (as the former sweep refined its grid maxima).
    if (!result.converged) delta = 0.5;
    const double w0 = best_omega, s0 = best;
    const double lo = std::log(w0 * (1.0 - delta)), hi = std::log(w0 * (1.0 + delta));
    const double s_lo = evaluate(std::exp(lo), false, &added);
    const double s_hi = evaluate(std::exp(hi), false, &added);
    if (!result.converged || std::max(s_lo, s_hi) > s0) {
      BrentPoint pts[3] = {{std::log(w0), -s0}, {lo, -s_lo}, {hi, -s_hi}};
      std::sort(pts, pts + 3, [](const BrentPoint& a, const BrentPoint& b) { return a.f < b.f; });
      // The climb may leave the bracket's side that was higher: widen it there.
      const double a = s_lo > s_hi ? lo - (hi - lo) : lo, b = s_hi >= s_lo ? hi + (hi - lo) : hi;
      brent_minimize([&](double t) { return -evaluate(std::exp(t), false, &added); }, a, b, pts[0],
                     pts[1], pts[2], 1e-8, result.converged ? 8 : 16);
    }
  }
  const ResponseValue check = accurate_response(sys, best_omega, reduced);
  ++result.evaluations;
  result.norm = check.sigma;
  result.omega = check.omega;  // where the refinement ended
  result.evaluation_error = check.error_estimate;
  result.relative_accuracy = std::max(std::isfinite(last_gap) ? last_gap : 1.0,
                                      check.sigma > 0.0 ? check.error_estimate / check.sigma : 0.0);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The error's H-infinity norm from a reference model

namespace {

Matrix feedthrough(const LtiOperator& sys) {
  return sys.D_ff().size() == 0 ? Matrix(Matrix::Zero(sys.n_outputs(), sys.n_inputs()))
                                : sys.D_ff();
}

}  // namespace

HinfResult hinf_error_with_reference(LtiOperator& sys, DenseLtiOperator& reduced,
                                     const DenseLtiOperator& reference, double reference_bound) {
  const Index m = sys.n_inputs(), p = sys.n_outputs();
  require(reduced.n_inputs() == m && reduced.n_outputs() == p && reference.n_inputs() == m &&
              reference.n_outputs() == p,
          "H-infinity error from a reference model: the full system has ", m, " inputs and ", p,
          " outputs, the reduced model ", reduced.n_inputs(), " and ", reduced.n_outputs(),
          ", the reference ", reference.n_inputs(), " and ", reference.n_outputs());
  require(std::isfinite(reference_bound) && reference_bound >= 0.0,
          "H-infinity error from a reference model: reference_bound = ", reference_bound,
          ", expected finite and >= 0");
  const double beta = reference_bound;
  const Index q = reference.n(), r = reduced.n();
  // The surrogate S = G_ref - G_r, in standard form for the Hamiltonian and the evaluations.
  Matrix Es = Matrix::Zero(q + r, q + r), As = Matrix::Zero(q + r, q + r), Bs(q + r, m),
         Cs(p, q + r);
  Es.topLeftCorner(q, q) = reference.E();
  Es.bottomRightCorner(r, r) = reduced.E();
  As.topLeftCorner(q, q) = reference.A();
  As.bottomRightCorner(r, r) = reduced.A();
  Bs << reference.B(), reduced.B();
  Cs << reference.C(), -reduced.C();
  const Matrix Ds = feedthrough(reference) - feedthrough(reduced);
  const Matrix D_total = feedthrough(sys) - feedthrough(reduced);

  HinfResult result;
  result.method = "reference model";
  result.subspace_dimension = q;
  const HinfResult peak = linf_norm_level_set(Es, As, Bs, Cs, Ds, 1e-10);
  result.evaluations = 0;
  if (!std::isfinite(peak.omega)) {
    // S peaks as w -> infinity, where G - G_r tends to D - D_r exactly.
    result.norm = largest_singular_value(D_total);
    result.omega = std::numeric_limits<double>::infinity();
    result.relative_accuracy = result.norm > 0.0 ? 2.0 * beta / result.norm : 1.0;
    result.converged = false;
    return result;
  }
  const Eigen::PartialPivLU<Matrix> lu(Es);
  const Matrix A_hat = lu.solve(As), B_hat = lu.solve(Bs);
  const HessenbergResponse S(A_hat, B_hat, Cs, Ds);

  // Frequencies where S crosses gamma = s* - 2 beta: imaginary eigenvalues of the Hamiltonian.
  const double gamma = peak.norm - 2.0 * beta;
  std::vector<double> cross{0.0};
  bool bounded = gamma > largest_singular_value(Ds) && gamma > 0.0;
  if (bounded) {
    Matrix H = hamiltonian(A_hat, B_hat, Cs, Ds, gamma);
    const double h_norm = H.cwiseAbs().colwise().sum().maxCoeff();
    for (const Complex& z : eigenvalues_of(H, "H-infinity error: the Hamiltonian"))
      if (z.imag() > 0.0 && std::abs(z.real()) <= kImaginaryAxisTol * h_norm)
        cross.push_back(z.imag());
  }
  std::sort(cross.begin(), cross.end());
  cross.push_back(std::numeric_limits<double>::infinity());
  // Intervals where S >= gamma (midpoint test), adjacent ones merged; the peak's always.
  std::vector<std::pair<double, double>> intervals;
  for (std::size_t i = 0; i + 1 < cross.size(); ++i) {
    const double a = cross[i], b = cross[i + 1];
    if (!(b > a)) continue;
    const bool has_peak = peak.omega >= a && peak.omega <= b;
    const double mid = a == 0.0 ? (std::isfinite(b) ? 0.5 * b : 1.0)
                                : (std::isfinite(b) ? std::sqrt(a * b) : 10.0 * a);
    if (!has_peak && S.sigma(mid) < gamma) continue;
    if (!intervals.empty() && intervals.back().second == a)
      intervals.back().second = b;
    else
      intervals.emplace_back(a, b);
  }
  if (!bounded || std::any_of(intervals.begin(), intervals.end(),
                              [](const auto& iv) { return !std::isfinite(iv.second); })) {
    // S stays above gamma as w -> infinity: no bounded search region.
    result.norm = peak.norm;
    result.omega = peak.omega;
    result.converged = false;
    result.relative_accuracy = 1.0;
    return result;
  }

  // Climb sigma_max(G - G_r) on the full system over each interval, from S's maximum there.
  constexpr Index kMaxClimb = 25;
  double mismatch = 0.0, best = -1.0, best_omega = peak.omega, gap = 0.0;
  bool settled = true;
  auto error_at = [&](double w) {
    ComplexMatrix G = transfer_function(sys, Complex(0.0, w)) - dense_response(reduced, w);
    ++result.evaluations;
    mismatch = std::max(mismatch, (G - S(w)).norm());
    const double s = largest_singular_value(G);
    if (s > best) {
      best = s;
      best_omega = w;
    }
    return s;
  };
  for (const auto& [a, b] : intervals) {
    // Intervals from w = 0 are searched in w, the others in log w.
    const bool linear = a == 0.0;
    const double xa = linear ? 0.0 : std::log(a), xb = linear ? b : std::log(b);
    auto to_w = [&](double x) { return linear ? std::max(x, 0.0) : std::exp(x); };
    double x0;
    if (peak.omega >= a && peak.omega <= b) {
      x0 = linear ? peak.omega : std::log(peak.omega);
    } else {
      // S's largest value on 33 points of the interval (dense evaluations only).
      x0 = xa;
      double s0 = -1.0;
      for (int k = 0; k <= 32; ++k) {
        const double x = xa + (xb - xa) * k / 32.0, sx = S.sigma(to_w(x));
        if (sx > s0) {
          s0 = sx;
          x0 = x;
        }
      }
    }
    const double h = 0.1 * (xb - xa);
    const double x1 = x0 - h >= xa ? x0 - h : x0 + 2.0 * h;
    const double x2 = x0 + h <= xb ? x0 + h : x0 - 2.0 * h;
    BrentPoint p0{x0, -error_at(to_w(x0))}, p1{x1, -error_at(to_w(x1))},
        p2{x2, -error_at(to_w(x2))};
    BrentPoint pts[3] = {p0, p1, p2};
    std::sort(pts, pts + 3, [](const BrentPoint& u, const BrentPoint& v) { return u.f < v.f; });
    const double tol = linear ? 1e-6 * std::max(b, 1e-300) : 1e-6;
    const BrentOutcome o = brent_minimize([&](double x) { return -error_at(to_w(x)); }, xa, xb,
                                          pts[0], pts[1], pts[2], tol, kMaxClimb);
    if (o.evaluations >= kMaxClimb) settled = false;
    if (-o.best.f >= best) gap = o.estimated_gap;
  }
  const ResponseValue check = accurate_response(sys, best_omega, &reduced);
  ++result.evaluations;
  result.norm = check.sigma;
  result.omega = check.omega;
  result.evaluation_error = check.error_estimate;
  // The bound holds (up to the evaluations' own errors) or the search region was wrong.
  const bool consistent = mismatch <= 4.0 * beta + 1e-8 * best + 10.0 * check.error_estimate;
  result.converged = settled && consistent;
  result.relative_accuracy =
      std::max(gap, check.sigma > 0.0 ? check.error_estimate / check.sigma : 0.0);
  if (!consistent) result.relative_accuracy = std::max(result.relative_accuracy, 1.0);
  return result;
}

}  // namespace mor
