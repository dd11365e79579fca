// SPDX-License-Identifier: GPL-3.0-or-later
// The projected network (reduction/projected_model.hpp with the network force of
// reduction/network_force.hpp): the chain written as a network gives the chain's reduced force
// (its cubic stencil force), Jacobian and DEIM points; node and element DEIM are exact when the
// force lies in range(U); the online evaluation reads a number of element rows independent of n;
// its Jacobian against finite differences.
#include <gtest/gtest.h>

#include <random>

#include <Eigen/QR>

#include "models/mass_spring_chain.hpp"
#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/integrators/integrate.hpp"
#include "src/signals/signal.hpp"
#include "support/chains.hpp"
#include "support/compare.hpp"
#include "support/finite_differences.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

static_assert(SecondOrderModel<ProjectedModel>);

// Two evaluations of the same reduced cubic in a different summation order: rounding of O(1)
// values with mild cancellation.
constexpr double kSameForceTol = 1e-12;
// DEIM on forces inside range(U): exact up to rounding amplified by ||(P^T U)^{-1}||_2.
constexpr double kDeimExactTol = 1e-10;
// Central differences with h = 1e-6: truncation ~1e-12, rounding ~1e-10.
constexpr double kFiniteDifferenceTol = 1e-6;

/// The network force's own figures (sampled_elements).
const NetworkForce& network_force_of(const ProjectedModel& model) {
  const NetworkForce* f = model.held<NetworkForce>();
  if (!f) throw InvalidArgument("the projected model has no network force");
  return *f;
}

/// Position snapshots and, for each, the nodal force of the chain and of its network form.
struct Snapshots {
  Matrix Q, G_chain, G_network;
};

Snapshots chain_snapshots(const MassSpringChain& chain, const NonlinearNetwork& net) {
  const Index N = chain.n();
  MassSpringChain::Workspace ws(chain);
  IntegratorOptions o;
  o.t_end = 30.0;
  o.dt = 0.1;
  o.observe_stride = 3;
  const auto input = make_sine_signal(chain.n_inputs(), 3.0, 0.08);
  std::vector<Vector> qs;
  Vector q = Vector::Zero(N), v = Vector::Zero(N);
  integrate(
      chain, ws, *input, o, q, v,
      [&](Index, double, const Vector& qk, const Vector&, const Vector&) { qs.push_back(qk); });
  Snapshots s;
  const Index k = static_cast<Index>(qs.size());
  s.Q.resize(N, k);
  s.G_chain.resize(N, k);
  s.G_network.resize(N, k);
  Vector g;
  for (Index j = 0; j < k; ++j) {
    s.Q.col(j) = qs[static_cast<std::size_t>(j)];
    chain.nonlinear_force(s.Q.col(j), g);
    s.G_chain.col(j) = g;
    net.nonlinear_force(s.Q.col(j), g);
    s.G_network.col(j) = g;
  }
  return s;
}

PodResult pod_of(const Matrix& X, Index r) {
  PodOptions o;
  o.method = PodMethod::svd;
  o.order = r;
  return pod(X, o);
}

TEST(ReducedNetwork, ChainAsNetworkGivesTheChainsDeimPoints) {
  const MassSpringChain chain(testing::test_chain_parameters(120));
  const NonlinearNetwork net = chain.network();
  const Snapshots s = chain_snapshots(chain, net);
  const Matrix Uc = pod_of(s.G_chain, 16).V, Un = pod_of(s.G_network, 16).V;
  for (DeimMethod method : {DeimMethod::qdeim, DeimMethod::deim}) {
    const DeimResult dc = deim(Uc, method), dn = deim(Un, method);
    EXPECT_EQ(dn.indices, dc.indices) << to_string(method);
  }
}

