// SPDX-License-Identifier: GPL-3.0-or-later
// Generalized differential balancing of the nonlinear chain (reduction/differential_balancing.hpp):
// the computed Gramians satisfy every vertex inequality and the differential Lyapunov inequality
// at sampled states of the region (checked here with Eigen's eigensolver, independently of the
// SDP); at k_n = 0 they dominate the linear Gramians (P >= P_lin, Q >= Q_lin, hence sigma_i >=
// sigma_i^lin) and the trace-minimal ones equal them; the GD-truncated model at r = n is the full
// model in other coordinates; the a priori bound 2 sum_{i>r} sigma_i holds on simulated
// trajectories that stay in the region; the global inequalities (every state) are infeasible for
// k_n > 0 and the solver says so; bad options are rejected with the value named.
// Networks: the chain is balanced through its network form (G = Delta, the cubic law); on a
// lattice the Gramians satisfy every vertex inequality and the inequality at sampled states, and
// the truncated model's error on a simulated input is below the a priori bound; a law with both
// signs of stiffness gets the cross-polytope's vertices and its Gramians hold at sampled states;
// a law with an s^2 term is refused naming the element, and a lattice too large for the SDP is
// refused by the runner with its size.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "experiments/runner/config.hpp"
#include "models/lattice.hpp"
#include "models/mass_spring_chain.hpp"
#include "reduction/dense_lyapunov.hpp"
#include "reduction/differential_balancing.hpp"
#include "src/core/errors.hpp"
#include "src/io/model_files.hpp"
#include "support/chains.hpp"
#include "support/compare.hpp"
#include "support/temp_dir.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::scalars_near;

/// Largest eigenvalue the verified Gramians may leave in an inequality, relative to the scale of
/// its terms (2 ||A|| ||X|| + ||G||): the solver's acceptance tolerance.
constexpr double kInequalityTolerance = 1e-8;
/// At k_n = 0 the trace-minimal Gramian is the Lyapunov solution; DSDP's relative gap 1e-9 leaves
/// about this much relative difference.
constexpr double kLinearGramianTolerance = 1e-5;

double max_eig(const Matrix& S) {
  Eigen::SelfAdjointEigenSolver<Matrix> es(S, Eigen::EigenvaluesOnly);
  return es.eigenvalues().maxCoeff();
}
double norm2(const Matrix& S) {
  Eigen::SelfAdjointEigenSolver<Matrix> es(S, Eigen::EigenvaluesOnly);
  return es.eigenvalues().cwiseAbs().maxCoeff();
}

/// The chain's first-order Jacobian at x = (q, v), built from its own nonlinear_jacobian.
Matrix jacobian_at(const MassSpringChain& chain, const Vector& q) {
  const JacobianFamily f = jacobian_family(chain.network());
  const Index N = chain.n();
  Matrix J = f.A;
  J.bottomLeftCorner(N, N) -= f.M_inv * Matrix(chain.nonlinear_jacobian(q));
  return J;
}

/// x' = f(x) + B u of the full chain from its matrix-free force.
/// One classical RK4 step of x' = f(x, u(t)) from t to t + dt (the reference integration of
/// the error-bound tests, full and reduced alike).
template <class F, class U>
void rk4_step(const F& f, const U& input, double t, double dt, Vector& x) {
  const Vector u0 = input(t), u1 = input(t + dt / 2), u2 = input(t + dt);
  Vector k1, k2, k3, k4;
  f(x, u0, k1);
  f(Vector(x + dt / 2 * k1), u1, k2);
  f(Vector(x + dt / 2 * k2), u1, k3);
  f(Vector(x + dt * k3), u2, k4);
  x += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
}

void full_rhs(const MassSpringChain& chain, const Vector& x, const Vector& u, Vector& dx) {
  const Index N = chain.n();
  Vector F;
  chain.force(x.head(N), x.tail(N), u, F);
  dx.resize(2 * N);
  dx.head(N) = x.tail(N);
  dx.tail(N) = F / chain.parameters().m;
}

DifferentialGramianOptions options(double rho) {
  DifferentialGramianOptions o;
  o.rho = rho;
  o.gap_tolerance = 1e-9;
  return o;
}

