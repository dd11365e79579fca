// SPDX-License-Identifier: GPL-3.0-or-later
// MBS benchmark A05 (models/flyball.hpp): the energy against the bodies' kinetic and potential
// energy computed from their frames, the analytic Jacobian against difference quotients, the
// benchmark run against the published curve (range and period of s) with its work-energy
// balance, a second run at other tolerances as a reference, the invariants (symmetry, the
// angular momentum about the axis), and the linearisation about the steady rotation (the
// equilibrium, K and D against difference quotients, the swing frequency against a nonlinear
// run, linear and nonlinear responses differing at second order).
#include "models/flyball.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "src/core/errors.hpp"
#include "src/integrators/cvode.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::invalid_argument_message;
using testing::matrices_near;
using testing::scalars_near;

constexpr double kHorizon = 10.0;  // s, the benchmark's
constexpr double kPi = std::numbers::pi;

/// A state anywhere near the governor's range of motion.
Vector random_state(std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Vector x(8);
  x << kPi * unit(rng), 0.45 + 0.35 * unit(rng), 0.45 + 0.35 * unit(rng), 0.6 + 0.15 * unit(rng),
      6.0 * unit(rng), 2.0 * unit(rng), 2.0 * unit(rng), 0.5 * unit(rng);
  return x;
}

/// The bodies' frames (rotation, centre) built here from the geometry of the file comment of
/// models/flyball.hpp, without the model's formulas: index 0 shaft, 1 and 2 rods, 3 slider.
struct Frame {
  Eigen::Matrix3d R;
  Eigen::Vector3d c;
};
std::vector<Frame> body_frames(const FlyballParameters& p, const Vector& q) {
  const Eigen::Matrix3d Rz = Eigen::AngleAxisd(q[0], Eigen::Vector3d::UnitZ()).toRotationMatrix();
  std::vector<Frame> f(4);
  f[0] = {Rz, Rz * Eigen::Vector3d(0, 0, 0.5 * p.shaft_length)};
  for (int i = 0; i < 2; ++i) {
    // The rod's own x axis along the rod, from the hinge outward and down.
    const double psi = i == 0 ? q[1] : kPi - q[2];
    const Eigen::Matrix3d R = Rz * Eigen::AngleAxisd(psi, Eigen::Vector3d::UnitY());
    const Eigen::Vector3d hinge =
        Rz * Eigen::Vector3d(i == 0 ? p.hinge_offset : -p.hinge_offset, 0, p.shaft_length);
    f[1 + i] = {R, hinge + 0.5 * p.rod_length * R.col(0)};
  }
  f[3] = {Rz, Eigen::Vector3d(0, 0, q[3])};
  return f;
}

