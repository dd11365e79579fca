// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/differential_balancing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

extern "C" {
#include <dsdp/dsdp5.h>
}

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {
namespace {

using detail::concat;

/// Packed lower-triangular index of (i, j), i >= j: DSDP's symmetric storage.
inline int packed(Index i, Index j) {
  return static_cast<int>(i * (i + 1) / 2 + j);
}

/// One sparse symmetric data matrix in DSDP's packed format (indices sorted, merged).
struct PackedMatrix {
  std::vector<int> index;
  std::vector<double> value;
  void add(Index i, Index j, double v) {
    if (i < j) std::swap(i, j);
    index.push_back(packed(i, j));
    value.push_back(v);
  }
  void finish() {
    std::vector<std::size_t> order(index.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return index[a] < index[b]; });
    std::vector<int> idx;
    std::vector<double> val;
    for (std::size_t k : order) {
      if (!idx.empty() && idx.back() == index[k])
        val.back() += value[k];
      else {
        idx.push_back(index[k]);
        val.push_back(value[k]);
      }
    }
    // Entries that cancelled exactly are dropped (DSDP accepts zeros, but they cost).
    index.clear();
    value.clear();
    for (std::size_t k = 0; k < idx.size(); ++k)
      if (val[k] != 0.0) {
        index.push_back(idx[k]);
        value.push_back(val[k]);
      }
  }
};

/// RAII owner of one DSDP solver and the data arrays it points into (DSDP keeps the pointers
/// until it is destroyed).
class DsdpSolver {
 public:
  DsdpSolver(int unknowns, int blocks) {
    check(DSDPCreate(unknowns, &dsdp_), "DSDPCreate");
    check(DSDPCreateSDPCone(dsdp_, blocks, &cone_), "DSDPCreateSDPCone");
  }
  ~DsdpSolver() {
    if (dsdp_ != nullptr) DSDPDestroy(dsdp_);
  }
  DsdpSolver(const DsdpSolver&) = delete;
  DsdpSolver& operator=(const DsdpSolver&) = delete;

  void set_block_size(int block, int n) {
    check(SDPConeSetBlockSize(cone_, block, n), "SDPConeSetBlockSize");
  }
  /// Data matrix of unknown `var` (0: the constant C) in `block`; takes ownership of m.
  void set_matrix(int block, int var, int n, PackedMatrix m) {
    if (m.index.empty()) return;
    data_.push_back(std::make_unique<PackedMatrix>(std::move(m)));
    const PackedMatrix& d = *data_.back();
    check(SDPConeSetASparseVecMat(cone_, block, var, n, 1.0, 0, d.index.data(), d.value.data(),
                                  static_cast<int>(d.index.size())),
          "SDPConeSetASparseVecMat");
  }
  void set_objective(int var, double b) {
    check(DSDPSetDualObjective(dsdp_, var, b), "DSDPSetDualObjective");
  }
  DSDP get() const { return dsdp_; }

  static void check(int info, const char* what) {
    if (info != 0) throw NumericalError(concat("DSDP: ", what, " failed with code ", info));
  }

 private:
  DSDP dsdp_ = nullptr;
  SDPCone cone_ = nullptr;
  std::vector<std::unique_ptr<PackedMatrix>> data_;
};

const char* stop_reason_text(DSDPTerminationReason r) {
  switch (r) {
    case DSDP_CONVERGED:
      return "converged";
    case DSDP_INFEASIBLE_START:
      return "infeasible start";
    case DSDP_SMALL_STEPS:
      return "small steps";
    case DSDP_INDEFINITE_SCHUR_MATRIX:
      return "indefinite Schur matrix";
    case DSDP_MAX_IT:
      return "iteration limit";
    case DSDP_NUMERICAL_ERROR:
      return "numerical error";
    case DSDP_UPPERBOUND:
      return "objective bound reached";
    case DSDP_USER_TERMINATION:
      return "user termination";
    default:
      return "no reason";
  }
}

double spectral_norm_symmetric(const Matrix& X) {
  Matrix S = X;
  return lapack::symmetric_eigenvalues(S).cwiseAbs().maxCoeff();
}

/// Sparse columns of A: (row, value) lists.
std::vector<std::vector<std::pair<Index, double>>> sparse_columns(const Matrix& A) {
  std::vector<std::vector<std::pair<Index, double>>> cols(static_cast<std::size_t>(A.cols()));
  for (Index j = 0; j < A.cols(); ++j)
    for (Index i = 0; i < A.rows(); ++i)
      if (A(i, j) != 0.0) cols[static_cast<std::size_t>(j)].emplace_back(i, A(i, j));
  return cols;
}

/// Square-root balancing of X = R R^T, Y = L L^T: sigma, V = R Z S^{-1/2}, W = L U S^{-1/2}.
void square_root_balance(const Matrix& X, const Matrix& Y, Vector& sigma, Matrix& V, Matrix& W) {
  Eigen::LLT<Matrix> lx(X), ly(Y);
  if (lx.info() != Eigen::Success || ly.info() != Eigen::Success)
    throw NumericalError("differential balancing: a Gramian is not positive definite");
  const Matrix R = lx.matrixL();
  const Matrix L = ly.matrixL();
  const lapack::Svd svd = lapack::full_svd(L.transpose() * R);
  sigma = svd.s;
  const Vector s = sigma.cwiseMax(std::numeric_limits<double>::min()).cwiseSqrt().cwiseInverse();
  V = R * svd.V * s.asDiagonal();
  W = L * svd.U * s.asDiagonal();
}

/// The linear part of the first-order drift of M q'' + D q' + K q = B u, y = Cp q + Cv q':
/// M^{-1}, A = (0 I; -M^{-1} K  -M^{-1} D), B = (0; M^{-1} B), C = (Cp Cv).
/// @throws InvalidArgument if M is singular.
JacobianFamily linear_part(const SecondOrderSystem& s) {
  const Index N = s.n();
  JacobianFamily f;
  const Matrix M = Matrix(s.M);
  f.M_inv = M.inverse();
  require(f.M_inv.allFinite(), "differential balancing: the mass matrix M (", N, " x ", N,
          ") is singular");
  const Index n = 2 * N;
  f.A = Matrix::Zero(n, n);
  f.A.topRightCorner(N, N).setIdentity();
  f.A.bottomLeftCorner(N, N) = -f.M_inv * Matrix(s.K);
  f.A.bottomRightCorner(N, N) = -f.M_inv * Matrix(s.D);
  f.B = Matrix::Zero(n, s.B.cols());
  f.B.bottomRows(N) = f.M_inv * Matrix(s.B);
  f.C = Matrix::Zero(s.Cp.rows(), n);
  f.C.leftCols(N) = Matrix(s.Cp);
  f.C.rightCols(N) = Matrix(s.Cv);
  return f;
}

/// Element r of f.G as a direction of the family: H_r = -(0 0; M^{-1} g_r g_r^T 0).
void add_element(JacobianFamily& f, Index r) {
  const Index N = f.M_inv.rows();
  const Vector d = f.G.row(r).transpose();
  Matrix H = Matrix::Zero(2 * N, 2 * N);
  H.bottomLeftCorner(N, N) = -(f.M_inv * d) * d.transpose();
  f.H.push_back(std::move(H));
  f.elements.push_back(r);
}

}  // namespace

