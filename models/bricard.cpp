// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/bricard.hpp"

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <cmath>
#include <limits>
#include <numbers>

#include "src/core/errors.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec5 = Eigen::Matrix<double, 5, 1>;
using Mat5 = Eigen::Matrix<double, 5, 5>;
using Mat35 = Eigen::Matrix<double, 3, 5>;
/// The SVDs of the 5 x 5 and 5 x 4 Jacobians, LAPACK's dgesdd (src/linalg/lapack.hpp): Eigen's
/// fixed-size JacobiSVDs cost this file 12 s of compile (27.4 against 15.1 s) and bought no
/// speed (`mor run experiments/a04_bricard.toml` 0.506-0.524 s with them, 0.498-0.514 s with the
/// dynamic one, alternated, load 0.8, 2026-12-04).
using Svd = lapack::Svd;

constexpr int kRods = 5;
/// Gauss-Newton on Phi stops at ||Phi|| <= kClosureTolerance L (rounding is a few 1e-16 L)...
constexpr double kClosureTolerance = 1e-14;
/// ... and fails above kClosureFailure L once it stagnates.
constexpr double kClosureFailure = 1e-12;
constexpr int kMaxNewtonIterations = 50;

}  // namespace

struct Bricard::Kinematics {
  std::array<Mat3, kRods> R;        ///< rod rotations from the initial configuration
  std::array<Mat3, kRods> I;        ///< rod inertias about their centres, world frame
  Eigen::Matrix<double, 3, 6> p;    ///< joint points A..E and the end F of rod 5
  Eigen::Matrix<double, 3, 5> w;    ///< current joint axes A..E
  Eigen::Matrix<double, 3, 5> c;    ///< rod centres
  Vec3 u;                           ///< the axis of joint F fixed in rod 5
  std::array<Mat35, kRods> Jv, Jw;  ///< centre-velocity and angular-velocity Jacobians
  // With theta': velocities, and accelerations at theta'' = 0.
  std::array<Vec3, kRods> omega, alpha, a;
  Vec3 a_F;
};

Bricard::Bricard(const BricardParameters& p) : p_(p) {
  require(std::isfinite(p.mass) && p.mass > 0.0, "bricard: mass = ", p.mass, " must be > 0");
  require(std::isfinite(p.length) && p.length > 0.0, "bricard: length = ", p.length,
          " must be > 0");
  require(std::isfinite(p.side) && p.side > 0.0 && p.side < p.length, "bricard: side = ", p.side,
          " must be > 0 and below the length ", p.length);
  require(std::isfinite(p.gravity) && p.gravity > 0.0, "bricard: gravity = ", p.gravity,
          " must be > 0");
  const double L = p.length;
  joint0_.col(0) << 0.0, 0.0, 0.0;  // A
  joint0_.col(1) << L, 0.0, 0.0;    // B
  joint0_.col(2) << L, -L, 0.0;     // C = P3
  joint0_.col(3) << L, -L, L;       // D
  joint0_.col(4) << 0.0, -L, L;     // E
  joint0_.col(5) << 0.0, 0.0, L;    // F
  axis0_.col(0) = Vec3::UnitY();
  axis0_.col(1) = Vec3::UnitZ();
  axis0_.col(2) = Vec3::UnitX();
  axis0_.col(3) = Vec3::UnitY();
  axis0_.col(4) = Vec3::UnitZ();
  axis0_.col(5) = Vec3::UnitX();
  const double axial = p.mass * (2.0 * p.side * p.side) / 12.0;
  const double transverse = p.mass * (L * L + p.side * p.side) / 12.0;
  for (int i = 0; i < kRods; ++i) {
    const Vec3 d = (joint0_.col(i + 1) - joint0_.col(i)) / L;
    inertia0_[i] = axial * d * d.transpose() + transverse * (Mat3::Identity() - d * d.transpose());
  }
}

