// SPDX-License-Identifier: GPL-3.0-or-later
// POD by thin SVD, the method of snapshots or a randomized SVD (see the header).
#include "reduction/pod.hpp"

#include <Spectra/MatOp/DenseSymMatProd.h>
#include <Spectra/SymEigsSolver.h>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/linalg/blas.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

using Clock = std::chrono::steady_clock;

/// The method of snapshots asks Spectra's Lanczos solver for only the r leading eigenpairs of
/// the k x k correlation matrix when k is at least this large and r at most k / this ratio;
/// otherwise a dense eigendecomposition (O(k^3), a second for k ~ 2000) is as quick.
constexpr Index kIterativeMinSize = 200;
constexpr Index kIterativeMaxRatio = 10;
/// Relative accuracy asked of the Lanczos eigenpairs of the trace-scaled correlation matrix.
constexpr double kLanczosTolerance = 1e-12;

/// A tolerance printed short: 2.2e-14 rather than 2.22044604925031e-14.
std::string short_number(double x) {
  std::ostringstream os;
  os.precision(3);
  os << x;
  return os.str();
}

void check_snapshots(const Matrix& X) {
  require(X.rows() > 0 && X.cols() > 0, "POD: the snapshot matrix is empty (", X.rows(), " x ",
          X.cols(), ")");
  if (X.allFinite()) return;
  for (Index j = 0; j < X.cols(); ++j)
    for (Index i = 0; i < X.rows(); ++i)
      require(std::isfinite(X(i, j)), "POD: snapshot entry (", i, ", ", j, ") is ", X(i, j));
}

void check_options(const PodOptions& o) {
  require(o.order.has_value() != o.energy.has_value(), "POD: set exactly one of order and energy (",
          o.order ? "both" : "neither", " are set)");
  if (o.order) require(*o.order >= 1, "POD order r = ", *o.order, " must be >= 1");
  if (o.energy)
    require(*o.energy > 0.0 && *o.energy <= 1.0, "POD energy = ", *o.energy, " must lie in (0, 1]");
  require(o.oversampling >= 0, "POD: oversampling = ", o.oversampling, " must be >= 0");
  require(o.power_iterations >= 0, "POD: power_iterations = ", o.power_iterations, " must be >= 0");
  require(o.randomized_rank >= 0, "POD: randomized_rank = ", o.randomized_rank, " must be >= 0");
  require(o.basis_columns >= 0, "POD: basis_columns = ", o.basis_columns, " must be >= 0");
}

/// Columns of the returned basis: r, or more up to the resolved rank (PodOptions::basis_columns).
Index basis_width(const PodOptions& o, Index r, Index resolved) {
  return std::max(r, std::min(o.basis_columns, resolved));
}

void check_weights(const Vector& w, Index n) {
  require(w.size() == n, "POD: ", w.size(), " weights for ", n, " snapshot rows");
  for (Index i = 0; i < n; ++i)
    require(std::isfinite(w(i)) && w(i) > 0.0, "POD: weight w(", i, ") = ", w(i),
            " must be positive and finite");
}

/// The first Y.cols() columns of the Q factor of Y (n x c, n >= c), by LAPACK (blocked
/// Householder, dgeqrf and dorgqr), also where OpenBLAS runs its generic kernels
/// (blas::optimized): the QR is 2 n c^2 flops beside the products' 4 n c N_s.
Matrix orthonormal_columns(Matrix Y) {
  lapack::qr_q_factor(Y);
  return Y;
}

/// A B and A^T B on OpenBLAS (dgemm) when it runs optimized kernels (blas::optimized), else on
/// Eigen.
Matrix product(const Eigen::Ref<const Matrix>& A, const Eigen::Ref<const Matrix>& B) {
  if (blas::optimized()) return blas::product(A, B);
  return A * B;
}
Matrix transpose_product(const Eigen::Ref<const Matrix>& A, const Eigen::Ref<const Matrix>& B) {
  if (blas::optimized()) return blas::transpose_product(A, B);
  return A.transpose() * B;
}

/// The number of s_i > tolerance * s_1.
Index numerical_rank(const Vector& s, double tolerance) {
  if (s.size() == 0) return 0;
  const double cut = tolerance * s(0);
  return static_cast<Index>(std::count_if(s.begin(), s.end(), [&](double x) { return x > cut; }));
}

/// The order asked for by `o`, given the resolved singular values s and the numerical rank.
Index select_order(const PodOptions& o, const Vector& s, Index rank, double total,
                   double rank_tolerance) {
  if (o.order) {
    if (o.order_up_to_rank) return std::min(*o.order, rank);
    require(*o.order <= rank, "POD order r = ", *o.order, " exceeds the rank ", rank,
            " of the snapshot matrix (singular values above ", short_number(rank_tolerance),
            " * s_1)");
    return *o.order;
  }
  // energy = 1 means every mode the data resolves: the partial sums below reach the rounded
  // total before the last modes, whose energy is below eps * total.
  if (*o.energy == 1.0) return rank;
  const double target = *o.energy * total;
  double sum = 0.0;
  for (Index i = 0; i < rank; ++i) {
    sum += s(i) * s(i);
    if (sum >= target) return i + 1;
  }
  return rank;  // rounding kept every partial sum below the target
}

