// SPDX-License-Identifier: GPL-3.0-or-later
// Integrators against independent references: the exact solution of the linear chain driven by
// a sine (matrix exponential of the chain augmented with the sine's exosystem), observed orders
// of convergence, the energy balance of the nonlinear chain, and a second implementation
// (generic sparse model) of the same linear dynamics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include "models/mass_spring_chain.hpp"
#include "src/integrators/integrate.hpp"
#include "src/systems/sparse_model.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

struct Final {
  Vector q, v;
  IntegrationStats stats;
};

template <class Model>
Final run(const Model& model, Scheme scheme, double dt, double T, const Signal& u,
          SparseBackend backend = SparseBackend::cholmod, bool check_stability = true) {
  typename Model::Workspace ws(model, backend);
  IntegratorOptions opt;
  opt.check_stability = check_stability;
  opt.scheme = scheme;
  opt.dt = dt;
  opt.t_end = T;
  opt.newton_rtol = 1e-13;
  Final f{Vector::Zero(model.n()), Vector::Zero(model.n()), {}};
  f.stats = integrate(model, ws, u, opt, f.q, f.v,
                      [](Index, double, const Vector&, const Vector&, const Vector&) {});
  return f;
}

int order_of(Scheme s) {
  return s == Scheme::rk4 ? 4 : 2;
}

/// Exact state of the linear chain at time T under u = a sin(w t), from rest.
Vector exact_linear_chain(const MassSpringChain& chain, double a, double w, double T) {
  const SecondOrderSystem s = chain.linear_system();
  const Index n = s.n();
  // z = [q; v; w1; w2], u = w1, w1' = w w2, w2' = -w w1, w1(0) = 0, w2(0) = a.
  Matrix A = Matrix::Zero(2 * n + 2, 2 * n + 2);
  const Matrix Minv = Matrix(s.M).inverse();
  A.block(0, n, n, n) = Matrix::Identity(n, n);
  A.block(n, 0, n, n) = -Minv * Matrix(s.K);
  A.block(n, n, n, n) = -Minv * Matrix(s.D);
  A.block(n, 2 * n, n, 1) = Minv * Matrix(s.B);
  A(2 * n, 2 * n + 1) = w;
  A(2 * n + 1, 2 * n) = -w;
  Vector z0 = Vector::Zero(2 * n + 2);
  z0(2 * n + 1) = a;
  const Matrix At = A * T;
  return (At.exp() * z0).head(2 * n);
}

class SchemeTest : public ::testing::TestWithParam<Scheme> {};

TEST_P(SchemeTest, LinearChainConvergesToExactSolutionAtItsOrder) {
  ChainParameters p;
  p.N = 6;
  p.k_n = 0.0;
  const MassSpringChain chain(p);
  const double a = 0.8, f = 0.3, T = 4.0;
  const auto u = make_sine_signal(1, a, f);
  const Vector exact = exact_linear_chain(chain, a, 2.0 * std::numbers::pi * f, T);
  std::vector<double> err;
  for (double dt : {0.08, 0.04, 0.02}) {
    const Final r = run(chain, GetParam(), dt, T, *u);
    Vector x(2 * p.N);
    x << r.q, r.v;
    err.push_back((x - exact).lpNorm<Eigen::Infinity>());
  }
  const int order = order_of(GetParam());
  for (std::size_t i = 0; i + 1 < err.size(); ++i) {
    const double observed = std::log2(err[i] / err[i + 1]);
    EXPECT_NEAR(observed, order, 0.3) << "errors " << err[i] << " -> " << err[i + 1];
  }
  EXPECT_LT(err.back(), order == 4 ? 1e-7 : 1e-3);
}

TEST_P(SchemeTest, NonlinearChainObservedOrder) {
  // Richardson: e(h) = |x_h - x_{h/2}| shrinks like h^p.
  ChainParameters p;
  p.N = 5;
  const MassSpringChain chain(p);
  const auto u = make_sine_signal(1, 1.5, 0.4);
  const double T = 3.0;
  std::vector<Vector> x;
  for (double dt : {0.04, 0.02, 0.01, 0.005}) {
    const Final r = run(chain, GetParam(), dt, T, *u);
    Vector s(2 * p.N);
    s << r.q, r.v;
    x.push_back(s);
  }
  const double e0 = (x[0] - x[1]).lpNorm<Eigen::Infinity>();
  const double e1 = (x[1] - x[2]).lpNorm<Eigen::Infinity>();
  const double e2 = (x[2] - x[3]).lpNorm<Eigen::Infinity>();
  const int order = order_of(GetParam());
  EXPECT_NEAR(std::log2(e0 / e1), order, 0.3) << e0 << " " << e1;
  EXPECT_NEAR(std::log2(e1 / e2), order, 0.3) << e1 << " " << e2;
}

