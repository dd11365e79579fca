// SPDX-License-Identifier: GPL-3.0-or-later
// The projected nonlinear chain (reduction/projected_model.hpp with the cubic stencil force of
// reduction/cubic_stencil_force.hpp): with V = W = I it is the full chain (force and trajectories
// on every integrator); its reduced Jacobians against finite differences; the exact tensor against
// the full evaluation; DEIM against its defining formula, exact on range(U), with precomputed
// sizes independent of N; the uniform mass; invariance of the Galerkin trajectory under a change
// of basis of range(V); the folded implicit midpoint against the plain Newton path; bad input
// named in the message.
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/QR>

#include "models/mass_spring_chain.hpp"
#include "reduction/deim.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/errors.hpp"
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
using testing::scalars_near;

static_assert(SecondOrderModel<ProjectedModel>);

// The reduced force with V = W = I performs the chain's arithmetic up to the order of a few
// operations (the tensor expands (a - b)^3 into monomials): rounding of O(1) values.
constexpr double kSameForceTol = 1e-13;
// The same scheme on the same equations over 200 steps (Newton to newton_rtol = 1e-12), rounding
// of the two evaluations amplified by the step recursion.
constexpr double kSameTrajectoryTol = 1e-10;
// Central differences with h = 1e-6 max(1, |q_j|) on a cubic: truncation ~h^2 |g'''| ~ 1e-12,
// rounding ~eps |g| / h ~ 1e-10; relative to the largest Jacobian entry.
constexpr double kFiniteDifferenceTol = 1e-6;
// Two exact evaluations of the same cubic (different summation order, the tensor's monomial
// expansion): rounding on O(1) values with mild cancellation.
constexpr double kExactAgreementTol = 1e-12;
// DEIM on forces inside range(U): exact up to rounding amplified by ||(P^T U)^{-1}||_2.
constexpr double kDeimExactTol = 1e-10;
// Two bases of the same subspace, related by A with cond(A) ~ 10: rounding amplified by cond(A)
// and over 200 steps (observed ~2e-15).
constexpr double kBasisChangeTol = 1e-11;

constexpr NonlinearTreatment kTreatments[] = {NonlinearTreatment::full, NonlinearTreatment::tensor,
                                              NonlinearTreatment::deim};
constexpr Scheme kSchemes[] = {Scheme::rk4, Scheme::implicit_midpoint, Scheme::generalized_alpha};

Matrix random_orthonormal(Index n, Index c, std::mt19937& gen) {
  Eigen::HouseholderQR<Matrix> qr(testing::random_normal(n, c, gen));
  return qr.householderQ() * Matrix::Identity(n, c);
}

ProjectionOptions options_for(NonlinearTreatment t, const DeimResult* d = nullptr) {
  ProjectionOptions o;
  o.nonlinear = t;
  o.deim = d;
  return o;
}

/// The chain projected with its stencil force, as the chain kind projects it
/// (experiments/runner/models/chain.cpp).
ProjectedModel reduced_chain(const MassSpringChain& chain, const Matrix& V, const Matrix& W,
                             const ProjectionOptions& o) {
  return ProjectedModel(chain.linear_system(), CubicPathStencil{chain.n(), chain.parameters().k_n},
                        V, W, o);
}

/// The stencil force's own figures (nonlinear_storage).
const CubicStencilForce& stencil_of(const ProjectedModel& model) {
  const CubicStencilForce* s = model.held<CubicStencilForce>();
  if (!s) throw InvalidArgument("the projected model has no cubic stencil force");
  return *s;
}

struct Trajectory {
  Matrix Q;  ///< full positions, one column per step
  Matrix Y;  ///< outputs, one column per step
};

/// Integrates model from (q0, v0) (reduced coordinates for a reduced model) and records lift(q)
/// and y at every step.
template <class Model, class Lift>
Trajectory run(const Model& model, Scheme scheme, const Vector& q0, const Vector& v0, Lift lift) {
  const auto u = make_sine_signal(model.n_inputs(), 2.0, 0.3);
  IntegratorOptions o;
  o.scheme = scheme;
  o.dt = 0.01;
  o.t_end = 2.0;
  o.newton_rtol = 1e-12;
  const Index steps = step_count(o);
  typename Model::Workspace ws(model);
  Vector q = q0, v = v0, y;
  Trajectory tr;
  tr.Y.resize(model.n_outputs(), steps + 1);
  integrate(model, ws, *u, o, q, v,
            [&](Index k, double, const Vector& qk, const Vector& vk, const Vector&) {
              const Vector qf = lift(qk);
              if (tr.Q.size() == 0) tr.Q.resize(qf.size(), steps + 1);
              tr.Q.col(k) = qf;
              model.output(qk, vk, y);
              tr.Y.col(k) = y;
            });
  return tr;
}

