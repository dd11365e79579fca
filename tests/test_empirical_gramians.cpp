// SPDX-License-Identifier: GPL-3.0-or-later
// Empirical Gramians of the mass-spring chain: on a linear chain they converge to the algebraic
// Gramians at second order with the predicted error term, do not depend on the amplitudes, and
// give the position-balanced singular values of second-order BT; on the nonlinear chain they
// agree with the linear ones at small amplitude and see the nonlinearity at large; the balanced
// bases are bi-orthonormal; bad input is rejected with the value named.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "models/mass_spring_chain.hpp"
#include "reduction/balanced_truncation.hpp"
#include "reduction/dense_lyapunov.hpp"
#include "reduction/empirical_gramians.hpp"
#include "reduction/empirical_gramians_impl.hpp"
#include "src/core/errors.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::scalars_near;

// The linear test chain: N = 6, m = 2 (so that E = diag(I, M) != I and the M^{-1} of the
// impulse is exercised), Rayleigh alpha = beta = 0.2. Its slowest decay rate is
// (alpha + beta omega_1^2) / 2 = 0.110 (omega_1^2 = 0.099), so over T = 100 the Gramian integrands
// (squares of the free responses) fall to about exp(-22) = 3e-10 of their start.
constexpr Index kN = 6;
constexpr double kMass = 2.0;
constexpr double kHorizon = 100.0;
constexpr double kDt = 0.01;

/// The horizon covers the decay: exp(2 alpha T) <= this, alpha the spectral abscissa.
constexpr double kTailTol = 1e-8;
/// ||W - W_algebraic||_max <= this * ||W_algebraic||_max at dt = 0.01. With implicit midpoint,
/// every step kept and an infinite horizon the error is exactly dt^2/4 X (see the header), and
/// ||X|| <= ||E^{-1} A||^2 ||W|| <= 4 ||W|| here: dt^2/4 * 4 = 1e-4 (2.2e-5 measured).
constexpr double kQuadratureTol = 1e-4;
/// The error equals the predicted dt^2/4 X to this fraction of ||dt^2/4 X||: what remains is the
/// truncated tail (~3e-10 ||W||, i.e. ~1.5e-5 of a 2e-5 ||W|| error term; 6e-6 and 7e-6
/// measured) and rounding over 1e4 steps (~1e-12 ||W||).
constexpr double kPredictedErrorTol = 1e-4;
/// Scaling a linear system's initial state by c scales its response by c to rounding: each
/// operation of a step commutes with the scaling up to one rounding, eps * (steps) at most.
constexpr double kAmplitudeInvarianceTol = 1e-12;
/// The cubic springs change the response by O(k_n c^2 |e|^2) relative, e the elongation of the
/// unit response (|e| <= 1 here): at c = 1e-3 and k_n = 2 about 2e-6 (2e-7 controllability,
/// 1e-6 observability measured); the tolerance keeps a factor 50, far below the effect at c = 1.
constexpr double kSmallAmplitudeTol = 1e-4;
/// At c = 1 the Gramians must differ from the linear ones by more than this (0.16 controllability,
/// 0.42 observability measured).
constexpr double kNonlinearEffect = 1e-3;
/// W^T V = I_r: a product of SVD factors, exact to rounding times cond(Sigma_r)^{1/2} ~ 1e2
/// (2e-15 measured).
constexpr double kBiorthogonalTol = 1e-10;

MassSpringChain linear_chain() {
  ChainParameters p;
  p.N = kN;
  p.m = kMass;
  p.k_n = 0.0;
  p.damping = SpringDamping::rayleigh;
  p.alpha = 0.2;
  p.beta = 0.2;
  return MassSpringChain(p);
}

/// The benchmark chain (dampers d = 1, cubic springs k_n) with N masses.
MassSpringChain benchmark_chain(Index N, double k_n) {
  ChainParameters p;
  p.N = N;
  p.k_n = k_n;
  return MassSpringChain(p);
}

EmpiricalGramianOptions midpoint(double dt, double t_end, std::vector<double> amplitudes) {
  EmpiricalGramianOptions o;
  o.amplitudes = std::move(amplitudes);
  o.integrator.scheme = Scheme::implicit_midpoint;
  o.integrator.dt = dt;
  o.integrator.t_end = t_end;
  return o;
}

Matrix controllability(const MassSpringChain& chain, const EmpiricalGramianOptions& o) {
  const Matrix Z = empirical_controllability_factor(chain.network(), o);
  return Z * Z.transpose();
}