/// T + V from the frames: cuboid inertias, the point masses at the rod ends, gravity on every
/// centre of mass, the springs between the rod midpoints and the slider's side points.
double energy_from_bodies(const FlyballParameters& p, const Vector& x) {
  const Vector q = x.head(4), v = x.tail(4);
  constexpr double h = 1e-6;
  const auto here = body_frames(p, q), plus = body_frames(p, q + h * v),
             minus = body_frames(p, q - h * v);
  auto cuboid = [&](double lx, double ly, double lz) {
    const double m = p.density * lx * ly * lz;
    return Eigen::Vector4d(m, m * (ly * ly + lz * lz) / 12, m * (lx * lx + lz * lz) / 12,
                           m * (lx * lx + ly * ly) / 12);
  };
  const Eigen::Vector4d bodies[4] = {cuboid(p.shaft_width, p.shaft_width, p.shaft_length),
                                     cuboid(p.rod_length, p.rod_width, p.rod_width),
                                     cuboid(p.rod_length, p.rod_width, p.rod_width),
                                     cuboid(p.slider_size, p.slider_size, p.slider_size)};
  double T = 0.0, V = 0.0;
  for (int b = 0; b < 4; ++b) {
    const Eigen::Vector3d vel = (plus[b].c - minus[b].c) / (2 * h);
    const Eigen::Matrix3d W = (plus[b].R - minus[b].R) / (2 * h) * here[b].R.transpose();
    const Eigen::Vector3d w =
        here[b].R.transpose() *
        Eigen::Vector3d(W(2, 1) - W(1, 2), W(0, 2) - W(2, 0), W(1, 0) - W(0, 1)) / 2;
    T += 0.5 * bodies[b][0] * vel.squaredNorm() + 0.5 * w.dot(bodies[b].tail<3>().cwiseProduct(w));
    V += bodies[b][0] * p.gravity * here[b].c.z();
  }
  for (int i = 0; i < 2; ++i) {
    const double sigma = i == 0 ? 1.0 : -1.0;
    auto end = [&](const std::vector<Frame>& f) {
      return Eigen::Vector3d(f[1 + i].c + 0.5 * p.rod_length * f[1 + i].R.col(0));
    };
    T += 0.5 * p.point_mass * ((end(plus) - end(minus)) / (2 * h)).squaredNorm();
    V += p.point_mass * p.gravity * end(here).z();
    const Eigen::Vector3d side =
        here[3].R * Eigen::Vector3d(sigma * 0.5 * p.slider_size, 0, 0) + here[3].c;
    const double stretch = (here[1 + i].c - side).norm() - p.rest_length;
    V += 0.5 * p.stiffness * stretch * stretch;
  }
  return T + V;
}

TEST(Flyball, EnergyMatchesTheBodies) {
  const Flyball flyball;
  std::mt19937 rng(20240605);
  double worst = 0.0;
  for (int trial = 0; trial < 50; ++trial) {
    const Vector x = random_state(rng);
    const double e = energy_from_bodies(flyball.parameters(), x);
    worst = std::max(worst, std::abs(flyball.energy(x) - e) / std::abs(e));
  }
  EXPECT_LT(worst, 1e-9);  // relative; measured 1.1e-11 (difference quotients, h = 1e-6)
  // The benchmark's masses: rods and shaft 0.3 kg, slider 3 kg; the springs start unloaded.
  EXPECT_TRUE(scalars_near(flyball.rod_mass(), 0.3, 1e-15));
  EXPECT_TRUE(scalars_near(flyball.slider_mass(), 3.0, 1e-14));
  EXPECT_TRUE(matrices_near(flyball.spring_lengths(flyball.initial_state()),
                            Eigen::Vector2d(0.5, 0.5), 1e-15));
}