/// Central differences of the reduced nonlinear force.
Matrix finite_difference_jacobian(const ProjectedModel& model, const Vector& q) {
  return testing::central_difference_jacobian(
      [&](const Vector& x, Vector& g) { model.nonlinear_force(x, g); }, q);
}

/// W^T g(V q_r) evaluated by the full chain.
Vector full_reduced_force(const MassSpringChain& chain, const Matrix& V, const Matrix& W,
                          const Vector& q) {
  Vector g;
  chain.nonlinear_force(V * q, g);
  return W.transpose() * g;
}

TEST(ReducedChain, IdentityBasisReproducesTheFullChain) {
  ChainParameters p = testing::test_chain_parameters(12);
  p.inputs = {2, 12};
  p.outputs = {5, 12};
  p.output_quantity = OutputQuantity::velocity;
  const MassSpringChain chain(p);
  const Index N = p.N;
  const Matrix I = Matrix::Identity(N, N);
  const DeimResult d = deim(I, DeimMethod::deim);  // U = I, m = N
  std::mt19937 gen(5);
  const Vector q = testing::random_normal(N, 1, gen), v = testing::random_normal(N, 1, gen),
               u = testing::random_normal(2, 1, gen);
  Vector F_full;
  chain.force(q, v, u, F_full);
  const Vector q0 = 0.5 * testing::random_normal(N, 1, gen), v0 = Vector::Zero(N);
  std::vector<Trajectory> full;
  for (Scheme s : kSchemes)
    full.push_back(run(chain, s, q0, v0, [](const Vector& x) { return x; }));
  for (NonlinearTreatment t : kTreatments) {
    const ProjectedModel model = reduced_chain(chain, I, Matrix(), options_for(t, &d));
    ASSERT_EQ(model.n(), N);
    EXPECT_FALSE(model.is_linear());
    Vector F;
    model.force(q, v, u, F);
    EXPECT_TRUE(matrices_near(F, F_full, kSameForceTol, Compare::relative)) << to_string(t);
    model.force(q + 0.3 * v, v - 0.1 * q, u, F);  // lazy expressions, as RK4 passes them
    Vector F_lazy_full;
    chain.force(q + 0.3 * v, v - 0.1 * q, u, F_lazy_full);
    EXPECT_TRUE(matrices_near(F, F_lazy_full, kSameForceTol, Compare::relative)) << to_string(t);
    for (std::size_t i = 0; i < std::size(kSchemes); ++i) {
      const Scheme s = kSchemes[i];
      const Trajectory reduced = run(model, s, model.project(q0), model.project(v0),
                                     [&](const Vector& x) { return model.lift(x); });
      EXPECT_TRUE(matrices_near(reduced.Q, full[i].Q, kSameTrajectoryTol, Compare::relative))
          << to_string(t) << ", " << to_string(s);
      EXPECT_TRUE(matrices_near(reduced.Y, full[i].Y, kSameTrajectoryTol, Compare::relative))
          << to_string(t) << ", " << to_string(s);
    }
  }
}

TEST(ReducedChain, JacobianMatchesFiniteDifferences) {
  const Index N = 50, r = 6, m = 12;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(11);
  const Matrix V = random_orthonormal(N, r, gen);
  Eigen::HouseholderQR<Matrix> qr(V + 0.3 * testing::random_normal(N, r, gen));
  const Matrix W_pg = qr.householderQ() * Matrix::Identity(N, r);
  const DeimResult d = deim(random_orthonormal(N, m, gen), DeimMethod::qdeim);
  const Vector q = 2.0 * testing::random_normal(r, 1, gen);
  for (const Matrix& W : {Matrix(), W_pg}) {
    const char* kind = W.size() == 0 ? "Galerkin" : "Petrov-Galerkin";
    for (NonlinearTreatment t : kTreatments) {
      const ProjectedModel model = reduced_chain(chain, V, W, options_for(t, &d));
      const Matrix J = model.nonlinear_jacobian(q);
      EXPECT_TRUE(matrices_near(J, finite_difference_jacobian(model, q), kFiniteDifferenceTol,
                                Compare::relative))
          << to_string(t) << ", " << kind;
      // The iteration matrix is S = a M_r + b D_r + c (K_r + J): S x = rhs after the solve.
      ProjectedModel::Workspace ws(model);
      const double a = 1.0, b = 0.1, c = 0.01;
      ws.factorize_iteration(a, b, c, q);
      const Matrix S = a * model.M_r() + b * model.D_r() + c * (model.K_r() + J);
      const Vector rhs = testing::random_normal(r, 1, gen);
      Vector x;
      ws.solve_iteration(rhs, x);
      EXPECT_TRUE(matrices_near(Vector(S * x), rhs, kExactAgreementTol, Compare::relative))
          << to_string(t) << ", " << kind;
    }
  }
}

