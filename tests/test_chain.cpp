// SPDX-License-Identifier: GPL-3.0-or-later
// The chain against the MORwiki formulas, built here independently from T, U and L; its
// Jacobian and energy against finite differences; its spectrum against the analytic one.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include <Eigen/Dense>

#include "models/mass_spring_chain.hpp"
#include "src/core/errors.hpp"
#include "support/chains.hpp"
#include "support/compare.hpp"
#include "support/finite_differences.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

// Rounding of a handful of flops on O(1) values.
constexpr double kStencilTol = 1e-13;
// Central differences with step 1e-6 on cubic terms of O(1): truncation ~1e-12, rounding ~1e-10.
constexpr double kFiniteDifferenceTol = 1e-7;

Matrix tridiag_T(Index N) {  // tridiag(1, -2, 1) as printed on MORwiki
  Matrix T = Matrix::Zero(N, N);
  for (Index i = 0; i < N; ++i) {
    T(i, i) = -2.0;
    if (i + 1 < N) T(i, i + 1) = T(i + 1, i) = 1.0;
  }
  return T;
}

TEST(Chain, ForceMatchesMorwikiFormulas) {
  for (Index N : {1, 2, 3, 17}) {
    const ChainParameters p = testing::test_chain_parameters(N);
    const MassSpringChain chain(p);
    const Matrix T = tridiag_T(N);
    Matrix U = Matrix::Identity(N, N), L = Matrix::Identity(N, N);
    for (Index i = 0; i + 1 < N; ++i) {
      U(i, i + 1) = -1.0;
      L(i + 1, i) = -1.0;
    }
    const Vector q = Vector::Random(N), v = Vector::Random(N), u = Vector::Constant(1, 0.37);
    Vector B = Vector::Zero(N);
    B(N - 1) = 1.0;
    // M v' = K_w p + D_w v + f(p) + B u with f(p) = -k_n (Up)^3 - k_n (Lp)^3.
    const Vector expected = p.k_l * T * q + p.d * T * v - p.k_n * (U * q).array().cube().matrix() -
                            p.k_n * (L * q).array().cube().matrix() + B * u(0);
    Vector F;
    chain.force(q, v, u, F);
    EXPECT_TRUE(matrices_near(F, expected, kStencilTol, Compare::relative)) << "N = " << N;
    // The exported linear part and the cubic force give the same F in the mechanical convention.
    const SecondOrderSystem s = chain.linear_system();
    Vector g;
    chain.nonlinear_force(q, g);
    const Vector F_sparse = s.B * u - s.D * v - s.K * q - g;
    EXPECT_TRUE(matrices_near(F, F_sparse, kStencilTol, Compare::relative)) << "N = " << N;
  }
}

TEST(Chain, ForceAcceptsLazyExpressions) {
  const MassSpringChain chain(testing::test_chain_parameters(9));
  const Vector q = Vector::Random(9), v = Vector::Random(9), k = Vector::Random(9),
               u = Vector::Ones(1);
  Vector F_lazy, F_eval;
  chain.force(q + 0.3 * k, v - 0.1 * k, u, F_lazy);
  const Vector qe = q + 0.3 * k, ve = v - 0.1 * k;
  chain.force(qe, ve, u, F_eval);
  EXPECT_TRUE(matrices_near(F_lazy, F_eval, 0.0));
}

TEST(Chain, MatrixStructureAndSigns) {
  const Index N = 6;
  const ChainParameters p = testing::test_chain_parameters(N);
  const SecondOrderSystem s = MassSpringChain(p).linear_system();
  EXPECT_TRUE(matrices_near(Matrix(s.M), p.m * Matrix::Identity(N, N), 0.0));
  EXPECT_TRUE(matrices_near(Matrix(s.K), -p.k_l * tridiag_T(N), 0.0));
  EXPECT_TRUE(matrices_near(Matrix(s.D), -p.d * tridiag_T(N), 0.0));
  EXPECT_EQ(s.B.nonZeros(), 1);
  EXPECT_EQ(s.B.coeff(N - 1, 0), 1.0);
  EXPECT_EQ(s.Cp.nonZeros(), 1);
  EXPECT_EQ(s.Cp.coeff(0, N - 1), 1.0);
  EXPECT_EQ(s.Cv.nonZeros(), 0);
  // Fixed-fixed: K is positive definite with eigenvalues 4 k_l sin^2(j pi / (2 (N + 1))).
  Eigen::SelfAdjointEigenSolver<Matrix> es{Matrix(s.K)};
  Vector expected(N);
  for (Index j = 1; j <= N; ++j)
    expected(j - 1) = 4.0 * p.k_l * std::pow(std::sin(j * std::numbers::pi / (2.0 * (N + 1))), 2);
  std::sort(expected.data(), expected.data() + N);
  EXPECT_TRUE(matrices_near(es.eigenvalues(), expected, 1e-14, Compare::relative));
}