TEST_P(SchemeTest, GenericSparseModelGivesTheSameTrajectory) {
  // Two implementations of the same linear dynamics: matrix-free stencil and sparse products.
  ChainParameters p;
  p.N = 30;
  p.k_n = 0.0;
  p.inputs = {3, 30};
  const MassSpringChain chain(p);
  const SparseSecondOrderModel sparse(chain.linear_system());
  const auto u = make_chirp_signal(2, 1.0, 0.0, 1.0, 5.0);
  const Final a = run(chain, GetParam(), 0.01, 5.0, *u);
  const Final b = run(sparse, GetParam(), 0.01, 5.0, *u, SparseBackend::umfpack);
  EXPECT_TRUE(matrices_near(a.q, b.q, 1e-12, Compare::relative));
  EXPECT_TRUE(matrices_near(a.v, b.v, 1e-12, Compare::relative));
}

TEST_P(SchemeTest, EnergyBalanceOfTheNonlinearChain) {
  // E(T) - E(0) = int_0^T (v'Bu - v'Dv) dt, the integral by Simpson's rule on every step.
  ChainParameters p;
  p.N = 20;
  const MassSpringChain chain(p);
  const auto u = make_chirp_signal(1, 2.0, 0.05, 0.5, 10.0);
  MassSpringChain::Workspace ws(chain);
  IntegratorOptions opt;
  opt.scheme = GetParam();
  opt.dt = 0.005;
  opt.t_end = 10.0;
  opt.newton_rtol = 1e-13;
  Vector q = Vector::Zero(p.N), v = Vector::Zero(p.N);
  std::vector<double> power, energy;
  double input_work = 0.0;
  integrate(chain, ws, *u, opt, q, v,
            [&](Index, double, const Vector& qk, const Vector& vk, const Vector& uk) {
              power.push_back(chain.input_power(vk, uk) - chain.dissipation_power(vk));
              energy.push_back(chain.kinetic_energy(vk) + chain.potential_energy(qk));
              input_work += std::abs(chain.input_power(vk, uk)) * opt.dt;
            });
  ASSERT_EQ(power.size() % 2, 1u);  // Simpson needs an even number of intervals
  double integral = power.front() + power.back();
  for (std::size_t i = 1; i + 1 < power.size(); ++i) integral += (i % 2 ? 4.0 : 2.0) * power[i];
  integral *= opt.dt / 3.0;
  const double change = energy.back() - energy.front();
  // RK4's defect is O(h^4); the midpoint rule and generalized-alpha are O(h^2).
  const double tol = GetParam() == Scheme::rk4 ? 1e-8 : 1e-4;
  EXPECT_NEAR(change, integral, tol * input_work)
      << "energy change " << change << ", net work " << integral << ", |input work| " << input_work;
  EXPECT_GT(input_work, 1e-2) << "the test must move the chain";
}