/// The algebraic Gramians of the linear part in the explicit form x' = A_hat x + B_hat u,
/// A_hat = E^{-1} A, B_hat = E^{-1} B (the system the free responses follow), and the Gramians
/// X_c, X_o of the midpoint-trapezoid error terms (B_hat -> A_hat B_hat, C -> C A_hat).
/// P is the descriptor P; Qt = E^T Q E is what the observability runs converge to.
struct Algebraic {
  Matrix P, Qt, Xc, Xo;
  double abscissa = 0;
};

Algebraic algebraic_gramians(const MassSpringChain& chain) {
  const DescriptorSystem ds = chain.descriptor_system();
  const Eigen::PartialPivLU<Matrix> E(Matrix(ds.E));
  const Matrix A = E.solve(Matrix(ds.A)), B = E.solve(Matrix(ds.B)), C = Matrix(ds.C);
  auto gramian = [&](const Matrix& b, const Matrix& c, GramianKind kind) {
    const Matrix Z = dense_gramian_factor(Matrix(), A, b, c, kind);
    return Matrix(Z * Z.transpose());
  };
  Algebraic g;
  g.P = gramian(B, C, GramianKind::controllability);
  g.abscissa = Eigen::EigenSolver<Matrix>(A, false).eigenvalues().real().maxCoeff();
  g.Qt = gramian(B, C, GramianKind::observability);
  g.Xc = gramian(A * B, C, GramianKind::controllability);
  g.Xo = gramian(B, C * A, GramianKind::observability);
  return g;
}