TEST(Chain, DescriptorFormHasChainSpectrum) {
  // With m = k_l = d = 1 each mode solves lambda^2 + s lambda + s = 0, s = 4 sin^2(j pi/(2(N+1))):
  // all eigenvalues of (E, A) in the open left half plane, |lambda| <= 2.
  ChainParameters p;
  p.N = 5;
  const DescriptorSystem ds = MassSpringChain(p).descriptor_system();
  const Matrix A = Matrix(ds.E).inverse() * Matrix(ds.A);
  Eigen::EigenSolver<Matrix> es(A);
  for (Index j = 1; j <= p.N; ++j) {
    const double s = 4.0 * std::pow(std::sin(j * std::numbers::pi / (2.0 * (p.N + 1))), 2);
    const std::complex<double> root = (-s + std::sqrt(std::complex<double>(s * s - 4.0 * s))) / 2.0;
    double best = 1e300;
    for (Index i = 0; i < es.eigenvalues().size(); ++i)
      best = std::min(best, std::abs(es.eigenvalues()(i) - root));
    EXPECT_LT(best, 1e-12) << "mode " << j << " eigenvalue " << root;
  }
  EXPECT_LT(es.eigenvalues().real().maxCoeff(), 0.0);
}

TEST(Chain, JacobianMatchesFiniteDifferences) {
  const Index N = 11;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  const Vector q = Vector::Random(N);
  const Matrix J = Matrix(chain.nonlinear_jacobian(q));
  const Matrix J_fd = testing::central_difference_jacobian(
      [&](const Vector& x, Vector& g) { chain.nonlinear_force(x, g); }, q);
  EXPECT_TRUE(matrices_near(J, J_fd, kFiniteDifferenceTol, Compare::relative));
  EXPECT_TRUE(matrices_near(J, Matrix(J.transpose()), 0.0)) << "dg/dq is symmetric (g = grad V)";
}

TEST(Chain, PotentialIsTheForcePotential) {
  // grad V = K q + g(q): the energy used in the balance tests belongs to these forces.
  const Index N = 7;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  const Vector q = Vector::Random(N);
  Vector g;
  chain.nonlinear_force(q, g);
  const Vector grad = chain.linear_system().K * q + g;
  const Vector grad_fd = testing::central_difference_gradient(
      [&](const Vector& x) { return chain.potential_energy(x); }, q);
  EXPECT_TRUE(matrices_near(grad, grad_fd, kFiniteDifferenceTol, Compare::relative));
  const Vector v = Vector::Random(N);
  EXPECT_TRUE(testing::scalars_near(chain.dissipation_power(v), v.dot(chain.linear_system().D * v),
                                    kStencilTol, Compare::relative));
}

TEST(Chain, RayleighDampingAndChosenPorts) {
  ChainParameters p = testing::test_chain_parameters(8);
  p.damping = SpringDamping::rayleigh;
  p.alpha = 0.05;
  p.beta = 0.3;
  p.inputs = {1, 4};
  p.outputs = {2, 8};
  p.output_quantity = OutputQuantity::velocity;
  const MassSpringChain chain(p);
  const SecondOrderSystem s = chain.linear_system();
  EXPECT_TRUE(matrices_near(Matrix(s.D), Matrix(p.alpha * s.M + p.beta * s.K), 1e-15));
  EXPECT_EQ(s.B.coeff(0, 0), 1.0);
  EXPECT_EQ(s.B.coeff(3, 1), 1.0);
  EXPECT_EQ(s.Cv.coeff(0, 1), 1.0);
  EXPECT_EQ(s.Cv.coeff(1, 7), 1.0);
  EXPECT_EQ(s.Cp.nonZeros(), 0);
  const Vector q = Vector::Random(8), v = Vector::Random(8), u = Vector::Random(2);
  Vector F, g, y;
  chain.force(q, v, u, F);
  chain.nonlinear_force(q, g);
  EXPECT_TRUE(
      matrices_near(F, Vector(s.B * u - s.D * v - s.K * q - g), kStencilTol, Compare::relative));
  chain.output(q, v, y);
  EXPECT_TRUE(matrices_near(y, Vector(s.Cv * v), 0.0));
}

