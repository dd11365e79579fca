// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/flyball.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <numbers>

#include "src/core/errors.hpp"

namespace mor {

namespace {

/// Length of one spring-damper and its derivatives in (alpha, s) for the rod at alpha, the
/// slider at s: l^2 = A^2 + B^2, A = L/2 cos alpha + e, B = H - L/2 sin alpha - s.
struct Spring {
  double l, l_a, l_s, l_aa, l_as, l_ss;
};

Spring spring(const FlyballParameters& p, double alpha, double s) {
  const double half = 0.5 * p.rod_length, c = std::cos(alpha), sn = std::sin(alpha);
  const double A = half * c + p.hinge_offset - 0.5 * p.slider_size;
  const double B = p.shaft_length - half * sn - s;
  const double A_a = -half * sn, B_a = -half * c;  // A_s = 0, B_s = -1
  const double A_aa = -half * c, B_aa = half * sn;
  Spring sp;
  sp.l = std::hypot(A, B);
  if (!(sp.l > 0.0))
    throw NumericalError(
        detail::concat("flyball: a spring-damper has zero length at alpha = ", alpha, ", s = ", s));
  sp.l_a = (A * A_a + B * B_a) / sp.l;
  sp.l_s = -B / sp.l;
  sp.l_aa = (half * half + A * A_aa + B * B_aa - sp.l_a * sp.l_a) / sp.l;
  sp.l_as = (half * c - sp.l_a * sp.l_s) / sp.l;
  sp.l_ss = (1.0 - sp.l_s * sp.l_s) / sp.l;
  return sp;
}

}  // namespace

Flyball::Flyball(const FlyballParameters& p) : p_(p) {
  auto positive = [](double v, const char* name) {
    require(std::isfinite(v) && v > 0.0, "flyball: ", name, " = ", v, " must be > 0");
  };
  positive(p.shaft_length, "shaft_length");
  positive(p.shaft_width, "shaft_width");
  positive(p.rod_length, "rod_length");
  positive(p.rod_width, "rod_width");
  positive(p.slider_size, "slider_size");
  positive(p.density, "density");
  positive(p.point_mass, "point_mass");
  positive(p.stiffness, "stiffness");
  positive(p.rest_length, "rest_length");
  positive(p.gravity, "gravity");
  require(std::isfinite(p.damping) && p.damping >= 0.0, "flyball: damping = ", p.damping,
          " must be >= 0");
  require(std::isfinite(p.hinge_offset) && p.hinge_offset >= 0.0,
          "flyball: hinge_offset = ", p.hinge_offset, " must be >= 0");
  require(std::isfinite(p.initial_angle) && p.initial_angle > 0.0 &&
              p.initial_angle < 0.5 * std::numbers::pi,
          "flyball: initial_angle = ", p.initial_angle, " must be in (0, pi/2)");
  require(std::isfinite(p.initial_height) && p.initial_height > 0.0 &&
              p.initial_height < p.shaft_length,
          "flyball: initial_height = ", p.initial_height,
          " must be in (0, shaft_length = ", p.shaft_length, ")");
  require(std::isfinite(p.initial_speed), "flyball: initial_speed = ", p.initial_speed,
          " must be finite");

  const double area_r = p.rod_width * p.rod_width, area_s = p.shaft_width * p.shaft_width;
  m_rod_ = p.density * p.rod_length * area_r;
  m_shaft_ = p.density * p.shaft_length * area_s;
  m_slider_ = p.density * p.slider_size * p.slider_size * p.slider_size;
  inertia_0_ = m_shaft_ * area_s / 6.0 + m_slider_ * p.slider_size * p.slider_size / 6.0;
  inertia_u_ = m_rod_ * area_r / 6.0;
  inertia_p_ = m_rod_ * (p.rod_length * p.rod_length + area_r) / 12.0;
  j_ = m_rod_ * p.rod_length * p.rod_length / 3.0 + m_rod_ * area_r / 12.0 +
       p.point_mass * p.rod_length * p.rod_length;
}

Eigen::Vector3d Flyball::rod_inertia(double alpha) const {
  const double L = p_.rod_length, h = p_.hinge_offset, c = std::cos(alpha), sn = std::sin(alpha);
  const double rc = h + 0.5 * L * c, re = h + L * c;
  const double mr = m_rod_, mp = p_.point_mass, du = inertia_u_ - inertia_p_;
  return {mr * rc * rc + inertia_u_ * sn * sn + inertia_p_ * c * c + mp * re * re,
          -mr * L * sn * rc + du * 2.0 * sn * c - 2.0 * mp * L * sn * re,
          -mr * L * (c * rc - 0.5 * L * sn * sn) + 2.0 * du * std::cos(2.0 * alpha) -
              2.0 * mp * L * (c * re - L * sn * sn)};
}

double Flyball::axial_inertia(double alpha1, double alpha2) const {
  return inertia_0_ + rod_inertia(alpha1)[0] + rod_inertia(alpha2)[0];
}

double Flyball::angular_momentum(const Vector& x) const {
  return axial_inertia(x[1], x[2]) * x[4];
}

Eigen::Vector2d Flyball::spring_lengths(const Vector& x) const {
  return {spring(p_, x[1], x[3]).l, spring(p_, x[2], x[3]).l};
}

void Flyball::rhs(const Vector& x, double omega, double slider_force, Vector& xdot) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  const double G = (0.5 * m_rod_ + p_.point_mass) * p_.rod_length * p_.gravity;
  const double s = x[3], v = x[7];
  xdot.resize(8);
  xdot[0] = omega;
  xdot.segment<3>(1) = x.segment<3>(5);
  double inertia = inertia_0_, inertia_rate = 0.0;  // I and dI/dt
  double slider = slider_force - m_slider_ * p_.gravity;
  for (int i = 0; i < 2; ++i) {
    const double alpha = x[1 + i], beta = x[5 + i];
    const Eigen::Vector3d ir = rod_inertia(alpha);
    inertia += ir[0];
    inertia_rate += ir[1] * beta;
    const Spring sp = spring(p_, alpha, s);
    const double f =
        p_.stiffness * (sp.l - p_.rest_length) + p_.damping * (sp.l_a * beta + sp.l_s * v);
    xdot[5 + i] = (0.5 * ir[1] * omega * omega + G * std::cos(alpha) - f * sp.l_a) / j_;
    slider -= f * sp.l_s;
  }
  xdot[4] = -inertia_rate * omega / inertia;
  xdot[7] = slider / m_slider_;
}

