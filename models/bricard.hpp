// SPDX-License-Identifier: GPL-3.0-or-later
// MBS benchmark A04, Bricard's mechanism (IFToMM library of computational benchmarks; Gonzalez,
// Dopico, Lugris & Cuadrado, Multibody System Dynamics 16 (2006) 179-190; R. Bricard, Memoire
// sur la theorie de l'octaedre articule, J. Math. Pures Appl. 1897): five rods of mass m, length
// L and square cross-section b x b, six revolute joints, the ground closing the loop; gravity g
// along -y. Grubler's count gives 0 degrees of freedom, the particular axes leave 1: the
// constraints are redundant everywhere. At rest in the benchmark's initial configuration
//   joint A (0,0,0) axis y (ground), B (L,0,0) axis z, C (L,-L,0) axis x (the point P3),
//   D (L,-L,L) axis y, E (0,-L,L) axis z, F (0,0,L) axis x (ground),
// rods A-B, B-C, C-D, D-E, E-F, it swings for 10 s. Rod inertia about its centre: m (b^2 + b^2)
// / 12 about its own axis, m (L^2 + b^2) / 12 about any transverse one (the square section makes
// the transverse inertia isotropic).
//
// Coordinates: theta = (theta_A, ..., theta_E), the relative rotations of the open chain
// ground -A- rod 1 -B- rod 2 -C- rod 3 -D- rod 4 -E- rod 5, counter-clockwise about the joint
// axes, theta = 0 the initial configuration. Rod i turns by R_i = R_{i-1} Rot(a_i, theta_i)
// (a_i the joint's axis in the initial configuration), about the current axis w_i = R_{i-1} a_i.
// The loop is closed at F by five constraint equations
//   Phi(theta) = [ p_F(theta) - (0, 0, L);  e_y . u(theta);  e_z . u(theta) ] = 0,
// p_F the end of rod 5, u = R_5 e_x the axis of joint F fixed in rod 5. Phi_theta (5 x 5) has
// rank 4 on the manifold Phi = 0 (its fifth singular value is rounding, the fourth O(1)): its
// null space is the tangent n of the one-dimensional configuration curve.
//
// Equations of motion (Lagrange's first kind, redundant multipliers):
//   M(theta) theta'' + h(theta, theta') = Q_g(theta) + e_A tau + Phi_theta^T lambda,
//   Phi_theta theta'' = gamma(theta, theta') = -(Phi_theta theta')' at theta'' = 0,
// M = sum_i m Jv_i^T Jv_i + Jw_i^T I_i Jw_i from the centre-of-mass and angular-velocity
// Jacobians, h = sum_i m Jv_i^T a_i + Jw_i^T (I_i alpha_i + omega_i x I_i omega_i) with the
// accelerations a_i, alpha_i of a forward pass at theta'' = 0, Q_g = -dV/dtheta, V = sum m g y_i,
// tau a torque at joint A (0 in the benchmark). lambda is not unique, theta'' is. With the SVD
// Phi_theta = U S V^T truncated to rank 4 (the mechanism's mobility is known to be 1; a fourth
// singular value below kRankTolerance times the first is a singular configuration and throws
// NumericalError) and n = V e_5,
//   theta'' = Phi_theta^+ gamma + n a,
//   a = n^T (Q_g + e_A tau - h - M Phi_theta^+ gamma) / (n^T M n).
// Off the manifold (CVODE's stages) the same formula is the least-squares extension. The state
// is x = [theta; theta'] (10). project() brings theta back onto Phi = 0 by Gauss-Newton with
// minimum-norm corrections and theta' onto the tangent by the M-orthogonal projection
// theta' <- n (n^T M theta') / (n^T M n). E = T + V (V = 0 at y = 0) is conserved.
//
// The configuration curve (observed on the model and checked to rounding against independent
// kinematics in the tests): theta_C = theta_E = theta_A, theta_D = theta_B and
// sin theta_B = -sin theta_A / (1 + sin theta_A). From rest at theta = 0 (V = -3 m g L) the
// mechanism swings to the mirror configuration theta_A = pi (same V) and back, through the
// minimum of V, theta* = (pi/2, -pi/6, pi/2, -pi/6, pi/2) with V = -2 sqrt(3) m g L and
// P3 = (0, -sqrt(3)/2, -1/2) L; theta_A folds back (n_A = 0) at theta_A = -pi/6 and 7 pi/6,
// outside the swing.
//
// The 1-DOF reduction used for the linearisation, parametrised by s = theta_A (n scaled to
// n_A = 1): m_eff(s) = n^T M n, V'(s) = -Q_g^T n, and V''(s) = -Q_g^T theta_ss + sum m g
// (a_i)_y with a_i the forward pass at theta' = n, where theta_ss (theta_ss,A = 0) solves
// Phi_theta theta_ss = gamma(theta, n): the curvature of the configuration curve. The stable
// equilibrium theta* is the minimum of V on the curve (arc-length continuation around the
// whole closed curve, then Newton on V'(s) = 0); about it
//   M = m_eff(s*), D = 0, K = V''(s*), B = 1 (torque at A), y = Cp q,
// q = theta_A - s*, Cp = dP3/ds (3 x 1: x, y, z of P3 = C; only x is nonzero, P3's y and z are
// stationary at theta*). For the benchmark's data m_eff = 1.837917 kg m^2, K = 2.831903 N m,
// eigenvalues +-1.241299 i rad/s.
#pragma once

