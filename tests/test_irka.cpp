// SPDX-License-Identifier: GPL-3.0-or-later
// IRKA and SOR-IRKA: the H2-optimality (tangential Hermite interpolation) conditions at
// convergence, checked on dense transfer functions independent of the iteration; the known
// H2-optimal first-order approximation of a small system (an independent 1-D minimization of
// the closed-form H2 error); H2 error against BT on the well-damped chain; second-order
// structure and interpolation; non-convergence and bad input.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "models/mass_spring_chain.hpp"
#include "reduction/balanced_truncation.hpp"
#include "reduction/irka.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/io/results.hpp"
#include "support/compare.hpp"
#include "support/mor_cli.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::invalid_argument_message;
using testing::scalars_near;

/// IRKA's stopping tolerance in the tests: the shifts move by less than this relatively.
constexpr double kShiftTol = 1e-10;
/// The interpolation conditions at the next shifts (within kShiftTol of the ones that built
/// the model) hold to this relative accuracy (the shift error times the derivative, plus the
/// rounding of the shifted solves and of the reduced eigenvectors).
constexpr double kInterpolationTol = 1e-6;

/// Dense G(s) = C (s E - A)^{-1} B of an operator (small systems).
struct DenseTransfer {
  Matrix E, A, B, C;
  explicit DenseTransfer(LtiOperator& sys)
      : E(dense_E(sys)), A(dense_A(sys)), B(sys.B()), C(sys.C()) {}
  DenseTransfer(Matrix e, Matrix a, Matrix b, Matrix c)
      : E(std::move(e)), A(std::move(a)), B(std::move(b)), C(std::move(c)) {}
  ComplexMatrix resolvent(Complex s) const {
    const ComplexMatrix S = s * E.cast<Complex>() - A.cast<Complex>();
    return S.partialPivLu().inverse();
  }
  ComplexMatrix G(Complex s) const { return C.cast<Complex>() * resolvent(s) * B.cast<Complex>(); }
  /// G'(s) = -C (sE - A)^{-1} E (sE - A)^{-1} B.
  ComplexMatrix dG(Complex s) const {
    const ComplexMatrix R = resolvent(s);
    return -(C.cast<Complex>() * R * E.cast<Complex>() * R * B.cast<Complex>());
  }
};

/// The reduced model's poles and residue directions, computed here from its eigenvectors (not
/// through the library's pole_residue_form): G_r(s) = sum_i c_i b_i^T / (s - lambda_i).
void residues(const DenseTransfer& red, ComplexVector& poles, ComplexMatrix& b, ComplexMatrix& c) {
  const Matrix At = red.E.lu().solve(red.A), Bt = red.E.lu().solve(red.B);
  Eigen::ComplexEigenSolver<ComplexMatrix> es(At.cast<Complex>());
  poles = es.eigenvalues();
  const ComplexMatrix X = es.eigenvectors();
  b = X.lu().solve(Bt.cast<Complex>()).transpose();
  c = red.C.cast<Complex>() * X;
}

/// The largest relative mismatch of the three H2 conditions over the reduced poles.
struct Mismatch {
  double right = 0, left = 0, derivative = 0;
};
Mismatch h2_conditions(const DenseTransfer& full, const DenseTransfer& red) {
  ComplexVector poles;
  ComplexMatrix b, c;
  residues(red, poles, b, c);
  Mismatch m;
  for (Index i = 0; i < poles.size(); ++i) {
    const Complex s = -poles(i);
    const ComplexMatrix G = full.G(s), Gr = red.G(s);
    const ComplexVector gb = G * b.col(i), grb = Gr * b.col(i);
    const ComplexVector cg = G.transpose() * c.col(i), cgr = Gr.transpose() * c.col(i);
    const Complex d = (c.col(i).transpose() * full.dG(s) * b.col(i)).value();
    const Complex dr = (c.col(i).transpose() * red.dG(s) * b.col(i)).value();
    m.right = std::max(m.right, (gb - grb).norm() / gb.norm());
    m.left = std::max(m.left, (cg - cgr).norm() / cg.norm());
    m.derivative = std::max(m.derivative, std::abs(d - dr) / std::abs(d));
  }
  return m;
}

DenseTransfer reduced(const IrkaResult& res) {
  return DenseTransfer(res.Er, res.Ar, res.Br, res.Cr);
}

MassSpringChain rayleigh_chain(Index N) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  p.damping = SpringDamping::rayleigh;
  p.alpha = 0.2;
  p.beta = 0.2;
  return MassSpringChain(p);
}

IrkaOptions irka_order(Index r, double tol = kShiftTol) {
  IrkaOptions o;
  o.order = r;
  o.tolerance = tol;
  o.max_iterations = 200;
  return o;
}

TEST(Irka, TangentialH2ConditionsHoldAtConvergenceMimo) {
  const DescriptorSystem sys = testing::random_descriptor(60, 2, 3, 7u);
  SparseLtiOperator op(sys);
  const IrkaResult res = irka(op, irka_order(6));
  ASSERT_EQ(res.status, IrkaStatus::converged) << res.message;
  EXPECT_LT(res.spectral_abscissa, 0.0);
  const Mismatch m = h2_conditions(DenseTransfer(op), reduced(res));
  std::cout << "IRKA r = 6 (n = 60, m = 2, p = 3), " << res.iterations << " iterations: right "
            << m.right << ", left " << m.left << ", derivative " << m.derivative << " (tolerance "
            << kInterpolationTol << ")\n";
  EXPECT_LE(m.right, kInterpolationTol);
  EXPECT_LE(m.left, kInterpolationTol);
  EXPECT_LE(m.derivative, kInterpolationTol);
  EXPECT_NEAR(shift_distance(res.shifts, res.history.back().shifts), 0.0, kShiftTol);
}