JacobianFamily jacobian_family(const NonlinearNetwork& net) {
  JacobianFamily f = linear_part(net.linear_system());
  f.G = Matrix(net.G());
  f.coefficients = net.coefficients();
  for (Index r = 0; r < f.G.rows(); ++r) {
    const Vector c = f.coefficients.row(r).transpose();
    if (element_bound(c.data()) != ElementBound::none) add_element(f, r);
  }
  return f;
}

ElementBound element_bound(const double* c) {
  if (c[0] == 0.0 && c[1] == 0.0 && c[2] == 0.0 && c[3] == 0.0) return ElementBound::none;
  if (c[0] != 0.0) return ElementBound::unsupported;
  if (c[2] == 0.0 && c[1] >= 0.0 && c[3] >= 0.0) return ElementBound::one_sided;
  return ElementBound::two_sided;
}

double element_stiffness_bound(const double* c, double rho) {
  const double r2 = rho * rho;
  switch (element_bound(c)) {
    case ElementBound::none:
      return 0.0;
    case ElementBound::one_sided:  // the chain's 3 k_n rho^2, to the last bit
      return 3.0 * c[1] * rho * rho + 5.0 * c[3] * r2 * r2;
    case ElementBound::two_sided:
    case ElementBound::unsupported:
      break;
  }
  return 3.0 * std::abs(c[1]) * r2 + 4.0 * std::abs(c[2]) * r2 * rho +
         5.0 * std::abs(c[3]) * r2 * r2;
}

