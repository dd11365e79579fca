// SPDX-License-Identifier: GPL-3.0-or-later
// MBS benchmark A01, the simple pendulum (IFToMM library of computational benchmarks; Gonzalez,
// Dopico, Lugris & Cuadrado, Multibody System Dynamics 16 (2006) 179-190): a point mass m on a
// massless rigid bar of length L, pivot at the origin, gravity g along -y. In the benchmark it
// starts horizontal at rest with P1 = (-L, 0) and swings for 10 s.
//
// One minimal coordinate: phi, the bar's angle from the downward vertical, counter-clockwise,
//   P1 = (L sin phi, -L cos phi),   m L^2 phi'' = -m g L sin phi + tau,
// tau a torque at the pivot (the input of the control system; 0 in the benchmark). The state
// is x = [phi; omega], omega = phi'. Energy T + V = m L^2 omega^2 / 2 - m g L cos phi (V = m g y,
// zero at the pivot's height), conserved for tau = 0.
//
// Exact solution for a release at rest from phi_0, 0 < |phi_0| < pi (D. F. Lawden, Elliptic
// Functions and Applications, Springer 1989):
//   sin(phi / 2) = sign(phi_0) k sn(K(k) + omega_0 t | k^2),  k = sin(|phi_0| / 2),
//   omega_0 = sqrt(g / L),  period 4 K(k) / omega_0;
// the benchmark's phi_0 = -pi/2 gives k^2 = 1/2.
//
// Linearised about the hanging equilibrium phi = 0 (and any small tau): M = m L^2, D = 0,
// K = m g L, B = 1 (pivot torque), output the horizontal position of P1, Cp = L (its vertical
// position is of second order); eigenvalues +-i sqrt(g / L).
#pragma once

#include <Eigen/Core>

#include "models/multibody.hpp"
#include "src/core/types.hpp"
#include "src/systems/lti.hpp"

namespace mor {

struct PendulumParameters {
  double mass = 1.0;      ///< m, kg (the point mass P1)
  double length = 1.0;    ///< L, m
  double gravity = 9.81;  ///< g, m/s^2 (the benchmark's value)
};

class Pendulum final : public MultibodyModel {
 public:
  /// @throws InvalidArgument naming a non-positive or non-finite parameter.
  explicit Pendulum(const PendulumParameters& p = {});

  const PendulumParameters& parameters() const { return p_; }
  /// omega_0 = sqrt(g / L), rad/s: the small-amplitude angular frequency.
  double natural_frequency() const;

  /// xdot = [omega; (tau - m g L sin phi) / (m L^2)] for x = [phi; omega].
  void rhs(const Vector& x, double torque, Vector& xdot) const;
  /// d xdot / dx (2 x 2).
  void jacobian(const Vector& x, Matrix& J) const;
  /// P1 = (L sin phi, -L cos phi).
  Eigen::Vector2d point(double phi) const;
  /// T + V (J).
  double energy(const Vector& x) const override;

  /// The exact angle at time t after a release at rest from phi0, 0 < |phi0| < pi.
  /// @throws InvalidArgument for phi0 outside that range or a non-finite t.
  double exact_angle(double phi0, double t) const;
  /// The exact period of the swing released at rest from phi0, 4 K(k) / omega_0.
  double period(double phi0) const;

  /// The linearisation about the hanging equilibrium (see the file comment).
  SecondOrderSystem linearised() const override;

  // MultibodyModel: the benchmark run (release at rest from phi0 = -pi/2, 10 s, no torque),
  // output P1 = (x, y).
  std::string_view id() const override { return "pendulum"; }
  std::string title() const override { return "A01 simple pendulum"; }
  Index state_size() const override { return 2; }
  Vector initial_state() const override;
  double horizon() const override { return 10.0; }
  CvodeMethod preferred_method() const override { return CvodeMethod::adams; }
  void rhs(double t, const Vector& x, Vector& xdot) const override;
  bool jacobian(double t, const Vector& x, Matrix& J) const override;
  std::vector<std::string> output_names() const override { return {"P1_x", "P1_y"}; }
  void outputs(double t, const Vector& x, Vector& y) const override;
  /// P1 of the exact solution (the elliptic functions).
  bool exact_outputs(double t, Vector& y) const override;
  Eigen::Matrix3Xd points(const Vector& x) const override;
  std::vector<std::pair<int, int>> segments() const override { return {{0, 1}}; }
  std::vector<std::string> linear_input_names() const override { return {"pivot_torque"}; }
  std::vector<std::string> linear_output_names() const override { return {"P1_x"}; }
  /// Hanging at rest; u the pivot torque; output P1's x.
  std::optional<LinearisationPoint> linearisation_point() const override;

 private:
  PendulumParameters p_;
};

}  // namespace mor