INSTANTIATE_TEST_SUITE_P(AllSchemes, SchemeTest,
                         ::testing::Values(Scheme::rk4, Scheme::implicit_midpoint,
                                           Scheme::generalized_alpha),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(Integrate, MidpointKeepsTheLinearEnergyBalanceToRounding) {
  // Implicit midpoint conserves quadratic invariants: for the linear chain the discrete balance
  // E_{k+1} - E_k = h (v_m'B u_m - v_m'D v_m), v_m = (v_k + v_{k+1})/2, holds to rounding.
  ChainParameters p;
  p.N = 50;
  p.k_n = 0.0;
  const MassSpringChain chain(p);
  const auto u = make_sine_signal(1, 1.0, 0.2);
  MassSpringChain::Workspace ws(chain);
  IntegratorOptions opt;
  opt.dt = 0.05;
  opt.t_end = 20.0;
  Vector q = Vector::Zero(p.N), v = Vector::Zero(p.N), v_prev, u_mid(1);
  double E_prev = 0.0, worst = 0.0, scale = 0.0;
  integrate(chain, ws, *u, opt, q, v,
            [&](Index k, double t, const Vector& qk, const Vector& vk, const Vector&) {
              const double E = chain.kinetic_energy(vk) + chain.potential_energy(qk);
              if (k > 0) {
                const Vector vm = 0.5 * (v_prev + vk);
                u->evaluate(t - 0.5 * opt.dt, u_mid);
                const double work =
                    opt.dt * (chain.input_power(vm, u_mid) - chain.dissipation_power(vm));
                worst = std::max(worst, std::abs(E - E_prev - work));
                scale = std::max(scale, std::abs(E));
              }
              E_prev = E;
              v_prev = vk;
            });
  EXPECT_LT(worst, 1e-13 * std::max(scale, 1.0))
      << "largest defect " << worst << ", energy " << scale;
}

TEST(Integrate, ReusedJacobianMeetsTheSameNewtonToleranceWithFewerFactorizations) {
  // A lagged iteration matrix changes only the Newton path, not the converged step: with
  // newton_rtol = 1e-13 both runs solve every step to ~1e-13, so over 400 steps the states agree
  // to 1e-10 relative; an error in the reuse logic (a stale matrix accepted
  // without convergence) would show at the 1e-3 level of the cubic term.
  ChainParameters p;
  p.N = 40;
  const MassSpringChain chain(p);
  const auto u = make_sine_signal(1, 2.0, 0.3);
  for (Scheme scheme : {Scheme::implicit_midpoint, Scheme::generalized_alpha}) {
    IntegratorOptions opt;
    opt.scheme = scheme;
    opt.dt = 0.05;
    opt.t_end = 20.0;
    opt.newton_rtol = 1e-13;
    auto simulate = [&](bool reuse, IntegrationStats& stats) {
      MassSpringChain::Workspace ws(chain);
      IntegratorOptions o = opt;
      o.reuse_jacobian = reuse;
      Vector q = Vector::Zero(p.N), v = Vector::Zero(p.N);
      stats = integrate(chain, ws, *u, o, q, v,
                        [](Index, double, const Vector&, const Vector&, const Vector&) {});
      Vector x(2 * p.N);
      x << q, v;
      return x;
    };
    IntegrationStats fresh, reused;
    const Vector a = simulate(false, fresh), b = simulate(true, reused);
    EXPECT_TRUE(matrices_near(b, a, 1e-10, Compare::relative)) << to_string(scheme);
    EXPECT_LT(reused.factorizations, fresh.factorizations / 2)
        << to_string(scheme) << ": " << reused.factorizations << " against "
        << fresh.factorizations;
  }
}

TEST(Integrate, TridiagonalAndSuiteSparsePathsOfTheChainGiveTheSameTrajectory) {
  // The chain's default iteration-matrix solver (twisted tridiagonal L D L^T) against CHOLMOD
  // through the generic sparse path, on the nonlinear chain driven hard: every Newton solve
  // agrees to rounding (1e-15), so 400 steps agree to 1e-12 (Newton tolerance 1e-13).
  ChainParameters p;
  p.N = 31;
  const MassSpringChain chain(p);
  const auto u = make_chirp_signal(1, 3.0, 0.05, 0.5, 20.0);
  for (Scheme scheme : {Scheme::implicit_midpoint, Scheme::generalized_alpha}) {
    IntegratorOptions opt;
    opt.scheme = scheme;
    opt.dt = 0.05;
    opt.t_end = 20.0;
    opt.newton_rtol = 1e-13;
    auto simulate = [&](ChainSolver solver) {
      MassSpringChain::Workspace ws(chain, SparseBackend::cholmod, solver);
      Vector q = Vector::Zero(p.N), v = Vector::Zero(p.N);
      integrate(chain, ws, *u, opt, q, v,
                [](Index, double, const Vector&, const Vector&, const Vector&) {});
      Vector x(2 * p.N);
      x << q, v;
      return x;
    };
    const Vector tridiagonal = simulate(ChainSolver::tridiagonal);
    const Vector cholmod = simulate(ChainSolver::sparse);
    EXPECT_TRUE(matrices_near(tridiagonal, cholmod, 1e-12, Compare::relative)) << to_string(scheme);
    EXPECT_GT(tridiagonal.lpNorm<Eigen::Infinity>(), 0.1) << "the test must move the chain";
  }
}

TEST(Integrate, StreamedMidpointIterationIsThePlainOne) {
  // The chain's streamed Newton iteration (rows generated while S is factorized and solved)
  // against the plain calls (factorize_iteration, force, solve_iteration): the same arithmetic,
  // so the same Newton iterations and the same states to rounding (1e-13 relative over 400
  // steps; the two paths agree bit for bit on this machine). Nonlinear and linear chains, sizes
  // across the solver's 128-row blocks, inputs at both ends and inside, a fresh and a lagged
  // iteration matrix.
  // With and without the bound on the next correction (each path takes the residual at the
  // new x in its own way: in the back sweep, or by a force evaluation).
  for (Index N : {1, 2, 3, 300, 1001}) {
    for (bool nonlinear : {true, false}) {
      for (std::pair<bool, bool> options :
           {std::pair{false, false}, {true, false}, {false, true}}) {
        const auto [reuse, bound] = options;
        ChainParameters p;
        p.N = N;
        if (!nonlinear) p.k_n = 0.0;
        p.inputs = N >= 4 ? std::vector<Index>{1, N / 2, N} : std::vector<Index>{1};
        p.outputs = {N};
        const MassSpringChain chain(p);
        const auto u = make_chirp_signal(static_cast<Index>(p.inputs.size()), 3.0, 0.05, 0.5, 20.0);
        IntegratorOptions opt;
        opt.dt = 0.05;
        opt.t_end = 20.0;
        opt.newton_rtol = 1e-13;
        opt.reuse_jacobian = reuse;
        opt.newton_bound = bound;
        auto simulate = [&](bool streamed, IntegrationStats& stats) {
          MassSpringChain::Workspace ws(chain);
          ws.use_streamed(streamed);
          EXPECT_EQ(ws.midpoint_streamed(), streamed);
          Vector q = Vector::Zero(N), v = Vector::Zero(N);
          stats = integrate(chain, ws, *u, opt, q, v,
                            [](Index, double, const Vector&, const Vector&, const Vector&) {});
          Vector x(2 * N);
          x << q, v;
          return x;
        };
        IntegrationStats plain_stats, streamed_stats;
        const Vector plain = simulate(false, plain_stats);
        const Vector streamed = simulate(true, streamed_stats);
        const std::string what =
            "N = " + std::to_string(N) + (nonlinear ? " nonlinear" : " linear") +
            (reuse ? ", reused Jacobian" : "") + (bound ? ", bounded next correction" : "");
        EXPECT_TRUE(matrices_near(streamed, plain, 1e-13, Compare::relative)) << what;
        EXPECT_EQ(streamed_stats.newton_iterations, plain_stats.newton_iterations) << what;
        EXPECT_EQ(streamed_stats.factorizations, plain_stats.factorizations) << what;
        EXPECT_GT(plain.lpNorm<Eigen::Infinity>(), 1e-3) << "the test must move the chain";
      }
    }
  }
}

TEST(Integrate, NextCorrectionBoundHoldsOnBothChainPaths) {
  // NewtonNorms::next, ||R(x)||_inf / min_i (S_ii - sum_j |S_ij|), must bound the correction
  // the next iteration computes, ||S^{-1} R(x)||_inf (Varah 1975). Checked where it is
  // hardest to hold: large elongations (the cubic springs' tangent 3 k_n e^2 dominates S's rows),
  // a first iterate far from the solution, lumped and Rayleigh damping, sizes across the
  // solver's 128-row blocks; on the streamed path (the residual taken in the back sweep) and on
  // the plain one (factorize_iteration, force, solve_iteration, the bound as integrate takes it).
  constexpr double kRounding = 1e-12;  // relative slack for the bound's own rounding
  for (Index N : {1, 2, 3, 129, 1001}) {
    for (bool rayleigh : {false, true}) {
      ChainParameters p;
      p.N = N;
      p.k_n = 4.0;
      if (rayleigh) {
        p.damping = SpringDamping::rayleigh;
        p.alpha = 0.1;
        p.beta = 0.02;
      }
      p.inputs = {1, N};
      const MassSpringChain chain(p);
      const double h = 0.2;
      Vector q(N), v(N), x(N), u(chain.n_inputs());
      for (Index i = 0; i < N; ++i) {
        q[i] = 0.6 * std::sin(2.1 * static_cast<double>(i)) + 0.1 * std::cos(0.3 * i);
        v[i] = std::cos(1.3 * static_cast<double>(i));
        x[i] = v[i] + 0.5 * std::sin(0.7 * static_cast<double>(i));  // a poor first iterate
      }
      u.setConstant(0.8);
      const std::string what = "N = " + std::to_string(N) + (rayleigh ? ", Rayleigh" : "");
      // Streamed: iterate with the bound, then once more on the same S without it.
      MassSpringChain::Workspace ws(chain);
      ASSERT_TRUE(ws.midpoint_streamed());
      Vector xs = x;
      NewtonNorms first = ws.midpoint_newton(true, true, h, q, v, u, xs);
      for (int it = 0; it < 3; ++it) {
        ASSERT_GT(ws.iteration_excess(), 0.0) << what;
        ASSERT_TRUE(std::isfinite(first.next)) << what;
        const NewtonNorms second = ws.midpoint_newton(false, true, h, q, v, u, xs);
        EXPECT_LE(second.delta, first.next * (1.0 + kRounding))
            << what << ", iteration " << it + 2 << ": the correction exceeds its bound";
        first = second;
      }
      // Plain: the same bound from an assembled residual.
      MassSpringChain::Workspace plain(chain);
      plain.use_streamed(false);
      const double a = 1.0, b = 0.5 * h, c = 0.25 * h * h;
      Vector xp = x, F(N), delta(N);
      auto residual = [&](const Vector& xi, Vector& R) {
        const Vector vs = 0.5 * (v + xi);
        chain.force(q + (0.5 * h) * vs, vs, u, R);
        R = p.m * (xi - v) - h * R;
      };
      plain.factorize_iteration(a, b, c, q + (0.5 * h) * (0.5 * (v + xp)));
      for (int it = 0; it < 3; ++it) {
        residual(xp, F);
        plain.solve_iteration(F, delta);
        xp -= delta;
        residual(xp, F);
        const double bound = F.lpNorm<Eigen::Infinity>() / plain.iteration_excess();
        plain.solve_iteration(F, delta);
        EXPECT_LE(delta.lpNorm<Eigen::Infinity>(), bound * (1.0 + kRounding))
            << what << ", plain path, iteration " << it + 1;
      }
      // Both paths assemble the same S, so they see the same excess; it is at least m here
      // (hardening springs, damping that is weakly diagonally dominant).
      EXPECT_EQ(plain.iteration_excess(), ws.iteration_excess()) << what;
      EXPECT_GE(ws.iteration_excess(), p.m * (1.0 - kRounding)) << what;
    }
  }
}

TEST(Integrate, NextCorrectionBoundSavesIterationsAndKeepsTheTolerance) {
  // The nonlinear chain at the default experiment's step: with the bound Newton stops after one
  // iteration on most steps where it took two to confirm the first, and the trajectory moves by
  // no more than the Newton tolerance allows: each accepted velocity is within rtol ||x|| of the
  // next Newton iterate, so per step the difference is at most about rtol ||v||, propagated
  // by the stable (damped) dynamics over the steps. Both paths of the chain.
  ChainParameters p;
  p.N = 2000;
  p.inputs = {1};
  p.outputs = {p.N};
  const MassSpringChain chain(p);
  const auto u = make_sine_signal(1, 2.0, 0.3);
  for (bool streamed : {true, false}) {
    auto simulate = [&](bool bound, IntegrationStats& stats) {
      MassSpringChain::Workspace ws(chain);
      ws.use_streamed(streamed);
      IntegratorOptions opt;
      opt.dt = 0.05;
      opt.t_end = 50.0;
      opt.newton_bound = bound;
      Vector q = Vector::Zero(p.N), v = Vector::Zero(p.N);
      stats = integrate(chain, ws, *u, opt, q, v,
                        [](Index, double, const Vector&, const Vector&, const Vector&) {});
      Vector z(2 * p.N);
      z << q, v;
      return z;
    };
    IntegrationStats bounded, confirmed;
    const Vector zb = simulate(true, bounded), zc = simulate(false, confirmed);
    const std::string what = streamed ? "streamed" : "plain";
    const double per_step_b = static_cast<double>(bounded.newton_iterations) / bounded.steps;
    const double per_step_c = static_cast<double>(confirmed.newton_iterations) / confirmed.steps;
    EXPECT_LT(per_step_b, 0.75 * per_step_c)
        << what << ": " << per_step_b << " against " << per_step_c << " iterations per step";
    EXPECT_GE(per_step_b, 1.0) << what;
    // 1000 steps at rtol 1e-10: 1e-7 relative allows for their sum, with no cancellation.
    EXPECT_TRUE(matrices_near(zb, zc, 1e-7, Compare::relative)) << what;
    EXPECT_GT(zc.lpNorm<Eigen::Infinity>(), 1e-2) << "the test must move the chain";
  }
}

/// The chain without force_blocks: RK4 then takes its unfused path.
struct ChainWithoutBlocks : MassSpringChain {
  using MassSpringChain::MassSpringChain;
  using Workspace = MassSpringChain::Workspace;
  template <class Q, class V, class Sink>
  void force_blocks(const Eigen::MatrixBase<Q>&, const Eigen::MatrixBase<V>&, const Vector&,
                    Sink&&) const = delete;
};

TEST(Integrate, Rk4FusedLastStageIsTheSameArithmeticAndKeepsTheCallersStorage) {
  static_assert(BlockForceModel<MassSpringChain> && !BlockForceModel<ChainWithoutBlocks>);
  ChainParameters p;
  p.N = 700;  // several blocks of the chain's force, the last one partial
  const MassSpringChain fused_chain(p);
  const ChainWithoutBlocks plain_chain(p);
  const auto u = make_sine_signal(1, 2.0, 0.3);
  for (double t_end : {0.15, 0.2}) {  // an odd and an even number of steps
    auto simulate = [&](const auto& chain) {
      MassSpringChain::Workspace ws(chain);
      IntegratorOptions opt;
      opt.scheme = Scheme::rk4;
      opt.dt = 0.05;
      opt.t_end = t_end;
      Vector q(p.N), v(p.N);
      for (Index i = 0; i < p.N; ++i) {
        q[i] = std::sin(0.4 * static_cast<double>(i));
        v[i] = std::cos(0.3 * static_cast<double>(i));
      }
      const double *q_storage = q.data(), *v_storage = v.data();
      integrate(chain, ws, *u, opt, q, v,
                [](Index, double, const Vector&, const Vector&, const Vector&) {});
      EXPECT_EQ(q.data(), q_storage) << "t_end " << t_end;
      EXPECT_EQ(v.data(), v_storage) << "t_end " << t_end;
      Vector x(2 * p.N);
      x << q, v;
      return x;
    };
    EXPECT_TRUE(matrices_near(simulate(fused_chain), simulate(plain_chain), 0.0))
        << "t_end " << t_end;
  }
}

#if defined(__x86_64__) || defined(__SSE__)
/// The chain, recording whether a subnormal operand survives arithmetic inside force().
struct ProbedChain : MassSpringChain {
  using MassSpringChain::MassSpringChain;
  using Workspace = MassSpringChain::Workspace;
  template <class Q, class V>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
             Vector& F) const {
    flushed_in_force = subnormals_flushed();
    MassSpringChain::force(q, v, u, F);
  }
  static bool subnormals_flushed() {
    volatile double tiny = std::numeric_limits<double>::denorm_min() * 1e10;  // ~5e-314
    const double product = tiny * 1.0;
    return product == 0.0;
  }
  mutable bool flushed_in_force = false;
};

