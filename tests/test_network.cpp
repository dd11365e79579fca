// SPDX-License-Identifier: GPL-3.0-or-later
// The nonlinear network (src/systems/nonlinear_network.hpp): its Jacobian against finite
// differences, its restricted evaluation against the full force, its Newton matrix against the
// assembled one, and the chain written as a network against the chain's own stencil, force by
// force and trajectory by trajectory through every integrator.
#include <gtest/gtest.h>

#include <random>

#include <Eigen/Dense>

#include "models/mass_spring_chain.hpp"
#include "src/integrators/integrate.hpp"
#include "src/signals/signal.hpp"
#include "src/systems/nonlinear_network.hpp"
#include "support/chains.hpp"
#include "support/compare.hpp"
#include "support/finite_differences.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

// Central differences with step 1e-6 on polynomial terms of O(1): truncation ~1e-12 s'''',
// rounding ~1e-10.
constexpr double kFiniteDifferenceTol = 1e-7;
// Rounding of a few sparse products on O(1) values.
constexpr double kRoundingTol = 1e-13;
// The chain and its network form differ by the rounding of their force sums; with Newton
// converged to 1e-14 the trajectories agree to this (the bar).
constexpr double kChainAsNetworkTol = 1e-12;

/// A small random network: n coordinates, m elements of 1 to 3 coordinates, every law term.
NonlinearNetwork random_network(Index n, Index m, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::uniform_int_distribution<Index> pick(0, n - 1);
  std::vector<Triplet> t;
  for (Index e = 0; e < m; ++e) {
    const Index k = 1 + e % 3;
    std::vector<Index> cols;
    while (static_cast<Index>(cols.size()) < k) {
      const Index j = pick(gen);
      if (std::find(cols.begin(), cols.end(), j) == cols.end()) cols.push_back(j);
    }
    for (Index j : cols) t.emplace_back(static_cast<int>(e), static_cast<int>(j), U(gen));
  }
  SparseMatrix G(m, n);
  G.setFromTriplets(t.begin(), t.end());
  Matrix phi(m, 4);
  for (Index e = 0; e < m; ++e)
    phi.row(e) << 0.3 * U(gen), 1.0 + U(gen), 0.2 * U(gen), 0.5 + 0.4 * U(gen);
  const MassSpringChain chain(testing::test_chain_parameters(n, 0.0));
  return NonlinearNetwork(chain.linear_system(), std::move(G), std::move(phi));
}

Vector random_vector(Index n, unsigned seed) {
  std::srand(seed);
  return 0.5 * Vector::Random(n);
}

TEST(Network, JacobianMatchesFiniteDifferences) {
  const NonlinearNetwork net = random_network(12, 20, 3);
  const Vector q = random_vector(12, 5);
  const Matrix J = Matrix(net.nonlinear_jacobian(q));
  const Matrix Jfd = testing::central_difference_jacobian(
      [&](const Vector& x, Vector& g) { net.nonlinear_force(x, g); }, q);
  EXPECT_TRUE(matrices_near(J, Jfd, kFiniteDifferenceTol, Compare::relative));
  EXPECT_TRUE(matrices_near(J, Matrix(J.transpose()), kRoundingTol, Compare::relative));
}

TEST(Network, ForceIsTheGradientOfTheEnergy) {
  const NonlinearNetwork net = random_network(9, 14, 7);
  const Vector q = random_vector(9, 8);
  Vector g;
  net.nonlinear_force(q, g);
  const Vector Kq = net.linear_system().K * q;
  const Vector dV = testing::central_difference_gradient(
      [&](const Vector& x) { return net.potential_energy(x); }, q);
  EXPECT_TRUE(matrices_near(dV, Vector(Kq + g), kFiniteDifferenceTol));
}

TEST(Network, RestrictedEvaluationEqualsTheFullRows) {
  const NonlinearNetwork net = random_network(15, 25, 11);
  const Vector q = random_vector(15, 12);
  Vector g, f;
  net.nonlinear_force(q, g);
  net.element_forces(q, f);
  auto local_phi = [](const RestrictedNonlinearity& r, const Vector& q) {
    Vector qd(static_cast<Index>(r.dofs.size()));
    for (std::size_t k = 0; k < r.dofs.size(); ++k) qd[static_cast<Index>(k)] = q[r.dofs[k]];
    Vector s = r.G_local * qd;
    for (Index e = 0; e < s.size(); ++e) {
      const double c[4] = {r.coefficients(e, 0), r.coefficients(e, 1), r.coefficients(e, 2),
                           r.coefficients(e, 3)};
      double d;
      element_law(c, s[e], s[e], d);
    }
    return s;
  };
  const std::vector<Index> rows = {14, 0, 7, 3};
  const RestrictedNonlinearity r = net.restricted_rows(rows);
  const Vector gr = r.A_local * local_phi(r, q);
  Vector expected(4);
  for (Index i = 0; i < 4; ++i) expected[i] = g[rows[static_cast<std::size_t>(i)]];
  EXPECT_TRUE(matrices_near(gr, expected, kRoundingTol, Compare::relative));
  EXPECT_LT(r.dofs.size(), 15u);  // the restriction reads fewer entries than q has

  const std::vector<Index> elements = {2, 19, 5};
  const RestrictedNonlinearity re = net.restricted_elements(elements);
  const Vector fe = local_phi(re, q);
  for (Index i = 0; i < 3; ++i)
    EXPECT_NEAR(fe[i], f[elements[static_cast<std::size_t>(i)]], kRoundingTol);
  EXPECT_THROW(net.restricted_rows({15}), InvalidArgument);
  EXPECT_THROW(net.restricted_elements({3, 3}), InvalidArgument);
}

