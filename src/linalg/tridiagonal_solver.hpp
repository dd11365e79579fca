// SPDX-License-Identifier: GPL-3.0-or-later
// Symmetric positive definite tridiagonal systems A x = b in O(n) time and memory, without
// symbolic analysis: the chain's Newton and iteration matrices S = a M + b D + c (K + dg/dq).
//
//   A = tridiag(e, d, e):  A(i, i) = d_i (i < n),  A(i + 1, i) = A(i, i + 1) = e_i (i < n - 1).
//
// Two implementations of the same L D L^T elimination:
//  - TridiagonalSpdSolver, the one the integrators use: a twisted ("burn at both ends")
//    factorization (van der Vorst, Parallel Computing 5 (1987) 45-54): rows 0, 1, ... and rows
//    n-1, n-2, ... are eliminated at the same time and meet at the twist row k = (n-1)/2, so the
//    factorization and each substitution sweep run as two independent recurrences that the
//    processor overlaps. The pivots come from the ratios of principal minors
//        p_i = d_i p_{i-1} - e_{i-1}^2 p_{i-2},   pivot_i = p_i / p_{i-1}
//    (the continuant recurrence; the trailing minors likewise from the bottom), so no division
//    waits on the previous row: the recurrence is one fused multiply-add per row, rescaled every
//    8 rows by a power of two (exact), and the divisions run afterwards, vectorized. The pivots
//    equal those of the usual recurrence pivot_i = d_i - e_{i-1}^2 / pivot_{i-1} up to rounding,
//    and their rounding errors propagate by the same factors (the map is the same). Measured by
//    bench_kernels on this machine: factorization 3 to 4 times, solve 2 to 3 times faster than
//    LAPACK's dpttrf/dpttrs; the solve runs within 20% of the latency of its chained FMAs at
//    N = 1e3, the factorization at 3 times that bound (its divisions and rescaling).
//  - LAPACK's dpttrf/dpttrs (L D L^T from the top), behind lapack_dpttrf()/lapack_dpttrs(): the
//    fallback when the minors leave [2^-900, 2^900] (entries of wildly different magnitude) or a
//    pivot is not positive, so that LAPACK decides, and reports, whether A is positive definite;
//    and the reference of the tests and benchmarks.
//
// A is positive definite iff every pivot is positive (the twisted order is a symmetric
// permutation of the rows). Cost: factorize about 6 n flops, reading d and e and writing the
// two factor vectors once (the minors stay in L1); solve 4 n flops in two sweeps (b and L in,
// y out; y, D and L in, x out).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "src/core/types.hpp"

namespace mor {

class TridiagonalSpdSolver {
 public:
  TridiagonalSpdSolver() = default;

  /// Factorizes A = tridiag(off, diag, off). Sizes: diag n >= 1, off n - 1; n < 2^31 (LAPACK).
  /// @throws InvalidArgument if the sizes do not fit; NumericalError if an entry is not finite
  ///         (naming the row and value) or A is not positive definite (naming the row at which
  ///         LAPACK's elimination found the pivot <= 0, and the pivot).
  void factorize(const Vector& diag, const Vector& off);
  /// x = A^{-1} b for the last successful factorize; x may alias b. Backward stable: the
  /// residual ||A x - b|| is a small multiple of the unit roundoff times ||A|| ||x||.
  /// @throws InvalidArgument if nothing is factorized or b.size() != n.
  void solve(const Vector& b, Vector& x) const;

  Index rows() const { return n_; }
  /// True if the last factorize fell back to LAPACK's dpttrf (see the file comment).
  bool used_lapack() const { return lapack_; }

  // --- Streamed use: the matrix and right-hand sides generated block by block ----------------
  // For a caller whose A and b are cheap to generate from a few vectors already in memory (the
  // chain's Newton matrix and residual at a stage state), the factorization, the forward sweep
  // and the back sweep each run as one pass, and A, b and the solution never travel to memory:
  // only the factors and y = L^{-1} b do. Rows are generated and handed over in blocks of at
  // most kStreamBlock, in the twisted order (both ends towards the middle row k = (n-1)/2 for
  // the factorization and the forward sweep, from k outwards for the back sweep).
  static constexpr Index kStreamBlock = 128;

