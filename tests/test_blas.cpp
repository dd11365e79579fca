// SPDX-License-Identifier: GPL-3.0-or-later
// The CBLAS and LAPACK wrappers of src/linalg against Eigen's own products and factorizations:
// every transpose combination of gemm (also on blocks with a leading dimension larger than the
// rows), dsyrk's Gram matrix, the inverse, the pivoted QR and the orthonormal Q factor; the
// eigensolvers, Hessenberg form and full SVD by their defining equations (residuals,
// orthonormality, exact eigenvalues of the second-difference matrix); the
// small-matrix product kernel (SmallMatrix) against Eigen's for every row blocking.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
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

TEST(Lapack, ThinSvdReconstructsWithOrthonormalFactors) {
  std::mt19937 gen(8);
  for (const auto& [m, n] : {std::pair<Index, Index>{60, 14}, {14, 60}, {1, 1}, {9, 0}}) {
    const Matrix X = random_normal(m, n, gen);
    const lapack::Svd svd = lapack::thin_svd(X);
    const Index k = std::min(m, n);
    ASSERT_EQ(svd.U.rows(), m);
    ASSERT_EQ(svd.U.cols(), k);
    ASSERT_EQ(svd.V.rows(), n);
    ASSERT_EQ(svd.V.cols(), k);
    ASSERT_EQ(svd.s.size(), k);
    for (Index i = 1; i < k; ++i) EXPECT_LE(svd.s(i), svd.s(i - 1));
    EXPECT_TRUE(
        matrices_near(Matrix(svd.U.transpose() * svd.U), Matrix::Identity(k, k), kProductTol));
    EXPECT_TRUE(
        matrices_near(Matrix(svd.V.transpose() * svd.V), Matrix::Identity(k, k), kProductTol));
    EXPECT_TRUE(matrices_near(Matrix(svd.U * svd.s.asDiagonal() * svd.V.transpose()), X,
                              kProductTol * std::max(1.0, X.norm())));
  }
  // Computed data gone non-finite is a numerical failure, not bad input.
  Matrix bad = Matrix::Ones(3, 2);
  bad(1, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(lapack::thin_svd(bad), NumericalError);
}

/// A complex matrix with independent standard normal real and imaginary parts.
ComplexMatrix random_complex(Index rows, Index cols, std::mt19937& gen) {
  return random_normal(rows, cols, gen).cast<Complex>() +
         Complex(0.0, 1.0) * random_normal(rows, cols, gen).cast<Complex>();
}

/// The thin unitary factor of a random complex m x k matrix (m >= k).
ComplexMatrix random_unitary_columns(Index m, Index k, std::mt19937& gen) {
  const Eigen::HouseholderQR<ComplexMatrix> qr(random_complex(m, k, gen));
  return qr.householderQ() * ComplexMatrix::Identity(m, k);
}

TEST(Lapack, ComplexSvdRecoversPrescribedSingularValues) {
  std::mt19937 gen(10);
  for (const auto& [m, n] : {std::pair<Index, Index>{40, 6}, {6, 40}, {7, 7}, {1, 1}}) {
    const Index k = std::min(m, n);
    // X = Q1 diag(sigma) Q2^H with sigma known: 10^0 down to 10^-8.
    Vector sigma(k);
    for (Index i = 0; i < k; ++i) sigma(i) = std::pow(10.0, -8.0 * i / std::max<Index>(k - 1, 1));
    const ComplexMatrix Q1 = random_unitary_columns(m, k, gen);
    const ComplexMatrix Q2 = random_unitary_columns(n, k, gen);
    const ComplexMatrix X = Q1 * sigma.cast<Complex>().asDiagonal() * Q2.adjoint();
    const lapack::ComplexSvd svd = lapack::thin_complex_svd(X);
    ASSERT_EQ(svd.U.rows(), m);
    ASSERT_EQ(svd.U.cols(), k);
    ASSERT_EQ(svd.V.rows(), n);
    ASSERT_EQ(svd.V.cols(), k);
    ASSERT_EQ(svd.s.size(), k);
    // A backward-stable SVD gets each sigma_i to a few eps times sigma_1.
    for (Index i = 0; i < k; ++i)
      EXPECT_NEAR(svd.s(i), sigma(i), kProductTol) << m << "x" << n << ", sigma_" << i;
    EXPECT_LT((svd.U.adjoint() * svd.U - ComplexMatrix::Identity(k, k)).norm(), kProductTol);
    EXPECT_LT((svd.V.adjoint() * svd.V - ComplexMatrix::Identity(k, k)).norm(), kProductTol);
    EXPECT_LT((svd.U * svd.s.cast<Complex>().asDiagonal() * svd.V.adjoint() - X).norm(),
              kProductTol);
    EXPECT_NEAR(lapack::spectral_norm(X), 1.0, kProductTol) << m << "x" << n;
  }
  // The norm of a row or column is its Euclidean norm; of nothing, 0.
  const ComplexMatrix row = random_complex(1, 9, gen);
  EXPECT_NEAR(lapack::spectral_norm(row), row.norm(), kProductTol * row.norm());
  EXPECT_EQ(lapack::spectral_norm(ComplexMatrix(0, 3)), 0.0);
  // A transfer function evaluated at a pole: infinite, or NaN, but no exception; the
  // decomposition itself refuses such a matrix.
  ComplexMatrix bad = ComplexMatrix::Ones(3, 2);
  bad(1, 1) = Complex(std::numeric_limits<double>::infinity(), 0.0);
  EXPECT_EQ(lapack::spectral_norm(bad), std::numeric_limits<double>::infinity());
  EXPECT_THROW(lapack::thin_complex_svd(bad), NumericalError);
  bad(0, 0) = Complex(0.0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(lapack::spectral_norm(bad)));
}

TEST(Lapack, ComplexLuSolvesBothSystemsAndEstimatesTheCondition) {
  std::mt19937 gen(11);
  const Index n = 30;
  const ComplexMatrix A = random_complex(n, n, gen), B = random_complex(n, 4, gen);
  const lapack::ComplexLu lu(A);
  const ComplexMatrix X = lu.solve(B), Y = lu.solve(B, true);
  // Backward stable: residuals at rounding level against ||A|| ||X||.
  EXPECT_LT((A * X - B).norm(), kInverseTol * A.norm() * X.norm());
  EXPECT_LT((A.transpose() * Y - B).norm(), kInverseTol * A.norm() * Y.norm());
  // zgecon's estimate of 1 / (||A||_1 ||A^{-1}||_1): ||A^{-1}||_1 is estimated from below, within
  // a small factor in practice (Higham 1988).
  const ComplexMatrix Ainv = lu.solve(ComplexMatrix::Identity(n, n));
  const double exact =
      1.0 / (A.cwiseAbs().colwise().sum().maxCoeff() * Ainv.cwiseAbs().colwise().sum().maxCoeff());
  EXPECT_GE(lu.rcond(), exact * (1.0 - 1e-10));
  EXPECT_LE(lu.rcond(), 10.0 * exact);
  // An exactly singular matrix: rcond 0, and a solve is refused rather than returning inf.
  ComplexMatrix S = A;
  S.col(5).setZero();
  const lapack::ComplexLu singular(S);
  EXPECT_EQ(singular.rcond(), 0.0);
  EXPECT_THROW(singular.solve(B), NumericalError);
  EXPECT_THROW(lapack::ComplexLu(ComplexMatrix(2, 3)), InvalidArgument);
  EXPECT_THROW(lu.solve(ComplexMatrix::Ones(n + 1, 1)), InvalidArgument);
  ComplexMatrix bad = A;
  bad(2, 2) = Complex(std::numeric_limits<double>::quiet_NaN(), 0.0);
  EXPECT_THROW(lapack::ComplexLu{bad}, NumericalError);
  const lapack::ComplexLu empty{ComplexMatrix(0, 0)};
  EXPECT_EQ(empty.rcond(), 1.0);
  EXPECT_EQ(empty.solve(ComplexMatrix(0, 2)).cols(), 2);
}

TEST(Lapack, GeneralizedEigenvaluesSolveThePencilAndFlagInfiniteOnes) {
  std::mt19937 gen(9);
  const Index n = 12;
  const Matrix A = random_normal(n, n, gen), B = random_normal(n, n, gen);
  Matrix Aw = A, Bw = B;
  ComplexVector alpha;
  Vector beta;
  lapack::generalized_eigenvalues(Aw, Bw, alpha, beta);
  ASSERT_EQ(alpha.size(), n);
  ASSERT_EQ(beta.size(), n);
  // Each lambda = alpha / beta makes A - lambda B singular: its smallest singular value is at
  // rounding level against ||A|| + |lambda| ||B|| (a backward-stable QZ).
  for (Index i = 0; i < n; ++i) {
    ASSERT_GT(beta(i), 0.0);
    const Complex lambda = alpha(i) / beta(i);
    const ComplexMatrix P = A.cast<Complex>() - lambda * B.cast<Complex>();
    const Vector sv = P.jacobiSvd().singularValues();
    const double scale = A.norm() + std::abs(lambda) * B.norm();
    EXPECT_LT(sv(n - 1), 1e-12 * scale) << "lambda_" << i << " = " << lambda;
  }
  // Complex eigenvalues come in consecutive conjugate pairs.
  for (Index i = 0; i < n; ++i)
    if (alpha(i).imag() > 0.0) {
      ASSERT_LT(i + 1, n);
      EXPECT_NEAR(alpha(i + 1).imag() / beta(i + 1), -alpha(i).imag() / beta(i),
                  1e-12 * std::abs(alpha(i) / beta(i)));
      ++i;
    }
  // A singular B (rank n - 2): two infinite eigenvalues, beta = 0 to rounding.
  Matrix Bs = B;
  Bs.col(3).setZero();
  Bs.col(7).setZero();
  Aw = A;
  lapack::generalized_eigenvalues(Aw, Bs, alpha, beta);
  Index infinite = 0;
  for (Index i = 0; i < n; ++i) infinite += std::abs(beta(i)) <= 1e-12 * std::abs(alpha(i));
  EXPECT_EQ(infinite, 2);
  Matrix bad = Matrix::Identity(2, 2), I2 = Matrix::Identity(2, 2);
  bad(0, 1) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(lapack::generalized_eigenvalues(bad, I2, alpha, beta), NumericalError);
  Matrix rect(2, 3), I3 = Matrix::Identity(2, 2);
  EXPECT_THROW(lapack::generalized_eigenvalues(rect, I3, alpha, beta), InvalidArgument);
}

/// Eigenpair residuals of a backward-stable eigensolver: rounding level against ||A||.
constexpr double kEigenTol = 1e-12;

TEST(Lapack, SymmetricEigenDecomposesWithOrthonormalVectors) {
  std::mt19937 gen(11);
  const Index n = 40;
  const Matrix G = random_normal(n, n, gen);
  const Matrix S = G + G.transpose();
  Matrix V = S;
  Vector w;
  lapack::symmetric_eigen(V, w);
  ASSERT_EQ(w.size(), n);
  for (Index i = 1; i < n; ++i) EXPECT_LE(w(i - 1), w(i));
  EXPECT_TRUE(matrices_near(Matrix(V.transpose() * V), Matrix::Identity(n, n), kEigenTol));
  EXPECT_TRUE(matrices_near(Matrix(S * V), Matrix(V * w.asDiagonal()), kEigenTol * S.norm()));
  // Only the lower triangle is read (Eigen's convention): garbage above it changes nothing.
  Matrix lower = S;
  lower.triangularView<Eigen::StrictlyUpper>().setConstant(1e6);
  const Vector values = lapack::symmetric_eigenvalues(lower);
  EXPECT_TRUE(matrices_near(values, w, kEigenTol * S.norm()));
  // Non-finite data: NaN eigenvalues (a norm of it is NaN), an error where vectors are asked for.
  Matrix bad = S;
  bad(2, 1) = std::numeric_limits<double>::quiet_NaN();
  Matrix bad_copy = bad;
  EXPECT_TRUE(std::isnan(lapack::symmetric_eigenvalues(bad_copy)(0)));
  EXPECT_THROW(lapack::symmetric_eigen(bad, w), NumericalError);
  Matrix rect(3, 2);
  EXPECT_THROW(lapack::symmetric_eigen(rect, w), InvalidArgument);
}

TEST(Lapack, TridiagonalEigenvaluesOfTheSecondDifferenceMatrix) {
  // tridiag(-1, 2, -1) of order n: lambda_k = 2 - 2 cos(k pi / (n + 1)), k = 1..n (exact).
  const Index n = 50;
  const Vector d = Vector::Constant(n, 2.0), e = Vector::Constant(n - 1, -1.0);
  const Vector w = lapack::symmetric_tridiagonal_eigenvalues(d, e);
  ASSERT_EQ(w.size(), n);
  const double pi = std::acos(-1.0);
  for (Index k = 1; k <= n; ++k)
    EXPECT_NEAR(w(k - 1), 2.0 - 2.0 * std::cos(double(k) * pi / double(n + 1)), 1e-13);
  EXPECT_EQ(lapack::symmetric_tridiagonal_eigenvalues(Vector::Constant(1, 3.0), Vector(0))(0), 3.0);
  EXPECT_THROW(lapack::symmetric_tridiagonal_eigenvalues(d, Vector::Zero(3)), InvalidArgument);
  Vector bad = d;
  bad(4) = std::numeric_limits<double>::infinity();
  EXPECT_THROW(lapack::symmetric_tridiagonal_eigenvalues(bad, e), NumericalError);
}

TEST(Lapack, GeneralizedSymmetricEigenIsBOrthonormal) {
  std::mt19937 gen(12);
  const Index n = 30;
  const Matrix G = random_normal(n, n, gen), H = random_normal(n, n, gen);
  const Matrix A = G + G.transpose();
  const Matrix B = H * H.transpose() + double(n) * Matrix::Identity(n, n);  // positive definite
  Matrix V = A, Bw = B;
  Vector w;
  lapack::generalized_symmetric_eigen(V, Bw, w);
  ASSERT_EQ(w.size(), n);
  for (Index i = 1; i < n; ++i) EXPECT_LE(w(i - 1), w(i));
  EXPECT_TRUE(matrices_near(Matrix(V.transpose() * B * V), Matrix::Identity(n, n), kEigenTol));
  EXPECT_TRUE(matrices_near(Matrix(A * V), Matrix(B * V * w.asDiagonal()),
                            kEigenTol * (A.norm() + w.cwiseAbs().maxCoeff() * B.norm())));
  // An indefinite B is named, not decomposed.
  Matrix V2 = A, indefinite = A;
  EXPECT_THROW(lapack::generalized_symmetric_eigen(V2, indefinite, w), NumericalError);
}

TEST(Lapack, GeneralEigenpairsSatisfyTheirEquationsAndPairUp) {
  std::mt19937 gen(13);
  const Index n = 25;
  const Matrix A = random_normal(n, n, gen);
  Matrix work = A;
  ComplexVector lambda;
  ComplexMatrix V;
  lapack::eigen(work, lambda, V);
  ASSERT_EQ(lambda.size(), n);
  ASSERT_EQ(V.cols(), n);
  const ComplexMatrix AV = A.cast<Complex>() * V;
  for (Index i = 0; i < n; ++i) {
    EXPECT_NEAR(V.col(i).norm(), 1.0, kEigenTol);
    EXPECT_LT((AV.col(i) - lambda(i) * V.col(i)).norm(), kEigenTol * A.norm()) << "pair " << i;
  }
  // Complex pairs: consecutive, positive imaginary part first, conjugate vectors.
  for (Index i = 0; i < n; ++i)
    if (lambda(i).imag() != 0.0) {
      ASSERT_GT(lambda(i).imag(), 0.0);
      ASSERT_LT(i + 1, n);
      EXPECT_EQ(lambda(i + 1), std::conj(lambda(i)));
      EXPECT_TRUE(
          matrices_near(ComplexMatrix(V.col(i + 1)), ComplexMatrix(V.col(i).conjugate()), 0.0));
      ++i;
    }
  // The values alone are the same values (in whatever order).
  work = A;
  const ComplexVector values = lapack::eigenvalues(work);
  ASSERT_EQ(values.size(), n);
  for (Index i = 0; i < n; ++i)
    EXPECT_LT((lambda.array() - values(i)).abs().minCoeff(), kEigenTol * A.norm()) << values(i);
  Matrix bad = A;
  bad(0, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(lapack::eigenvalues(bad), NumericalError);
  Matrix rect(2, 3);
  EXPECT_THROW(lapack::eigenvalues(rect), InvalidArgument);
}

TEST(Lapack, HessenbergFormIsSimilarAndZeroBelowTheSubdiagonal) {
  std::mt19937 gen(14);
  const Index n = 33;
  const Matrix A = random_normal(n, n, gen);
  Matrix H = A, Q;
  lapack::hessenberg(H, Q);
  for (Index j = 0; j < n; ++j)
    for (Index i = j + 2; i < n; ++i) EXPECT_EQ(H(i, j), 0.0) << i << "," << j;
  EXPECT_TRUE(matrices_near(Matrix(Q.transpose() * Q), Matrix::Identity(n, n), kEigenTol));
  EXPECT_TRUE(matrices_near(Matrix(Q * H * Q.transpose()), A, kEigenTol * A.norm()));
}

TEST(Lapack, FullSvdGivesTheNullSpace) {
  std::mt19937 gen(15);
  // A 4 x 6 matrix of rank 3: V's last three columns span its null space.
  const Matrix X = random_normal(4, 3, gen) * random_normal(3, 6, gen);
  const lapack::Svd svd = lapack::full_svd(X);
  ASSERT_EQ(svd.U.rows(), 4);
  ASSERT_EQ(svd.U.cols(), 4);
  ASSERT_EQ(svd.V.rows(), 6);
  ASSERT_EQ(svd.V.cols(), 6);
  ASSERT_EQ(svd.s.size(), 4);
  EXPECT_TRUE(matrices_near(Matrix(svd.U.transpose() * svd.U), Matrix::Identity(4, 4), kEigenTol));
  EXPECT_TRUE(matrices_near(Matrix(svd.V.transpose() * svd.V), Matrix::Identity(6, 6), kEigenTol));
  EXPECT_LT(svd.s(3), 1e-12 * svd.s(0));
  EXPECT_LT(Matrix(X * svd.V.rightCols(3)).norm(), kEigenTol * X.norm());
  Matrix S = Matrix::Zero(4, 6);
  S.diagonal() = svd.s;
  EXPECT_TRUE(matrices_near(Matrix(svd.U * S * svd.V.transpose()), X, kEigenTol * X.norm()));
}

TEST(Lapack, PivotedQrFormsTheOrthonormalFactor) {
  std::mt19937 gen(16);
  const Matrix X = random_normal(30, 7, gen);
  Matrix work = X, Q;
  Eigen::VectorXi perm;
  const Matrix R = lapack::pivoted_qr_r_factor(work, perm, &Q);
  ASSERT_EQ(Q.rows(), 30);
  ASSERT_EQ(Q.cols(), 7);
  EXPECT_TRUE(matrices_near(Matrix(Q.transpose() * Q), Matrix::Identity(7, 7), kProductTol));
  Matrix XP(30, 7);
  for (Index j = 0; j < 7; ++j) XP.col(j) = X.col(perm(j));
  EXPECT_TRUE(matrices_near(Matrix(Q * R), XP, kProductTol * X.norm()));
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
