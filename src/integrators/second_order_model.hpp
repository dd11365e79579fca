// SPDX-License-Identifier: GPL-3.0-or-later
// The operator concept every time integrator of this project runs on: full sparse models,
// matrix-free stencil models and (later) reduced dense models alike.
//
// A model describes  M q'' + D q' + K q + g(q) = B u(t),  y = Cp q + Cv q'.
// It is constant data; everything that changes during a run (factorizations, scratch vectors)
// lives in its Workspace, built from the model (Pinocchio's Model/Data split).
//
//   model.n(), n_inputs(), n_outputs()      sizes n, m, p
//   model.is_linear()                       true if g == 0: iteration matrices then depend on
//                                           the step coefficients only and are factorized once
//   model.force(q, v, u, F)                 F = B u - D v - K q - g(q); q and v may be any Eigen
//                                           expressions (RK4 and the implicit schemes pass their
//                                           stage combinations lazily, so a stage costs one pass
//                                           over its operands in memory)
//   model.output(q, v, y)                   y = Cp q + Cv v
//   model.mass(x, out)                      out = M x
//   model.uniform_mass()                    m if M = m I (explicit schemes then fold M^{-1}
//                                           into their update coefficients), else nullopt
//   Model::Workspace ws(model, backend)
//   ws.solve_mass(r, x)                     x = M^{-1} r
//   ws.factorize_iteration(a, b, c, q)      S = a M + b D + c (K + dg/dq(q)), a, b, c >= 0;
//                                           once per implicit step (simplified Newton), so the
//                                           cheapest exact factorization of the model's S pays:
//                                           the chain's is tridiagonal (no symbolic work)
//   ws.solve_iteration(r, x)                x = S^{-1} r, once per Newton iteration
//
// Optional (BoundedIterationModel), for workspaces that can bound ||S^{-1}||_inf cheaply:
//   ws.iteration_excess()                   min_i (S_ii - sum_{j != i} |S_ij|) of the last
//                                           factorize_iteration (0 if S is not strictly
//                                           diagonally dominant): Newton then evaluates the
//                                           residual at each new iterate and stops without a
//                                           further solve once ||R||_inf / excess, an upper
//                                           bound on the next correction, meets the tolerance
//
// Optional (BlockForceModel), for models that evaluate their force block by block anyway:
//   model.force_blocks(q, v, u, sink)       the same F handed over as sink(i0, len, f), f the
//                                           rows [i0, i0 + len) (valid during the call), blocks
//                                           in increasing order; the sink may write any vector
//                                           q and v do not read. RK4 then updates q and v inside
//                                           its last stage, while each block is in L1.
//
// Optional (FoldedMidpointModel), for small dense models whose implicit midpoint correction
// costs less with S^{-1} folded into the model's own products (reduction/reduced_workspace.hpp):
//   ws.midpoint_folded()                    true if the two calls below may be used (run time)
//   ws.midpoint_prepare(h, q, v, u)         after a factorization and at the start of each step:
//                                           the part of S^{-1} R(x) that does not depend on x
//   ws.midpoint_correction(x, delta)        delta = S^{-1} R(x), the residual
//                                           R(x) = M (x - v) - h F(q + h/2 v_s, v_s, u),
//                                           v_s = (v + x) / 2, of (q, v, u) last prepared; the
//                                           same Newton correction as force + solve_iteration
//
// Optional (StreamedMidpointModel), for large models whose iteration matrix and residual can be
// generated row by row while they are factorized and solved (the chain's tridiagonal S):
//   ws.midpoint_streamed()                  true if the call below may be used (run time)
//   ws.midpoint_newton(refactorize, bound, h, q, v, u, x) -> NewtonNorms
//                                           one Newton iteration of implicit midpoint in place:
//                                           x -= S^{-1} R(x) with R as above, S = M + h/2 D +
//                                           h^2/4 (K + dg/dq) at the stage state of x if
//                                           refactorize (else the last S); returns ||delta||_inf
//                                           and the new ||x||_inf (and if bound, as
//                                           NewtonNorms says, a bound on the next correction,
//                                           from the residual at the new x taken in the back
//                                           sweep and S's diagonal excess). The same iterate as
//                                           factorize_iteration + force + solve_iteration, in
//                                           two passes over memory instead of about six
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>

#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor {

