// SPDX-License-Identifier: GPL-3.0-or-later
// Fixed-step time integration of  M q'' + D q' + K q + g(q) = B u(t)  for any SecondOrderModel
// (full sparse, matrix-free or reduced dense: one code path).
//
// Schemes (all globally second order or better; observed orders are tested):
//  - rk4: classical Runge-Kutta on x = [q; v], order 4, explicit (stable for dt |lambda| < 2.78).
//  - implicit_midpoint: order 2, A-stable, symplectic; conserves quadratic energy exactly, so
//    the discrete energy balance of a linear model holds to rounding. Newton on v_{n+1} with
//    S = M + h/2 D + h^2/4 (K + dg/dq).
//  - generalized_alpha: Chung & Hulbert (1993), order 2, numerical damping of high frequencies
//    set by rho_infinity in [0, 1] (1: none, 0: asymptotic annihilation); for stiff mechanical
//    models. Newton on the acceleration with
//    S = (1 - am) M + (1 - af) gamma h D + (1 - af) beta h^2 (K + dg/dq).
// Newton uses the model's workspace: the iteration matrix is refactorized once per step
// (simplified Newton), again within a step if the contraction is slow, never for linear models
// with a fixed step (then one solve per step).
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/errors.hpp"
#include "src/core/progress.hpp"
#include "src/integrators/second_order_model.hpp"
#include "src/signals/signal.hpp"

