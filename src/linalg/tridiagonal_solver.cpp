// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/linalg/tridiagonal_solver.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "src/core/errors.hpp"

extern "C" {
// LAPACK (Fortran, LP64): L D L^T of a symmetric positive definite tridiagonal matrix.
void dpttrf_(const int* n, double* d, double* e, int* info);
void dpttrs_(const int* n, const int* nrhs, const double* d, const double* e, double* b,
             const int* ldb, int* info);
}

namespace mor {
namespace {

using namespace tridiagonal_detail;

int checked_int(Index n, const char* what) {
  require(n >= 0 && n <= std::numeric_limits<int>::max(), "tridiagonal solver: ", what, " = ", n,
          " exceeds LAPACK's int range");
  return static_cast<int>(n);
}

/// The twisted factorization by ratios of minors (file comment of the header), into the inverse
/// pivots and couplings of the twisted layout (see TridiagonalSpdSolver's members). Runs over
/// blocks of kBlock rows of each end: the recurrences write the block's minors into buffers that
/// stay in L1, then the ratios are taken from there, vectorized, so the minors never travel to
/// memory. Returns false, leaving the outputs unspecified, if the minors left the safe range or
/// a pivot is not positive.
bool twisted_factorize(Index n, const double* d, const double* e, double* inv_pivot,
                       double* coupling) {
  const Index k = (n - 1) / 2;          // rows 0..k-1 from the top, n-1..k+1 from the bottom
  const Index bottom_rows = n - 1 - k;  // k or k + 1
  constexpr Index kBlock = 128;         // a multiple of kRescaleEvery
  static_assert(kBlock % kRescaleEvery == 0 && kRescaleLag < kRescaleEvery);
  // Row t0 + i of the top at [i]; row n - 1 - (t0 + i) of the bottom at [kBlock - 1 - i], so
  // that both are in ascending row order. P: the minor; Q: the previous one in the same scale.
  alignas(64) double top_p[kBlock], top_q[kBlock], bot_p[kBlock], bot_q[kBlock];
  double top1 = 0.0, top2 = 0.0, bot1 = 0.0, bot2 = 0.0;  // the last two minors of each end
  // Row t rescales (by a power of two from the minor kRescaleLag rows back, computed long
  // before) when t % kRescaleEvery == kRescaleLag: the lagged row is then in the same block.
  // Inverse pivots q / p and couplings e / pivot of count rows; any minor out of range flags.
  std::uint32_t bad = 0;
  auto ratios = [&bad](const double* p, const double* q, Index count, const double* coupled,
                       double* ip, double* l) { bad |= minor_ratios(p, q, count, coupled, ip, l); };
  for (Index t0 = 0; t0 < bottom_rows; t0 += kBlock) {
    const Index t1 = std::min(t0 + kBlock, bottom_rows), top_end = std::min(t1, k);
    Index t = t0;
    if (t0 == 0) {  // the first row of each end: p_{-1} = 1
      if (k > 0) {
        top_p[0] = top1 = d[0];
        top_q[0] = top2 = 1.0;
      }
      bot_p[kBlock - 1] = bot1 = d[n - 1];
      bot_q[kBlock - 1] = bot2 = 1.0;
      t = 1;
    }
    for (; t < top_end; ++t) {
      const Index i = t - t0, j = n - 1 - t, b = kBlock - 1 - i;
      double st = 1.0, sb = 1.0;
      if (t % kRescaleEvery == kRescaleLag) {
        st = inverse_power_of_two(top_p[i - kRescaleLag]);
        sb = inverse_power_of_two(bot_p[b + kRescaleLag]);
      }
      minor_row(d[t], e[t - 1] * e[t - 1], st, top1, top2, top_p[i], top_q[i]);
      minor_row(d[j], e[j] * e[j], sb, bot1, bot2, bot_p[b], bot_q[b]);
    }
    for (; t < t1; ++t) {  // the bottom's one extra row when n is even
      const Index j = n - 1 - t, b = kBlock - 1 - (t - t0);
      const double sb =
          t % kRescaleEvery == kRescaleLag ? inverse_power_of_two(bot_p[b + kRescaleLag]) : 1.0;
      minor_row(d[j], e[j] * e[j], sb, bot1, bot2, bot_p[b], bot_q[b]);
    }
    // Row t of the top couples to t + 1 through e_t; row j of the bottom to j - 1 via e_{j-1}.
    if (top_end > t0) ratios(top_p, top_q, top_end - t0, e + t0, inv_pivot + t0, coupling + t0);
    const Index count = t1 - t0, first = n - t1;
    ratios(bot_p + kBlock - count, bot_q + kBlock - count, count, e + first - 1, inv_pivot + first,
           coupling + first);
  }
  if (bad) return false;
  double twist = d[k];
  if (k > 0) twist -= e[k - 1] * coupling[k - 1];
  if (k + 1 < n) twist -= e[k] * coupling[k + 1];
  if (!(twist > 0.0) || !std::isfinite(twist)) return false;
  inv_pivot[k] = 1.0 / twist;
  coupling[k] = 0.0;
  return true;
}

/// Forward and back substitution with the twisted factors; x may alias b. Each sweep runs from
/// both ends at once: two independent recurrences of one FMA per row, kept in registers. (Four,
/// by unrolling each end's recurrence over two rows, need twice the instructions per row and
/// measured slower here: the sweeps are then bound by instruction throughput, not latency.)
void twisted_solve(Index n, const double* inv_pivot, const double* coupling, const double* b,
                   double* x) {
  const Index k = (n - 1) / 2;          // top rows 0..k-1, bottom rows n-1..k+1
  const Index bottom_rows = n - 1 - k;  // k or k + 1
  const double* l = coupling;
  // L y = b towards row k.
  double yt = 0.0, yb = 0.0;
  if (k > 0) x[0] = yt = b[0];
  if (bottom_rows > 0) x[n - 1] = yb = b[n - 1];
  Index t = 1;
  for (; t < k; ++t) {
    const Index j = n - 1 - t;
    x[t] = yt = fmadd(-l[t - 1], yt, b[t]);
    x[j] = yb = fmadd(-l[j + 1], yb, b[j]);
  }
  for (; t < bottom_rows; ++t) {  // the bottom's one extra row when n is even
    const Index j = n - 1 - t;
    x[j] = yb = fmadd(-l[j + 1], yb, b[j]);
  }
  double yk = b[k];
  if (k > 0) yk = fmadd(-l[k - 1], yt, yk);
  if (k + 1 < n) yk = fmadd(-l[k + 1], yb, yk);
  const double xk = yk * inv_pivot[k];
  x[k] = xk;
  // D L^T x = y from row k outwards.
  double xt = xk, xb = xk;
  Index s = 1;
  for (; s <= k; ++s) {
    const Index i = k - s, j = k + s;
    x[i] = xt = fmadd(-l[i], xt, x[i] * inv_pivot[i]);
    x[j] = xb = fmadd(-l[j], xb, x[j] * inv_pivot[j]);
  }
  for (; s <= bottom_rows; ++s) {
    const Index j = k + s;
    x[j] = xb = fmadd(-l[j], xb, x[j] * inv_pivot[j]);
  }
}

}  // namespace

void TridiagonalSpdSolver::check_size(Index n) {
  require(n >= 1, "tridiagonal solver: the matrix must have at least one row, got n = ", n);
  checked_int(n, "n");
}

void TridiagonalSpdSolver::require_twisted() const {
  require(twisted(), "tridiagonal solver: a streamed sweep needs a twisted factorization (",
          factorized_ ? "the last one fell back to LAPACK" : "none is held", ")");
}

void TridiagonalSpdSolver::factorize(const Vector& diag, const Vector& off) {
  const Index n = diag.size();
  require(n >= 1, "tridiagonal solver: the matrix must have at least one row, got n = ", n);
  require(off.size() == n - 1, "tridiagonal solver: the off-diagonal has ", off.size(),
          " entries, the diagonal ", n, " (expected n - 1 = ", n - 1, ")");
  checked_int(n, "n");
  factorized_ = false;
  n_ = n;
  inv_pivot_.resize(n);
  coupling_.resize(n);
  lapack_ = !twisted_factorize(n, diag.data(), off.data(), inv_pivot_.data(), coupling_.data());
  if (lapack_) {
    for (Index i = 0; i < n; ++i)
      if (!std::isfinite(diag[i]))
        throw NumericalError(
            detail::concat("tridiagonal solver: diagonal entry ", i, " is not finite: ", diag[i]));
    for (Index i = 0; i + 1 < n; ++i)
      if (!std::isfinite(off[i]))
        throw NumericalError(detail::concat("tridiagonal solver: off-diagonal entry ", i,
                                            " is not finite: ", off[i]));
    inv_pivot_ = diag;
    coupling_.head(n - 1) = off;
    const int info = lapack_dpttrf(inv_pivot_, coupling_);
    if (info > 0)
      throw NumericalError(detail::concat(
          "tridiagonal solver: the matrix (n = ", n, ") is not positive definite: pivot ",
          inv_pivot_[info - 1], " <= 0 at row ", info - 1, " (0-based, LAPACK dpttrf)"));
  }
  factorized_ = true;
}

void TridiagonalSpdSolver::solve(const Vector& b, Vector& x) const {
  require(factorized_, "tridiagonal solver: solve called without a successful factorize");
  require(b.size() == n_, "tridiagonal solver: right-hand side of size ", b.size(),
          " for a matrix of size ", n_);
  if (lapack_) {
    if (&x != &b) x = b;
    lapack_dpttrs(inv_pivot_, coupling_, x);
    return;
  }
  if (&x != &b) x.resize(n_);
  twisted_solve(n_, inv_pivot_.data(), coupling_.data(), b.data(), x.data());
}

int lapack_dpttrf(Vector& d, Vector& e) {
  const int n = checked_int(d.size(), "n");
  require(n >= 1 && e.size() >= n - 1, "lapack_dpttrf: d has ", d.size(), " entries, e ", e.size(),
          " (need n >= 1 and n - 1)");
  int info = 0;
  dpttrf_(&n, d.data(), e.data(), &info);
  require(info >= 0, "lapack_dpttrf: LAPACK rejected argument ", -info);
  return info;
}

void lapack_dpttrs(const Vector& d, const Vector& e, Vector& b) {
  const int n = checked_int(d.size(), "n");
  require(n >= 1 && e.size() >= n - 1 && b.size() == n, "lapack_dpttrs: d has ", d.size(),
          " entries, e ", e.size(), ", b ", b.size(), " (need n >= 1, n - 1, n)");
  const int nrhs = 1;
  int info = 0;
  dpttrs_(&n, &nrhs, d.data(), e.data(), b.data(), &n, &info);
  require(info == 0, "lapack_dpttrs: LAPACK rejected argument ", -info);
}

}  // namespace mor
