// SPDX-License-Identifier: GPL-3.0-or-later
// Parametric systems and the parametric projected model (src/systems/parametric.hpp,
// models/spring_parameters.hpp, reduction/parametric_model.hpp): the domain's checks and its
// seeded samples (inside the box, uniform in each scale); the chain's affine structure against
// the chain built at the same parameters; the parametric reduced model at a parameter against
// the projection of the full model at that parameter, for the cubic stencil's DEIM and tensor
// and for the network's DEIM, with dampers and with Rayleigh damping; no copy of the bases;
// points outside the domain refused with the parameter named.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <Eigen/QR>

#include "models/mass_spring_chain.hpp"
#include "models/spring_parameters.hpp"
#include "reduction/deim.hpp"
#include "reduction/parametric_model.hpp"
#include "src/core/errors.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

// Two evaluations of the same reduced operators, one summed from projected affine terms and one
// projected from the summed full operators: rounding of O(1) sums over N = 60 rows.
constexpr double kSameOperatorTol = 1e-13;
// The sampled points' mean of u = (log) position in [0, 1]: 4000 samples of a uniform variable
// have a standard deviation of the mean of 1/sqrt(12 * 4000) = 0.0046; 5 sigma.
constexpr double kUniformMeanTol = 0.023;

Matrix random_orthonormal(Index n, Index c, std::mt19937& gen) {
  Eigen::HouseholderQR<Matrix> qr(testing::random_normal(n, c, gen));
  return qr.householderQ() * Matrix::Identity(n, c);
}

template <class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(ParameterDomain, RefusesEmptyInvertedNonFiniteAndLogRangesTouchingZero) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NE(message_of([] {
              ParameterDomain({{"k_n", 2.0, 2.0}});
            }).find("k_n"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              ParameterDomain({{"d", 3.0, 1.0}});
            }).find("inverted"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              ParameterDomain({{"d", 0.0, inf}});
            }).find("finite"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              ParameterDomain({{"d", 0.0, 1.0, true}});
            }).find("log"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              ParameterDomain({{"d", 0.1, 1.0}, {"d", 0.2, 2.0}});
            }).find("twice"),
            std::string::npos);
}

TEST(ParameterDomain, SamplesAreSeededSortedByNameInsideAndUniformInTheirScale) {
  const ParameterDomain dom({{"k_n", 0.5, 4.0}, {"d", 0.2, 2.0, true}});
  ASSERT_EQ(dom.names(), (std::vector<std::string>{"d", "k_n"}));
  const Index k = 4000;
  const Matrix X = dom.sample(k, 7);
  EXPECT_TRUE(matrices_near(X, dom.sample(k, 7), 0.0));
  EXPECT_GT((X - dom.sample(k, 8)).cwiseAbs().maxCoeff(), 0.0);
  double mean_log_d = 0, mean_kn = 0;
  for (Index i = 0; i < k; ++i) {
    ASSERT_TRUE(dom.contains(X.row(i).transpose())) << dom.describe(X.row(i).transpose());
    mean_log_d += std::log(X(i, 0) / 0.2) / std::log(10.0) / k;
    mean_kn += (X(i, 1) - 0.5) / 3.5 / k;
  }
  EXPECT_NEAR(mean_log_d, 0.5, kUniformMeanTol);
  EXPECT_NEAR(mean_kn, 0.5, kUniformMeanTol);
  EXPECT_NEAR(dom.center()[0], std::sqrt(0.2 * 2.0), 1e-15);
  Vector outside(2);
  outside << 0.1, 1.0;
  const std::string msg = message_of([&] { dom.check(outside, "at"); });
  EXPECT_NE(msg.find("d = 0.1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[0.2, 2]"), std::string::npos) << msg;
}

ChainParameters chain_at(ChainParameters p, const ParameterDomain& dom, const Vector& mu) {
  for (Index j = 0; j < dom.size(); ++j) {
    const std::string& name = dom.parameters()[static_cast<std::size_t>(j)].name;
    double* key = name == "m"       ? &p.m
                  : name == "k_l"   ? &p.k_l
                  : name == "d"     ? &p.d
                  : name == "k_n"   ? &p.k_n
                  : name == "alpha" ? &p.alpha
                                    : &p.beta;
    *key = mu[j];
  }
  return p;
}

