// SPDX-License-Identifier: GPL-3.0-or-later
// MBS benchmark A04 (models/bricard.hpp): the redundancy of the constraints, the benchmark's
// 10 s run with CVODE (BDF and projection) against energy conservation and the manifold, the
// periodicity of P3, the period against an independent quadrature of the energy equation, the
// dynamics' terms against a Lagrangian by finite differences, and the linearisation about the
// stable equilibrium.
//
// The independent reference: a forward kinematics written here from the spec (products of
// rotations about the joint lines, Rodrigues' formula), velocities by finite differences, and
// the closed form of the configuration curve
//   theta_C = theta_E = theta_A,  theta_D = theta_B,  sin theta_B = -sin theta_A / (1 + sin
//   theta_A),
// found from the model's curve and checked here against the independent kinematics. The
// mechanism swings between theta_A = 0 and theta_A = pi (mirror images, V equal) through the
// equilibrium theta_A = pi/2, theta_B = -pi/6.
#include "models/bricard.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/integrators/cvode.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

using testing::matrices_near;
using testing::scalars_near;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

constexpr double kPi = std::numbers::pi;
constexpr double kMass = 1.0, kLength = 1.0, kSide = 0.1, kGravity = 9.81;

// --- an independent forward kinematics, from the spec ---------------------------------------

Mat3 rodrigues(const Vec3& axis, double angle) {
  Mat3 K;
  K << 0.0, -axis.z(), axis.y(), axis.z(), 0.0, -axis.x(), -axis.y(), axis.x(), 0.0;
  return Mat3::Identity() + std::sin(angle) * K + (1.0 - std::cos(angle)) * K * K;
}

struct Pose {
  Mat3 R = Mat3::Identity();
  Vec3 t = Vec3::Zero();
  Vec3 operator()(const Vec3& x) const { return R * x + t; }
  Pose operator*(const Pose& o) const { return {R * o.R, R * o.t + t}; }
};

/// Rods 1..5 as poses from the initial configuration: each joint a rotation about its line
/// there (product of exponentials).
std::array<Pose, 5> rod_poses(const Vector& theta) {
  const std::array<Vec3, 5> point = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, -1, 0), Vec3(1, -1, 1),
                                     Vec3(0, -1, 1)};
  const std::array<Vec3, 5> axis = {Vec3::UnitY(), Vec3::UnitZ(), Vec3::UnitX(), Vec3::UnitY(),
                                    Vec3::UnitZ()};
  std::array<Pose, 5> poses;
  Pose T;
  for (int i = 0; i < 5; ++i) {
    Pose joint;
    joint.R = rodrigues(axis[i], theta[i]);
    joint.t = point[i] - joint.R * point[i];
    T = T * joint;
    poses[i] = T;
  }
  return poses;
}

const std::array<Vec3, 6> kJoints0 = {Vec3(0, 0, 0),  Vec3(1, 0, 0),  Vec3(1, -1, 0),
                                      Vec3(1, -1, 1), Vec3(0, -1, 1), Vec3(0, 0, 1)};

/// The closed form of the configuration curve at theta_A = s (0 <= s <= pi).
Vector curve(double s) {
  const double b = std::asin(-std::sin(s) / (1.0 + std::sin(s)));
  Vector theta(5);
  theta << s, b, s, b, s;
  return theta;
}

double reference_potential(const Vector& theta) {
  const auto T = rod_poses(theta);
  double v = 0.0;
  for (int i = 0; i < 5; ++i)
    v += kMass * kGravity * T[i](0.5 * (kJoints0[i] + kJoints0[i + 1])).y();
  return v;
}

