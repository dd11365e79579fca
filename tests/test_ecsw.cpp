// SPDX-License-Identifier: GPL-3.0-or-later
// ECSW (reduction/ecsw.hpp) and its NNLS: the Lawson-Hanson result against the KKT conditions
// of the problem and against a constructed solution; the ECSW reduced force of a lattice is a
// gradient (symmetric Jacobian, finite differences), meets tau at the training snapshots against
// the exact Galerkin reduced force, and keeps the reduced energy of an undamped free run to the
// integrator's O(dt^2) with no error of its own.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "models/lattice.hpp"
#include "reduction/ecsw.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/integrators/integrate.hpp"
#include "src/signals/signal.hpp"
#include "support/compare.hpp"
#include "support/finite_differences.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

// The KKT conditions of min ||C w - b||, w >= 0, at a solution computed in double precision:
// the gradient C^T (C w - b) vanishes on the support and is >= 0 off it, to rounding of
// ||C||_F^2 ||w|| + ||C||_F ||b|| products.
constexpr double kKktTol = 1e-10;
// Central differences with h = 1e-6 on O(1) cubic forces: truncation ~1e-12, rounding ~1e-10.
constexpr double kFiniteDifferenceTol = 1e-6;
// J = E^T diag(w phi') E is symmetric by construction; the product order leaves rounding only.
constexpr double kSymmetryTol = 1e-12;

/// The network force's own figures (sampled elements, the reduced energy).
const NetworkForce& network_force_of(const ProjectedModel& model) {
  const NetworkForce* f = model.held<NetworkForce>();
  if (!f) throw InvalidArgument("the projected model has no network force");
  return *f;
}

/// Checks the KKT conditions of w for min ||C w - b||, w >= 0 (scale-free: relative to
/// ||C||_F (||C||_F ||w|| + ||b||)).
::testing::AssertionResult kkt_holds(const Matrix& C, const Vector& b, const Vector& w) {
  const Vector g = C.transpose() * (C * w - b);
  const double scale = C.norm() * (C.norm() * w.norm() + b.norm());
  for (Index i = 0; i < w.size(); ++i) {
    if (w[i] < 0.0) return ::testing::AssertionFailure() << "w[" << i << "] = " << w[i] << " < 0";
    if (w[i] > 0.0 && std::abs(g[i]) > kKktTol * scale)
      return ::testing::AssertionFailure()
             << "on the support: g[" << i << "] = " << g[i] << ", allowed " << kKktTol * scale;
    if (w[i] == 0.0 && g[i] < -kKktTol * scale)
      return ::testing::AssertionFailure()
             << "off the support: g[" << i << "] = " << g[i] << " < -" << kKktTol * scale;
  }
  return ::testing::AssertionSuccess();
}

TEST(Nnls, MeetsTheKktConditionsOnRandomProblems) {
  // Over- and under-determined, columns of very different norms (the scaling inside).
  const Index shapes[][2] = {{30, 12}, {40, 25}, {15, 40}, {60, 60}};
  std::mt19937 gen(7);
  for (const auto& shape : shapes) {
    Matrix C = testing::random_normal(shape[0], shape[1], gen);
    for (Index j = 0; j < C.cols(); ++j) C.col(j) *= std::pow(10.0, (j % 5) - 2.0);
    const Vector b = testing::random_normal(shape[0], 1, gen);
    const NnlsResult res = nnls(C, b);  // tau = 0: to the optimum
    EXPECT_EQ(res.status, NnlsStatus::optimal) << to_string(res.status);
    EXPECT_TRUE(kkt_holds(C, b, res.w)) << shape[0] << " x " << shape[1];
    EXPECT_NEAR(res.relative_residual, (C * res.w - b).norm() / b.norm(), 1e-14);
    for (Index j : res.support) EXPECT_GT(res.w[j], 0.0);
  }
}

