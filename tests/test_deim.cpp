// SPDX-License-Identifier: GPL-3.0-or-later
// DEIM and Q-DEIM: a greedy and a pivoted-QR selection checked by hand, exact interpolation at
// the selected rows and on range(U), the a-priori error bound, the theoretical bounds on the
// error constants, and bad input.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "src/core/errors.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::scalars_near;

/// Interpolated values equal the data to this, relative to max |f|: rounding in
/// U (P^T U)^{-1} f(p) is about error_constant * m * eps, error_constant <~ 100 here.
constexpr double kInterpolationTol = 1e-12;
/// The DEIM bound holds in exact arithmetic; both sides carry relative rounding of ~1e-15.
constexpr double kBoundSlack = 1e-12;

const std::vector<DeimMethod> kMethods = {DeimMethod::deim, DeimMethod::qdeim};

Matrix random_orthonormal(Index n, Index c, std::mt19937& gen) {
  Eigen::HouseholderQR<Matrix> qr(testing::random_normal(n, c, gen));
  return qr.householderQ() * Matrix::Identity(n, c);
}

/// A smooth basis as DEIM meets it: POD modes of Gaussian pulses exp(-(x - mu)^2 / 0.01) of
/// the grid x in [0, 1] (n points), centres mu in [0.1, 0.9].
Matrix smooth_basis(Index n, Index m) {
  const Index k = 60;
  Matrix F(n, k);
  for (Index j = 0; j < k; ++j) {
    const double mu = 0.1 + 0.8 * static_cast<double>(j) / static_cast<double>(k - 1);
    for (Index i = 0; i < n; ++i) {
      const double x = static_cast<double>(i) / static_cast<double>(n - 1);
      F(i, j) = std::exp(-(x - mu) * (x - mu) / 0.01);
    }
  }
  PodOptions o;
  o.order = m;
  o.method = PodMethod::svd;
  return pod(F, o).V;
}

/// The 3 orthonormal columns of the hand example, from a = (2, 4, 1, 2), b = (2, -1, 0, 0) and
/// d = (1, 2, -10, 0), pairwise orthogonal.
Matrix hand_basis() {
  Matrix U(4, 3);
  U.col(0) << 2, 4, 1, 2;
  U.col(1) << 2, -1, 0, 0;
  U.col(2) << 1, 2, -10, 0;
  U.col(0) /= 5.0;
  U.col(1) /= std::sqrt(5.0);
  U.col(2) /= std::sqrt(105.0);
  return U;
}

TEST(Deim, GreedySelectionOfAHandExample) {
  // DEIM: p_1 = argmax |a| = row 1 (4). The residual of b after interpolating it by a at row 1
  // is b + a / 4 = (2.5, 0, 0.25, 0.5): p_2 = row 0. Interpolating d by a and b at rows 1, 0
  // (2 al + 2 be = 1, 4 al - be = 2: al = 1/2, be = 0) leaves d - a / 2 = (0, 0, -10.5, -1):
  // p_3 = row 2. (The scaling of the columns does not move the argmax.)
  const DeimResult d = deim(hand_basis(), DeimMethod::deim);
  EXPECT_EQ(d.indices, (std::vector<Index>{1, 0, 2}));
  // Q-DEIM pivots the columns of U^T, i.e. the rows of U, by largest remaining norm. Squared
  // row norms: 0.9695, 0.8781, 0.9924, 0.16, so row 2 first. Removing the component along
  // row 2 leaves 0.9693, 0.8771, 0.1535: row 0. Then row 1 (0.873) before row 3 (0.150).
  const DeimResult q = deim(hand_basis(), DeimMethod::qdeim);
  EXPECT_EQ(q.indices, (std::vector<Index>{2, 0, 1}));
  for (const DeimResult* r : {&d, &q})
    EXPECT_TRUE(matrices_near(Matrix(r->PtU_inv * hand_basis()(r->indices, Eigen::all)),
                              Matrix::Identity(3, 3), 1e-14))
        << to_string(r->method);
}