/// T along the motion tau -> path(tau) at tau = 0, velocities by fourth-order central
/// differences of the rods' centres and rotations (omega from R' R^T).
template <class Path>
double reference_kinetic_energy(const Path& path) {
  constexpr double h = 1e-3;
  std::array<std::array<Pose, 5>, 4> at;
  const std::array<double, 4> taus = {-2 * h, -h, h, 2 * h};
  for (int j = 0; j < 4; ++j) at[j] = rod_poses(path(taus[j]));
  const auto here = rod_poses(path(0.0));
  const double transverse = kMass * (kLength * kLength + kSide * kSide) / 12.0;
  const double axial = kMass * 2.0 * kSide * kSide / 12.0;
  double T = 0.0;
  for (int i = 0; i < 5; ++i) {
    const Vec3 c0 = 0.5 * (kJoints0[i] + kJoints0[i + 1]);
    auto d = [&](auto f) -> decltype(f(here[i])) {
      return (8.0 * (f(at[2][i]) - f(at[1][i])) - (f(at[3][i]) - f(at[0][i]))) / (12.0 * h);
    };
    const Vec3 v = d([&](const Pose& P) { return Vec3(P(c0)); });
    const Mat3 Rdot = d([](const Pose& P) { return Mat3(P.R); });
    const Mat3 W = Rdot * here[i].R.transpose();
    const Vec3 omega(0.5 * (W(2, 1) - W(1, 2)), 0.5 * (W(0, 2) - W(2, 0)),
                     0.5 * (W(1, 0) - W(0, 1)));
    const Vec3 axis = here[i].R * (kJoints0[i + 1] - kJoints0[i]);  // unit: L = 1
    const Mat3 I =
        axial * axis * axis.transpose() + transverse * (Mat3::Identity() - axis * axis.transpose());
    T += 0.5 * kMass * v.squaredNorm() + 0.5 * omega.dot(I * omega);
  }
  return T;
}

/// Gauss-Legendre nodes and weights on [a, b] (Golub-Welsch).
void gauss_legendre(int n, double a, double b, Vector& nodes, Vector& weights) {
  Matrix J = Matrix::Zero(n, n);
  for (int k = 1; k < n; ++k) J(k, k - 1) = J(k - 1, k) = k / std::sqrt(4.0 * k * k - 1.0);
  Eigen::SelfAdjointEigenSolver<Matrix> eig(J);
  nodes = (0.5 * (b - a)) * (eig.eigenvalues().array() + 1.0) + a;
  weights = (b - a) * eig.eigenvectors().row(0).transpose().array().square();
}

// --- runs -------------------------------------------------------------------------------------

struct Sample {
  double t;
  Vector x;
};

/// The run from x0 under a joint-A torque tau(t), BDF with the model's projection, outputs
/// every output_dt (step points).
template <class Torque>
std::vector<Sample> run(const Bricard& model, Vector x0, double t_end, double output_dt, double tol,
                        const Torque& torque, CvodeStats* stats = nullptr) {
  OdeProblem problem;
  problem.rhs = [&](double t, const Vector& x, Vector& xdot) { model.rhs(x, torque(t), xdot); };
  problem.projection = [&](double t, Vector& x) { model.project(t, x); };
  CvodeOptions o;
  o.method = CvodeMethod::bdf;
  o.t_end = t_end;
  o.output_dt = output_dt;
  o.rtol = o.atol = tol;
  std::vector<Sample> samples;
  const CvodeStats s = integrate_cvode(problem, x0, o, [&](double t, const Vector& x) {
    samples.push_back({t, x});
  });
  if (stats) *stats = s;
  return samples;
}

/// theta at time t by cubic Hermite interpolation of the samples (theta and theta').
Vector interpolate(const std::vector<Sample>& samples, double t) {
  std::size_t j = 1;
  while (j + 1 < samples.size() && samples[j].t < t) ++j;
  const Sample &a = samples[j - 1], &b = samples[j];
  const double h = b.t - a.t, u = (t - a.t) / h;
  const double h00 = (1 + 2 * u) * (1 - u) * (1 - u), h10 = u * (1 - u) * (1 - u);
  const double h01 = u * u * (3 - 2 * u), h11 = u * u * (u - 1);
  return h00 * a.x.head(5) + h10 * h * a.x.tail(5) + h01 * b.x.head(5) + h11 * h * b.x.tail(5);
}

