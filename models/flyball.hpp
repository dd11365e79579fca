// SPDX-License-Identifier: GPL-3.0-or-later
// MBS benchmark A05, the stiff flyball governor (IFToMM library of computational benchmarks;
// Gonzalez, Dopico, Lugris & Cuadrado, Multibody System Dynamics 16 (2006) 179-190): Watt's
// governor with the coupler rods replaced by stiff spring-dampers.
//
// Bodies (frame of the shaft: z its axis, x through the hinges; gravity g along -z):
//  - shaft, a cuboid of length H along z from z = 0 to H and square cross-section w_s, free to
//    rotate about z (not driven); the rod hinges sit at (+-h, 0, H) on a massless crossbar;
//  - two rods, cuboids of length L and square cross-section w_r, hinged at (+-h, 0, H) with
//    axes along y, each at the angle alpha_i below the horizontal, pointing outward; a point
//    mass m_p at each far end;
//  - the slider, a cube of edge a sliding along the shaft and turning with it, its centre at
//    height s (the shaft's hole is not subtracted);
//  - two spring-dampers (K, C, rest length l_0) from each rod's midpoint to the slider's side
//    point (+-a/2, 0, s): l_i^2 = (L/2 cos alpha_i + h - a/2)^2 + (H - L/2 sin alpha_i - s)^2.
// Shaft, rods and slider have density rho (cuboid inertias about their centres).
//
// Minimal coordinates q = (theta, alpha_1, alpha_2, s), theta the shaft's angle about z; state
// x = [q; q'] (size 8). Each rod moves in the plane through the axis, so with omega = theta',
//   T = I(alpha) omega^2 / 2 + J (alpha_1'^2 + alpha_2'^2) / 2 + m_s s'^2 / 2,
//   I(alpha) = I_0 + sum_i I_r(alpha_i),   I_0 = the shaft's and the slider's inertia about z,
//   I_r(alpha) = m_r rho_c^2 + I_u sin^2 alpha + I_p cos^2 alpha + m_p rho_e^2,
//   rho_c = h + L/2 cos alpha, rho_e = h + L cos alpha (distances of the rod's centre and end
//   from the axis), I_u = m_r w_r^2 / 6, I_p = m_r (L^2 + w_r^2) / 12 (the rod's central
//   inertias about its axis and across it), J = m_r L^2 / 3 + m_r w_r^2 / 12 + m_p L^2.
// The mass matrix diag(I(alpha), J, J, m_s) has no coupling between omega and the other
// velocities, so Lagrange's equations (Q_i = -f_i dl_i/dq, f_i = K (l_i - l_0) + C l_i' the
// force of spring-damper i, positive in tension; F an axial force on the slider, upward) read
//   d/dt (I omega) = 0                     (theta is cyclic: p = I omega is conserved),
//   J alpha_i'' = I_r'(alpha_i) omega^2 / 2 + G cos alpha_i - f_i dl_i/dalpha_i,
//   m_s s''     = -m_s g - sum_i f_i dl_i/ds + F,          G = (m_r L/2 + m_p L) g.
// E = T + V, V = gravity (m g height of every centre of mass; the shaft's is constant) plus
// sum_i K (l_i - l_0)^2 / 2; the dampers' power is P = -C sum_i l_i'^2 (plus F s').
//
// The benchmark: alpha_i = 30 deg, s = 0.5 m (the springs start unloaded: l_i = 0.5 m = l_0),
// omega = 2 pi rad/s, at rest otherwise, 10 s; output s. The springs are very stiff (their
// modes reach 5e3 1/s against the swing's 6 rad/s), so the preferred method is BDF with the
// analytic Jacobian below.
//
// Linearisation about the steady rotation (a relative equilibrium). A shaft torque tau only
// changes p (p' = tau, an integrator: a pole at 0 in any model that keeps theta or omega as a
// coordinate, which balanced truncation cannot handle), so theta is removed by Routh's reduction:
// for fixed p the coordinates r = (alpha_1, alpha_2, s) move in the effective potential V_p(r) =
// V(r) + p^2 / (2 I(alpha)). There are no gyroscopic terms: they come from the mass matrix's
// coupling of omega with r', which is zero (the rods swing in the plane through the axis,
// orthogonal to the rotation). With p_0 = I(alpha(0)) 2 pi, the benchmark's angular momentum, and
// r* the minimum of V_{p_0} (found by Newton), the deviations dr obey
//   M dr'' + D dr' + K dr = B u,   y = ds,
//   M = diag(J, J, m_s),  D = C sum_i grad l_i grad l_i^T,  K = Hessian of V_{p_0} at r*,
// with the inputs u_1 = F, the axial force on the slider (a governor's throttle linkage), and
// u_2 = dp, the deviation of the shaft's angular momentum, i.e. the integral of the shaft
// torque (so a torque enters at second order through its impulse; B's column is
// -d grad V_p / dp = p_0 grad I / I^2). For the benchmark's data: p_0 = 53.87 N m s,
// alpha* = 22.86 deg, s* = 0.6114 m, omega* = 5.587 rad/s; eigenvalues -8.7e-6 +- 6.136i (the
// swing, hardly damped since it keeps the springs' lengths to first order), -20.1 and -20.4
// (the springs creeping against their dampers), -985 and -5013 (the springs' fast modes): the
// stiffness ratio of the nonlinear model.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/multibody.hpp"
#include "src/core/types.hpp"
#include "src/systems/lti.hpp"