  /// factorize fused with the forward sweep of solve. rows(first, count, d, e, b) writes, for
  /// the rows first .. first + count - 1 (count <= kStreamBlock), d[i] = d_{first+i},
  /// b[i] = b_{first+i} and e[i] = e_{first+i-1} for i = 0 .. count (e_{-1} and e_{n-1} are
  /// not read). y (n entries) receives L^{-1} b for backward(). The pivots are those of
  /// factorize (the same recurrence in the same order). Returns false, with nothing factorized,
  /// where factorize would fall back to LAPACK (minors out of the safe range, a pivot not
  /// positive or not finite): the caller then calls factorize and solve, which decide.
  /// @throws InvalidArgument for n < 1 or n beyond LAPACK's int range.
  template <class Rows>
  bool factorize_forward(Index n, Rows&& rows, double* y);
  /// The forward sweep L y = b with the last factorization (twisted(): not after a LAPACK
  /// fallback), b generated by rhs(first, count, b) for the rows first .. first + count - 1.
  template <class Rhs>
  void forward(Rhs&& rhs, double* y) const;
  /// The back sweep D L^T z = y: z = A^{-1} b for the y of factorize_forward or forward,
  /// handed over as sink(first, count, z) with z[i] = z_{first+i} (valid during the call), in
  /// blocks of at most kStreamBlock rows; every row once, the blocks in no particular order.
  template <class Sink>
  void backward(const double* y, Sink&& sink) const;
  /// A twisted factorization is held (factorize without LAPACK fallback, or factorize_forward):
  /// the streamed sweeps may be used.
  bool twisted() const { return factorized_ && !lapack_; }

 private:
  Index n_ = 0;
  bool factorized_ = false;
  bool lapack_ = false;
  // Twisted layout (lapack_ false): for rows i < k, inv_pivot_[i] = 1 / pivot_i and
  // coupling_[i] = e_i / pivot_i (the multiplier of row i + 1); for rows i > k, the same with
  // e_{i-1} (the multiplier of row i - 1); inv_pivot_[k] = 1 / pivot_k, coupling_[k] = 0.
  // LAPACK layout (lapack_ true): inv_pivot_ holds dpttrf's D, coupling_ its L (size n - 1).
  Vector inv_pivot_, coupling_;

