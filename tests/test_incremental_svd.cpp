// SPDX-License-Identifier: GPL-3.0-or-later
// The incremental SVD (reduction/incremental_svd.hpp) against the dense SVD of all snapshots at
// once: the leading singular values and subspace, the exact energy, the discarded energy as the
// bound of the error; POD of its compressed matrix against POD of all snapshots; bad input named.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include <Eigen/SVD>

#include "reduction/incremental_svd.hpp"
#include "reduction/pod.hpp"
#include "src/core/errors.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::scalars_near;

// A rank-30 signal with singular values 1 .. 1e-3 plus noise of size 1e-9 per entry, 1000
// snapshots of n = 300, in blocks of 64 with at most 80 kept: the discarded singular values are
// noise, about 1e-9 sqrt(1000) = 3e-8; the leading ones move by at most that squared over
// their size, the subspace by the ratio of the noise to the gap (1e-3 / 3e-8): 1e-6 is a
// margin of 30 over what the noise allows.
constexpr double kLeadingSvTol = 1e-9;
constexpr double kSubspaceTol = 1e-6;
// Sums of the same squares in another order.
constexpr double kEnergyTol = 1e-13;

Matrix signal(Index n, Index k, Index rank, std::mt19937& gen) {
  Eigen::HouseholderQR<Matrix> qa(testing::random_normal(n, rank, gen)),
      qb(testing::random_normal(k, rank, gen));
  const Matrix A = qa.householderQ() * Matrix::Identity(n, rank);
  const Matrix B = qb.householderQ() * Matrix::Identity(k, rank);
  Vector s(rank);
  for (Index i = 0; i < rank; ++i) s[i] = std::pow(1e-3, static_cast<double>(i) / (rank - 1));
  return A * s.asDiagonal() * B.transpose() + 1e-9 * testing::random_normal(n, k, gen);
}

TEST(IncrementalSvd, LeadingSingularValuesAndSubspaceOfAllSnapshots) {
  std::mt19937 gen(3);
  const Index n = 300, k = 1000, rank = 30;
  const Matrix X = signal(n, k, rank, gen);
  IncrementalSvd inc(n, 80, 64);
  for (Index j = 0; j < k; ++j) inc.append(X.col(j));
  EXPECT_EQ(inc.snapshots(), k);
  EXPECT_TRUE(scalars_near(inc.energy(), X.squaredNorm(), kEnergyTol, Compare::relative));
  const Matrix US = inc.compressed();
  ASSERT_LE(US.cols(), 80);
  Eigen::BDCSVD<Matrix> dense(X, Eigen::ComputeThinU);
  const Vector s = inc.singular_values();
  EXPECT_TRUE(matrices_near(s.head(rank), dense.singularValues().head(rank), kLeadingSvTol,
                            Compare::relative));
  // The compressed matrix keeps the energy but what was discarded.
  EXPECT_TRUE(scalars_near(US.squaredNorm() + inc.discarded_energy(), X.squaredNorm(), kEnergyTol,
                           Compare::relative));
  // range(U_inc) contains the leading dense subspace.
  const Matrix U = US.leftCols(rank) * s.head(rank).cwiseInverse().asDiagonal();
  const Matrix Ud = dense.matrixU().leftCols(rank);
  EXPECT_LE((Ud - U * (U.transpose() * Ud)).norm(), kSubspaceTol);
  // POD of the compressed snapshots is POD of all of them.
  PodOptions o;
  o.order = 20;
  const PodResult a = pod(US, o), b = pod(X, o);
  EXPECT_LE((a.V - b.V * (b.V.transpose() * a.V)).norm(), kSubspaceTol);
}

// The columns of U = U S S^-1 stay orthonormal over many Brand updates (each one orthogonalizes
// the new block twice against U): 1e-10 is about 1e6 eps, far above the rounding of 80 updates
// and far below what would change a POD basis.
constexpr double kOrthogonalityTol = 1e-10;

