// SPDX-License-Identifier: GPL-3.0-or-later
// The CBLAS and LAPACK wrappers of src/linalg against Eigen's own products and factorizations:
// every transpose combination of gemm (also on blocks with a leading dimension larger than the
// rows), dsyrk's Gram matrix, the inverse, the pivoted QR and the orthonormal Q factor; the
// small-matrix product kernel (SmallMatrix) against Eigen's for every row blocking.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "src/core/errors.hpp"
#include "src/linalg/blas.hpp"
#include "src/linalg/lapack.hpp"
#include "src/linalg/small_gemv.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::matrices_near;
using testing::random_normal;

/// Products of a few hundred terms of order one: rounding differences of a few hundred eps
/// between two summation orders.
constexpr double kProductTol = 1e-12;
/// X X^{-1} = I for a well-conditioned random X (cond ~ 1e2).
constexpr double kInverseTol = 1e-12;

TEST(Blas, GemmMatchesEigenForEveryTransposeCombination) {
  std::mt19937 gen(1);
  const Matrix A = random_normal(37, 23, gen), B = random_normal(23, 11, gen);
  const Matrix At = A.transpose(), Bt = B.transpose();
  const Matrix expected = A * B;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      Matrix C = Matrix::Constant(37, 11, 5.0);
      blas::gemm(ta, tb, 2.0, ta ? At : A, tb ? Bt : B, -1.0, C);
      EXPECT_TRUE(
          matrices_near(C, Matrix(2.0 * expected - Matrix::Constant(37, 11, 5.0)), kProductTol))
          << "transpose A " << ta << ", B " << tb;
    }
  // Blocks: leading dimensions larger than the rows, and a block of the result.
  const Matrix big = random_normal(50, 40, gen);
  Matrix out = Matrix::Zero(30, 30);
  blas::gemm(true, false, 1.0, big.block(3, 2, 20, 7), big.block(5, 10, 20, 9), 0.0,
             out.block(1, 2, 7, 9));
  const Matrix ref = big.block(3, 2, 20, 7).transpose() * big.block(5, 10, 20, 9);
  EXPECT_TRUE(matrices_near(Matrix(out.block(1, 2, 7, 9)), ref, kProductTol));
  EXPECT_EQ(out(0, 0), 0.0);
  EXPECT_TRUE(matrices_near(blas::product(A, B), expected, kProductTol));
  EXPECT_TRUE(matrices_near(blas::transpose_product(At, B), expected, kProductTol));
  Matrix wrong(5, 5);
  EXPECT_THROW(blas::gemm(false, false, 1.0, A, B, 0.0, wrong), InvalidArgument);
  EXPECT_THROW(blas::product(A, A), InvalidArgument);
}

TEST(Blas, GramIsTheSymmetricProduct) {
  std::mt19937 gen(2);
  const Matrix A = random_normal(300, 17, gen);
  const Matrix G = blas::gram(A, 0.5);
  EXPECT_TRUE(matrices_near(G, Matrix(0.5 * A.transpose() * A), kProductTol * 300));
  EXPECT_EQ(G, G.transpose());
}

TEST(Lapack, InverseAndConditionEstimate) {
  std::mt19937 gen(3);
  const Index n = 120;
  const Matrix X = Matrix::Identity(n, n) * 4.0 + random_normal(n, n, gen) / std::sqrt(double(n));
  Matrix inv = X;
  double rcond = 0.0;
  lapack::invert(inv, &rcond);
  EXPECT_TRUE(matrices_near(Matrix(X * inv), Matrix::Identity(n, n), kInverseTol));
  // dgecon estimates 1 / (||X||_1 ||X^{-1}||_1) within a small factor.
  const double exact =
      1.0 / (X.cwiseAbs().colwise().sum().maxCoeff() * inv.cwiseAbs().colwise().sum().maxCoeff());
  EXPECT_GT(rcond, exact / 10.0);
  EXPECT_LT(rcond, exact * 10.0);
  Matrix singular = Matrix::Ones(3, 3);
  singular(0, 0) = 0.0;
  singular.col(2).setZero();
  EXPECT_THROW(lapack::invert(singular), NumericalError);
  Matrix rect(3, 2);
  EXPECT_THROW(lapack::invert(rect), InvalidArgument);
}

