// SPDX-License-Identifier: GPL-3.0-or-later
// The rational Krylov Gramian solver against dense Hammarling factors (lightly damped chain,
// random descriptor systems with E != I and several inputs), its residual against the
// independent low-rank residual formula, convergence on the lightly damped chain of N = 1000
// masses (where LR-ADI stalls), the energy weight of second-order operators, balanced truncation
// through it, and its failure modes.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "models/mass_spring_chain.hpp"
#include "reduction/balanced_truncation.hpp"
#include "reduction/dense_lyapunov.hpp"
#include "reduction/gramian.hpp"
#include "reduction/lti_operator.hpp"
#include "reduction/rational_krylov.hpp"
#include "src/core/errors.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::random_descriptor;
using testing::scalars_near;

// RKSM runs below stop at a relative residual of 1e-12. As for LR-ADI (test_low_rank_adi), the
// error of X = Z Z^T relative to max |X_ij| is that residual times a modest factor (the
// conditioning of the Lyapunov operator): measured 6.4e-13 on the lightly damped chain of 50
// masses (slowest damping ratio ~0.03) and 7e-14 on the random descriptor system. 1e-10 keeps a
// margin of 150 and is far below the error of a wrong projection or a lost direction (>= 1e-3).
constexpr double kRksmTol = 1e-12;
constexpr double kGramianTol = 1e-10;
// The residual RKSM reports (from its basis of span[E V, A V, B]) against lyapunov_residual (a
// thin QR of [E Z, A Z, B] of the final, compressed factor): both are exact up to rounding, which
// is a few eps ||A|| ||Z||^2 / ||B||^2 in absolute terms. Measured agreement: 4 digits at 1e-10.
constexpr double kResidualAgreeRel = 1e-2;
constexpr double kResidualAgreeAbs = 1e-13;

SecondOrderSystem chain(Index N) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  return MassSpringChain(p).linear_system();
}

Matrix gramian(const Matrix& Z) {
  return Z * Z.transpose();
}

/// Runs RKSM to kRksmTol for both Gramians of op and compares Z Z^T with the Hammarling
/// solution; returns the runs for further checks.
std::vector<AdiResult> expect_hammarling_gramians(LtiOperator& op) {
  RksmOptions o;
  o.tolerance = kRksmTol;
  std::vector<AdiResult> runs;
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    AdiResult r = rational_krylov(op, kind, o);
    EXPECT_EQ(r.status, AdiStatus::converged) << r.message;
    const Matrix X = gramian(dense_gramian_factor(op, kind));
    EXPECT_TRUE(matrices_near(gramian(r.Z), X, kGramianTol, Compare::relative))
        << to_string(kind) << ": " << r.message;
    runs.push_back(std::move(r));
  }
  return runs;
}

TEST(RationalKrylov, LightlyDampedChainGramiansMatchHammarling) {
  const SecondOrderSystem sys = chain(50);
  SecondOrderLtiOperator op(sys);
  for (const AdiResult& r : expect_hammarling_gramians(op)) {
    // The adaptive poles of this lightly damped system include complex ones.
    bool complex_pole = false;
    for (Complex s : r.shifts) {
      EXPECT_LT(s.real(), 0.0) << "pole " << s;
      complex_pole = complex_pole || s.imag() != 0.0;
    }
    EXPECT_TRUE(complex_pole) << r.message;
  }
}

TEST(RationalKrylov, DescriptorSystemWithSeveralInputsMatchesHammarling) {
  // E != I (no pole at infinity: the space starts with a shifted solve), m = 2, p = 3, no energy
  // weight: plain Galerkin, which A ~ -2 I and E ~ I keep stable here).
  const DescriptorSystem sys = random_descriptor(60, 2, 3, 11u);
  SparseLtiOperator op(sys);
  expect_hammarling_gramians(op);
}