void Flyball::rhs(const Vector& x, double slider_force, Vector& xdot) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  rhs(x, x[4], slider_force, xdot);
}

void Flyball::jacobian(const Vector& x, Matrix& Jx) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  const double G = (0.5 * m_rod_ + p_.point_mass) * p_.rod_length * p_.gravity;
  const double K = p_.stiffness, C = p_.damping;
  const double s = x[3], omega = x[4], v = x[7];
  Jx.setZero(8, 8);
  for (int i = 0; i < 4; ++i) Jx(i, 4 + i) = 1.0;

  Eigen::Vector3d ir[2];
  double inertia = inertia_0_, inertia_rate = 0.0;
  for (int i = 0; i < 2; ++i) {
    ir[i] = rod_inertia(x[1 + i]);
    inertia += ir[i][0];
    inertia_rate += ir[i][1] * x[5 + i];
  }
  // omega' = -omega sum_i I_r'(alpha_i) alpha_i' / I
  Jx(4, 4) = -inertia_rate / inertia;
  for (int i = 0; i < 2; ++i) {
    Jx(4, 1 + i) =
        -omega * (ir[i][2] * x[5 + i] / inertia - inertia_rate * ir[i][1] / (inertia * inertia));
    Jx(4, 5 + i) = -omega * ir[i][1] / inertia;
  }
  // J alpha_i'' = I_r' omega^2 / 2 + G cos alpha_i - f_i l_a;  m_s s'' = ... - sum_i f_i l_s
  for (int i = 0; i < 2; ++i) {
    const int a = 1 + i, b = 5 + i;
    const double alpha = x[a], beta = x[b];
    const Spring sp = spring(p_, alpha, s);
    const double f = K * (sp.l - p_.rest_length) + C * (sp.l_a * beta + sp.l_s * v);
    const double f_a = K * sp.l_a + C * (sp.l_aa * beta + sp.l_as * v);
    const double f_s = K * sp.l_s + C * (sp.l_as * beta + sp.l_ss * v);
    Jx(b, a) =
        (0.5 * ir[i][2] * omega * omega - G * std::sin(alpha) - f_a * sp.l_a - f * sp.l_aa) / j_;
    Jx(b, 3) = (-f_s * sp.l_a - f * sp.l_as) / j_;
    Jx(b, 4) = ir[i][1] * omega / j_;
    Jx(b, b) = -C * sp.l_a * sp.l_a / j_;
    Jx(b, 7) = -C * sp.l_a * sp.l_s / j_;
    Jx(7, a) = (-f_a * sp.l_s - f * sp.l_as) / m_slider_;
    Jx(7, 3) += (-f_s * sp.l_s - f * sp.l_ss) / m_slider_;
    Jx(7, b) = -C * sp.l_a * sp.l_s / m_slider_;
    Jx(7, 7) += -C * sp.l_s * sp.l_s / m_slider_;
  }
}