TEST(Irka, SurrogateIrkaEndsAtAFixedPointOfIrka) {
  // MF-IRKA (IrkaOptions::surrogate) chooses shifts on a surrogate of all data so far; its
  // convergence test is the ordinary one, so at convergence the H2 conditions of the full model
  // hold as for plain IRKA: on the MIMO system (real shifts) and the chain (complex pairs).
  const DescriptorSystem mimo = testing::random_descriptor(60, 2, 3, 7u);
  const SecondOrderSystem chain = rayleigh_chain(100).linear_system();
  for (int which = 0; which < 2; ++which) {
    SparseLtiOperator sparse(mimo);
    SecondOrderLtiOperator second(chain);
    LtiOperator& op = which == 0 ? static_cast<LtiOperator&>(sparse) : second;
    IrkaOptions o = irka_order(which == 0 ? 6 : 10);
    o.surrogate = true;
    const IrkaResult res = irka(op, o);
    ASSERT_EQ(res.status, IrkaStatus::converged) << res.message;
    Index surrogate_steps = 0;
    for (const IrkaIteration& h : res.history) surrogate_steps += h.surrogate_iterations > 0;
    const Mismatch m = h2_conditions(DenseTransfer(op), reduced(res));
    std::cout << (which == 0 ? "MIMO n = 60, r = 6" : "chain N = 100, r = 10")
              << ", MF-IRKA: " << res.iterations << " iterations (" << surrogate_steps
              << " shift sets from the surrogate): right " << m.right << ", left " << m.left
              << ", derivative " << m.derivative << " (tolerance " << kInterpolationTol << ")\n";
    EXPECT_GT(surrogate_steps, 0);
    EXPECT_LE(m.right, kInterpolationTol);
    EXPECT_LE(m.left, kInterpolationTol);
    EXPECT_LE(m.derivative, kInterpolationTol);
  }
}

TEST(Irka, ComplexShiftPairsOfTheChainInRealArithmetic) {
  const MassSpringChain chain = rayleigh_chain(30);
  const SecondOrderSystem so = chain.linear_system();
  SecondOrderLtiOperator op(so);
  const IrkaResult res = irka(op, irka_order(6));
  ASSERT_EQ(res.status, IrkaStatus::converged) << res.message;
  bool complex_pair = false;
  for (Complex s : res.shifts) complex_pair |= s.imag() != 0.0;
  EXPECT_TRUE(complex_pair) << "the chain's reduced poles are expected to be complex";
  const Mismatch m = h2_conditions(DenseTransfer(op), reduced(res));
  EXPECT_LE(m.right, kInterpolationTol);
  EXPECT_LE(m.left, kInterpolationTol);
  EXPECT_LE(m.derivative, kInterpolationTol);
}

/// ||G - c / (s - l)||_H2^2 minimized over c for a SISO G and real l < 0:
///   ||G||^2 - 2 c G(-l) + c^2 / (-2 l)  is least at c = -2 l G(-l), where it is
///   ||G||^2 + 2 l G(-l)^2.
TEST(Irka, FindsTheH2OptimalFirstOrderApproximation) {
  // G(s) = sum_k c_k / (s + a_k): real poles, positive residues.
  const Vector a = (Vector(5) << 0.5, 1.0, 3.0, 7.0, 20.0).finished();
  const Vector c = (Vector(5) << 1.0, 0.6, 2.0, 0.3, 5.0).finished();
  const Index n = a.size();
  const Matrix A = Matrix((-a).asDiagonal());
  DenseLtiOperator op(Matrix(), A, Matrix::Ones(n, 1), c.transpose());
  const double h2 = h2_norm_dense(op);
  auto G = [&](double s) { return (c.array() / (s + a.array())).sum(); };
  auto J = [&](double l) { return h2 * h2 + 2.0 * l * G(-l) * G(-l); };
  // Independent reference: a log grid over l in [-1e3, -1e-3], then golden sections.
  double best = -1.0;
  for (double e = -3.0; e <= 3.0; e += 1e-3) {
    const double l = -std::pow(10.0, e);
    if (J(l) < J(best)) best = l;
  }
  double lo = best * 1.01, hi = best / 1.01;  // l < 0: lo < best < hi
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int k = 0; k < 200; ++k) {
    const double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    (J(x1) < J(x2) ? hi : lo) = J(x1) < J(x2) ? x2 : x1;
  }
  const double l_opt = 0.5 * (lo + hi);
  const double err_opt = std::sqrt(J(l_opt));

  const IrkaResult res = irka(op, irka_order(1, 1e-12));
  ASSERT_EQ(res.status, IrkaStatus::converged) << res.message;
  const double l_irka = res.Ar(0, 0) / res.Er(0, 0);
  DenseLtiOperator red(res.Er, res.Ar, res.Br, res.Cr);
  ErrorLtiOperator err(op, red);
  const double err_irka = h2_norm_dense(err);
  std::cout << "r = 1: optimal pole " << l_opt << ", IRKA " << l_irka << "; H2 error " << err_opt
            << " against " << err_irka << "\n";
  // The minimum is flat: the pole is located to about sqrt(eps) by the golden search.
  constexpr double kPoleTol = 1e-6;
  constexpr double kErrorTol = 1e-9;
  EXPECT_TRUE(scalars_near(l_irka, l_opt, kPoleTol, testing::Compare::relative));
  EXPECT_TRUE(scalars_near(err_irka, err_opt, kErrorTol, testing::Compare::relative));
}