TEST(Nnls, RecoversAConstructedSparseSolution) {
  // b = C w*, w* >= 0 with 6 nonzeros among 90 columns, 50 rows: w* is the unique non-negative
  // solution (far inside the Donoho-Tanner bound), and the residual can reach 0.
  std::mt19937 gen(21);
  const Matrix C = testing::random_normal(50, 90, gen);
  Vector w_star = Vector::Zero(90);
  const Index support[] = {3, 17, 40, 41, 66, 89};
  for (Index j : support) w_star[j] = 0.5 + 0.25 * static_cast<double>(j % 4);
  const Vector b = C * w_star;
  const NnlsResult res = nnls(C, b);
  EXPECT_LT(res.relative_residual, 1e-12);
  EXPECT_TRUE(matrices_near(res.w, w_star, 1e-10, Compare::relative));
  EXPECT_EQ(res.support, std::vector<Index>(std::begin(support), std::end(support)));
  // Stopped at tau: fewer columns, the tolerance met.
  NnlsOptions o;
  o.tolerance = 0.3;
  const NnlsResult early = nnls(C, b, o);
  EXPECT_EQ(early.status, NnlsStatus::tolerance_met);
  EXPECT_LE(early.relative_residual, 0.3);
  EXPECT_LE(early.support.size(), res.support.size());
}

TEST(Nnls, IterationCapIsAStatusAndBadInputThrows) {
  std::mt19937 gen(3);
  const Matrix C = testing::random_normal(20, 10, gen);
  const Vector b = testing::random_normal(20, 1, gen);
  NnlsOptions o;
  o.max_iterations = 2;
  const NnlsResult res = nnls(C, b, o);
  EXPECT_EQ(res.status, NnlsStatus::iteration_limit);
  EXPECT_EQ(res.iterations, 2);
  EXPECT_THROW(nnls(C, Vector::Ones(19)), InvalidArgument);
  EXPECT_THROW(nnls(Matrix(0, 3), Vector(0)), InvalidArgument);
  Matrix bad = C;
  bad(4, 2) = std::nan("");
  EXPECT_THROW(nnls(bad, b), InvalidArgument);
  o.tolerance = -1.0;
  EXPECT_THROW(nnls(C, b, o), InvalidArgument);
  // b = 0: w = 0 exactly, no iteration.
  const NnlsResult zero = nnls(C, Vector::Zero(20));
  EXPECT_EQ(zero.iterations, 0);
  EXPECT_TRUE(zero.support.empty());
}

LatticeParameters test_lattice(double d) {
  LatticeParameters p;
  p.nx = 7;
  p.ny = 5;
  p.m = 1.3;
  p.k_l = 0.7;
  p.d = d;
  p.k_n = 2.0;
  p.inputs = {{1, 1}, {4, 3}};
  p.outputs = {{7, 5}};
  return p;
}

/// Position snapshots (n x ns) of a driven run of the network.
Matrix snapshots(const NonlinearNetwork& net) {
  NonlinearNetwork::Workspace ws(net);
  IntegratorOptions o;
  o.dt = 0.05;
  o.t_end = 30.0;
  o.observe_stride = 4;
  const auto input = make_sine_signal(net.n_inputs(), 1.5, 0.13);
  std::vector<Vector> qs;
  Vector q = Vector::Zero(net.n()), v = Vector::Zero(net.n());
  integrate(
      net, ws, *input, o, q, v,
      [&](Index, double, const Vector& qk, const Vector&, const Vector&) { qs.push_back(qk); });
  Matrix Q(net.n(), static_cast<Index>(qs.size()));
  for (std::size_t j = 0; j < qs.size(); ++j) Q.col(static_cast<Index>(j)) = qs[j];
  return Q;
}

struct Trained {
  NonlinearNetwork net;
  Matrix Q, V, Qr;
};

Trained trained_lattice(double d, Index r) {
  Trained t{lattice_network(test_lattice(d)), Matrix(), Matrix(), Matrix()};
  t.Q = snapshots(t.net);
  PodOptions po;
  po.method = PodMethod::svd;
  po.order = r;
  t.V = pod(t.Q, po).V;
  t.Qr = t.V.transpose() * t.Q;
  return t;
}