TEST(Integrate, SubnormalsAreFlushedWhileSteppingOnlyAndChangeNothingVisible) {
  // The default experiment's situation: the chain at rest, driven at its last mass. The implicit
  // solve spreads the response over the whole chain with tails that decay geometrically, down
  // through the subnormal range. Flushing them (the default) must leave the trajectory as it is
  // to rounding, and the caller and its observer must keep their own floating-point mode.
  ASSERT_FALSE(ProbedChain::subnormals_flushed()) << "the test process must start without FTZ";
  ChainParameters p;
  p.N = 400;
  const ProbedChain chain(p);
  const auto u = make_sine_signal(1, 1.0, 0.05);
  // The probe sits in force(), which the chain's streamed Newton iteration does not call: the
  // plain iteration for the probe, the streamed one for the states.
  auto simulate = [&](bool flush, bool& flushed_in_observer, bool& saw_subnormal,
                      bool streamed = false) {
    MassSpringChain::Workspace ws(chain);
    ws.use_streamed(streamed);
    chain.flushed_in_force = !flush;
    IntegratorOptions opt;
    opt.dt = 0.05;
    opt.t_end = 10.0;
    opt.flush_subnormals = flush;
    Vector q = Vector::Zero(p.N), v = Vector::Zero(p.N);
    flushed_in_observer = false;
    saw_subnormal = false;
    integrate(chain, ws, *u, opt, q, v,
              [&](Index, double, const Vector& qk, const Vector&, const Vector&) {
                flushed_in_observer = flushed_in_observer || ProbedChain::subnormals_flushed();
                for (double x : qk)
                  saw_subnormal = saw_subnormal || std::fpclassify(x) == FP_SUBNORMAL;
              });
    if (!streamed) {
      EXPECT_EQ(chain.flushed_in_force, flush);
    }
    Vector x(2 * p.N);
    x << q, v;
    return x;
  };
  bool observer_on = true, observer_off = true, subnormal_on = true, subnormal_off = false;
  const Vector flushed = simulate(true, observer_on, subnormal_on);
  const Vector gradual = simulate(false, observer_off, subnormal_off);
  bool observer_streamed = true, subnormal_streamed = true, subnormal_streamed_off = false;
  const Vector streamed = simulate(true, observer_streamed, subnormal_streamed, true);
  const Vector streamed_gradual = simulate(false, observer_streamed, subnormal_streamed_off, true);
  EXPECT_FALSE(subnormal_streamed) << "the streamed iteration left subnormals with FTZ on";
  EXPECT_TRUE(subnormal_streamed_off);
  EXPECT_FALSE(observer_streamed);
  EXPECT_TRUE(matrices_near(streamed, streamed_gradual, 1e-15, Compare::relative));
  EXPECT_FALSE(observer_on) << "the observer ran with subnormals flushed";
  EXPECT_FALSE(observer_off);
  EXPECT_FALSE(ProbedChain::subnormals_flushed()) << "the caller's mode was not restored";
  EXPECT_TRUE(subnormal_off) << "the reference run must produce subnormals, or it tests nothing";
  EXPECT_FALSE(subnormal_on);
  // A flushed value differs by < 2.3e-308 from the gradual one; nothing amplifies that to the
  // size of the state's rounding.
  EXPECT_TRUE(matrices_near(flushed, gradual, 1e-15, Compare::relative));
}
#endif