TEST(Network, NewtonMatrixSolvesTheAssembledSystem) {
  const NonlinearNetwork net = random_network(20, 30, 13);
  const Vector q = random_vector(20, 14);
  const double a = 1.0, b = 0.05, c = 0.0025;
  const SecondOrderSystem& s = net.linear_system();
  const Matrix S = Matrix(a * s.M + b * s.D + c * s.K) + c * Matrix(net.nonlinear_jacobian(q));
  for (SparseBackend backend : {SparseBackend::cholmod, SparseBackend::umfpack}) {
    NonlinearNetwork::Workspace ws(net, backend);
    for (int repeat = 0; repeat < 2; ++repeat) {  // a refactorization reuses the analysis
      ws.factorize_iteration(a, b, c, q);
      const Vector x = random_vector(20, 15);
      Vector y;
      ws.solve_iteration(S * x, y);
      EXPECT_TRUE(matrices_near(y, x, 1e-12, Compare::relative)) << to_string(backend);
    }
  }
}

TEST(Network, ChainAsNetworkHasTheChainsForceAndJacobian) {
  for (Index N : {1, 2, 5, 40}) {
    const MassSpringChain chain(testing::test_chain_parameters(N));
    const NonlinearNetwork net = chain.network();
    EXPECT_EQ(net.n_elements(), N + 1);
    const Vector q = random_vector(N, 21), v = random_vector(N, 22), u = Vector::Constant(1, 0.3);
    Vector Fc, Fn;
    chain.force(q, v, u, Fc);
    net.force(q, v, u, Fn);
    EXPECT_TRUE(matrices_near(Fn, Fc, kRoundingTol, Compare::relative)) << "N = " << N;
    EXPECT_TRUE(matrices_near(Matrix(net.nonlinear_jacobian(q)),
                              Matrix(chain.nonlinear_jacobian(q)), kRoundingTol, Compare::relative))
        << "N = " << N;
    EXPECT_NEAR(net.potential_energy(q), chain.potential_energy(q), kRoundingTol);
  }
}

TEST(Network, ChainAsNetworkGivesTheChainsTrajectories) {
  const Index N = 60;
  ChainParameters p = testing::test_chain_parameters(N);
  p.inputs = {N, 20};
  p.outputs = {N, 1, 30};
  const MassSpringChain chain(p);
  const NonlinearNetwork net = chain.network();
  const auto input = make_sine_signal(2, 2.0, 0.1);
  for (Scheme scheme : {Scheme::implicit_midpoint, Scheme::generalized_alpha, Scheme::rk4}) {
    for (bool reuse : {false, true}) {
      if (scheme == Scheme::rk4 && reuse) continue;
      IntegratorOptions o;
      o.scheme = scheme;
      o.t_end = 20.0;
      o.dt = 0.05;
      o.newton_rtol = 1e-14;
      o.newton_atol = 1e-16;
      o.reuse_jacobian = reuse;
      auto run = [&](const auto& model, auto& ws) {
        std::vector<double> y;
        Vector q = Vector::Zero(N), v = Vector::Zero(N), yk;
        integrate(model, ws, *input, o, q, v,
                  [&](Index, double, const Vector& qk, const Vector& vk, const Vector&) {
                    model.output(qk, vk, yk);
                    y.insert(y.end(), yk.begin(), yk.end());
                  });
        Vector out = Eigen::Map<Vector>(y.data(), static_cast<Index>(y.size()));
        return out;
      };
      MassSpringChain::Workspace wc(chain);
      NonlinearNetwork::Workspace wn(net);
      const Vector yc = run(chain, wc), yn = run(net, wn);
      ASSERT_GT(yc.cwiseAbs().maxCoeff(), 0.1);  // the run goes somewhere
      EXPECT_TRUE(matrices_near(yn, yc, kChainAsNetworkTol, Compare::relative))
          << to_string(scheme) << (reuse ? ", reuse_jacobian" : "");
    }
  }
}

TEST(Network, LinearCaseAndBadInput) {
  const MassSpringChain chain(testing::test_chain_parameters(4, 0.0));
  const NonlinearNetwork net = chain.network();
  EXPECT_TRUE(net.is_linear());
  EXPECT_EQ(net.n_elements(), 0);
  const SecondOrderSystem s = chain.linear_system();
  EXPECT_THROW(NonlinearNetwork(s, SparseMatrix(3, 5), Matrix::Zero(3, 4)), InvalidArgument);
  EXPECT_THROW(NonlinearNetwork(s, SparseMatrix(3, 4), Matrix::Zero(2, 4)), InvalidArgument);
  EXPECT_THROW(NonlinearNetwork(s, SparseMatrix(3, 4), Matrix::Zero(3, 3)), InvalidArgument);
  Matrix bad = Matrix::Zero(1, 4);
  bad(0, 2) = std::nan("");
  EXPECT_THROW(NonlinearNetwork(s, SparseMatrix(3, 4), bad), InvalidArgument);
}

}  // namespace
}  // namespace mor