TEST(Irka, H2ErrorNoWorseThanBalancedTruncationOnTheWellDampedChain) {
  const MassSpringChain chain = rayleigh_chain(100);
  const SecondOrderSystem so = chain.linear_system();
  SecondOrderLtiOperator op(so);
  const double h2 = h2_norm_dense(op);
  // A local H2 optimum may lie a little above BT (which is not H2-optimal but close): the
  // margin allowed.
  constexpr double kH2Margin = 1e-2;
  for (Index r : {6, 10}) {
    IrkaOptions o = irka_order(r, 1e-8);
    o.full_h2_norm = h2;
    const IrkaResult res = irka(op, o);
    ASSERT_EQ(res.status, IrkaStatus::converged) << res.message;
    DenseLtiOperator red(res.Er, res.Ar, res.Br, res.Cr);
    ErrorLtiOperator err(op, red);
    const double e_irka = h2_norm_dense(err) / h2;
    BtOptions bo;
    bo.selection.order = r;
    bo.gramians.method = GramianMethod::dense;
    const BtResult bt = balanced_truncation(op, bo);
    DenseLtiOperator bred(bt.Er, bt.Ar, bt.Br, bt.Cr);
    ErrorLtiOperator berr(op, bred);
    const double e_bt = h2_norm_dense(berr) / h2;
    std::cout << "chain N = 100 (Rayleigh), r = " << r << ": relative H2 error IRKA " << e_irka
              << " (" << res.iterations << " iterations, estimate "
              << res.history.back().h2_error / h2 << "), BT " << e_bt << "\n";
    EXPECT_LE(e_irka, e_bt * (1.0 + kH2Margin));
    // The history's estimate of the last-but-one model is close to the final error.
    EXPECT_TRUE(
        scalars_near(res.history.back().h2_error / h2, e_irka, 1e-3, testing::Compare::relative));
  }
}

/// A lightly damped structure of the kind of issue 44's ISS model: `modes` modes with
/// frequencies log-uniform in [1, 100] rad/s and damping ratio zeta, 3 force inputs and 3
/// displacement outputs with seeded Gaussian participation factors, x = (q_k, q_k') per mode,
/// hidden by a seeded random orthogonal change of coordinates (the model is dense, its modal
/// form unknown to IRKA). G(s) = sum_k c_k b_k^T / (s^2 + 2 zeta w_k s + w_k^2).
DenseLtiOperator lightly_damped_structure(Index modes, double zeta, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(std::log(1.0), std::log(100.0));
  const Index n = 2 * modes, m = 3, p = 3;
  Matrix A = Matrix::Zero(n, n), B = Matrix::Zero(n, m), C = Matrix::Zero(p, n);
  const Matrix bk = testing::random_normal(modes, m, gen),
               ck = testing::random_normal(p, modes, gen);
  for (Index k = 0; k < modes; ++k) {
    const double w = std::exp(u(gen));
    A(2 * k, 2 * k + 1) = 1.0;
    A(2 * k + 1, 2 * k) = -w * w;
    A(2 * k + 1, 2 * k + 1) = -2.0 * zeta * w;
    B.row(2 * k + 1) = bk.row(k);
    C.col(2 * k) = ck.col(k);
  }
  const Matrix Q = testing::random_normal(n, n, gen).householderQr().householderQ();
  return DenseLtiOperator(Matrix::Identity(n, n), Q * A * Q.transpose(), Q * B, C * Q.transpose());
}

/// Issue 44's bar: on a lightly damped model (damping ratio 1e-3) IRKA's H2 error at r = 10,
/// 14, 20 is at most kBtRatioBar times BT's at the same order. From the Ritz start alone it
/// lands in fixed points 1.2 to 1.5x BT's (printed); with BT's model as the comparison it
/// restarts from BT's mirrored poles. Errors here are the dense H2 norms of the error systems,
/// not the pole-residue formula IRKA decides with.
TEST(Irka, OnALightlyDampedModelNoWorseThanBtWithTheComparison) {
  constexpr double kBtRatioBar = 1.05;
  DenseLtiOperator op = lightly_damped_structure(100, 1e-3, 44);
  const double h2 = h2_norm_dense(op);
  auto error_of = [&](const Matrix& Er, const Matrix& Ar, const Matrix& Br, const Matrix& Cr) {
    DenseLtiOperator red(Er, Ar, Br, Cr);
    ErrorLtiOperator err(op, red);
    return h2_norm_dense(err) / h2;
  };
  for (Index r : {10, 14, 20}) {
    BtOptions bo;
    bo.selection.order = r;
    bo.gramians.method = GramianMethod::dense;
    const BtResult bt = balanced_truncation(op, bo);
    const double e_bt = error_of(bt.Er, bt.Ar, bt.Br, bt.Cr);
    IrkaOptions o = irka_order(r, 1e-4);
    o.full_h2_norm = h2;
    const IrkaResult alone = irka(op, o);
    const double e_alone = error_of(alone.Er, alone.Ar, alone.Br, alone.Cr);
    o.comparison_Er = bt.Er;
    o.comparison_Ar = bt.Ar;
    o.comparison_Br = bt.Br;
    o.comparison_Cr = bt.Cr;
    const IrkaResult res = irka(op, o);
    const double e_irka = error_of(res.Er, res.Ar, res.Br, res.Cr);
    std::cout << "lightly damped, n = " << op.n() << ", r = " << r << ": relative H2 error BT "
              << e_bt << ", IRKA alone " << e_alone << " (" << alone.iterations
              << " iterations), with the comparison " << e_irka << " (ratio " << e_irka / e_bt
              << ", runs " << res.runs << ", " << res.total_iterations
              << " iterations): " << res.message << "\n";
    EXPECT_LE(e_irka, kBtRatioBar * e_bt)
        << "r = " << r << ": IRKA " << e_irka << " against BT " << e_bt << ": " << res.message;
    EXPECT_NE(res.status, IrkaStatus::unstable) << res.message;
    // The errors IRKA decided with (pole-residue formula) agree with the dense ones.
    constexpr double kFormulaTol = 1e-6;
    EXPECT_TRUE(scalars_near(res.h2_error / h2, e_irka, kFormulaTol, testing::Compare::relative));
    EXPECT_TRUE(
        scalars_near(res.comparison_h2_error / h2, e_bt, kFormulaTol, testing::Compare::relative));
    // A result above the bar would say so with its ratio.
    if (e_irka > kBtRatioBar * e_bt) {
      EXPECT_NE(res.message.find("x BT's at this order"), std::string::npos) << res.message;
    }
  }
}

