// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/sampled_residual.hpp"

#include <cmath>

#include "src/core/errors.hpp"

namespace mor {

namespace {

/// Rows S of X V for sparse X (X^T's columns S, times V).
Matrix rows_times(const SparseMatrix& X, const std::vector<Index>& rows, const Matrix& V) {
  const SparseMatrix Xt = X.transpose();
  Matrix out = Matrix::Zero(static_cast<Index>(rows.size()), V.cols());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (SparseMatrix::InnerIterator it(Xt, rows[i]); it; ++it)
      out.row(static_cast<Index>(i)) += it.value() * V.row(it.row());
  return out;
}

}  // namespace

SampledResidual::SampledResidual(const ParametricNetwork& net, const Matrix& V,
                                 const std::vector<Index>& rows)
    : force_(net.force) {
  const Index n = net.unit.n();
  require(V.rows() == n && V.cols() >= 1, "sampled residual: V is ", V.rows(), " x ", V.cols(),
          ", expected n = ", n, " rows and at least one column");
  require(!rows.empty(), "sampled residual: no rows to sample");
  for (Index i : rows)
    require(i >= 0 && i < n, "sampled residual: row ", i, " is outside [0, ", n, ")");
  auto sampled = [&](const AffineOperator<SparseMatrix>& X) {
    return X.map([&](const SparseMatrix& Xi) { return rows_times(Xi, rows, V); });
  };
  MV_ = sampled(net.M);
  DV_ = sampled(net.D);
  KV_ = sampled(net.K);
  B_ = Matrix(net.unit.linear_system().B)(rows, Eigen::all);
  linear_ = net.unit.is_linear();
  if (!linear_) {
    const RestrictedNonlinearity r = net.unit.restricted_rows(rows);  // throws for bad rows
    E_ = r.element_rows(V);
    C_ = r.coefficients;
    A_ = r.A_local;
  }
}

SampledResidual::At SampledResidual::at(const Vector& mu) const {
  return {MV_.at(mu), DV_.at(mu), KV_.at(mu), force_(mu)};
}

void SampledResidual::accumulate(const At& at, const Vector& q_r, const Vector& v_r,
                                 const Vector& a_r, const Vector& u, double& r2, double& s2) const {
  const Vector ma = at.MV * a_r, dv = at.DV * v_r, kq = at.KV * q_r, bu = B_ * u;
  Vector g = Vector::Zero(ma.size());
  if (!linear_) {
    Vector e = E_ * q_r;
    for (Index k = 0; k < e.size(); ++k) {
      const double c[4] = {C_(k, 0), C_(k, 1), C_(k, 2), C_(k, 3)};
      double phi, dphi;
      element_law(c, e[k], phi, dphi);
      e[k] = at.force * phi;
    }
    g = A_ * e;
  }
  r2 += (ma + dv + kq + g - bu).squaredNorm();
  const double s = ma.norm() + dv.norm() + kq.norm() + g.norm() + bu.norm();
  s2 += s * s;
}

}  // namespace mor