TEST(Ecsw, ReducedForceIsAGradient) {
  const Trained t = trained_lattice(0.05, 6);
  EcswOptions eo;
  eo.tolerance = 1e-2;
  const EcswResult ec = ecsw(t.net, t.V, Matrix(), t.Qr, eo);
  EXPECT_EQ(ec.status, NnlsStatus::tolerance_met);
  EXPECT_LE(ec.relative_residual, 1e-2);
  EXPECT_LT(static_cast<Index>(ec.elements.size()), t.net.n_elements()) << "no sampling";
  ProjectionOptions o;
  o.nonlinear = NonlinearTreatment::ecsw;
  o.ecsw = &ec;
  const ProjectedModel model(t.net, t.V, Matrix(), o);
  EXPECT_EQ(network_force_of(model).sampled_elements(), static_cast<Index>(ec.elements.size()));
  EXPECT_TRUE(network_force_of(model).has_nonlinear_energy());
  std::mt19937 gen(5);
  const Vector q = 2.0 * t.Qr.col(t.Qr.cols() / 2) + 0.3 * testing::random_normal(6, 1, gen);
  Matrix J = Matrix::Zero(6, 6), scratch;
  model.add_nonlinear_jacobian(q, 1.0, J, scratch);
  EXPECT_TRUE(matrices_near(J, Matrix(J.transpose()), kSymmetryTol * J.norm()));
  // Finite differences of the force, and of the energy for the force.
  Vector g;
  model.nonlinear_force(q, g);
  const Matrix Jfd = testing::central_difference_jacobian(
      [&](const Vector& x, Vector& gx) { model.nonlinear_force(x, gx); }, q);
  const Vector dE = testing::central_difference_gradient(
      [&](const Vector& x) { return network_force_of(model).nonlinear_energy(x); }, q);
  EXPECT_TRUE(matrices_near(J, Jfd, kFiniteDifferenceTol, Compare::relative));
  EXPECT_TRUE(matrices_near(dE, g, kFiniteDifferenceTol, Compare::relative));
}

TEST(Ecsw, MeetsTauAgainstTheExactGalerkinForce) {
  const Trained t = trained_lattice(0.05, 6);
  const ProjectedModel exact(t.net, t.V);  // every element, weight 1
  for (double tau : {1e-2, 1e-4, 1e-8}) {
    EcswOptions eo;
    eo.tolerance = tau;
    const EcswResult ec = ecsw(t.net, t.V, Matrix(), t.Qr, eo);
    ProjectionOptions o;
    o.nonlinear = NonlinearTreatment::ecsw;
    o.ecsw = &ec;
    const ProjectedModel model(t.net, t.V, Matrix(), o);
    // The stacked reduced forces over every training snapshot, from the two models.
    double err2 = 0.0, ref2 = 0.0;
    Vector g, g_exact;
    for (Index j = 0; j < t.Qr.cols(); ++j) {
      model.nonlinear_force(t.Qr.col(j), g);
      exact.nonlinear_force(t.Qr.col(j), g_exact);
      err2 += (g - g_exact).squaredNorm();
      ref2 += g_exact.squaredNorm();
    }
    const double rel = std::sqrt(err2 / ref2);
    EXPECT_LE(rel, tau * (1.0 + 1e-6) + 1e-13) << "tau " << tau << ": " << rel;
    EXPECT_NEAR(rel, ec.relative_residual, 1e-6 * tau + 1e-13) << "tau " << tau;
    std::printf("tau %g: %zu of %lld elements, residual %.3g, %lld iterations\n", tau,
                ec.elements.size(), static_cast<long long>(t.net.n_elements()), rel,
                static_cast<long long>(ec.iterations));
  }
}

