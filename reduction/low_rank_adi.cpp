// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank ADI in residual-factor form with real handling of complex shift pairs, and its three
// shift strategies (reduction/low_rank_adi.hpp).
#include "reduction/low_rank_adi.hpp"

#include <Spectra/LinAlg/Arnoldi.h>
#include <Spectra/LinAlg/UpperHessenbergEigen.h>
#include <Spectra/MatOp/internal/ArnoldiOp.h>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <thread>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/progress.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

ShiftStrategy parse_shift_strategy(std::string_view name) {
  for (const ShiftStrategy s : {ShiftStrategy::automatic, ShiftStrategy::projection,
                                ShiftStrategy::penzl, ShiftStrategy::given}) {
    if (to_string(s) == name) return s;
  }
  throw InvalidArgument(detail::concat("unknown ADI shift strategy \"", name,
                                       "\"; accepted: automatic, projection, penzl, given"));
}

std::string_view to_string(ShiftStrategy s) {
  switch (s) {
    case ShiftStrategy::automatic:
      return "automatic";
    case ShiftStrategy::projection:
      return "projection";
    case ShiftStrategy::penzl:
      return "penzl";
    case ShiftStrategy::given:
      return "given";
  }
  throw InvalidArgument(detail::concat("unknown ShiftStrategy value ", static_cast<int>(s)));
}

ResidualNorm parse_residual_norm(std::string_view name) {
  if (name == "spectral") return ResidualNorm::spectral;
  if (name == "frobenius") return ResidualNorm::frobenius;
  throw InvalidArgument(
      detail::concat("unknown ADI residual norm \"", name, "\"; accepted: spectral, frobenius"));
}

std::string_view to_string(ResidualNorm n) {
  switch (n) {
    case ResidualNorm::spectral:
      return "spectral";
    case ResidualNorm::frobenius:
      return "frobenius";
  }
  throw InvalidArgument(detail::concat("unknown ResidualNorm value ", static_cast<int>(n)));
}

std::string_view to_string(AdiStatus s) {
  switch (s) {
    case AdiStatus::converged:
      return "converged";
    case AdiStatus::max_iterations:
      return "max_iterations";
    case AdiStatus::stalled:
      return "stalled";
  }
  throw InvalidArgument(detail::concat("unknown AdiStatus value ", static_cast<int>(s)));
}

namespace {

/// Relative tolerance below which the imaginary part of a shift counts as zero.
constexpr double kRealTol = 1e-12;

void validate_options(const AdiOptions& o) {
  require(std::isfinite(o.tolerance) && o.tolerance > 0.0,
          "LR-ADI: tolerance must be positive and finite, got ", o.tolerance);
  require(o.max_iterations >= 1, "LR-ADI: max_iterations must be at least 1, got ",
          o.max_iterations);
  require(std::isfinite(o.stall_factor) && o.stall_factor >= 0.0 && o.stall_factor < 1.0,
          "LR-ADI: stall_factor must be in [0, 1) (0 disables), got ", o.stall_factor);
  require(o.stall_window >= 0, "LR-ADI: stall_window must be >= 0 (0 disables), got ",
          o.stall_window);
  require(o.projection_columns >= 0, "LR-ADI: projection_columns must be >= 0, got ",
          o.projection_columns);
  require(o.projection_shifts >= 0, "LR-ADI: projection_shifts must be >= 0 (0: all), got ",
          o.projection_shifts);
  require(o.residual_norm == ResidualNorm::spectral || o.residual_norm == ResidualNorm::frobenius,
          "LR-ADI: unknown residual_norm value ", static_cast<int>(o.residual_norm));
  if (o.strategy == ShiftStrategy::penzl || o.strategy == ShiftStrategy::automatic) {
    require(o.penzl_shifts >= 1, "LR-ADI: penzl_shifts must be at least 1, got ", o.penzl_shifts);
    require(o.penzl_arnoldi_steps >= 0 && o.penzl_inverse_arnoldi_steps >= 0 &&
                o.penzl_arnoldi_steps + o.penzl_inverse_arnoldi_steps >= 1,
            "LR-ADI: Penzl needs Arnoldi steps >= 0 and at least one in total, got ",
            o.penzl_arnoldi_steps, " and ", o.penzl_inverse_arnoldi_steps);
  }
  if (o.strategy == ShiftStrategy::given) {
    require(!o.shifts.empty(), "LR-ADI: strategy \"given\" needs at least one shift");
  }
  // Given shifts, and a Penzl cycle handed over from an earlier run.
  for (std::size_t i = 0; i < o.shifts.size(); ++i) {
    const Complex p = o.shifts[i];
    require(std::isfinite(p.real()) && std::isfinite(p.imag()) && p.real() < 0.0,
            "LR-ADI: given shift ", i, " is ", p, "; every shift needs Re p < 0");
    if (std::abs(p.imag()) <= kRealTol * std::abs(p)) continue;
    const bool paired = i + 1 < o.shifts.size() &&
                        std::abs(o.shifts[i + 1] - std::conj(p)) <= kRealTol * std::abs(p);
    require(paired, "LR-ADI: given shift ", i, " is ", p,
            " but the next shift is not its conjugate; complex shifts come in consecutive "
            "pairs (p, conj(p))");
    ++i;
  }
}

/// ||X^T X||_2 = ||X||_2^2, or ||X^T X||_F.
double gram_norm(const Matrix& X, ResidualNorm norm) {
  if (X.cols() == 1) return X.squaredNorm();
  Matrix G = Matrix::Zero(X.cols(), X.cols());
  G.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  if (!G.allFinite()) return std::numeric_limits<double>::quiet_NaN();
  if (norm == ResidualNorm::frobenius)
    return G.selfadjointView<Eigen::Lower>().toDenseMatrix().norm();
  return lapack::symmetric_eigenvalues(G).cwiseAbs().maxCoeff();
}

}  // namespace