/// An unusable comparison (here unstable: no finite H2 error) leaves IRKA alone, with the same
/// model as without one, and the message says why there is no ratio; a comparison of the wrong
/// order is bad input.
TEST(Irka, AnUnstableComparisonIsNotUsed) {
  const DescriptorSystem sys = testing::random_descriptor(60, 2, 3, 7u);
  SparseLtiOperator op(sys);
  IrkaOptions o = irka_order(6, 1e-8);
  o.full_h2_norm = h2_norm_dense(op);
  const IrkaResult alone = irka(op, o);
  o.comparison_Er = Matrix::Identity(6, 6);
  o.comparison_Ar = Matrix::Identity(6, 6);  // poles at +1
  o.comparison_Br = Matrix::Ones(6, 2);
  o.comparison_Cr = Matrix::Ones(3, 6);
  const IrkaResult res = irka(op, o);
  EXPECT_EQ(res.status, alone.status) << res.message;
  EXPECT_EQ(res.runs, 1);
  EXPECT_EQ((res.Ar - alone.Ar).norm(), 0.0);
  EXPECT_NE(res.message.find("no comparison with BT's model"), std::string::npos) << res.message;
  o.comparison_Ar = Matrix::Identity(5, 5);
  EXPECT_NE(invalid_argument_message([&] { irka(op, o); }).find("comparison model"),
            std::string::npos);
}

TEST(SecondOrderIrka, KeepsTheStructureInterpolatesAndIsStable) {
  const MassSpringChain chain = rayleigh_chain(60);
  const SecondOrderSystem so = chain.linear_system();
  SecondOrderLtiOperator op(so);
  const double h2 = h2_norm_dense(op);
  for (SoIrkaProjection proj : {SoIrkaProjection::two_sided, SoIrkaProjection::galerkin}) {
    SoIrkaOptions o;
    o.order = 6;
    o.tolerance = 1e-8;
    o.max_iterations = 30;
    o.projection = proj;
    const SoIrkaResult res = second_order_irka(so, o);
    std::ostringstream trace;
    for (std::size_t i = 0; i < res.history.size(); ++i)
      trace << "\n  iteration " << i + 1 << ": shift change " << res.history[i].shift_change
            << ", inner IRKA iterations " << res.inner_iterations[i];
    // On this chain the shift set of SOR-IRKA keeps moving (the inner IRKA of each 2r-state
    // model lands in a different local optimum): the status must say so, and the model must
    // still be the structured interpolant of the shifts that built it.
    EXPECT_NE(res.status, IrkaStatus::unstable) << res.message << trace.str();
    if (res.status == IrkaStatus::max_iterations) {
      EXPECT_NE(res.message.find("not converged: max_iterations = 30"), std::string::npos)
          << res.message;
      EXPECT_GT(res.history.back().shift_change, o.tolerance);
    }
    EXPECT_EQ(res.iterations, static_cast<Index>(res.history.size()));
    ASSERT_GE(res.returned_iteration, 1);
    ASSERT_LE(res.returned_iteration, res.iterations);
    const DenseSecondOrderSystem& s = res.reduced;
    ASSERT_EQ(s.M.rows(), 6);
    // Interpolation at the shifts that built the final model (exact by construction, whether
    // converged or not), checked on dense transfer functions. The chain is SISO and collocated
    // (B = Cp^T, S(s) symmetric), so W spans V and both projections interpolate with
    // derivatives.
    DenseLtiOperator red = to_first_order(s);
    const DenseTransfer full_t(op), red_t(dense_E(red), dense_A(red), red.B(), red.C());
    double worst = 0, worst_d = 0;
    for (Complex sigma : res.history[static_cast<std::size_t>(res.returned_iteration - 1)].shifts) {
      const ComplexMatrix G = full_t.G(sigma), Gr = red_t.G(sigma);
      worst = std::max(worst, (G - Gr).norm() / G.norm());
      const ComplexMatrix d = full_t.dG(sigma), dr = red_t.dG(sigma);
      worst_d = std::max(worst_d, (d - dr).norm() / d.norm());
    }
    ErrorLtiOperator err(op, red);
    const double e = h2_norm_dense(err) / h2;
    std::cout << "SOR-IRKA (" << to_string(proj) << ") r = 6, N = 60: " << res.iterations
              << " iterations, interpolation " << worst << ", derivative " << worst_d
              << ", relative H2 error " << e << ", abscissa " << res.spectral_abscissa << "\n";
    // Interpolation by projection holds to the rounding of the solves and of the reduced
    // model's solves (cond ~ 1e4 here).
    constexpr double kProjectionInterpolationTol = 1e-8;
    EXPECT_LE(worst, kProjectionInterpolationTol);
    EXPECT_LE(worst_d, kProjectionInterpolationTol);
    EXPECT_LT(res.spectral_abscissa, 0.0);
    if (proj == SoIrkaProjection::galerkin) {
      // W = V keeps M_r, D_r, K_r symmetric positive definite.
      for (const Matrix* X : {&s.M, &s.D, &s.K}) {
        EXPECT_LE((*X - X->transpose()).norm(), 1e-12 * X->norm());
        EXPECT_GT(Eigen::SelfAdjointEigenSolver<Matrix>(*X).eigenvalues().minCoeff(), 0.0);
      }
    }
  }
}