double Flyball::energy(const Vector& x) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  const double g = p_.gravity, H = p_.shaft_length, L = p_.rod_length;
  double e = 0.5 * axial_inertia(x[1], x[2]) * x[4] * x[4] +
             0.5 * j_ * (x[5] * x[5] + x[6] * x[6]) + 0.5 * m_slider_ * x[7] * x[7];
  e += m_shaft_ * g * 0.5 * H + m_slider_ * g * x[3];
  for (int i = 0; i < 2; ++i) {
    const double sn = std::sin(x[1 + i]);
    const double stretch = spring(p_, x[1 + i], x[3]).l - p_.rest_length;
    e += m_rod_ * g * (H - 0.5 * L * sn) + p_.point_mass * g * (H - L * sn) +
         0.5 * p_.stiffness * stretch * stretch;
  }
  return e;
}

double Flyball::power(double, const Vector& x) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  double P = 0.0;
  for (int i = 0; i < 2; ++i) {
    const Spring sp = spring(p_, x[1 + i], x[3]);
    const double rate = sp.l_a * x[5 + i] + sp.l_s * x[7];
    P -= p_.damping * rate * rate;
  }
  return P;
}

double Flyball::effective_potential(const Eigen::Vector3d& r, double momentum) const {
  Vector x = Vector::Zero(8);
  x.segment<3>(1) = r;
  const double inertia = axial_inertia(r[0], r[1]);
  x[4] = momentum / inertia;  // E = V + I omega^2 / 2 = V + p^2 / (2 I)
  return energy(x);
}

Eigen::Vector3d Flyball::effective_force(const Eigen::Vector3d& r, double momentum) const {
  const double G = (0.5 * m_rod_ + p_.point_mass) * p_.rod_length * p_.gravity;
  const double inertia = axial_inertia(r[0], r[1]);
  const double w2 = momentum * momentum / (inertia * inertia);  // omega^2
  Eigen::Vector3d F;
  F[2] = -m_slider_ * p_.gravity;
  for (int i = 0; i < 2; ++i) {
    const Spring sp = spring(p_, r[i], r[2]);
    const double f = p_.stiffness * (sp.l - p_.rest_length);
    F[i] = 0.5 * rod_inertia(r[i])[1] * w2 + G * std::cos(r[i]) - f * sp.l_a;
    F[2] -= f * sp.l_s;
  }
  return F;
}

Eigen::Matrix3d Flyball::effective_stiffness(const Eigen::Vector3d& r, double momentum) const {
  // V_p = V + p^2 / (2 I):  Hessian = Hess V + p^2 (grad I grad I^T / I^3 - Hess I / (2 I^2)).
  const double G = (0.5 * m_rod_ + p_.point_mass) * p_.rod_length * p_.gravity;
  const double K = p_.stiffness, p2 = momentum * momentum;
  const double inertia = axial_inertia(r[0], r[1]);
  Eigen::Matrix3d H = Eigen::Matrix3d::Zero();
  Eigen::Vector3d grad_i = Eigen::Vector3d::Zero();
  for (int i = 0; i < 2; ++i) {
    const Eigen::Vector3d ir = rod_inertia(r[i]);
    grad_i[i] = ir[1];
    const Spring sp = spring(p_, r[i], r[2]);
    const double stretch = sp.l - p_.rest_length;
    H(i, i) = G * std::sin(r[i]) + K * (sp.l_a * sp.l_a + stretch * sp.l_aa) -
              p2 * ir[2] / (2.0 * inertia * inertia);
    H(i, 2) = H(2, i) = K * (sp.l_a * sp.l_s + stretch * sp.l_as);
    H(2, 2) += K * (sp.l_s * sp.l_s + stretch * sp.l_ss);
  }
  const double c = p2 / (inertia * inertia * inertia);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) H(i, j) += c * (grad_i[i] * grad_i[j]);  // symmetric to the bit
  return H;
}