double relative_error(const Matrix& a, const Matrix& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

TEST(EmpiricalGramians, ControllabilityConvergesToTheAlgebraicGramianAtSecondOrder) {
  const auto chain = linear_chain();
  const Algebraic g = algebraic_gramians(chain);
  ASSERT_LT(g.abscissa, 0.0);
  EXPECT_LE(std::exp(2.0 * g.abscissa * kHorizon), kTailTol) << "abscissa " << g.abscissa;

  const Matrix W1 = controllability(chain, midpoint(kDt, kHorizon, {1.0}));
  const Matrix W2 = controllability(chain, midpoint(kDt / 2, kHorizon, {1.0}));
  EXPECT_TRUE(matrices_near(W1, g.P, kQuadratureTol, Compare::relative));
  const double e1 = relative_error(W1, g.P), e2 = relative_error(W2, g.P);
  EXPECT_GE(e1 / e2, 3.0) << "errors " << e1 << ", " << e2;
  EXPECT_LE(e1 / e2, 5.0) << "errors " << e1 << ", " << e2;
  // The error is the predicted dt^2/4 X_c, not merely of its size.
  const Matrix predicted = (kDt * kDt / 4) * g.Xc;
  EXPECT_TRUE(matrices_near(Matrix(W1 - g.P), predicted, kPredictedErrorTol, Compare::relative));
}

TEST(EmpiricalGramians, ObservabilityConvergesToTheAlgebraicGramianAtSecondOrder) {
  const auto chain = linear_chain();
  const Algebraic g = algebraic_gramians(chain);
  const Matrix I = Matrix::Identity(2 * kN, 2 * kN);
  const Matrix W1 = empirical_observability(chain.network(), I, midpoint(kDt, kHorizon, {1.0}));
  const Matrix W2 = empirical_observability(chain.network(), I, midpoint(kDt / 2, kHorizon, {1.0}));
  EXPECT_TRUE(matrices_near(W1, Matrix(W1.transpose()), 0.0));  // R^T R is symmetric exactly
  EXPECT_TRUE(matrices_near(W1, g.Qt, kQuadratureTol, Compare::relative));
  const double e1 = relative_error(W1, g.Qt), e2 = relative_error(W2, g.Qt);
  EXPECT_GE(e1 / e2, 3.0) << "errors " << e1 << ", " << e2;
  EXPECT_LE(e1 / e2, 5.0) << "errors " << e1 << ", " << e2;
  const Matrix predicted = (kDt * kDt / 4) * g.Xo;
  EXPECT_TRUE(matrices_near(Matrix(W1 - g.Qt), predicted, kPredictedErrorTol, Compare::relative));
  // Position directions [Phi; 0] give Phi^T Q_qq Phi (the top-left block of E^T Q E).
  const Matrix Phi = Matrix::Identity(kN, 2);
  const Matrix Wsub = empirical_observability(chain.network(), position_directions(Phi),
                                              midpoint(kDt, kHorizon, {1.0}));
  EXPECT_TRUE(matrices_near(Wsub, Matrix(W1.topLeftCorner(2, 2)), kAmplitudeInvarianceTol,
                            Compare::relative));
}

TEST(EmpiricalGramians, LinearGramiansDoNotDependOnTheAmplitude) {
  const auto chain = linear_chain();
  const Matrix I = Matrix::Identity(2 * kN, 2 * kN);
  const auto small = midpoint(kDt, 20.0, {0.1}), large = midpoint(kDt, 20.0, {10.0});
  EXPECT_TRUE(matrices_near(controllability(chain, small), controllability(chain, large),
                            kAmplitudeInvarianceTol, Compare::relative));
  EXPECT_TRUE(matrices_near(empirical_observability(chain.network(), I, small),
                            empirical_observability(chain.network(), I, large),
                            kAmplitudeInvarianceTol, Compare::relative));
}

TEST(EmpiricalGramians, NonlinearGramiansAreLinearAtSmallAmplitudeOnly) {
  const auto nonlinear = benchmark_chain(kN, 2.0);
  const auto linear = benchmark_chain(kN, 0.0);
  const Matrix I = Matrix::Identity(2 * kN, 2 * kN);
  const auto reference = midpoint(kDt, 30.0, {1.0});
  const Matrix Pc = controllability(linear, reference);
  const Matrix Po = empirical_observability(linear.network(), I, reference);

  const auto small = midpoint(kDt, 30.0, {1e-3});
  EXPECT_TRUE(
      matrices_near(controllability(nonlinear, small), Pc, kSmallAmplitudeTol, Compare::relative));
  EXPECT_TRUE(matrices_near(empirical_observability(nonlinear.network(), I, small), Po,
                            kSmallAmplitudeTol, Compare::relative));

  const auto large = midpoint(kDt, 30.0, {1.0});
  EXPECT_GT(relative_error(controllability(nonlinear, large), Pc), kNonlinearEffect);
  EXPECT_GT(relative_error(empirical_observability(nonlinear.network(), I, large), Po),
            kNonlinearEffect);
}

void expect_balanced(const EmpiricalBalancingResult& res, Index N, Index columns = 0) {
  const Index cols = std::max(res.r, columns);
  ASSERT_EQ(res.V.rows(), N);
  ASSERT_EQ(res.V.cols(), cols);
  ASSERT_EQ(res.W.cols(), cols);
  EXPECT_TRUE(matrices_near(Matrix(res.W.transpose() * res.V), Matrix::Identity(cols, cols),
                            kBiorthogonalTol));
  for (Index i = 0; i < res.r; ++i) EXPECT_GT(res.sigma[i], 0.0) << "sigma_" << i + 1;
  for (Index i = 1; i < res.sigma.size(); ++i)
    EXPECT_LE(res.sigma[i], res.sigma[i - 1]) << "sigma_" << i + 1;
  EXPECT_TRUE(matrices_near(Matrix(res.Phi.transpose() * res.Phi),
                            Matrix::Identity(res.Phi.cols(), res.Phi.cols()), 1e-12));
}

TEST(EmpiricalBalancing, LinearChainGivesThePositionSingularValuesOfSecondOrderBt) {
  const auto chain = linear_chain();
  EmpiricalBalancingOptions o;
  o.gramians = midpoint(kDt, kHorizon, {0.25, 0.5, 1.0});
  o.subspace.order = kN;  // Phi spans every position
  o.selection.order = 3;
  const auto res = empirical_balancing(chain.network(), o);
  expect_balanced(res, kN);
  EXPECT_EQ(res.r, 3);
  EXPECT_EQ(res.simulations_controllability, 6);
  EXPECT_EQ(res.simulations_observability, 6 * kN);
  EXPECT_EQ(res.Zc.size(), 0);  // not kept unless asked for
  EXPECT_TRUE(scalars_near(res.discarded_sum, 2.0 * res.sigma.tail(kN - 3).sum(), 1e-15,
                           Compare::relative));

  // sqrt(eig(P_qq Q_qq)) from the algebraic Gramians: the variant-p values of second-order BT.
  SecondOrderBtOptions bt;
  bt.variant = SecondOrderBtVariant::p;
  bt.selection.order = 1;
  bt.gramians.method = GramianMethod::dense;
  const auto ref = second_order_balanced_truncation(chain.linear_system(), bt);
  // ref.sv holds 2N values of which the last N are zero (the position blocks have rank N).
  ASSERT_EQ(ref.sv.size(), 2 * kN);
  // The Gramians err by up to kQuadratureTol relative; the square roots of their product's
  // eigenvalues by about as much (1.5e-5 to 5e-5 of each value measured).
  EXPECT_TRUE(matrices_near(res.sigma, Vector(ref.sv.head(kN)), kQuadratureTol, Compare::relative));
  // W_O for [Phi; 0] is Phi^T Q_qq Phi.
  const Algebraic g = algebraic_gramians(chain);
  const Matrix Qqq = res.Phi.transpose() * g.Qt.topLeftCorner(kN, kN) * res.Phi;
  EXPECT_TRUE(matrices_near(res.Wo, Qqq, kQuadratureTol, Compare::relative));
}

TEST(EmpiricalBalancing, NonlinearChainGivesBiorthonormalBasesAndHonoursTheTolerance) {
  const Index N = 10;
  const auto chain = benchmark_chain(N, 2.0);
  EmpiricalBalancingOptions o;
  o.gramians = midpoint(0.02, 40.0, {0.25, 0.5, 1.0});
  o.gramians.integrator.observe_stride = 2;  // trapezoid over every other step
  o.subspace.energy = 1.0 - 1e-10;
  o.selection.tolerance = 1e-3;
  o.keep_controllability_factor = true;
  const auto res = empirical_balancing(chain.network(), o);
  expect_balanced(res, N);
  EXPECT_EQ(res.Zc.rows(), 2 * N);
  EXPECT_LE(res.discarded_sum, 1e-3);
  ASSERT_GE(res.r, 2);
  EXPECT_GT(res.discarded_sum + 2.0 * res.sigma[res.r - 1], 1e-3);  // r - 1 would not do
  EXPECT_EQ(res.simulations_observability, 6 * res.Phi.cols());
  for (double s : {res.seconds.controllability, res.seconds.pod, res.seconds.observability,
                   res.seconds.balancing})
    EXPECT_GE(s, 0.0);
}

// Any simulated model takes the same definitions (reduction/empirical_gramians_impl.hpp): the
// nonlinear chain in its network form (NonlinearNetwork: a general sparse G, per-element laws,
// its own Newton matrices) against the chain's own tridiagonal path (what the runner's chain
// kind uses), the same simulations. Agreement to the Newton tolerance.
constexpr double kNetworkFormTol = 1e-8;

TEST(EmpiricalBalancing, TheChainAsANetworkGivesTheChainsGramiansAndBases) {
  const Index N = 10;
  const auto chain = benchmark_chain(N, 2.0);
  const NonlinearNetwork network = chain.network();
  EmpiricalBalancingOptions o;
  o.gramians = midpoint(0.02, 40.0, {0.25, 1.0});
  o.gramians.integrator.newton_rtol = 1e-13;
  o.subspace.energy = 1.0 - 1e-10;
  o.selection.order = 4;
  o.keep_controllability_factor = true;
  const auto a = empirical_balancing_of(chain, o);
  const auto b = empirical_balancing(network, o);
  expect_balanced(b, N);
  ASSERT_EQ(a.sigma.size(), b.sigma.size());
  EXPECT_TRUE(matrices_near(b.sigma, a.sigma, kNetworkFormTol, Compare::relative));
  EXPECT_TRUE(matrices_near(b.Zc, a.Zc, kNetworkFormTol, Compare::relative));
  ASSERT_EQ(a.r, b.r);
  // The bases up to the sign of each column (W^T V = I fixes the pairs together).
  for (Index j = 0; j < a.r; ++j) {
    const double sign = a.V.col(j).dot(b.V.col(j)) < 0.0 ? -1.0 : 1.0;
    EXPECT_TRUE(matrices_near(Matrix(sign * b.V.col(j)), Matrix(a.V.col(j)), kNetworkFormTol,
                              Compare::relative))
        << "column " << j;
    EXPECT_TRUE(matrices_near(Matrix(sign * b.W.col(j)), Matrix(a.W.col(j)), kNetworkFormTol,
                              Compare::relative))
        << "column " << j;
  }
}

/// f() throws E whose message contains `needle`.
template <class E>
void expect_throw_naming(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(EmpiricalGramians, BadInputIsRejectedNamingTheValue) {
  const auto chain = linear_chain();
  const Matrix I = Matrix::Identity(2 * kN, 2 * kN);
  auto options = [](std::vector<double> c) { return midpoint(0.1, 1.0, std::move(c)); };
  expect_throw_naming<InvalidArgument>(
      [&] { empirical_controllability_factor(chain.network(), options({})); }, "empty");
  expect_throw_naming<InvalidArgument>(
      [&] { empirical_observability(chain.network(), I, options({})); }, "empty");
  expect_throw_naming<InvalidArgument>(
      [&] {
        empirical_controllability_factor(chain.network(), options({1.0, -0.5}));
      },
      "c_2 = -0.5");
  expect_throw_naming<InvalidArgument>(
      [&] { empirical_observability(chain.network(), I, options({std::nan("")})); }, "c_1 = nan");
  expect_throw_naming<InvalidArgument>(
      [&] { empirical_observability(chain.network(), Matrix::Identity(kN, kN), options({1.0})); },
      "have 6 rows");

  EmpiricalBalancingOptions o;
  o.gramians = options({1.0});
  o.subspace.order = 3;
  o.selection.order = 4;
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); }, "r = 4");
  o.selection.order = 7;
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); }, "r = 7");
  o.subspace.order.reset();
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); }, "neither");
  o.subspace.energy = 1.0;
  o.selection.order = 0;
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); },
                                       "order = 0");
  o.gramians.amplitudes = {0.0};
  o.selection.order = 2;
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); }, "c_1 = 0");
}