// SOR-IRKA on the Rayleigh-damped chain cycles (docs/methods/irka.md): the cycle is detected
// within a few periods, said in the status and message, and the iterate of the smallest shift
// change is returned, still the exact structured interpolant of the shifts that built it. With
// detection off the same run goes on to max_iterations; a converging run is not stopped.
TEST(SecondOrderIrka, DetectsACycleAndReturnsTheBestIterate) {
  const MassSpringChain chain = rayleigh_chain(100);
  const SecondOrderSystem so = chain.linear_system();
  SoIrkaOptions o;
  o.order = 10;
  o.max_iterations = 40;
  const SoIrkaResult res = second_order_irka(so, o);
  std::ostringstream trace;
  for (std::size_t i = 0; i < res.history.size(); ++i)
    trace << "\n  iteration " << i + 1 << ": shift change " << res.history[i].shift_change;
  std::cout << "SOR-IRKA N = 100, r = 10: " << res.message << trace.str() << "\n";
  ASSERT_EQ(res.status, IrkaStatus::cycling) << res.message << trace.str();
  EXPECT_LT(res.iterations, o.max_iterations);
  EXPECT_GE(res.cycle_period, 2);
  EXPECT_NE(res.message.find("cycles with period"), std::string::npos) << res.message;
  // The returned iterate is the one of the smallest shift change.
  double smallest = std::numeric_limits<double>::infinity();
  for (const IrkaIteration& h : res.history) smallest = std::min(smallest, h.shift_change);
  const IrkaIteration& kept = res.history[static_cast<std::size_t>(res.returned_iteration - 1)];
  EXPECT_EQ(kept.shift_change, smallest);
  EXPECT_LT(res.spectral_abscissa, 0.0);
  // ... and it interpolates at the shifts that built it (SISO, collocated: W spans V).
  SecondOrderLtiOperator op(so);
  DenseLtiOperator red = to_first_order(res.reduced);
  const DenseTransfer full_t(op), red_t(dense_E(red), dense_A(red), red.B(), red.C());
  double worst = 0;
  for (Complex sigma : kept.shifts)
    worst = std::max(worst, (full_t.G(sigma) - red_t.G(sigma)).norm() / full_t.G(sigma).norm());
  constexpr double kProjectionInterpolationTol = 1e-8;  // as in the test above
  EXPECT_LE(worst, kProjectionInterpolationTol);

  SoIrkaOptions off = o;
  off.cycle_ratio = 0.0;
  off.max_iterations = 12;
  const SoIrkaResult plain = second_order_irka(so, off);
  EXPECT_EQ(plain.status, IrkaStatus::max_iterations) << plain.message;
  EXPECT_EQ(plain.iterations, 12);
}

constexpr Index kConvergingOrder = 2;

TEST(SecondOrderIrka, ConvergingRunIsNotTakenForACycle) {
  // Galerkin SOR-IRKA of a lightly reduced Rayleigh chain converges (shift change below the
  // tolerance): with and without cycle detection the same iterations and status.
  const MassSpringChain chain = rayleigh_chain(60);
  const SecondOrderSystem so = chain.linear_system();
  SoIrkaOptions o;
  o.order = kConvergingOrder;
  o.tolerance = 1e-6;
  o.max_iterations = 60;
  o.projection = SoIrkaProjection::galerkin;
  const SoIrkaResult res = second_order_irka(so, o);
  std::ostringstream trace;
  for (std::size_t i = 0; i < res.history.size(); ++i)
    trace << "\n  iteration " << i + 1 << ": shift change " << res.history[i].shift_change;
  ASSERT_EQ(res.status, IrkaStatus::converged) << res.message << trace.str();
  SoIrkaOptions off = o;
  off.cycle_ratio = 0.0;
  const SoIrkaResult plain = second_order_irka(so, off);
  EXPECT_EQ(plain.status, IrkaStatus::converged) << plain.message;
  EXPECT_EQ(plain.iterations, res.iterations);
  EXPECT_EQ(res.returned_iteration, res.iterations);
}

// The process-wide stop request (SIGINT in `mor run`, Ctrl-C in Python) stops IRKA and SOR-IRKA
// although their options hand no flag down.
TEST(Irka, StopsOnTheProcessWideStopRequest) {
  const MassSpringChain chain = rayleigh_chain(200);
  const SecondOrderSystem so = chain.linear_system();
  SecondOrderLtiOperator op(so);
  g_stop_requested.store(true);
  EXPECT_THROW(irka(op, irka_order(6)), Interrupted);
  SoIrkaOptions o;
  o.order = 4;
  EXPECT_THROW(second_order_irka(so, o), Interrupted);
  g_stop_requested.store(false);
  // A flag of the options alone, set from another thread mid-run, stops it within iterations.
  std::atomic<bool> stop{false};
  IrkaOptions io = irka_order(6, 1e-300);
  io.max_iterations = 1000000;
  io.stop_requested = &stop;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(irka(op, io), Interrupted);
  setter.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LE(s, 5.0) << "IRKA took " << s << " s to stop";
}

TEST(Irka, TheH2CriterionStopsOnTheModelNotOnItsShifts) {
  const MassSpringChain chain = rayleigh_chain(100);
  const SecondOrderSystem so = chain.linear_system();
  SecondOrderLtiOperator op(so);
  IrkaOptions by_shifts = irka_order(10, 1e-4), by_h2 = by_shifts;
  by_h2.criterion = IrkaCriterion::h2;
  const IrkaResult a = irka(op, by_shifts), b = irka(op, by_h2);
  ASSERT_EQ(a.status, IrkaStatus::converged) << a.message;
  ASSERT_EQ(b.status, IrkaStatus::converged) << b.message;
  // The recorded model change is the H2 distance of the last two models, recomputed here.
  EXPECT_LE(b.history.back().model_change, 1e-4);
  EXPECT_LE(b.iterations, a.iterations);
  DenseLtiOperator ra(a.Er, a.Ar, a.Br, a.Cr), rb(b.Er, b.Ar, b.Br, b.Cr);
  ErrorLtiOperator diff(rb, ra);
  const double distance = h2_norm_dense(diff) / h2_norm_dense(ra);
  std::cout << "chain N = 100, r = 10: " << a.iterations << " iterations (shifts), " << b.iterations
            << " (h2); relative H2 distance of the two models " << distance << "\n";
  // Stopping when consecutive models agree to 1e-4 leaves the model within this of the one at
  // the shift tolerance.
  constexpr double kEarlyStopTol = 1e-3;
  EXPECT_LE(distance, kEarlyStopTol);
}