namespace mor {

struct FlyballParameters {
  double shaft_length = 1.0;                  ///< H, m (the hinges are at its top)
  double shaft_width = 0.01;                  ///< w_s, m (square cross-section)
  double rod_length = 1.0;                    ///< L, m
  double rod_width = 0.01;                    ///< w_r, m (square cross-section)
  double slider_size = 0.1;                   ///< a, m (cube edge)
  double hinge_offset = 0.05;                 ///< h, m: the hinges' distance from the axis
  double density = 3000.0;                    ///< rho, kg/m^3 (shaft, rods and slider)
  double point_mass = 5.0;                    ///< m_p, kg (at each rod's far end)
  double stiffness = 8e5;                     ///< K, N/m
  double damping = 4e4;                       ///< C, N s/m
  double rest_length = 0.5;                   ///< l_0, m
  double gravity = 9.81;                      ///< g, m/s^2
  double initial_angle = 0.5235987755982988;  ///< alpha_i(0), rad (30 degrees)
  double initial_height = 0.5;                ///< s(0), m
  double initial_speed = 6.283185307179586;   ///< omega(0), rad/s (2 pi)
};

class Flyball final : public MultibodyModel {
 public:
  /// @throws InvalidArgument naming a non-finite or out-of-range parameter (lengths, masses,
  ///         K, g > 0; C, h >= 0; 0 < alpha(0) < pi/2; 0 < s(0) < H; omega(0) finite).
  explicit Flyball(const FlyballParameters& p = {});

  const FlyballParameters& parameters() const { return p_; }
  double rod_mass() const { return m_rod_; }        ///< m_r, kg
  double slider_mass() const { return m_slider_; }  ///< m_s, kg
  double swing_inertia() const { return j_; }       ///< J, kg m^2 (a rod and its mass)

  /// xdot = f(x) for x = [theta, alpha_1, alpha_2, s, theta', alpha_1', alpha_2', s'] (size 8)
  /// with the axial force F (N, upward) on the slider.
  void rhs(const Vector& x, double slider_force, Vector& xdot) const;
  /// df/dx (8 x 8; F does not enter).
  void jacobian(const Vector& x, Matrix& J) const;

