// SPDX-License-Identifier: GPL-3.0-or-later
// DEIM and Q-DEIM interpolation rows (see the header).
#include "reduction/deim.hpp"

#include <algorithm>
#include <string>

#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <chrono>
#include <cmath>
#include <limits>

#include "src/core/errors.hpp"
#include "src/core/finite.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

void check_basis(const Matrix& U) {
  require(U.rows() > 0 && U.cols() > 0, "DEIM: the basis U is empty (", U.rows(), " x ", U.cols(),
          ")");
  require(U.cols() <= U.rows(), "DEIM: m = ", U.cols(), " basis vectors exceed n = ", U.rows(),
          " rows");
  if (!U.allFinite()) {
    for (Index j = 0; j < U.cols(); ++j)
      for (Index i = 0; i < U.rows(); ++i)
        require(std::isfinite(U(i, j)), "DEIM: basis entry U(", i, ", ", j, ") is ", U(i, j));
  }
  const Index m = U.cols();
  Matrix G = Matrix::Zero(m, m);
  G.selfadjointView<Eigen::Lower>().rankUpdate(U.transpose());
  G.triangularView<Eigen::StrictlyUpper>() = G.transpose();
  const double deviation = (G - Matrix::Identity(m, m)).cwiseAbs().maxCoeff();
  require(deviation <= kDeimOrthonormalityTolerance,
          "DEIM: the basis U is not orthonormal: max |U^T U - I| = ", deviation, " exceeds ",
          kDeimOrthonormalityTolerance);
}

/// Chaturantabut & Sorensen (2010), Algorithm 1. The coefficients c solve (P^T U_l) c = P^T u_l
/// by a fresh LU of the l x l matrix each step: O(m^4) in total, below the O(n m^2) of the
/// residuals for m^2 <= n.
std::vector<Index> greedy_rows(const Matrix& U) {
  const Index m = U.cols();
  std::vector<Index> p;
  p.reserve(static_cast<std::size_t>(m));
  Index i = 0;
  U.col(0).cwiseAbs().maxCoeff(&i);
  p.push_back(i);
  for (Index l = 1; l < m; ++l) {
    const Matrix PtU = U(p, Eigen::seqN(0, l));
    const Vector c = PtU.partialPivLu().solve(Vector(U.col(l)(p)));
    const Vector r = U.col(l) - U.leftCols(l) * c;
    r.cwiseAbs().maxCoeff(&i);
    p.push_back(i);
  }
  return p;
}

/// Drmac & Gugercin (2016), Algorithm 1: U^T Pi = Q R with column pivoting, P = Pi(:, 1:m).
std::vector<Index> qdeim_rows(const Matrix& U) {
  Matrix Ut = U.transpose();
  Eigen::VectorXi perm;
  lapack::pivoted_qr_r_factor(Ut, perm);
  return std::vector<Index>(perm.data(), perm.data() + U.cols());
}

}  // namespace

DeimMethod parse_deim_method(std::string_view name) {
  if (name == "deim") return DeimMethod::deim;
  if (name == "qdeim") return DeimMethod::qdeim;
  throw InvalidArgument(
      detail::concat("unknown DEIM method '", name, "' (expected deim or qdeim)"));
}

std::string_view to_string(DeimMethod m) {
  return m == DeimMethod::deim ? "deim" : "qdeim";
}

DeimResult deim(const Matrix& U, DeimMethod method) {
  const auto t0 = std::chrono::steady_clock::now();
  check_basis(U);
  DeimResult res;
  res.method = method;
  res.indices = method == DeimMethod::deim ? greedy_rows(U) : qdeim_rows(U);
  res.U = U;
  const Matrix PtU = U(res.indices, Eigen::all);
  // The SVD gives both the 2-norm of the inverse and the condition number exactly; m is small.
  Matrix PtU_copy = PtU;
  const Vector sv = lapack::singular_values(PtU_copy);
  const double s_min = sv(sv.size() - 1);
  const double cond = s_min > 0.0 ? sv(0) / s_min : std::numeric_limits<double>::infinity();
  if (!(cond <= kDeimMaxCondition))
    throw NumericalError(detail::concat("DEIM (", to_string(method), "): P^T U (", PtU.rows(),
                                        " x ", PtU.cols(), ") is singular: cond_2 = ", cond,
                                        " exceeds ", kDeimMaxCondition));
  res.PtU_inv = PtU.partialPivLu().inverse();
  res.error_constant = 1.0 / s_min;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

void check_deim_result(const DeimResult& d, Index rows, std::string_view who,
                       std::string_view rows_are) {
  const Index m = d.U.cols();
  require(d.U.rows() == rows, who, ": the DEIM basis U has ", d.U.rows(), " rows, expected ",
          rows_are, " = ", rows);
  require(m >= 1, who, ": the DEIM basis U has no columns (m = 0)");
  require(static_cast<Index>(d.indices.size()) == m, who, ": the DEIM result has ",
          d.indices.size(), " indices for m = ", m, " basis vectors");
  require(d.PtU_inv.rows() == m && d.PtU_inv.cols() == m, who, ": (P^T U)^{-1} is ",
          d.PtU_inv.rows(), " x ", d.PtU_inv.cols(), ", expected ", m, " x ", m);
  const std::string prefix = detail::concat(who, ": ");
  require_finite(d.U, prefix.c_str(), "DEIM basis U");
  require_finite(d.PtU_inv, prefix.c_str(), "DEIM (P^T U)^{-1}");
  for (Index p : d.indices)
    require(p >= 0 && p < rows, who, ": DEIM index ", p, " is outside [0, ", rows, ")");
  std::vector<Index> sorted = d.indices;
  std::sort(sorted.begin(), sorted.end());
  const auto repeated = std::adjacent_find(sorted.begin(), sorted.end());
  require(repeated == sorted.end(), who, ": DEIM index ",
          repeated == sorted.end() ? Index{-1} : *repeated, " is repeated");
}

Vector deim_approximation(const DeimResult& d, const Vector& f) {
  require(f.size() == d.U.rows(), "DEIM approximation: f has size ", f.size(),
          ", expected n = ", d.U.rows());
  return d.U * (d.PtU_inv * f(d.indices));
}

}  // namespace mor