/// Flips column j of Q where R(j, j) < 0, so that Q R = Y with diag(R) >= 0 and Q follows the
/// orientation of the columns of Y.
void align_signs(Matrix& Q, const Matrix& Y) {
  for (Index j = 0; j < Q.cols(); ++j)
    if (Q.col(j).dot(Y.col(j)) < 0) Q.col(j) *= -1.0;
}

/// Leading eigenpairs of the symmetric C (lower triangle), descending. Returns the pairs
/// computed by Spectra's Lanczos solver for `nev` > 0 when it converges, else all of them.
void symmetric_eigenpairs(const Matrix& C, Index nev, Vector& lambda, Matrix& Y) {
  if (nev > 0) {
    const Index k = C.rows();
    const Index ncv = std::min(k, std::max(2 * nev + 1, nev + 20));
    Spectra::DenseSymMatProd<double> op(C);
    Spectra::SymEigsSolver<Spectra::DenseSymMatProd<double>> eigs(op, nev, ncv);
    eigs.init();
    eigs.compute(Spectra::SortRule::LargestAlge, 1000, kLanczosTolerance);
    if (eigs.info() == Spectra::CompInfo::Successful) {
      lambda = eigs.eigenvalues();  // descending for LargestAlge
      Y = eigs.eigenvectors();
      return;
    }
    // Not converged (clustered eigenvalues): the dense solver below always succeeds.
  }
  // Seconds for a few thousand snapshots, without a poll: on a thread a stop abandons.
  auto [V, w] = run_abandonable("POD", [C = Matrix(C)]() mutable {
    Vector values;
    lapack::symmetric_eigen(C, values);
    return std::pair{std::move(C), std::move(values)};
  });
  lambda = w.reverse();
  Y = V.rowwise().reverse();
}

struct Modes {
  Matrix U;  ///< n x r orthonormal left singular vectors of the weighted snapshots
  Vector s;  ///< resolved singular values
  Index r = 0;
};

Modes svd_modes(const Matrix& A, const PodOptions& o, double total) {
  // 3.5 to 7.7 s at N = 5000 without a poll: on a thread a stop abandons (it reads a copy).
  const auto svd =
      run_abandonable("POD", [A = Matrix(A)]() mutable { return lapack::thin_svd(std::move(A)); });
  const double tol = pod_rank_tolerance(A.rows(), A.cols());
  Modes m;
  m.s = svd.s;
  const Index rank = numerical_rank(m.s, tol);
  m.r = select_order(o, m.s, rank, total, tol);
  m.U = svd.U.leftCols(basis_width(o, m.r, rank));
  return m;
}

/// Method of snapshots: A^T A = Y Lambda Y^T, s = sqrt(lambda), U = A Y S^{-1}, here
/// orthonormalized by QR instead of scaled: the columns of A Y lose orthogonality like
/// eps * (s_1 / s_i)^2.
Modes snapshot_modes(const Matrix& A, const PodOptions& o, double total) {
  const Index k = A.cols();
  // C = A^T A / total (trace 1), so that Spectra's absolute floor eps^(2/3) is on C's scale.
  Matrix C = Matrix::Zero(k, k);
  // In blocks of rows of about 10^8 flops each (dsyrk on each where OpenBLAS runs optimized
  // kernels), polling between them.
  const Index block =
      std::max<Index>(1, static_cast<Index>(1e8 / std::max<double>(1.0, double(k) * double(k))));
  for (Index i = 0; i < A.rows(); i += block) {
    throw_if_stop_requested("POD");
    const auto rows = A.middleRows(i, std::min(block, A.rows() - i));
    if (blas::optimized())
      C += blas::gram(rows, 1.0 / total);
    else
      C.selfadjointView<Eigen::Lower>().rankUpdate(rows.transpose(), 1.0 / total);
  }
  throw_if_stop_requested("POD");
  const Index wanted = o.order ? std::max(*o.order, o.basis_columns) : 0;
  const bool iterative = o.order && k >= kIterativeMinSize && wanted * kIterativeMaxRatio <= k;
  Vector lambda;
  Matrix Y;
  symmetric_eigenpairs(C, iterative ? wanted : 0, lambda, Y);
  const Vector s_all = lambda.cwiseMax(0.0).cwiseSqrt() * std::sqrt(total);
  const double tol = pod_snapshots_rank_tolerance(A.rows(), k);
  const Index resolved = numerical_rank(s_all, tol);
  Modes m;
  m.s = s_all.head(resolved);
  m.r = select_order(o, m.s, resolved, total, tol);
  const Matrix AY = product(A, Y.leftCols(basis_width(o, m.r, resolved)));
  m.U = orthonormal_columns(AY);
  align_signs(m.U, AY);
  return m;
}