void require_region_laws(const Matrix& coefficients, double rho) {
  if (std::isinf(rho)) return;
  require(coefficients.cols() == 4 || coefficients.rows() == 0,
          "differential balancing: the element laws have ", coefficients.cols(),
          " columns, expected 4");
  for (Index s = 0; s < coefficients.rows(); ++s) {
    const Vector c = coefficients.row(s).transpose();
    require(element_bound(c.data()) != ElementBound::unsupported,
            "differential balancing over a region ||G q||_2 <= rho: element ", s + 1,
            " has the law phi(e) = ", c[0], " e^2 + ", c[1], " e^3 + ", c[2], " e^4 + ", c[3],
            " e^5, whose e^2 coefficient a2 = ", c[0],
            " != 0 makes its stiffness phi'(e) = 2 a2 e + ... change sign linearly at e = 0: "
            "it is bounded by cbar |e| / rho, not cbar e^2 / rho^2, and these bounds add up to "
            "sqrt(m) instead of 1 over the region, so no family of O(m) vertex inequalities "
            "covers it (laws without an e^2 term are covered: odd hardening ones exactly, the "
            "others by +-cbar vertices)");
  }
}

std::vector<Matrix> LmiFamily::transposed() const {
  std::vector<Matrix> out;
  for (const auto& A : affine) out.push_back(A.transpose());
  return out;
}

LmiFamily lmi_family(const JacobianFamily& f, double rho) {
  require(rho > 0.0,
          "differential balancing: the region's elongation bound rho must be > 0 (or "
          "infinity for every state), got ",
          rho);
  require(f.elements.size() == f.H.size(), "differential balancing: ", f.H.size(),
          " matrices H_s for ", f.elements.size(), " elements");
  LmiFamily lmi;
  lmi.affine.push_back(f.A);
  if (f.H.empty()) return lmi;
  std::vector<Matrix> rows;
  for (Index e : f.elements) rows.emplace_back(f.coefficients.row(e));
  require_region_laws(f.coefficients, rho);
  for (std::size_t k = 0; k < f.H.size(); ++k) {
    const double* c = rows[k].data();
    const bool two_sided = element_bound(c) != ElementBound::one_sided;
    if (std::isinf(rho)) {
      lmi.homogeneous.push_back(f.H[k]);
      if (two_sided) lmi.homogeneous.push_back(-f.H[k]);
      continue;
    }
    const double cbar = element_stiffness_bound(c, rho);
    require(std::isfinite(cbar), "differential balancing: element ", f.elements[k] + 1,
            "'s stiffness bound over rho = ", rho, " is ", cbar, " (choose a smaller rho)");
    lmi.affine.push_back(f.A + cbar * f.H[k]);
    if (two_sided) lmi.affine.push_back(f.A - cbar * f.H[k]);
  }
  return lmi;
}

std::string_view to_string(LmiStatus status) {
  switch (status) {
    case LmiStatus::solved:
      return "solved";
    case LmiStatus::infeasible:
      return "infeasible";
    case LmiStatus::not_converged:
      return "not_converged";
  }
  return "unknown";
}

double lyapunov_inequality_residual(const Matrix& A, const Matrix& X, const Matrix& G) {
  Matrix S = A * X;
  S += S.transpose().eval();
  if (G.size() > 0) S += G;
  return lapack::symmetric_eigenvalues(S).maxCoeff();
}

