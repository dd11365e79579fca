// SPDX-License-Identifier: GPL-3.0-or-later
// POD: orthonormal (and W-orthonormal) bases, the training error equal to the discarded energy,
// the three methods recovering a matrix of known singular values and vectors, the energy
// criterion against the known spectrum, W-optimality, the automatic rule, and bad input.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "reduction/pod.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::scalars_near;

/// V^T W V = I to this (absolute): every method ends in a Householder QR or SVD.
constexpr double kOrthonormalTol = 1e-12;
/// The training error and the discarded energy agree to this fraction of ||X||_F^2: both are
/// sums of squares accurate to a few eps * ||X||_F^2.
constexpr double kEnergyTol = 1e-10;
/// svd: |sigma_i - s_i| <= this * s_1. A backward-stable SVD of X + E, ||E|| ~ p(n) eps s_1,
/// moves each singular value by at most ||E|| (Weyl); X itself carries rounding of that size.
constexpr double kSvdValueTol = 1e-12;
/// snapshots: |sigma_i^2 - s_i^2| <= this * s_1^2. The eigenvalues of X^T X are as accurate as
/// the svd's singular values squared, relative to s_1^2 (the method squares the condition).
constexpr double kSnapshotsValueTol = 1e-12;
/// ||V V^T - V_exact V_exact^T||_2 for the svd: Wedin's bound ||E|| / (s_r - s_{r+1}), about
/// 1e-14 / 0.012 here.
constexpr double kSvdSubspaceTol = 1e-10;
/// The same for the method of snapshots: the eigenvectors of X^T X err by at most about
/// k eps s_1^2 / (s_r^2 - s_{r+1}^2) ~ 1e-11 here (1e-14 measured).
constexpr double kSnapshotsSubspaceTol = 1e-10;
/// Randomized: not rounding but the sketch limits the accuracy. With l = r + p columns and q
/// power iterations the error in the leading r-subspace decays like (s_{l+1} / s_r)^(2q+1)
/// times a modest constant of the Gaussian sketch (HMT 2011, Sec. 10.4): with s_i = 0.7^i,
/// r = 10, p = 10, q = 2 that is 0.7^55 ~ 3e-9 here; fixed seed, so the test is deterministic.
constexpr double kRandomizedTol = 1e-6;

const std::vector<PodMethod> kMethods = {PodMethod::svd, PodMethod::snapshots,
                                         PodMethod::randomized};

/// n x c with orthonormal columns, spanning a random subspace.
Matrix random_orthonormal(Index n, Index c, std::mt19937& gen) {
  Eigen::HouseholderQR<Matrix> qr(testing::random_normal(n, c, gen));
  return qr.householderQ() * Matrix::Identity(n, c);
}

/// X = Q1 diag(s) Q2^T (n x k) with random orthonormal Q1 (n x len(s)) and Q2 (k x len(s)).
struct KnownSvd {
  Matrix X, Q1;
  Vector s;
};
KnownSvd known_svd(Index n, Index k, const Vector& s, unsigned seed) {
  std::mt19937 gen(seed);
  KnownSvd d;
  d.s = s;
  d.Q1 = random_orthonormal(n, s.size(), gen);
  const Matrix Q2 = random_orthonormal(k, s.size(), gen);
  d.X = d.Q1 * s.asDiagonal() * Q2.transpose();
  return d;
}

/// s_i = ratio^i, i = 0 .. count - 1.
Vector geometric(Index count, double ratio) {
  Vector s(count);
  for (Index i = 0; i < count; ++i) s(i) = std::pow(ratio, static_cast<double>(i));
  return s;
}

/// ||V1 V1^T - V2 V2^T||_2 for orthonormal V1, V2 of equal width: the sine of the largest
/// principal angle, sigma_max((I - V1 V1^T) V2).
double subspace_distance(const Matrix& V1, const Matrix& V2) {
  const Matrix R = V2 - V1 * (V1.transpose() * V2);
  return Eigen::JacobiSVD<Matrix>(R).singularValues()(0);
}

PodOptions with_order(Index r, PodMethod method) {
  PodOptions o;
  o.order = r;
  o.method = method;
  return o;
}