TEST(Integrate, DivergenceIsReportedWithTheTime) {
  ChainParameters p;
  p.N = 10;
  p.k_l = 1e4;  // |lambda| up to 200: rk4 with dt = 0.1 is far outside its stability region
  const MassSpringChain chain(p);
  const auto u = make_step_signal(1, 1.0);
  // Refused up front by the linearisation's limit (about 2.96 / 198 = 0.015) ...
  EXPECT_THROW(run(chain, Scheme::rk4, 0.1, 50.0, *u), InvalidArgument);
  // ... and found while stepping when that check is off.
  try {
    run(chain, Scheme::rk4, 0.1, 50.0, *u, SparseBackend::cholmod, false);
    FAIL() << "no error";
  } catch (const NumericalError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("diverged"), std::string::npos) << msg;
    EXPECT_NE(msg.find("t = "), std::string::npos) << msg;
    EXPECT_NE(msg.find("dt = 0.1"), std::string::npos) << msg;
  }
}

// rk4's stability limit from the model's spectrum (issue 29): the undamped linear chain with
// k = m = 1 has omega_max = 2 sin(N pi / (2 (N + 1))) exactly; 40 Lanczos steps on N = 20 masses
// are exact to rounding (a Krylov space of the whole state), and the limit is 2 sqrt(2) / omega.
TEST(Integrate, Rk4StabilityLimitFromTheSpectrum) {
  ChainParameters p;
  p.N = 20;
  p.k_n = 0.0;
  p.d = 0.0;
  const MassSpringChain chain(p);
  MassSpringChain::Workspace ws(chain, SparseBackend::cholmod);
  const double exact = 2.0 * std::sin(20.0 * std::numbers::pi / 42.0);
  const double estimate = estimate_max_frequency(chain, ws);
  EXPECT_NEAR(estimate, exact, 1e-10 * exact) << "estimate " << estimate << ", exact " << exact;
  const double limit = kRk4ImaginaryLimit / exact;  // 1.4182
  const auto u = make_sine_signal(1, 1.0, 0.05);
  try {
    run(chain, Scheme::rk4, 1.5, 150.0, *u);
    FAIL() << "rk4 with dt = 1.5 > " << limit << " ran";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("stability limit is dt <= 1.418"), std::string::npos)
        << e.what();
  }
  // Just below the limit: runs, and stays bounded (the chain is undamped and driven gently).
  const Final ok = run(chain, Scheme::rk4, 1.4, 140.0, *u);
  EXPECT_LT(ok.q.cwiseAbs().maxCoeff(), 1e3);
  // A larger system (N = 2000): the 40-step estimate approaches omega_max from below, so the
  // limit it gives is never below the true one.
  p.N = 2000;
  const MassSpringChain big(p);
  MassSpringChain::Workspace big_ws(big, SparseBackend::cholmod);
  const double big_exact = 2.0 * std::sin(2000.0 * std::numbers::pi / 4002.0);
  const double big_estimate = estimate_max_frequency(big, big_ws);
  EXPECT_LE(big_estimate, big_exact * (1 + 1e-12));
  EXPECT_GT(big_estimate, 0.99 * big_exact) << "40 Lanczos steps got only " << big_estimate;
}