  /// I(alpha), kg m^2: the moment of inertia of everything about the axis.
  double axial_inertia(double alpha1, double alpha2) const;
  /// p = I(alpha) theta', the angular momentum about the axis, N m s.
  double angular_momentum(const Vector& x) const;
  /// l_1, l_2, m: the spring-dampers' lengths.
  Eigen::Vector2d spring_lengths(const Vector& x) const;
  /// E = T + V, J.
  double energy(const Vector& x) const override;
  /// -C (l_1'^2 + l_2'^2), W (no slider force in the benchmark).
  double power(double t, const Vector& x) const override;

  /// The relative equilibrium of the linearisation (see the file comment).
  struct SteadyRotation {
    Eigen::Vector3d r;     ///< (alpha_1, alpha_2, s) = r*
    double momentum = 0;   ///< p_0, N m s
    double speed = 0;      ///< p_0 / I(alpha*), rad/s
    int newton_steps = 0;  ///< Newton iterations taken
  };
  /// The minimum of V_p by Newton's method (line search on V_p) from the benchmark's initial
  /// position, p the benchmark's angular momentum (default) or the one given.
  /// @throws InvalidArgument for a non-finite p; NumericalError if Newton does not converge or
  ///         ends at a non-minimum or with the slider off the shaft (p too small to hold the
  ///         balls out, e.g. p = 0).
  SteadyRotation steady_rotation(std::optional<double> momentum = std::nullopt) const;
  /// -grad V_p at r = (alpha_1, alpha_2, s), the generalised forces on r at rest with the
  /// angular momentum p (zero at r*).
  Eigen::Vector3d effective_force(const Eigen::Vector3d& r, double momentum) const;
  /// The Hessian of V_p at r (the linearisation's K at r*).
  Eigen::Matrix3d effective_stiffness(const Eigen::Vector3d& r, double momentum) const;

  /// The linearisation about the steady rotation (see the file comment): n = 3 (alpha_1,
  /// alpha_2, s), inputs (F, dp), output s.
  SecondOrderSystem linearised() const override;

  // MultibodyModel: the benchmark run (10 s, no slider force), output s.
  std::string_view id() const override { return "flyball"; }
  std::string title() const override { return "A05 stiff flyball governor"; }
  Index state_size() const override { return 8; }
  Vector initial_state() const override;
  double horizon() const override { return 10.0; }
  CvodeMethod preferred_method() const override { return CvodeMethod::bdf; }
  void rhs(double t, const Vector& x, Vector& xdot) const override;
  bool jacobian(double t, const Vector& x, Matrix& J) const override;
  std::vector<std::string> output_names() const override { return {"s"}; }
  void outputs(double t, const Vector& x, Vector& y) const override;
  /// Shaft ends (0, 1); hinges (2, 3); rod ends, the point masses (4, 5); rod midpoints (6, 7);
  /// slider side points (8, 9); slider centre (10); the slider's corners (11-18).
  Eigen::Matrix3Xd points(const Vector& x) const override;
  std::vector<std::pair<int, int>> segments() const override;
  std::vector<std::string> linear_input_names() const override {
    return {"slider_force", "angular_momentum"};
  }
  std::vector<std::string> linear_output_names() const override { return {"s"}; }
  /// At r* turning at p_0 / I(alpha*). u_1 is the slider force; u_2 prescribes the angular
  /// momentum p_0 + u_2, from which this rhs takes the shaft speed (p_0 + u_2) / I(alpha), so
  /// x's theta' is not used (its derivative is returned as 0). Output s.
  std::optional<LinearisationPoint> linearisation_point() const override;

 private:
  /// The rhs with the shaft speed omega given apart from x (the momentum-driven case).
  void rhs(const Vector& x, double omega, double slider_force, Vector& xdot) const;
  /// V_p(r), J.
  double effective_potential(const Eigen::Vector3d& r, double momentum) const;
  /// I_r(alpha) and its first two derivatives.
  Eigen::Vector3d rod_inertia(double alpha) const;

  FlyballParameters p_;
  double m_rod_, m_slider_, m_shaft_;
  double inertia_0_;  ///< I_0: shaft and slider about the axis
  double inertia_u_, inertia_p_;
  double j_;
};

}  // namespace mor