TEST(DifferentialBalancing, RegionGramiansSatisfyEveryInequality) {
  const double rho = 0.2;  // feasible; 0.3 is not, for these lightly damped parameters
  const MassSpringChain chain(testing::test_chain_parameters(6, 2.0));
  const DifferentialBalancing bal = differential_balancing(chain.network(), options(rho));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  const JacobianFamily& f = bal.family;
  const Matrix& P = bal.controllability.X;
  const Matrix& Q = bal.observability.X;
  const Matrix BBt = f.B * f.B.transpose(), CtC = f.C.transpose() * f.C;
  const LmiFamily lmi = lmi_family(f, rho);
  ASSERT_EQ(lmi.affine.size(), static_cast<std::size_t>(chain.n() + 2));
  for (std::size_t k = 0; k < lmi.affine.size(); ++k) {
    const Matrix& A = lmi.affine[k];
    const double lp = max_eig(A * P + P * A.transpose() + BBt);
    const double lq = max_eig(A.transpose() * Q + Q * A + CtC);
    const double sp = 2 * A.norm() * norm2(P) + norm2(BBt);
    const double sq = 2 * A.norm() * norm2(Q) + norm2(CtC);
    EXPECT_LE(lp, kInequalityTolerance * sp) << "controllability vertex " << k;
    EXPECT_LE(lq, kInequalityTolerance * sq) << "observability vertex " << k;
  }
  // The finite family implies the inequality at every state of the region: sampled states,
  // including elongations concentrated on one spring (the vertices' directions).
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 60; ++trial) {
    Vector q(chain.n());
    for (Index i = 0; i < q.size(); ++i) q[i] = normal(gen);
    if (trial % 3 == 0) {
      q.setZero();
      q[trial % chain.n()] = 1.0;  // two springs stretched
    }
    q *= rho / elongation_norm(q) * (trial % 2 == 0 ? 1.0 : 0.5);
    const Matrix J = jacobian_at(chain, q);
    const double lp = max_eig(J * P + P * J.transpose() + BBt);
    const double lq = max_eig(J.transpose() * Q + Q * J + CtC);
    EXPECT_LE(lp, kInequalityTolerance * (2 * J.norm() * norm2(P) + 1.0)) << "state " << trial;
    EXPECT_LE(lq, kInequalityTolerance * (2 * J.norm() * norm2(Q) + 1.0)) << "state " << trial;
  }
  // The solver's own residuals are the same quantities.
  EXPECT_LE(bal.controllability.max_relative_residual, kInequalityTolerance);
  EXPECT_LE(bal.observability.max_relative_residual, kInequalityTolerance);
  // Balanced: V^T Q V = W^T P W = Sigma, W^T V = I.
  const Index n = P.rows();
  EXPECT_TRUE(matrices_near(Matrix(bal.W.transpose() * bal.V), Matrix::Identity(n, n), 1e-8));
  EXPECT_TRUE(matrices_near(Matrix(bal.V.transpose() * Q * bal.V), Matrix(bal.sigma.asDiagonal()),
                            1e-8, Compare::relative));
  EXPECT_TRUE(matrices_near(Matrix(bal.W.transpose() * P * bal.W), Matrix(bal.sigma.asDiagonal()),
                            1e-8, Compare::relative));
}