TEST(ReducedChain, TensorEqualsFullEvaluation) {
  const Index N = 50, r = 6;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(17);
  const Matrix V = random_orthonormal(N, r, gen);
  const Matrix W_pg = random_orthonormal(N, r, gen) + V;  // not orthonormal, W^T V nonsingular
  for (const Matrix& W : {Matrix(), W_pg}) {
    const ProjectedModel full = reduced_chain(chain, V, W, options_for(NonlinearTreatment::full));
    const ProjectedModel tensor =
        reduced_chain(chain, V, W, options_for(NonlinearTreatment::tensor));
    EXPECT_EQ(stencil_of(tensor).nonlinear_storage(), r * (r * (r + 1) * (r + 2) / 6));
    for (int trial = 0; trial < 5; ++trial) {
      const Vector q = 2.0 * testing::random_normal(r, 1, gen);
      Vector g_full, g_tensor;
      full.nonlinear_force(q, g_full);
      tensor.nonlinear_force(q, g_tensor);
      EXPECT_TRUE(matrices_near(g_tensor, g_full, kExactAgreementTol, Compare::relative));
      // The full treatment is W^T g(V q) of the chain itself.
      EXPECT_TRUE(matrices_near(g_full, full_reduced_force(chain, V, full.W(), q),
                                kExactAgreementTol, Compare::relative));
      EXPECT_TRUE(matrices_near(tensor.nonlinear_jacobian(q), full.nonlinear_jacobian(q),
                                kExactAgreementTol, Compare::relative));
    }
  }
}

TEST(ReducedChain, DeimWithAllRowsReproducesFull) {
  const Index N = 30, r = 5;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(19);
  const Matrix V = random_orthonormal(N, r, gen);
  const Matrix U = random_orthonormal(N, N, gen);
  const ProjectedModel full =
      reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::full));
  for (DeimMethod method : {DeimMethod::deim, DeimMethod::qdeim}) {
    const DeimResult d = deim(U, method);
    const ProjectedModel model =
        reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::deim, &d));
    EXPECT_EQ(model.deim_samples(), N);
    const Vector q = 2.0 * testing::random_normal(r, 1, gen);
    Vector g, g_full;
    model.nonlinear_force(q, g);
    full.nonlinear_force(q, g_full);
    EXPECT_TRUE(matrices_near(g, g_full, kExactAgreementTol, Compare::relative))
        << to_string(method);
    EXPECT_TRUE(matrices_near(model.nonlinear_jacobian(q), full.nonlinear_jacobian(q),
                              kExactAgreementTol, Compare::relative))
        << to_string(method);
  }
}