TEST(Irka, ReturnedBasesAreOrthonormalAndProjectTheReducedModel) {
  // The iterations work on the Loewner pencil of unit-column bases; the returned V and W are
  // orthonormalized and the model projected once at the end. Both properties are checked
  // against products formed here: V^T V = I, W^T W = I, and the reduced matrices are the
  // projections W^T E V, W^T A V, W^T B, C V.
  constexpr double kOrthonormalTol = 1e-12;  // max |entry| of V^T V - I
  constexpr double kProjectionTol = 1e-11;   // max |difference| / max |entry|
  const DescriptorSystem random = testing::random_descriptor(60, 2, 3, 7u);
  SparseLtiOperator random_op(random);
  const SecondOrderSystem chain = rayleigh_chain(100).linear_system();
  SecondOrderLtiOperator chain_op(chain);
  for (LtiOperator* op :
       {static_cast<LtiOperator*>(&random_op), static_cast<LtiOperator*>(&chain_op)}) {
    const IrkaResult res = irka(*op, irka_order(op == &random_op ? 6 : 10, 1e-4));
    ASSERT_EQ(res.status, IrkaStatus::converged) << res.message;
    const Index r = res.r;
    const Matrix I = Matrix::Identity(r, r);
    const double v_orth = (res.V.transpose() * res.V - I).cwiseAbs().maxCoeff();
    const double w_orth = (res.W.transpose() * res.W - I).cwiseAbs().maxCoeff();
    EXPECT_LE(v_orth, kOrthonormalTol) << "n = " << op->n();
    EXPECT_LE(w_orth, kOrthonormalTol) << "n = " << op->n();
    const auto rel = [](const Matrix& X, const Matrix& ref) {
      return (X - ref).cwiseAbs().maxCoeff() / ref.cwiseAbs().maxCoeff();
    };
    const Matrix Er = res.W.transpose() * dense_E(*op) * res.V;
    const Matrix Ar = res.W.transpose() * dense_A(*op) * res.V;
    EXPECT_LE(rel(res.Er, Er), kProjectionTol) << "E_r, n = " << op->n();
    EXPECT_LE(rel(res.Ar, Ar), kProjectionTol) << "A_r, n = " << op->n();
    EXPECT_LE(rel(res.Br, res.W.transpose() * op->B()), kProjectionTol) << "B_r, n = " << op->n();
    EXPECT_LE(rel(res.Cr, op->C() * res.V), kProjectionTol) << "C_r, n = " << op->n();
  }
}

/// max |X - ref| / max |ref|.
double max_relative(const Matrix& X, const Matrix& ref) {
  return (X - ref).cwiseAbs().maxCoeff() / ref.cwiseAbs().maxCoeff();
}

TEST(Irka, LoewnerPencilEqualsTheProjectionOfTheSameBases) {
  // The iteration's E_r, A_r, B_r, C_r from the Loewner form (divided differences of the
  // solves' outputs, products only for diagonal blocks and close shifts) against W^T E V,
  // W^T A V, W^T B, C V of the same (unit-column, not orthonormal) bases, formed here with the
  // dense E and A. They differ by the rounding of the solves and the divided differences.
  constexpr double kLoewnerTol = 1e-12;  // max |difference| / max |entry|
  const DescriptorSystem random = testing::random_descriptor(60, 2, 3, 7u);
  SparseLtiOperator random_op(random);
  const SecondOrderSystem chain = rayleigh_chain(100).linear_system();
  SecondOrderLtiOperator chain_op(chain);
  // The random system: real shifts, one pair, and two shifts 2.5e-4 apart (their blocks are
  // formed by products), random directions (a pair's second column the conjugate).
  std::mt19937 gen(5u);
  std::normal_distribution<double> normal;
  const std::vector<Complex> random_shifts = {0.5, 2.0, 2.0005, {1.0, 3.0}, {1.0, -3.0}, 5.0};
  ComplexMatrix rb(2, 6), rc(3, 6);
  for (Index j = 0; j < 6; ++j) {
    for (Index i = 0; i < 2; ++i) rb(i, j) = Complex(normal(gen), j == 3 ? normal(gen) : 0.0);
    for (Index i = 0; i < 3; ++i) rc(i, j) = Complex(normal(gen), j == 3 ? normal(gen) : 0.0);
  }
  rb.col(4) = rb.col(3).conjugate();
  rc.col(4) = rc.col(3).conjugate();
  // The chain: the shifts and directions of a converged IRKA (complex pairs and real shifts
  // over four decades).
  const IrkaResult chain_res = irka(chain_op, irka_order(10, 1e-4));
  ASSERT_EQ(chain_res.status, IrkaStatus::converged) << chain_res.message;
  struct Case {
    LtiOperator* op;
    std::vector<Complex> shifts;
    ComplexMatrix b, c;
  };
  for (const Case& k : {Case{&random_op, random_shifts, rb, rc},
                        Case{&chain_op, chain_res.shifts, chain_res.b, chain_res.c}}) {
    const detail::IrkaLoewnerPencil L = detail::irka_loewner_pencil(*k.op, k.shifts, k.b, k.c);
    const Matrix Er = L.W.transpose() * dense_E(*k.op) * L.V;
    const Matrix Ar = L.W.transpose() * dense_A(*k.op) * L.V;
    const double e = max_relative(L.Er, Er), a = max_relative(L.Ar, Ar);
    const double b = max_relative(L.Br, L.W.transpose() * k.op->B());
    const double c = max_relative(L.Cr, k.op->C() * L.V);
    std::cout << "Loewner form against the products, n = " << k.op->n() << ", r = " << Er.rows()
              << " (" << L.product_blocks << " blocks by products): E_r " << e << ", A_r " << a
              << ", B_r " << b << ", C_r " << c << " (tolerance " << kLoewnerTol << ")\n";
    EXPECT_LE(e, kLoewnerTol) << "E_r\n" << L.Er << "\nW^T E V\n" << Er;
    EXPECT_LE(a, kLoewnerTol) << "A_r\n" << L.Ar << "\nW^T A V\n" << Ar;
    EXPECT_LE(b, kLoewnerTol);
    EXPECT_LE(c, kLoewnerTol);
  }
}