TEST(DifferentialBalancing, LinearChainGramiansDominateTheLyapunovSolutions) {
  // A P + P A^T + B B^T <= 0 with A stable gives P - P_lin = int e^{At} (-(A P + P A^T + B B^T))
  // e^{A^T t} dt >= 0; likewise Q >= Q_lin; then lambda_i(P Q) >= lambda_i(P_lin Q_lin).
  const MassSpringChain chain(testing::test_chain_parameters(5, 0.0));
  const DifferentialBalancing bal = differential_balancing(chain.network(), options(1.0));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  const JacobianFamily& f = bal.family;
  EXPECT_EQ(bal.controllability.residuals.size(), 1);  // the linear inequality alone
  const Matrix Uc = lyapunov_cholesky_factor(f.A, f.B);
  const Matrix Uo = lyapunov_cholesky_factor(Matrix(f.A.transpose()), Matrix(f.C.transpose()));
  const Matrix P_lin = Uc * Uc.transpose(), Q_lin = Uo * Uo.transpose();
  const Matrix& P = bal.controllability.X;
  const Matrix& Q = bal.observability.X;
  Eigen::SelfAdjointEigenSolver<Matrix> dp(P - P_lin), dq(Q - Q_lin);
  EXPECT_GE(dp.eigenvalues().minCoeff(), -kInequalityTolerance * norm2(P_lin));
  EXPECT_GE(dq.eigenvalues().minCoeff(), -kInequalityTolerance * norm2(Q_lin));
  // Minimal trace: the Lyapunov solutions themselves.
  EXPECT_TRUE(matrices_near(P, P_lin, kLinearGramianTolerance, Compare::relative));
  EXPECT_TRUE(matrices_near(Q, Q_lin, kLinearGramianTolerance, Compare::relative));
  Eigen::JacobiSVD<Matrix> svd(Uo.transpose() * Uc);
  const Vector sigma_lin = svd.singularValues();
  for (Index i = 0; i < sigma_lin.size(); ++i) {
    EXPECT_GE(bal.sigma[i], sigma_lin[i] * (1 - kLinearGramianTolerance)) << "i = " << i;
    if (sigma_lin[i] > 1e-3 * sigma_lin[0]) {
      EXPECT_TRUE(
          scalars_near(bal.sigma[i], sigma_lin[i], kLinearGramianTolerance, Compare::relative))
          << "i = " << i;
    }
  }
}

TEST(DifferentialBalancing, FullOrderTruncationIsTheChainInBalancedCoordinates) {
  const MassSpringChain chain(testing::test_chain_parameters(5, 2.0));
  const DifferentialBalancing bal = differential_balancing(chain.network(), options(0.2));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message;
  const Index n = bal.V.cols();
  const GdTruncatedModel full(bal, n);
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  Vector z(n), u(1);
  for (Index i = 0; i < n; ++i) z[i] = 0.3 * normal(gen);
  u[0] = 0.7;
  Vector dz, dx;
  full.rhs(z, u, dz);
  full_rhs(chain, full.lift(z), u, dx);
  const Vector expected = bal.W.transpose() * dx;
  EXPECT_TRUE(matrices_near(dz, expected, 1e-9, Compare::relative));
}

TEST(DifferentialBalancing, ErrorBoundHoldsOnSimulatedTrajectories) {
  // The benchmark's parameters (m = k_l = d = 1, k_n = 2), N = 6, region rho = 0.5 (feasible; 0.8
  // is not); inputs of finite energy small enough to keep both trajectories in the region
  // (checked).
  ChainParameters p;
  p.N = 6;
  p.k_n = 2.0;
  const double rho = 0.5;
  const MassSpringChain chain(p);
  const DifferentialBalancing bal = differential_balancing(chain.network(), options(rho));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  const double dt = 0.005, t_on = 12.0, t_end = 40.0;
  const auto steps = static_cast<int>(std::lround(t_end / dt));
  for (const double amplitude : {0.2, 0.5}) {
    for (const Index r : {2, 4, 6}) {
      const GdTruncatedModel red(bal, r);
      auto input = [&](double t) {
        Vector u(1);
        u[0] = t < t_on ? amplitude * std::sin(1.1 * t) * std::sin(M_PI * t / t_on) : 0.0;
        return u;
      };
      // Classical RK4 on both models, same steps.
      Vector x = Vector::Zero(2 * p.N), z = Vector::Zero(r), y, yr;
      double err2 = 0, u2 = 0, max_full = 0, max_red = 0;
      auto accumulate = [&](double t, double w) {
        chain.output(x.head(p.N), x.tail(p.N), y);
        red.output(z, yr);
        err2 += w * (y - yr).squaredNorm();
        u2 += w * input(t).squaredNorm();
        max_full = std::max(max_full, elongation_norm(x.head(p.N)));
        max_red = std::max(max_red, elongation_norm(red.lift(z).head(p.N)));
      };
      for (int k = 0; k < steps; ++k) {
        const double t = k * dt;
        accumulate(t, dt * (k == 0 ? 0.5 : 1.0));
        rk4_step([&](const Vector& y, const Vector& u, Vector& dy) { full_rhs(chain, y, u, dy); },
                 input, t, dt, x);
        rk4_step([&](const Vector& y, const Vector& u, Vector& dy) { red.rhs(y, u, dy); }, input, t,
                 dt, z);
      }
      accumulate(t_end, dt / 2);
      ASSERT_LE(max_full, rho) << "the full trajectory leaves the region (amplitude " << amplitude
                               << ")";
      ASSERT_LE(max_red, rho) << "the reduced trajectory leaves the region";
      const double error = std::sqrt(err2), bound = bal.error_bound(r) * std::sqrt(u2);
      EXPECT_LE(error, bound) << "r = " << r << ", amplitude " << amplitude;
      std::printf("r = %lld, amplitude %.1f: ||y - y_r|| = %.3e <= bound %.3e (max ||e|| %.2f)\n",
                  static_cast<long long>(r), amplitude, error, bound, max_full);
    }
  }
}