PodOptions with_energy(double e, PodMethod method) {
  PodOptions o;
  o.energy = e;
  o.method = method;
  return o;
}

/// Weights in [0.5, 2], like the masses of an inhomogeneous chain.
Vector random_weights(Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unif(0.5, 2.0);
  Vector w(n);
  for (Index i = 0; i < n; ++i) w(i) = unif(gen);
  return w;
}

TEST(Pod, BasisIsOrthonormalForEveryMethod) {
  // s_i = 0.5^i down to 2e-12: the columns X Y S^{-1} of the method of snapshots would lose
  // orthogonality like eps (s_1 / s_r)^2 without its QR step.
  const KnownSvd d = known_svd(120, 40, geometric(40, 0.5), 3);
  const Vector w = random_weights(120, 4);
  for (PodMethod method : kMethods) {
    for (const PodOptions& o : {with_order(8, method), with_energy(1.0, method)}) {
      const PodResult res = pod(d.X, o);
      const Index r = res.r;
      EXPECT_TRUE(
          matrices_near(Matrix(res.V.transpose() * res.V), Matrix::Identity(r, r), kOrthonormalTol))
          << to_string(method) << ", r = " << r;
      const PodResult rw = pod(d.X, o, &w);
      EXPECT_TRUE(matrices_near(Matrix(rw.V.transpose() * w.asDiagonal() * rw.V),
                                Matrix::Identity(rw.r, rw.r), kOrthonormalTol))
          << to_string(method) << " weighted, r = " << rw.r;
      EXPECT_EQ(res.method_used, method);
    }
  }
}

TEST(Pod, TrainingErrorEqualsTheDiscardedEnergy) {
  // Random snapshots of full rank with a slowly decaying spectrum.
  std::mt19937 gen(7);
  const Matrix X = testing::random_normal(150, 50, gen) * geometric(50, 0.9).asDiagonal();
  const Vector w = random_weights(150, 8);
  for (PodMethod method : kMethods) {
    for (Index r : {1, 3, 10, 30}) {
      for (const Vector* weights : {static_cast<const Vector*>(nullptr), &w}) {
        const PodResult res = pod(X, with_order(r, method), weights);
        const Vector sw = weights ? Vector(weights->cwiseSqrt()) : Vector::Ones(X.rows());
        const Vector ww = sw.cwiseAbs2();
        // ||X - V V^T W X||_W,F^2 with the W-orthogonal projector onto span(V).
        const Matrix E = X - res.V * (res.V.transpose() * ww.asDiagonal() * X);
        const double error = (sw.asDiagonal() * E).squaredNorm();
        const double total = (sw.asDiagonal() * X).squaredNorm();
        EXPECT_TRUE(scalars_near(error, res.discarded_energy, kEnergyTol * total))
            << to_string(method) << ", r = " << r << (weights ? ", weighted" : "");
        EXPECT_TRUE(
            scalars_near(res.captured_energy + res.discarded_energy / total, 1.0, kEnergyTol))
            << to_string(method) << ", r = " << r;
      }
    }
  }
}