ParametricNetwork chain_parametric(const ChainParameters& p, const ParameterDomain& dom) {
  ChainParameters unit = p;
  unit.m = unit.k_l = unit.d = unit.k_n = 1.0;
  unit.damping = SpringDamping::dampers;
  unit.alpha = unit.beta = 0.0;
  return spring_parametric_network(MassSpringChain(unit).network(),
                                   {p.m, p.k_l, p.d, p.k_n, p.alpha, p.beta, p.damping}, dom);
}

TEST(SpringParameters, TheChainsAffineStructureIsTheChainAtEachParameter) {
  ChainParameters p;
  p.N = 40;
  p.inputs = {3, 40};
  for (SpringDamping damping : {SpringDamping::dampers, SpringDamping::rayleigh}) {
    p.damping = damping;
    p.alpha = damping == SpringDamping::rayleigh ? 0.3 : 0.0;
    const ParameterDomain dom =
        damping == SpringDamping::rayleigh
            ? ParameterDomain({{"beta", 0.1, 1.0}, {"k_l", 0.5, 2.0}, {"m", 0.5, 2.0}})
            : ParameterDomain({{"d", 0.2, 2.0, true}, {"k_n", 0.5, 4.0}, {"m", 0.5, 2.0}});
    const ParametricNetwork pn = chain_parametric(p, dom);
    const Matrix X = dom.sample(5, 3);
    for (Index i = 0; i < X.rows(); ++i) {
      const Vector mu = X.row(i).transpose();
      const NonlinearNetwork a = pn.at(mu);
      const NonlinearNetwork b = MassSpringChain(chain_at(p, dom, mu)).network();
      const SecondOrderSystem &sa = a.linear_system(), &sb = b.linear_system();
      EXPECT_TRUE(matrices_near(Matrix(sa.M), Matrix(sb.M), kSameOperatorTol, Compare::relative));
      EXPECT_TRUE(matrices_near(Matrix(sa.D), Matrix(sb.D), kSameOperatorTol, Compare::relative));
      EXPECT_TRUE(matrices_near(Matrix(sa.K), Matrix(sb.K), kSameOperatorTol, Compare::relative));
      EXPECT_TRUE(matrices_near(Matrix(sa.B), Matrix(sb.B), 0.0));
      EXPECT_TRUE(
          matrices_near(a.coefficients(), b.coefficients(), kSameOperatorTol, Compare::relative));
    }
  }
}

TEST(SpringParameters, RefusesSizeKeysAndTheOtherDampingsKeysNamingThem) {
  ChainParameters p;
  p.N = 10;
  auto refuse = [&](const char* name, SpringDamping damping) {
    p.damping = damping;
    return message_of([&] { (void)chain_parametric(p, ParameterDomain({{name, 1.0, 2.0}})); });
  };
  EXPECT_NE(refuse("N", SpringDamping::dampers).find("size"), std::string::npos);
  EXPECT_NE(refuse("alpha", SpringDamping::dampers).find("rayleigh"), std::string::npos);
  EXPECT_NE(refuse("d", SpringDamping::rayleigh).find("d does not enter"), std::string::npos);
  EXPECT_NE(refuse("mass", SpringDamping::dampers).find("mass"), std::string::npos);
}

/// The parametric model at mu against the projection of the full model at mu: reduced
/// operators, the force at a random state, its Jacobian.
void expect_same_model(const ProjectedModel& a, const ProjectedModel& b, std::mt19937& gen) {
  EXPECT_TRUE(matrices_near(a.M_r(), b.M_r(), kSameOperatorTol, Compare::relative));
  EXPECT_TRUE(matrices_near(a.D_r(), b.D_r(), kSameOperatorTol, Compare::relative));
  EXPECT_TRUE(matrices_near(a.K_r(), b.K_r(), kSameOperatorTol, Compare::relative));
  EXPECT_TRUE(matrices_near(a.B_r(), b.B_r(), 0.0));
  const Vector q = testing::random_normal(a.n(), 1, gen), v = testing::random_normal(a.n(), 1, gen);
  const Vector u = testing::random_normal(a.n_inputs(), 1, gen);
  Vector Fa, Fb;
  a.force(q, v, u, Fa);
  b.force(q, v, u, Fb);
  EXPECT_TRUE(matrices_near(Fa, Fb, kSameOperatorTol, Compare::relative));
  EXPECT_TRUE(matrices_near(a.nonlinear_jacobian(q), b.nonlinear_jacobian(q), kSameOperatorTol,
                            Compare::relative));
  EXPECT_EQ(a.uniform_mass().has_value(), b.uniform_mass().has_value());
}