TEST(Deim, UnitVectorsSelectTheirOwnRows) {
  // U = [e_7 e_2 e_10 e_4]: every row outside {2, 4, 7, 10} is zero, so both methods must pick
  // exactly these rows, DEIM in the order of the columns, and P^T U is a permutation.
  const std::vector<Index> rows = {7, 2, 10, 4};
  Matrix U = Matrix::Zero(12, 4);
  for (Index j = 0; j < 4; ++j) U(rows[j], j) = 1.0;
  const DeimResult d = deim(U, DeimMethod::deim);
  EXPECT_EQ(d.indices, rows);
  const DeimResult q = deim(U, DeimMethod::qdeim);
  EXPECT_EQ(std::set<Index>(q.indices.begin(), q.indices.end()),
            std::set<Index>(rows.begin(), rows.end()));
  for (const DeimResult* r : {&d, &q})
    EXPECT_TRUE(scalars_near(r->error_constant, 1.0, 1e-15)) << to_string(r->method);
}

TEST(Deim, IndicesAreDistinctRowsAndInverseIsConsistent) {
  std::mt19937 gen(5);
  for (const Matrix& U : {random_orthonormal(500, 40, gen), smooth_basis(400, 25)}) {
    for (DeimMethod method : kMethods) {
      const DeimResult res = deim(U, method);
      const Index m = U.cols();
      ASSERT_EQ(static_cast<Index>(res.indices.size()), m) << to_string(method);
      EXPECT_EQ(static_cast<Index>(std::set<Index>(res.indices.begin(), res.indices.end()).size()),
                m)
          << to_string(method) << ": repeated row";
      for (Index p : res.indices) {
        EXPECT_GE(p, 0);
        EXPECT_LT(p, U.rows());
      }
      const Matrix PtU = U(res.indices, Eigen::all);
      EXPECT_TRUE(matrices_near(Matrix(res.PtU_inv * PtU), Matrix::Identity(m, m), 1e-11))
          << to_string(method);
      // error_constant is ||(P^T U)^{-1}||_2, the reciprocal of sigma_min(P^T U).
      const double s_min = Eigen::JacobiSVD<Matrix>(PtU).singularValues()(m - 1);
      EXPECT_TRUE(scalars_near(res.error_constant, 1.0 / s_min, 1e-10, Compare::relative))
          << to_string(method);
      EXPECT_EQ(res.U.cols(), m);
    }
  }
}

TEST(Deim, InterpolatesAtItsRowsAndReproducesTheSpan) {
  std::mt19937 gen(9);
  for (const Matrix& U : {random_orthonormal(200, 15, gen), smooth_basis(300, 12)}) {
    for (DeimMethod method : kMethods) {
      const DeimResult res = deim(U, method);
      // Any f: the approximation takes f's values at the selected rows.
      const Vector f = testing::random_normal(U.rows(), 1, gen);
      const Vector fd = deim_approximation(res, f);
      EXPECT_TRUE(matrices_near(Vector(fd(res.indices)), Vector(f(res.indices)),
                                kInterpolationTol * f.cwiseAbs().maxCoeff()))
          << to_string(method);
      // f in range(U): reproduced everywhere.
      const Vector g = U * testing::random_normal(U.cols(), 1, gen);
      EXPECT_TRUE(
          matrices_near(deim_approximation(res, g), g, kInterpolationTol * g.cwiseAbs().maxCoeff()))
          << to_string(method);
    }
  }
}