TEST(ReducedChain, DeimFollowsItsDefinitionAndIsExactOnRangeU) {
  const Index N = 60, r = 6, k = 12;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(23);
  const Matrix V = random_orthonormal(N, r, gen);
  const Matrix W = random_orthonormal(N, r, gen) + V;
  // U spans k force snapshots g(V q_i) exactly (m = k).
  Matrix X(N, k), Qs = 2.0 * testing::random_normal(r, k, gen);
  for (Index i = 0; i < k; ++i) {
    Vector g;
    chain.nonlinear_force(V * Qs.col(i), g);
    X.col(i) = g;
  }
  Eigen::HouseholderQR<Matrix> qr(X);
  const Matrix U = qr.householderQ() * Matrix::Identity(N, k);
  const DeimResult d = deim(U, DeimMethod::qdeim);
  const ProjectedModel model =
      reduced_chain(chain, V, W, options_for(NonlinearTreatment::deim, &d));
  EXPECT_EQ(stencil_of(model).nonlinear_storage(), 3 * k * r);
  // Exact for a force in range(U).
  for (Index i = 0; i < k; ++i) {
    Vector g;
    model.nonlinear_force(Qs.col(i), g);
    EXPECT_TRUE(matrices_near(g, full_reduced_force(chain, V, W, Qs.col(i)), kDeimExactTol,
                              Compare::relative))
        << "snapshot " << i;
  }
  // Elsewhere: W^T U (P^T U)^{-1} g_P and its Jacobian W^T U (P^T U)^{-1} (J V)_P, from the
  // full g and J.
  const Vector q = 2.0 * testing::random_normal(r, 1, gen);
  const Vector qf = V * q;
  Vector g_full, g;
  chain.nonlinear_force(qf, g_full);
  model.nonlinear_force(q, g);
  EXPECT_TRUE(matrices_near(g, Vector(W.transpose() * deim_approximation(d, g_full)),
                            kExactAgreementTol, Compare::relative));
  const Matrix JV = chain.nonlinear_jacobian(qf) * V;
  const Matrix J_expected = W.transpose() * U * d.PtU_inv * JV(d.indices, Eigen::all);
  EXPECT_TRUE(matrices_near(model.nonlinear_jacobian(q), J_expected, kExactAgreementTol,
                            Compare::relative));
}

TEST(ReducedChain, HyperReducedStorageDoesNotGrowWithN) {
  const Index N = 100000, r = 10, m = 20;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(29);
  const Matrix V = random_orthonormal(N, r, gen);
  const DeimResult d = deim(random_orthonormal(N, m, gen), DeimMethod::qdeim);
  const ProjectedModel deim_model =
      reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::deim, &d));
  EXPECT_EQ(deim_model.deim_samples(), m);
  EXPECT_EQ(stencil_of(deim_model).nonlinear_storage(), 3 * m * r);
  const ProjectedModel tensor_model =
      reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::tensor));
  EXPECT_EQ(stencil_of(tensor_model).nonlinear_storage(), r * (r * (r + 1) * (r + 2) / 6));
  const ProjectedModel full_model =
      reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::full));
  EXPECT_EQ(stencil_of(full_model).nonlinear_storage(), N * r);
  // And they still evaluate the right thing at this size (scaled to engage the cubic).
  const Vector q = 50.0 * testing::random_normal(r, 1, gen);
  Vector g_full, g_tensor, g_deim;
  full_model.nonlinear_force(q, g_full);
  tensor_model.nonlinear_force(q, g_tensor);
  deim_model.nonlinear_force(q, g_deim);
  EXPECT_TRUE(matrices_near(g_tensor, g_full, kExactAgreementTol, Compare::relative));
  Vector gf;
  chain.nonlinear_force(V * q, gf);
  EXPECT_TRUE(matrices_near(g_deim, Vector(V.transpose() * deim_approximation(d, gf)),
                            kExactAgreementTol, Compare::relative));
}

TEST(ReducedChain, UniformMassOnlyForOrthonormalGalerkin) {
  const Index N = 20, r = 4;
  ChainParameters p = testing::test_chain_parameters(N);
  p.m = 2.0;
  const MassSpringChain chain(p);
  std::mt19937 gen(31);
  const Matrix V = random_orthonormal(N, r, gen);
  const ProjectedModel orthonormal =
      reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::full));
  ASSERT_TRUE(orthonormal.uniform_mass().has_value());
  EXPECT_TRUE(scalars_near(*orthonormal.uniform_mass(), 2.0, 1e-14, Compare::relative));
  EXPECT_TRUE(matrices_near(orthonormal.M_r(), Matrix(2.0 * Matrix::Identity(r, r)), 1e-14));
  const Matrix A = Matrix::Identity(r, r) + 0.3 * testing::random_normal(r, r, gen);
  const ProjectedModel skewed =
      reduced_chain(chain, V * A, Matrix(), options_for(NonlinearTreatment::full));
  EXPECT_FALSE(skewed.uniform_mass().has_value());
  const ProjectedModel petrov = reduced_chain(chain, V, random_orthonormal(N, r, gen) + V,
                                              options_for(NonlinearTreatment::full));
  EXPECT_FALSE(petrov.uniform_mass().has_value());
}