GramianSolve solve_gramian_lmis(const LmiFamily& family, const Matrix& G,
                                const DifferentialGramianOptions& o) {
  require(!family.affine.empty(), "differential balancing: no inequality to solve");
  const Index n = family.affine.front().rows();
  require(G.rows() == n && G.cols() == n, "differential balancing: G is ", G.rows(), " x ",
          G.cols(), ", expected ", n, " x ", n);
  for (const auto* list : {&family.affine, &family.homogeneous})
    for (const auto& A : *list)
      require(A.rows() == n && A.cols() == n, "differential balancing: an inequality matrix is ",
              A.rows(), " x ", A.cols(), ", expected ", n, " x ", n);
  require(o.epsilon > 0.0 && std::isfinite(o.epsilon),
          "differential balancing: epsilon must be finite and > 0, got ", o.epsilon);
  require(o.gap_tolerance > 0.0 && o.gap_tolerance < 1.0,
          "differential balancing: gap_tolerance must be in (0, 1), got ", o.gap_tolerance);
  require(o.max_iterations >= 1, "differential balancing: max_iterations must be >= 1, got ",
          o.max_iterations);
  require(o.feasibility_tolerance > 0.0,
          "differential balancing: feasibility_tolerance must be > 0, got ",
          o.feasibility_tolerance);

  const auto t0 = Clock::now();
  GramianSolve out;
  const Index m = n * (n + 1) / 2;
  out.unknowns = m;
  const double g_norm = std::max(spectral_norm_symmetric(G), 1e-300);
  const double eps = o.epsilon * g_norm;
  const auto n_affine = static_cast<int>(family.affine.size());
  const auto n_hom = static_cast<int>(family.homogeneous.size());
  const int blocks = n_affine + n_hom + 1;
  const int ni = static_cast<int>(n);

  DsdpSolver solver(static_cast<int>(m), blocks);
  for (int b = 0; b < blocks; ++b) solver.set_block_size(b, ni);
  // Unknown k (1-based for DSDP) is X(i, j), i <= j, column by column; E_ij its basis matrix.
  auto for_unknowns = [&](auto&& fn) {
    int k = 1;
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i <= j; ++i) fn(k++, i, j);
  };
  // Inequality blocks: C - sum_k y_k (A E_k + E_k A^T) >= 0 with C = -G (affine) or 0.
  auto add_lyapunov_block = [&](int b, const Matrix& A, bool affine) {
    if (affine) {
      PackedMatrix c;
      for (Index j = 0; j < n; ++j)
        for (Index i = j; i < n; ++i)
          if (G(i, j) != 0.0) c.add(i, j, -G(i, j));
      c.finish();
      solver.set_matrix(b, 0, ni, std::move(c));
    }
    const auto cols = sparse_columns(A);
    // a e_j^T + e_j a^T in packed storage.
    auto add_outer = [](PackedMatrix& pm, const std::vector<std::pair<Index, double>>& a, Index j) {
      for (const auto& [r, v] : a) pm.add(r, j, r == j ? 2.0 * v : v);
    };
    for_unknowns([&](int k, Index i, Index j) {
      PackedMatrix pm;
      add_outer(pm, cols[static_cast<std::size_t>(i)], j);
      if (i != j) add_outer(pm, cols[static_cast<std::size_t>(j)], i);
      pm.finish();
      solver.set_matrix(b, k, ni, std::move(pm));
    });
  };
  for (int b = 0; b < n_affine; ++b)
    add_lyapunov_block(b, family.affine[static_cast<std::size_t>(b)], true);
  for (int b = 0; b < n_hom; ++b)
    add_lyapunov_block(n_affine + b, family.homogeneous[static_cast<std::size_t>(b)], false);
  // X - eps I >= 0: C = -eps I, data -E_k.
  {
    const int b = blocks - 1;
    PackedMatrix c;
    for (Index i = 0; i < n; ++i) c.add(i, i, -eps);
    solver.set_matrix(b, 0, ni, std::move(c));
    for_unknowns([&](int k, Index i, Index j) {
      PackedMatrix pm;
      pm.add(j, i, -1.0);
      solver.set_matrix(b, k, ni, std::move(pm));
    });
  }
  // max -trace(X).
  for_unknowns([&](int k, Index i, Index j) {
    if (i == j) solver.set_objective(k, -1.0);
  });

  DSDP d = solver.get();
  DsdpSolver::check(DSDPSetGapTolerance(d, o.gap_tolerance), "DSDPSetGapTolerance");
  DsdpSolver::check(DSDPSetMaxIts(d, o.max_iterations), "DSDPSetMaxIts");
  DsdpSolver::check(DSDPSetup(d), "DSDPSetup");
  // Polled once per interior-point iteration: a stop request ends DSDP with
  // DSDP_USER_TERMINATION, and the solve is then abandoned with Interrupted.
  DsdpSolver::check(DSDPSetMonitor(
                        d,
                        [](DSDP dsdp, void*) -> int {
                          if (stop_requested()) DSDPSetConvergenceFlag(dsdp, DSDP_USER_TERMINATION);
                          return 0;
                        },
                        nullptr),
                    "DSDPSetMonitor");
  const int solve_info = DSDPSolve(d);
  throw_if_stop_requested("differential balancing (DSDP)");
  DSDPTerminationReason reason = DSDP_CONVERGED;
  DSDPSolutionType type = DSDP_PDUNKNOWN;
  DSDPStopReason(d, &reason);
  DSDPGetSolutionType(d, &type);
  DSDPGetIts(d, &out.iterations);
  std::vector<double> y(static_cast<std::size_t>(m), 0.0);
  DSDPGetY(d, y.data(), static_cast<int>(m));
  double r_penalty = 0.0;
  DSDPGetR(d, &r_penalty);

  out.X.resize(n, n);
  for_unknowns([&](int k, Index i, Index j) {
    out.X(i, j) = out.X(j, i) = y[static_cast<std::size_t>(k - 1)];
  });
  // Independent check of every inequality (Eigen's symmetric eigensolver).
  const double x_norm = spectral_norm_symmetric(out.X);
  out.residuals.resize(n_affine + n_hom);
  out.max_relative_residual = -std::numeric_limits<double>::infinity();
  Index worst = 0;
  for (int b = 0; b < n_affine + n_hom; ++b) {
    const bool affine = b < n_affine;
    const Matrix& A = affine ? family.affine[static_cast<std::size_t>(b)]
                             : family.homogeneous[static_cast<std::size_t>(b - n_affine)];
    out.residuals[b] = lyapunov_inequality_residual(A, out.X, affine ? G : Matrix());
    const double scale = 2.0 * A.norm() * x_norm + (affine ? g_norm : 0.0);
    const double rel = out.residuals[b] / std::max(scale, 1e-300);
    if (rel > out.max_relative_residual) {
      out.max_relative_residual = rel;
      worst = b;
    }
  }
  Matrix X_copy = out.X;
  const double x_min = lapack::symmetric_eigenvalues(X_copy).minCoeff();
  out.seconds = seconds_since(t0);

  const bool verified = out.max_relative_residual <= o.feasibility_tolerance &&
                        x_min >= eps * (1.0 - 1e-6) && std::isfinite(x_norm);
  const std::string tail =
      concat(" (", n_affine, " affine and ", n_hom, " homogeneous inequalities of size ", n, ", ",
             m, " unknowns, ", out.iterations, " iterations, ", out.seconds,
             " s; largest relative "
             "residual ",
             out.max_relative_residual, " at inequality ", worst, ")");
  if (type == DSDP_INFEASIBLE || (reason == DSDP_CONVERGED && !verified && r_penalty > 0.0)) {
    out.status = LmiStatus::infeasible;
    out.message = concat("the matrix inequalities have no solution with X >= ", eps,
                         " I: DSDP reports them infeasible (", stop_reason_text(reason), ")", tail);
  } else if (solve_info == 0 && reason == DSDP_CONVERGED && verified) {
    out.status = LmiStatus::solved;
    out.message =
        concat("solved to relative gap ", o.gap_tolerance, ", smallest eigenvalue ", x_min, tail);
  } else {
    out.status = LmiStatus::not_converged;
    out.message = concat("DSDP stopped (", stop_reason_text(reason), ", code ", solve_info,
                         ") without a verified solution: smallest eigenvalue ", x_min, tail);
  }
  return out;
}