/// Times theta_A crosses the level c (either direction), on the Hermite interpolant.
std::vector<double> crossings(const std::vector<Sample>& samples, double c) {
  std::vector<double> times;
  for (std::size_t j = 1; j < samples.size(); ++j) {
    const double fa = samples[j - 1].x[0] - c, fb = samples[j].x[0] - c;
    if (fa == 0.0 || fa * fb > 0.0) continue;
    double lo = samples[j - 1].t, hi = samples[j].t;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      ((interpolate(samples, mid)[0] - c) * fa > 0.0 ? lo : hi) = mid;
    }
    times.push_back(0.5 * (lo + hi));
  }
  return times;
}

double no_torque(double) {
  return 0.0;
}

/// The drop of V from the start to the equilibrium: (2 sqrt(3) - 3) m g L, J.
double potential_drop(const Bricard& model) {
  return model.potential_energy(Vector::Zero(5)) - model.potential_energy(curve(kPi / 2));
}

// --- the tests --------------------------------------------------------------------------------

TEST(Bricard, InitialConfigurationIsClosedAndTheConstraintsAreRedundant) {
  const Bricard model;
  const Vector theta0 = model.initial_state().head(5);
  // The spec's joint points, and the loop closed to rounding (exactly, here).
  const Eigen::Matrix<double, 3, 6> P = model.joint_points(theta0);
  for (int j = 0; j < 6; ++j) EXPECT_TRUE(matrices_near(P.col(j), kJoints0[j], 1e-15)) << j;
  EXPECT_LT(model.constraints(theta0).norm(), 1e-15);  // measured 0
  // Phi_theta: 5 equations in 5 unknowns, rank 4 (measured singular values 1.902, 1.902,
  // 1.176, 1.176, 7.5e-17): Grubler's 0 degrees of freedom are really 1.
  const Eigen::JacobiSVD<Matrix> svd(model.constraint_jacobian(theta0));
  const Vector s = svd.singularValues();
  EXPECT_GT(s[3], 0.5 * s[0]);
  EXPECT_LT(s[4], 1e-14 * s[0]);
  // Its null vector is the tangent, and moves the chain without opening the loop (first order).
  const Vector n = model.tangent(theta0);
  EXPECT_LT((model.constraint_jacobian(theta0) * n).norm(), 2e-15);  // measured 4.6e-16
  EXPECT_TRUE(matrices_near(n,
                            Vector::Constant(5, 1 / std::sqrt(5.0))
                                .cwiseProduct((Vector(5) << 1, -1, 1, -1, 1).finished()),
                            2e-15));  // d(sin theta_B) = -d(sin theta_A) at 0; measured 3e-16
  constexpr double eps = 1e-6;
  EXPECT_LT(model.constraints(theta0 + eps * n).norm(), 5 * eps * eps);  // measured 0.4 eps^2
}

TEST(Bricard, ClosedFormCurveClosesTheIndependentKinematics) {
  // The closed form, through the kinematics written here: the end of rod 5 at F = (0, 0, 1)
  // and its F axis along x, over the swing 0 <= theta_A <= pi; and the model agrees.
  const Bricard model;
  double worst_reference = 0.0, worst_model = 0.0, worst_points = 0.0;
  for (int k = 0; k <= 60; ++k) {
    const Vector theta = curve(kPi * k / 60.0);
    const Pose rod5 = rod_poses(theta)[4];
    const double closure =
        (rod5(kJoints0[5]) - kJoints0[5]).norm() + (rod5.R * Vec3::UnitX() - Vec3::UnitX()).norm();
    worst_reference = std::max(worst_reference, closure);
    worst_model = std::max(worst_model, model.constraints(theta).norm());
    const auto poses = rod_poses(theta);
    const Eigen::Matrix<double, 3, 6> P = model.joint_points(theta);
    for (int j = 1; j < 6; ++j)
      worst_points = std::max(worst_points, (P.col(j) - poses[j - 1](kJoints0[j])).norm());
  }
  EXPECT_LT(worst_reference, 1e-14);  // measured 9.2e-16
  EXPECT_LT(worst_model, 1e-14);      // measured 5.6e-16
  EXPECT_LT(worst_points, 1e-14);     // measured 6.1e-16
}