TEST(Pod, MethodsRecoverAKnownSpectrumAndSubspace) {
  const Index r = 10;
  const KnownSvd d = known_svd(300, 60, geometric(60, 0.7), 11);
  const Matrix exact = d.Q1.leftCols(r);

  const PodResult svd = pod(d.X, with_order(r, PodMethod::svd));
  ASSERT_EQ(svd.singular_values.size(), 60);
  EXPECT_TRUE(matrices_near(svd.singular_values, d.s, kSvdValueTol * d.s(0)));
  EXPECT_LE(subspace_distance(exact, svd.V), kSvdSubspaceTol);

  const PodResult snap = pod(d.X, with_order(r, PodMethod::snapshots));
  // It resolves the values above sqrt(max(n, k) eps) * s_1 = 2.6e-7 here: s_0 .. s_42 (s_42 =
  // 3.1e-7, s_43 = 2.2e-7, far apart compared with their errors of eps / (2 s) ~ 4e-10).
  const Index resolved = snap.singular_values.size();
  EXPECT_EQ(resolved, (d.s.array() > pod_snapshots_rank_tolerance(300, 60) * d.s(0)).count());
  EXPECT_EQ(resolved, 43);
  EXPECT_TRUE(matrices_near(Vector(snap.singular_values.cwiseAbs2()),
                            Vector(d.s.head(resolved).cwiseAbs2()),
                            kSnapshotsValueTol * d.s(0) * d.s(0)));
  EXPECT_LE(subspace_distance(exact, snap.V), kSnapshotsSubspaceTol);

  const PodResult rnd = pod(d.X, with_order(r, PodMethod::randomized));
  ASSERT_EQ(rnd.singular_values.size(), r + 10);  // l = r + oversampling
  EXPECT_TRUE(
      matrices_near(Vector(rnd.singular_values.head(r)), Vector(d.s.head(r)), kRandomizedTol));
  EXPECT_LE(subspace_distance(exact, rnd.V), kRandomizedTol);
  // The methods agree with one another, not only with the exact subspace.
  EXPECT_LE(subspace_distance(svd.V, snap.V), kSnapshotsSubspaceTol);
  EXPECT_LE(subspace_distance(svd.V, rnd.V), kRandomizedTol);
  // And the discarded energy is the known tail sum_{i>r} s_i^2.
  const double tail = d.s.tail(60 - r).squaredNorm(), total = d.s.squaredNorm();
  EXPECT_TRUE(scalars_near(svd.discarded_energy, tail, kEnergyTol * total));
  EXPECT_TRUE(scalars_near(snap.discarded_energy, tail, kEnergyTol * total));
  EXPECT_TRUE(scalars_near(rnd.discarded_energy, tail, kRandomizedTol * total));
}

// basis_columns: one call returns the basis of order r and the next modes after it (nested),
// for every method; r and the energies stay those of r; the width stops at the numerical rank.
TEST(Pod, BasisColumnsExtendTheBasisOfOrderR) {
  const Index r = 5, c = 12;
  const KnownSvd d = known_svd(300, 60, geometric(60, 0.7), 11);
  for (PodMethod method : kMethods) {
    const double tol = method == PodMethod::svd         ? kSvdSubspaceTol
                       : method == PodMethod::snapshots ? kSnapshotsSubspaceTol
                                                        : kRandomizedTol;
    PodOptions o = with_order(r, method);
    const PodResult plain = pod(d.X, o);
    o.basis_columns = c;
    const PodResult wide = pod(d.X, o);
    ASSERT_EQ(wide.V.cols(), c) << to_string(method);
    EXPECT_EQ(wide.r, r) << to_string(method);
    EXPECT_TRUE(scalars_near(
        wide.discarded_energy, plain.discarded_energy,
        (method == PodMethod::randomized ? kRandomizedTol : kEnergyTol) * d.s.squaredNorm()))
        << to_string(method);
    EXPECT_TRUE(
        matrices_near(Matrix(wide.V.transpose() * wide.V), Matrix::Identity(c, c), kOrthonormalTol))
        << to_string(method);
    EXPECT_LE(subspace_distance(plain.V, wide.V.leftCols(r)), tol) << to_string(method);
    EXPECT_LE(subspace_distance(d.Q1.leftCols(c), wide.V), tol) << to_string(method);
  }
  // Rank 8: at most 8 columns, whatever basis_columns asks.
  const KnownSvd low = known_svd(200, 40, geometric(8, 0.5), 5);
  for (PodMethod method : kMethods) {
    PodOptions o = with_order(r, method);
    o.basis_columns = 20;
    EXPECT_EQ(pod(low.X, o).V.cols(), 8) << to_string(method);
  }
  PodOptions bad = with_order(r, PodMethod::svd);
  bad.basis_columns = -1;
  EXPECT_THROW(pod(d.X, bad), InvalidArgument);
}