TEST(RationalKrylov, ConvergesOnTheLightlyDampedChainWhereAdiStalls) {
  // N = 1000 masses (n = 2000), damping ratio ~ pi / (2 N) in the lowest modes: LR-ADI with
  // either shift strategy stalls near a relative residual of 1e-3 (README, "BT on the lightly
  // damped chain"); RKSM reaches 1e-10 with a basis of a few hundred columns.
  const SecondOrderSystem sys = chain(1000);
  SecondOrderLtiOperator op(sys);
  AdiOptions adi;
  adi.max_iterations = 400;
  const AdiResult a = low_rank_adi(op, GramianKind::controllability, adi);
  EXPECT_NE(a.status, AdiStatus::converged) << a.message;
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    const AdiResult r = rational_krylov(op, kind);
    ASSERT_EQ(r.status, AdiStatus::converged) << r.message;
    const double reported = r.residual_history.back();
    const double independent = lyapunov_residual(op, kind, r.Z);
    EXPECT_LE(independent, 1e-10 * (1.0 + kResidualAgreeRel)) << r.message;
    EXPECT_TRUE(
        scalars_near(reported, independent, kResidualAgreeAbs + kResidualAgreeRel * independent))
        << to_string(kind);
    EXPECT_LT(r.Z.cols(), 600) << r.message;
  }
}

TEST(RationalKrylov, EnergyWeightMakesTheSecondOrderPencilDissipative) {
  // H E symmetric positive definite and H A + (H A)^T negative semidefinite, for the pencil and
  // for its transpose, formed densely from the operator products (N = 8, n = 16).
  const SecondOrderSystem sys = chain(8);
  SecondOrderLtiOperator op(sys);
  const Index n = op.n();
  const Matrix I = Matrix::Identity(n, n);
  for (bool transpose : {false, true}) {
    Matrix A, E, HA, HE;
    op.apply_A(I, A, transpose);
    op.apply_E(I, E, transpose);
    ASSERT_TRUE(op.apply_energy_weight(A, HA, transpose));
    ASSERT_TRUE(op.apply_energy_weight(E, HE, transpose));
    EXPECT_TRUE(matrices_near(HE, HE.transpose(), 1e-14, Compare::relative));
    Eigen::SelfAdjointEigenSolver<Matrix> e(HE);
    EXPECT_GT(e.eigenvalues().minCoeff(), 0.0) << "transpose " << transpose;
    Eigen::SelfAdjointEigenSolver<Matrix> s(HA + HA.transpose());
    EXPECT_LE(s.eigenvalues().maxCoeff(), 1e-13 * HA.norm()) << "transpose " << transpose;
  }
  // A general sparse descriptor operator offers none.
  const DescriptorSystem small = random_descriptor(10, 1, 1, 3u);
  SparseLtiOperator plain(small);
  Matrix Y;
  EXPECT_FALSE(plain.apply_energy_weight(Matrix::Identity(10, 2), Y));
}

TEST(RationalKrylov, WithoutEnergyWeightANonDissipativePencilIsAnErrorNotAWrongFactor) {
  // The chain in first-order form as a plain sparse descriptor system (E = I for m = 1,
  // A = [0 I; -K -D]) is not dissipative in the Euclidean inner product. For the observability
  // Gramian the space starts with C^T = [e_N; 0], a pure position, and the projection of
  // A^T = [0 -K; I -D] on it is exactly 0: RKSM must say so rather than return a factor.
  ChainParameters p;
  p.N = 50;
  p.k_n = 0.0;
  const DescriptorSystem sys = MassSpringChain(p).descriptor_system();
  SparseLtiOperator op(sys);
  try {
    rational_krylov(op, GramianKind::observability);
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("not stable"), std::string::npos) << msg;
    EXPECT_NE(msg.find("LR-ADI"), std::string::npos) << msg;
  }
}