TEST(Irka, LoewnerIterationsFollowTheProjectedOnes) {
  // The same chain and tolerance with the poles of every iteration from the Loewner pencil and
  // from the projection onto orthonormal bases: the same number of iterations and the same
  // model (both returned models are projections) to within what the shift tolerance leaves.
  const SecondOrderSystem chain = rayleigh_chain(100).linear_system();
  SecondOrderLtiOperator op(chain);
  IrkaOptions o = irka_order(10, 1e-8);
  o.surrogate = false;  // plain IRKA: the share of pencil iterations below is its own
  const IrkaResult a = irka(op, o);
  o.loewner = false;
  const IrkaResult b = irka(op, o);
  ASSERT_EQ(a.status, IrkaStatus::converged) << a.message;
  ASSERT_EQ(b.status, IrkaStatus::converged) << b.message;
  // The pencil resolves the shift changes of the first iterations; near the tolerance (changes
  // below about 1e-5 here) the iterations take the projection.
  EXPECT_GE(2 * a.loewner_iterations, a.iterations);
  EXPECT_LT(a.loewner_iterations, a.iterations);
  EXPECT_EQ(b.loewner_iterations, 0);
  DenseLtiOperator ra(a.Er, a.Ar, a.Br, a.Cr), rb(b.Er, b.Ar, b.Br, b.Cr);
  ErrorLtiOperator diff(ra, rb);
  const double distance = h2_norm_dense(diff) / h2_norm_dense(rb);
  std::cout << "chain N = 100, r = 10, shift tolerance 1e-8: Loewner " << a.iterations
            << " iterations (" << a.loewner_iterations << " on the pencil), projected "
            << b.iterations << "; relative H2 distance " << distance << "\n";
  constexpr double kSameModelTol = 1e-8;
  EXPECT_LE(distance, kSameModelTol);
  EXPECT_LE(std::abs(a.iterations - b.iterations), 1);
}

TEST(Irka, TwoSolveThreadsGiveTheModelOfOne) {
  // Each point is solved with the same factorization code whichever thread (and operator
  // copy) takes it, so the columns, and everything after them, are the same.
  const SecondOrderSystem chain = rayleigh_chain(5000).linear_system();
  SecondOrderLtiOperator op(chain);
  IrkaOptions o = irka_order(10, 1e-4);
  o.criterion = IrkaCriterion::h2;
  o.solve_threads = 1;
  const IrkaResult one = irka(op, o);
  o.solve_threads = 2;
  const IrkaResult two = irka(op, o);
  ASSERT_EQ(one.status, IrkaStatus::converged) << one.message;
  ASSERT_EQ(two.status, IrkaStatus::converged) << two.message;
  constexpr double kThreadTol = 1e-14;  // max |difference| / max |entry|
  EXPECT_EQ(one.iterations, two.iterations);
  const double e = max_relative(two.Er, one.Er), a = max_relative(two.Ar, one.Ar);
  const double v = max_relative(two.V, one.V), w = max_relative(two.W, one.W);
  std::cout << "chain N = 5000, r = 10, one against two threads: " << one.iterations << " and "
            << two.iterations << " iterations; E_r " << e << ", A_r " << a << ", V " << v << ", W "
            << w << "\n";
  EXPECT_LE(e, kThreadTol);
  EXPECT_LE(a, kThreadTol);
  EXPECT_LE(v, kThreadTol);
  EXPECT_LE(w, kThreadTol);
  // The same with the sparse descriptor operator's copy (KLU for the complex shifts).
  const DescriptorSystem random = testing::random_descriptor(60, 2, 3, 7u);
  SparseLtiOperator random_op(random);
  IrkaOptions ro = irka_order(6, 1e-8);
  ro.solve_threads = 1;
  const IrkaResult r1 = irka(random_op, ro);
  ro.solve_threads = 2;
  const IrkaResult r2 = irka(random_op, ro);
  ASSERT_EQ(r1.status, IrkaStatus::converged) << r1.message;
  EXPECT_EQ(r1.iterations, r2.iterations);
  EXPECT_LE(max_relative(r2.Er, r1.Er), kThreadTol);
  EXPECT_LE(max_relative(r2.Ar, r1.Ar), kThreadTol);
}

TEST(Irka, NonConvergenceWithinTheLimitIsAStatus) {
  const DescriptorSystem sys = testing::random_descriptor(40, 2, 2, 11u);
  SparseLtiOperator op(sys);
  IrkaOptions o = irka_order(6, 1e-15);
  o.max_iterations = 2;
  const IrkaResult res = irka(op, o);
  EXPECT_EQ(res.status, IrkaStatus::max_iterations);
  EXPECT_EQ(res.iterations, 2);
  EXPECT_NE(res.message.find("not converged: max_iterations = 2"), std::string::npos)
      << res.message;
  EXPECT_GT(res.history.back().shift_change, 1e-15);
}

TEST(Irka, BadInputIsRejected) {
  const DescriptorSystem sys = testing::random_descriptor(20, 1, 1, 3u);
  SparseLtiOperator op(sys);
  EXPECT_NE(invalid_argument_message([&] { irka(op, irka_order(0)); }).find("got 0"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { irka(op, irka_order(21)); }).find("got 21"),
            std::string::npos);
  IrkaOptions o = irka_order(2);
  o.initial = IrkaInitialShifts::given;
  o.shifts = {Complex(1.0, 2.0), Complex(1.0, 3.0)};
  EXPECT_NE(invalid_argument_message([&] { irka(op, o); }).find("no conjugate"), std::string::npos);
  o.shifts = {Complex(-1.0, 0.0), Complex(2.0, 0.0)};
  EXPECT_NE(invalid_argument_message([&] { irka(op, o); }).find("-1"), std::string::npos);
  o.shifts = {Complex(1.0, 0.0)};
  EXPECT_NE(invalid_argument_message([&] { irka(op, o); }).find("1 initial shifts"),
            std::string::npos);
  o = irka_order(2);
  o.tolerance = 0.0;
  EXPECT_NE(invalid_argument_message([&] { irka(op, o); }).find("tolerance"), std::string::npos);
}