double DifferentialBalancing::error_bound(Index r) const {
  require(r >= 0 && r <= sigma.size(), "differential balancing: order r = ", r, " outside [0, ",
          sigma.size(), "]");
  return 2.0 * sigma.tail(sigma.size() - r).sum();
}

DifferentialBalancing differential_balancing(JacobianFamily family,
                                             const DifferentialGramianOptions& options) {
  DifferentialBalancing out;
  out.family = std::move(family);
  const LmiFamily lmi = lmi_family(out.family, options.rho);
  const Matrix BBt = out.family.B * out.family.B.transpose();
  const Matrix CtC = out.family.C.transpose() * out.family.C;
  out.controllability = solve_gramian_lmis(lmi, BBt, options);
  LmiFamily dual;
  dual.affine = lmi.transposed();
  for (const auto& H : lmi.homogeneous) dual.homogeneous.push_back(H.transpose());
  out.observability = solve_gramian_lmis(dual, CtC, options);
  if (!out.solved()) return out;
  const auto t0 = Clock::now();
  const Matrix& P = out.controllability.X;
  const Matrix& Q = out.observability.X;
  square_root_balance(P, Q, out.sigma, out.V, out.W);
  const Index N = out.family.n_coordinates();
  square_root_balance(P.topLeftCorner(N, N), Q.topLeftCorner(N, N), out.position_sigma, out.V_q,
                      out.W_q);
  out.seconds_balancing = seconds_since(t0);
  return out;
}