namespace mor {

enum class Scheme { rk4, implicit_midpoint, generalized_alpha };

/// "rk4", "implicit_midpoint", "generalized_alpha"; @throws InvalidArgument naming the value.
Scheme parse_scheme(std::string_view name);
std::string_view to_string(Scheme scheme);

struct IntegratorOptions {
  Scheme scheme = Scheme::implicit_midpoint;
  double t0 = 0.0;
  double t_end = 1.0;         ///< t_end - t0 must be a whole number of steps dt (to 1e-9 relative)
  double dt = 1e-2;           ///< > 0
  double rho_infinity = 0.9;  ///< generalized-alpha spectral radius at infinity, in [0, 1]
  /// Newton stops when ||delta||_inf <= rtol ||x||_inf + atol (x: the unknown, in velocity units).
  double newton_rtol = 1e-10;
  double newton_atol = 1e-14;
  int newton_max_iterations = 30;
  /// Nonlinear models: keep the factorized iteration matrix from step to step (simplified
  /// Newton with a lagged Jacobian) and refactorize only when Newton needed more than
  /// reuse_max_iterations iterations or contracted slowly (size > 1/2 of the previous), and
  /// always after a step that refactorized. The converged solution still meets newton_rtol /
  /// newton_atol; it changes only by that tolerance. Off by default.
  bool reuse_jacobian = false;
  int reuse_max_iterations = 4;
  /// The observer is called at t0 and after every observe_stride-th step (and the last step).
  Index observe_stride = 1;
  /// If set and true, the run throws Interrupted at the next step (set from a signal handler).
  const std::atomic<bool>* stop_requested = nullptr;
  /// The state is checked for NaN/Inf every this many steps and at the last step.
  Index finite_check_stride = 32;
};

/// @throws InvalidArgument naming the option and value for dt <= 0, non-finite times,
/// t_end <= t0, a horizon that is not a whole number of steps, rho outside [0, 1], ...
void validate(const IntegratorOptions& opt);
/// Number of steps of the horizon (validated).
Index step_count(const IntegratorOptions& opt);

struct IntegrationStats {
  Index steps = 0;
  Index force_evaluations = 0;
  Index newton_iterations = 0;
  Index factorizations = 0;  ///< iteration matrices requested (linear models skip repeats)
  double seconds = 0.0;      ///< wall-clock time of the stepping loop, observers included
};

namespace detail {
[[noreturn]] void throw_diverged(double t, Index step, Index total, Scheme scheme, double dt);
[[noreturn]] void throw_newton_failed(double t, Index step, int iterations, double delta,
                                      double tolerance, double dt);

inline bool all_finite(const Vector& x) {
  return x.allFinite();
}

/// The RK4 update of q and v in one pass: q += h v + cq (F1 + F2 + F3),
/// v += cv (F1 + 2 (F2 + F3) + F4). Restrict-qualified parameters (GCC ignores restrict on
/// local pointers) let the compiler vectorize it.
inline void rk4_update(Index n, double h, double cq, double cv, double* __restrict q,
                       double* __restrict v, const double* __restrict f1,
                       const double* __restrict f2, const double* __restrict f3,
                       const double* __restrict f4) {
  for (Index i = 0; i < n; ++i) {
    q[i] += h * v[i] + cq * (f1[i] + f2[i] + f3[i]);
    v[i] += cv * (f1[i] + 2.0 * (f2[i] + f3[i]) + f4[i]);
  }
}
}  // namespace detail

/// Integrates from (q, v) at opt.t0 to opt.t_end; on return q, v hold the final state.
/// observe(Index step, double t, const Vector& q, const Vector& v, const Vector& u) is called at
/// step 0 and then every opt.observe_stride steps and at the last step.
/// Sizes: q, v: model.n(); input.size() == model.n_inputs().
/// @throws InvalidArgument for bad options or sizes; NumericalError naming the time if the state
/// becomes non-finite or Newton does not converge (a smaller dt is then the usual remedy).
template <SecondOrderModel Model, class Observer>
IntegrationStats integrate(const Model& model, typename Model::Workspace& ws, const Signal& input,
                           const IntegratorOptions& opt, Vector& q, Vector& v, Observer&& observe,
                           ProgressReporter* progress = nullptr) {
  validate(opt);
  const Index n = model.n();
  require(q.size() == n && v.size() == n, "integrate: initial state sizes q ", q.size(), ", v ",
          v.size(), " differ from the model size n = ", n);
  require(input.size() == model.n_inputs(), "integrate: the input signal has ", input.size(),
          " channel(s), the model ", model.n_inputs(), " input(s)");
  const Index total = step_count(opt);
  const double h = (opt.t_end - opt.t0) / static_cast<double>(total);
  const auto start = std::chrono::steady_clock::now();
  IntegrationStats stats;
  Vector u(model.n_inputs());
  auto time_at = [&](Index k) { return opt.t0 + static_cast<double>(k) * h; };

  input.evaluate(opt.t0, u);
  if (!detail::all_finite(q) || !detail::all_finite(v))
    detail::throw_diverged(opt.t0, 0, total, opt.scheme, h);
  observe(Index{0}, opt.t0, q, v, u);

  auto after_step = [&](Index k) {
    if (opt.stop_requested && opt.stop_requested->load(std::memory_order_relaxed))
      throw Interrupted(
          detail::concat("interrupted at t = ", time_at(k), " (step ", k, " of ", total, ")"));
    const bool observed = k % opt.observe_stride == 0 || k == total;
    // A full pass over the state: every finite_check_stride steps, not at every observation,
    // which would add a memory pass to each cheap explicit step.
    if (k % opt.finite_check_stride == 0 || k == total) {
      if (!detail::all_finite(q) || !detail::all_finite(v))
        detail::throw_diverged(time_at(k), k, total, opt.scheme, h);
    }
    if (observed) {
      input.evaluate(time_at(k), u);
      observe(k, time_at(k), q, v, u);
    }
    if (progress) progress->update(k, total);
  };

  Vector F1(n), F2(n), F3(n), F4(n), R(n), delta(n), work(n);
  Vector u_a(model.n_inputs()), u_b(model.n_inputs());

  if (opt.scheme == Scheme::rk4) {
    const std::optional<double> m = model.uniform_mass();
    const double s = m ? 1.0 / *m : 1.0;  // F holds M^{-1} F when the mass is not uniform
    auto accel = [&](Vector& F) {
      if (!m) {
        ws.solve_mass(F, work);
        F.swap(work);
      }
    };
    for (Index k = 1; k <= total; ++k) {
      const double t = time_at(k - 1);
      input.evaluate(t, u);
      input.evaluate(t + 0.5 * h, u_a);
      input.evaluate(t + h, u_b);
      model.force(q, v, u, F1);
      accel(F1);
      model.force(q + (0.5 * h) * v, v + (0.5 * h * s) * F1, u_a, F2);
      accel(F2);
      model.force(q + (0.5 * h) * v + (0.25 * h * h * s) * F1, v + (0.5 * h * s) * F2, u_a, F3);
      accel(F3);
      model.force(q + h * v + (0.5 * h * h * s) * F2, v + (h * s) * F3, u_b, F4);
      accel(F4);
      detail::rk4_update(n, h, h * h * s / 6.0, h * s / 6.0, q.data(), v.data(), F1.data(),
                         F2.data(), F3.data(), F4.data());
      stats.force_evaluations += 4;
      after_step(k);
    }
  } else {
    const bool midpoint = opt.scheme == Scheme::implicit_midpoint;
    // Generalized-alpha parameters from rho_infinity (Chung & Hulbert 1993, eq. 25).
    const double rho = opt.rho_infinity;
    const double am = (2.0 * rho - 1.0) / (rho + 1.0), af = rho / (rho + 1.0);
    const double gamma = 0.5 + af - am, beta = 0.25 * (1.0 + af - am) * (1.0 + af - am);
    // Unknown x: v_{n+1} (midpoint) or a_{n+1} (generalized-alpha). Iteration matrix
    // coefficients S = a M + b D + c (K + J).
    const double a = midpoint ? 1.0 : 1.0 - am;
    const double b = midpoint ? 0.5 * h : (1.0 - af) * gamma * h;
    const double c = midpoint ? 0.25 * h * h : (1.0 - af) * beta * h * h;
    // Velocity change per unit change of the unknown: for the tolerance in velocity units.
    const double x_to_v = midpoint ? 1.0 : gamma * h;

    Vector x(n), x_prev(n), acc(n), qn(n), vn(n), qs(n), vs(n);
    if (midpoint) {
      x = v;
      x_prev = v;
    } else {  // consistent initial acceleration a0 = M^{-1} F(q0, v0, u(t0))
      model.force(q, v, u, F1);
      ws.solve_mass(F1, acc);
      ++stats.force_evaluations;
      x = acc;
    }
    const bool reuse = opt.reuse_jacobian && !model.is_linear();
    bool stale = true;  // the iteration matrix must be (re)factorized before use
    for (Index k = 1; k <= total; ++k) {
      const double t = time_at(k - 1);
      qn = q;
      vn = v;
      // Predictor: linear extrapolation of v (midpoint), previous acceleration (alpha).
      if (midpoint) {
        x = 2.0 * vn - x_prev;
        x_prev = vn;
      }
      const double t_eval = midpoint ? t + 0.5 * h : t + (1.0 - af) * h;
      input.evaluate(t_eval, u_a);
      // Stage state (q_s, v_s) at which the residual is evaluated, from the unknown x.
      auto stage = [&]() {
        if (midpoint) {
          vs = 0.5 * (vn + x);
          qs = qn + (0.5 * h) * vs;
        } else {
          // q_{n+1-af} = q_n + (1 - af) (q_{n+1} - q_n), likewise v.
          qs = qn + (1.0 - af) * (h * vn + (h * h) * ((0.5 - beta) * acc + beta * x));
          vs = vn + (1.0 - af) * h * ((1.0 - gamma) * acc + gamma * x);
        }
      };
      stage();
      bool refactorized_after_first = false;
      if (!reuse || stale) {
        ws.factorize_iteration(a, b, c, qs);
        ++stats.factorizations;
        stale = false;
      }
      double previous = 0.0;
      int it = 0;
      for (;;) {
        ++it;
        ++stats.newton_iterations;
        model.force(qs, vs, u_a, F1);
        ++stats.force_evaluations;
        // Residual R = M r - h F (midpoint, r = x - v_n) or M ((1-am) x + am a_n) - F (alpha).
        if (midpoint) {
          work = x - vn;
          model.mass(work, R);
          R -= h * F1;
        } else {
          work = (1.0 - am) * x + am * acc;
          model.mass(work, R);
          R -= F1;
        }
        ws.solve_iteration(R, delta);
        x -= delta;
        stage();
        if (model.is_linear()) break;  // the residual is linear in x: one solve is exact
        const double size = x_to_v * delta.template lpNorm<Eigen::Infinity>();
        const double tol =
            opt.newton_rtol * x_to_v * x.template lpNorm<Eigen::Infinity>() + opt.newton_atol;
        if (!std::isfinite(size)) detail::throw_diverged(time_at(k), k, total, opt.scheme, h);
        if (size <= tol) break;
        if (it >= opt.newton_max_iterations)
          detail::throw_newton_failed(time_at(k), k, it, size, tol, h);
        // Slow contraction: refresh the Jacobian at the current iterate (once per step).
        if (it >= 2 && size > 0.5 * previous && !refactorized_after_first) {
          ws.factorize_iteration(a, b, c, qs);
          ++stats.factorizations;
          refactorized_after_first = true;
        }
        previous = size;
      }
      // A lagged Jacobian is kept while Newton converges within reuse_max_iterations.
      if (refactorized_after_first || it > opt.reuse_max_iterations) stale = true;
      if (midpoint) {
        q = qn + (0.5 * h) * (vn + x);
        v = x;
      } else {
        q = qn + h * vn + (h * h) * ((0.5 - beta) * acc + beta * x);
        v = vn + h * ((1.0 - gamma) * acc + gamma * x);
        acc = x;
      }
      after_step(k);
    }
  }
  stats.steps = total;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) progress->finish();
  return stats;
}

}  // namespace mor
