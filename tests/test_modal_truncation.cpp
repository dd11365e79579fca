// SPDX-License-Identifier: GPL-3.0-or-later
// Modal truncation (reduction/modal_truncation.hpp) against closed forms: the eigenfrequencies
// of the fixed-fixed spring chain, the modal expansion of a Rayleigh-damped transfer function
// (the reduced model must equal the sum of the kept modal terms), rigid-body modes kept first,
// and bad input; for first-order models with a symmetric pencil, the expansion's error bound
// (the discarded modes' static gains) and the exact reproduction at r = n.
#include "reduction/modal_truncation.hpp"

#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "src/core/errors.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

constexpr double kModeTol = 1e-12;  // relative, on omega and on transfer functions

SparseMatrix sparse(const Matrix& A) {
  return A.sparseView();
}

/// n unit masses between two walls, springs k: K = k tridiag(-1, 2, -1).
Matrix chain_stiffness(Index n, double k, bool fixed_ends = true) {
  Matrix K = Matrix::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    K(i, i) = 2.0 * k;
    if (i > 0) K(i, i - 1) = K(i - 1, i) = -k;
  }
  if (!fixed_ends) K(0, 0) = K(n - 1, n - 1) = k;  // free-free: one rigid-body mode
  return K;
}

SecondOrderSystem rayleigh_chain(Index n, double alpha, double beta, bool fixed_ends = true) {
  const Matrix M = Matrix::Identity(n, n), K = chain_stiffness(n, 3.0, fixed_ends);
  Matrix B = Matrix::Zero(n, 2), Cp = Matrix::Zero(1, n), Cv = Matrix::Zero(1, n);
  B(0, 0) = 1.0;
  B(n / 2, 1) = 0.5;
  Cp(0, n - 1) = 1.0;
  Cv(0, n / 3) = 0.25;
  return {sparse(M), sparse(alpha * M + beta * K), sparse(K), sparse(B), sparse(Cp), sparse(Cv)};
}

ComplexMatrix transfer(const Matrix& M, const Matrix& D, const Matrix& K, const Matrix& B,
                       const Matrix& Cp, const Matrix& Cv, Complex s) {
  const ComplexMatrix P = (s * s) * M.cast<Complex>() + s * D.cast<Complex>() + K.cast<Complex>();
  const ComplexMatrix X = P.partialPivLu().solve(B.cast<Complex>());
  return (Cp.cast<Complex>() + s * Cv.cast<Complex>()) * X;
}

TEST(ModalTruncation, FrequenciesOfTheFixedChainAreTheClosedForm) {
  const Index n = 12;
  const SecondOrderSystem sys = rayleigh_chain(n, 0.0, 0.0);
  ModalOptions o;
  o.order = n;
  const ModalResult res = modal_truncation(sys, o);
  for (Index j = 1; j <= n; ++j) {
    const double exact = 2.0 * std::sqrt(3.0) * std::sin(j * std::numbers::pi / (2.0 * (n + 1)));
    EXPECT_NEAR(res.omega(j - 1), exact, kModeTol * exact) << "mode " << j;
  }
  // The modes are M-orthonormal and diagonalise K.
  const Matrix M(sys.M), K(sys.K);
  EXPECT_TRUE(matrices_near(res.V.transpose() * M * res.V, Matrix::Identity(n, n), 1e-13));
  const Matrix Kr = res.V.transpose() * K * res.V;
  EXPECT_TRUE(matrices_near(Kr, Matrix(res.omega.array().square().matrix().asDiagonal()), 1e-12));
}

TEST(ModalTruncation, ReducedModelIsTheSumOfTheKeptModalTerms) {
  // With Rayleigh damping the modes decouple, so G(s) = sum_i c_i b_i^T / (s^2 + (a + b w_i^2) s
  // + w_i^2), and the reduced model must be exactly the kept part of that sum.
  const Index n = 10;
  const double alpha = 0.05, beta = 0.02;
  const SecondOrderSystem sys = rayleigh_chain(n, alpha, beta);
  for (auto selection : {ModalSelection::dominance, ModalSelection::lowest_frequency}) {
    ModalOptions o;
    o.order = 4;
    o.selection = selection;
    const ModalResult res = modal_truncation(sys, o);
    ASSERT_EQ(res.r, 4);
    ModalOptions all;
    all.order = n;
    const ModalResult full = modal_truncation(sys, all);
    const Matrix B(sys.B), Cp(sys.Cp), Cv(sys.Cv);
    for (const Complex s : {Complex(0.0, 0.3), Complex(0.1, 2.0), Complex(0.0, 5.5)}) {
      ComplexMatrix kept = ComplexMatrix::Zero(1, 2);
      for (Index i : res.kept) {
        const double w2 = full.omega(i) * full.omega(i);
        const Vector phi = full.V.col(i);
        kept += ((Cp * phi).cast<Complex>() + s * (Cv * phi).cast<Complex>()) *
                (B.transpose() * phi).transpose().cast<Complex>() /
                (s * s + (alpha + beta * w2) * s + w2);
      }
      const auto& r = res.reduced;
      EXPECT_TRUE(matrices_near(transfer(r.M, r.D, r.K, r.B, r.Cp, r.Cv, s), kept, kModeTol,
                                Compare::relative))
          << to_string(selection) << " at s = " << s;
      // And r = n is the full transfer function.
      const auto& f = full.reduced;
      EXPECT_TRUE(matrices_near(transfer(f.M, f.D, f.K, f.B, f.Cp, f.Cv, s),
                                transfer(Matrix(sys.M), Matrix(sys.D), Matrix(sys.K), B, Cp, Cv, s),
                                kModeTol, Compare::relative));
    }
    if (selection == ModalSelection::lowest_frequency) {
      EXPECT_EQ(res.kept, (std::vector<Index>{0, 1, 2, 3}));
    } else {
      // The kept modes are the four largest dominances.
      std::vector<double> d(res.dominance.data(), res.dominance.data() + n);
      std::sort(d.rbegin(), d.rend());
      for (Index i : res.kept) EXPECT_GE(res.dominance(i), d[3]);
    }
  }
}