DifferentialBalancing differential_balancing(const NonlinearNetwork& network,
                                             const DifferentialGramianOptions& options) {
  // The laws first: a refused law costs no dense family.
  require(options.rho > 0.0,
          "differential balancing: the region's elongation bound rho must be > 0 (or "
          "infinity for every state), got ",
          options.rho);
  require_region_laws(network.coefficients(), options.rho);
  return differential_balancing(jacobian_family(network), options);
}

GdTruncatedModel::GdTruncatedModel(const DifferentialBalancing& bal, Index r) {
  require(bal.solved(), "GD truncation: the Gramians were not computed (",
          bal.controllability.message, "; ", bal.observability.message, ")");
  const Index n = bal.V.cols();
  require(r >= 1 && r <= n, "GD truncation: order r = ", r, " outside [1, ", n, "]");
  const JacobianFamily& f = bal.family;
  const Index N = n / 2;
  V_ = bal.V.leftCols(r);
  const Matrix Wr = bal.W.leftCols(r);
  A_r_ = Wr.transpose() * f.A * V_;
  B_r_ = Wr.transpose() * f.B;
  C_r_ = f.C * V_;
  if (f.elements.empty()) return;
  const auto m_a = static_cast<Index>(f.elements.size());
  Matrix Ga(m_a, N);
  coefficients_.resize(m_a, 4);
  for (Index k = 0; k < m_a; ++k) {
    Ga.row(k) = f.G.row(f.elements[static_cast<std::size_t>(k)]);
    coefficients_.row(k) = f.coefficients.row(f.elements[static_cast<std::size_t>(k)]);
  }
  E_r_ = Ga * V_.topRows(N);
  G_r_ = -(Wr.bottomRows(N).transpose() * f.M_inv * Ga.transpose());
}

void GdTruncatedModel::rhs(const Vector& z, const Vector& u, Vector& dz) const {
  dz.noalias() = A_r_ * z;
  dz.noalias() += B_r_ * u;
  if (G_r_.size() > 0) {
    Vector e = E_r_ * z;
    const Index m = e.size();
    double dphi;
    for (Index k = 0; k < m; ++k) {
      const double c[4] = {coefficients_(k, 0), coefficients_(k, 1), coefficients_(k, 2),
                           coefficients_(k, 3)};
      element_law(c, e[k], e[k], dphi);
    }
    dz.noalias() += G_r_ * e;
  }
}

double elongation_norm(const Vector& q) {
  const Index N = q.size();
  double s = 0.0;
  for (Index i = 0; i <= N; ++i) {
    const double e = (i < N ? q[i] : 0.0) - (i >= 1 ? q[i - 1] : 0.0);
    s += e * e;
  }
  return std::sqrt(s);
}

double element_norm(const JacobianFamily& family, const Vector& q) {
  require(q.size() == family.G.cols(), "differential balancing: q has size ", q.size(),
          ", expected N = ", family.G.cols());
  double s = 0.0;
  for (Index e : family.elements) {
    const double v = family.G.row(e).dot(q);
    s += v * v;
  }
  return std::sqrt(s);
}

}  // namespace mor