TEST(Bricard, DynamicsTermsMatchTheLagrangian) {
  // At a generic state off the curve (the formulas hold for any theta): T = theta'^T M theta'/2
  // against the independent kinematics; h = M' theta' - dT/dtheta and Q_g = -dV/dtheta by
  // fourth-order differences of the model's own M and V.
  const Bricard model;
  Vector theta(5), v(5);
  theta << 0.3, -0.7, 1.1, 0.4, -0.2;
  v << 0.9, -0.4, 0.3, 1.3, -0.8;
  const Matrix M = model.mass_matrix(theta);
  EXPECT_TRUE(matrices_near(M, M.transpose(), 1e-15));
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Matrix>(M).eigenvalues().minCoeff(), 0.0);
  const double T_reference =
      reference_kinetic_energy([&](double tau) { return Vector(theta + tau * v); });
  EXPECT_TRUE(scalars_near(0.5 * v.dot(M * v), T_reference, 1e-11, testing::Compare::relative));
  // measured 1.4e-13 relative (the differences' truncation)

  constexpr double h = 1e-3;
  auto d = [&](auto f, const Vector& dir) -> Matrix {
    return (8.0 * (f(theta + h * dir) - f(theta - h * dir)) -
            (f(theta + 2 * h * dir) - f(theta - 2 * h * dir))) /
           (12.0 * h);
  };
  const Matrix Mdot = d([&](const Vector& q) { return model.mass_matrix(q); }, v);
  Vector dT(5), dV(5);
  for (int j = 0; j < 5; ++j) {
    const Vector e = Vector::Unit(5, j);
    dT[j] = d(
        [&](const Vector& q) {
          return Matrix::Constant(1, 1, 0.5 * v.dot(model.mass_matrix(q) * v));
        },
        e)(0, 0);
    dV[j] = d([&](const Vector& q) { return Matrix::Constant(1, 1, model.potential_energy(q)); },
              e)(0, 0);
  }
  EXPECT_TRUE(matrices_near(model.velocity_forces(theta, v), Vector(Mdot * v - dT), 1e-10));
  // measured 3.8e-12 (|h| ~ 1)
  EXPECT_TRUE(matrices_near(model.gravity_forces(theta), Vector(-dV), 1e-10));  // measured 5.2e-12
}

TEST(Bricard, ProjectionLandsOnBothManifolds) {
  const Bricard model;
  Vector x(10);
  x << 0.5, -0.3, 0.52, -0.31, 0.47, 0.2, 0.1, -0.3, 0.4, 0.05;
  Vector y = x;
  ASSERT_TRUE(model.project(0.0, y));
  const Vector theta = y.head(5), v = y.tail(5);
  EXPECT_LT(model.constraints(theta).norm(), 1e-14);                // measured 2.9e-16
  EXPECT_LT((model.constraint_jacobian(theta) * v).norm(), 1e-14);  // measured 1.6e-17
  // M-orthogonal: the velocity correction is M-orthogonal to the tangent.
  const Vector n = model.tangent(theta);
  EXPECT_LT(std::abs((x.tail(5) - v).dot(model.mass_matrix(theta) * n)), 1e-14);  // measured 7e-18
  Vector z = y;
  model.project(0.0, z);
  EXPECT_TRUE(matrices_near(z, y, 1e-15));  // idempotent
}