TEST(Lapack, PivotedQrRevealsTheRankAndReconstructs) {
  std::mt19937 gen(4);
  // Rank 6 of 9 columns.
  const Matrix X = random_normal(20, 6, gen) * random_normal(6, 9, gen);
  Matrix work = X;
  Eigen::VectorXi perm;
  const Matrix R = lapack::pivoted_qr_r_factor(work, perm);
  ASSERT_EQ(R.rows(), 9);
  ASSERT_EQ(perm.size(), 9);
  for (Index i = 1; i < 9; ++i) EXPECT_LE(std::abs(R(i, i)), std::abs(R(i - 1, i - 1)) * 1.0001);
  EXPECT_LT(std::abs(R(6, 6)), 1e-12 * std::abs(R(0, 0)));
  // X P = Q R, so (X P)^T (X P) = R^T R.
  Matrix XP(20, 9);
  for (Index j = 0; j < 9; ++j) XP.col(j) = X.col(perm(j));
  EXPECT_TRUE(matrices_near(Matrix(XP.transpose() * XP), Matrix(R.transpose() * R),
                            kProductTol * X.squaredNorm()));
}

TEST(Lapack, QFactorIsOrthonormalAndSpansTheColumns) {
  std::mt19937 gen(5);
  const Matrix X = random_normal(200, 15, gen);
  Matrix Q = X;
  lapack::qr_q_factor(Q);
  EXPECT_TRUE(matrices_near(Matrix(Q.transpose() * Q), Matrix::Identity(15, 15), kProductTol));
  EXPECT_TRUE(matrices_near(Matrix(Q * (Q.transpose() * X)), X, kProductTol * X.norm()));
  Matrix wide(3, 5);
  EXPECT_THROW(lapack::qr_q_factor(wide), InvalidArgument);
}

TEST(SmallMatrix, ProductMatchesEigenForEveryRowBlocking) {
  // Row counts through one to beyond two blocks of kBlock packets, column counts below, at and
  // beyond the column groups; with and without the initial y0. The padding rows hold 0 (or y0).
  std::mt19937 gen(7);
  const Index packet = SmallMatrix::kPacket, block = SmallMatrix::kBlock;
  const std::vector<Index> row_counts = {1,
                                         std::max<Index>(packet - 1, 2),
                                         packet + 1,
                                         20,
                                         38,
                                         76,
                                         block * packet,
                                         block * packet + 3,
                                         2 * block * packet + 5};
  for (Index rows : row_counts)
    for (Index cols : std::vector<Index>{1, 3, 4, 7, 58}) {
      const Matrix A = random_normal(rows, cols, gen);
      const Vector z = random_normal(cols, 1, gen);
      const SmallMatrix S(A);
      ASSERT_EQ(S.padded_rows() % packet, 0);
      ASSERT_GE(S.padded_rows(), rows);
      ASSERT_LT(S.padded_rows(), rows + packet);
      Vector y;
      S.multiply(z, y);
      EXPECT_TRUE(matrices_near(y.head(rows), Vector(A * z), kProductTol)) << rows << " x " << cols;
      EXPECT_TRUE(y.tail(S.padded_rows() - rows).isZero(0.0)) << rows << " x " << cols;
      const Vector y0 = random_normal(S.padded_rows(), 1, gen);
      Vector y1(S.padded_rows());
      S.multiply(z.data(), y1.data(), y0.data());
      EXPECT_TRUE(matrices_near(y1.head(rows), Vector(y0.head(rows) + A * z), kProductTol))
          << rows << " x " << cols << " with y0";
      EXPECT_TRUE(matrices_near(y1.tail(S.padded_rows() - rows),
                                Vector(y0.tail(S.padded_rows() - rows)), 0.0))
          << rows << " x " << cols << " with y0";
    }
}

}  // namespace
}  // namespace mor