Flyball::SteadyRotation Flyball::steady_rotation(std::optional<double> momentum) const {
  SteadyRotation sr;
  sr.momentum =
      momentum ? *momentum : axial_inertia(p_.initial_angle, p_.initial_angle) * p_.initial_speed;
  require(std::isfinite(sr.momentum), "flyball: the angular momentum ", sr.momentum,
          " must be finite");
  // Newton's method for the minimum of V_p with a backtracking (Armijo) line search on V_p;
  // where the Hessian is not positive definite (far from the minimum) it is shifted until it
  // is, so every step goes downhill. Near the minimum (|grad V_p| small against the loads, where
  // V_p's decrease is lost in rounding) the full steps converge quadratically.
  const double p = sr.momentum;
  Eigen::Vector3d r(p_.initial_angle, p_.initial_angle, p_.initial_height);
  Eigen::Vector3d F = effective_force(r, p);
  const double scale = (0.5 * m_rod_ + p_.point_mass) * p_.rod_length * p_.gravity +
                       m_slider_ * p_.gravity;  // N or N m: the loads' size
  constexpr int kMaxSteps = 200;
  constexpr double kForceTol = 1e-12;   // relative to the loads: the converged residual
  constexpr double kNewtonZone = 1e-6;  // relative to the loads: full steps from here on
  constexpr double kArmijo = 1e-4;
  for (sr.newton_steps = 0; F.norm() > kForceTol * scale; ++sr.newton_steps) {
    if (sr.newton_steps == kMaxSteps)
      throw NumericalError(detail::concat("flyball: Newton for the steady rotation (p = ", p,
                                          ") did not converge in ", kMaxSteps,
                                          " steps (|grad V_p| = ", F.norm(), ")"));
    Eigen::Matrix3d H = effective_stiffness(r, p);
    const double lowest =
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(H, Eigen::EigenvaluesOnly).eigenvalues()[0];
    const double floor = 1e-8 * H.cwiseAbs().maxCoeff();
    if (lowest < floor) H.diagonal().array() += floor - lowest;
    const Eigen::Vector3d step = H.llt().solve(F);
    const double slope = F.dot(step);  // -dV_p/dt along r + t step, > 0
    double t = 1.0;
    if (F.norm() > kNewtonZone * scale) {
      const double v0 = effective_potential(r, p);
      while (effective_potential(r + t * step, p) > v0 - kArmijo * t * slope) {
        t *= 0.5;
        if (t < 1e-12)
          throw NumericalError(detail::concat("flyball: Newton for the steady rotation (p = ", p,
                                              ") stalled at alpha = (", r[0], ", ", r[1],
                                              "), s = ", r[2]));
      }
    }
    const Eigen::Vector3d r_new = r + t * step;
    const Eigen::Vector3d F_new = effective_force(r_new, p);
    if (F.norm() <= kNewtonZone * scale && !(F_new.norm() < F.norm())) break;  // rounding
    r = r_new;
    F = F_new;
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(effective_stiffness(r, p),
                                                           Eigen::EigenvaluesOnly);
  if (!(eig.eigenvalues().minCoeff() > 0.0))
    throw NumericalError(detail::concat("flyball: the steady rotation at alpha = ", r[0],
                                        ", s = ", r[2], " is not a minimum of V_p"));
  if (!(r[2] > 0.0 && r[2] < p_.shaft_length))
    throw NumericalError(detail::concat("flyball: at the steady rotation for p = ", p,
                                        " the slider would leave the shaft (s = ", r[2], ")"));
  sr.r = r;
  sr.speed = p / axial_inertia(r[0], r[1]);
  return sr;
}

SecondOrderSystem Flyball::linearised() const {
  const SteadyRotation sr = steady_rotation();
  const Eigen::Vector3d& r = sr.r;
  const double inertia = axial_inertia(r[0], r[1]);
  Eigen::Matrix3d Dm = Eigen::Matrix3d::Zero();
  Eigen::Vector3d grad_i = Eigen::Vector3d::Zero();
  for (int i = 0; i < 2; ++i) {
    const Spring sp = spring(p_, r[i], r[2]);
    const Eigen::Vector3d gl(i == 0 ? sp.l_a : 0.0, i == 1 ? sp.l_a : 0.0, sp.l_s);
    for (int a = 0; a < 3; ++a)  // C grad l grad l^T, symmetric to the bit
      for (int b = 0; b < 3; ++b) Dm(a, b) += p_.damping * (gl[a] * gl[b]);
    grad_i[i] = rod_inertia(r[i])[1];
  }
  Matrix Mm = Matrix::Zero(3, 3);
  Mm.diagonal() << j_, j_, m_slider_;
  Matrix Bm = Matrix::Zero(3, 2);
  Bm(2, 0) = 1.0;
  for (int a = 0; a < 2; ++a) Bm(a, 1) = sr.momentum / (inertia * inertia) * grad_i[a];
  Matrix Cp = Matrix::Zero(1, 3);
  Cp(0, 2) = 1.0;
  SecondOrderSystem sys;
  sys.M = Mm.sparseView();
  sys.D = Matrix(Dm).sparseView();
  sys.K = Matrix(effective_stiffness(r, sr.momentum)).sparseView();
  sys.B = Bm.sparseView();
  sys.Cp = Cp.sparseView();
  sys.Cv = SparseMatrix(1, 3);
  for (SparseMatrix* A : {&sys.M, &sys.D, &sys.K, &sys.B, &sys.Cp, &sys.Cv}) A->makeCompressed();
  return sys;
}

Vector Flyball::initial_state() const {
  Vector x = Vector::Zero(8);
  x[1] = x[2] = p_.initial_angle;
  x[3] = p_.initial_height;
  x[4] = p_.initial_speed;
  return x;
}

void Flyball::rhs(double, const Vector& x, Vector& xdot) const {
  rhs(x, 0.0, xdot);
}

bool Flyball::jacobian(double, const Vector& x, Matrix& J) const {
  jacobian(x, J);
  return true;
}

void Flyball::outputs(double, const Vector& x, Vector& y) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  y.resize(1);
  y[0] = x[3];
}