TEST(ReducedNetwork, ChainAsNetworkGivesTheReducedChain) {
  const MassSpringChain chain(testing::test_chain_parameters(80));
  const NonlinearNetwork net = chain.network();
  const Snapshots s = chain_snapshots(chain, net);
  const Matrix V = pod_of(s.Q, 8).V;
  const DeimResult d = deim(pod_of(s.G_chain, 16).V, DeimMethod::qdeim);
  std::mt19937 gen(4);
  const Vector q = 0.3 * testing::random_normal(8, 1, gen);

  const CubicPathStencil stencil{chain.n(), chain.parameters().k_n};
  ProjectionOptions co;
  co.nonlinear = NonlinearTreatment::deim;
  co.deim = &d;
  const ProjectedModel rc(chain.linear_system(), stencil, V, Matrix(), co);
  ASSERT_NE(rc.held<CubicStencilForce>(), nullptr);
  ProjectionOptions no;
  no.nonlinear = NonlinearTreatment::deim;
  no.deim = &d;
  const ProjectedModel rn(net, V, Matrix(), no);
  ASSERT_NE(rn.held<NetworkForce>(), nullptr);
  Vector gc, gn;
  rc.nonlinear_force(q, gc);
  rn.nonlinear_force(q, gn);
  EXPECT_TRUE(matrices_near(gn, gc, kSameForceTol, Compare::relative));
  EXPECT_TRUE(matrices_near(rn.nonlinear_jacobian(q), rc.nonlinear_jacobian(q), kSameForceTol,
                            Compare::relative));
  EXPECT_TRUE(matrices_near(rn.K_r(), rc.K_r(), 0.0));
  // The integrator's view: the whole force (the chain's stacked [D K G] against the network's
  // [D K P]) and the Newton solve of each workspace (the chain's Jacobian from its stencil rows,
  // the network's from its restricted elements), at the same state.
  const Vector v = 0.2 * testing::random_normal(8, 1, gen), u = Vector::Constant(1, 0.7);
  Vector Fc, Fn;
  rc.force(q, v, u, Fc);
  rn.force(q, v, u, Fn);
  EXPECT_TRUE(matrices_near(Fn, Fc, kSameForceTol, Compare::relative));
  ProjectedModel::Workspace wc(rc);
  ProjectedModel::Workspace wn(rn);
  wc.factorize_iteration(1.0, 0.025, 6.25e-4, q);
  wn.factorize_iteration(1.0, 0.025, 6.25e-4, q);
  const Vector rhs = testing::random_normal(8, 1, gen);
  Vector xc, xn;
  wc.solve_iteration(rhs, xc);
  wn.solve_iteration(rhs, xn);
  EXPECT_TRUE(matrices_near(xn, xc, kSameForceTol, Compare::relative));
  // Node p needs the springs p and p + 1: at most 2 m elements, whatever N.
  EXPECT_LE(network_force_of(rn).sampled_elements(), 2 * rn.deim_samples());

  co.nonlinear = NonlinearTreatment::full;
  const ProjectedModel fc(chain.linear_system(), stencil, V, Matrix(), co);
  const ProjectedModel fn(net, V);
  fc.nonlinear_force(q, gc);
  fn.nonlinear_force(q, gn);
  EXPECT_TRUE(matrices_near(gn, gc, kSameForceTol, Compare::relative));
  EXPECT_TRUE(matrices_near(fn.nonlinear_jacobian(q), fc.nonlinear_jacobian(q), kSameForceTol,
                            Compare::relative));
}

/// A 2-D grid network with every law term: n = nx ny, springs to the four neighbours and walls.
NonlinearNetwork grid_network(Index nx, Index ny) {
  const Index n = nx * ny;
  std::vector<Triplet> t;
  Index e = 0;
  auto node = [&](Index i, Index j) { return static_cast<int>(i + nx * j); };
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i <= nx; ++i, ++e) {  // horizontal springs, walls at i = -1 and nx
      if (i < nx) t.emplace_back(static_cast<int>(e), node(i, j), 1.0);
      if (i > 0) t.emplace_back(static_cast<int>(e), node(i - 1, j), -1.0);
    }
  for (Index i = 0; i < nx; ++i)
    for (Index j = 0; j <= ny; ++j, ++e) {
      if (j < ny) t.emplace_back(static_cast<int>(e), node(i, j), 1.0);
      if (j > 0) t.emplace_back(static_cast<int>(e), node(i, j - 1), -1.0);
    }
  SparseMatrix G(e, n);
  G.setFromTriplets(t.begin(), t.end());
  SecondOrderSystem s;
  s.K = SparseMatrix(G.transpose() * G);
  s.M = SparseMatrix(n, n);
  s.M.setIdentity();
  s.D = 0.1 * s.M + 0.01 * s.K;
  s.B = SparseMatrix(n, 1);
  s.B.insert(0, 0) = 1.0;
  s.Cp = SparseMatrix(1, n);
  s.Cp.insert(0, n - 1) = 1.0;
  s.Cv = SparseMatrix(1, n);
  Matrix phi(1, 4);
  phi << 0.2, 1.5, -0.1, 0.3;
  return NonlinearNetwork(std::move(s), std::move(G), std::move(phi));
}