/// The runner: a run that does not converge within reduction.max_iterations fails with the
/// status (exit 3, nothing written) unless allow_unconverged, which records it; a converged run
/// records its history.
class IrkaRun : public testing::MorCliTest {
 protected:
  void write_experiment(const std::string& extra) const {
    std::ofstream f(dir_ / "irka.toml");
    f << "[experiment]\nname = \"irka\"\noutput = \"irka.h5\"\n"
         "[model]\ntype = \"mass_spring_chain\"\nN = 40\nk_n = 0.0\ndamping = \"rayleigh\"\n"
         "alpha = 0.2\nbeta = 0.2\n"
         "[input]\ntype = \"step\"\namplitude = 1.0\n"
         "[simulation]\nintegrator = \"implicit_midpoint\"\ndt = 0.1\nt_end = 2.0\n"
         "[reduction]\nmethod = \"irka\"\norder = 6\n"
      << extra;
  }
};

TEST_F(IrkaRun, NonConvergenceIsAnErrorUnlessAllowedThenRecorded) {
  write_experiment("max_iterations = 2\ntolerance = 1e-14\n");
  const testing::Outcome refused = mor("run irka.toml");
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  // Two iterations from the Ritz shifts: not converged (and here the iterate is not yet
  // stable either); the message names the status the run would record.
  testing::expect_contains(refused, "reduction.method = \"irka\": ");
  testing::expect_contains(refused, "reduction.allow_unconverged = true keeps the model");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "irka.h5"));

  write_experiment("max_iterations = 2\ntolerance = 1e-14\nallow_unconverged = true\n");
  const testing::Outcome kept = mor("run irka.toml");
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  io::ResultsReader r(dir_ / "irka.h5");
  const std::string status = r.attribute_string("/reduction", "status");
  EXPECT_NE(status, "converged");
  // (the status's name; here max_iterations: the restart from BT's poles, which the first
  // run's unstable iterate triggers, gives a stable model)
  testing::expect_contains(refused, status);
  EXPECT_EQ(r.read_vector("/reduction/history/shift_change").size(), 2);
}

TEST_F(IrkaRun, ConvergedRunRecordsItsHistory) {
  write_experiment("tolerance = 1e-8\n");
  const testing::Outcome run = mor("run irka.toml");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  io::ResultsReader r(dir_ / "irka.h5");
  EXPECT_EQ(r.attribute_string("/reduction", "status"), "converged");
  const Vector change = r.read_vector("/reduction/history/shift_change");
  const Vector h2 = r.read_vector("/reduction/history/h2_error");
  ASSERT_EQ(change.size(), r.attribute_int("/reduction", "iterations"));
  EXPECT_LE(change(change.size() - 1), 1e-8);
  EXPECT_EQ(r.read_matrix("/reduction/history/shifts_re").cols(), 6);
  // MF-IRKA (the default): the surrogate's order after iteration i is at most r i (r points
  // of data per iteration), at least r where IRKA on it gave the next shifts, and 0 where it was
  // not built; the last iteration, converged, takes no shifts from it; an earlier one did.
  const Vector s_order = r.read_vector("/reduction/history/surrogate_order");
  const Vector s_iterations = r.read_vector("/reduction/history/surrogate_iterations");
  ASSERT_EQ(s_order.size(), change.size());
  ASSERT_EQ(s_iterations.size(), change.size());
  for (Index i = 0; i < s_order.size(); ++i) {
    EXPECT_GE(s_order(i), 0) << "iteration " << i + 1;
    EXPECT_LE(s_order(i), 6.0 * static_cast<double>(i + 1)) << "iteration " << i + 1;
    if (s_iterations(i) > 0) {
      EXPECT_GE(s_order(i), 6) << "iteration " << i + 1;
    }
  }
  EXPECT_EQ(s_iterations(s_iterations.size() - 1), 0);
  EXPECT_GT(s_iterations.maxCoeff(), 0);
  // The last estimate (of the last-but-one model) against the analysis' dense H2 error.
  const double h2_full = r.attribute_double("/reduction", "h2_norm_full");
  const double rel = r.attribute_double("/analysis", "h2_error_relative");
  EXPECT_TRUE(scalars_near(h2(h2.size() - 1) / h2_full, rel, 1e-3, testing::Compare::relative));
}

/// With a model below reduction.bt_comparison_limit states, BT's model of the same order is the
/// comparison: both relative H2 errors and their ratio are recorded in /reduction, and the
/// recorded IRKA error is the analysis' (dense) one; bt_comparison_limit = 0 records none.
TEST_F(IrkaRun, RecordsTheComparisonWithBt) {
  write_experiment("tolerance = 1e-8\n");
  const testing::Outcome run = mor("run irka.toml");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  {
    io::ResultsReader r(dir_ / "irka.h5");
    EXPECT_EQ(r.attribute_string("/reduction", "comparison"), "bt");
    const double e = r.attribute_double("/reduction", "h2_error");
    const double e_bt = r.attribute_double("/reduction", "comparison_h2_error");
    const double ratio = r.attribute_double("/reduction", "h2_error_ratio");
    EXPECT_GT(e_bt, 0.0);
    EXPECT_TRUE(scalars_near(ratio, e / e_bt, 1e-12, testing::Compare::relative));
    // the pole-residue formula against the analysis' dense H2 error (well above its noise)
    const double rel = r.attribute_double("/analysis", "h2_error_relative");
    EXPECT_TRUE(scalars_near(e, rel, 1e-5, testing::Compare::relative));
    const std::string message = r.attribute_string("/reduction", "message");
    if (ratio > 1.05)
      testing::expect_contains(testing::Outcome{0, message}, "x BT's at this order");
  }
  std::filesystem::remove(dir_ / "irka.h5");
  write_experiment("tolerance = 1e-8\nbt_comparison_limit = 0\n");
  const testing::Outcome none = mor("run irka.toml");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  io::ResultsReader r(dir_ / "irka.h5");
  EXPECT_EQ(r.attribute_string("/reduction", "comparison"), "none");
  EXPECT_TRUE(std::isnan(r.attribute_double("/reduction", "comparison_h2_error")));
}

}  // namespace
}  // namespace mor
