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
// with a fixed step (then one solve per step). A workspace that folds S^{-1} into its model's
// products (FoldedMidpointModel: the dense reduced models) computes implicit midpoint's Newton
// correction itself; the iteration, its tolerance and the Jacobian updates stay the same.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  /// Stop Newton, without a further solve, once the workspace's bound on the next correction
  /// (NewtonNorms::next) meets the tolerance. Off: the next correction is computed and the
  /// iteration stops on its size, as for a workspace without a bound (tests and benchmarks
  /// compare the two).
  bool newton_bound = true;
  /// The observer is called at t0 and after every observe_stride-th step (and the last step).
  Index observe_stride = 1;
  /// If set and true, the run throws Interrupted at the next step (set from a signal handler).
  const std::atomic<bool>* stop_requested = nullptr;
  /// The state is checked for NaN/Inf, and for |entries| above kExplodedState, every this many
  /// steps and at the last step.
  Index finite_check_stride = 32;
  /// rk4 on a linear second-order model: refuse (InvalidArgument) a dt above the stability
  /// limit that the model's largest frequency gives, before the first step (see
  /// require_rk4_stable). Off only for tests of the divergence found while stepping.
  bool check_stability = true;
  /// Step with subnormal numbers (|x| < 2.2e-308) flushed to zero, as operands and results
  /// (x86 FTZ and DAZ; nothing elsewhere). A wave that has not yet crossed the model leaves
  /// exponentially small tails ahead of it, and on x86 each operation on a subnormal costs about
  /// a hundred cycles: in the default experiment (the chain at rest, driven at one end) they
  /// doubled the step's cost. Results change by less than 1e-307 per operation. The caller's
  /// floating-point mode is restored on return and around each observer call.
  bool flush_subnormals = true;
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

/// A state entry beyond this magnitude means the run has exploded (an unstable scheme or model):
/// it is stopped there as a divergence, before the values overflow to Inf. No model of this
/// project in any units comes near it.
inline constexpr double kExplodedState = 1e100;

/// RK4's stability region reaches 2 sqrt(2) = 2.828 along the imaginary axis (an undamped
/// oscillator's eigenvalues +-i omega) and at most 2.960 anywhere in the left half-plane
/// (2.785 on the negative real axis).
inline constexpr double kRk4ImaginaryLimit = 2.8284271247461903;
inline constexpr double kRk4LargestLimit = 2.960;

/// The largest frequency omega_max = sqrt(lambda_max(M^{-1} K)) of a linear model (of a
/// nonlinear model's linearisation about rest, K = -dF/dq(0)), from
/// `iterations` steps of Lanczos on K x = lambda M x in the M inner product (K x = -force(x, 0,
/// 0); one force evaluation, one mass solve and one mass product a step). A Ritz value never
/// exceeds lambda_max, so the estimate converges from below and the limit dt it gives is never
/// below the true one. 0 for a model without stiffness (K = 0, e.g. a first-order model
/// embedded as M = E, D = -A).
template <SecondOrderModel Model>
double estimate_max_frequency(const Model& model, typename Model::Workspace& ws,
                              int iterations = 40);

/// Throws InvalidArgument naming dt, the limit and omega_max when rk4 with step dt is unstable
/// on the linear model (or on a nonlinear model's linearisation about rest, which rk4 meets as
/// soon as rounding excites the top mode near rest): dt omega_max > 2 sqrt(2) for an undamped model
/// (D = 0: the eigenvalues are +-i omega, the bound is exact), > 2.960 for a damped one (modal
/// damping gives |lambda| >= omega_max for the top mode, and 2.960 is the farthest the region
/// reaches; a dt between 2.785 / omega_max and that may still diverge, which the state check while
/// stepping catches).
template <SecondOrderModel Model>
void require_rk4_stable(const Model& model, typename Model::Workspace& ws, double dt);

