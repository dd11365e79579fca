// SPDX-License-Identifier: GPL-3.0-or-later
// Generalized differential balancing of the nonlinear chain (reduction/differential_balancing.hpp):
// the computed Gramians satisfy every vertex inequality and the differential Lyapunov inequality
// at sampled states of the region (checked here with Eigen's eigensolver, independently of the
// SDP); at k_n = 0 they dominate the linear Gramians (P >= P_lin, Q >= Q_lin, hence sigma_i >=
// sigma_i^lin) and the trace-minimal ones equal them; the GD-truncated model at r = n is the full
// model in other coordinates; the a priori bound 2 sum_{i>r} sigma_i holds on simulated
// trajectories that stay in the region; the global inequalities (every state) are infeasible for
// k_n > 0 and the solver says so; bad options are rejected with the value named.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "models/mass_spring_chain.hpp"
#include "reduction/dense_lyapunov.hpp"
#include "reduction/differential_balancing.hpp"
#include "src/core/errors.hpp"
#include "support/chains.hpp"
#include "support/compare.hpp"

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
  const ChainJacobianFamily f = chain_jacobian_family(chain);
  const Index N = chain.n();
  Matrix J = f.A;
  J.bottomLeftCorner(N, N) -= f.M_inv * Matrix(chain.nonlinear_jacobian(q));
  return J;
}

/// x' = f(x) + B u of the full chain from its matrix-free force.
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
  const DifferentialBalancing bal = differential_balancing(chain, options(rho));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  const ChainJacobianFamily& f = bal.family;
  const Matrix& P = bal.controllability.X;
  const Matrix& Q = bal.observability.X;
  const Matrix BBt = f.B * f.B.transpose(), CtC = f.C.transpose() * f.C;
  const LmiFamily lmi = chain_lmi_family(f, rho);
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
  const DifferentialBalancing bal = differential_balancing(chain, options(1.0));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  const ChainJacobianFamily& f = bal.family;
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
    if (sigma_lin[i] > 1e-3 * sigma_lin[0])
      EXPECT_TRUE(
          scalars_near(bal.sigma[i], sigma_lin[i], kLinearGramianTolerance, Compare::relative))
          << "i = " << i;
  }
}

TEST(DifferentialBalancing, FullOrderTruncationIsTheChainInBalancedCoordinates) {
  const MassSpringChain chain(testing::test_chain_parameters(5, 2.0));
  const DifferentialBalancing bal = differential_balancing(chain, options(0.2));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message;
  const Index n = bal.V.cols();
  const GdTruncatedChain full(bal, n);
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
  const DifferentialBalancing bal = differential_balancing(chain, options(rho));
  ASSERT_TRUE(bal.solved()) << bal.controllability.message << "\n" << bal.observability.message;
  const double dt = 0.005, t_on = 12.0, t_end = 40.0;
  const auto steps = static_cast<int>(std::lround(t_end / dt));
  for (const double amplitude : {0.2, 0.5}) {
    for (const Index r : {2, 4, 6}) {
      const GdTruncatedChain red(bal, r);
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
        const Vector u0 = input(t), u1 = input(t + dt / 2), u2v = input(t + dt);
        Vector k1, k2, k3, k4;
        full_rhs(chain, x, u0, k1);
        full_rhs(chain, x + dt / 2 * k1, u1, k2);
        full_rhs(chain, x + dt / 2 * k2, u1, k3);
        full_rhs(chain, x + dt * k3, u2v, k4);
        x += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
        red.rhs(z, u0, k1);
        red.rhs(z + dt / 2 * k1, u1, k2);
        red.rhs(z + dt / 2 * k2, u1, k3);
        red.rhs(z + dt * k3, u2v, k4);
        z += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
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
      differential_balancing(chain, options(std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(bal.solved());
  EXPECT_EQ(bal.controllability.status, LmiStatus::infeasible) << bal.controllability.message;
  EXPECT_NE(bal.controllability.message.find("infeasible"), std::string::npos)
      << bal.controllability.message;
  EXPECT_EQ(bal.observability.status, LmiStatus::infeasible) << bal.observability.message;
  EXPECT_THROW(GdTruncatedChain(bal, 2), InvalidArgument);
  // With k_n = 0 the same request is the linear inequality alone, and feasible.
  const MassSpringChain linear(testing::test_chain_parameters(4, 0.0));
  EXPECT_TRUE(
      differential_balancing(linear, options(std::numeric_limits<double>::infinity())).solved());
}

TEST(DifferentialBalancing, BadOptionsNameTheValue) {
  const MassSpringChain chain(testing::test_chain_parameters(3, 2.0));
  try {
    differential_balancing(chain, options(-1.0));
    FAIL() << "rho = -1 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos) << e.what();
  }
  DifferentialGramianOptions o = options(1.0);
  o.epsilon = 0.0;
  EXPECT_THROW(differential_balancing(chain, o), InvalidArgument);
  const DifferentialBalancing bal = differential_balancing(chain, options(0.1));
  ASSERT_TRUE(bal.solved());
  EXPECT_THROW(GdTruncatedChain(bal, 0), InvalidArgument);
  EXPECT_THROW(GdTruncatedChain(bal, 7), InvalidArgument);
}

}  // namespace
}  // namespace mor