#include <Eigen/Core>
#include <array>

#include "models/multibody.hpp"
#include "src/core/types.hpp"
#include "src/systems/lti.hpp"

namespace mor {

struct BricardParameters {
  double mass = 1.0;      ///< m, kg, each rod
  double length = 1.0;    ///< L, m, each rod (and the ground link F-A)
  double side = 0.1;      ///< b, m, the side of the rods' square cross-section
  double gravity = 9.81;  ///< g, m/s^2 (the benchmark's value)
};

class Bricard final : public MultibodyModel {
 public:
  /// Number of joint coordinates theta (and of constraint equations).
  static constexpr Index kCoordinates = 5;
  /// Singular values of Phi_theta below this fraction of the largest count as zero.
  static constexpr double kRankTolerance = 1e-8;

  /// @throws InvalidArgument naming a non-positive or non-finite parameter, or b >= L.
  explicit Bricard(const BricardParameters& p = {});

  const BricardParameters& parameters() const { return p_; }

  // --- kinematics and constraints (theta: size 5) -------------------------------------------
  /// The joint points A, B, C, D, E and the end F of rod 5 (3 x 6, m).
  Eigen::Matrix<double, 3, 6> joint_points(const Vector& theta) const;
  /// P3 = C (m).
  Eigen::Vector3d p3(const Vector& theta) const;
  /// Phi(theta) (5): the closure at F, m and (for the axis) dimensionless.
  Vector constraints(const Vector& theta) const;
  /// Phi_theta (5 x 5).
  Matrix constraint_jacobian(const Vector& theta) const;
  /// The unit null vector of Phi_theta (its last right singular vector), signed so that its
  /// largest entry in magnitude is positive (the first of them where several are equal to within
  /// a relative 1e-8).
  Vector tangent(const Vector& theta) const;

  // --- dynamics -------------------------------------------------------------------------------
  /// M(theta) (5 x 5, kg m^2).
  Matrix mass_matrix(const Vector& theta) const;
  /// h(theta, theta') (5, N m): the velocity-product (Coriolis, centrifugal, gyroscopic) terms.
  Vector velocity_forces(const Vector& theta, const Vector& dtheta) const;
  /// Q_g = -dV/dtheta (5, N m).
  Vector gravity_forces(const Vector& theta) const;
  /// T = theta'^T M theta' / 2 and V = sum m g y_i (J) for x = [theta; theta'] and theta.
  double kinetic_energy(const Vector& x) const;
  double potential_energy(const Vector& theta) const;
  /// xdot = [theta'; theta''] with a torque tau at joint A (N m), see the file comment.
  /// @throws NumericalError at a singular configuration (rank of Phi_theta below 4).
  void rhs(const Vector& x, double torque, Vector& xdot) const;