/// What a Newton iteration reports: ||delta||_inf and ||x||_inf of the updated unknown (NaN if
/// any entry is NaN), and an upper bound on the next iteration's correction
/// ||S^{-1} R(x)||_inf at the updated x: ||R(x)||_inf / min_i (S_ii - sum_{j != i} |S_ij|)
/// (Varah, Linear Algebra Appl. 11 (1975) 3-5) where S is strictly diagonally dominant by rows,
/// +inf where the workspace does not bound it. Newton stops when either is below its tolerance.
struct NewtonNorms {
  double delta, x;
  double next = std::numeric_limits<double>::infinity();
};

template <class Model>
concept SecondOrderModel = requires(const Model& model, typename Model::Workspace& ws,
                                    const Vector& x, Vector& out, double s) {
  { model.n() } -> std::convertible_to<Index>;
  { model.n_inputs() } -> std::convertible_to<Index>;
  { model.n_outputs() } -> std::convertible_to<Index>;
  { model.is_linear() } -> std::convertible_to<bool>;
  model.force(x, x, x, out);
  model.output(x, x, out);
  model.mass(x, out);
  { model.uniform_mass() } -> std::convertible_to<std::optional<double>>;
  ws.solve_mass(x, out);
  ws.factorize_iteration(s, s, s, x);
  ws.solve_iteration(x, out);
};

template <class Model>
concept BoundedIterationModel = SecondOrderModel<Model> &&
    requires(const typename Model::Workspace& ws) {
  { ws.iteration_excess() } -> std::convertible_to<double>;
};

template <class Model>
concept BlockForceModel = SecondOrderModel<Model> &&
    requires(const Model& model, const Vector& x, void (*sink)(Index, Index, const double*)) {
  model.force_blocks(x, x, x, sink);
};

template <class Model>
concept FoldedMidpointModel = SecondOrderModel<Model> &&
    requires(typename Model::Workspace& ws, const Vector& x, Vector& out, double s) {
  { ws.midpoint_folded() } -> std::convertible_to<bool>;
  ws.midpoint_prepare(s, x, x, x);
  ws.midpoint_correction(x, out);
};

template <class Model>
concept StreamedMidpointModel = SecondOrderModel<Model> &&
    requires(typename Model::Workspace& ws, const Vector& x, Vector& out, double s) {
  { ws.midpoint_streamed() } -> std::convertible_to<bool>;
  { ws.midpoint_newton(true, true, s, x, x, x, out) } -> std::convertible_to<NewtonNorms>;
};

namespace detail {
/// x -= delta over n entries and both infinity norms in one pass. The maxima are taken over the
/// bit patterns of |entry| (ordered like the magnitudes, with NaN above infinity), which
/// vectorizes where a floating-point max reduction would not, and lets a NaN through to the
/// caller's check. Accumulates into the bit patterns *delta_max, *x_max (start them at 0).
inline void subtract_with_norms(Index n, double* __restrict x, const double* __restrict delta,
                                std::uint64_t& delta_max, std::uint64_t& x_max) {
  constexpr std::uint64_t kMagnitude = 0x7fff'ffff'ffff'ffffu;
  std::uint64_t dm = delta_max, xm = x_max;
  for (Index i = 0; i < n; ++i) {
    const double d = delta[i], xi = x[i] - d;
    x[i] = xi;
    dm = std::max(dm, std::bit_cast<std::uint64_t>(d) & kMagnitude);
    xm = std::max(xm, std::bit_cast<std::uint64_t>(xi) & kMagnitude);
  }
  delta_max = dm;
  x_max = xm;
}

/// max_i |p_i| over n entries, NaN if any entry is NaN (the maximum of the bit patterns, as
/// subtract_with_norms takes it).
inline double max_abs(Index n, const double* __restrict p) {
  constexpr std::uint64_t kMagnitude = 0x7fff'ffff'ffff'ffffu;
  std::uint64_t mx = 0;
  for (Index i = 0; i < n; ++i) mx = std::max(mx, std::bit_cast<std::uint64_t>(p[i]) & kMagnitude);
  return std::bit_cast<double>(mx);
}

inline NewtonNorms subtract_with_norms(Index n, double* __restrict x,
                                       const double* __restrict delta) {
  std::uint64_t delta_max = 0, x_max = 0;
  subtract_with_norms(n, x, delta, delta_max, x_max);
  return {std::bit_cast<double>(delta_max), std::bit_cast<double>(x_max)};
}
}  // namespace detail

}  // namespace mor