TEST(Bricard, BenchmarkRunConservesEnergyOnTheManifold) {
  // The runner's own path (simulate_multibody, the model's method and projection) at
  // rtol = atol = 1e-10, outputs every 0.01 s. Energy scale: the potential drop to the
  // equilibrium, V(0) - V(theta*) = 4.553 J (the peak kinetic energy; |E(0)| = 29.43 J is a
  // matter of the datum).
  const Bricard model;
  CvodeOptions o;
  o.method = model.preferred_method();
  o.t_end = model.horizon();
  o.output_dt = 0.01;
  o.rtol = o.atol = 1e-10;
  Vector x = model.initial_state();
  double worst_velocity = 0.0, worst_rank_gap = 1.0, worst_null = 0.0;
  const MultibodyRunStats stats =
      simulate_multibody(model, x, o, [&](double, const Vector& xt, double) {
        const Matrix J = model.constraint_jacobian(xt.head(5));
        worst_velocity = std::max(worst_velocity, (J * xt.tail(5)).norm());
        const Vector s = Eigen::JacobiSVD<Matrix>(J).singularValues();
        worst_rank_gap = std::min(worst_rank_gap, s[3] / s[0]);
        worst_null = std::max(worst_null, s[4] / s[0]);
      });
  EXPECT_LT(stats.constraint_residual, 1e-13);  // measured 6.0e-15 (m)
  EXPECT_LT(worst_velocity, 1e-12);             // measured 4.3e-15 (m/s)
  EXPECT_GT(worst_rank_gap, 0.4);               // rank 4 all along: measured min s_4 / s_1 0.5
  EXPECT_LT(worst_null, 1e-14);                 // measured max s_5 / s_1 1.5e-16
  const double scale = potential_drop(model);
  EXPECT_NEAR(scale, 4.55284, 1e-5);                      // measured 4.552837
  EXPECT_LT(stats.energy_balance_error / scale, 1e-6);    // the bar; measured 1.1e-8
  EXPECT_GE(stats.cvode.projections, stats.cvode.steps);  // one per step (and per retry)
}

TEST(Bricard, BenchmarkPrecisionIsReachedAtModestTolerances) {
  // P3 at rtol = atol = 1e-8 (and 1e-6) against a 1e-12 run at the same output times: the
  // benchmark's high-precision bar is 1e-3 on the reference point.
  const Bricard model;
  const auto reference = run(model, model.initial_state(), 10.0, 0.01, 1e-12, no_torque);
  for (const double tol : {1e-6, 1e-8}) {
    const auto coarse = run(model, model.initial_state(), 10.0, 0.01, tol, no_torque);
    ASSERT_EQ(coarse.size(), reference.size());
    double worst = 0.0;
    for (std::size_t j = 0; j < coarse.size(); ++j)
      worst = std::max(worst,
                       (model.p3(coarse[j].x.head(5)) - model.p3(reference[j].x.head(5))).norm());
    EXPECT_LT(worst, tol == 1e-6 ? 1e-4 : 1e-6) << tol;  // measured 6.4e-7 and 6.9e-9 m
  }
}

TEST(Bricard, P3MotionIsPeriodic) {
  const Bricard model;
  const auto samples = run(model, model.initial_state(), 10.0, 0.01, 1e-11, no_torque);
  // theta_A swings between 0 and pi: it crosses pi/2 at T/4 + k T/2.
  const std::vector<double> times = crossings(samples, kPi / 2);
  ASSERT_GE(times.size(), 4u);
  const double T = 2.0 * (times.back() - times.front()) / static_cast<double>(times.size() - 1);
  for (std::size_t k = 0; k < times.size(); ++k)
    EXPECT_NEAR(times[k], T / 4 + k * T / 2, 1e-8) << k;  // measured 1.5e-10 s; T = 4.99171 s
  // P3(t + T) = P3(t) over the horizon, and it returns to its start at rest.
  double worst = 0.0;
  for (const auto& s : samples) {
    if (s.t + T > samples.back().t) break;
    worst =
        std::max(worst, (model.p3(interpolate(samples, s.t + T)) - model.p3(s.x.head(5))).norm());
  }
  EXPECT_LT(worst, 1e-8);  // m; measured 4.1e-10
  EXPECT_TRUE(matrices_near(model.p3(interpolate(samples, T)), Vec3(1, -1, 0), 1e-8));  // 1.2e-10
  // The range of P3: from (1, -1, 0) through (0, -sqrt 3/2, -1/2) at the equilibrium to the
  // mirror point (-1, -1, 0).
  EXPECT_TRUE(matrices_near(model.p3(interpolate(samples, T / 2)), Vec3(-1, -1, 0), 1e-8));
  EXPECT_TRUE(matrices_near(model.p3(interpolate(samples, T / 4)),
                            Vec3(0, -std::sqrt(3.0) / 2, -0.5), 1e-8));
  // measured 2.9e-10 and 1.6e-10
}