void Bricard::evaluate(const Vector& theta, const Vector* dtheta, Kinematics& k) const {
  require(theta.size() == kCoordinates, "bricard: theta has size ", theta.size(), ", expected ",
          kCoordinates);
  Mat3 R_prev = Mat3::Identity();
  k.p.col(0) = joint0_.col(0);
  for (int i = 0; i < kRods; ++i) {
    k.w.col(i) = R_prev * axis0_.col(i);
    k.R[i] = R_prev * Eigen::AngleAxisd(theta[i], axis0_.col(i)).toRotationMatrix();
    const Vec3 rod = k.R[i] * (joint0_.col(i + 1) - joint0_.col(i));
    k.p.col(i + 1) = k.p.col(i) + rod;
    k.c.col(i) = k.p.col(i) + 0.5 * rod;
    k.I[i] = k.R[i] * inertia0_[i] * k.R[i].transpose();
    R_prev = k.R[i];
  }
  k.u = k.R[kRods - 1] * axis0_.col(5);
  for (int i = 0; i < kRods; ++i) {
    k.Jv[i].setZero();
    k.Jw[i].setZero();
    for (int j = 0; j <= i; ++j) {
      k.Jw[i].col(j) = k.w.col(j);
      k.Jv[i].col(j) = k.w.col(j).cross(k.c.col(i) - k.p.col(j));
    }
  }
  if (dtheta == nullptr) return;
  require(dtheta->size() == kCoordinates, "bricard: theta' has size ", dtheta->size(),
          ", expected ", kCoordinates);
  // Forward pass at theta'' = 0: the axis w_i is fixed in rod i-1, so w_i' = omega_{i-1} x w_i;
  // the joint point p_i is fixed in rods i-1 and i.
  Vec3 omega = Vec3::Zero(), alpha = Vec3::Zero(), a_joint = Vec3::Zero();
  for (int i = 0; i < kRods; ++i) {
    const double rate = (*dtheta)[i];
    alpha += omega.cross(k.w.col(i)) * rate;
    omega += k.w.col(i) * rate;
    const Vec3 r = k.c.col(i) - k.p.col(i);
    const Vec3 rod = k.p.col(i + 1) - k.p.col(i);
    k.omega[i] = omega;
    k.alpha[i] = alpha;
    k.a[i] = a_joint + alpha.cross(r) + omega.cross(omega.cross(r));
    a_joint += alpha.cross(rod) + omega.cross(omega.cross(rod));
  }
  k.a_F = a_joint;
}

namespace {

Vec5 closure(const Eigen::Matrix<double, 3, 6>& joint0, const Vec3& p_F, const Vec3& u) {
  Vec5 phi;
  phi.head<3>() = p_F - joint0.col(5);
  phi[3] = u.y();  // the axis of F stays along e_x: its y and z components vanish
  phi[4] = u.z();
  return phi;
}

template <class K>
Mat5 closure_jacobian(const K& k) {
  Mat5 J;
  for (int j = 0; j < kRods; ++j) {
    J.col(j).head<3>() = k.w.col(j).cross(k.p.col(5) - k.p.col(j));
    const Vec3 du = k.w.col(j).cross(k.u);
    J(3, j) = du.y();
    J(4, j) = du.z();
  }
  return J;
}

/// gamma = -(Phi_theta theta')' at theta'' = 0 (needs the velocity pass).
template <class K>
Vec5 closure_gamma(const K& k) {
  const Vec3& omega = k.omega[kRods - 1];
  const Vec3 u2 = k.alpha[kRods - 1].cross(k.u) + omega.cross(omega.cross(k.u));
  Vec5 g;
  g.head<3>() = -k.a_F;
  g[3] = -u2.y();
  g[4] = -u2.z();
  return g;
}

template <class K>
Mat5 mass_of(const K& k, double m) {
  Mat5 M = Mat5::Zero();
  for (int i = 0; i < kRods; ++i)
    M += m * k.Jv[i].transpose() * k.Jv[i] + k.Jw[i].transpose() * k.I[i] * k.Jw[i];
  return M;
}

template <class K>
Vec5 velocity_forces_of(const K& k, double m) {
  Vec5 h = Vec5::Zero();
  for (int i = 0; i < kRods; ++i) {
    const Vec3 Iw = k.I[i] * k.omega[i];
    h += m * k.Jv[i].transpose() * k.a[i] +
         k.Jw[i].transpose() * (k.I[i] * k.alpha[i] + k.omega[i].cross(Iw));
  }
  return h;
}

template <class K>
Vec5 gravity_of(const K& k, double m, double g) {
  Vec5 Q = Vec5::Zero();
  for (int i = 0; i < kRods; ++i) Q -= m * g * k.Jv[i].row(1).transpose();
  return Q;
}

/// The SVD of Phi_theta with the rank check of the file comment.
Svd closure_svd(const Mat5& J) {
  Svd svd = lapack::full_svd(J);
  const Vector& s = svd.s;
  if (!(s[3] > Bricard::kRankTolerance * s[0]))
    throw NumericalError(
        detail::concat("bricard: the constraint Jacobian has rank below 4 (singular values ",
                       s.transpose(), "): a singular configuration"));
  return svd;
}

/// Phi_theta^+ b with Phi_theta truncated to rank 4.
Vec5 truncated_solve(const Svd& svd, const Vec5& b) {
  Vec5 x = Vec5::Zero();
  for (int j = 0; j < 4; ++j) x += svd.V.col(j) * (svd.U.col(j).dot(b) / svd.s[j]);
  return x;
}

/// The least-squares solution d of Phi_theta [0; d] = b (theta_A held): the other four columns
/// have full rank wherever theta_A parametrises the curve (n_A != 0).
Eigen::Vector4d solve_with_A_fixed(const Mat5& J, const Vec5& b) {
  const Svd svd = lapack::full_svd(J.rightCols<4>());
  const Eigen::Vector4d Utb = svd.U.leftCols<4>().transpose() * b;
  return svd.V * Utb.cwiseQuotient(svd.s);
}

}  // namespace