std::vector<Complex> detail::pencil_eigenvalues(const Matrix& Ah, const Matrix& Eh) {
  std::vector<Complex> values;
  Eigen::PartialPivLU<Matrix> lu(Eh);
  Matrix EinvA = lu.solve(Ah);
  // (Eigen's rcond estimate misses exactly zero pivots, hence the finiteness check.)
  if (lu.rcond() > 1e-10 && EinvA.allFinite()) {
    try {
      const ComplexVector eigenvalues = lapack::eigenvalues(EinvA);
      values.assign(eigenvalues.begin(), eigenvalues.end());
      return values;
    } catch (const NumericalError&) {  // the QR algorithm did not converge: QZ below
    }
  }
  // A nearly singular projected E: the QZ algorithm (LAPACK's dggev), dropping the (near)
  // infinite eigenvalues.
  Matrix A = Ah, E = Eh;
  ComplexVector alpha;
  Vector beta;
  lapack::generalized_eigenvalues(A, E, alpha, beta);
  for (Index i = 0; i < alpha.size(); ++i)
    if (std::abs(beta[i]) > 1e-12 * std::abs(alpha[i])) values.push_back(alpha[i] / beta[i]);
  return values;
}

namespace {
using detail::pencil_eigenvalues;

/// Shift representatives from eigenvalue estimates of a real pencil: one value per real shift or
/// complex pair (the member with Im p > 0); unstable estimates are reflected into the open left
/// half plane (Re p -> -Re p), non-finite, zero or purely imaginary ones dropped, near
/// duplicates merged.
/// The rightmost eigenvalue estimate with Re > 0 that the shift computations of this thread's
/// current LR-ADI run met (reflected for the shifts), for the message when the residual blows
/// up: an unstable system, named as the dense solver names it. Reset by low_rank_adi.
thread_local std::optional<Complex> t_unstable_estimate;

std::vector<Complex> shift_representatives(const std::vector<Complex>& values) {
  std::vector<Complex> out;
  for (Complex v : values) {
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag()) || v == Complex(0.0)) continue;
    if (v.real() > 0.0 && (!t_unstable_estimate || v.real() > t_unstable_estimate->real()))
      t_unstable_estimate = v;
    const double size = std::abs(v);
    if (std::abs(v.imag()) <= kRealTol * size) v = Complex(v.real(), 0.0);
    if (v.imag() < 0.0) v = std::conj(v);
    if (v.real() > 0.0) v = Complex(-v.real(), v.imag());
    if (!(v.real() < 0.0)) continue;
    const bool duplicate = std::any_of(out.begin(), out.end(),
                                       [&](Complex w) { return std::abs(w - v) <= 1e-10 * size; });
    if (!duplicate) out.push_back(v);
  }
  return out;
}

/// Projection shifts (Benner, Kuerschner, Saak, ETNA 2014): the eigenvalues of the pencil
/// (A, E) (or (A^T, E^T)) projected on the span of the columns of X (n x c, c small), from the
/// c x c Gram products G = X^T X, XA = X^T A X and XE = X^T E X (XE unused when E = I).
///
/// The Galerkin eigenvalues do not depend on the basis of the span (nor on the order of its
/// columns), so no orthonormal basis of size n is formed: with the columns scaled to unit norm,
/// G = V Lambda V^T and T = V_r Lambda_r^{-1/2} (eigenvalues above 1e-10 of the largest:
/// numerical rank), X T is orthonormal and the projected pencil is (T^T XA T, T^T XE T).
std::vector<Complex> projection_shifts_from_gram(const Matrix& G_unscaled, const Matrix& XA,
                                                 const Matrix& XE, bool E_identity) {
  // The column scaling is applied to the small Gram matrix: X itself is not copied.
  Vector scale = G_unscaled.diagonal().cwiseSqrt();
  for (Index j = 0; j < scale.size(); ++j)
    if (!(scale[j] > 0.0)) scale[j] = 1.0;
  const Vector inv_scale = scale.cwiseInverse();
  const Matrix G = inv_scale.asDiagonal() * G_unscaled * inv_scale.asDiagonal();
  Matrix V = G;
  Vector lambda;  // ascending
  lapack::symmetric_eigen(V, lambda);
  const double top = lambda.size() > 0 ? lambda.maxCoeff() : 0.0;
  if (!(top > 0.0)) return {};
  Index first = 0;
  while (first < lambda.size() && !(lambda[first] > 1e-10 * top)) ++first;
  const Index r = lambda.size() - first;
  Matrix T = V.rightCols(r);
  for (Index j = 0; j < r; ++j) T.col(j) /= std::sqrt(lambda[first + j]);
  T = inv_scale.asDiagonal() * T;
  const Matrix Ah = T.transpose() * XA * T;
  const Matrix Eh = T.transpose() * (E_identity ? G_unscaled : XE) * T;
  return shift_representatives(pencil_eigenvalues(Ah, Eh));
}