TEST(Flyball, JacobianMatchesDifferenceQuotients) {
  const Flyball flyball;
  std::mt19937 rng(3);
  double worst = 0.0;
  for (int trial = 0; trial < 20; ++trial) {
    const Vector x = random_state(rng);
    Matrix J, Jfd(8, 8);
    flyball.jacobian(x, J);
    for (int j = 0; j < 8; ++j) {
      const double h = 1e-6 * std::max(1.0, std::abs(x[j]));
      Vector fp, fm;
      flyball.rhs(x + h * Vector::Unit(8, j), 0.0, fp);
      flyball.rhs(x - h * Vector::Unit(8, j), 0.0, fm);
      Jfd.col(j) = (fp - fm) / (2 * h);
    }
    worst = std::max(worst, (J - Jfd).cwiseAbs().maxCoeff() / J.cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-8);  // relative to max |J| (~1e4); measured 1.5e-10
}

/// The benchmark run through simulate_multibody at rtol = atol = tol, s sampled every 1 ms.
struct BenchmarkRun {
  MultibodyRunStats stats;
  std::vector<double> t, s, maxima;  // maxima: times of the local maxima of s (parabolic fit)
  double s_min = 1e300, s_max = -1e300, asymmetry = 0.0, momentum_drift = 0.0;
  Vector x_end;
};

BenchmarkRun run_benchmark(const Flyball& flyball, double tol) {
  CvodeOptions o;
  o.method = flyball.preferred_method();
  o.t_end = flyball.horizon();
  o.output_dt = 1e-3;
  o.rtol = o.atol = tol;
  BenchmarkRun run;
  Vector x = flyball.initial_state();
  const double p0 = flyball.angular_momentum(x);
  run.stats = simulate_multibody(flyball, x, o, [&](double t, const Vector& xt, double) {
    run.t.push_back(t);
    run.s.push_back(xt[3]);
    run.s_min = std::min(run.s_min, xt[3]);
    run.s_max = std::max(run.s_max, xt[3]);
    run.asymmetry = std::max({run.asymmetry, std::abs(xt[1] - xt[2]), std::abs(xt[5] - xt[6])});
    run.momentum_drift =
        std::max(run.momentum_drift, std::abs(flyball.angular_momentum(xt) - p0) / p0);
  });
  for (std::size_t k = 1; k + 1 < run.s.size(); ++k) {
    const double a = run.s[k - 1], b = run.s[k], c = run.s[k + 1];
    if (b > a && b >= c)
      run.maxima.push_back(run.t[k] + o.output_dt * (a - c) / (2 * (a - 2 * b + c)));
  }
  run.x_end = x;
  return run;
}

double mean_period(const std::vector<double>& maxima) {
  return (maxima.back() - maxima.front()) / static_cast<double>(maxima.size() - 1);
}

TEST(Flyball, BenchmarkRunMatchesThePublishedCurve) {
  // The published reference oscillates between about 0.50 and 0.745 m with a period of about
  // 1.03 s, read off a plot: the band's tolerance is 5 mm, the period's 2%.
  const Flyball flyball;
  const BenchmarkRun run = run_benchmark(flyball, 1e-10);
  EXPECT_NEAR(run.s_min, 0.50, 0.005);                      // measured 0.499911
  EXPECT_NEAR(run.s_max, 0.745, 0.005);                     // measured 0.743571
  ASSERT_GE(run.maxima.size(), 9u);                         // measured 10 in 10 s
  EXPECT_NEAR(mean_period(run.maxima), 1.03, 0.02 * 1.03);  // measured 1.02467 s
  // Nearly undamped: the last swing reaches the first one's height to 0.1 mm, measured 12 um
  // (the dampers dissipate little: the swing hardly stretches the springs).
  double last_max = 0.0;
  for (std::size_t k = 0; k < run.t.size(); ++k)
    if (run.t[k] > kHorizon - 1.0) last_max = std::max(last_max, run.s[k]);
  EXPECT_NEAR(last_max, run.s_max, 1e-4);
  // The work-energy balance, relative to E(0) = 238.9 J; measured 1.7e-8 (it follows the
  // tolerance: 8.5e-7 at 1e-8, 3.4e-10 at 1e-12).
  EXPECT_LT(run.stats.energy_balance_error / std::abs(run.stats.energy_initial), 2e-7);
  // Cost at this tolerance: 5550 steps, 97 Jacobians, about 0.04 s.
  EXPECT_LT(run.stats.cvode.steps, 20000);
}

TEST(Flyball, TwoTolerancesAgree) {
  // A run at rtol = atol = 1e-7 against one at 1e-11: the benchmark's precision bar is 1e-3 m
  // on s; the loose run's worst difference over 10 s is measured 1.6e-5 m, at t = 10 6.4e-7 m.
  const Flyball flyball;
  const BenchmarkRun fine = run_benchmark(flyball, 1e-11);
  const BenchmarkRun loose = run_benchmark(flyball, 1e-7);
  ASSERT_EQ(fine.s.size(), loose.s.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < fine.s.size(); ++k)
    worst = std::max(worst, std::abs(fine.s[k] - loose.s[k]));
  EXPECT_LT(worst, 1e-4);
  EXPECT_NEAR(loose.x_end[3], fine.x_end[3], 1e-5);
}

TEST(Flyball, SymmetryAndAngularMomentumAreKept) {
  // No torque about the axis: p = I(alpha) theta' is conserved; the symmetric start stays
  // symmetric (the two rods' equations are the same up to rounding).
  const Flyball flyball;
  const BenchmarkRun run = run_benchmark(flyball, 1e-10);
  EXPECT_LT(run.asymmetry, 1e-11);      // rad and rad/s; measured 7.4e-14
  EXPECT_LT(run.momentum_drift, 1e-7);  // relative; measured 1.1e-8 (BDF's error at 1e-10)
  // An asymmetric start (alpha_1 + 0.05 rad): the momentum is still conserved.
  Vector x = flyball.initial_state();
  x[1] += 0.05;
  const double p0 = flyball.angular_momentum(x);
  CvodeOptions o;
  o.t_end = 2.0;
  o.rtol = o.atol = 1e-10;
  OdeProblem ode;
  ode.rhs = [&](double, const Vector& xx, Vector& xd) { flyball.rhs(xx, 0.0, xd); };
  ode.jacobian = [&](double, const Vector& xx, Matrix& J) { flyball.jacobian(xx, J); };
  double drift = 0.0;
  o.output_dt = 1e-2;
  integrate_cvode(ode, x, o, [&](double, const Vector& xt) {
    drift = std::max(drift, std::abs(flyball.angular_momentum(xt) - p0) / p0);
  });
  EXPECT_LT(drift, 1e-7);  // measured 3.9e-9
  // Rods swinging against each other with the slider still stretch the springs: that motion is
  // overdamped (the real poles near -20 1/s) and has died out after 2 s (measured 0 rad).
  EXPECT_LT(std::abs(x[1] - x[2]), 1e-12);
}

TEST(Flyball, DrawingFollowsTheGeometry) {
  const Flyball flyball;
  std::mt19937 rng(5);
  const Vector x = random_state(rng);
  const Eigen::Matrix3Xd P = flyball.points(x);
  const auto& p = flyball.parameters();
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR((P.col(4 + i) - P.col(2 + i)).norm(), p.rod_length, 1e-14);  // hinge to mass
    EXPECT_NEAR((P.col(6 + i) - P.col(8 + i)).norm(), flyball.spring_lengths(x)[i], 1e-14);
  }
  EXPECT_NEAR(P(2, 10), x[3], 1e-15);
  for (const auto& [a, b] : flyball.segments()) {
    ASSERT_GE(a, 0);
    ASSERT_LT(b, P.cols());
  }
}