TEST(DifferentialBalancing, GlobalInequalitiesAreInfeasibleForCubicSprings) {
  // Over every state the homogeneous inequalities H_s P + P H_s^T <= 0 force P's position block
  // to zero: no P >= eps I exists, and the solver must say so rather than return a matrix.
  const MassSpringChain chain(testing::test_chain_parameters(4, 2.0));
  const DifferentialBalancing bal =
      differential_balancing(chain.network(), options(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(bal.solved());
  EXPECT_EQ(bal.controllability.status, LmiStatus::infeasible) << bal.controllability.message;
  EXPECT_NE(bal.controllability.message.find("infeasible"), std::string::npos)
      << bal.controllability.message;
  EXPECT_EQ(bal.observability.status, LmiStatus::infeasible) << bal.observability.message;
  EXPECT_THROW(GdTruncatedModel(bal, 2), InvalidArgument);
  // With k_n = 0 the same request is the linear inequality alone, and feasible.
  const MassSpringChain linear(testing::test_chain_parameters(4, 0.0));
  EXPECT_TRUE(
      differential_balancing(linear.network(), options(std::numeric_limits<double>::infinity()))
          .solved());
}

TEST(DifferentialBalancing, BadOptionsNameTheValue) {
  const MassSpringChain chain(testing::test_chain_parameters(3, 2.0));
  try {
    differential_balancing(chain.network(), options(-1.0));
    FAIL() << "rho = -1 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos) << e.what();
  }
  DifferentialGramianOptions o = options(1.0);
  o.epsilon = 0.0;
  EXPECT_THROW(differential_balancing(chain.network(), o), InvalidArgument);
  const DifferentialBalancing bal = differential_balancing(chain.network(), options(0.1));
  ASSERT_TRUE(bal.solved());
  EXPECT_THROW(GdTruncatedModel(bal, 0), InvalidArgument);
  EXPECT_THROW(GdTruncatedModel(bal, 7), InvalidArgument);
}

// --- Networks ----------------------------------------------------------------------------------

/// The network's first-order Jacobian at positions q, from its own sparse nonlinear_jacobian.
Matrix jacobian_at(const NonlinearNetwork& net, const JacobianFamily& f, const Vector& q) {
  const Index N = net.n();
  Matrix J = f.A;
  J.bottomLeftCorner(N, N) -= f.M_inv * Matrix(net.nonlinear_jacobian(q));
  return J;
}

/// x' = f(x) + B u of the full network from its matrix-free force.
void full_rhs(const NonlinearNetwork& net, const Matrix& M_inv, const Vector& x, const Vector& u,
              Vector& dx) {
  const Index N = net.n();
  Vector F;
  net.force(x.head(N), x.tail(N), u, F);
  dx.resize(2 * N);
  dx.head(N) = x.tail(N);
  dx.tail(N) = M_inv * F;
}

/// Every vertex inequality of `lmi` and the inequality at `samples` random states of the region
/// (half of them on its boundary, a third concentrated on one coordinate) hold for P and Q.
void expect_region_gramians(const NonlinearNetwork& net, const DifferentialBalancing& bal,
                            double rho, int samples) {
  const JacobianFamily& f = bal.family;
  const Matrix& P = bal.controllability.X;
  const Matrix& Q = bal.observability.X;
  const Matrix BBt = f.B * f.B.transpose(), CtC = f.C.transpose() * f.C;
  const LmiFamily lmi = lmi_family(f, rho);
  for (std::size_t k = 0; k < lmi.affine.size(); ++k) {
    const Matrix& A = lmi.affine[k];
    const double lp = lyapunov_inequality_residual(A, P, BBt);
    const double lq = lyapunov_inequality_residual(Matrix(A.transpose()), Q, CtC);
    EXPECT_LE(lp, kInequalityTolerance * (2 * A.norm() * norm2(P) + norm2(BBt)))
        << "controllability vertex " << k;
    EXPECT_LE(lq, kInequalityTolerance * (2 * A.norm() * norm2(Q) + norm2(CtC)))
        << "observability vertex " << k;
  }
  std::mt19937 gen(11);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < samples; ++trial) {
    Vector q(net.n());
    for (Index i = 0; i < q.size(); ++i) q[i] = normal(gen);
    if (trial % 3 == 0) {
      q.setZero();
      q[trial % net.n()] = 1.0;
    }
    q *= rho / element_norm(f, q) * (trial % 2 == 0 ? 1.0 : 0.5);
    const Matrix J = jacobian_at(net, f, q);
    const double lp = lyapunov_inequality_residual(J, P, BBt);
    const double lq = lyapunov_inequality_residual(Matrix(J.transpose()), Q, CtC);
    EXPECT_LE(lp, kInequalityTolerance * (2 * J.norm() * norm2(P) + norm2(BBt)))
        << "state " << trial;
    EXPECT_LE(lq, kInequalityTolerance * (2 * J.norm() * norm2(Q) + norm2(CtC)))
        << "state " << trial;
  }
}

TEST(DifferentialBalancingNetwork, TheChainsNetworkFamilyIsDeltaAndTheCubic) {
  // The family of chain.network(), the one the chain is balanced through: G = Delta (the
  // (N+1) x N difference matrix with the walls), phi = (0, k_n, 0, 0) on every spring, and the
  // vertices A and A + 3 k_n rho^2 H_s written out from Delta's rows.
  const double rho = 0.2, k_n = 2.0;
  const MassSpringChain chain(testing::test_chain_parameters(6, k_n));
  const JacobianFamily f = jacobian_family(chain.network());
  const Index N = chain.n();
  Matrix Delta = Matrix::Zero(N + 1, N);
  for (Index r = 0; r <= N; ++r) {
    if (r < N) Delta(r, r) = 1.0;
    if (r >= 1) Delta(r, r - 1) = -1.0;
  }
  EXPECT_TRUE(matrices_near(f.G, Delta, 0.0));
  Matrix coefficients = Matrix::Zero(N + 1, 4);
  coefficients.col(1).setConstant(k_n);
  EXPECT_TRUE(matrices_near(f.coefficients, coefficients, 0.0));
  ASSERT_EQ(f.elements.size(), static_cast<std::size_t>(N + 1));
  const LmiFamily l = lmi_family(f, rho);
  ASSERT_EQ(l.affine.size(), static_cast<std::size_t>(N + 2));
  for (std::size_t k = 0; k < l.affine.size(); ++k) {
    Matrix expected = f.A;
    if (k > 0) {
      const Vector d = Delta.row(static_cast<Index>(k) - 1).transpose();
      expected.bottomLeftCorner(N, N) -= 3.0 * k_n * rho * rho * (f.M_inv * d) * d.transpose();
    }
    EXPECT_TRUE(matrices_near(l.affine[k], expected, 1e-14)) << "vertex " << k;
  }
}

LatticeParameters small_lattice() {
  LatticeParameters p;
  p.nx = 3;
  p.ny = 3;
  return p;  // m = k_l = d = 1, k_n = 2, input and output at node (3, 3)
}

TEST(DifferentialBalancingNetwork, LatticeGramiansHoldAndBoundTheError) {
  const double rho = 0.5;
  const NonlinearNetwork net = lattice_network(small_lattice());
  const DifferentialBalancing bal = differential_balancing(net, options(rho));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  EXPECT_EQ(bal.controllability.residuals.size(), net.n_elements() + 1);  // A and one per spring
  expect_region_gramians(net, bal, rho, 45);
  // At r = n the truncated model is the lattice in balanced coordinates: its right-hand side,
  // with the springs' force through E_r and G_r, is W^T f(V z) of the network's own force.
  {
    const Index n = bal.V.cols();
    const GdTruncatedModel full(bal, n);
    std::mt19937 gen(5);
    std::normal_distribution<double> normal;
    Vector z(n), u(1), dz, dx;
    for (Index i = 0; i < n; ++i) z[i] = 0.3 * normal(gen);
    u[0] = -0.6;
    full.rhs(z, u, dz);
    full_rhs(net, bal.family.M_inv, full.lift(z), u, dx);
    EXPECT_TRUE(matrices_near(dz, Vector(bal.W.transpose() * dx), 1e-9, Compare::relative));
  }
  // The a priori bound on a simulated input that keeps both trajectories in the region.
  const Index N = net.n();
  const double dt = 0.005, t_on = 12.0, t_end = 40.0;
  const auto steps = static_cast<int>(std::lround(t_end / dt));
  const Matrix& M_inv = bal.family.M_inv;
  for (const Index r : {2, 6}) {
    const GdTruncatedModel red(bal, r);
    auto input = [&](double t) {
      Vector u(1);
      u[0] = t < t_on ? 0.4 * std::sin(1.1 * t) * std::sin(M_PI * t / t_on) : 0.0;
      return u;
    };
    Vector x = Vector::Zero(2 * N), z = Vector::Zero(r), y, yr;
    double err2 = 0, u2 = 0, max_full = 0, max_red = 0;
    auto accumulate = [&](double t, double w) {
      net.output(x.head(N), x.tail(N), y);
      red.output(z, yr);
      err2 += w * (y - yr).squaredNorm();
      u2 += w * input(t).squaredNorm();
      max_full = std::max(max_full, element_norm(bal.family, x.head(N)));
      max_red = std::max(max_red, element_norm(bal.family, red.lift(z).head(N)));
    };
    for (int k = 0; k < steps; ++k) {
      const double t = k * dt;
      accumulate(t, dt * (k == 0 ? 0.5 : 1.0));
      rk4_step(
          [&](const Vector& y, const Vector& u, Vector& dy) { full_rhs(net, M_inv, y, u, dy); },
          input, t, dt, x);
      rk4_step([&](const Vector& y, const Vector& u, Vector& dy) { red.rhs(y, u, dy); }, input, t,
               dt, z);
    }
    accumulate(t_end, dt / 2);
    ASSERT_LE(max_full, rho) << "the full trajectory leaves the region";
    ASSERT_LE(max_red, rho) << "the reduced trajectory leaves the region";
    const double error = std::sqrt(err2), bound = bal.error_bound(r) * std::sqrt(u2);
    EXPECT_LE(error, bound) << "r = " << r;
    std::printf("lattice 3 x 3, r = %lld: ||y - y_r|| = %.3e <= bound %.3e (max ||G q|| %.2f)\n",
                static_cast<long long>(r), error, bound, max_full);
  }
}

TEST(DifferentialBalancingNetwork, LawsOfBothSignsGetTheCrossPolytope) {
  // Softening cubic plus a quartic term on every spring of a small chain-shaped network: c_s
  // takes both signs, so every element has the vertices A + cbar_s H_s and A - cbar_s H_s,
  // cbar_s = 3 |a3| rho^2 + 4 |a4| rho^3 + 5 |a5| rho^4.
  const double rho = 0.2;
  const NonlinearNetwork chain_net =
      MassSpringChain(testing::test_chain_parameters(4, 2.0)).network();
  Matrix law(1, 4);
  law << 0.0, -1.0, 0.5, 0.25;
  const NonlinearNetwork net(chain_net.linear_system(), chain_net.G(), law);
  EXPECT_EQ(element_bound(law.data()), ElementBound::two_sided);
  const double cbar =
      3.0 * 1.0 * rho * rho + 4.0 * 0.5 * rho * rho * rho + 5.0 * 0.25 * std::pow(rho, 4);
  EXPECT_TRUE(
      scalars_near(element_stiffness_bound(law.data(), rho), cbar, 1e-15, Compare::relative));
  const JacobianFamily f = jacobian_family(net);
  const LmiFamily lmi = lmi_family(f, rho);
  ASSERT_EQ(lmi.affine.size(), static_cast<std::size_t>(1 + 2 * net.n_elements()));
  EXPECT_TRUE(matrices_near(Matrix(lmi.affine[1] + lmi.affine[2]), Matrix(2.0 * f.A), 1e-14));
  const DifferentialBalancing bal = differential_balancing(net, options(rho));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  expect_region_gramians(net, bal, rho, 30);
}

TEST(DifferentialBalancingNetwork, AnS2TermIsRefusedNamingTheElement) {
  const NonlinearNetwork chain_net =
      MassSpringChain(testing::test_chain_parameters(4, 2.0)).network();
  Matrix law = Matrix::Zero(chain_net.n_elements(), 4);
  law.col(1).setConstant(2.0);
  law(2, 0) = 0.25;  // element 3: phi(e) = 0.25 e^2 + 2 e^3
  const NonlinearNetwork net(chain_net.linear_system(), chain_net.G(), law);
  try {
    differential_balancing(net, options(0.2));
    FAIL() << "a law with an s^2 term accepted";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("element 3 "), std::string::npos) << what;
    EXPECT_NE(what.find("0.25"), std::string::npos) << what;
    EXPECT_NE(what.find("sqrt(m)"), std::string::npos) << what;
  }
  // Over every state the homogeneous inequalities +-H_s cover any law: accepted (and, with
  // cubic springs, infeasible).
  EXPECT_NO_THROW(require_region_laws(law, std::numeric_limits<double>::infinity()));
}