/// The same from X and its products AX = A X, EX = E X (n x c each; EX unused when E = I).
std::vector<Complex> projection_shifts_from_products(const LtiOperator& sys, const Matrix& X,
                                                     const Matrix& AX, const Matrix& EX) {
  const bool E_identity = sys.E_is_identity();
  const Matrix G = X.transpose() * X;
  const Matrix XA = X.transpose() * AX;
  const Matrix XE = E_identity ? Matrix() : Matrix(X.transpose() * EX);
  return projection_shifts_from_gram(G, XA, XE, E_identity);
}

/// The same with the two operator products formed here (the first round's fallback only).
std::vector<Complex> projection_shifts(LtiOperator& sys, bool transposed, const Matrix& X) {
  Matrix AX, EX;
  sys.apply_A(X, AX, transposed);
  if (!sys.E_is_identity()) sys.apply_E(X, EX, transposed);
  return projection_shifts_from_products(sys, X, AX, EX);
}

// ---------------------------------------------------------------------------------------------
// Penzl's heuristic

/// A linear map x -> y for Spectra's Arnoldi factorization.
struct ArnoldiMap {
  Index n;
  std::function<void(const Vector&, Vector&)> apply;
  Index rows() const { return n; }
  Index cols() const { return n; }
  void perform_op(const double* x_in, double* y_out) const {
    const Vector x = Eigen::Map<const Vector>(x_in, n);
    Vector y;
    apply(x, y);
    Eigen::Map<Vector>(y_out, n) = y;
  }
};

/// Ritz values of `steps` unrestarted Arnoldi steps on the map, from the start vector v0.
///
/// Spectra's GenEigsSolver iterates (implicit restarts) until nev eigenvalues converge, which is
/// not what Penzl's heuristic needs: it wants the Ritz values of one Arnoldi run of fixed length,
/// converged or not, and a converged run on a lightly damped chain would be expensive. So
/// Spectra's Arnoldi factorization class (with its DGKS reorthogonalization and restart on
/// breakdown) is driven directly, and the Ritz values come from its Hessenberg eigensolver.
std::vector<Complex> arnoldi_ritz_values(const ArnoldiMap& map, Index steps, const Vector& v0) {
  steps = std::min(steps, map.n);
  if (steps <= 0) return {};
  using Op = Spectra::ArnoldiOp<double, ArnoldiMap, Spectra::IdentityBOp>;
  const Spectra::IdentityBOp identity;
  Spectra::Arnoldi<double, Op> arnoldi(Op(map, identity), steps);
  Index products = 0;
  Eigen::Map<const Vector> start(v0.data(), v0.size());
  arnoldi.init(start, products);
  arnoldi.factorize_from(1, steps, products);
  const Matrix H = arnoldi.matrix_H().topLeftCorner(steps, steps);
  if (!H.allFinite()) return {};
  Spectra::UpperHessenbergEigen<double> eig(H);
  const auto& lambda = eig.eigenvalues();
  return std::vector<Complex>(lambda.data(), lambda.data() + lambda.size());
}

/// Pseudo-random start vector with a fixed seed: runs are reproducible.
Vector start_vector(Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Vector v(n);
  for (Index i = 0; i < n; ++i) v[i] = dist(gen);
  return v;
}

/// Penzl's min-max selection of about l0 shifts from the candidate set R (representatives,
/// Im >= 0; the set stands for R and its conjugates): start with the p in R minimizing
/// max_{t in R} |(t - p)/(t + p)|, then repeatedly add the t in R where the magnitude of the
/// ADI rational function prod_{p in P} (t - p)/(t + p) is largest. A complex p brings conj(p).
std::vector<Complex> penzl_select(const std::vector<Complex>& reps, Index l0) {
  std::vector<Complex> R;  // the full, conjugation-closed candidate set
  for (Complex r : reps) {
    R.push_back(r);
    if (r.imag() > 0.0) R.push_back(std::conj(r));
  }
  auto factor = [](Complex t, Complex p) { return std::abs((t - p) / (t + p)); };
  std::vector<Complex> chosen;  // representatives
  Index count = 0;              // shifts counted with conjugates
  std::vector<double> rational(R.size(), 1.0);
  auto add = [&](Complex p) {
    chosen.push_back(p);
    count += p.imag() > 0.0 ? 2 : 1;
    for (std::size_t i = 0; i < R.size(); ++i) {
      rational[i] *= factor(R[i], p);
      if (p.imag() > 0.0) rational[i] *= factor(R[i], std::conj(p));
    }
  };
  double best = std::numeric_limits<double>::infinity();
  Complex first = reps.front();
  for (Complex p : reps) {
    double worst = 0.0;
    for (Complex t : R) worst = std::max(worst, factor(t, p));
    if (worst < best) {
      best = worst;
      first = p;
    }
  }
  add(first);
  while (count < l0) {
    const auto it = std::max_element(rational.begin(), rational.end());
    if (*it <= 0.0) break;  // every candidate is a shift already
    const Complex t = R[static_cast<std::size_t>(it - rational.begin())];
    add(t.imag() < 0.0 ? std::conj(t) : t);
  }
  return chosen;
}

}  // namespace

