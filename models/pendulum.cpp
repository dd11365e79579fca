// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/pendulum.hpp"

#include <cmath>
#include <numbers>

#include "src/core/elliptic.hpp"
#include "src/core/errors.hpp"

namespace mor {

Pendulum::Pendulum(const PendulumParameters& p) : p_(p) {
  require(std::isfinite(p.mass) && p.mass > 0.0, "pendulum: mass = ", p.mass, " must be > 0");
  require(std::isfinite(p.length) && p.length > 0.0, "pendulum: length = ", p.length,
          " must be > 0");
  require(std::isfinite(p.gravity) && p.gravity > 0.0, "pendulum: gravity = ", p.gravity,
          " must be > 0");
}

double Pendulum::natural_frequency() const {
  return std::sqrt(p_.gravity / p_.length);
}

void Pendulum::rhs(const Vector& x, double torque, Vector& xdot) const {
  const double inertia = p_.mass * p_.length * p_.length;
  xdot.resize(2);
  xdot[0] = x[1];
  xdot[1] = (torque - p_.mass * p_.gravity * p_.length * std::sin(x[0])) / inertia;
}

void Pendulum::jacobian(const Vector& x, Matrix& J) const {
  J.resize(2, 2);
  J << 0.0, 1.0, -p_.gravity / p_.length * std::cos(x[0]), 0.0;
}

Eigen::Vector2d Pendulum::point(double phi) const {
  return {p_.length * std::sin(phi), -p_.length * std::cos(phi)};
}

double Pendulum::energy(const Vector& x) const {
  return 0.5 * p_.mass * p_.length * p_.length * x[1] * x[1] -
         p_.mass * p_.gravity * p_.length * std::cos(x[0]);
}

namespace {
void check_release_angle(double phi0) {
  require(std::isfinite(phi0) && phi0 != 0.0 && std::abs(phi0) < std::numbers::pi,
          "pendulum: the release angle phi0 = ", phi0, " must satisfy 0 < |phi0| < pi");
}
}  // namespace

double Pendulum::exact_angle(double phi0, double t) const {
  check_release_angle(phi0);
  require(std::isfinite(t), "pendulum: the time t = ", t, " must be finite");
  const double k = std::sin(0.5 * std::abs(phi0));
  const double K = std::comp_ellint_1(k);
  const double s = jacobi_elliptic(K + natural_frequency() * t, k * k).sn;
  return 2.0 * std::asin(std::copysign(k, phi0) * s);
}

double Pendulum::period(double phi0) const {
  check_release_angle(phi0);
  return 4.0 * std::comp_ellint_1(std::sin(0.5 * std::abs(phi0))) / natural_frequency();
}

Vector Pendulum::initial_state() const {
  Vector x(2);
  x << -std::numbers::pi / 2, 0.0;
  return x;
}

void Pendulum::rhs(double, const Vector& x, Vector& xdot) const {
  rhs(x, 0.0, xdot);
}

bool Pendulum::jacobian(double, const Vector& x, Matrix& J) const {
  jacobian(x, J);
  return true;
}

void Pendulum::outputs(double, const Vector& x, Vector& y) const {
  const Eigen::Vector2d p1 = point(x[0]);
  y.resize(2);
  y[0] = p1.x();
  y[1] = p1.y();
}

bool Pendulum::exact_outputs(double t, Vector& y) const {
  Vector x(2);
  x << exact_angle(initial_state()[0], t), 0.0;
  outputs(t, x, y);
  return true;
}

Eigen::Matrix3Xd Pendulum::points(const Vector& x) const {
  Eigen::Matrix3Xd P = Eigen::Matrix3Xd::Zero(3, 2);  // pivot, P1 (the plane z = 0)
  P.col(1).head<2>() = point(x[0]);
  return P;
}

std::optional<MultibodyModel::LinearisationPoint> Pendulum::linearisation_point() const {
  LinearisationPoint lp;
  lp.x = Vector::Zero(2);
  lp.rhs = [this](double, const Vector& x, const Vector& u, Vector& xdot) { rhs(x, u[0], xdot); };
  lp.outputs = [this](const Vector& x, Vector& y) {
    y.resize(1);
    y[0] = point(x[0]).x();
  };
  return lp;
}

SecondOrderSystem Pendulum::linearised() const {
  auto scalar = [](double value) {
    SparseMatrix A(1, 1);
    if (value != 0.0) A.insert(0, 0) = value;
    A.makeCompressed();
    return A;
  };
  SecondOrderSystem sys;
  sys.M = scalar(p_.mass * p_.length * p_.length);
  sys.D = scalar(0.0);
  sys.K = scalar(p_.mass * p_.gravity * p_.length);
  sys.B = scalar(1.0);
  sys.Cp = scalar(p_.length);
  sys.Cv = scalar(0.0);
  return sys;
}

}  // namespace mor