TEST(ParametricProjectedModel, AtAParameterItIsTheProjectionOfTheFullModelThere) {
  std::mt19937 gen(11);
  ChainParameters p;
  p.N = 60;
  p.inputs = {60};
  const Index r = 6, m = 12;
  const Matrix V = random_orthonormal(p.N, r, gen), W = random_orthonormal(p.N, r, gen);
  const DeimResult deim_nodes = deim(random_orthonormal(p.N, m, gen), DeimMethod::qdeim);
  for (SpringDamping damping : {SpringDamping::dampers, SpringDamping::rayleigh}) {
    p.damping = damping;
    p.alpha = damping == SpringDamping::rayleigh ? 0.3 : 0.0;
    p.beta = damping == SpringDamping::rayleigh ? 0.2 : 0.0;
    const ParameterDomain dom =
        damping == SpringDamping::rayleigh
            ? ParameterDomain({{"beta", 0.1, 1.0}, {"k_n", 0.5, 4.0}, {"m", 0.5, 2.0}})
            : ParameterDomain({{"d", 0.2, 2.0, true}, {"k_n", 0.5, 4.0}});
    const ParametricNetwork pn = chain_parametric(p, dom);
    const Vector mu_ref = dom.center();
    const MassSpringChain ref(chain_at(p, dom, mu_ref));
    const Matrix X = dom.sample(4, 5);
    for (NonlinearTreatment t : {NonlinearTreatment::deim, NonlinearTreatment::tensor}) {
      for (bool galerkin : {true, false}) {
        const Matrix Wt = galerkin ? Matrix() : W;
        ProjectionOptions o;
        o.nonlinear = t;
        o.deim = &deim_nodes;
        SCOPED_TRACE(std::string(to_string(t)) + (galerkin ? " Galerkin" : " Petrov-Galerkin") +
                     (damping == SpringDamping::rayleigh ? " Rayleigh" : " dampers"));
        // The cubic stencil (the chain's own projection) ...
        const ParametricProjectedModel stencil(
            dom,
            ProjectedModel(ref.linear_system(), CubicPathStencil{p.N, ref.parameters().k_n}, V, Wt,
                           o),
            mu_ref, pn);
        // ... and the network's (DEIM over nodes only: the tensor is the stencil's).
        std::optional<ParametricProjectedModel> network;
        if (t == NonlinearTreatment::deim)
          network.emplace(dom, ProjectedModel(ref.network(), V, Wt, o), mu_ref, pn);
        for (Index i = 0; i < X.rows(); ++i) {
          const Vector mu = X.row(i).transpose();
          const MassSpringChain at(chain_at(p, dom, mu));
          const ProjectedModel a = stencil.at(mu);
          expect_same_model(a,
                            ProjectedModel(at.linear_system(),
                                           CubicPathStencil{p.N, at.parameters().k_n}, V, Wt, o),
                            gen);
          EXPECT_EQ(&a.V(), &stencil.reference().V()) << "the bases are shared, not copied";
          if (network)
            expect_same_model(network->at(mu), ProjectedModel(at.network(), V, Wt, o), gen);
        }
      }
    }
    Vector outside = mu_ref;
    outside[dom.index_of("k_n")] = 4.5;
    const ParametricProjectedModel model(dom, ProjectedModel(ref.network(), V, Matrix(), {}),
                                         mu_ref, pn);
    const std::string msg = message_of([&] { (void)model.at(outside); });
    EXPECT_NE(msg.find("k_n = 4.5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0.5, 4]"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace mor