/// Ritz values of E^{-1} A (k_+ Arnoldi steps) and reciprocals of Ritz values of A^{-1} E (k_-
/// steps, solves with p = 0).
///
/// The interface offers no solve with E alone. When E is not the identity, the k_+ Arnoldi runs
/// on the Moebius transform T = -s (A - s E)^{-1} A = f(E^{-1} A), f(l) = s l / (s - l), with a
/// real s > 0 far beyond the spectrum (A - s E is nonsingular for a stable pencil); its Ritz
/// values theta map back exactly by l = s theta / (s + theta). For s -> infinity T -> E^{-1} A, so
/// these are Penzl's Ritz values up to a relative O(|l| / s) change of the Krylov space.
std::vector<Complex> detail::pencil_ritz_estimates(LtiOperator& sys, Index arnoldi_steps,
                                                   Index inverse_arnoldi_steps) {
  const Index n = sys.n();
  const Vector v0 = start_vector(n, 20000314u);
  std::vector<Complex> candidates;

  if (arnoldi_steps > 0) {
    ArnoldiMap map{n, {}};
    double s = 0.0;
    if (sys.E_is_identity()) {
      map.apply = [&sys](const Vector& x, Vector& y) {
        Matrix Y;
        sys.apply_A(x, Y);
        y = Y.col(0);
      };
    } else {
      // Scale of |l| from ||A v|| / ||E v|| on random vectors; the max with its square root
      // covers first-order systems (|l| ~ ||A|| / ||E||) and second-order ones (|l|^2 ~ ||K|| /
      // ||M||).
      double rho = 0.0;
      for (unsigned k = 0; k < 3; ++k) {
        const Matrix v = start_vector(n, 77u + k);
        Matrix Av, Ev;
        sys.apply_A(v, Av);
        sys.apply_E(v, Ev);
        if (Ev.norm() > 0.0) rho = std::max(rho, Av.norm() / Ev.norm());
      }
      s = 100.0 * std::max(rho, std::sqrt(rho));
      if (!(s > 0.0) || !std::isfinite(s)) s = 1.0;
      map.apply = [&sys, s](const Vector& x, Vector& y) {
        throw_if_stop_requested("Ritz values");
        Matrix Ax, X;
        sys.apply_A(x, Ax);
        sys.solve_shifted(-s, Ax, X);
        y = -s * X.col(0);
      };
    }
    for (Complex theta : arnoldi_ritz_values(map, arnoldi_steps, v0))
      candidates.push_back(s > 0.0 ? theta * s / (s + theta) : theta);
  }
  if (inverse_arnoldi_steps > 0) {
    ArnoldiMap map{n, [&sys](const Vector& x, Vector& y) {
                     throw_if_stop_requested("Ritz values");  // one solve per step
                     Matrix Ex, X;
                     sys.apply_E(x, Ex);
                     sys.solve_shifted(0.0, Ex, X);
                     y = X.col(0);
                   }};
    for (Complex theta : arnoldi_ritz_values(map, inverse_arnoldi_steps, v0))
      if (theta != Complex(0.0)) candidates.push_back(1.0 / theta);
  }
  return candidates;
}

namespace {

/// Penzl's heuristic shifts: the Ritz estimates above, l0 of them selected by the min-max rule.
std::vector<Complex> penzl_shifts(LtiOperator& sys, const AdiOptions& o) {
  const std::vector<Complex> candidates =
      detail::pencil_ritz_estimates(sys, o.penzl_arnoldi_steps, o.penzl_inverse_arnoldi_steps);
  const std::vector<Complex> reps = shift_representatives(candidates);
  if (reps.empty())
    throw NumericalError(
        "LR-ADI: Penzl's heuristic found no usable Ritz values (all zero, "
        "purely imaginary or non-finite)");
  return penzl_select(reps, o.penzl_shifts);
}

// ---------------------------------------------------------------------------------------------
// The iteration

/// The growing factor Z: columns are appended into spare capacity that grows geometrically, so
/// the total copying is O(n k) (for large blocks glibc's realloc remaps pages instead of
/// copying, and untouched capacity costs no memory); take() trims to the used columns.
class FactorBuffer {
 public:
  FactorBuffer(Index n, Index initial) : Z_(n, initial) {}
  Index cols() const { return used_; }
  /// The next c columns, to be written by the caller (valid until the next extend or append).
  /// Defined before append, which uses it: clang (the fuzz build) refuses a deduced return
  /// type used before its definition.
  auto extend(Index c) {
    if (used_ + c > Z_.cols())
      Z_.conservativeResize(Z_.rows(), std::max(used_ + c, Z_.cols() + Z_.cols() / 2 + c));
    used_ += c;
    return Z_.middleCols(used_ - c, c);
  }
  template <class Block>
  void append(const Block& X, double scale) {
    extend(X.cols()) = scale * X;
  }
  Matrix take() {
    Z_.conservativeResize(Z_.rows(), used_);
    return std::move(Z_);
  }

