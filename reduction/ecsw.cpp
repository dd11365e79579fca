// SPDX-License-Identifier: GPL-3.0-or-later
// Lawson-Hanson NNLS and the ECSW training (see the header).
#include "reduction/ecsw.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Jacobi>

#include "src/core/errors.hpp"
#include "src/core/finite.hpp"
#include "src/core/timing.hpp"

namespace mor {

namespace {

/// A thin QR, A = Q R, of the passive columns in the order they were added: Q (rows x k,
/// orthonormal columns, stored with spare capacity), R (k x k, upper triangular). Adding a
/// column: classical Gram-Schmidt twice (Giraud et al. 2005: orthogonal to working precision);
/// removing one: Givens rotations restore R's triangle (Golub & Van Loan, 4th ed., 6.5.2).
class IncrementalQr {
 public:
  explicit IncrementalQr(Index rows) : Q_(rows, 0) {}
  Index size() const { return k_; }

  /// Appends a; false (and nothing changed) if a is numerically in the span of the columns.
  bool add(const Vector& column) {
    Vector a = column;
    const double a_norm = a.norm();
    Vector h = Vector::Zero(k_);
    for (int pass = 0; pass < 2 && k_ > 0; ++pass) {
      const Vector hh = Q_.leftCols(k_).transpose() * a;
      a.noalias() -= Q_.leftCols(k_) * hh;
      h += hh;
    }
    const double rho = a.norm();
    if (!(rho > kDependent * a_norm)) return false;
    if (k_ == Q_.cols())
      Q_.conservativeResize(Eigen::NoChange, std::max<Index>(16, Q_.cols() + Q_.cols() / 2));
    Q_.col(k_) = a / rho;
    R_.conservativeResize(k_ + 1, k_ + 1);
    R_.col(k_).head(k_) = h;
    R_.row(k_).setZero();
    R_(k_, k_) = rho;
    ++k_;
    return true;
  }

  /// Removes the column at position p (0 <= p < k).
  void remove(Index p) {
    for (Index j = p; j + 1 < k_; ++j) R_.col(j) = R_.col(j + 1);
    // R's first k - 1 columns are now upper Hessenberg from column p: rotate rows (i, i + 1) to
    // zero the subdiagonal, and Q's columns alike so that Q R is unchanged.
    for (Index i = p; i + 1 < k_; ++i) {
      Eigen::JacobiRotation<double> G;
      G.makeGivens(R_(i, i), R_(i + 1, i));
      R_.leftCols(k_ - 1).applyOnTheLeft(i, i + 1, G.adjoint());
      R_(i + 1, i) = 0.0;
      Q_.applyOnTheRight(i, i + 1, G);
    }
    --k_;
    R_.conservativeResize(k_, k_);
  }

  /// argmin ||A z - b||: z = R^{-1} Q^T b.
  Vector solve(const Vector& b) const {
    const Vector Qtb = Q_.leftCols(k_).transpose() * b;
    return R_.triangularView<Eigen::Upper>().solve(Qtb);
  }

