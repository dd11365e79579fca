// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/robot.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <cmath>

#include "src/core/errors.hpp"

namespace mor {

namespace {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Jac = Eigen::Matrix<double, 3, SchiehlenRobot::kDof>;

Mat3 rot_x(double a) {
  return Eigen::AngleAxisd(a, Vec3::UnitX()).toRotationMatrix();
}
Mat3 rot_y(double a) {
  return Eigen::AngleAxisd(a, Vec3::UnitY()).toRotationMatrix();
}
Mat3 rot_z(double a) {
  return Eigen::AngleAxisd(a, Vec3::UnitZ()).toRotationMatrix();
}

void require_positive(double value, const char* name) {
  require(std::isfinite(value) && value > 0.0, "robot: ", name, " = ", value, " must be > 0");
}

}  // namespace

/// One pass along the chain: per body its centre, orientation, Jacobians and (given q') its
/// angular velocity and the accelerations at q'' = 0.
struct SchiehlenRobot::Kinematics {
  std::array<Vec3, 3> G;
  std::array<Mat3, 3> R;
  std::array<Jac, 3> Jv, Jw;
  Vec3 joint;  ///< J, the gripper's joint
  std::array<Vec3, 3> w, a, alpha;
};

SchiehlenRobot::SchiehlenRobot(const RobotParameters& p) : p_(p) {
  require_positive(p.m0, "m0");
  require_positive(p.m1, "m1");
  require_positive(p.m2, "m2");
  const char* names[3][3] = {{"inertia0.x", "inertia0.y", "inertia0.z"},
                             {"inertia1.x", "inertia1.y", "inertia1.z"},
                             {"inertia2.x", "inertia2.y", "inertia2.z"}};
  const std::array<const Eigen::Vector3d*, 3> inertia = {&p.inertia0, &p.inertia1, &p.inertia2};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) require_positive((*inertia[i])[j], names[i][j]);
  require(std::isfinite(p.C) && p.C >= 0.0, "robot: C = ", p.C, " must be >= 0");
  require_positive(p.L, "L");
  require_positive(p.gravity, "gravity");
  mass_ = {p.m0, p.m1, p.m2};
  inertia_ = {p.inertia0, p.inertia1, p.inertia2};
}

void SchiehlenRobot::check_q(const Vector& q) const {
  require(q.size() == kDof, "robot: q has size ", q.size(), ", expected ", kDof);
}

void SchiehlenRobot::check_x(const Vector& x) const {
  require(x.size() == 2 * kDof, "robot: the state has size ", x.size(), ", expected ", 2 * kDof);
}

void SchiehlenRobot::kinematics(const Vector& q, const Vector* v, Kinematics& k) const {
  const Vec3 Z = Vec3::UnitZ();
  k.R[0] = rot_z(q[1]);
  k.R[1] = k.R[0] * rot_y(q[3]);
  k.R[2] = k.R[1] * rot_x(q[4]);
  const Vec3 y0 = k.R[0].col(1);  // the arm's axis (= y1)
  const Vec3 x1 = k.R[1].col(0);  // the gripper's axis
  k.G[0] = Vec3(0.0, 0.0, q[0]);
  k.G[1] = k.G[0] + q[2] * y0;
  const Vec3 d1 = p_.L * k.R[1].col(1);  // G1 -> J, fixed in body 1
  k.joint = k.G[1] + d1;
  const Vec3 d2 = p_.C * k.R[2].col(1);  // J -> G2, fixed in body 2
  k.G[2] = k.joint + d2;

  // Columns: q0' translates everything along Z; q1' turns everything about the Z axis (through
  // the origin); q2' translates bodies 1, 2 along y0; q3' turns them about the axis y0 through
  // G1; q4' turns body 2 about x1 through J.
  for (int i = 0; i < 3; ++i) {
    k.Jv[i].setZero();
    k.Jw[i].setZero();
    k.Jv[i].col(0) = Z;
    k.Jv[i].col(1) = Z.cross(k.G[i]);
    k.Jw[i].col(1) = Z;
  }
  for (int i = 1; i < 3; ++i) {
    k.Jv[i].col(2) = y0;
    k.Jv[i].col(3) = y0.cross(k.G[i] - k.G[1]);
    k.Jw[i].col(3) = y0;
  }
  k.Jv[2].col(4) = x1.cross(d2);
  k.Jw[2].col(4) = x1;
  if (!v) return;

  // Velocities, then the accelerations at q'' = 0: the parts that the joints' axes and offsets
  // pick up from turning with their bodies (the Jacobians' time derivatives times q').
  const Vector& qd = *v;
  k.w[0] = qd[1] * Z;
  k.w[1] = k.w[0] + qd[3] * y0;
  k.w[2] = k.w[1] + qd[4] * x1;
  k.alpha[0].setZero();
  k.alpha[1] = k.w[0].cross(qd[3] * y0);               // y0 turns with body 0
  k.alpha[2] = k.alpha[1] + k.w[1].cross(qd[4] * x1);  // x1 turns with body 1
  k.a[0].setZero();
  const Vec3 r01 = q[2] * y0;  // G0 -> G1, slides along and turns with y0
  k.a[1] = k.w[0].cross(k.w[0].cross(r01)) + 2.0 * qd[2] * k.w[0].cross(y0);
  const Vec3 a_joint = k.a[1] + k.alpha[1].cross(d1) + k.w[1].cross(k.w[1].cross(d1));
  k.a[2] = a_joint + k.alpha[2].cross(d2) + k.w[2].cross(k.w[2].cross(d2));
}