TEST(EmpiricalGramians, OrderAboveTheNumericalRankIsRejected) {
  // Input at mass 1, output at the middle of three masses: the antisymmetric mode (1, 0, -1)
  // never reaches the output, so W_O on the positions has rank 2 while d = 3.
  ChainParameters p;
  p.N = 3;
  p.k_n = 0.0;
  p.inputs = {1};
  p.outputs = {2};
  const MassSpringChain chain(p);
  EmpiricalBalancingOptions o;
  o.gramians = midpoint(0.05, 40.0, {1.0});
  o.subspace.order = 3;
  o.selection.order = 3;
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); },
                                       "exceeds the numerical rank 2");
  o.selection.order = 2;
  expect_balanced(empirical_balancing(chain.network(), o), 3);
  o.min_columns = 3;  // more columns than the rank: the same error
  expect_throw_naming<InvalidArgument>([&] { empirical_balancing(chain.network(), o); },
                                       "exceeds the numerical rank 2");
}

TEST(EmpiricalBalancing, ExtraColumnsAreNestedAndKeepTheOrder) {
  // min_columns widens V and W without changing r or their leading columns: the order-2 bases
  // are the first two columns of the order-2 bases widened to 5, and W^T V = I on all five.
  const Index N = 10;
  const auto chain = benchmark_chain(N, 2.0);
  EmpiricalBalancingOptions o;
  o.gramians = midpoint(0.05, 20.0, {0.5, 1.0});
  o.subspace.order = 6;
  o.selection.order = 2;
  const auto narrow = empirical_balancing(chain.network(), o);
  o.min_columns = 5;
  const auto wide = empirical_balancing(chain.network(), o);
  EXPECT_EQ(wide.r, 2);
  expect_balanced(wide, N, 5);
  EXPECT_TRUE(matrices_near(Matrix(wide.V.leftCols(2)), narrow.V, kBiorthogonalTol));
  EXPECT_TRUE(matrices_near(Matrix(wide.W.leftCols(2)), narrow.W, kBiorthogonalTol));
  EXPECT_DOUBLE_EQ(wide.discarded_sum, narrow.discarded_sum);
}

TEST(EmpiricalGramians, DivergedSimulationNamesTheRun) {
  // rk4 at dt = 0.5 on stiff springs (omega_max ~ 2 sqrt(k_l) = 200) is far outside its
  // stability interval dt |lambda| < 2.78.
  ChainParameters p;
  p.N = kN;
  p.k_l = 1e4;
  const MassSpringChain chain(p);
  auto o = midpoint(0.5, 200.0, {0.5});
  o.integrator.scheme = Scheme::rk4;
  o.integrator.check_stability = false;  // the divergence while stepping, not the refusal
  expect_throw_naming<NumericalError>([&] { empirical_controllability_factor(chain.network(), o); },
                                      "amplitude c = 0.5");
  expect_throw_naming<NumericalError>(
      [&] { empirical_observability(chain.network(), Matrix::Identity(2 * kN, 2), o); },
      "direction 1");
}

}  // namespace
}  // namespace mor