Eigen::Matrix<double, 3, 6> Bricard::joint_points(const Vector& theta) const {
  Kinematics k;
  evaluate(theta, nullptr, k);
  return k.p;
}

Eigen::Vector3d Bricard::p3(const Vector& theta) const {
  return joint_points(theta).col(2);
}

Vector Bricard::constraints(const Vector& theta) const {
  Kinematics k;
  evaluate(theta, nullptr, k);
  return closure(joint0_, k.p.col(5), k.u);
}

Matrix Bricard::constraint_jacobian(const Vector& theta) const {
  Kinematics k;
  evaluate(theta, nullptr, k);
  return closure_jacobian(k);
}

Vector Bricard::tangent(const Vector& theta) const {
  const Svd svd = lapack::full_svd(constraint_jacobian(theta));
  Vec5 n = svd.V.col(4);
  // The first entry within 1e-8 of the largest magnitude decides the sign: entries of equal
  // magnitude (all five at theta = 0) must not leave the choice to rounding, which differs
  // between SVD implementations.
  const double largest = n.cwiseAbs().maxCoeff();
  Index first = 0;
  while (std::abs(n[first]) < largest * (1.0 - 1e-8)) ++first;
  if (n[first] < 0.0) n = -n;
  return n;
}

Matrix Bricard::mass_matrix(const Vector& theta) const {
  Kinematics k;
  evaluate(theta, nullptr, k);
  return mass_of(k, p_.mass);
}

Vector Bricard::velocity_forces(const Vector& theta, const Vector& dtheta) const {
  Kinematics k;
  evaluate(theta, &dtheta, k);
  return velocity_forces_of(k, p_.mass);
}

Vector Bricard::gravity_forces(const Vector& theta) const {
  Kinematics k;
  evaluate(theta, nullptr, k);
  return gravity_of(k, p_.mass, p_.gravity);
}

double Bricard::kinetic_energy(const Vector& x) const {
  require(x.size() == 2 * kCoordinates, "bricard: the state has size ", x.size(), ", expected ",
          2 * kCoordinates);
  const Vec5 v = x.tail<kCoordinates>();
  return 0.5 * v.dot(Mat5(mass_matrix(x.head(kCoordinates))) * v);
}

double Bricard::potential_energy(const Vector& theta) const {
  Kinematics k;
  evaluate(theta, nullptr, k);
  return p_.mass * p_.gravity * k.c.row(1).sum();
}

double Bricard::energy(const Vector& x) const {
  return kinetic_energy(x) + potential_energy(x.head(kCoordinates));
}

void Bricard::rhs(const Vector& x, double torque, Vector& xdot) const {
  require(x.size() == 2 * kCoordinates, "bricard: the state has size ", x.size(), ", expected ",
          2 * kCoordinates);
  const Vector theta = x.head(kCoordinates), dtheta = x.tail(kCoordinates);
  Kinematics k;
  evaluate(theta, &dtheta, k);
  const auto svd = closure_svd(closure_jacobian(k));
  const Vec5 particular = truncated_solve(svd, closure_gamma(k));
  const Vec5 n = svd.V.col(4);
  const Mat5 M = mass_of(k, p_.mass);
  Vec5 f = gravity_of(k, p_.mass, p_.gravity) - velocity_forces_of(k, p_.mass) - M * particular;
  f[0] += torque;
  const double a = n.dot(f) / n.dot(M * n);
  xdot.resize(2 * kCoordinates);
  xdot.head(kCoordinates) = dtheta;
  xdot.tail<kCoordinates>() = particular + a * n;
}

