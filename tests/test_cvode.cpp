// SPDX-License-Identifier: GPL-3.0-or-later
// The CVODE wrapper (src/integrators/cvode.hpp) against analytic solutions: a harmonic
// oscillator (Adams and BDF, with and without a Jacobian), a stiff scalar problem that explicit
// schemes could not take in few steps, projection onto an invariant circle, the output grid,
// restarts at the jumps of a piecewise load,
// and every failure path ending in an exception that names the problem.
#include "src/integrators/cvode.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

constexpr double kOmega = 2.0;  // rad/s
/// Global error of an rtol = atol = 1e-11 run over 10 periods: CVODE keeps local errors at the
/// tolerance, the global error grows with the number of steps (measured 6.6e-9 with Adams in
/// 994 steps, 3.1e-8 with BDF in 3683 steps).
constexpr double kOscillatorTol = 1e-7;

OdeProblem oscillator(bool with_jacobian) {
  OdeProblem p;
  p.rhs = [](double, const Vector& x, Vector& xdot) {
    xdot.resize(2);
    xdot << x[1], -kOmega * kOmega * x[0];
  };
  if (with_jacobian)
    p.jacobian = [](double, const Vector&, Matrix& J) { J << 0.0, 1.0, -kOmega * kOmega, 0.0; };
  return p;
}

TEST(Cvode, HarmonicOscillatorMatchesTheExactSolution) {
  for (const CvodeMethod method : {CvodeMethod::adams, CvodeMethod::bdf}) {
    for (const bool with_jacobian : {false, true}) {
      CvodeOptions o;
      o.method = method;
      o.t_end = 10.0 * 2.0 * std::numbers::pi / kOmega;
      o.output_dt = 0.1;
      o.rtol = o.atol = 1e-11;
      Vector x(2);
      x << 1.0, 0.0;
      double worst = 0.0;
      Index calls = 0;
      const CvodeStats s =
          integrate_cvode(oscillator(with_jacobian), x, o, [&](double t, const Vector& xt) {
            ++calls;
            worst = std::max({worst, std::abs(xt[0] - std::cos(kOmega * t)),
                              std::abs(xt[1] + kOmega * std::sin(kOmega * t))});
          });
      EXPECT_LT(worst, kOscillatorTol) << to_string(method) << " jacobian " << with_jacobian;
      EXPECT_EQ(calls, 1 + static_cast<Index>(std::ceil(o.t_end / o.output_dt - 1e-9)));
      EXPECT_GT(s.steps, 0);
      EXPECT_GT(s.rhs_evaluations, s.steps);
      if (with_jacobian) {
        EXPECT_GT(s.jacobian_evaluations, 0);
      }
    }
  }
}

TEST(Cvode, StiffProblemTakesFewBdfSteps) {
  // x' = -lambda (x - cos t) - sin t, x(0) = 1: x = cos t, with a transient of rate 1e6 that an
  // explicit scheme would have to resolve (about 1e7 steps over 10 s); BDF needs a few hundred.
  constexpr double kLambda = 1e6;
  OdeProblem p;
  p.rhs = [](double t, const Vector& x, Vector& xdot) {
    xdot.resize(1);
    xdot[0] = -kLambda * (x[0] - std::cos(t)) - std::sin(t);
  };
  p.jacobian = [](double, const Vector&, Matrix& J) { J(0, 0) = -kLambda; };
  CvodeOptions o;
  o.t_end = 10.0;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  Vector x = Vector::Constant(1, 1.0);
  const CvodeStats s = integrate_cvode(p, x, o);
  EXPECT_NEAR(x[0], std::cos(10.0), 1e-9);
  EXPECT_LT(s.steps, 10000);
}