/// Randomized SVD (HMT 2011): Q spans A Omega after q power iterations, A ~ Q Q^T A, and the
/// SVD of the l x k matrix Q^T A = U_b S V_b^T gives U = Q U_b.
Modes randomized_modes(const Matrix& A, const PodOptions& o, double total) {
  const Index n = A.rows(), k = A.cols();
  Index l = o.randomized_rank;
  const Index wanted = o.order ? std::max(*o.order, o.basis_columns) : 0;
  if (l == 0) l = o.order ? wanted + o.oversampling : std::min(n, k);
  if (o.order)
    require(l >= wanted, "POD: randomized_rank = ", l, " is below the order r = ", *o.order,
            (wanted > *o.order ? detail::concat(" or basis_columns = ", o.basis_columns) : ""));
  l = std::min(l, std::min(n, k));
  std::mt19937 gen(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix Omega(k, l);
  for (Index j = 0; j < l; ++j)
    for (Index i = 0; i < k; ++i) Omega(i, j) = normal(gen);
  // Orthonormalizing between the products keeps the directions of small s_i, which the plain
  // power (A A^T)^q A Omega would lose to rounding (HMT Alg. 4.4). The tall products (n x k
  // times k x l, and transposed) are all of its O(n k l) work: dgemm.
  Matrix Q = orthonormal_columns(product(A, Omega));
  for (Index pass = 0; pass < o.power_iterations; ++pass) {
    throw_if_stop_requested("POD");
    const Matrix Qt = orthonormal_columns(transpose_product(A, Q));
    Q = orthonormal_columns(product(A, Qt));
  }
  throw_if_stop_requested("POD");
  const auto svd = run_abandonable(
      "POD", [B = transpose_product(Q, A)]() mutable { return lapack::thin_svd(std::move(B)); });
  const double tol = pod_rank_tolerance(n, k);
  Modes m;
  m.s = svd.s;
  const Index rank = numerical_rank(m.s, tol);
  m.r = select_order(o, m.s, rank, total, tol);
  m.U = product(Q, svd.U.leftCols(basis_width(o, m.r, rank)));
  return m;
}

}  // namespace

PodMethod parse_pod_method(std::string_view name) {
  for (auto m : {PodMethod::automatic, PodMethod::svd, PodMethod::snapshots, PodMethod::randomized})
    if (to_string(m) == name) return m;
  throw InvalidArgument(detail::concat("unknown POD method '", name,
                                       "' (expected automatic, svd, snapshots or randomized)"));
}

std::string_view to_string(PodMethod m) {
  switch (m) {
    case PodMethod::automatic:
      return "automatic";
    case PodMethod::svd:
      return "svd";
    case PodMethod::snapshots:
      return "snapshots";
    case PodMethod::randomized:
      return "randomized";
  }
  return "unknown";
}

PodMethod automatic_pod_method(Index n, Index k, bool order_requested) {
  if (static_cast<double>(n) * static_cast<double>(k) <= 2e7 || k > n / 4) return PodMethod::svd;
  if (k <= 4000) return PodMethod::snapshots;
  return order_requested ? PodMethod::randomized : PodMethod::svd;
}

double pod_rank_tolerance(Index n, Index k) {
  return static_cast<double>(std::max(n, k)) * std::numeric_limits<double>::epsilon();
}

double pod_snapshots_rank_tolerance(Index n, Index k) {
  return std::sqrt(pod_rank_tolerance(n, k));
}

PodResult pod(const Matrix& X, const PodOptions& options, const Vector* weights) {
  const auto t0 = Clock::now();
  check_snapshots(X);
  check_options(options);
  Matrix weighted;
  if (weights) {
    check_weights(*weights, X.rows());
    weighted = weights->cwiseSqrt().asDiagonal() * X;
  }
  const Matrix& A = weights ? weighted : X;  // W^{1/2} X
  const double total = A.squaredNorm();
  require(total > 0.0, "POD: the snapshot matrix is zero (", X.rows(), " x ", X.cols(), ")");

  PodResult res;
  res.method_used = options.method == PodMethod::automatic
                        ? automatic_pod_method(X.rows(), X.cols(), options.order.has_value())
                        : options.method;
  Modes m;
  switch (res.method_used) {
    case PodMethod::svd:
    case PodMethod::automatic:  // not reached: resolved above
      m = svd_modes(A, options, total);
      break;
    case PodMethod::snapshots:
      m = snapshot_modes(A, options, total);
      break;
    case PodMethod::randomized:
      m = randomized_modes(A, options, total);
      break;
  }
  res.r = m.r;
  res.V = weights ? Matrix(weights->cwiseSqrt().cwiseInverse().asDiagonal() * m.U) : m.U;
  const double captured = m.s.head(m.r).squaredNorm();
  // svd knows every s_i, and the tail sum is accurate where total - captured would cancel.
  res.discarded_energy = res.method_used == PodMethod::svd
                             ? m.s.tail(m.s.size() - m.r).squaredNorm()
                             : std::max(0.0, total - captured);
  res.captured_energy = std::min(1.0, captured / total);
  res.singular_values = std::move(m.s);
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return res;
}

}  // namespace mor