TEST(IncrementalSvd, SmallBlocksKeepTheBasisOrthonormalAndMatchTheDenseSvd) {
  std::mt19937 gen(5);
  const Index n = 400, k = 1000, rank = 30;
  const Matrix X = signal(n, k, rank, gen);
  IncrementalSvd inc(n, 60, 12);  // 84 updates, each block smaller than the rank
  for (Index j = 0; j < k; ++j) inc.append(X.col(j));
  const Matrix US = inc.compressed();
  const Vector s = inc.singular_values();
  const Matrix U = US * s.cwiseInverse().asDiagonal();
  EXPECT_LE((U.transpose() * U - Matrix::Identity(U.cols(), U.cols())).norm(), kOrthogonalityTol);
  Eigen::BDCSVD<Matrix> dense(X, Eigen::ComputeThinU);
  EXPECT_TRUE(matrices_near(s.head(rank), dense.singularValues().head(rank), kLeadingSvTol,
                            Compare::relative));
  const Matrix Ud = dense.matrixU().leftCols(rank);
  EXPECT_LE((Ud - U.leftCols(rank) * (U.leftCols(rank).transpose() * Ud)).norm(), kSubspaceTol);
}

// The merge of a parametric training's concurrent runs: each run compressed by its own
// IncrementalSvd, their U_k S_k appended in a fixed order to one more, give the truncated SVD
// of all snapshots side by side (sum_k U_k S_k^2 U_k^T is their Gram matrix up to what each
// dropped).
TEST(IncrementalSvd, MergedCompressionsOfSeveralRunsAreTheSvdOfAllTheirSnapshots) {
  std::mt19937 gen(7);
  const Index n = 300, k = 1000, rank = 30, runs = 5;
  const Matrix X = signal(n, k, rank, gen);
  IncrementalSvd merged(n, 80, 64);
  double discarded = 0;
  for (Index r = 0; r < runs; ++r) {
    IncrementalSvd local(n, 80, 64);
    for (Index j = r * k / runs; j < (r + 1) * k / runs; ++j) local.append(X.col(j));
    merged.append_block(local.compressed());
    discarded += local.discarded_energy();
  }
  Eigen::BDCSVD<Matrix> dense(X, Eigen::ComputeThinU);
  const Vector s = merged.singular_values();
  EXPECT_TRUE(matrices_near(s.head(rank), dense.singularValues().head(rank), kLeadingSvTol,
                            Compare::relative));
  const Matrix U = merged.compressed().leftCols(rank) * s.head(rank).cwiseInverse().asDiagonal();
  const Matrix Ud = dense.matrixU().leftCols(rank);
  EXPECT_LE((Ud - U * (U.transpose() * Ud)).norm(), kSubspaceTol);
  // What the runs and the merge dropped, and what the merge kept, are all the energy.
  EXPECT_TRUE(
      scalars_near(merged.compressed().squaredNorm() + merged.discarded_energy() + discarded,
                   X.squaredNorm(), kEnergyTol, Compare::relative));
}

TEST(IncrementalSvd, TheAutomaticBlockBoundsTheBufferForLargeN) {
  EXPECT_EQ(IncrementalSvd::automatic_block(10000), 256);
  // At n = 10^6 the buffer of b snapshots is at most kBlockBytes (256 MiB), not 2 GB.
  const Index b = IncrementalSvd::automatic_block(1000000);
  EXPECT_GE(b, 16);
  EXPECT_LE(8.0 * 1e6 * static_cast<double>(b), IncrementalSvd::kBlockBytes);
  EXPECT_EQ(IncrementalSvd(1000000, 10).block(), b);
}

TEST(IncrementalSvd, RefusesBadSizesAndValuesNamingThem) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no exception)");
  };
  EXPECT_NE(message([] { IncrementalSvd(0, 4); }).find("n must be >= 1, got 0"), std::string::npos);
  EXPECT_NE(message([] { IncrementalSvd(5, 0); }).find("max_rank"), std::string::npos);
  EXPECT_NE(message([] { IncrementalSvd(5, 2, 1, 1.0); }).find("tolerance"), std::string::npos);
  IncrementalSvd inc(3, 2);
  EXPECT_NE(message([&] { inc.append(Vector::Ones(4)); }).find("4 entries, expected n = 3"),
            std::string::npos);
  Vector bad = Vector::Ones(3);
  bad[1] = std::nan("");
  EXPECT_NE(message([&] { inc.append(bad); }).find("non-finite"), std::string::npos);
  EXPECT_EQ(inc.compressed().cols(), 0);
  EXPECT_NE(message([&] { inc.append_block(Matrix::Ones(4, 2)); }).find("4 rows, expected n = 3"),
            std::string::npos);
  EXPECT_NE(message([] { IncrementalSvd(5, 2, -1); }).find("block"), std::string::npos);
}

}  // namespace
}  // namespace mor
