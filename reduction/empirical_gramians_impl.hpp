// SPDX-License-Identifier: GPL-3.0-or-later
// The algorithms of reduction/empirical_gramians.hpp as templates over the simulated model: any
// second-order integrator model (src/integrators/second_order_model.hpp) with a Workspace built
// from it, output(q, v, y), n_inputs(), n_outputs() and linear_system().B. empirical_gramians.cpp
// instantiates them for NonlinearNetwork, the interface every kind offers; a kind whose own
// model integrates faster than its network form instantiates them for that model in its own
// file (the chain's stencil and tridiagonal solves, experiments/runner/models/chain.cpp: its
// Gramian runs took a fifth of the time of its network form's at N = 1000).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "reduction/empirical_gramians.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"
#include "src/signals/signal.hpp"

namespace mor {
namespace empirical_detail {

inline void check_amplitudes(const std::vector<double>& amplitudes, const char* what) {
  require(!amplitudes.empty(), what, ": the list of amplitudes is empty");
  for (std::size_t k = 0; k < amplitudes.size(); ++k)
    require(std::isfinite(amplitudes[k]) && amplitudes[k] > 0.0, what, ": amplitude c_", k + 1,
            " = ", amplitudes[k], " must be finite and > 0");
}

/// The snapshots integrate() reports (step 0, every observe_stride-th step, the last step) and
/// their trapezoidal weights w_i, so that int f dt ~ sum_i w_i f(t_i).
struct SnapshotGrid {
  Index count = 0;
  Vector weights;
};

inline SnapshotGrid snapshot_grid(const IntegratorOptions& opt) {
  const Index total = step_count(opt);  // validates opt
  const Index stride = opt.observe_stride;
  const double h = (opt.t_end - opt.t0) / static_cast<double>(total);
  std::vector<Index> steps;
  for (Index k = 0; k <= total; k += stride) steps.push_back(k);
  if (steps.back() != total) steps.push_back(total);
  SnapshotGrid g;
  g.count = static_cast<Index>(steps.size());
  g.weights = Vector::Zero(g.count);
  for (Index i = 0; i + 1 < g.count; ++i) {
    const double half = 0.5 * h * static_cast<double>(steps[i + 1] - steps[i]);
    g.weights[i] += half;
    g.weights[i + 1] += half;
  }
  return g;
}

/// Runs the free response from (q, v) and hands the i-th snapshot to record(i, q, v). A
/// NumericalError of the integrator is rethrown with `context()` (which run failed) in front.
template <class Model, class Record, class Context>
void free_response(const Model& model, typename Model::Workspace& ws, const Signal& zero,
                   const IntegratorOptions& opt, Vector q, Vector v, Index snapshots,
                   Record&& record, Context&& context) {
  // Also for callers that hand no flag down (the integrator polls opt's every step).
  throw_if_stop_requested("empirical Gramian training", opt.stop_requested);
  Index i = 0;
  try {
    integrate(model, ws, zero, opt, q, v,
              [&](Index, double, const Vector& qi, const Vector& vi, const Vector&) {
                if (i < snapshots) record(i, qi, vi);
                ++i;
              });
  } catch (const NumericalError& e) {
    throw NumericalError(detail::concat(context(), ": ", e.what()));
  }
  // The grid mirrors integrate()'s observation rule; a mismatch is a bug here, not bad input.
  if (i != snapshots)
    throw NumericalError(
        detail::concat(context(), ": ", i, " snapshots were reported, ", snapshots, " expected"));
}

/// Upper triangular R (n_d x n_d) with W_O = R^T R for the directions (see the header): the thin QR
/// of the weighted outputs of all 2 K n_d runs, updated once per amplitude and sign so that only
/// one block of n_t p x n_d outputs is held at a time.
template <class Model>
Matrix observability_factor(const Model& model, const Matrix& directions,
                            const EmpiricalGramianOptions& options) {
  constexpr const char* what = "empirical observability Gramian";
  check_amplitudes(options.amplitudes, what);
  const Index N = model.n(), n_d = directions.cols(), p = model.n_outputs();
  require(directions.rows() == 2 * N, what, ": the directions have ", directions.rows(),
          " rows, the model 2N = ", 2 * N, " states");
  require(n_d >= 1, what, ": no directions were given (0 columns)");
  require(directions.allFinite(), what, ": the directions have a non-finite entry");
  const SnapshotGrid grid = snapshot_grid(options.integrator);
  const auto K = static_cast<double>(options.amplitudes.size());

  typename Model::Workspace ws(model);
  const auto zero = make_zero_signal(model.n_inputs());
  Matrix R = Matrix::Zero(n_d, n_d);
  Matrix stacked(n_d + grid.count * p, n_d);
  Vector y(p);
  for (double c : options.amplitudes) {
    for (double sign : {1.0, -1.0}) {
      auto G = stacked.bottomRows(grid.count * p);
      const double scale = 1.0 / (c * std::sqrt(2.0 * K));
      for (Index i = 0; i < n_d; ++i) {
        const Vector x0 = (sign * c) * directions.col(i);
        free_response(
            model, ws, *zero, options.integrator, x0.head(N), x0.tail(N), grid.count,
            [&](Index t, const Vector& q, const Vector& v) {
              model.output(q, v, y);
              G.col(i).segment(t * p, p) = (std::sqrt(grid.weights[t]) * scale) * y;
            },
            [&] {
              return detail::concat(what, ": the free response from x0 = ", sign * c,
                                    " * direction ", i + 1, " (amplitude c = ", c, ") failed");
            });
      }
      stacked.topRows(n_d) = R;
      R = lapack::qr_r_factor(stacked);
    }
  }
  return R;
}

template <class Model>
Matrix controllability_factor_of(const Model& model, const EmpiricalGramianOptions& options) {
  constexpr const char* what = "empirical controllability Gramian";
  check_amplitudes(options.amplitudes, what);
  const SnapshotGrid grid = snapshot_grid(options.integrator);
  const Index N = model.n(), m = model.n_inputs();
  const auto K = static_cast<Index>(options.amplitudes.size());
  const Matrix B = Matrix(model.linear_system().B);  // N x m, unit columns at the input masses

  typename Model::Workspace ws(model);
  const auto zero = make_zero_signal(m);
  Matrix Zc(2 * N, 2 * K * m * grid.count);
  Index column = 0;
  Vector v0(N);
  for (Index j = 0; j < m; ++j) {
    for (double c : options.amplitudes) {
      for (double sign : {1.0, -1.0}) {
        // The impulse c e_j delta(t) sets v(0+) = M^{-1} B e_j c at q(0) = 0.
        ws.solve_mass((sign * c) * B.col(j), v0);
        const double scale = 1.0 / (c * std::sqrt(2.0 * static_cast<double>(K)));
        free_response(
            model, ws, *zero, options.integrator, Vector::Zero(N), v0, grid.count,
            [&](Index t, const Vector& q, const Vector& v) {
              const double s = std::sqrt(grid.weights[t]) * scale;
              Zc.col(column + t).head(N) = s * q;
              Zc.col(column + t).tail(N) = s * v;
            },
            [&] {
              return detail::concat(what, ": the free response after an impulse of ", sign * c,
                                    " on input ", j + 1, " (amplitude c = ", c, ") failed");
            });
        column += grid.count;
      }
    }
  }
  return Zc;
}

template <class Model>
Matrix observability_of(const Model& model, const Matrix& directions,
                        const EmpiricalGramianOptions& options) {
  const Matrix R = observability_factor(model, directions, options);
  return R.transpose() * R;
}

}  // namespace empirical_detail

/// Position balancing by empirical Gramians of any simulated Model (see the file comment and
/// empirical_balancing in reduction/empirical_gramians.hpp, whose contract this is).
template <class Model>
EmpiricalBalancingResult empirical_balancing_of(const Model& model,
                                                const EmpiricalBalancingOptions& options) {
  constexpr const char* what = "empirical balancing";
  // Everything that can be checked before the simulations is checked first: they may take long.
  empirical_detail::check_amplitudes(options.gramians.amplitudes, what);
  validate(options.gramians.integrator);
  const PodOptions& sub = options.subspace;
  require(sub.order.has_value() != sub.energy.has_value(), what,
          ": set exactly one of subspace.order and subspace.energy (",
          sub.order ? "both" : "neither", " are set)");
  const OrderSelection& sel = options.selection;
  require((sel.order > 0) != (sel.tolerance > 0.0), what,
          ": set exactly one of order (r >= 1) and tolerance (> 0); got order = ", sel.order,
          ", tolerance = ", sel.tolerance);
  require(sel.order >= 0, what, ": order r = ", sel.order, " must be >= 1");
  const Index N = model.n();
  require(sel.order <= N, what, ": order r = ", sel.order, " exceeds the number of masses N = ", N);
  require(options.min_columns >= 0, what, ": min_columns = ", options.min_columns, " must be >= 0");
  if (sub.order && sel.order > 0)
    require(sel.order <= *sub.order, what, ": order r = ", sel.order,
            " exceeds the subspace dimension d = ", *sub.order);

  EmpiricalBalancingResult res;
  const auto K = static_cast<Index>(options.gramians.amplitudes.size());

  auto t0 = Clock::now();
  Matrix Zc = empirical_detail::controllability_factor_of(model, options.gramians);
  res.simulations_controllability = 2 * K * model.n_inputs();
  res.seconds.controllability = seconds_since(t0);

  t0 = Clock::now();
  Matrix Lc;  // d x s
  {
    const Matrix Zq = Zc.topRows(N);
    PodResult pr = pod(Zq, sub);
    res.Phi = std::move(pr.V);
    res.subspace_singular_values = std::move(pr.singular_values);
    Lc = res.Phi.transpose() * Zq;
  }
  if (options.keep_controllability_factor)
    res.Zc = std::move(Zc);
  else
    Zc.resize(0, 0);
  const Index d = res.Phi.cols();
  res.seconds.pod = seconds_since(t0);

  t0 = Clock::now();
  const Matrix R =
      empirical_detail::observability_factor(model, position_directions(res.Phi), options.gramians);
  res.Wo = R.transpose() * R;  // L_o = R^T
  res.simulations_observability = 2 * K * d;
  res.seconds.observability = seconds_since(t0);

  t0 = Clock::now();
  const lapack::Svd svd = lapack::thin_svd(R * Lc);
  res.sigma = svd.s;
  const Index available = res.sigma.size();
  Index r = sel.order;
  if (sel.tolerance > 0.0) r = order_for_tolerance(res.sigma, sel.tolerance);
  require(r <= available, what, ": order r = ", r, " exceeds the ", available,
          " empirical singular values (subspace dimension d = ", d, ")");
  Index rank = 0;
  while (rank < available && res.sigma[rank] > kEmpiricalRankTolerance * res.sigma[0]) ++rank;
  require(r <= rank, what, ": order r = ", r, " exceeds the numerical rank ", rank,
          " of the empirical Gramian product (sigma_", r, " = ", res.sigma[r - 1],
          " <= ", kEmpiricalRankTolerance, " sigma_1 = ", kEmpiricalRankTolerance * res.sigma[0],
          ")");
  res.r = r;
  res.discarded_sum = 2.0 * res.sigma.tail(available - r).sum();
  const Index cols = std::max(r, options.min_columns);
  require(cols <= available, what, ": min_columns = ", cols, " exceeds the ", available,
          " empirical singular values (subspace dimension d = ", d, ")");
  require(cols <= rank, what, ": min_columns = ", cols, " exceeds the numerical rank ", rank,
          " of the empirical Gramian product (sigma_", cols, " = ", res.sigma[cols - 1],
          " <= ", kEmpiricalRankTolerance, " sigma_1)");
  const Vector inv_sqrt = res.sigma.head(cols).cwiseSqrt().cwiseInverse();
  res.V = res.Phi * ((Lc * svd.V.leftCols(cols)) * inv_sqrt.asDiagonal());
  res.W = res.Phi * ((R.transpose() * svd.U.leftCols(cols)) * inv_sqrt.asDiagonal());
  res.seconds.balancing = seconds_since(t0);
  return res;
}

}  // namespace mor