 private:
  Matrix Z_;
  Index used_ = 0;
};

/// The strategy that `automatic` stands for on sys (see ShiftStrategy::automatic).
ShiftStrategy resolve(ShiftStrategy s, const LtiOperator& sys) {
  if (s != ShiftStrategy::automatic) return s;
  return sys.symmetric_pencil() ? ShiftStrategy::penzl : ShiftStrategy::projection;
}

/// The span that projection shifts project on, with its operator products, in one n x 3 (m + c)
/// block laid out as [W | Z | A W | A Z | E W | E Z] (without the E part when E = I): the
/// residual factor W (m columns, copied in at each round) and the newest c columns of Z in a
/// ring of c slots, whose products come from the ADI step relation instead of operator
/// products: a step solves (A + p E) V = W, so A V = W - p E V, and E V is formed by the step
/// anyway. A round then applies the operator to W only and forms the three Gram products
/// X^T [X, A X, E X] in one pass over the block, without copying anything of size n. The slots
/// are in ring order, not in age order; the projected pencil does not depend on the order of
/// the basis.
class ProjectionSpan {
 public:
  ProjectionSpan(Index n, Index m, Index capacity, bool with_E)
      : m_(m), capacity_(capacity), with_E_(with_E) {
    if (capacity_ > 0) S_ = Matrix::Zero(n, (with_E_ ? 3 : 2) * block());
  }
  Index capacity() const { return capacity_; }
  /// Records the next Z column z with its products A z and E z (ez ignored when E = I).
  template <class Z, class A, class E>
  void push(const Z& z, const A& az, const E& ez) {
    if (capacity_ == 0) return;
    const Index slot = m_ + total_ % capacity_;
    S_.col(slot) = z;
    S_.col(block() + slot) = az;
    if (with_E_) S_.col(2 * block() + slot) = ez;
    ++total_;
  }
  /// Z columns held: min(capacity, columns pushed).
  Index columns() const { return std::min(total_, capacity_); }

  /// Shifts from the span of [W (if with_residual, or while no Z column is held), the held Z
  /// columns]; `scratch` receives the operator products of W.
  std::vector<Complex> shifts(LtiOperator& sys, bool transposed, const Matrix& W,
                              bool with_residual, Matrix& scratch) {
    const Index c = columns();
    const Index w = (with_residual || c == 0) ? m_ : 0;
    const Index first = m_ - w, k = w + c;
    if (w > 0) {
      S_.leftCols(m_) = W;
      sys.apply_A(W, scratch, transposed);
      S_.middleCols(block(), m_) = scratch;
      if (with_E_) {
        sys.apply_E(W, scratch, transposed);
        S_.middleCols(2 * block(), m_) = scratch;
      }
    }
    // X^T [X | A X | E X] in one product; the unused slots of an early round are zero.
    const Index last = (with_E_ ? 2 * block() : block()) + first + k;
    const Matrix P =
        detail::tall_transpose_product(S_.middleCols(first, k), S_.middleCols(first, last - first));
    const Matrix G = P.leftCols(k);
    const Matrix XA = P.middleCols(block(), k);
    const Matrix XE = with_E_ ? Matrix(P.middleCols(2 * block(), k)) : Matrix();
    return projection_shifts_from_gram(G, XA, XE, !with_E_);
  }

 private:
  Index block() const { return m_ + capacity_; }
  Index m_, capacity_;
  bool with_E_;
  Matrix S_;
  Index total_ = 0;
};

/// Supplies the next shift (a real p, or a complex pair represented by Im p > 0).
class ShiftSource {
 public:
  ShiftSource(LtiOperator& sys, bool transposed, const AdiOptions& o, Index m)
      : sys_(sys), transposed_(transposed), o_(o), strategy_(resolve(o.strategy, sys)) {
    columns_ = o.projection_columns > 0 ? o.projection_columns : std::min<Index>(8 * m, 64);
    if (strategy_ == ShiftStrategy::given ||
        (strategy_ == ShiftStrategy::penzl && !o.shifts.empty())) {
      for (std::size_t i = 0; i < o.shifts.size(); ++i) {
        const Complex p = o.shifts[i];
        if (std::abs(p.imag()) <= kRealTol * std::abs(p)) {
          cycle_.push_back(Complex(p.real(), 0.0));
        } else {
          cycle_.push_back(Complex(p.real(), std::abs(p.imag())));
          ++i;  // the conjugate (checked by validate_options)
        }
      }
    } else if (strategy_ == ShiftStrategy::penzl) {
      cycle_ = penzl_shifts(sys, o);
    }
  }