BodyFrame SchiehlenRobot::body_frame(const Vector& q, int body) const {
  check_q(q);
  require(body >= 0 && body < 3, "robot: body = ", body, " must be 0, 1 or 2");
  Kinematics k;
  kinematics(q, nullptr, k);
  return {k.G[body], k.R[body]};
}

Matrix SchiehlenRobot::mass_matrix(const Vector& q) const {
  check_q(q);
  Kinematics k;
  kinematics(q, nullptr, k);
  Matrix M = Matrix::Zero(kDof, kDof);
  for (int i = 0; i < 3; ++i) {
    const Mat3 I = k.R[i] * inertia_[i].asDiagonal() * k.R[i].transpose();
    M.noalias() += mass_[i] * k.Jv[i].transpose() * k.Jv[i];
    M.noalias() += k.Jw[i].transpose() * I * k.Jw[i];
  }
  return 0.5 * (M + M.transpose());  // symmetric to the last bit
}

Vector SchiehlenRobot::velocity_terms(const Vector& q, const Vector& v) const {
  check_q(q);
  require(v.size() == kDof, "robot: q' has size ", v.size(), ", expected ", kDof);
  Kinematics k;
  kinematics(q, &v, k);
  Vector h = Vector::Zero(kDof);
  for (int i = 0; i < 3; ++i) {
    const Mat3 I = k.R[i] * inertia_[i].asDiagonal() * k.R[i].transpose();
    h.noalias() += mass_[i] * k.Jv[i].transpose() * k.a[i];
    h.noalias() += k.Jw[i].transpose() * (I * k.alpha[i] + k.w[i].cross(I * k.w[i]));
  }
  return h;
}

Vector SchiehlenRobot::gravity_forces(const Vector& q) const {
  check_q(q);
  Kinematics k;
  kinematics(q, nullptr, k);
  Vector Qg = Vector::Zero(kDof);
  for (int i = 0; i < 3; ++i)
    Qg.noalias() += k.Jv[i].transpose() * Vec3(0.0, 0.0, -mass_[i] * p_.gravity);
  return Qg;
}

Vector SchiehlenRobot::accelerations(const Vector& q, const Vector& v,
                                     const Vector& efforts) const {
  require(efforts.size() == kDof, "robot: the efforts have size ", efforts.size(), ", expected ",
          kDof);
  const Eigen::LLT<Matrix> llt(mass_matrix(q));
  if (llt.info() != Eigen::Success)
    throw NumericalError("robot: the mass matrix is not positive definite");
  return llt.solve(gravity_forces(q) + efforts - velocity_terms(q, v));
}

double SchiehlenRobot::kinetic_energy(const Vector& x) const {
  check_x(x);
  const Vector v = x.tail(kDof);
  return 0.5 * v.dot(mass_matrix(x.head(kDof)) * v);
}

double SchiehlenRobot::potential_energy(const Vector& q) const {
  check_q(q);
  Kinematics k;
  kinematics(q, nullptr, k);
  double V = 0.0;
  for (int i = 0; i < 3; ++i) V += mass_[i] * p_.gravity * k.G[i].z();
  return V;
}

Vector SchiehlenRobot::efforts(double t) {
  Vector u(kDof);  // [F0Z, C0Z, F1Y, C1Y, C2X]
  if (t < 0.5)
    u << 6348.0, 673.0 * t - 508.0, 36.0 * t + 986.0, 0.0, 63.48;
  else if (t < 1.5)
    u << 4905.0, 148.0 * std::exp(-5.5 * (t - 0.5)) - 8.0, -2.0, 0.0, 49.05;
  else
    u << 3462.0, 240.0, -1019.0, 0.0, 34.62;
  return u;
}