TEST(ReducedChain, GalerkinTrajectoryIsInvariantUnderChangeOfBasis) {
  // V and V A span the same subspace: the Galerkin models are equivalent (q_r' = A^{-1} q_r) for
  // every treatment, so the lifted trajectories agree. V A has a non-uniform M_r: RK4 then goes
  // through the dense mass solve.
  const Index N = 40, r = 6, m = 12;
  ChainParameters p = testing::test_chain_parameters(N);
  p.outputs = {10, 40};
  const MassSpringChain chain(p);
  std::mt19937 gen(37);
  const Matrix V = random_orthonormal(N, r, gen);
  const Matrix A = Matrix::Identity(r, r) + 0.2 * testing::random_normal(r, r, gen);
  const DeimResult d = deim(random_orthonormal(N, m, gen), DeimMethod::qdeim);
  const Vector q0 = V * testing::random_normal(r, 1, gen), v0 = Vector::Zero(N);
  for (NonlinearTreatment t : kTreatments) {
    const ProjectedModel a = reduced_chain(chain, V, Matrix(), options_for(t, &d));
    const ProjectedModel b = reduced_chain(chain, V * A, Matrix(), options_for(t, &d));
    ASSERT_FALSE(b.uniform_mass().has_value());
    // q0 lies in range(V): project then lift is exact.
    EXPECT_TRUE(matrices_near(b.lift(b.project(q0)), q0, kExactAgreementTol, Compare::relative));
    for (Scheme s : kSchemes) {
      const Trajectory ta =
          run(a, s, a.project(q0), a.project(v0), [&](const Vector& x) { return a.lift(x); });
      const Trajectory tb =
          run(b, s, b.project(q0), b.project(v0), [&](const Vector& x) { return b.lift(x); });
      EXPECT_TRUE(matrices_near(tb.Q, ta.Q, kBasisChangeTol, Compare::relative))
          << to_string(t) << ", " << to_string(s);
      EXPECT_TRUE(matrices_near(tb.Y, ta.Y, kBasisChangeTol, Compare::relative))
          << to_string(t) << ", " << to_string(s);
    }
  }
}

/// The same model with a workspace that offers no folded midpoint correction: implicit
/// midpoint's plain path (force, residual, solve_iteration) on the same matrices.
struct PlainNewton {
  const ProjectedModel& model;
  Index n() const { return model.n(); }
  Index n_inputs() const { return model.n_inputs(); }
  Index n_outputs() const { return model.n_outputs(); }
  bool is_linear() const { return model.is_linear(); }
  template <class Q, class Vq>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<Vq>& v, const Vector& u,
             Vector& F) const {
    model.force(q, v, u, F);
  }
  void output(const Vector& q, const Vector& v, Vector& y) const { model.output(q, v, y); }
  void mass(const Vector& x, Vector& out) const { model.mass(x, out); }
  std::optional<double> uniform_mass() const { return model.uniform_mass(); }
  class Workspace {
   public:
    explicit Workspace(const PlainNewton& p) : ws_(p.model) {}
    void solve_mass(const Vector& r, Vector& x) { ws_.solve_mass(r, x); }
    void factorize_iteration(double a, double b, double c, const Vector& q) {
      ws_.factorize_iteration(a, b, c, q);
    }
    void solve_iteration(const Vector& r, Vector& x) { ws_.solve_iteration(r, x); }

   private:
    ProjectedModel::Workspace ws_;
  };
};
static_assert(FoldedMidpointModel<ProjectedModel>);
static_assert(SecondOrderModel<PlainNewton> && !FoldedMidpointModel<PlainNewton>);

// The folded correction is the plain one up to the order of its products: rounding of O(|x|)
// terms, over 100 steps of a damped model (observed about 1e-15).
constexpr double kFoldedTol = 1e-12;