// --- the linearisation ----------------------------------------------------------------------

/// x at rest in r = (alpha_1, alpha_2, s), turning with the angular momentum p.
Vector turning_state(const Flyball& flyball, const Eigen::Vector3d& r, double p) {
  Vector x = Vector::Zero(8);
  x.segment<3>(1) = r;
  x[4] = p / flyball.axial_inertia(r[0], r[1]);
  return x;
}

TEST(Flyball, SteadyRotationIsARelativeEquilibrium) {
  const Flyball flyball;
  const Flyball::SteadyRotation sr = flyball.steady_rotation();
  EXPECT_TRUE(scalars_near(sr.momentum, flyball.angular_momentum(flyball.initial_state()), 1e-13,
                           Compare::relative));
  // The full equations at r*, turning at p_0 / I: no acceleration but the rotation itself.
  Vector xdot;
  flyball.rhs(turning_state(flyball, sr.r, sr.momentum), 0.0, xdot);
  EXPECT_LT(xdot.tail<4>().cwiseAbs().maxCoeff(), 1e-9);  // 1/s^2 and m/s^2; measured 3.2e-12
  // V_p(r) = E at rest turning with p: -grad V_p by difference quotients of energy() is
  // effective_force(); its Jacobian is -effective_stiffness() (symmetric positive definite).
  auto V_p = [&](const Eigen::Vector3d& r) {
    return flyball.energy(turning_state(flyball, r, sr.momentum));
  };
  const Eigen::Vector3d r(0.45, 0.4, 0.58);
  Eigen::Vector3d grad;
  Eigen::Matrix3d hess;
  for (int j = 0; j < 3; ++j) {
    const Eigen::Vector3d e = 1e-6 * Eigen::Vector3d::Unit(j);
    grad[j] = (V_p(r + e) - V_p(r - e)) / 2e-6;
    hess.col(j) = -(flyball.effective_force(r + e, sr.momentum) -
                    flyball.effective_force(r - e, sr.momentum)) /
                  2e-6;
  }
  EXPECT_TRUE(matrices_near(flyball.effective_force(r, sr.momentum), -grad, 1e-6,
                            Compare::relative));  // measured 3.9e-11
  const Eigen::Matrix3d K = flyball.effective_stiffness(r, sr.momentum);
  EXPECT_TRUE(matrices_near(K, hess, 1e-8, Compare::relative));  // measured 3.7e-11
  EXPECT_TRUE(matrices_near(K, Eigen::Matrix3d(K.transpose()), 0.0));
  // The governor's steady state: alpha* = 22.86 deg, s* = 0.6114 m (the middle of the band),
  // turning slower than at the start (the balls moved out).
  EXPECT_NEAR(sr.r[0], sr.r[1], 1e-14);
  EXPECT_GT(sr.r[2], 0.6);
  EXPECT_LT(sr.r[2], 0.62);
  EXPECT_LT(sr.speed, flyball.parameters().initial_speed);
  // The governor's characteristic: more angular momentum lifts the slider.
  const Flyball::SteadyRotation faster = flyball.steady_rotation(1.2 * sr.momentum);
  EXPECT_LT(flyball.effective_force(faster.r, faster.momentum).norm(),
            1e-9);                         // N; measured 4.0e-11
  EXPECT_GT(faster.r[2], sr.r[2] + 0.05);  // measured s* = 0.6940 against 0.6114 m
  EXPECT_GT(faster.speed, sr.speed);
  // Not turning, the balls would hang down with the slider below the shaft.
  EXPECT_THROW(flyball.steady_rotation(0.0), NumericalError);
}