Eigen::Matrix3Xd Flyball::points(const Vector& x) const {
  require(x.size() == 8, "flyball: the state has size ", x.size(), ", expected 8");
  const double H = p_.shaft_length, L = p_.rod_length, h = p_.hinge_offset;
  const double a = 0.5 * p_.slider_size, s = x[3];
  Eigen::Matrix3Xd P(3, 19);  // in the shaft's frame first
  P.col(0) << 0.0, 0.0, 0.0;
  P.col(1) << 0.0, 0.0, H;
  for (int i = 0; i < 2; ++i) {
    const double sigma = i == 0 ? 1.0 : -1.0, c = std::cos(x[1 + i]), sn = std::sin(x[1 + i]);
    P.col(2 + i) << sigma * h, 0.0, H;
    P.col(4 + i) << sigma * (h + L * c), 0.0, H - L * sn;
    P.col(6 + i) << sigma * (h + 0.5 * L * c), 0.0, H - 0.5 * L * sn;
    P.col(8 + i) << sigma * a, 0.0, s;
  }
  P.col(10) << 0.0, 0.0, s;
  for (int k = 0; k < 8; ++k)
    P.col(11 + k) << (k & 1 ? a : -a), (k & 2 ? a : -a), s + (k & 4 ? a : -a);
  const Eigen::Matrix3d R = Eigen::AngleAxisd(x[0], Eigen::Vector3d::UnitZ()).toRotationMatrix();
  return R * P;
}

std::vector<std::pair<int, int>> Flyball::segments() const {
  std::vector<std::pair<int, int>> seg = {{0, 1}, {1, 2}, {1, 3},  {2, 4}, {3, 5},
                                          {6, 8}, {7, 9}, {10, 8}, {10, 9}};
  for (int k = 0; k < 8; ++k)  // the cube's edges: corners differing in one bit
    for (int bit = 1; bit < 8; bit <<= 1)
      if (!(k & bit)) seg.emplace_back(11 + k, 11 + (k | bit));
  return seg;
}

std::optional<MultibodyModel::LinearisationPoint> Flyball::linearisation_point() const {
  const SteadyRotation sr = steady_rotation();
  LinearisationPoint lp;
  lp.x = Vector::Zero(8);
  lp.x.segment<3>(1) = sr.r;
  lp.x[4] = sr.speed;
  lp.rhs = [this, p0 = sr.momentum](double, const Vector& x, const Vector& u, Vector& xdot) {
    require(u.size() == 2, "flyball: the linearisation has 2 inputs, got ", u.size());
    rhs(x, (p0 + u[1]) / axial_inertia(x[1], x[2]), u[0], xdot);
    xdot[4] = 0.0;
  };
  lp.outputs = [](const Vector& x, Vector& y) {
    y.resize(1);
    y[0] = x[3];
  };
  return lp;
}

}  // namespace mor