TEST(ReducedNetwork, DeimIsExactOnTheWholeSpace) {
  const NonlinearNetwork net = grid_network(5, 4);
  std::mt19937 gen(9);
  const Matrix V = [&] {
    Eigen::HouseholderQR<Matrix> qr(testing::random_normal(net.n(), 6, gen));
    return Matrix(qr.householderQ() * Matrix::Identity(net.n(), 6));
  }();
  const Vector q = 0.4 * testing::random_normal(6, 1, gen);
  const ProjectedModel full(net, V);
  Vector g_full, g;
  full.nonlinear_force(q, g_full);
  // The exact reduced force, independently: W^T G^T phi(G V q).
  Vector gn;
  net.nonlinear_force(V * q, gn);
  EXPECT_TRUE(matrices_near(g_full, Vector(V.transpose() * gn), kSameForceTol, Compare::relative));
  for (DeimSampling sampling : {DeimSampling::nodes, DeimSampling::elements}) {
    const Index rows = sampling == DeimSampling::nodes ? net.n() : net.n_elements();
    const DeimResult d = deim(Matrix::Identity(rows, rows), DeimMethod::qdeim);
    ProjectionOptions o;
    o.nonlinear = NonlinearTreatment::deim;
    o.deim = &d;
    o.sampling = sampling;
    const ProjectedModel model(net, V, Matrix(), o);
    model.nonlinear_force(q, g);
    EXPECT_TRUE(matrices_near(g, g_full, kDeimExactTol, Compare::relative)) << to_string(sampling);
    EXPECT_TRUE(matrices_near(model.nonlinear_jacobian(q), full.nonlinear_jacobian(q),
                              kDeimExactTol, Compare::relative))
        << to_string(sampling);
  }
}

TEST(ReducedNetwork, JacobianMatchesFiniteDifferences) {
  const NonlinearNetwork net = grid_network(6, 3);
  std::mt19937 gen(12);
  const Matrix V = testing::random_normal(net.n(), 5, gen) / 3.0;
  const Matrix W = testing::random_normal(net.n(), 5, gen) / 3.0;
  const Vector q = 0.5 * testing::random_normal(5, 1, gen);
  const DeimResult d = [&] {
    Eigen::HouseholderQR<Matrix> qr(testing::random_normal(net.n_elements(), 9, gen));
    return deim(Matrix(qr.householderQ() * Matrix::Identity(net.n_elements(), 9)),
                DeimMethod::deim);
  }();
  ProjectionOptions o;
  o.nonlinear = NonlinearTreatment::deim;
  o.deim = &d;
  o.sampling = DeimSampling::elements;
  const ProjectedModel model(net, V, W, o);
  EXPECT_EQ(network_force_of(model).sampled_elements(), 9);
  const Matrix J = model.nonlinear_jacobian(q);
  const Matrix Jfd = testing::central_difference_jacobian(
      [&](const Vector& x, Vector& g) { model.nonlinear_force(x, g); }, q);
  EXPECT_TRUE(matrices_near(J, Jfd, kFiniteDifferenceTol, Compare::relative));
  // The workspace's in-place form S += c J, with c folded into the element weights.
  Matrix S = Matrix::Identity(5, 5), scratch;
  model.add_nonlinear_jacobian(q, 0.5, S, scratch);
  EXPECT_TRUE(matrices_near(S, Matrix(Matrix::Identity(5, 5) + 0.5 * Jfd), kFiniteDifferenceTol,
                            Compare::relative));
}

TEST(ReducedNetwork, BadInputIsNamed) {
  const NonlinearNetwork net = grid_network(3, 3);
  const DeimResult d = deim(Matrix::Identity(4, 4), DeimMethod::qdeim);
  ProjectionOptions o;
  o.nonlinear = NonlinearTreatment::deim;
  o.deim = &d;
  EXPECT_THROW(ProjectedModel(net, Matrix::Identity(9, 2), Matrix(), o), InvalidArgument);
  EXPECT_THROW(ProjectedModel(net, Matrix::Identity(8, 2)), InvalidArgument);
}

}  // namespace
}  // namespace mor