/// The first-order matrix of M q'' + D q' + K q = 0.
Matrix first_order(const SecondOrderSystem& sys) {
  const Matrix Minv = Matrix(sys.M).inverse();
  const Index n = sys.n();
  Matrix A = Matrix::Zero(2 * n, 2 * n);
  A.topRightCorner(n, n).setIdentity();
  A.bottomLeftCorner(n, n) = -Minv * Matrix(sys.K);
  A.bottomRightCorner(n, n) = -Minv * Matrix(sys.D);
  return A;
}

TEST(Flyball, LinearisationKeepsTheStiffnessRatio) {
  const Flyball flyball;
  const SecondOrderSystem sys = flyball.linearised();
  validate(sys);
  ASSERT_EQ(sys.n(), 3);
  ASSERT_EQ(sys.n_inputs(), 2);
  ASSERT_EQ(sys.n_outputs(), 1);
  const Matrix K(sys.K), D(sys.D);
  EXPECT_TRUE(matrices_near(K, Matrix(K.transpose()), 0.0));
  EXPECT_TRUE(matrices_near(D, Matrix(D.transpose()), 0.0));
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Matrix>(K).eigenvalues().minCoeff(), 0.0);
  // D = C sum grad l grad l^T: rank 2 (the swing, along which the springs keep their length,
  // is not damped to first order).
  const Eigen::VectorXd d = Eigen::SelfAdjointEigenSolver<Matrix>(D).eigenvalues();
  EXPECT_LT(std::abs(d[0]), 1e-10 * d[2]);
  // Eigenvalues, measured: -8.7e-6 +- 6.1357i (the swing), -20.09, -20.44 (the springs creeping
  // against their dampers), -984.9, -5013 (the springs' fast modes): stiffness ratio 8e2 to the
  // swing frequency, 6e8 to its decay rate.
  const Eigen::VectorXcd lambda = Eigen::EigenSolver<Matrix>(first_order(sys)).eigenvalues();
  int swing = 0;
  double fastest = 0.0;
  for (const Complex& l : lambda) {
    EXPECT_LT(l.real(), 0.0) << l;
    if (std::abs(l.imag()) > 0.0) {
      ++swing;
      EXPECT_NEAR(std::abs(l.imag()), 6.1357, 1e-3) << l;
      EXPECT_LT(-l.real(), 1e-4) << l;
    }
    fastest = std::max(fastest, std::abs(l));
  }
  EXPECT_EQ(swing, 2);
  EXPECT_GT(fastest, 4000.0);
}