 private:
  static constexpr double kDependent = 1e-10;
  Matrix Q_, R_;
  Index k_ = 0;
};

}  // namespace

std::string_view to_string(NnlsStatus s) {
  switch (s) {
    case NnlsStatus::tolerance_met:
      return "tolerance_met";
    case NnlsStatus::optimal:
      return "optimal";
    case NnlsStatus::iteration_limit:
      return "iteration_limit";
  }
  return "unknown";
}

NnlsResult nnls(const Matrix& C, const Vector& b, const NnlsOptions& o) {
  const Index rows = C.rows(), cols = C.cols();
  require(rows >= 1 && cols >= 1, "nnls: C is ", rows, " x ", cols, ", expected at least 1 x 1");
  require(b.size() == rows, "nnls: b has size ", b.size(), ", expected the rows of C, ", rows);
  require(std::isfinite(o.tolerance) && o.tolerance >= 0.0, "nnls: the tolerance is ", o.tolerance,
          ", expected >= 0");
  require(std::isfinite(o.optimality_tolerance) && o.optimality_tolerance > 0.0,
          "nnls: the optimality tolerance is ", o.optimality_tolerance, ", expected > 0");
  require(o.max_iterations >= 0, "nnls: max_iterations is ", o.max_iterations,
          ", expected >= 0 (0: 3 times the columns)");
  require_finite(C, "", "nnls: C");
  require_finite(b, "", "nnls: b");

  NnlsResult res;
  res.w = Vector::Zero(cols);
  const double b_norm = b.norm();
  if (b_norm == 0.0) return res;  // w = 0 is exact
  const Index cap = o.max_iterations > 0 ? o.max_iterations : 3 * cols;
  // Unit columns: the choice of the next column compares correlations, not column norms, and
  // the variables x = ||C_j|| w_j are of the size of b.
  const Vector scale = C.colwise().norm().transpose();
  enum : char { kZero = 0, kPassive = 1, kExcluded = 2 };
  std::vector<char> state(static_cast<std::size_t>(cols), kZero);
  for (Index j = 0; j < cols; ++j)
    if (scale[j] == 0.0) state[static_cast<std::size_t>(j)] = kExcluded;
  // Skipped for this outer iteration only (their new coefficient came out <= 0 by roundoff).
  std::vector<char> skip(static_cast<std::size_t>(cols), 0);
  std::vector<Index> passive;  // in the QR's column order
  Vector x(0);                 // the scaled passive variables, in that order
  IncrementalQr qr(rows);
  Vector resid = b;
  auto column = [&](Index j) -> Vector { return C.col(j) / scale[j]; };

  for (;;) {
    res.relative_residual = resid.norm() / b_norm;
    if (res.relative_residual <= o.tolerance) {
      res.status = NnlsStatus::tolerance_met;
      break;
    }
    if (res.iterations >= cap) {
      res.status = NnlsStatus::iteration_limit;
      break;
    }
    // The descent direction C^T (b - C w), scaled: the zero-set column with the largest one.
    const Vector g = C.transpose() * resid;
    Index t = -1;
    double g_max = o.optimality_tolerance * b_norm;
    for (Index j = 0; j < cols; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      if (state[sj] != kZero || skip[sj]) continue;
      const double gj = g[j] / scale[j];
      if (gj > g_max) g_max = gj, t = j;
    }
    if (t < 0) {
      res.status = NnlsStatus::optimal;
      break;
    }
    ++res.iterations;
    if (!qr.add(column(t))) {
      state[static_cast<std::size_t>(t)] = kExcluded;  // in the span of the passive columns
      continue;
    }
    passive.push_back(t);
    state[static_cast<std::size_t>(t)] = kPassive;
    x.conservativeResize(x.size() + 1);
    x[x.size() - 1] = 0.0;
    // Inner loop: the least-squares solution z on the passive set; while some z_i <= 0, move
    // from x towards z as far as feasibility allows and drop the variables that reach zero.
    bool first = true;
    for (;;) {
      const Vector z = qr.solve(b);
      if (first && z[z.size() - 1] <= 0.0) {
        // Theory says z_t > 0 (g_t > 0); roundoff said otherwise: undo and choose another.
        qr.remove(qr.size() - 1);
        passive.pop_back();
        x.conservativeResize(x.size() - 1);
        state[static_cast<std::size_t>(t)] = kZero;
        skip[static_cast<std::size_t>(t)] = 1;
        break;
      }
      first = false;
      if (z.minCoeff() > 0.0) {
        x = z;
        std::fill(skip.begin(), skip.end(), 0);
        break;
      }
      double alpha = std::numeric_limits<double>::infinity();
      Index blocking = -1;
      for (Index i = 0; i < z.size(); ++i)
        if (z[i] <= 0.0 && x[i] / (x[i] - z[i]) < alpha) alpha = x[i] / (x[i] - z[i]), blocking = i;
      x += alpha * (z - x);
      x[blocking] = 0.0;  // exactly, whatever the roundoff
      const double x_small = 1e-14 * x.cwiseAbs().maxCoeff();
      for (Index i = x.size() - 1; i >= 0; --i) {
        if (x[i] > x_small) continue;
        qr.remove(i);
        state[static_cast<std::size_t>(passive[static_cast<std::size_t>(i)])] = kZero;
        passive.erase(passive.begin() + i);
        const Index tail = x.size() - i - 1;
        x.segment(i, tail) = x.tail(tail).eval();
        x.conservativeResize(x.size() - 1);
      }
      if (passive.empty()) break;
    }
    resid = b;
    for (std::size_t i = 0; i < passive.size(); ++i)
      resid.noalias() -= column(passive[i]) * x[static_cast<Index>(i)];
  }

  for (std::size_t i = 0; i < passive.size(); ++i)
    res.w[passive[i]] = x[static_cast<Index>(i)] / scale[passive[i]];
  for (Index j = 0; j < cols; ++j)
    if (res.w[j] > 0.0) res.support.push_back(j);
  res.relative_residual = (C * res.w - b).norm() / b_norm;
  return res;
}

double ecsw_matrix_bytes(Index r, Index snapshots, Index elements) {
  return 8.0 * static_cast<double>(r) * static_cast<double>(snapshots) *
         static_cast<double>(elements);
}

EcswResult ecsw(const NonlinearNetwork& net, const Matrix& V, const Matrix& W, const Matrix& Qr,
                const EcswOptions& o) {
  const auto t0 = Clock::now();
  const Index n = net.n(), r = V.cols(), ns = Qr.cols();
  require(!net.is_linear() && net.n_elements() >= 1,
          "ecsw: the network is linear: no element forces to sample");
  const Index m = net.n_elements();
  require(V.rows() == n && r >= 1, "ecsw: V is ", V.rows(), " x ", r, ", expected ", n,
          " x r with r >= 1");
  const bool galerkin = W.size() == 0;
  require(galerkin || (W.rows() == n && W.cols() == r), "ecsw: W is ", W.rows(), " x ", W.cols(),
          ", expected ", n, " x ", r, " (the size of V) or empty");
  require(Qr.rows() == r && ns >= 1, "ecsw: the reduced snapshots are ", Qr.rows(), " x ", ns,
          ", expected r = ", r, " rows and at least one column");
  require(std::isfinite(o.tolerance) && o.tolerance > 0.0 && o.tolerance < 1.0,
          "ecsw: the tolerance tau is ", o.tolerance, ", expected 0 < tau < 1");
  require_finite(Qr, "", "ecsw: reduced snapshot");
  require_finite(V, "", "ecsw: V");

  const double one = ecsw_matrix_bytes(r, 1, m);
  const double limit = static_cast<double>(o.memory_limit);
  require(one <= limit, "ecsw: the training matrix C takes ", one / 1048576.0,
          " MiB for a single snapshot (8 r m_e bytes, r = ", r, ", m_e = ", m,
          "), above the limit of ", limit / 1048576.0, " MiB: lower r");
  EcswResult res;
  res.tolerance = o.tolerance;
  res.snapshots = ns;
  const auto fit = static_cast<Index>(std::floor(limit / one));
  res.snapshot_stride = (ns + fit - 1) / fit;
  res.snapshots_used = (ns + res.snapshot_stride - 1) / res.snapshot_stride;
  const Index used = res.snapshots_used;

  const Matrix GV = net.G() * V;  // m x r
  const Matrix GW = galerkin ? Matrix() : Matrix(net.G() * W);
  const Matrix& Gt = galerkin ? GV : GW;
  Matrix Qs(r, used);
  for (Index j = 0; j < used; ++j) Qs.col(j) = Qr.col(j * res.snapshot_stride);
  const Matrix St = Qs.transpose() * GV.transpose();  // used x m: the element strains
  const Matrix& coef = net.coefficients();
  Matrix C(r * used, m);
  for (Index e = 0; e < m; ++e) {
    const double c[4] = {coef(e, 0), coef(e, 1), coef(e, 2), coef(e, 3)};
    for (Index j = 0; j < used; ++j) {
      double phi, dphi;
      element_law(c, St(j, e), phi, dphi);
      C.col(e).segment(j * r, r) = phi * Gt.row(e).transpose();
    }
  }
  const Vector b = C.rowwise().sum();
  require(b.norm() > 0.0, "ecsw: the reduced nonlinear force is zero at every training snapshot (",
          used, " used): nothing to fit");
  NnlsOptions no;
  no.tolerance = o.tolerance;
  no.max_iterations = o.max_iterations;
  const NnlsResult sol = nnls(C, b, no);
  res.elements = sol.support;
  res.weights.resize(static_cast<Index>(sol.support.size()));
  for (std::size_t i = 0; i < sol.support.size(); ++i)
    res.weights[static_cast<Index>(i)] = sol.w[sol.support[i]];
  res.relative_residual = sol.relative_residual;
  res.iterations = sol.iterations;
  res.status = sol.status;
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace mor