TEST(Bricard, PeriodAgreesWithTheEnergyQuadrature) {
  // T = 4 int_0^{pi/2} sqrt(m_eff(s) / (2 (V(0) - V(s)))) ds on the closed-form curve, m_eff
  // and V from the independent kinematics; s = sigma^2 removes the 1/sqrt(s) of the start at
  // rest. Against the period of the integrated run.
  Vector sigma, w;
  gauss_legendre(40, 0.0, std::sqrt(kPi / 2), sigma, w);
  const double v0 = reference_potential(curve(0.0));
  double quadrature = 0.0;
  for (Index k = 0; k < sigma.size(); ++k) {
    const double s = sigma[k] * sigma[k];
    const double m_eff = 2.0 * reference_kinetic_energy([&](double tau) { return curve(s + tau); });
    quadrature +=
        w[k] * 2.0 * sigma[k] * std::sqrt(m_eff / (2.0 * (v0 - reference_potential(curve(s)))));
  }
  quadrature *= 4.0;

  const Bricard model;
  const auto samples = run(model, model.initial_state(), 10.0, 0.01, 1e-11, no_torque);
  const std::vector<double> times = crossings(samples, kPi / 2);
  ASSERT_GE(times.size(), 4u);
  const double T = 2.0 * (times.back() - times.front()) / static_cast<double>(times.size() - 1);
  // 40 nodes: quadrature 4.9917115134 s; measured relative difference 3.9e-11.
  EXPECT_TRUE(scalars_near(T, quadrature, 1e-8, testing::Compare::relative));
}

TEST(Bricard, EquilibriumIsTheMinimumOfThePotentialOnTheCurve) {
  const Bricard model;
  const Vector eq = model.equilibrium();
  EXPECT_TRUE(matrices_near(eq, curve(kPi / 2), 1e-13));  // theta_B = -pi/6; measured 4.4e-16
  EXPECT_LT(std::abs(model.potential_slope(eq)), 1e-12);  // measured 1.3e-15 N m
  // V'' against second differences of the independent V on the closed form (which checks the
  // curvature term), m_eff against the independent kinetic energy.
  constexpr double h = 1e-3;
  double v[5];
  for (int j = -2; j <= 2; ++j) v[j + 2] = reference_potential(curve(kPi / 2 + j * h));
  const double second = (-v[0] + 16 * v[1] - 30 * v[2] + 16 * v[3] - v[4]) / (12 * h * h);
  // V'' = 2.83190 N m (the differences' rounding: about 30 J eps / h^2 = 7e-9); measured 4.1e-9.
  EXPECT_TRUE(
      scalars_near(model.potential_curvature(eq), second, 5e-8, testing::Compare::relative));
  const double m_eff =
      2.0 * reference_kinetic_energy([&](double tau) { return curve(kPi / 2 + tau); });
  // m_eff = 1.8379167 kg m^2; measured 2.6e-13.
  EXPECT_TRUE(scalars_near(model.effective_mass(eq), m_eff, 1e-10, testing::Compare::relative));
  // The lowest V on the swing 0 <= theta_A <= pi of the closed form.
  for (int k = 0; k <= 100; ++k)
    EXPECT_GE(reference_potential(curve(kPi * k / 100)), model.potential_energy(eq) - 1e-13) << k;
  // P3 there, and its slope (x only: y and z of P3 are stationary).
  EXPECT_TRUE(matrices_near(model.p3(eq), Vec3(0, -std::sqrt(3.0) / 2, -0.5), 1e-14));
  const SecondOrderSystem lin = model.linearised();
  validate(lin);
  EXPECT_TRUE(matrices_near(Vec3(Matrix(lin.Cp).col(0)), model.p3_slope(eq), 0.0));
  EXPECT_EQ(lin.n(), 1);
  EXPECT_EQ(lin.n_inputs(), 1);
  EXPECT_EQ(lin.n_outputs(), 3);
}

/// Linear response to tau = a sin(Omega t) from rest: q = a (sin Omega t - (Omega / w0)
/// sin w0 t) / (m (w0^2 - Omega^2)).
double linear_response(double a, double m, double k, double Omega, double t) {
  const double w0 = std::sqrt(k / m);
  return a * (std::sin(Omega * t) - Omega / w0 * std::sin(w0 * t)) /
         (m * (w0 * w0 - Omega * Omega));
}