TEST(Pod, PowerIterationsSharpenTheRandomizedSubspace) {
  // A slow decay, where a plain sketch (q = 0) is poor: each pass must help.
  const KnownSvd d = known_svd(400, 100, geometric(100, 0.9), 12);
  const Matrix exact = d.Q1.leftCols(5);
  PodOptions o = with_order(5, PodMethod::randomized);
  double previous = 1.0;
  for (Index q : {0, 1, 2, 4}) {
    o.power_iterations = q;
    const double dist = subspace_distance(exact, pod(d.X, o).V);
    EXPECT_LT(dist, previous) << "q = " << q;
    previous = dist;
  }
  EXPECT_LE(previous, 1e-3);  // (s_16 / s_5)^9 = 0.9^99 ~ 3e-5, times the sketch constant
}

TEST(Pod, LanczosServesAFewModesOfManySnapshots) {
  // k = 250 >= 200 and r = 8 <= k / 10: the snapshots method uses Spectra's Lanczos solver for
  // the 8 leading eigenpairs only (so it reports 8 singular values).
  const KnownSvd d = known_svd(400, 250, geometric(120, 0.85), 13);
  const PodResult svd = pod(d.X, with_order(8, PodMethod::svd));
  const PodResult snap = pod(d.X, with_order(8, PodMethod::snapshots));
  ASSERT_EQ(snap.singular_values.size(), 8);
  EXPECT_TRUE(matrices_near(Vector(snap.singular_values.cwiseAbs2()),
                            Vector(d.s.head(8).cwiseAbs2()), kSnapshotsValueTol * d.s(0) * d.s(0)));
  EXPECT_LE(subspace_distance(svd.V, snap.V), kSnapshotsSubspaceTol);
  EXPECT_LE(subspace_distance(d.Q1.leftCols(8), snap.V), kSnapshotsSubspaceTol);
  EXPECT_TRUE(
      matrices_near(Matrix(snap.V.transpose() * snap.V), Matrix::Identity(8, 8), kOrthonormalTol));
}

TEST(Pod, EnergyPicksTheSmallestSufficientOrder) {
  const KnownSvd d = known_svd(200, 60, geometric(60, 0.7), 17);
  const double total = d.s.squaredNorm();
  for (double energy : {0.3, 0.5, 0.9, 0.99, 0.99999}) {
    // The smallest r with sum_{i<=r} s_i^2 >= energy * total, from the known spectrum.
    Index expected = 0;
    double sum = 0.0;
    while (sum < energy * total) sum += d.s(expected) * d.s(expected), ++expected;
    // Away from a tie, so that rounding cannot decide the answer.
    ASSERT_GT(std::abs(sum / total - energy), 1e-6) << energy;
    for (PodMethod method : kMethods) {
      const PodResult res = pod(d.X, with_energy(energy, method));
      EXPECT_EQ(res.r, expected) << to_string(method) << ", energy = " << energy;
      EXPECT_GE(res.captured_energy, energy) << to_string(method);
    }
  }
  // energy = 1 keeps the numerical rank: all 60 values for the svd (s_60 = 7e-10 s_1), only
  // a rank-37 matrix's 37 for a rank-37 matrix.
  EXPECT_EQ(pod(d.X, with_energy(1.0, PodMethod::svd)).r, 60);
  const KnownSvd low = known_svd(200, 60, geometric(37, 0.8), 18);
  for (PodMethod method : kMethods)
    EXPECT_EQ(pod(low.X, with_energy(1.0, method)).r, 37) << to_string(method);
}