namespace detail {
/// input_max: the largest |u| about the failing step (its start and end), which tells an overflow
/// of the doubles' range by the input from a step size or stability problem.
[[noreturn]] void throw_diverged(double t, Index step, Index total, Scheme scheme, double dt,
                                 double input_max = 0.0);
[[noreturn]] void throw_exploded(double t, Index step, Index total, Scheme scheme, double dt,
                                 double magnitude);
[[noreturn]] void throw_rk4_unstable(double dt, double limit, double omega_max, bool damped,
                                     int iterations);
[[noreturn]] void throw_newton_failed(double t, Index step, int iterations, double delta,
                                      double tolerance, double dt, double input_max = 0.0);

inline bool all_finite(const Vector& x) {
  return x.allFinite();
}

/// The largest eigenvalue of the symmetric tridiagonal matrix (diagonal, sub) (LAPACK via
/// Eigen's tridiagonal solver).
double largest_tridiagonal_eigenvalue(const Vector& diagonal, const Vector& sub);

/// The largest |entry| of x (NaN if x has a NaN: the caller checks all_finite first).
inline double max_magnitude(const Vector& x) {
  return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff();
}

/// Sets flush-to-zero and denormals-are-zero for its lifetime if enable is true (a no-op where
/// the processor has no such mode), restoring the previous mode on destruction; as_caller(f)
/// runs f in the previous mode.
class SubnormalsFlushed {
 public:
  explicit SubnormalsFlushed(bool enable);
  ~SubnormalsFlushed();
  SubnormalsFlushed(const SubnormalsFlushed&) = delete;
  SubnormalsFlushed& operator=(const SubnormalsFlushed&) = delete;

  template <class F>
  void as_caller(F&& f) {
    if (!active_) {
      f();
      return;
    }
    restore();
    struct Reflush {
      SubnormalsFlushed& guard;
      ~Reflush() { guard.flush(); }
    } reflush{*this};
    f();
  }