  // --- the configuration curve, parametrised by s = theta_A -----------------------------------
  /// The point of the curve with theta_A = s, by Newton from guess (near it).
  /// @throws NumericalError if Newton does not converge.
  Vector curve_point(double s, const Vector& guess) const;
  /// m_eff = n^T M n (kg m^2), dV/ds and d^2V/ds^2 (N m) along the curve at theta on it.
  /// @throws NumericalError where theta_A does not parametrise the curve (n_A = 0).
  double effective_mass(const Vector& theta) const;
  double potential_slope(const Vector& theta) const;
  double potential_curvature(const Vector& theta) const;
  /// dP3/ds along the curve (m/rad).
  Eigen::Vector3d p3_slope(const Vector& theta) const;
  /// theta* at the stable equilibrium (the minimum of V on the curve of the initial
  /// configuration).
  Vector equilibrium() const;
  /// The linearisation about theta* (see the file comment).
  SecondOrderSystem linearised() const override;

  // MultibodyModel: the benchmark run (at rest at theta = 0, 10 s, no torque), output P3.
  std::string_view id() const override { return "bricard"; }
  std::string title() const override { return "A04 Bricard mechanism"; }
  Index state_size() const override { return 2 * kCoordinates; }
  Vector initial_state() const override { return Vector::Zero(2 * kCoordinates); }
  double horizon() const override { return 10.0; }
  CvodeMethod preferred_method() const override { return CvodeMethod::bdf; }
  void rhs(double t, const Vector& x, Vector& xdot) const override;
  /// Gauss-Newton on Phi (to ||Phi|| <= 1e-14 L), then the M-orthogonal velocity projection.
  /// @throws NumericalError if Gauss-Newton does not converge or at a singular configuration.
  bool project(double t, Vector& x) const override;
  double constraint_residual(const Vector& x) const override;
  std::vector<std::string> output_names() const override { return {"P3_x", "P3_y", "P3_z"}; }
  void outputs(double t, const Vector& x, Vector& y) const override;
  double energy(const Vector& x) const override;
  Eigen::Matrix3Xd points(const Vector& x) const override;
  std::vector<std::pair<int, int>> segments() const override {
    return {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}};
  }
  std::vector<std::string> linear_input_names() const override { return {"joint_A_torque"}; }
  std::vector<std::string> linear_output_names() const override { return {"P3_x", "P3_y", "P3_z"}; }
  /// At rest at theta*; u the torque at joint A; outputs P3.
  std::optional<LinearisationPoint> linearisation_point() const override;

 private:
  struct Kinematics;
  /// Positions, Jacobians and inertias at theta; with dtheta also the velocities and the
  /// accelerations at theta'' = 0.
  void evaluate(const Vector& theta, const Vector* dtheta, Kinematics& k) const;
  /// Gauss-Newton with minimum-norm corrections from theta onto Phi = 0; k holds the result's
  /// kinematics. @throws NumericalError if it stagnates above rounding level.
  Vector close_loop(const Vector& theta, Kinematics& k) const;
  /// The tangent scaled to n_A = 1 (see the file comment).
  Vector curve_tangent(const Vector& theta) const;

  BricardParameters p_;
  Eigen::Matrix<double, 3, 6> joint0_;       ///< A..F in the initial configuration
  Eigen::Matrix<double, 3, 6> axis0_;        ///< the joint axes a_A..a_F there
  std::array<Eigen::Matrix3d, 5> inertia0_;  ///< rod inertias about their centres there
};

}  // namespace mor