  /// The strategy in use (automatic resolved).
  ShiftStrategy strategy() const { return strategy_; }
  /// penzl and given: the cycle, pairs as both members; empty for projection shifts.
  std::vector<Complex> cycle() const {
    std::vector<Complex> out;
    if (strategy_ == ShiftStrategy::projection) return out;
    for (Complex p : cycle_) {
      out.push_back(p);
      if (p.imag() != 0.0) out.push_back(std::conj(p));
    }
    return out;
  }

  /// projection: the number of newest Z columns a round projects on (0 otherwise), for which
  /// the caller records the columns and their products in a ProjectionSpan.
  Index projection_columns() const { return strategy_ == ShiftStrategy::projection ? columns_ : 0; }

  Complex next(const Matrix& W, ProjectionSpan& span) {
    if (next_ < cycle_.size()) return cycle_[next_++];
    if (strategy_ == ShiftStrategy::projection) {
      // Project on the residual factor (unless projection_with_residual is off) and the newest
      // columns of Z: the directions the next steps work on. The first round sees only W = B
      // (or C^T).
      std::vector<Complex> fresh =
          span.shifts(sys_, transposed_, W, o_.projection_with_residual, scratch_);
      if (o_.projection_shifts > 0 && static_cast<Index>(fresh.size()) > o_.projection_shifts)
        fresh = penzl_select(fresh, o_.projection_shifts);
      // span(B) alone may carry no eigenvalue information (a position output C = e_N^T of a
      // second-order system projects A^T to zero): extend it by a few block Krylov steps.
      if (fresh.empty() && cycle_.empty()) {
        Matrix basis = W, block = W;
        for (int extend = 0; fresh.empty() && extend < 4; ++extend) {
          Matrix next_block;
          sys_.apply_A(block, next_block, transposed_);
          block = std::move(next_block);
          const Index old = basis.cols();
          basis.conservativeResize(Eigen::NoChange, old + block.cols());
          basis.rightCols(block.cols()) = block;
          fresh = projection_shifts(sys_, transposed_, basis);
        }
      }
      if (!fresh.empty()) {
        cycle_ = std::move(fresh);
      } else if (cycle_.empty()) {
        throw NumericalError(
            "LR-ADI: the projected pencil has no usable eigenvalue for the initial shifts");
      }  // else: keep cycling through the previous shifts
    }
    next_ = 0;
    return cycle_[next_++];
  }

 private:
  LtiOperator& sys_;
  bool transposed_;
  const AdiOptions& o_;
  ShiftStrategy strategy_;
  Index columns_ = 8;
  std::vector<Complex> cycle_;
  std::size_t next_ = 0;
  Matrix scratch_;  // operator products of W (n x m), reused every round
};

std::string summary(const AdiResult& r, GramianKind kind, const AdiOptions& o) {
  const std::string what =
      detail::status_text(r, o.tolerance, detail::concat("step limit ", o.max_iterations),
                          o.stall_factor, o.stall_window, "steps");
  return detail::concat("LR-ADI ", to_string(kind), " Gramian, ", to_string(r.strategy),
                        " shifts: ", what, "; ", r.iterations, " steps, ", r.Z.cols(), " columns, ",
                        r.seconds, " s");
}

}  // namespace