/// f() throws E whose message contains `needle`.
template <class E, class F>
void expect_throw_naming(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Cvode, ProjectionKeepsTheInvariantToRounding) {
  // x' = (-x_2, x_1) keeps |x| = 1; projecting after every step holds it to rounding, while the
  // trajectory still follows (cos t, sin t).
  OdeProblem p;
  p.rhs = [](double, const Vector& x, Vector& xdot) {
    xdot.resize(2);
    xdot << -x[1], x[0];
  };
  p.projection = [](double, Vector& x) { x /= x.norm(); };
  CvodeOptions o;
  o.t_end = 50.0;
  o.output_dt = 0.5;
  o.rtol = o.atol = 1e-8;
  Vector x(2);
  x << 1.0, 0.0;
  double drift = 0.0, error = 0.0;
  const CvodeStats s = integrate_cvode(p, x, o, [&](double t, const Vector& xt) {
    drift = std::max(drift, std::abs(xt.norm() - 1.0));
    error =
        std::max(error, (xt - Vector((Vector(2) << std::cos(t), std::sin(t)).finished())).norm());
  });
  EXPECT_LT(drift, 1e-13);
  EXPECT_LT(error, 1e-5);  // rtol 1e-8 over 8 periods
  EXPECT_GE(s.projections, s.steps / 2);
  o.method = CvodeMethod::adams;  // CVODE projects with BDF only
  expect_throw_naming<InvalidArgument>([&] { integrate_cvode(p, x, o); }, "needs the BDF method");
}

TEST(Cvode, EveryOutputIsAtItsGridTimeAndTheLastAtTEnd) {
  // The observer must see t0 + k output_dt for k = 0, 1, ... and then t_end, each once, and
  // the state there. With a projection CVODE steps onto each output time (a stop time per
  // output), so the stop time must move on to t_end for the last one too. The circle
  // x' = (-x_2, x_1), x(0) = (1, 0) has x(t) = (cos t, sin t); a grid that divides the span
  // (0.01 into 10) and one that does not (0.3 into 10) are tried.
  OdeProblem p;
  p.rhs = [](double, const Vector& x, Vector& xdot) {
    xdot.resize(2);
    xdot << -x[1], x[0];
  };
  for (const bool with_projection : {true, false}) {
    for (const double output_dt : {0.01, 0.3}) {
      p.projection = nullptr;
      if (with_projection) p.projection = [](double, Vector& x) { x /= x.norm(); };
      CvodeOptions o;
      o.t_end = 10.0;
      o.output_dt = output_dt;
      o.rtol = o.atol = 1e-10;
      Vector x(2);
      x << 1.0, 0.0;
      std::vector<double> times;
      Vector last;
      integrate_cvode(p, x, o, [&](double t, const Vector& xt) {
        times.push_back(t);
        last = xt;
      });
      const std::string where = (with_projection ? "projection" : "no projection") +
                                std::string(", output_dt ") + std::to_string(output_dt);
      const auto outputs = static_cast<std::size_t>(std::ceil(o.t_end / output_dt - 1e-9));
      ASSERT_EQ(times.size(), outputs + 1) << where;
      for (std::size_t k = 0; k < outputs; ++k)
        EXPECT_EQ(times[k], static_cast<double>(k) * output_dt) << where << ", output " << k;
      EXPECT_EQ(times.back(), o.t_end) << where;
      const Vector exact = (Vector(2) << std::cos(o.t_end), std::sin(o.t_end)).finished();
      // rtol 1e-10 over 1.6 periods: the global error stays near 1e-9.
      EXPECT_TRUE(mor::testing::matrices_near(last, exact, 1e-7)) << where;
      EXPECT_TRUE(mor::testing::matrices_near(x, exact, 1e-7)) << where;
    }
  }
}

/// x' = v, v' = u(t) with u = 1 on [0, 0.5), -1 on [0.5, 1.55), 0.5 from 1.55: x is a
/// quadratic on each stretch, so a restarted run can be exact to rounding, and a run across the
/// jumps errs by what its error test lets through there.
constexpr double kJumps[] = {0.5, 1.55};
double jump_load(double t) {
  return t < kJumps[0] ? 1.0 : (t < kJumps[1] ? -1.0 : 0.5);
}
Vector jump_exact(double t) {
  double x = 0.0, v = 0.0, t0 = 0.0;
  for (const double tb : {kJumps[0], kJumps[1], 1e300}) {
    const double u = jump_load(t0), h = std::min(t, tb) - t0;
    x += v * h + 0.5 * u * h * h;
    v += u * h;
    if (t <= tb) break;
    t0 = tb;
  }
  return (Vector(2) << x, v).finished();
}