TEST(Chain, IterationMatrixSolvesTheAssembledSystem) {
  // Backward error of a stable direct solve of this SPD system (condition ~1): a few eps.
  constexpr double kSolveTol = 1e-13;
  for (Index N : {1, 2, 3, 40, 1001}) {
    const MassSpringChain chain(testing::test_chain_parameters(N));
    const Vector q = Vector::Random(N);
    const double a = 1.0, b = 0.05, c = 0.000625;
    const SecondOrderSystem s = chain.linear_system();
    // Assembled here from the exported matrices, independently of the workspace's stencil.
    const SparseMatrix S = a * s.M + b * s.D + c * (s.K + chain.nonlinear_jacobian(q));
    const Vector r = Vector::Random(N);
    auto check = [&](MassSpringChain::Workspace& ws) {
      ws.factorize_iteration(a, b, c, q);
      Vector x;
      ws.solve_iteration(r, x);
      EXPECT_TRUE(matrices_near(Vector(S * x), r, kSolveTol, Compare::relative))
          << ws.solver_name() << ", N = " << N;
      Vector y = r;  // in place
      ws.solve_iteration(y, y);
      EXPECT_TRUE(matrices_near(y, x, 0.0)) << ws.solver_name() << ", N = " << N;
    };
    MassSpringChain::Workspace tridiagonal(chain);
    EXPECT_EQ(tridiagonal.solver(), ChainSolver::tridiagonal);
    EXPECT_EQ(tridiagonal.solver_name(), "tridiagonal");
    check(tridiagonal);
    for (SparseBackend backend :
         {SparseBackend::cholmod, SparseBackend::klu, SparseBackend::umfpack}) {
      MassSpringChain::Workspace ws(chain, backend, ChainSolver::sparse);
      EXPECT_EQ(ws.solver_name(), to_string(backend));
      check(ws);
    }
  }
}

TEST(Chain, TheSolverKeyOfAnExperimentDoesNotLeaveTheTridiagonalPath) {
  // An experiment's `solver` (a SuiteSparse backend, for generic sparse models) reaches the
  // chain's workspace as its backend argument; the chain still uses its tridiagonal solver.
  const MassSpringChain chain(testing::test_chain_parameters(10));
  const MassSpringChain::Workspace ws(chain, SparseBackend::klu);
  EXPECT_EQ(ws.solver(), ChainSolver::tridiagonal);
  EXPECT_EQ(ws.solver_name(), "tridiagonal");
}

TEST(Chain, AnIterationMatrixThatIsNotPositiveDefiniteIsReported) {
  // a = -1 makes S = -M + ... indefinite: the factorization names the row and pivot.
  const MassSpringChain chain(testing::test_chain_parameters(12));
  MassSpringChain::Workspace ws(chain);
  try {
    ws.factorize_iteration(-1.0, 0.0, 0.0, Vector::Zero(12));
    ADD_FAILURE() << "no error";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("not positive definite"), std::string::npos) << e.what();
  }
}

TEST(Chain, BadParametersNameTheValue) {
  auto message = [](ChainParameters p) {
    try {
      MassSpringChain chain(p);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ChainParameters p;
  p.N = 0;
  EXPECT_NE(message(p).find("N = 0"), std::string::npos) << message(p);
  p = ChainParameters{};
  p.N = -5;
  EXPECT_NE(message(p).find("-5"), std::string::npos) << message(p);
  p = ChainParameters{};
  p.m = -1.0;
  EXPECT_NE(message(p).find("m must be > 0, got -1"), std::string::npos) << message(p);
  p = ChainParameters{};
  p.k_n = std::nan("");
  EXPECT_NE(message(p).find("k_n must be finite, got nan"), std::string::npos) << message(p);
  p = ChainParameters{};
  p.inputs = {1001};
  EXPECT_NE(message(p).find("1001"), std::string::npos) << message(p);
}

}  // namespace
}  // namespace mor