void Bricard::rhs(double, const Vector& x, Vector& xdot) const {
  rhs(x, 0.0, xdot);
}

Vector Bricard::close_loop(const Vector& start, Kinematics& k) const {
  Vector theta = start;
  double previous = std::numeric_limits<double>::infinity();
  for (int iteration = 0;; ++iteration) {
    evaluate(theta, nullptr, k);
    const Vec5 phi = closure(joint0_, k.p.col(5), k.u);
    const double residual = phi.norm();
    if (residual <= kClosureTolerance * p_.length) return theta;
    if (residual >= previous || iteration == kMaxNewtonIterations) {
      if (residual <= kClosureFailure * p_.length) return theta;  // stagnated at rounding level
      throw NumericalError(
          detail::concat("bricard: the position projection stagnated at ||Phi|| = ", residual,
                         " after ", iteration, " Gauss-Newton steps"));
    }
    previous = residual;
    theta.head<kCoordinates>() -= truncated_solve(closure_svd(closure_jacobian(k)), phi);
  }
}

bool Bricard::project(double, Vector& x) const {
  require(x.size() == 2 * kCoordinates, "bricard: the state has size ", x.size(), ", expected ",
          2 * kCoordinates);
  Kinematics k;
  const Vector theta = close_loop(x.head(kCoordinates), k);
  const auto svd = closure_svd(closure_jacobian(k));
  const Vec5 n = svd.V.col(4);
  const Vec5 Mn = mass_of(k, p_.mass) * n;
  const Vec5 v = x.tail<kCoordinates>();
  x.head(kCoordinates) = theta;
  x.tail<kCoordinates>() = n * (Mn.dot(v) / n.dot(Mn));
  return true;
}

double Bricard::constraint_residual(const Vector& x) const {
  return constraints(x.head(kCoordinates)).norm();
}

void Bricard::outputs(double, const Vector& x, Vector& y) const {
  const Eigen::Vector3d p = p3(x.head(kCoordinates));
  y.resize(3);
  for (int i = 0; i < 3; ++i) y[i] = p[i];  // (elementwise: GCC 12 misreads the vector copy)
}

Eigen::Matrix3Xd Bricard::points(const Vector& x) const {
  return joint_points(x.head(kCoordinates));
}

// --- the configuration curve ------------------------------------------------------------------

Vector Bricard::curve_point(double s, const Vector& guess) const {
  require(guess.size() == kCoordinates, "bricard: the guess has size ", guess.size(), ", expected ",
          kCoordinates);
  require(std::isfinite(s), "bricard: theta_A = ", s, " must be finite");
  Vector theta = guess;
  theta[0] = s;
  Kinematics k;
  for (int iteration = 0; iteration <= kMaxNewtonIterations; ++iteration) {
    evaluate(theta, nullptr, k);
    const Vec5 phi = closure(joint0_, k.p.col(5), k.u);
    if (phi.norm() <= kClosureTolerance * p_.length) return theta;
    theta.tail<4>() -= solve_with_A_fixed(closure_jacobian(k), phi);
  }
  throw NumericalError(
      detail::concat("bricard: no point of the configuration curve found at "
                     "theta_A = ",
                     s, " (Newton did not converge)"));
}

Vector Bricard::curve_tangent(const Vector& theta) const {
  const Vector n = tangent(theta);
  if (!(std::abs(n[0]) > 1e-6))
    throw NumericalError(
        detail::concat("bricard: theta_A does not parametrise the configuration "
                       "curve at theta = ",
                       theta.transpose(), " (tangent ", n.transpose(), ")"));
  return n / n[0];
}

double Bricard::effective_mass(const Vector& theta) const {
  const Vector n = curve_tangent(theta);
  return n.dot(mass_matrix(theta) * n);
}

double Bricard::potential_slope(const Vector& theta) const {
  return -gravity_forces(theta).dot(curve_tangent(theta));
}