TEST(ReducedChain, FoldedMidpointFollowsThePlainNewtonPath) {
  // DEIM chains with a uniform mass (orthonormal Galerkin), a dense one (V A) and a
  // Petrov-Galerkin one, with a step long enough (dt = 0.1, states of order one, k_n = 2) that
  // the lagged Newton matrix is refreshed: the folded matrices must follow every factorization.
  // Reduced states at every step and the Newton statistics must agree.
  const Index N = 40, r = 6, m = 12;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(43);
  const Matrix V = random_orthonormal(N, r, gen);
  const Matrix A = Matrix::Identity(r, r) + 0.2 * testing::random_normal(r, r, gen);
  const Matrix W = random_orthonormal(N, r, gen) + V;
  // U spans m force snapshots g(V q_i).
  Matrix X(N, m);
  for (Index i = 0; i < m; ++i) {
    Vector g;
    chain.nonlinear_force(V * testing::random_normal(r, 1, gen), g);
    X.col(i) = g;
  }
  Eigen::HouseholderQR<Matrix> qr(X);
  const DeimResult d = deim(Matrix(qr.householderQ() * Matrix::Identity(N, m)), DeimMethod::qdeim);
  const auto opt = options_for(NonlinearTreatment::deim, &d);
  const ProjectedModel models[] = {reduced_chain(chain, V, Matrix(), opt),
                                   reduced_chain(chain, V * A, Matrix(), opt),
                                   reduced_chain(chain, V, W, opt)};
  ASSERT_TRUE(models[0].uniform_mass().has_value());
  ASSERT_FALSE(models[1].uniform_mass().has_value());
  const auto u = make_sine_signal(1, 1.0, 0.3);
  const Vector q0f = V * testing::random_normal(r, 1, gen);
  for (std::size_t i = 0; i < std::size(models); ++i)
    for (bool reuse : {false, true}) {
      const ProjectedModel& model = models[i];
      IntegratorOptions o;
      o.scheme = Scheme::implicit_midpoint;
      o.dt = 0.1;
      o.t_end = 10.0;
      o.reuse_jacobian = reuse;
      const Index steps = step_count(o);
      auto trajectory = [&](const auto& m, IntegrationStats& stats) {
        typename std::decay_t<decltype(m)>::Workspace ws(m);
        Vector q = model.project(q0f), v = Vector::Zero(r);
        Matrix X(2 * r, steps + 1);
        stats = integrate(m, ws, *u, o, q, v,
                          [&](Index k, double, const Vector& qk, const Vector& vk, const Vector&) {
                            X.col(k) << qk, vk;
                          });
        return X;
      };
      IntegrationStats folded_stats, plain_stats;
      const Matrix folded = trajectory(model, folded_stats);
      const Matrix plain = trajectory(PlainNewton{model}, plain_stats);
      const std::string what = "model " + std::to_string(i) + (reuse ? ", lagged" : ", fresh") +
                               ": " + std::to_string(folded_stats.factorizations) +
                               " factorizations, " +
                               std::to_string(folded_stats.newton_iterations) + " iterations";
      EXPECT_TRUE(matrices_near(folded, plain, kFoldedTol, Compare::relative)) << what;
      EXPECT_EQ(folded_stats.newton_iterations, plain_stats.newton_iterations) << what;
      EXPECT_EQ(folded_stats.factorizations, plain_stats.factorizations) << what;
      // The lagged runs refreshed their Newton matrix (else the test would not cover it).
      if (reuse) {
        EXPECT_GT(folded_stats.factorizations, 2) << what;
        EXPECT_LT(folded_stats.factorizations, steps) << what;
      }
    }
}

TEST(ReducedChain, LinearChainNeedsNoNonlinearTerm) {
  const Index N = 15, r = 3;
  const MassSpringChain chain(testing::test_chain_parameters(N, 0.0));
  std::mt19937 gen(41);
  const Matrix V = random_orthonormal(N, r, gen);
  const ProjectedModel model =
      reduced_chain(chain, V, Matrix(), options_for(NonlinearTreatment::tensor));
  EXPECT_TRUE(model.is_linear());
  const Vector q = testing::random_normal(r, 1, gen);
  Vector g;
  model.nonlinear_force(q, g);
  EXPECT_TRUE(matrices_near(g, Vector(Vector::Zero(r)), 0.0));
  // The reduced linear matrices are W^T (.) V of the chain's.
  const SecondOrderSystem s = chain.linear_system();
  EXPECT_TRUE(matrices_near(model.K_r(), Matrix(V.transpose() * (s.K * V)), kExactAgreementTol,
                            Compare::relative));
  EXPECT_TRUE(matrices_near(model.D_r(), Matrix(V.transpose() * (s.D * V)), kExactAgreementTol,
                            Compare::relative));
  EXPECT_TRUE(matrices_near(model.B_r(), Matrix(V.transpose() * s.B), kExactAgreementTol,
                            Compare::relative));
  EXPECT_TRUE(matrices_near(model.Cp_r(), Matrix(s.Cp * V), kExactAgreementTol, Compare::relative));
}