TEST(RationalKrylov, BalancedTruncationThroughRksmMatchesDenseBt) {
  const SecondOrderSystem sys = chain(60);
  SecondOrderLtiOperator op(sys);
  BtOptions dense;
  dense.selection.order = 10;
  dense.gramians.method = GramianMethod::dense;
  BtOptions low = dense;
  low.gramians.method = GramianMethod::low_rank;
  low.gramians.solver = LowRankSolver::rksm;
  low.gramians.rksm.tolerance = kRksmTol;
  const BtResult a = balanced_truncation(op, dense);
  const BtResult b = balanced_truncation(op, low);
  ASSERT_TRUE(b.gramians.low_rank_c.has_value());
  EXPECT_EQ(b.gramians.solver, LowRankSolver::rksm);
  // The leading Hankel singular values (above 1e-6 sigma_1) to 1e-8 relative to sigma_1:
  // the Gramian error bound above, squared-root propagated.
  const Index k = 20;
  ASSERT_GE(b.hsv.size(), k);
  EXPECT_TRUE(matrices_near(b.hsv.head(k), a.hsv.head(k), 1e-8, Compare::relative));
}

TEST(RationalKrylov, DimensionLimitIsReportedAsNotConverged) {
  const SecondOrderSystem sys = chain(200);
  SecondOrderLtiOperator op(sys);
  RksmOptions o;
  o.max_dimension = 20;
  const AdiResult r = rational_krylov(op, GramianKind::controllability, o);
  EXPECT_EQ(r.status, AdiStatus::max_iterations);
  EXPECT_GT(r.residual_history.back(), o.tolerance);
  EXPECT_LE(r.Z.cols(), 20);
  EXPECT_NE(r.message.find("basis dimension limit 20"), std::string::npos) << r.message;
  // The reported residual is that of the returned factor.
  EXPECT_TRUE(scalars_near(r.residual_history.back(),
                           lyapunov_residual(op, GramianKind::controllability, r.Z),
                           kResidualAgreeRel * r.residual_history.back()));
}

TEST(RationalKrylov, InvalidOptionsAreRejected) {
  const SecondOrderSystem sys10 = chain(10);
  SecondOrderLtiOperator op(sys10);
  auto expect_invalid = [&](RksmOptions o, const std::string& needle) {
    try {
      rational_krylov(op, GramianKind::controllability, o);
      FAIL() << "expected InvalidArgument containing " << needle;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  RksmOptions o;
  o.tolerance = -1.0;
  expect_invalid(o, "-1");
  o = {};
  o.max_dimension = 0;
  expect_invalid(o, "max_dimension");
  o = {};
  o.update_ratio = 0;
  expect_invalid(o, "update_ratio");
  o = {};
  o.stall_factor = 1.5;
  expect_invalid(o, "1.5");
}

TEST(RationalKrylov, ZeroInputGivesAnEmptyFactorAndStopRequestInterrupts) {
  DescriptorSystem sys = random_descriptor(20, 1, 1, 5u);
  sys.B = SparseMatrix(20, 1);
  SparseLtiOperator zero(sys);
  const AdiResult r = rational_krylov(zero, GramianKind::controllability);
  EXPECT_EQ(r.status, AdiStatus::converged);
  EXPECT_EQ(r.Z.cols(), 0);

  const SecondOrderSystem sys10 = chain(10);
  SecondOrderLtiOperator op(sys10);
  std::atomic<bool> stop{true};
  RksmOptions o;
  o.stop_requested = &stop;
  EXPECT_THROW(rational_krylov(op, GramianKind::controllability, o), Interrupted);
}

TEST(RationalKrylov, SolverNames) {
  EXPECT_EQ(parse_low_rank_solver("rksm"), LowRankSolver::rksm);
  EXPECT_EQ(to_string(parse_low_rank_solver("adi")), "adi");
  EXPECT_THROW(parse_low_rank_solver("krylov"), InvalidArgument);
}

}  // namespace
}  // namespace mor