TEST(ModalTruncation, RigidBodyModesAreKeptFirst) {
  const Index n = 6;
  const SecondOrderSystem sys = rayleigh_chain(n, 0.0, 0.0, /*fixed_ends=*/false);
  ModalOptions o;
  o.order = 1;
  const ModalResult res = modal_truncation(sys, o);
  EXPECT_NEAR(res.omega(0), 0.0, 1e-7);
  EXPECT_TRUE(std::isinf(res.dominance(0)));
  EXPECT_EQ(res.kept, std::vector<Index>{0});
  // The rigid mode of unit masses is the uniform translation 1 / sqrt(n).
  EXPECT_NEAR(std::abs(res.V(0, 0)), 1.0 / std::sqrt(double(n)), 1e-12);
}

/// G(s) = C (s E - A)^{-1} B + D, dense.
ComplexMatrix transfer(const DescriptorSystem& d, Complex s) {
  const ComplexMatrix P = s * Matrix(d.E).cast<Complex>() - Matrix(d.A).cast<Complex>();
  return Matrix(d.C).cast<Complex>() * P.partialPivLu().solve(Matrix(d.B).cast<Complex>()) +
         d.D_ff.cast<Complex>();
}
ComplexMatrix transfer(const ModalFirstOrderResult& r, Complex s) {
  const ComplexMatrix P = s * r.E.cast<Complex>() - r.A.cast<Complex>();
  return r.C.cast<Complex>() * P.partialPivLu().solve(r.B.cast<Complex>()) + r.D_ff.cast<Complex>();
}

// For a symmetric pencil G(s) - G_r(s) = sum over the discarded modes of
// (C phi_i)(B^T phi_i)^T / (s - lambda_i), whose spectral norm on the imaginary axis is at most
// sum_i ||C phi_i|| ||B^T phi_i|| / |lambda_i| = the discarded dominances (equality at s = 0 for
// a single mode): an a priori bound the reduced model must meet at every frequency.
TEST(ModalTruncation, FirstOrderSymmetricPencilMeetsTheDiscardedGainBound) {
  const DescriptorSystem d = testing::symmetric_grid(6);  // n = 36, E SPD, A symmetric < 0
  const SparseLtiOperator op(d);
  const Index n = d.n();
  ModalOptions o;
  o.order = 8;
  const ModalFirstOrderResult res = modal_truncation(op, o);
  ASSERT_EQ(res.r, 8);
  EXPECT_TRUE(matrices_near(res.E, Matrix::Identity(8, 8), kModeTol)) << "V^T E V = I";
  double discarded = 0.0, largest_discarded = 0.0;
  for (Index i = 0; i < n; ++i) {
    const bool kept = std::find(res.kept.begin(), res.kept.end(), i) != res.kept.end();
    if (!kept) discarded += res.dominance(i);
    if (!kept) largest_discarded = std::max(largest_discarded, res.dominance(i));
    EXPECT_LT(res.lambda(i), 0.0);
  }
  // Dominance order: every kept mode dominates every discarded one.
  for (const Index k : res.kept) EXPECT_GE(res.dominance(k), largest_discarded);
  for (const double w : {0.0, 0.01, 0.3, 1.0, 3.0, 30.0}) {
    const ComplexMatrix err = transfer(d, Complex(0, w)) - transfer(res, Complex(0, w));
    const double e = Eigen::JacobiSVD<ComplexMatrix>(err).singularValues()(0);
    EXPECT_LE(e, discarded * (1 + kModeTol))
        << "omega " << w << ": " << e << " vs bound " << discarded;
  }
  // All modes: the same transfer function.
  o.order = n;
  const ModalFirstOrderResult all = modal_truncation(op, o);
  for (const double w : {0.0, 0.5, 5.0}) {
    const ComplexMatrix G = transfer(d, Complex(0, w));
    EXPECT_LE((G - transfer(all, Complex(0, w))).norm(), kModeTol * G.norm()) << "omega " << w;
  }
}

TEST(ModalTruncation, FirstOrderNonsymmetricPencilIsRefusedByName) {
  DescriptorSystem d = testing::symmetric_grid(3);
  Matrix A = Matrix(d.A);
  A(0, 1) += 0.5;
  d.A = A.sparseView();
  const SparseLtiOperator op(d);
  ModalOptions o;
  o.order = 2;
  try {
    modal_truncation(op, o);
    FAIL() << "a nonsymmetric A must be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("A is not symmetric"), std::string::npos) << e.what();
  }
}

TEST(ModalTruncation, BadInputIsNamed) {
  const SecondOrderSystem sys = rayleigh_chain(4, 0.0, 0.0);
  ModalOptions o;
  o.order = 5;
  EXPECT_THROW(modal_truncation(sys, o), InvalidArgument);
  o.order = 0;
  EXPECT_THROW(modal_truncation(sys, o), InvalidArgument);
  SecondOrderSystem unstable = sys;
  unstable.K = -sys.K;
  o.order = 2;
  try {
    modal_truncation(unstable, o);
    FAIL() << "a negative stiffness must be refused";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("negative mode"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_modal_selection("largest"), InvalidArgument);
}

}  // namespace
}  // namespace mor