/// max_k |E_k - E_0| / E_0 along an unforced run of `model` from (q0, 0), E measured with the
/// nonlinear energy of `energy` (the model itself, or the exact Galerkin model for DEIM).
double energy_drift(const ProjectedModel& model, const ProjectedModel& energy, const Vector& q0,
                    double dt, double t_end) {
  ProjectedModel::Workspace ws(model);
  IntegratorOptions o;
  o.dt = dt;
  o.t_end = t_end;
  o.newton_rtol = 1e-13;
  o.newton_atol = 1e-15;
  const auto input = make_zero_signal(model.n_inputs());
  Vector q = q0, v = Vector::Zero(model.n()), Mv;
  double E0 = -1.0, worst = 0.0;
  integrate(model, ws, *input, o, q, v,
            [&](Index, double, const Vector& qk, const Vector& vk, const Vector&) {
              model.mass(vk, Mv);
              const double E = 0.5 * vk.dot(Mv) + 0.5 * qk.dot(model.K_r() * qk) +
                               network_force_of(energy).nonlinear_energy(qk);
              if (E0 < 0.0) E0 = E;
              worst = std::max(worst, std::abs(E - E0));
            });
  return worst / E0;
}

TEST(Ecsw, KeepsTheEnergyOfAnUndampedFreeRunToSecondOrder) {
  // d = 0, no input: the ECSW model is conservative, so implicit midpoint's energy error is its
  // own O(dt^2) oscillation (no drift, no term from the hyper-reduction): halving dt divides it
  // by about 4. A force that is not a gradient would add an error that dt does not reduce.
  const Trained t = trained_lattice(0.0, 6);
  EcswOptions eo;
  eo.tolerance = 1e-2;
  const EcswResult ec = ecsw(t.net, t.V, Matrix(), t.Qr, eo);
  ProjectionOptions o;
  o.nonlinear = NonlinearTreatment::ecsw;
  o.ecsw = &ec;
  const ProjectedModel model(t.net, t.V, Matrix(), o);
  Index j_max = 0;
  t.Qr.colwise().norm().maxCoeff(&j_max);
  const Vector q0 = t.Qr.col(j_max);  // the largest trained displacement: the cubic matters
  const double e1 = energy_drift(model, model, q0, 0.04, 200.0);
  const double e2 = energy_drift(model, model, q0, 0.02, 200.0);
  const double e3 = energy_drift(model, model, q0, 0.01, 200.0);
  std::printf(
      "ECSW (%lld elements), energy error over 200 s: %.3g (dt 0.04), %.3g (0.02), "
      "%.3g (0.01)\n",
      static_cast<long long>(network_force_of(model).sampled_elements()), e1, e2, e3);
  // For comparison: DEIM on as many elements (the POD of the element forces at the training
  // states), its trajectory measured with the exact Galerkin energy its force approximates. Its
  // force is not a gradient: an energy error that a smaller dt does not reduce.
  {
    const Index m = t.net.n_elements();
    Matrix F(m, t.Q.cols());
    Vector f;
    for (Index j = 0; j < t.Q.cols(); ++j) {
      t.net.element_forces(t.V * t.Qr.col(j), f);
      F.col(j) = f;
    }
    PodOptions po;
    po.method = PodMethod::svd;
    po.order = network_force_of(model).sampled_elements();
    const DeimResult d = deim(pod(F, po).V, DeimMethod::qdeim);
    ProjectionOptions od;
    od.nonlinear = NonlinearTreatment::deim;
    od.deim = &d;
    od.sampling = DeimSampling::elements;
    const ProjectedModel deim_model(t.net, t.V, Matrix(), od);
    const ProjectedModel exact(t.net, t.V);
    const double d1 = energy_drift(deim_model, exact, q0, 0.04, 200.0);
    const double d3 = energy_drift(deim_model, exact, q0, 0.01, 200.0);
    std::printf(
        "DEIM (%lld elements), Galerkin energy error over 200 s: %.3g (dt 0.04), %.3g "
        "(0.01)\n",
        static_cast<long long>(network_force_of(deim_model).sampled_elements()), d1, d3);
    EXPECT_GT(d3, 10.0 * e3) << "DEIM " << d3 << ", ECSW " << e3;
  }
  EXPECT_LT(e1, 1e-2);
  EXPECT_GT(e1 / e2, 3.0) << e1 << ", " << e2;
  EXPECT_LT(e1 / e2, 5.0) << e1 << ", " << e2;
  EXPECT_GT(e2 / e3, 3.0) << e2 << ", " << e3;
  EXPECT_LT(e2 / e3, 5.0) << e2 << ", " << e3;
}