// A state that grows without bound is a divergence before it overflows: M q'' = q (K = -I) grows
// like e^t, past 1e100 at t = 230 of 300, and stayed finite (e^300 = 2e130) before issue 29.
TEST(Integrate, ExplodingStateIsADivergence) {
  SecondOrderSystem s;
  const Index n = 3;
  s.M = SparseMatrix(n, n);
  s.M.setIdentity();
  s.K = -s.M;
  s.D = SparseMatrix(n, n);
  s.B = SparseMatrix(n, 1);
  s.B.insert(0, 0) = 1.0;
  s.Cp = SparseMatrix(1, n);
  s.Cp.insert(0, 0) = 1.0;
  s.Cv = SparseMatrix(1, n);
  const SparseSecondOrderModel model(s);
  const auto u = make_step_signal(1, 1.0);
  for (Scheme scheme : {Scheme::implicit_midpoint, Scheme::rk4}) {
    try {
      run(model, scheme, 0.1, 300.0, *u, SparseBackend::klu);
      ADD_FAILURE() << to_string(scheme) << ": no error";
    } catch (const NumericalError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("the state exploded"), std::string::npos) << msg;
      EXPECT_NE(msg.find("t = 2"), std::string::npos) << msg;  // at t in [200, 300)
    }
  }
}