using DifferentialBalancingRunner = testing::TempDirTest;

TEST_F(DifferentialBalancingRunner, ALatticeTooLargeForTheSdpIsRefusedWithItsSize) {
  const std::string text = R"([experiment]
name = "gd_lattice"
[model]
type = "lattice"
nx = 10
[input]
type = "sine"
[simulation]
integrator = "implicit_midpoint"
dt = 0.05
t_end = 1.0
[reduction]
method = "differential_balancing"
order = 4
)";
  try {
    experiments::parse_experiment(text, "gd.toml", dir_,
                                  {"experiment.output=\"" + (dir_ / "x.h5").string() + "\""});
    FAIL() << "a lattice of 100 nodes accepted";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    for (const char* part : {"differential_balancing", "N = 100 coordinates", "m = 220 nonlinear",
                             "20100 unknowns", "222 blocks", "max_masses = 40"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
  }
  // The same lattice at 3 x 3 is within the limit.
  EXPECT_NO_THROW(
      experiments::parse_experiment(text, "gd.toml", dir_,
                                    {"model.nx=3", "reduction.rho=0.5",
                                     "experiment.output=\"" + (dir_ / "y.h5").string() + "\""}));
}

TEST_F(DifferentialBalancingRunner, ANetworkFileWithAnE2TermIsRefusedNamingTheElement) {
  // The chain of 5 masses as a network file, element 2 with phi(e) = 0.5 e^2 + 2 e^3.
  const NonlinearNetwork chain_net =
      MassSpringChain(testing::test_chain_parameters(5, 2.0)).network();
  Matrix law = Matrix::Zero(chain_net.n_elements(), 4);
  law.col(1).setConstant(2.0);
  law(1, 0) = 0.5;
  const std::filesystem::path file = dir_ / "net.mat";
  io::export_model(file, chain_net.linear_system(), io::ModelFileFormat::mat_v5,
                   {{"G", chain_net.G()}, {"phi", law}});
  const std::string text =
      "[experiment]\nname = \"gd\"\n[model]\ntype = \"network\"\npath = \"" + file.string() +
      "\"\n[input]\ntype = \"sine\"\n[simulation]\nintegrator = \"implicit_midpoint\"\n"
      "dt = 0.05\nt_end = 1.0\n[reduction]\nmethod = \"differential_balancing\"\norder = 2\n"
      "rho = 0.2\n";
  const std::vector<std::string> set = {"experiment.output=\"" + (dir_ / "x.h5").string() + "\""};
  try {
    experiments::parse_experiment(text, "gd.toml", dir_, set);
    FAIL() << "a network with an e^2 term accepted";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    for (const char* part : {"differential_balancing", "element 2 ", "a2 = 0.5", "sqrt(m)"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
  }
  // Over every state any law is accepted (the SDP then reports the inequalities infeasible).
  std::vector<std::string> global = set;
  global.push_back("reduction.rho=inf");
  EXPECT_NO_THROW(experiments::parse_experiment(text, "gd.toml", dir_, global));
}

}  // namespace
}  // namespace mor