AdiResult low_rank_adi(LtiOperator& sys, GramianKind kind, const AdiOptions& options) {
  validate_options(options);
  // Subnormal numbers flushed to zero (x86 FTZ/DAZ, this thread; restored on return): the
  // solutions of a system driven at one end (the chain) decay exponentially along it into the
  // subnormal range, where each operation costs about a hundred cycles. Results change by less
  // than 1e-307 absolute per operation.
  detail::SubnormalsFlushed flushed(true);
  t_unstable_estimate.reset();
  const auto t0 = Clock::now();
  const bool obs = kind == GramianKind::observability;
  const Index n = sys.n();
  Matrix W = obs ? Matrix(sys.C().transpose()) : sys.B();
  const Index m = W.cols();
  AdiResult result;
  const double scale = m > 0 ? gram_norm(W, options.residual_norm) : 0.0;
  if (!(scale > 0.0)) {  // B = 0 (or C = 0): the Gramian is zero
    result.strategy = resolve(options.strategy, sys);
    result.Z = Matrix(n, 0);
    result.status = AdiStatus::converged;
    result.residual_history.clear();
    result.seconds = seconds_since(t0);
    result.message = summary(result, kind, options);
    return result;
  }
  require(std::isfinite(scale), "LR-ADI: the ", obs ? "output matrix C" : "input matrix B",
          " has non-finite entries");

  const auto shift_t0 = Clock::now();
  ShiftSource shifts(sys, obs, options, m);
  result.strategy = shifts.strategy();
  result.shift_cycle = shifts.cycle();
  result.shift_seconds += seconds_since(shift_t0);
  FactorBuffer Z(n, 16 * m);
  const bool E_identity = sys.E_is_identity();
  ProjectionSpan span(n, m, shifts.projection_columns(), !E_identity);
  const bool record = span.capacity() > 0;
  Matrix V, EV, Vi, EVi;
  ComplexMatrix Wc, Vc;  // kept across steps: no allocation of size n per step

  auto fail_step = [&](Complex p, const std::exception& e) -> NumericalError {
    const std::string where = detail::concat("LR-ADI (", to_string(kind), ") step ",
                                             result.iterations + 1, ", shift p = ", p, ": ");
    // A + p E singular with Re p < 0: -p is an eigenvalue of (A, E) in the right half-plane
    // (a shift that reflected an unstable estimate met it exactly). Bad input, named as such.
    if (p.real() < 0.0 && std::string(e.what()).find("singular") != std::string::npos)
      throw InvalidArgument(
          detail::concat(where, "the system is not stable: A + p E is singular, so ", -p.real(),
                         p.imag() > 0.0 ? " - " : " + ", std::abs(p.imag()),
                         "i is an eigenvalue of (A, E) with a positive real part; Gramians and "
                         "balanced truncation need a stable system (check the sign of A)"));
    return NumericalError(where + e.what());
  };

  ResidualProgress progress(detail::concat("LR-ADI (", to_string(kind), " Gramian)"),
                            options.tolerance);
  while (true) {
    if (result.iterations >= options.max_iterations) {
      result.status = AdiStatus::max_iterations;
      break;
    }
    if (stop_requested(options.stop_requested)) {
      throw Interrupted(detail::concat("LR-ADI (", to_string(kind), ") interrupted after ",
                                       result.iterations, " steps"));
    }
    const auto st = Clock::now();
    const Complex p = shifts.next(W, span);
    result.shift_seconds += seconds_since(st);
    const bool pair = p.imag() != 0.0;
    if (pair && result.iterations + 2 > options.max_iterations) {
      result.status = AdiStatus::max_iterations;  // a pair is never split
      break;
    }

    if (!pair) {
      // V = (A + p E)^{-1} W;  Z <- [Z, sqrt(-2p) V];  W <- W - 2p E V.
      const double pr = p.real();
      try {
        sys.solve_shifted(pr, W, V, obs);
      } catch (const NumericalError& e) {
        throw fail_step(p, e);
      }
      const double s = std::sqrt(-2.0 * pr);
      Z.append(V, s);
      if (!E_identity) sys.apply_E(V, EV, obs);
      const Matrix& EVr = E_identity ? V : EV;
      if (record)  // A V = W - p E V (before W changes), E V
        for (Index j = 0; j < m; ++j)
          span.push(s * V.col(j), s * (W.col(j) - pr * EVr.col(j)), s * EVr.col(j));
      W.noalias() -= (2.0 * pr) * EVr;
    } else {
      // The pair (p, conj p) in real arithmetic (Benner, Kuerschner, Saak 2013): with
      // V = (A + p E)^{-1} W, gamma = 2 sqrt(-Re p), delta = Re p / Im p and
      // V_r = Re V + delta Im V:
      //   Z <- [Z, gamma V_r, gamma sqrt(delta^2 + 1) Im V],   W <- W + gamma^2 E V_r.
      try {
        Wc = W.cast<Complex>();
        sys.solve_shifted(p, Wc, Vc, obs);
      } catch (const NumericalError& e) {
        throw fail_step(p, e);
      }
      const double gamma = 2.0 * std::sqrt(-p.real());
      const double delta = p.real() / p.imag();
      const double gamma2 = gamma * std::sqrt(delta * delta + 1.0);
      // V_r, Im V and Z's two new blocks gamma V_r, gamma2 Im V in one pass over V.
      V.resize(n, m);
      Vi.resize(n, m);
      auto Znew = Z.extend(2 * m);
      for (Index j = 0; j < m; ++j) {
        const Complex* v = Vc.col(j).data();
        double* vr = V.col(j).data();
        double* vi = Vi.col(j).data();
        double* zr = Znew.col(j).data();
        double* zi = Znew.col(m + j).data();
        for (Index i = 0; i < n; ++i) {
          const double re = v[i].real(), im = v[i].imag();
          const double r = re + delta * im;
          vr[i] = r;
          vi[i] = im;
          zr[i] = gamma * r;
          zi[i] = gamma2 * im;
        }
      }
      if (!E_identity) sys.apply_E(V, EV, obs);  // E V_r
      if (record) {
        // The products of the new columns from the step relation A V = W - p E V (W before
        // its update): with E V_r and E Im V (one more product with E per pair, against two
        // with A and two with E per column in the rounds) and Im p delta = Re p,
        //   A V_r = W - 2 Re p E V_r + (Im p + delta Re p) E Im V,   A Im V = -Im p E V_r.
        if (!E_identity) sys.apply_E(Vi, EVi, obs);
        const Matrix& ER = E_identity ? V : EV;
        const Matrix& EI = E_identity ? Vi : EVi;
        const double pr = p.real(), pi = p.imag();
        const double c_i = pi + delta * pr;
        for (Index j = 0; j < m; ++j)  // Z's columns gamma V_r, in order
          span.push(gamma * V.col(j), gamma * (W.col(j) - 2.0 * pr * ER.col(j) + c_i * EI.col(j)),
                    gamma * ER.col(j));
        for (Index j = 0; j < m; ++j)  // then gamma2 Im V
          span.push(gamma2 * Vi.col(j), (-gamma2 * pi) * ER.col(j), gamma2 * EI.col(j));
      }
      if (E_identity) {
        W.noalias() += (gamma * gamma) * V;
      } else {
        W.noalias() += (gamma * gamma) * EV;
      }
    }
    // Non-finite entries of W make its Gram norm non-finite (one pass over W fewer than a
    // separate check).
    const double residual = gram_norm(W, options.residual_norm) / scale;
    if (!std::isfinite(residual)) {
      const std::string where =
          detail::concat("LR-ADI (", to_string(kind), ") step ", result.iterations + 1,
                         ", shift p = ", p, ": the residual factor became non-finite");
      // The usual cause: the system is not stable (ADI converges only for Re lambda < 0).
      if (t_unstable_estimate)
        throw InvalidArgument(detail::concat(
            where,
            ": the system is not stable: the shift computation found the eigenvalue "
            "estimate ",
            t_unstable_estimate->real(), " + ", t_unstable_estimate->imag(),
            "i of (A, E) with a positive real part; Gramians and balanced truncation need a "
            "stable system (check the sign of A)"));
      throw NumericalError(
          detail::concat(where,
                         "; is the system stable? (every eigenvalue of (A, E) needs Re < 0; "
                         "reduction.gramians = \"dense\" names an unstable one on models of a few "
                         "thousand states)"));
    }
    for (int k = 0; k < (pair ? 2 : 1); ++k) {
      result.residual_history.push_back(residual);
      result.shifts.push_back(k == 0 ? p : std::conj(p));
      ++result.iterations;
    }
    progress.update(result.iterations, residual);
    if (residual <= options.tolerance) {
      result.status = AdiStatus::converged;
      break;
    }
    // Stalled: the best residual of the last stall_window steps is not below stall_factor
    // times the best one before them (the residual of lightly damped systems oscillates, so
    // single values would trigger falsely).
    const Index window = options.stall_window;
    const Index k = result.iterations;
    if (options.stall_factor > 0.0 && window > 0 && k >= window) {
      const auto& h = result.residual_history;
      const double recent = *std::min_element(h.end() - window, h.end());
      const double before = k == window ? 1.0 : *std::min_element(h.begin(), h.end() - window);
      if (recent > options.stall_factor * before) {
        result.status = AdiStatus::stalled;
        break;
      }
    }
  }

  result.Z = Z.take();
  result.seconds = seconds_since(t0);
  result.message = summary(result, kind, options);
  return result;
}