/// The swing pair's eigenvalue and the real part of its eigenvector (positions, velocities).
std::pair<Complex, Eigen::VectorXcd> swing_mode(const SecondOrderSystem& sys) {
  const Eigen::EigenSolver<Matrix> eig(first_order(sys));
  for (Index k = 0; k < eig.eigenvalues().size(); ++k)
    if (eig.eigenvalues()[k].imag() > 0.0) return {eig.eigenvalues()[k], eig.eigenvectors().col(k)};
  throw NumericalError("no oscillating mode");
}

TEST(Flyball, SwingFrequencyMatchesTheNonlinearModel) {
  // The nonlinear model started near r* along the linear swing mode (s amplitude 0.1 mm) with
  // the benchmark's angular momentum: its period from successive maxima of s against
  // 2 pi / Im(lambda) of the linear model.
  const Flyball flyball;
  const auto sys = flyball.linearised();
  const auto [lambda, mode] = swing_mode(sys);
  const Flyball::SteadyRotation sr = flyball.steady_rotation();
  const Vector shape = (mode / mode[2]).real() * 1e-4;  // s deviation 0.1 mm, the rest in step
  Vector x = turning_state(flyball, sr.r + shape.head<3>(), sr.momentum);
  x.segment<3>(5) = shape.tail<3>();
  OdeProblem ode;
  ode.rhs = [&](double, const Vector& xx, Vector& xd) { flyball.rhs(xx, 0.0, xd); };
  ode.jacobian = [&](double, const Vector& xx, Matrix& J) { flyball.jacobian(xx, J); };
  CvodeOptions o;
  o.t_end = 6.0;
  o.output_dt = 1e-3;
  o.rtol = 1e-11;
  o.atol = 1e-14;
  std::vector<double> t, s, maxima;
  integrate_cvode(ode, x, o, [&](double tt, const Vector& xt) {
    t.push_back(tt);
    s.push_back(xt[3]);
  });
  for (std::size_t k = 1; k + 1 < s.size(); ++k)
    if (s[k] > s[k - 1] && s[k] >= s[k + 1])
      maxima.push_back(t[k] + o.output_dt * (s[k - 1] - s[k + 1]) /
                                  (2 * (s[k - 1] - 2 * s[k] + s[k + 1])));
  ASSERT_GE(maxima.size(), 5u);
  const double period = mean_period(maxima), linear = 2 * kPi / lambda.imag();
  EXPECT_TRUE(scalars_near(period, linear, 1e-6, Compare::relative));  // measured 2.9e-10
  // The benchmark's large swing (0.50 to 0.745 m, period 1.02467 s) is 0.6 ms slower.
  EXPECT_NEAR(linear, 1.0240, 5e-4);
}