TEST(Ecsw, SubsamplesOrRefusesBySize) {
  const Trained t = trained_lattice(0.05, 4);
  const Index ns = t.Qr.cols(), m = t.net.n_elements();
  EcswOptions eo;
  eo.tolerance = 1e-2;
  // Room for a third of the snapshots (and a bit): every third one is used.
  eo.memory_limit = static_cast<std::size_t>(ecsw_matrix_bytes(4, ns / 3 + 1, m));
  const EcswResult ec = ecsw(t.net, t.V, Matrix(), t.Qr, eo);
  EXPECT_EQ(ec.snapshots, ns);
  EXPECT_EQ(ec.snapshot_stride, 3);
  EXPECT_EQ(ec.snapshots_used, (ns + 2) / 3);
  EXPECT_LE(ecsw_matrix_bytes(4, ec.snapshots_used, m), static_cast<double>(eo.memory_limit));
  eo.memory_limit = 100;  // not one snapshot (8 r m_e bytes)
  try {
    ecsw(t.net, t.V, Matrix(), t.Qr, eo);
    ADD_FAILURE() << "no refusal";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("MiB"), std::string::npos) << e.what();
  }
}

TEST(Ecsw, BadInputIsNamed) {
  const Trained t = trained_lattice(0.05, 4);
  EcswOptions eo;
  EXPECT_THROW(ecsw(t.net, t.V, Matrix(), Matrix(t.Qr.topRows(3)), eo), InvalidArgument);
  eo.tolerance = 1.5;
  EXPECT_THROW(ecsw(t.net, t.V, Matrix(), t.Qr, eo), InvalidArgument);
  eo.tolerance = 1e-2;
  EXPECT_THROW(ecsw(t.net, t.V, Matrix(), Matrix::Zero(4, 3), eo), InvalidArgument);
  EcswResult bad;
  bad.elements = {2, 5};
  bad.weights = Vector::Ones(2);
  bad.weights[1] = 0.0;
  ProjectionOptions o;
  o.nonlinear = NonlinearTreatment::ecsw;
  o.ecsw = &bad;
  EXPECT_THROW(ProjectedModel(t.net, t.V, Matrix(), o), InvalidArgument);
  bad.weights[1] = 1.0;
  bad.elements = {2, 2};
  EXPECT_THROW(ProjectedModel(t.net, t.V, Matrix(), o), InvalidArgument);
  bad.elements = {2, t.net.n_elements()};
  EXPECT_THROW(ProjectedModel(t.net, t.V, Matrix(), o), InvalidArgument);
  // DEIM's interpolation has no energy to offer; the full Galerkin force has.
  const Index m = t.net.n_elements();
  const DeimResult d = deim(Matrix::Identity(m, m), DeimMethod::qdeim);
  ProjectionOptions od;
  od.nonlinear = NonlinearTreatment::deim;
  od.deim = &d;
  od.sampling = DeimSampling::elements;
  const ProjectedModel interpolated(t.net, t.V, Matrix(), od);
  EXPECT_FALSE(network_force_of(interpolated).has_nonlinear_energy());
  EXPECT_THROW(network_force_of(interpolated).nonlinear_energy(t.Qr.col(1)), InvalidArgument);
  EXPECT_TRUE(network_force_of(ProjectedModel(t.net, t.V)).has_nonlinear_energy());
  od.ecsw = &bad;
  bad.elements = {2, 5};
  EXPECT_THROW(ProjectedModel(t.net, t.V, Matrix(), od), InvalidArgument);
}

}  // namespace
}  // namespace mor