  /// @throws InvalidArgument for n < 1 or n beyond LAPACK's int range.
  static void check_size(Index n);
  /// @throws InvalidArgument unless twisted().
  void require_twisted() const;
};

/// LAPACK dpttrf on the arrays: d (n) becomes D, e (n - 1) the subdiagonal of the unit L of
/// A = L D L^T. Returns LAPACK's info: 0, or i > 0 if the leading minor of order i is not
/// positive definite (d[i - 1] then holds the pivot <= 0).
/// @throws InvalidArgument if the sizes do not fit.
int lapack_dpttrf(Vector& d, Vector& e);
/// LAPACK dpttrs with the factors of lapack_dpttrf: b (n) is overwritten by A^{-1} b.
/// @throws InvalidArgument if the sizes do not fit.
void lapack_dpttrs(const Vector& d, const Vector& e, Vector& b);

// ---------------------------------------------------------------------------------------------

namespace tridiagonal_detail {
// The minors (rescaled) must stay within these bounds for the fast path: then every product in
// the recurrence that matters at the unit roundoff is a normal number.
inline constexpr double kMinorLow = 0x1p-900;
inline constexpr double kMinorHigh = 0x1p900;
// Rows between two rescalings of the minors' recurrence, and how far back the scale is taken
// from (so that computing it never waits on the previous row).
inline constexpr Index kRescaleEvery = 8;
inline constexpr Index kRescaleLag = 4;

/// a b + c, one rounding where the machine has FMA (ISO C++ mode does not contract a * b + c).
inline double fmadd(double a, double b, double c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

/// 2^-E for a positive normal x = f 2^E, f in [1, 2); some other number (caught by the range
/// check of the minors) for zero, subnormal, infinite or NaN x.
inline double inverse_power_of_two(double x) {
  const std::uint64_t biased = (std::bit_cast<std::uint64_t>(x) >> 52) & 0x7ffu;  // E + 1023
  return std::bit_cast<double>(((2046u - biased) & 0x7ffu) << 52);
}

/// One row of the minors' recurrence: p = d_i p1 - c p2 with both minors scaled by s first
/// (s = 1 between rescalings); only the fused multiply-add waits on the previous row.
inline void minor_row(double di, double c, double s, double& p1, double& p2, double& p, double& q) {
  const double next = fmadd(di * s, p1, -(c * s) * p2);
  q = p1 * s;
  p = next;
  p2 = q;
  p1 = next;
}

/// Inverse pivots q / p and couplings e / pivot of count rows; returns a nonzero flag if a
/// minor is out of the safe range.
inline std::uint32_t minor_ratios(const double* p, const double* q, Index count,
                                  const double* coupled, double* ip, double* l) {
  std::uint32_t bad = 0;
  for (Index i = 0; i < count; ++i) {
    bad |= static_cast<std::uint32_t>(!(p[i] >= kMinorLow)) | !(p[i] <= kMinorHigh) |
           !(q[i] >= kMinorLow) | !(q[i] <= kMinorHigh);
    const double r = q[i] / p[i];
    ip[i] = r;
    l[i] = coupled[i] * r;
  }
  return bad;
}

/// The forward sweep L y = b over one block of both ends of the twisted layout (k the twist
/// row): the top's rows t0 .. min(t1, k) - 1 from top_b (row t at [t - t0]), the bottom's rows
/// n - 1 - t0 down to n - t1 from bot_b (row j at [j - (n - t1)]), the two recurrences
/// interleaved; yt and yb carry each end's last value from block to block.
inline void forward_block(Index n, Index k, Index t0, Index t1, const double* l,
                          const double* top_b, const double* bot_b, double* y, double& yt,
                          double& yb) {
  const Index top_end = std::min(t1, k), first = n - t1;
  Index t = t0;
  if (t0 == 0) {
    if (k > 0) y[0] = yt = top_b[0];
    y[n - 1] = yb = bot_b[t1 - 1];
    t = 1;
  }
  for (; t < top_end; ++t) {
    const Index j = n - 1 - t;
    y[t] = yt = fmadd(-l[t - 1], yt, top_b[t - t0]);
    y[j] = yb = fmadd(-l[j + 1], yb, bot_b[j - first]);
  }
  for (; t < t1; ++t) {
    const Index j = n - 1 - t;
    y[j] = yb = fmadd(-l[j + 1], yb, bot_b[j - first]);
  }
}
}  // namespace tridiagonal_detail

template <class Rows>
bool TridiagonalSpdSolver::factorize_forward(Index n, Rows&& rows, double* y) {
  using namespace tridiagonal_detail;
  constexpr Index kBlock = kStreamBlock;
  static_assert(kBlock % kRescaleEvery == 0 && kRescaleLag < kRescaleEvery);
  check_size(n);
  factorized_ = false;
  n_ = n;
  inv_pivot_.resize(n);
  coupling_.resize(n);
  double* inv_pivot = inv_pivot_.data();
  double* coupling = coupling_.data();
  const Index k = (n - 1) / 2;          // rows 0..k-1 from the top, n-1..k+1 from the bottom
  const Index bottom_rows = n - 1 - k;  // k or k + 1
  // The rows of a block: the top's in ascending order from 0, the bottom's likewise (row
  // n - t1 at 0). The minors: row t0 + i of the top at [i]; row n - 1 - (t0 + i) of the bottom
  // at [kBlock - 1 - i] (ascending row order, as factorize's).
  alignas(64) double top_d[kBlock], top_e[kBlock + 1], top_b[kBlock];
  alignas(64) double bot_d[kBlock], bot_e[kBlock + 1], bot_b[kBlock];
  alignas(64) double top_p[kBlock], top_q[kBlock], bot_p[kBlock], bot_q[kBlock];
  double top1 = 0.0, top2 = 0.0, bot1 = 0.0, bot2 = 0.0;  // the last two minors of each end
  double yt = 0.0, yb = 0.0;                              // the forward sweep's last values
  std::uint32_t bad = 0;
  for (Index t0 = 0; t0 < bottom_rows; t0 += kBlock) {
    const Index t1 = std::min(t0 + kBlock, bottom_rows), top_end = std::min(t1, k);
    const Index top_count = std::max<Index>(top_end - t0, 0), count = t1 - t0, first = n - t1;
    if (top_count > 0) rows(t0, top_count, top_d, top_e, top_b);
    rows(first, count, bot_d, bot_e, bot_b);
    // Bottom row n - 1 - t sits at [count - 1 - (t - t0)] of the bot_ buffers, e_j (its
    // coupling to row j + 1) one further.
    const Index shift = kBlock - count;  // bot_p index - bot_d index
    Index t = t0;
    if (t0 == 0) {  // the first row of each end: p_{-1} = 1
      if (k > 0) {
        top_p[0] = top1 = top_d[0];
        top_q[0] = top2 = 1.0;
      }
      bot_p[kBlock - 1] = bot1 = bot_d[count - 1];
      bot_q[kBlock - 1] = bot2 = 1.0;
      t = 1;
    }
    for (; t < top_end; ++t) {
      const Index i = t - t0, b = kBlock - 1 - i, bi = b - shift;
      double st = 1.0, sb = 1.0;
      if (t % kRescaleEvery == kRescaleLag) {
        st = inverse_power_of_two(top_p[i - kRescaleLag]);
        sb = inverse_power_of_two(bot_p[b + kRescaleLag]);
      }
      minor_row(top_d[i], top_e[i] * top_e[i], st, top1, top2, top_p[i], top_q[i]);
      minor_row(bot_d[bi], bot_e[bi + 1] * bot_e[bi + 1], sb, bot1, bot2, bot_p[b], bot_q[b]);
    }
    for (; t < t1; ++t) {  // the bottom's one extra row when n is even
      const Index b = kBlock - 1 - (t - t0), bi = b - shift;
      const double sb =
          t % kRescaleEvery == kRescaleLag ? inverse_power_of_two(bot_p[b + kRescaleLag]) : 1.0;
      minor_row(bot_d[bi], bot_e[bi + 1] * bot_e[bi + 1], sb, bot1, bot2, bot_p[b], bot_q[b]);
    }
    // Row t of the top couples to t + 1 through e_t; row j of the bottom to j - 1 via e_{j-1}.
    if (top_count > 0)
      bad |= minor_ratios(top_p, top_q, top_count, top_e + 1, inv_pivot + t0, coupling + t0);
    bad |= minor_ratios(bot_p + shift, bot_q + shift, count, bot_e, inv_pivot + first,
                        coupling + first);
    // The forward sweep over the block, both ends at once (solve's recurrences).
    forward_block(n, k, t0, t1, coupling, top_b, bot_b, y, yt, yb);
  }
  if (bad) return false;
  // The twist row k.
  double dk, ek[2], bk;
  rows(k, 1, &dk, ek, &bk);
  double twist = dk, yk = bk;
  if (k > 0) {
    twist -= ek[0] * coupling[k - 1];
    yk = fmadd(-coupling[k - 1], yt, yk);
  }
  if (k + 1 < n) {
    twist -= ek[1] * coupling[k + 1];
    yk = fmadd(-coupling[k + 1], yb, yk);
  }
  if (!(twist > 0.0) || !std::isfinite(twist)) return false;
  inv_pivot[k] = 1.0 / twist;
  coupling[k] = 0.0;
  y[k] = yk;
  lapack_ = false;
  factorized_ = true;
  return true;
}

template <class Rhs>
void TridiagonalSpdSolver::forward(Rhs&& rhs, double* y) const {
  using tridiagonal_detail::fmadd;
  using tridiagonal_detail::forward_block;
  constexpr Index kBlock = kStreamBlock;
  require_twisted();
  const Index n = n_, k = (n - 1) / 2, bottom_rows = n - 1 - k;
  const double* l = coupling_.data();
  alignas(64) double top_b[kBlock], bot_b[kBlock];
  double yt = 0.0, yb = 0.0;
  for (Index t0 = 0; t0 < bottom_rows; t0 += kBlock) {
    const Index t1 = std::min(t0 + kBlock, bottom_rows), top_end = std::min(t1, k);
    const Index top_count = std::max<Index>(top_end - t0, 0), first = n - t1;
    if (top_count > 0) rhs(t0, top_count, top_b);
    rhs(first, t1 - t0, bot_b);
    forward_block(n, k, t0, t1, l, top_b, bot_b, y, yt, yb);
  }
  double bk;
  rhs(k, 1, &bk);
  double yk = bk;
  if (k > 0) yk = fmadd(-l[k - 1], yt, yk);
  if (k + 1 < n) yk = fmadd(-l[k + 1], yb, yk);
  y[k] = yk;
}

template <class Sink>
void TridiagonalSpdSolver::backward(const double* y, Sink&& sink) const {
  using tridiagonal_detail::fmadd;
  constexpr Index kBlock = kStreamBlock;
  require_twisted();
  const Index n = n_, k = (n - 1) / 2, bottom_rows = n - 1 - k;
  const double* l = coupling_.data();
  const double* ip = inv_pivot_.data();
  alignas(64) double top_z[kBlock], bot_z[kBlock];
  const double zk = y[k] * ip[k];
  sink(k, Index{1}, static_cast<const double*>(&zk));
  double zt = zk, zb = zk;
  // Rows k - s (top, towards 0) and k + s (bottom, towards n - 1) for s = s0 + 1 .. s1.
  for (Index s0 = 0; s0 < bottom_rows; s0 += kBlock) {
    const Index s1 = std::min(s0 + kBlock, bottom_rows), top_end = std::min(s1, k);
    const Index top_count = std::max<Index>(top_end - s0, 0);
    Index s = s0 + 1;
    // Top rows k - s at top_z[top_count - 1 - (s - s0 - 1)] (ascending rows); bottom rows
    // k + s at bot_z[s - s0 - 1].
    for (; s <= top_end; ++s) {
      const Index i = k - s, j = k + s;
      top_z[top_count - (s - s0)] = zt = fmadd(-l[i], zt, y[i] * ip[i]);
      bot_z[s - s0 - 1] = zb = fmadd(-l[j], zb, y[j] * ip[j]);
    }
    for (; s <= s1; ++s) {
      const Index j = k + s;
      bot_z[s - s0 - 1] = zb = fmadd(-l[j], zb, y[j] * ip[j]);
    }
    if (top_count > 0) sink(k - top_end, top_count, static_cast<const double*>(top_z));
    sink(k + s0 + 1, s1 - s0, static_cast<const double*>(bot_z));
  }
}

}  // namespace mor