TEST(ReducedChain, BadInputIsRejectedNamingTheValue) {
  const Index N = 12;
  const MassSpringChain chain(testing::test_chain_parameters(N));
  std::mt19937 gen(43);
  const Matrix V = random_orthonormal(N, 3, gen);
  const DeimResult d = deim(random_orthonormal(N, 5, gen), DeimMethod::qdeim);
  auto message = [&](const Matrix& Vb, const Matrix& Wb, const ProjectionOptions& o) {
    return testing::invalid_argument_message(
        [&] { ProjectedModel model = reduced_chain(chain, Vb, Wb, o); });
  };
  const ProjectionOptions full = options_for(NonlinearTreatment::full);
  auto expect_contains = [](const std::string& msg, const std::string& part) {
    EXPECT_NE(msg.find(part), std::string::npos) << "expected '" << part << "' in: " << msg;
  };
  expect_contains(message(Matrix(V.topRows(11)), Matrix(), full), "V has 11 rows");
  expect_contains(message(Matrix(N, 0), Matrix(), full), "r = 0");
  expect_contains(message(Matrix::Identity(N, N + 1), Matrix(), full), "r = 13");
  expect_contains(message(V, Matrix(V.leftCols(2)), full), "W has 2 columns");
  expect_contains(message(V, Matrix(V.topRows(10)), full), "W has 10 rows");
  Matrix nan = V;
  nan(4, 1) = std::nan("");
  expect_contains(message(nan, Matrix(), full), "V(4, 1) is nan");
  expect_contains(message(V, nan, full), "W(4, 1) is nan");
  Matrix orthogonal_W = Matrix::Zero(N, 3), e123 = Matrix::Zero(N, 3);
  for (Index j = 0; j < 3; ++j) {
    e123(j, j) = 1.0;
    orthogonal_W(j + 3, j) = 1.0;
  }
  expect_contains(message(e123, orthogonal_W, full), "W^T V is singular");
  // DEIM: missing, of another N, with an index out of range or repeated.
  expect_contains(message(V, Matrix(), options_for(NonlinearTreatment::deim)),
                  "options.deim is null");
  const DeimResult other = deim(random_orthonormal(10, 3, gen), DeimMethod::qdeim);
  expect_contains(message(V, Matrix(), options_for(NonlinearTreatment::deim, &other)),
                  "U has 10 rows");
  DeimResult bad_index = d;
  bad_index.indices[2] = 12;
  expect_contains(message(V, Matrix(), options_for(NonlinearTreatment::deim, &bad_index)),
                  "DEIM index 12 is outside");
  DeimResult repeated = d;
  repeated.indices[3] = repeated.indices[1];
  expect_contains(message(V, Matrix(), options_for(NonlinearTreatment::deim, &repeated)),
                  "is repeated");
  // Tensor above the default 2 GiB: r = 200 needs 8 * 200 * C(202, 3) = 2165440000 bytes.
  const MassSpringChain big(testing::test_chain_parameters(200));
  const std::string too_big = testing::invalid_argument_message([&] {
    ProjectedModel model = reduced_chain(big, Matrix::Identity(200, 200), Matrix(),
                                         options_for(NonlinearTreatment::tensor));
  });
  expect_contains(too_big, "r = 200");
  expect_contains(too_big, "2165440000 bytes");
  // And above a given limit: r = 5 needs 1400 bytes.
  ProjectionOptions small_limit = options_for(NonlinearTreatment::tensor);
  small_limit.tensor_memory_limit = 1000;
  expect_contains(message(Matrix::Identity(N, 5), Matrix(), small_limit), "1400 bytes");
  EXPECT_EQ(message(Matrix::Identity(N, 4), Matrix(), small_limit), "no error");  // 960 bytes
  // Names and sizes of states.
  for (NonlinearTreatment t : kTreatments) EXPECT_EQ(parse_nonlinear_treatment(to_string(t)), t);
  expect_contains(testing::invalid_argument_message([] { parse_nonlinear_treatment("hyper"); }),
                  "hyper");
  const ProjectedModel model = reduced_chain(chain, V, Matrix(), full);
  expect_contains(testing::invalid_argument_message([&] { model.project(Vector::Ones(5)); }),
                  "size 5");
}

}  // namespace
}  // namespace mor