/// ||y_nl - y_lin||_2 / ||y_lin||_2 over 4 s of the input u(t) = a sin(3 t) e_k, both models
/// from the steady rotation, outputs the deviation of s.
double linear_difference(const Flyball& flyball, int input, double a) {
  const SecondOrderSystem sys = flyball.linearised();
  const auto lp = flyball.linearisation_point();
  const Matrix Minv = Matrix(sys.M).inverse(), A = first_order(sys);
  const Matrix B = Minv * Matrix(sys.B);
  OdeProblem both;  // nonlinear x (8), then the linear [dr; dr'] (6)
  both.rhs = [&](double t, const Vector& z, Vector& zdot) {
    Vector u = Vector::Zero(2), xd;
    u[input] = a * std::sin(3 * t);
    lp->rhs(t, z.head(8), u, xd);
    zdot.resize(14);
    zdot.head(8) = xd;
    zdot.tail(6) = A * z.tail(6);
    zdot.tail(3) += B * u;
  };
  Matrix J8;
  both.jacobian = [&](double, const Vector& z, Matrix& J) {
    flyball.jacobian(z.head(8), J8);
    J.setZero(14, 14);
    J.topLeftCorner(8, 8) = J8;  // the momentum input's omega is frozen here: modified Newton
    J.bottomRightCorner(6, 6) = A;
  };
  Vector z = Vector::Zero(14);
  z.head(8) = lp->x;
  CvodeOptions o;
  o.t_end = 4.0;
  o.output_dt = 0.01;
  o.rtol = 1e-11;
  o.atol = 1e-14;
  double e2 = 0.0, r2 = 0.0;
  integrate_cvode(both, z, o, [&](double, const Vector& zt) {
    const double y_nl = zt[3] - lp->x[3], y_lin = (Matrix(sys.Cp) * zt.segment<3>(8))(0);
    e2 += (y_nl - y_lin) * (y_nl - y_lin);
    r2 += y_lin * y_lin;
  });
  return std::sqrt(e2 / r2);
}

TEST(Flyball, LinearAndNonlinearDifferAtSecondOrder) {
  // Absolute differences O(a^2) against responses O(a): halving a halves the relative one.
  const Flyball flyball;
  // The swing is soft (static gain of s: 1.8 mm/N) and its frequency depends on the amplitude,
  // so the phase error grows over the run; 2 N moves s by about 5 mm.
  const double f1 = linear_difference(flyball, 0, 2.0), f2 = linear_difference(flyball, 0, 1.0),
               f3 = linear_difference(flyball, 0, 0.5);
  EXPECT_LT(f1, 0.05);                                 // measured 3.1e-2
  EXPECT_NEAR(f1 / f2, 2.0, 0.05) << f1 << " " << f2;  // measured 2.0018
  EXPECT_NEAR(f2 / f3, 2.0, 0.05) << f2 << " " << f3;  // measured 2.0009
  // The angular momentum input (the integral of a shaft torque): 1 N m s is 2% of p_0 and moves
  // s by about 1 cm (static gain 8.6 mm per N m s).
  const double m1 = linear_difference(flyball, 1, 1.0), m2 = linear_difference(flyball, 1, 0.5),
               m3 = linear_difference(flyball, 1, 0.25);
  EXPECT_LT(m1, 0.05);                                 // measured 3.1e-2
  EXPECT_NEAR(m1 / m2, 2.0, 0.05) << m1 << " " << m2;  // measured 2.0071
  EXPECT_NEAR(m2 / m3, 2.0, 0.05) << m2 << " " << m3;  // measured 2.0035
}

TEST(Flyball, BadParametersAreNamed) {
  auto message = [](FlyballParameters p) {
    return invalid_argument_message([&] { Flyball f(p); });
  };
  FlyballParameters p;
  p.stiffness = -1.0;
  EXPECT_NE(message(p).find("stiffness = -1"), std::string::npos) << message(p);
  p = {};
  p.density = std::nan("");
  EXPECT_NE(message(p).find("density"), std::string::npos) << message(p);
  p = {};
  p.initial_angle = 2.0;
  EXPECT_NE(message(p).find("initial_angle = 2"), std::string::npos) << message(p);
  p = {};
  p.initial_height = 1.5;
  EXPECT_NE(message(p).find("initial_height = 1.5"), std::string::npos) << message(p);
  p = {};
  p.hinge_offset = -0.1;
  EXPECT_NE(message(p).find("hinge_offset = -0.1"), std::string::npos) << message(p);
  p = {};
  p.damping = -4e4;
  EXPECT_NE(message(p).find("damping = -40000"), std::string::npos) << message(p);
  const Flyball flyball;
  Vector xdot;
  EXPECT_THROW(flyball.rhs(Vector::Zero(4), 0.0, xdot), InvalidArgument);
}

}  // namespace
}  // namespace mor