TEST(Cvode, RestartsAtDiscontinuitiesKeepTheGridAndTheAccuracy) {
  // 0.5 is an output time (5 x 0.1), 1.55 lies between two; -1 and 2.5 are outside (0, 2) and
  // ignored. Each stretch is a quadratic: restarted, the error stays near rounding (rtol 1e-12;
  // measured 8e-13 Adams, 2.4e-12 BDF) with a quarter to half the steps: stepping across the
  // jumps, CVODE's error test has to find each by failing (measured 31 against 123 steps and 2
  // against 62 error test failures with Adams, 81 / 147 and 2 / 51 with BDF).
  OdeProblem p;
  p.rhs = [](double t, const Vector& z, Vector& zdot) {
    zdot.resize(2);
    zdot << z[1], jump_load(t);
  };
  for (const CvodeMethod method : {CvodeMethod::adams, CvodeMethod::bdf}) {
    CvodeOptions o;
    o.method = method;
    o.t_end = 2.0;
    o.output_dt = 0.1;
    o.rtol = o.atol = 1e-12;
    double worst = 0.0;
    std::vector<double> times;
    const auto observe = [&](double t, const Vector& z) {
      times.push_back(t);
      worst = std::max(worst, (z - jump_exact(t)).lpNorm<Eigen::Infinity>());
    };
    Vector z = Vector::Zero(2);
    const CvodeStats across = integrate_cvode(p, z, o, observe);
    const double across_worst = worst;
    EXPECT_EQ(across.restarts, 0);

    o.discontinuities = {-1.0, kJumps[0], kJumps[1], 2.5};
    worst = 0.0;
    times.clear();
    z.setZero();
    const CvodeStats restarted = integrate_cvode(p, z, o, observe);
    char where[160];
    std::snprintf(where, sizeof where, "%s: error %.3g restarted, %.3g across the jumps",
                  std::string(to_string(method)).c_str(), worst, across_worst);
    EXPECT_EQ(restarted.restarts, 2) << where;
    ASSERT_EQ(times.size(), 21u) << where;
    for (std::size_t k = 0; k + 1 < times.size(); ++k)
      EXPECT_EQ(times[k], static_cast<double>(k) * o.output_dt) << where << ", output " << k;
    EXPECT_EQ(times.back(), o.t_end) << where;
    EXPECT_LT(worst, 1e-10) << where;
    EXPECT_LT(2 * restarted.error_test_failures, across.error_test_failures) << where;
    EXPECT_LT(restarted.steps, across.steps) << where;
    EXPECT_GT(restarted.steps, 0) << where;
  }
}

TEST(Cvode, FailuresAreNamed) {
  Vector x(2);
  x << 1.0, 0.0;
  CvodeOptions o;
  o.t_end = 1.0;
  // Bad options and input.
  o.rtol = 0.0;
  expect_throw_naming<InvalidArgument>([&] { integrate_cvode(oscillator(false), x, o); },
                                       "rtol must be > 0");
  o.rtol = 1e-8;
  o.t_end = -1.0;
  expect_throw_naming<InvalidArgument>([&] { integrate_cvode(oscillator(false), x, o); },
                                       "t_end = -1");
  o.t_end = 1.0;
  o.discontinuities = {0.6, 0.3};
  expect_throw_naming<InvalidArgument>([&] { integrate_cvode(oscillator(false), x, o); },
                                       "ascending, got 0.6 before 0.3");
  o.discontinuities = {0.3, std::nan("")};
  expect_throw_naming<InvalidArgument>([&] { integrate_cvode(oscillator(false), x, o); },
                                       "discontinuity 2 is not finite");
  o.discontinuities.clear();
  expect_throw_naming<InvalidArgument>([&] { integrate_cvode(OdeProblem{}, x, o); },
                                       "right-hand side is empty");
  // The caller's exception comes through unchanged.
  OdeProblem throwing = oscillator(false);
  throwing.rhs = [](double t, const Vector&, Vector&) {
    if (t > 0.5) throw std::runtime_error("model broke at t > 0.5");
  };
  expect_throw_naming<std::runtime_error>([&] { integrate_cvode(throwing, x, o); }, "model broke");
  // Too little work allowed, and a solution that blows up in finite time (x' = x^2).
  o.max_steps = 3;
  expect_throw_naming<NumericalError>([&] { integrate_cvode(oscillator(false), x, o); },
                                      "CV_TOO_MUCH_WORK");
  o.max_steps = 100000;
  OdeProblem blowup;
  blowup.rhs = [](double, const Vector& y, Vector& ydot) { ydot = y.array().square(); };
  Vector y = Vector::Constant(1, 1.0);  // y = 1 / (1 - t): infinite at t = 1
  o.t_end = 2.0;
  expect_throw_naming<NumericalError>([&] { integrate_cvode(blowup, y, o); }, "failed at t = ");
}

}  // namespace
}  // namespace mor