TEST(Pod, WeightedBasisIsOptimalInTheWeightedNorm) {
  std::mt19937 gen(21);
  const Matrix X = testing::random_normal(80, 30, gen) * geometric(30, 0.8).asDiagonal();
  const Vector w = random_weights(80, 22);
  const Index r = 6;
  // error of the W-orthogonal projection of X onto span(V), in the W-norm
  auto weighted_error = [&](const Matrix& V) {
    const Matrix G = V.transpose() * w.asDiagonal() * V;
    const Matrix E = X - V * G.ldlt().solve(V.transpose() * w.asDiagonal() * X);
    return (w.cwiseSqrt().asDiagonal() * E).squaredNorm();
  };
  const PodResult weighted = pod(X, with_order(r, PodMethod::svd), &w);
  const PodResult plain = pod(X, with_order(r, PodMethod::svd));
  // Eckart-Young in the W-norm: no other r-dimensional subspace does better.
  const double best = weighted_error(weighted.V);
  EXPECT_LT(best, weighted_error(plain.V));
  EXPECT_LT(best, weighted_error(plain.V + 0.01 * testing::random_normal(80, r, gen)));
  // Constant weights m (the chain's M = m I) give the Euclidean subspace, V scaled by m^{-1/2}.
  const double m = 2.5;
  const Vector constant = Vector::Constant(80, m);
  const PodResult scaled = pod(X, with_order(r, PodMethod::svd), &constant);
  EXPECT_LE(subspace_distance(plain.V, Matrix(std::sqrt(m) * scaled.V)), kSvdSubspaceTol);
  EXPECT_TRUE(scalars_near(scaled.discarded_energy, m * plain.discarded_energy,
                           kEnergyTol * m * X.squaredNorm()));
}

TEST(Pod, AutomaticRuleFollowsItsDocumentation) {
  EXPECT_EQ(automatic_pod_method(1000, 100, true), PodMethod::svd);          // n k = 1e5
  EXPECT_EQ(automatic_pod_method(20000, 1000, true), PodMethod::svd);        // n k = 2e7
  EXPECT_EQ(automatic_pod_method(20001, 1000, true), PodMethod::snapshots);  // just above
  EXPECT_EQ(automatic_pod_method(100000, 4000, false), PodMethod::snapshots);
  EXPECT_EQ(automatic_pod_method(100000, 4001, true), PodMethod::randomized);
  EXPECT_EQ(automatic_pod_method(100000, 4001, false), PodMethod::svd);  // energy: every s_i
  EXPECT_EQ(automatic_pod_method(40000, 10001, true), PodMethod::svd);   // k > n / 4
  std::mt19937 gen(1);
  PodOptions o;
  o.order = 2;
  EXPECT_EQ(pod(testing::random_normal(30, 10, gen), o).method_used, PodMethod::svd);
}

TEST(Pod, MethodNamesRoundTrip) {
  for (PodMethod m :
       {PodMethod::automatic, PodMethod::svd, PodMethod::snapshots, PodMethod::randomized})
    EXPECT_EQ(parse_pod_method(to_string(m)), m);
  EXPECT_THROW(parse_pod_method("qr"), InvalidArgument);
}

TEST(Pod, OrderAboveTheRankIsRejectedNamingBoth) {
  const KnownSvd d = known_svd(100, 80, geometric(57, 0.95), 31);
  for (PodMethod method : kMethods) {
    const std::string msg =
        testing::invalid_argument_message([&] { pod(d.X, with_order(80, method)); });
    EXPECT_NE(msg.find("r = 80"), std::string::npos) << to_string(method) << ": " << msg;
    EXPECT_NE(msg.find("rank 57"), std::string::npos) << to_string(method) << ": " << msg;
    EXPECT_NO_THROW(pod(d.X, with_order(57, method))) << to_string(method);
    // order_up_to_rank: the order is an upper bound, lowered to the rank 57; below it, exact.
    PodOptions capped = with_order(80, method);
    capped.order_up_to_rank = true;
    const PodResult at_rank = pod(d.X, capped);
    EXPECT_EQ(at_rank.r, 57) << to_string(method);
    EXPECT_EQ(at_rank.V.cols(), 57) << to_string(method);
    capped.order = 30;
    EXPECT_EQ(pod(d.X, capped).r, 30) << to_string(method);
  }
}