Vector SchiehlenRobot::static_efforts(const Vector& q) const {
  return -gravity_forces(q);
}

Vector SchiehlenRobot::initial_pose() {
  Vector q(kDof);
  q << 2.25, -0.5236, 0.75, 0.0, 0.0;
  return q;
}

Vector SchiehlenRobot::initial_state() const {
  Vector x = Vector::Zero(2 * kDof);
  x.head(kDof) = initial_pose();
  return x;
}

void SchiehlenRobot::rhs(double t, const Vector& x, Vector& xdot) const {
  check_x(x);
  const Vector q = x.head(kDof), v = x.tail(kDof);
  xdot.resize(2 * kDof);
  xdot.head(kDof) = v;
  xdot.tail(kDof) = accelerations(q, v, efforts(t));
}

std::vector<std::string> SchiehlenRobot::output_names() const {
  return {"q0", "q1", "q2", "q3", "q4"};
}

void SchiehlenRobot::outputs(double, const Vector& x, Vector& y) const {
  check_x(x);
  y = x.head(kDof);
}

double SchiehlenRobot::energy(const Vector& x) const {
  return kinetic_energy(x) + potential_energy(x.head(kDof));
}

double SchiehlenRobot::power(double t, const Vector& x) const {
  check_x(x);
  return efforts(t).dot(x.tail(kDof));
}

Eigen::Matrix3Xd SchiehlenRobot::points(const Vector& x) const {
  check_x(x);
  const Vector q = x.head(kDof);
  Kinematics k;
  kinematics(q, nullptr, k);
  Eigen::Matrix3Xd P(3, 6);
  P.col(0).setZero();  // the column's foot
  P.col(1) = k.G[0];
  P.col(2) = k.G[1];
  P.col(3) = k.joint;
  P.col(4) = k.G[2];
  P.col(5) = k.joint + 2.0 * p_.C * k.R[2].col(1);
  return P;
}

std::vector<std::pair<int, int>> SchiehlenRobot::segments() const {
  return {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}};
}

SecondOrderSystem SchiehlenRobot::linearised() const {
  const Vector q = initial_pose();
  // K = d^2 V / dq^2 with V = g M_tot q0 + m2 g C sin q4 cos q3 (checked against potential_energy
  // in the tests); zero at q3 = q4 = 0, kept general so that another pose would be right.
  const double s = p_.m2 * p_.gravity * p_.C;
  Matrix K = Matrix::Zero(kDof, kDof);
  K(3, 3) = K(4, 4) = -s * std::sin(q[4]) * std::cos(q[3]);
  K(3, 4) = K(4, 3) = -s * std::cos(q[4]) * std::sin(q[3]);
  const Matrix I = Matrix::Identity(kDof, kDof);
  SecondOrderSystem sys;
  // M(q*)'s couplings through products of inertia vanish (all principal axes are aligned at
  // q3 = q4 = 0) but come out at rounding level: drop entries below 1e-14 of the largest.
  const Matrix M = mass_matrix(q);
  sys.M = M.sparseView(M.cwiseAbs().maxCoeff(), 1e-14);
  sys.D = SparseMatrix(kDof, kDof);
  sys.K = K.sparseView(0.0, 0.0);
  sys.B = I.sparseView();
  sys.Cp = I.sparseView();
  sys.Cv = SparseMatrix(kDof, kDof);
  for (SparseMatrix* A : {&sys.M, &sys.D, &sys.K, &sys.B, &sys.Cp, &sys.Cv}) A->makeCompressed();
  return sys;
}

std::vector<std::string> SchiehlenRobot::linear_input_names() const {
  return {"F0Z", "C0Z", "F1Y", "C1Y", "C2X"};
}

std::vector<std::string> SchiehlenRobot::linear_output_names() const {
  return {"q0", "q1", "q2", "q3", "q4"};
}

std::optional<MultibodyModel::LinearisationPoint> SchiehlenRobot::linearisation_point() const {
  LinearisationPoint lp;
  const Vector q0 = initial_pose();
  lp.x = Vector::Zero(2 * kDof);
  lp.x.head(kDof) = q0;
  const Vector hold = static_efforts(q0);
  lp.rhs = [this, hold](double, const Vector& x, const Vector& u, Vector& xdot) {
    xdot.resize(2 * kDof);
    xdot.head(kDof) = x.tail(kDof);
    xdot.tail(kDof) = accelerations(x.head(kDof), x.tail(kDof), hold + u);
  };
  lp.outputs = [](const Vector& x, Vector& y) { y = x.head(kDof); };
  return lp;
}

}  // namespace mor