TEST(Integrate, BadOptionsNameTheValue) {
  ChainParameters p;
  p.N = 3;
  const MassSpringChain chain(p);
  const auto u = make_zero_signal(1);
  auto message = [&](double dt, double T) {
    try {
      run(chain, Scheme::implicit_midpoint, dt, T, *u);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(0.0, 1.0).find("dt must be a finite number > 0, got 0"), std::string::npos);
  EXPECT_NE(message(-0.1, 1.0).find("got -0.1"), std::string::npos);
  EXPECT_NE(message(std::nan(""), 1.0).find("got nan"), std::string::npos);
  EXPECT_NE(message(0.1, -1.0).find("got -1"), std::string::npos);
  EXPECT_NE(message(0.3, 1.0).find("not a whole number of steps"), std::string::npos);
}

TEST(Integrate, ObserverStrideAndLastStep) {
  ChainParameters p;
  p.N = 4;
  const MassSpringChain chain(p);
  const auto u = make_zero_signal(1);
  MassSpringChain::Workspace ws(chain);
  IntegratorOptions opt;
  opt.dt = 0.1;
  opt.t_end = 1.0;
  opt.observe_stride = 3;
  Vector q = Vector::Ones(p.N), v = Vector::Zero(p.N);
  std::vector<Index> steps;
  integrate(
      chain, ws, *u, opt, q, v,
      [&](Index k, double, const Vector&, const Vector&, const Vector&) { steps.push_back(k); });
  EXPECT_EQ(steps, (std::vector<Index>{0, 3, 6, 9, 10}));
}

}  // namespace
}  // namespace mor