TEST(Pod, BadInputIsRejectedNamingTheValue) {
  std::mt19937 gen(41);
  const Matrix X = testing::random_normal(20, 8, gen);
  auto message = [](const Matrix& S, const PodOptions& o, const Vector* w = nullptr) {
    return testing::invalid_argument_message([&] { pod(S, o, w); });
  };
  auto contains = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos;
  };
  const PodOptions r3 = with_order(3, PodMethod::automatic);
  EXPECT_TRUE(contains(message(Matrix(0, 5), r3), "0 x 5")) << message(Matrix(0, 5), r3);
  EXPECT_TRUE(contains(message(Matrix(5, 0), r3), "5 x 0")) << message(Matrix(5, 0), r3);
  Matrix bad = X;
  bad(3, 7) = std::nan("");
  EXPECT_TRUE(contains(message(bad, r3), "(3, 7) is nan")) << message(bad, r3);
  bad(3, 7) = X(3, 7);
  bad(12, 5) = -std::numeric_limits<double>::infinity();
  EXPECT_TRUE(contains(message(bad, r3), "(12, 5) is -inf")) << message(bad, r3);
  EXPECT_TRUE(contains(message(Matrix::Zero(20, 8), r3), "zero"));
  for (double e : {0.0, 1.5, -0.2}) {
    const std::string msg = message(X, with_energy(e, PodMethod::svd));
    std::ostringstream value;
    value << "energy = " << e;
    EXPECT_TRUE(contains(msg, value.str())) << msg;
  }
  EXPECT_TRUE(contains(message(X, with_order(0, PodMethod::svd)), "r = 0"));
  EXPECT_TRUE(contains(message(X, with_order(-2, PodMethod::svd)), "r = -2"));
  PodOptions both = r3;
  both.energy = 0.9;
  EXPECT_TRUE(contains(message(X, both), "both")) << message(X, both);
  EXPECT_TRUE(contains(message(X, PodOptions{}), "neither")) << message(X, PodOptions{});
  const Vector short_w = Vector::Ones(7);
  EXPECT_TRUE(contains(message(X, r3, &short_w), "7 weights")) << message(X, r3, &short_w);
  Vector negative = Vector::Ones(20);
  negative(2) = -1.0;
  EXPECT_TRUE(contains(message(X, r3, &negative), "w(2) = -1")) << message(X, r3, &negative);
  PodOptions narrow = with_order(6, PodMethod::randomized);
  narrow.randomized_rank = 4;
  EXPECT_TRUE(contains(message(X, narrow), "randomized_rank = 4")) << message(X, narrow);
  PodOptions negative_q = with_order(2, PodMethod::randomized);
  negative_q.power_iterations = -1;
  EXPECT_TRUE(contains(message(X, negative_q), "power_iterations = -1"));
}

}  // namespace
}  // namespace mor

namespace mor {
namespace {

// SIGINT during POD's dense stages (issue 29: 3.5 to 7.7 s at N = 5000 before): the SVD and the
// eigensolver run on a thread a stop abandons, A^T A is formed in blocks, so a stop request
// ends pod() within a second whatever stage it meets. The snapshot matrix takes seconds in
// each method's dense stage; the request comes 0.2 s after the call.
TEST(Pod, StopRequestEndsEveryStageWithinASecond) {
  std::mt19937 gen(29);
  std::normal_distribution<double> normal;
  Matrix X(4000, 1500);
  for (Index j = 0; j < X.cols(); ++j)
    for (Index i = 0; i < X.rows(); ++i) X(i, j) = normal(gen);
  for (PodMethod method : {PodMethod::svd, PodMethod::snapshots}) {
    PodOptions o;
    o.method = method;
    o.energy = 0.999;  // the dense stages: the full SVD, or A^T A and the dense eigensolver
    g_stop_requested.store(false);
    std::thread stopper([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      g_stop_requested.store(true);
    });
    const auto start = std::chrono::steady_clock::now();
    bool interrupted = false;
    try {
      pod(X, o);
    } catch (const Interrupted&) {
      interrupted = true;
    } catch (const std::exception& e) {
      ADD_FAILURE() << to_string(method) << ": " << e.what();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stopper.join();
    g_stop_requested.store(false);
    EXPECT_TRUE(interrupted) << to_string(method) << ": finished in " << seconds << " s";
    EXPECT_LT(seconds, 1.2) << to_string(method) << ": stopped " << seconds
                            << " s after the call, 0.2 s after the request";
    // The abandoned SVD or eigensolver runs on: let it end before the next stage (they would
    // share the cores) and before this process's exit handlers (src/core/interrupt.hpp).
    wait_for_abandoned_threads();
  }
}

}  // namespace
}  // namespace mor
