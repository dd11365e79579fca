// SPDX-License-Identifier: GPL-3.0-or-later
// Dense second-order models: the exact embedding of a first-order reduced model (x = q') runs on
// the second-order integrators as the same scheme would on x' = E^{-1}(A x + B u), checked
// against independent hand-written recurrences of the implicit midpoint rule and RK4.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <random>

#include "src/core/errors.hpp"
#include "src/integrators/integrate.hpp"
#include "src/signals/signal.hpp"
#include "src/systems/dense_model.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

/// The embedding and the hand recurrence perform the same arithmetic up to the order of
/// operations; over 200 steps rounding stays within this relative tolerance.
constexpr double kSameSchemeTol = 1e-11;

struct FirstOrder {
  Matrix E, A, B, C;
};

FirstOrder random_first_order(Index r, unsigned seed) {
  std::mt19937 gen(seed);
  auto rnd = [&](Index rows, Index cols) { return testing::random_normal(rows, cols, gen); };
  const Matrix X = rnd(r, r) / std::sqrt(double(r)), Y = rnd(r, r);
  FirstOrder s;
  s.A = -(X * X.transpose() + Matrix::Identity(r, r)) + 0.5 * (Y - Y.transpose());
  s.E = Matrix::Identity(r, r) + 0.1 * rnd(r, r) / std::sqrt(double(r));
  s.B = rnd(r, 2);
  s.C = rnd(3, r);
  return s;
}

/// Integrates the embedded model and returns y at every step (columns).
Matrix run_embedded(const FirstOrder& s, const Signal& u, Scheme scheme, double dt, Index steps) {
  const DenseSecondOrderModel model(from_first_order(s.E, s.A, s.B, s.C));
  DenseSecondOrderModel::Workspace ws(model);
  IntegratorOptions o;
  o.scheme = scheme;
  o.dt = dt;
  o.t_end = dt * static_cast<double>(steps);
  Vector q = Vector::Zero(model.n()), v = Vector::Zero(model.n()), y;
  Matrix Y(s.C.rows(), steps + 1);
  integrate(model, ws, u, o, q, v,
            [&](Index k, double, const Vector& qk, const Vector& vk, const Vector&) {
              model.output(qk, vk, y);
              Y.col(k) = y;
            });
  return Y;
}

TEST(DenseModel, EmbeddedFirstOrderModelFollowsTheImplicitMidpointRule) {
  const FirstOrder s = random_first_order(6, 3);
  const auto u = make_sine_signal(2, 1.0, 0.3);
  const double h = 0.05;
  const Index steps = 200;
  const Matrix Y = run_embedded(s, *u, Scheme::implicit_midpoint, h, steps);
  // (E - h/2 A) x_{k+1} = (E + h/2 A) x_k + h B u(t_k + h/2).
  Eigen::PartialPivLU<Matrix> lhs(s.E - 0.5 * h * s.A);
  const Matrix rhs = s.E + 0.5 * h * s.A;
  Vector x = Vector::Zero(6), uk(2);
  Matrix Yref(3, steps + 1);
  Yref.col(0) = s.C * x;
  for (Index k = 0; k < steps; ++k) {
    u->evaluate((static_cast<double>(k) + 0.5) * h, uk);
    x = lhs.solve(rhs * x + h * s.B * uk);
    Yref.col(k + 1) = s.C * x;
  }
  EXPECT_TRUE(matrices_near(Y, Yref, kSameSchemeTol, Compare::relative));
}

TEST(DenseModel, EmbeddedFirstOrderModelFollowsRk4) {
  const FirstOrder s = random_first_order(5, 8);
  const auto u = make_sine_signal(2, 1.0, 0.2);
  const double h = 0.02;
  const Index steps = 200;
  const Matrix Y = run_embedded(s, *u, Scheme::rk4, h, steps);
  Eigen::PartialPivLU<Matrix> E(s.E);
  Vector uk(2);
  auto f = [&](double t, const Vector& x) {
    u->evaluate(t, uk);
    return Vector(E.solve(s.A * x + s.B * uk));
  };
  Vector x = Vector::Zero(5);
  Matrix Yref(3, steps + 1);
  Yref.col(0) = s.C * x;
  for (Index k = 0; k < steps; ++k) {
    const double t = static_cast<double>(k) * h;
    const Vector k1 = f(t, x), k2 = f(t + h / 2, x + h / 2 * k1), k3 = f(t + h / 2, x + h / 2 * k2),
                 k4 = f(t + h, x + h * k3);
    x += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    Yref.col(k + 1) = s.C * x;
  }
  EXPECT_TRUE(matrices_near(Y, Yref, kSameSchemeTol, Compare::relative));
}

TEST(DenseModel, BadInputIsRejected) {
  DenseSecondOrderSystem s;
  s.M = Matrix::Identity(3, 3);
  s.D = Matrix::Identity(2, 2);
  s.K = Matrix::Identity(3, 3);
  s.B = Matrix::Ones(3, 1);
  s.Cp = s.Cv = Matrix::Ones(1, 3);
  EXPECT_THROW(DenseSecondOrderModel{s}, InvalidArgument);
  s.D = Matrix::Zero(3, 3);
  s.M(2, 2) = 0.0;  // singular mass matrix
  const DenseSecondOrderModel model(s);
  EXPECT_THROW(DenseSecondOrderModel::Workspace{model}, NumericalError);
}

}  // namespace
}  // namespace mor
