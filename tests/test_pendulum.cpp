// SPDX-License-Identifier: GPL-3.0-or-later
// MBS benchmark A01 (models/pendulum.hpp): the minimal-coordinate model integrated by CVODE
// against the exact large-amplitude solution over the benchmark's 10 s (the benchmark's
// high-precision bar is 1e-3 on P1), energy conservation, the exact period, and the
// linearisation (eigenvalue sqrt(g / L); linear and nonlinear responses to a small torque differ
// by the cubic term of sin, so the relative difference falls like the amplitude squared).
#include "models/pendulum.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <numbers>
#include <vector>

#include "src/core/errors.hpp"
#include "src/integrators/cvode.hpp"

namespace mor {
namespace {

constexpr double kHorizon = 10.0;                // s, the benchmark's
constexpr double kPhi0 = -std::numbers::pi / 2;  // P1 = (-1, 0): horizontal, at rest
/// P1 error over 10 s at rtol = atol = 1e-12 (Adams). The benchmark asks for 1e-3; measured
/// 1.8e-10 here, so the bound leaves a margin of about 50 for compilers and platforms.
constexpr double kTrajectoryTol = 1e-8;

OdeProblem free_swing(const Pendulum& pendulum) {
  OdeProblem p;
  p.rhs = [&pendulum](double, const Vector& x, Vector& xdot) { pendulum.rhs(x, 0.0, xdot); };
  p.jacobian = [&pendulum](double, const Vector& x, Matrix& J) { pendulum.jacobian(x, J); };
  return p;
}

TEST(Pendulum, MatchesTheExactLargeAmplitudeSolution) {
  const Pendulum pendulum;
  CvodeOptions o;
  o.method = CvodeMethod::adams;
  o.t_end = kHorizon;
  o.output_dt = 0.01;
  o.rtol = o.atol = 1e-12;
  Vector x(2);
  x << kPhi0, 0.0;
  double worst_point = 0.0, worst_energy = 0.0;
  const double e0 = pendulum.energy(x);
  integrate_cvode(free_swing(pendulum), x, o, [&](double t, const Vector& xt) {
    const Eigen::Vector2d exact = pendulum.point(pendulum.exact_angle(kPhi0, t));
    worst_point = std::max(worst_point, (pendulum.point(xt[0]) - exact).norm());
    worst_energy = std::max(worst_energy, std::abs(pendulum.energy(xt) - e0));
  });
  EXPECT_LT(worst_point, kTrajectoryTol);
  EXPECT_LT(worst_energy, 5e-9);  // of m g L = 9.81 J; measured 5.3e-10
  // The exact solution itself starts where the benchmark says and swings to the mirror point.
  EXPECT_NEAR(pendulum.point(pendulum.exact_angle(kPhi0, 0.0)).x(), -1.0, 1e-15);
  const double half = 0.5 * pendulum.period(kPhi0);
  EXPECT_NEAR(pendulum.exact_angle(kPhi0, half), -kPhi0, 1e-7);  // asin is flat at the turn
}

TEST(Pendulum, PeriodAgreesWithTheIntegratedSwing) {
  // Zero crossings of phi from CVODE's dense output, refined by the secant; the exact period
  // for 90 degrees is 4 K(1/sqrt 2) / omega_0 = 2.3678 s at g = 9.81 (1.18 times the linear one).
  const Pendulum pendulum;
  CvodeOptions o;
  o.method = CvodeMethod::adams;
  o.t_end = kHorizon;
  o.output_dt = 1e-3;
  o.rtol = o.atol = 1e-12;
  Vector x(2);
  x << kPhi0, 0.0;
  std::vector<double> upward;  // times phi crosses 0 going up
  double t_prev = 0.0, phi_prev = kPhi0;
  integrate_cvode(free_swing(pendulum), x, o, [&](double t, const Vector& xt) {
    if (phi_prev < 0.0 && xt[0] >= 0.0)
      upward.push_back(t_prev + (t - t_prev) * (-phi_prev) / (xt[0] - phi_prev));
    t_prev = t;
    phi_prev = xt[0];
  });
  ASSERT_GE(upward.size(), 3u);
  const double measured = (upward.back() - upward.front()) / static_cast<double>(upward.size() - 1);
  EXPECT_NEAR(measured, pendulum.period(kPhi0), 1e-9);  // measured 3.6e-11
  EXPECT_NEAR(pendulum.period(kPhi0) * pendulum.natural_frequency() / (2 * std::numbers::pi),
              1.18034, 1e-5);  // 2 K(1/sqrt 2) / pi, tabulated
}

TEST(Pendulum, LinearisationHasTheSmallAmplitudeFrequency) {
  const Pendulum pendulum({2.0, 0.5, 9.81});
  const SecondOrderSystem sys = pendulum.linearised();
  validate(sys);
  const double omega2 = Matrix(sys.K)(0, 0) / Matrix(sys.M)(0, 0);
  EXPECT_NEAR(std::sqrt(omega2), std::sqrt(9.81 / 0.5), 1e-14);
  EXPECT_DOUBLE_EQ(pendulum.natural_frequency(), std::sqrt(9.81 / 0.5));
}

TEST(Pendulum, LinearAndNonlinearDifferByTheCubicTerm) {
  // Torque a sin(t) from rest for 5 s; the relative difference of the horizontal P1 position
  // of the nonlinear model and of the linearisation falls like a^2 (sin phi = phi - phi^3 / 6).
  const Pendulum pendulum;
  const SecondOrderSystem lin = pendulum.linearised();
  const double M = Matrix(lin.M)(0, 0), K = Matrix(lin.K)(0, 0), Cp = Matrix(lin.Cp)(0, 0);
  auto difference = [&](double a) {
    OdeProblem both;  // [phi, omega] nonlinear, then [q, v] linear, side by side
    both.rhs = [&](double t, const Vector& x, Vector& xdot) {
      Vector nl(2);
      pendulum.rhs(x.head(2), a * std::sin(t), nl);
      xdot.resize(4);
      xdot << nl, x[3], (a * std::sin(t) - K * x[2]) / M;
    };
    CvodeOptions o;
    o.method = CvodeMethod::adams;
    o.t_end = 5.0;
    o.output_dt = 0.05;
    o.rtol = o.atol = 1e-13;
    Vector x = Vector::Zero(4);
    double err2 = 0.0, ref2 = 0.0;
    integrate_cvode(both, x, o, [&](double, const Vector& xt) {
      const double y_nl = pendulum.point(xt[0]).x(), y_lin = Cp * xt[2];
      err2 += (y_nl - y_lin) * (y_nl - y_lin);
      ref2 += y_lin * y_lin;
    });
    return std::sqrt(err2 / ref2);
  };
  const double d1 = difference(0.2), d2 = difference(0.1), d3 = difference(0.05);
  // Measured 4.0003 and 4.00008: the next term of the expansion is O(a^4).
  EXPECT_NEAR(d1 / d2, 4.0, 0.01) << d1 << " " << d2;
  EXPECT_NEAR(d2 / d3, 4.0, 0.01) << d2 << " " << d3;
}

TEST(Pendulum, BadInputIsNamed) {
  EXPECT_THROW(Pendulum({0.0, 1.0, 9.81}), InvalidArgument);
  EXPECT_THROW(Pendulum({1.0, -1.0, 9.81}), InvalidArgument);
  const Pendulum pendulum;
  EXPECT_THROW(pendulum.exact_angle(std::numbers::pi, 1.0), InvalidArgument);
  EXPECT_THROW(pendulum.exact_angle(0.0, 1.0), InvalidArgument);
  EXPECT_THROW(pendulum.period(4.0), InvalidArgument);
}

}  // namespace
}  // namespace mor
