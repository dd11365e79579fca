// SPDX-License-Identifier: GPL-3.0-or-later
// H2 norms (see system_norms.hpp): from a Gramian factor, dense, by low-rank ADI, and of an
// error system from the full model's ADI factor.
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
using norms_detail::kEps;

namespace {

void require_zero_feedthrough(const LtiOperator& sys, const char* who) {
  const double d = sys.D_ff().size() == 0 ? 0.0 : sys.D_ff().cwiseAbs().maxCoeff();
  require(d == 0.0, who, ": the H2 norm is infinite for a nonzero feed-through (max |D_ij| = ", d,
          ")");
}

/// sigma_max of a symmetric positive semidefinite matrix (its largest eigenvalue).
double spd_norm(const Matrix& S) {
  if (S.size() == 0) return 0.0;
  Matrix X = S;
  return lapack::symmetric_eigenvalues(X).maxCoeff();
}

}  // namespace

double h2_norm_from_factor(const LtiOperator& sys, const Matrix& Zc) {
  require_zero_feedthrough(sys, "h2_norm_from_factor");
  require(Zc.rows() == sys.n(), "h2_norm_from_factor: the factor has ", Zc.rows(),
          " rows, expected ", sys.n());
  return (sys.C() * Zc).norm();
}

double h2_norm_dense(const LtiOperator& sys) {
  require_zero_feedthrough(sys, "h2_norm_dense");
  return h2_norm_from_factor(sys, dense_gramian_factor(sys, GramianKind::controllability));
}

H2Result h2_norm_low_rank(LtiOperator& sys, const AdiOptions& options) {
  require_zero_feedthrough(sys, "h2_norm_low_rank");
  // ||G||_H2^2 = trace(C P C^T) = trace(B^T Q B); LR-ADI costs one solve per step with as many
  // right-hand sides as B (controllability) or C^T (observability) has columns.
  const bool use_observability = sys.n_outputs() < sys.n_inputs();
  H2Result result;
  result.adi = low_rank_adi(
      sys, use_observability ? GramianKind::observability : GramianKind::controllability, options);
  if (result.adi.status != AdiStatus::converged)
    throw NumericalError(detail::concat("H2 norm: LR-ADI did not converge: ", result.adi.message));
  result.norm = use_observability ? (sys.B().transpose() * result.adi.Z).norm()
                                  : (sys.C() * result.adi.Z).norm();
  return result;
}

ErrorH2 h2_error_from_adi_factor(const Matrix& CZc, const std::vector<Complex>& shifts,
                                 double full_residual, const Matrix& B_full,
                                 const DenseLtiOperator& reduced) {
  const Index m = reduced.n_inputs(), p = reduced.n_outputs();
  require(CZc.rows() == p && B_full.cols() == m, "H2 error from the ADI factor: C Z_c has ",
          CZc.rows(), " rows and B ", B_full.cols(), " columns, the reduced model ", p,
          " outputs and ", m, " inputs");
  require(reduced.D_ff().size() == 0 || reduced.D_ff().isZero(0.0),
          "H2 error from the ADI factor: the reduced model has a nonzero feed-through (max |D_ij| "
          "= ",
          reduced.D_ff().cwiseAbs().maxCoeff(), ")");
  const Matrix E = reduced.E(), A = reduced.A(), &C = reduced.C();
  Matrix W = reduced.B();
  Matrix CrZr(p, CZc.cols());
  Index col = 0;
  // One ADI step of the reduced model with shift i (and its conjugate), its C_r Z_r columns into
  // `out` from column `at` (as low_rank_adi: real p: V = (A + p E)^{-1} W, Z <- [Z, sqrt(-2p) V],
  // W <- W - 2p E V; a pair in real arithmetic). Returns the index of the next shift.
  auto step = [&](std::size_t i, Matrix& out, Index at) {
    const Complex s = shifts[i];
    require(s.real() < 0.0, "H2 error from the ADI factor: shift ", i, " is ", complex_text(s),
            ", expected Re < 0");
    if (s.imag() == 0.0) {
      require(at + m <= out.cols(), "H2 error from the ADI factor: ", shifts.size(),
              " shifts need more than the ", CZc.cols(), " columns of C Z_c");
      const Eigen::PartialPivLU<Matrix> lu(A + s.real() * E);
      if (!(lu.rcond() > kEps))
        throw NumericalError(detail::concat(
            "H2 error from the ADI factor: A_r + p E_r is singular at p = ", s.real()));
      const Matrix V = lu.solve(W);
      out.middleCols(at, m) = std::sqrt(-2.0 * s.real()) * (C * V);
      W -= (2.0 * s.real()) * (E * V);
      return i + 1;
    }
    require(i + 1 < shifts.size() && shifts[i + 1] == std::conj(s),
            "H2 error from the ADI factor: shift ", i, " = ", complex_text(s),
            " is not followed by its conjugate");
    require(at + 2 * m <= out.cols(), "H2 error from the ADI factor: ", shifts.size(),
            " shifts need more than the ", CZc.cols(), " columns of C Z_c");
    const lapack::ComplexLu lu(A.cast<Complex>() + s * E.cast<Complex>());
    if (!(lu.rcond() > kEps))
      throw NumericalError(detail::concat(
          "H2 error from the ADI factor: A_r + p E_r is singular at p = ", complex_text(s)));
    const ComplexMatrix V = lu.solve(W.cast<Complex>());
    const double g = 2.0 * std::sqrt(-s.real()), delta = s.real() / s.imag();
    const double g2 = g * std::sqrt(delta * delta + 1.0);
    const Matrix Vr = V.real() + delta * V.imag();
    out.middleCols(at, m) = g * (C * Vr);
    out.middleCols(at + m, m) = g2 * (C * V.imag());
    W += (g * g) * (E * Vr);
    return i + 2;
  };
  auto width = [&](std::size_t i) { return shifts[i].imag() == 0.0 ? m : 2 * m; };
  for (std::size_t i = 0; i < shifts.size();) {
    const Index w = width(i);
    i = step(i, CrZr, col);
    col += w;
  }
  require(col == CZc.cols(), "H2 error from the ADI factor: ", shifts.size(), " shifts give ", col,
          " columns, C Z_c has ", CZc.cols());
  // The full run has reached full_residual; the reduced part, under shifts chosen for the full
  // pencil, may lag behind. It continues alone with the same cycle of shifts until its residual
  // is as small (at most 20 more cycles): the full part's further columns, left out, are of the
  // size of its own final residual.
  const Matrix BtB = B_full.transpose() * B_full;
  const double target = std::max(full_residual, 0.0) * spd_norm(BtB);
  double extra = 0.0;  // ||C_r Z_r||_F^2 of the continued steps
  for (int cycle = 0; cycle < 20 && spd_norm(W.transpose() * W) > target; ++cycle)
    for (std::size_t i = 0; i < shifts.size();) {
      Matrix cols(p, width(i));
      i = step(i, cols, 0);
      extra += cols.squaredNorm();
    }
  ErrorH2 out;
  out.norm = std::sqrt((CZc - CrZr).squaredNorm() + extra);
  const Matrix BrtBr = reduced.B().transpose() * reduced.B();
  out.residual = (std::max(full_residual, 0.0) * spd_norm(BtB) + spd_norm(W.transpose() * W)) /
                 spd_norm(BtB + BrtBr);
  return out;
}

}  // namespace mor