 private:
  void flush();
  void restore();
  bool active_;
  unsigned saved_ = 0;
};

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

/// The RK4 update of len rows into other storage: q_out = q + h v + cq (F1 + F2 + F3) over
/// f1_to_q (each F1 entry read before its place is written) and
/// v_out = v + cv (F1 + 2 (F2 + F3) + F4); the same arithmetic as rk4_update.
inline void rk4_update_into(Index len, double h, double cq, double cv, const double* __restrict q,
                            const double* __restrict v, double* __restrict f1_to_q,
                            const double* __restrict f2, const double* __restrict f3,
                            const double* __restrict f4, double* __restrict v_out) {
  for (Index i = 0; i < len; ++i) {
    const double f1 = f1_to_q[i];
    f1_to_q[i] = q[i] + (h * v[i] + cq * (f1 + f2[i] + f3[i]));
    v_out[i] = v[i] + cv * (f1 + 2.0 * (f2[i] + f3[i]) + f4[i]);
  }
}

using Norms = NewtonNorms;

/// Accepts an implicit midpoint step in one pass: q += h/2 (v + x), v = x (the new velocity),
/// and x = 2 x - v_n, the linear extrapolation that predicts the next step's velocity.
inline void midpoint_accept(Index n, double half_h, double* __restrict q, double* __restrict v,
                            double* __restrict x) {
  for (Index i = 0; i < n; ++i) {
    const double vn = v[i], vn1 = x[i];
    q[i] = q[i] + half_h * (vn + vn1);
    v[i] = vn1;
    x[i] = 2.0 * vn1 - vn;
  }
}

/// Accepts a generalized-alpha step in one pass (Newmark update with a_{n+1} = x):
/// q += h v + h^2 ((1/2 - beta) a_n + beta x), v += h ((1 - gamma) a_n + gamma x), a_n = x;
/// x, the previous acceleration, is the next step's predictor.
inline void alpha_accept(Index n, double h, double beta, double gamma, double* __restrict q,
                         double* __restrict v, double* __restrict acc, const double* __restrict x) {
  const double h2 = h * h;
  for (Index i = 0; i < n; ++i) {
    const double an = acc[i], an1 = x[i];
    q[i] = q[i] + h * v[i] + h2 * ((0.5 - beta) * an + beta * an1);
    v[i] = v[i] + h * ((1.0 - gamma) * an + gamma * an1);
    acc[i] = an1;
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
  // The largest |u| over the ends of step k, for the messages of a failed step (rarely called).
  auto input_max = [&](Index k) {
    Vector w(model.n_inputs());
    double m = 0.0;
    for (const Index j : {k > 0 ? k - 1 : k, k}) {
      input.evaluate(time_at(j), w);
      if (w.size() > 0) m = std::max(m, w.cwiseAbs().maxCoeff());
    }
    return m;
  };

  input.evaluate(opt.t0, u);
  if (!detail::all_finite(q) || !detail::all_finite(v))
    detail::throw_diverged(opt.t0, 0, total, opt.scheme, h);
  if (opt.scheme == Scheme::rk4 && opt.check_stability) require_rk4_stable(model, ws, h);
  observe(Index{0}, opt.t0, q, v, u);
  detail::SubnormalsFlushed flushed(opt.flush_subnormals);

  // The next observed and the next checked step: counters, where k % stride would cost two
  // integer divisions in every step (k runs 1, 2, ..., total).
  Index next_observation = opt.observe_stride, next_check = opt.finite_check_stride;
  auto after_step = [&](Index k) {
    if (opt.stop_requested && opt.stop_requested->load(std::memory_order_relaxed))
      throw Interrupted(
          detail::concat("interrupted at t = ", time_at(k), " (step ", k, " of ", total, ")"));
    const bool observed = k == next_observation || k == total;
    if (k == next_observation) next_observation += opt.observe_stride;
    // A full pass over the state: every finite_check_stride steps, not at every observation,
    // which would add a memory pass to each cheap explicit step.
    if (k == next_check || k == total) {
      if (k == next_check) next_check += opt.finite_check_stride;
      if (!detail::all_finite(q) || !detail::all_finite(v))
        detail::throw_diverged(time_at(k), k, total, opt.scheme, h, input_max(k));
      const double magnitude = std::max(detail::max_magnitude(q), detail::max_magnitude(v));
      if (magnitude > kExplodedState)
        detail::throw_exploded(time_at(k), k, total, opt.scheme, h, magnitude);
    }
    if (observed) {
      input.evaluate(time_at(k), u);
      flushed.as_caller([&] { observe(k, time_at(k), q, v, u); });
    }
    if (progress) progress->update(k, total);
  };

  Vector u_a(model.n_inputs()), u_b(model.n_inputs());

  if (opt.scheme == Scheme::rk4) {
    Vector F1(n), F2(n), F3(n), F4(n), work(n);
    const std::optional<double> m = model.uniform_mass();
    const double s = m ? 1.0 / *m : 1.0;  // F holds M^{-1} F when the mass is not uniform
    const bool fused = BlockForceModel<Model> && m.has_value();
    const double *q_storage = q.data(), *v_storage = v.data();
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
      const double cq = h * h * s / 6.0, cv = h * s / 6.0;
      if (fused) {
        // The last stage and the update in one pass: each block of F4 is consumed while in L1,
        // the new q goes over F1 (read in the same place) and the new v into F4's storage;
        // neither is read by the stage. Then q, v and those two trade buffers.
        if constexpr (BlockForceModel<Model>) {
          model.force_blocks(q + h * v + (0.5 * h * h * s) * F2, v + (h * s) * F3, u_b,
                             [&](Index i0, Index len, const double* f4) {
                               detail::rk4_update_into(len, h, cq, cv, q.data() + i0, v.data() + i0,
                                                       F1.data() + i0, F2.data() + i0,
                                                       F3.data() + i0, f4, F4.data() + i0);
                             });
        }
        q.swap(F1);
        v.swap(F4);
      } else {
        model.force(q + h * v + (0.5 * h * h * s) * F2, v + (h * s) * F3, u_b, F4);
        accel(F4);
        detail::rk4_update(n, h, cq, cv, q.data(), v.data(), F1.data(), F2.data(), F3.data(),
                           F4.data());
      }
      stats.force_evaluations += 4;
      after_step(k);
    }
    // Fused steps left q and v in scratch storage every other step: back to the caller's own.
    if (q.data() != q_storage) {
      F1 = q;
      q.swap(F1);
    }
    if (v.data() != v_storage) {
      F4 = v;
      v.swap(F4);
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
    const std::optional<double> m = model.uniform_mass();

    // q and v hold (q_n, v_n) until a step is accepted; x holds the predictor when a step
    // starts: linear extrapolation of v (midpoint), the previous acceleration (alpha).
    Vector x(n), acc, qs(n), F(n), R, delta(n), work;
    if (!m) {
      R.resize(n);
      work.resize(n);
    }
    if (midpoint) {
      x = v;
    } else {  // consistent initial acceleration a0 = M^{-1} F(q0, v0, u(t0))
      acc.resize(n);
      model.force(q, v, u, F);
      ws.solve_mass(F, acc);
      ++stats.force_evaluations;
      x = acc;
    }
    const bool linear = model.is_linear();
    const bool reuse = opt.reuse_jacobian && !linear;
    bool stale = true;  // the iteration matrix must be (re)factorized before use

    // One run of steps. factorize(k) (re)factorizes the iteration matrix at the stage state
    // (or, for a streamed workspace, has the next iteration do so in its first pass);
    // prepare() runs after each factorization and at the start of each step (folded models
    // precompute there what does not depend on x); iterate(k) performs one Newton iteration,
    // x -= S^{-1} R(x), and returns the norms of the correction and of the new x; accept()
    // updates q, v (and acc) from x and leaves the next step's predictor in x, in one pass.
    auto run = [&](double stage_time, auto&& factorize, auto&& prepare, auto&& iterate,
                   auto&& accept) {
      for (Index k = 1; k <= total; ++k) {
        input.evaluate(time_at(k - 1) + stage_time, u_a);
        bool refactorized_after_first = false;
        if (!reuse || stale) {
          factorize(k);
          stale = false;
        }
        prepare();
        double previous = 0.0;
        int it = 0;
        for (;;) {
          ++it;
          ++stats.newton_iterations;
          const detail::Norms norms = iterate(k);
          ++stats.force_evaluations;
          if (linear) break;  // the residual is linear in x: one solve is exact
          const double size = x_to_v * norms.delta;
          const double tol = opt.newton_rtol * x_to_v * norms.x + opt.newton_atol;
          if (!std::isfinite(size))
            detail::throw_diverged(time_at(k), k, total, opt.scheme, h, input_max(k));
          if (size <= tol) break;
          // The next correction is bounded below the tolerance: x is as converged as the next
          // iterate would prove (NewtonNorms::next; +inf where the workspace has no bound).
          if (opt.newton_bound && x_to_v * norms.next <= tol) break;
          if (it >= opt.newton_max_iterations)
            detail::throw_newton_failed(time_at(k), k, it, size, tol, h, input_max(k));
          // Slow contraction: refresh the Jacobian at the current iterate (once per step).
          if (it >= 2 && size > 0.5 * previous && !refactorized_after_first) {
            factorize(k);
            prepare();
            refactorized_after_first = true;
          }
          previous = size;
        }
        // A lagged Jacobian is kept while Newton converges within reuse_max_iterations.
        if (refactorized_after_first || it > opt.reuse_max_iterations) stale = true;
        accept();
        after_step(k);
      }
    };
    // A failed factorization names the step, and a non-finite state is reported as the
    // divergence it is.
    auto factorization_failed = [&](const NumericalError& e, const Vector& state, Index k) {
      if (!detail::all_finite(state))
        detail::throw_diverged(time_at(k), k, total, opt.scheme, h, input_max(k));
      throw NumericalError(detail::concat(e.what(), " (iteration matrix of step ", k,
                                          " at t = ", time_at(k - 1), ")"));
    };
    // The iteration matrix at the stage state q_stage (a lazy expression of q, v, acc and x,
    // materialized once per factorization).
    auto factorize_at = [&](const auto& q_stage) {
      return [&, stage = &q_stage](Index k) {
        qs = *stage;
        try {
          ws.factorize_iteration(a, b, c, qs);
        } catch (const NumericalError& e) {
          factorization_failed(e, qs, k);
        }
        ++stats.factorizations;
      };
    };
    // The plain Newton iteration: delta = correct(), then x -= delta with the norms.
    auto subtracting = [&](auto correct) {
      return [&, correct](Index) mutable {
        correct(delta);
        return detail::subtract_with_norms(n, x.data(), delta.data());
      };
    };
    // The same with the residual apart: residual() evaluates R(x) into `residual_vector`,
    // then delta = S^{-1} R(x) and x -= delta. Where the workspace bounds ||S^{-1}||_inf
    // (BoundedIterationModel), R is evaluated again at the new x for the bound on the next
    // correction, and the step's next iteration starts from that residual.
    Vector& residual_vector = m ? F : R;
    bool residual_current = false;  // residual_vector holds R(x) of the current x
    auto solving = [&](auto residual) {
      return [&, residual](Index) mutable {
        if (residual_current)
          --stats.force_evaluations;  // the loop counts one per iteration: this one is reused
        else
          residual();
        residual_current = false;
        ws.solve_iteration(residual_vector, delta);
        detail::Norms norms = detail::subtract_with_norms(n, x.data(), delta.data());
        if constexpr (BoundedIterationModel<Model>) {
          const double excess = ws.iteration_excess();
          if (!linear && opt.newton_bound && excess > 0.0) {
            residual();
            ++stats.force_evaluations;
            residual_current = true;
            norms.next = detail::max_abs(n, residual_vector.data()) / excess;
          }
        }
        return norms;
      };
    };

    auto no_preparation = [] {};
    if (midpoint) {
      // Residual M (x - v_n) - h F(q_n + h/2 v_s, v_s), v_s = (v_n + x) / 2.
      const auto v_stage = 0.5 * (v + x);
      const auto q_stage = q + (0.5 * h) * v_stage;
      auto accept = [&] { detail::midpoint_accept(n, 0.5 * h, q.data(), v.data(), x.data()); };
      bool folded = false, streamed = false;
      if constexpr (FoldedMidpointModel<Model>) folded = ws.midpoint_folded();
      if constexpr (StreamedMidpointModel<Model>) streamed = !folded && ws.midpoint_streamed();
      if (folded) {
        // The same correction from the workspace's fused products (S^{-1} folded in).
        if constexpr (FoldedMidpointModel<Model>)
          run(
              0.5 * h, factorize_at(q_stage), [&] { ws.midpoint_prepare(h, q, v, u_a); },
              subtracting([&](Vector& d) { ws.midpoint_correction(x, d); }), accept);
      } else if (streamed) {
        // The same iteration in two passes: the factorization is done by the next iteration's
        // first pass, with the residual and the forward sweep.
        if constexpr (StreamedMidpointModel<Model>) {
          bool pending = false;
          run(
              0.5 * h,
              [&](Index) {
                pending = true;
                ++stats.factorizations;
              },
              no_preparation,
              [&](Index k) {
                if (!pending) return ws.midpoint_newton(false, opt.newton_bound, h, q, v, u_a, x);
                pending = false;
                try {
                  return ws.midpoint_newton(true, opt.newton_bound, h, q, v, u_a, x);
                } catch (const NumericalError& e) {
                  qs = q_stage;
                  factorization_failed(e, qs, k);
                  throw;  // not reached: factorization_failed throws
                }
              },
              accept);
        }
      } else {
        run(0.5 * h, factorize_at(q_stage), no_preparation, solving([&] {
              model.force(q_stage, v_stage, u_a, F);
              if (m) {
                F = *m * (x - v) - h * F;
                return;
              }
              work = x - v;
              model.mass(work, R);
              R -= h * F;
            }),
            [&] {
              residual_current = false;
              accept();
            });
      }
    } else {
      // Residual M ((1 - am) x + am a_n) - F(q_{n+1-af}, v_{n+1-af}), where
      // q_{n+1-af} = q_n + (1 - af) (q_{n+1} - q_n), likewise v.
      const auto q_stage = q + (1.0 - af) * (h * v + (h * h) * ((0.5 - beta) * acc + beta * x));
      const auto v_stage = v + (1.0 - af) * h * ((1.0 - gamma) * acc + gamma * x);
      run((1.0 - af) * h, factorize_at(q_stage), no_preparation, solving([&] {
            model.force(q_stage, v_stage, u_a, F);
            if (m) {
              F = *m * ((1.0 - am) * x + am * acc) - F;
              return;
            }
            work = (1.0 - am) * x + am * acc;
            model.mass(work, R);
            R -= F;
          }),
          [&] {
            residual_current = false;
            detail::alpha_accept(n, h, beta, gamma, q.data(), v.data(), acc.data(), x.data());
          });
    }
  }
  stats.steps = total;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) progress->finish();
  return stats;
}

template <SecondOrderModel Model>
double estimate_max_frequency(const Model& model, typename Model::Workspace& ws, int iterations) {
  const Index n = model.n();
  if (n == 0) return 0.0;
  const int k_max = static_cast<int>(std::min<Index>(n, iterations));
  const Vector zero = Vector::Zero(n), u = Vector::Zero(model.n_inputs());
  // A fixed +-1 start (a hash of the index): reproducible, and not orthogonal to any mode in
  // practice.
  Vector x(n), previous = Vector::Zero(n), F(n), w(n), Mw(n);
  for (Index i = 0; i < n; ++i)
    x(i) = ((static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) >> 63) ? 1.0 : -1.0;
  model.mass(x, Mw);
  double beta = std::sqrt(std::max(0.0, x.dot(Mw)));
  if (!(beta > 0.0) || !std::isfinite(beta)) return 0.0;
  x /= beta;
  std::vector<double> alpha, off;
  beta = 0.0;
  // A nonlinear model's force is evaluated at a displacement scaled to 1e-6 at most and
  // scaled back: its linearisation about rest, K = -dF/dq(0), to about 1e-6 relative (a
  // quadratic law) or 1e-12 (a cubic one).
  const bool linear = model.is_linear();
  Vector scaled;
  for (int k = 0; k < k_max; ++k) {
    if (linear) {
      model.force(x, zero, u, F);  // F = -K x
      F = -F;
    } else {
      const double s = 1e-6 / std::max(x.cwiseAbs().maxCoeff(), 1e-300);
      scaled = s * x;
      model.force(scaled, zero, u, F);
      F *= -1.0 / s;
    }
    const double a = x.dot(F);  // x^T K x, x M-normalized
    if (!std::isfinite(a)) return 0.0;
    ws.solve_mass(F, w);  // M^{-1} K x
    w -= a * x + beta * previous;
    alpha.push_back(a);
    model.mass(w, Mw);
    const double b = std::sqrt(std::max(0.0, w.dot(Mw)));
    if (!(b > 1e-12 * std::abs(a)) || k + 1 == k_max) break;
    off.push_back(b);
    previous.swap(x);
    x = w / b;
    beta = b;
  }
  const Index m = static_cast<Index>(alpha.size());
  Vector diagonal = Eigen::Map<const Vector>(alpha.data(), m);
  Vector sub = Vector::Zero(std::max<Index>(m - 1, 0));
  for (Index i = 0; i + 1 < m; ++i) sub(i) = off[static_cast<std::size_t>(i)];
  const double lambda = detail::largest_tridiagonal_eigenvalue(diagonal, sub);
  return lambda > 0.0 ? std::sqrt(lambda) : 0.0;
}

template <SecondOrderModel Model>
void require_rk4_stable(const Model& model, typename Model::Workspace& ws, double dt) {
  constexpr int kIterations = 40;
  const double omega = estimate_max_frequency(model, ws, kIterations);
  if (!(omega > 0.0)) return;
  // Damped when a velocity moves the force: F(0, v, 0) = -D v.
  const Index n = model.n();
  Vector v = Vector::Ones(n), F(n);
  model.force(Vector::Zero(n), v, Vector::Zero(model.n_inputs()), F);
  const bool damped = F.cwiseAbs().maxCoeff() > 0.0;
  const double limit = (damped ? kRk4LargestLimit : kRk4ImaginaryLimit) / omega;
  if (dt > limit) detail::throw_rk4_unstable(dt, limit, omega, damped, kIterations);
}

}  // namespace mor