namespace {

/// Runs body(begin, end) over the rows [0, n): in two halves on two threads (the caller's and
/// one more, both flushing subnormals) from 2 kMinRowsPerThread rows on, else on the caller's.
template <class Body>
void split_rows(Index n, Body&& body) {
  if (n < 2 * detail::kMinRowsPerThread) {
    body(Index{0}, n);
    return;
  }
  const Index half = n / 2;
  std::exception_ptr error;
  std::thread helper([&] {
    try {
      detail::SubnormalsFlushed flushed(true);
      body(half, n);
    } catch (...) {
      error = std::current_exception();
    }
  });
  try {
    detail::SubnormalsFlushed flushed(true);
    body(Index{0}, half);
  } catch (...) {
    helper.join();
    throw;
  }
  helper.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

Matrix detail::tall_transpose_product(const Eigen::Ref<const Matrix>& X,
                                      const Eigen::Ref<const Matrix>& Y) {
  require(X.rows() == Y.rows(), "tall_transpose_product: X has ", X.rows(), " rows, Y ", Y.rows());
  Matrix P = Matrix::Zero(X.cols(), Y.cols()), Q = P;
  split_rows(X.rows(), [&](Index b, Index e) {
    Matrix& out = b == 0 ? P : Q;
    out.noalias() = X.middleRows(b, e - b).transpose() * Y.middleRows(b, e - b);
  });
  return P + Q;
}

Matrix detail::tall_product(const Eigen::Ref<const Matrix>& X, const Eigen::Ref<const Matrix>& Z) {
  require(X.cols() == Z.rows(), "tall_product: X has ", X.cols(), " columns, Z ", Z.rows(),
          " rows");
  Matrix R(X.rows(), Z.cols());
  split_rows(X.rows(), [&](Index b, Index e) {
    R.middleRows(b, e - b).noalias() = X.middleRows(b, e - b) * Z;
  });
  return R;
}

std::string detail::status_text(const AdiResult& r, double tolerance, const std::string& limit,
                                double stall_factor, Index stall_window, const char* unit) {
  const double residual = r.residual_history.empty() ? 1.0 : r.residual_history.back();
  switch (r.status) {
    case AdiStatus::converged:
      return detail::concat("converged: relative residual ", residual, " <= tolerance ", tolerance);
    case AdiStatus::max_iterations:
      return detail::concat("not converged: ", limit, " reached at relative residual ", residual,
                            " (tolerance ", tolerance, ")");
    case AdiStatus::stalled:
      break;
  }
  return detail::concat("stalled: the best relative residual did not fall below ", stall_factor,
                        " times its earlier best over the last ", stall_window, " ", unit,
                        "; final relative residual ", residual, " (tolerance ", tolerance, ")");
}

}  // namespace mor