double Bricard::potential_curvature(const Vector& theta) const {
  const Vector n = curve_tangent(theta);
  Kinematics k;
  evaluate(theta, &n, k);
  // theta_ss with theta_ss,A = 0: Phi_theta theta_ss = gamma(theta, n) in the other four.
  Vec5 theta_ss = Vec5::Zero();
  theta_ss.tail<4>() = solve_with_A_fixed(closure_jacobian(k), closure_gamma(k));
  double curvature = -gravity_of(k, p_.mass, p_.gravity).dot(theta_ss);
  for (int i = 0; i < kRods; ++i) curvature += p_.mass * p_.gravity * k.a[i].y();
  return curvature;
}

Eigen::Vector3d Bricard::p3_slope(const Vector& theta) const {
  const Vector n = curve_tangent(theta);
  Kinematics k;
  evaluate(theta, nullptr, k);
  // C moves with rods 1 and 2: dC = sum_{j < 2} w_j x (C - p_j) n_j.
  Vec3 slope = Vec3::Zero();
  for (int j = 0; j < 2; ++j) slope += k.w.col(j).cross(k.p.col(2) - k.p.col(j)) * n[j];
  return slope;
}

Vector Bricard::equilibrium() const {
  // Walk the whole closed configuration curve from the initial configuration by arc-length
  // continuation (a step along the tangent, then back onto Phi = 0; theta_A folds back on the
  // curve, so it cannot serve as the step's parameter), keep the lowest V, then Newton on
  // V'(s) = 0 in s = theta_A.
  constexpr double kStep = 0.05;   // rad of arc in theta-space
  constexpr int kMaxSteps = 2000;  // the curve is about 21 long (428 steps) for L = 1
  Kinematics k;
  Vector theta = Vector::Zero(kCoordinates), n = tangent(theta);
  Vector best = theta;
  double lowest = potential_energy(theta);
  for (int step = 1; step <= kMaxSteps; ++step) {
    theta = close_loop(theta + kStep * n, k);
    const Vector next = tangent(theta);
    n = next.dot(n) >= 0.0 ? next : Vector(-next);
    const double v = potential_energy(theta);
    if (v < lowest) {
      lowest = v;
      best = theta;
    }
    // Back at the start (modulo full turns of the joints): the loop is closed.
    const Vector wrapped =
        theta.unaryExpr([](double a) { return std::remainder(a, 2.0 * std::numbers::pi); });
    if (step > 2 && wrapped.norm() < 0.5 * kStep) break;
  }
  for (int iteration = 0; iteration <= kMaxNewtonIterations; ++iteration) {
    const double slope = potential_slope(best), curvature = potential_curvature(best);
    if (!(curvature > 0.0))
      throw NumericalError(
          detail::concat("bricard: V is not convex at the lowest point found, "
                         "theta = ",
                         best.transpose()));
    const double ds = -slope / curvature;
    best = curve_point(best[0] + ds, best);
    if (std::abs(ds) <= 1e-14 * (1.0 + std::abs(best[0]))) return best;
  }
  throw NumericalError("bricard: Newton for the equilibrium did not converge");
}

SecondOrderSystem Bricard::linearised() const {
  const Vector theta = equilibrium();
  auto dense = [](const Matrix& A) {
    SparseMatrix S = A.sparseView();
    S.makeCompressed();
    return S;
  };
  SecondOrderSystem sys;
  sys.M = dense(Matrix::Constant(1, 1, effective_mass(theta)));
  sys.D = dense(Matrix::Zero(1, 1));
  sys.K = dense(Matrix::Constant(1, 1, potential_curvature(theta)));
  sys.B = dense(Matrix::Ones(1, 1));
  sys.Cp = dense(Matrix(p3_slope(theta)));
  sys.Cv = dense(Matrix::Zero(3, 1));
  return sys;
}

std::optional<MultibodyModel::LinearisationPoint> Bricard::linearisation_point() const {
  LinearisationPoint lp;
  lp.x = Vector::Zero(2 * kCoordinates);
  lp.x.head(kCoordinates) = equilibrium();
  lp.rhs = [this](double, const Vector& x, const Vector& u, Vector& xdot) { rhs(x, u[0], xdot); };
  lp.outputs = [this](const Vector& x, Vector& y) { outputs(0.0, x, y); };
  return lp;
}

}  // namespace mor