TEST(Deim, ErrorBoundHolds) {
  std::mt19937 gen(13);
  for (const Matrix& U : {random_orthonormal(150, 10, gen), smooth_basis(200, 10)}) {
    for (DeimMethod method : kMethods) {
      const DeimResult res = deim(U, method);
      for (int trial = 0; trial < 20; ++trial) {
        // Random directions, and smooth-ish ones: near range(U) plus a small random part.
        Vector f = testing::random_normal(U.rows(), 1, gen);
        if (trial % 2) f = U * testing::random_normal(U.cols(), 1, gen) + 1e-3 * f;
        const double error = (f - deim_approximation(res, f)).norm();
        const double best = (f - U * (U.transpose() * f)).norm();
        EXPECT_LE(error, res.error_constant * best * (1 + kBoundSlack))
            << to_string(method) << ", trial " << trial;
        // ||P^T U||_2 <= 1 makes the constant >= 1: interpolation never beats projection.
        EXPECT_GE(error, best * (1 - kBoundSlack)) << to_string(method);
      }
    }
  }
}

TEST(Deim, ConstantsRespectTheirTheoreticalBounds) {
  std::mt19937 gen(17);
  const Index n = 60;
  for (Index m : {1, 2, 5, 10}) {
    for (int trial = 0; trial < 5; ++trial) {
      const Matrix U = random_orthonormal(n, m, gen);
      const double md = static_cast<double>(m), nd = static_cast<double>(n);
      // Drmac & Gugercin (2016), Theorem 2.1, for Businger-Golub pivoting.
      const double qdeim_bound =
          std::sqrt(nd - md + 1) * std::sqrt(std::pow(4.0, md) + 6 * md - 1) / 3;
      EXPECT_LE(deim(U, DeimMethod::qdeim).error_constant, qdeim_bound) << "m = " << m;
      // Chaturantabut & Sorensen (2010), Lemma 3.2.
      const double deim_bound =
          std::pow(1 + std::sqrt(2 * nd), md - 1) / U.col(0).cwiseAbs().maxCoeff();
      EXPECT_LE(deim(U, DeimMethod::deim).error_constant, deim_bound) << "m = " << m;
    }
  }
  // A single column: both pick the largest |u_1|, and the constant is 1 / ||u_1||_inf.
  const Matrix u = random_orthonormal(n, 1, gen);
  Index top = 0;
  const double top_value = u.col(0).cwiseAbs().maxCoeff(&top);
  for (DeimMethod method : kMethods) {
    const DeimResult res = deim(u, method);
    EXPECT_EQ(res.indices, std::vector<Index>{top}) << to_string(method);
    EXPECT_TRUE(scalars_near(res.error_constant, 1.0 / top_value, 1e-14, Compare::relative));
  }
}


TEST(Deim, BadInputIsRejectedNamingTheValue) {
  auto message = [](const Matrix& U) {
    return testing::invalid_argument_message([&] { deim(U, DeimMethod::deim); });
  };
  auto contains = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  EXPECT_TRUE(contains(message(Matrix(0, 0)), "empty")) << message(Matrix(0, 0));
  EXPECT_TRUE(contains(message(Matrix(5, 0)), "5 x 0")) << message(Matrix(5, 0));
  EXPECT_TRUE(contains(message(Matrix::Identity(3, 5)), "m = 5"))
      << message(Matrix::Identity(3, 5));
  std::mt19937 gen(23);
  const Matrix U = random_orthonormal(30, 4, gen);
  EXPECT_TRUE(contains(message(Matrix(2.0 * U)), "not orthonormal")) << message(2.0 * U);
  Matrix nan = U;
  nan(11, 2) = std::nan("");
  EXPECT_TRUE(contains(message(nan), "U(11, 2) is nan")) << message(nan);
  Matrix dependent = U;
  dependent.col(3) = U.col(2);  // rank-deficient: not orthonormal either
  EXPECT_TRUE(contains(message(dependent), "not orthonormal")) << message(dependent);
  const DeimResult res = deim(U, DeimMethod::qdeim);
  EXPECT_TRUE(contains(testing::invalid_argument_message([&] { deim_approximation(res, Vector::Ones(29)); }),
                       "size 29"));
  for (DeimMethod m : kMethods) EXPECT_EQ(parse_deim_method(to_string(m)), m);
  EXPECT_TRUE(contains(testing::invalid_argument_message([] { parse_deim_method("gdeim"); }), "gdeim"));
}

}  // namespace
}  // namespace mor