TEST(Bricard, LinearAndNonlinearDifferToSecondOrder) {
  // Torque a sin(t) at joint A from rest at the equilibrium, 5 s; the relative rms difference
  // of P3 - P3* (nonlinear) and Cp q (linear) falls like a: the curve's curvature and V''' give
  // quadratic terms.
  const Bricard model;
  const SecondOrderSystem lin = model.linearised();
  const double m = Matrix(lin.M)(0, 0), k = Matrix(lin.K)(0, 0);
  const Vec3 Cp = Matrix(lin.Cp).col(0);
  Vector x0 = Vector::Zero(10);
  x0.head(5) = model.equilibrium();
  const Vec3 p_star = model.p3(x0.head(5));
  auto difference = [&](double a) {
    const auto samples =
        run(model, x0, 5.0, 0.05, 1e-11, [a](double t) { return a * std::sin(t); });
    double err2 = 0.0, ref2 = 0.0;
    for (const auto& s : samples) {
      const Vec3 y_lin = Cp * linear_response(a, m, k, 1.0, s.t);
      err2 += (model.p3(s.x.head(5)) - p_star - y_lin).squaredNorm();
      ref2 += y_lin.squaredNorm();
    }
    return std::sqrt(err2 / ref2);
  };
  const double d1 = difference(0.04), d2 = difference(0.02), d3 = difference(0.01);
  // Measured d = 6.9e-3, 3.45e-3, 1.73e-3: ratios 2.0001 and 2.0000.
  EXPECT_GT(d1 / d2, 1.7);
  EXPECT_LT(d1 / d2, 2.3);
  EXPECT_GT(d2 / d3, 1.7);
  EXPECT_LT(d2 / d3, 2.3);
  EXPECT_LT(d3, 0.01) << d3;
}

TEST(Bricard, LinearFrequencyIsTheSmallSwingFrequency) {
  // Release at rest from theta_A = pi/2 + 0.02 on the curve: the period of the small swing
  // against 2 pi / sqrt(K / M) (measured eigenvalues +-1.2413 i).
  const Bricard model;
  const SecondOrderSystem lin = model.linearised();
  const double omega = std::sqrt(Matrix(lin.K)(0, 0) / Matrix(lin.M)(0, 0));
  EXPECT_NEAR(omega, 1.24130, 1e-5);  // measured 1.2412987 rad/s
  const Vector eq = model.equilibrium();
  Vector x0 = Vector::Zero(10);
  x0.head(5) = model.curve_point(eq[0] + 0.02, eq);
  const auto samples = run(model, x0, 12.0, 0.01, 1e-11, no_torque);
  const std::vector<double> times = crossings(samples, eq[0]);
  ASSERT_GE(times.size(), 4u);
  const double T = 2.0 * (times.back() - times.front()) / static_cast<double>(times.size() - 1);
  // 5.06193 s against 5.06178 s: measured 2.9e-5 (the amplitude's O(a^2) shift).
  EXPECT_TRUE(scalars_near(T, 2 * kPi / omega, 0.01, testing::Compare::relative));
}

TEST(Bricard, BadParametersAreNamed) {
  auto message = [](const BricardParameters& p) {
    try {
      Bricard model(p);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  EXPECT_NE(message({0.0, 1.0, 0.1, 9.81}).find("mass = 0"), std::string::npos);
  EXPECT_NE(message({1.0, -1.0, 0.1, 9.81}).find("length = -1"), std::string::npos);
  EXPECT_NE(message({1.0, 1.0, 1.5, 9.81}).find("side = 1.5"), std::string::npos);
  EXPECT_NE(message({1.0, 1.0, 0.1, std::nan("")}).find("gravity = nan"), std::string::npos);
  const Bricard model;
  Vector x(3);
  EXPECT_THROW(model.energy(x), InvalidArgument);
  EXPECT_THROW(model.curve_point(std::nan(""), Vector::Zero(5)), InvalidArgument);
}

}  // namespace
}  // namespace mor
