// SPDX-License-Identifier: GPL-3.0-or-later
// The tridiagonal SPD solver: backward error on model problems of every small size (the twisted
// layout's even/odd and rescaling branches) and large ones, agreement with LAPACK dpttrf/dpttrs
// and with CHOLMOD on the chain's iteration matrix, the LAPACK fallback for badly scaled
// matrices, aliasing, and the failure modes.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "models/mass_spring_chain.hpp"
#include "src/core/errors.hpp"
#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/linalg/tridiagonal_solver.hpp"
#include "support/chains.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

/// Normwise backward error ||A x - b|| / (||A|| ||x|| + ||b||) (infinity norms) that a stable
/// direct solver reaches: a small multiple of the unit roundoff, independent of the condition.
constexpr double kBackwardErrorTol = 1e-14;
/// Agreement of two stable solvers on a well-conditioned (diagonally dominant) system, relative.
constexpr double kAgreementTol = 1e-13;

struct Tridiagonal {
  Vector diag, off;
};

/// A x for A = tridiag(off, diag, off), computed directly.
Vector multiply(const Tridiagonal& A, const Vector& x) {
  const Index n = A.diag.size();
  Vector y = A.diag.cwiseProduct(x);
  for (Index i = 0; i + 1 < n; ++i) {
    y[i] += A.off[i] * x[i + 1];
    y[i + 1] += A.off[i] * x[i];
  }
  return y;
}

double backward_error(const Tridiagonal& A, const Vector& x, const Vector& b) {
  const Index n = A.diag.size();
  double norm_A = 0.0;
  for (Index i = 0; i < n; ++i) {
    double row = std::abs(A.diag[i]);
    if (i > 0) row += std::abs(A.off[i - 1]);
    if (i + 1 < n) row += std::abs(A.off[i]);
    norm_A = std::max(norm_A, row);
  }
  const double r = (multiply(A, x) - b).lpNorm<Eigen::Infinity>();
  return r / (norm_A * x.lpNorm<Eigen::Infinity>() + b.lpNorm<Eigen::Infinity>());
}

/// Diagonally dominant with random entries: d_i in [2.5, 3.5], e_i in [-1, 1], times scale.
Tridiagonal random_dominant(Index n, unsigned seed, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Tridiagonal A{Vector(n), Vector(std::max<Index>(n - 1, 0))};
  for (Index i = 0; i < n; ++i) A.diag[i] = scale * (3.0 + 0.5 * unit(gen));
  for (Index i = 0; i + 1 < n; ++i) A.off[i] = scale * unit(gen);
  return A;
}

/// The 1-D Laplacian tridiag(-1, 2, -1): SPD but not strictly dominant, condition ~ 0.4 n^2,
/// with minors p_i = i + 1 that grow only linearly (the pivots tend to 1).
Tridiagonal laplacian(Index n) {
  return {Vector::Constant(n, 2.0), Vector::Constant(std::max<Index>(n - 1, 0), -1.0)};
}

Vector random_vector(Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Vector b(n);
  for (Index i = 0; i < n; ++i) b[i] = unit(gen);
  return b;
}

Vector lapack_solution(const Tridiagonal& A, const Vector& b) {
  Vector d = A.diag, e = A.off, x = b;
  EXPECT_EQ(lapack_dpttrf(d, e), 0);
  lapack_dpttrs(d, e, x);
  return x;
}

std::vector<Index> sizes() {
  std::vector<Index> n;
  for (Index i = 1; i <= 40; ++i) n.push_back(i);  // every branch of the twisted layout
  for (Index i : {63, 64, 65, 1000, 1001, 100'000}) n.push_back(i);
  return n;
}

TEST(TridiagonalSolver, BackwardErrorAndAgreementWithLapackOnDominantMatrices) {
  for (Index n : sizes()) {
    const Tridiagonal A = random_dominant(n, static_cast<unsigned>(n));
    const Vector b = random_vector(n, 7u + static_cast<unsigned>(n));
    TridiagonalSpdSolver solver;
    solver.factorize(A.diag, A.off);
    EXPECT_FALSE(solver.used_lapack()) << "n = " << n;
    Vector x;
    solver.solve(b, x);
    EXPECT_LE(backward_error(A, x, b), kBackwardErrorTol) << "n = " << n;
    EXPECT_TRUE(matrices_near(x, lapack_solution(A, b), kAgreementTol, Compare::relative))
        << "n = " << n;
  }
}

TEST(TridiagonalSolver, BackwardErrorOnTheIllConditionedLaplacian) {
  // Condition up to 4e9 at n = 1e5: the solution agrees with LAPACK only to cond * eps, but the
  // backward error stays at the unit roundoff.
  for (Index n : sizes()) {
    const Tridiagonal A = laplacian(n);
    const Vector b = random_vector(n, 3u + static_cast<unsigned>(n));
    TridiagonalSpdSolver solver;
    solver.factorize(A.diag, A.off);
    Vector x;
    solver.solve(b, x);
    EXPECT_LE(backward_error(A, x, b), kBackwardErrorTol) << "n = " << n;
  }
}

TEST(TridiagonalSolver, RescalingKeepsLargeAndSmallScalesOnTheFastPath) {
  // Minors grow (or shrink) by about the scale per row: the powers-of-two rescaling keeps them
  // in range for scales up to ~2^70, so the fast path holds, and the solution scales exactly.
  for (double scale : {0x1p-60, 1e-12, 1e12, 0x1p60}) {
    const Index n = 10'001;
    const Tridiagonal A = random_dominant(n, 11u, scale);
    const Vector b = random_vector(n, 12u);
    TridiagonalSpdSolver solver;
    solver.factorize(A.diag, A.off);
    EXPECT_FALSE(solver.used_lapack()) << "scale " << scale;
    Vector x;
    solver.solve(b, x);
    EXPECT_LE(backward_error(A, x, b), kBackwardErrorTol) << "scale " << scale;
    EXPECT_TRUE(matrices_near(x, lapack_solution(A, b), kAgreementTol, Compare::relative))
        << "scale " << scale;
  }
}

TEST(TridiagonalSolver, MinorsOutOfRangeFallBackToLapack) {
  // Diagonal entries 2^200 next to O(1) rows: the minors leave [2^-900, 2^900] within a few rows.
  const Index n = 50;
  Tridiagonal A = random_dominant(n, 5u);
  for (Index i = 10; i < 20; ++i) A.diag[i] = 0x1p200;
  const Vector b = random_vector(n, 6u);
  TridiagonalSpdSolver solver;
  solver.factorize(A.diag, A.off);
  EXPECT_TRUE(solver.used_lapack());
  Vector x;
  solver.solve(b, x);
  EXPECT_LE(backward_error(A, x, b), kBackwardErrorTol);
  EXPECT_TRUE(matrices_near(x, lapack_solution(A, b), 0.0));  // the same LAPACK calls
  // The next well-scaled matrix is back on the fast path.
  solver.factorize(random_dominant(n, 8u).diag, random_dominant(n, 8u).off);
  EXPECT_FALSE(solver.used_lapack());
}

TEST(TridiagonalSolver, SolvesInPlaceAndRepeatedly) {
  const Index n = 101;
  const Tridiagonal A = random_dominant(n, 21u);
  TridiagonalSpdSolver solver;
  solver.factorize(A.diag, A.off);
  for (unsigned seed : {1u, 2u, 3u}) {
    const Vector b = random_vector(n, seed);
    Vector x;
    solver.solve(b, x);
    Vector y = b;
    solver.solve(y, y);
    EXPECT_TRUE(matrices_near(y, x, 0.0)) << "seed " << seed;
  }
}

TEST(TridiagonalSolver, AgreesWithCholmodOnTheChainIterationMatrix) {
  // The chain's Newton matrix S = M + h/2 D + h^2/4 (K + dg/dq) at a state with large
  // elongations (cubic springs dominant), factorized by the chain's two paths.
  for (Index N : {1, 2, 1000, 100'001}) {
    const MassSpringChain chain(testing::test_chain_parameters(N));
    Vector q(N);
    for (Index i = 0; i < N; ++i) q[i] = 2.0 * std::sin(0.4 * static_cast<double>(i));
    const double h = 0.05, a = 1.0, b = 0.5 * h, c = 0.25 * h * h;
    MassSpringChain::Workspace tridiagonal(chain);
    MassSpringChain::Workspace cholmod(chain, SparseBackend::cholmod, ChainSolver::sparse);
    tridiagonal.factorize_iteration(a, b, c, q);
    cholmod.factorize_iteration(a, b, c, q);
    const Vector r = random_vector(N, 31u);
    Vector x_tri, x_chol;
    tridiagonal.solve_iteration(r, x_tri);
    cholmod.solve_iteration(r, x_chol);
    EXPECT_TRUE(matrices_near(x_tri, x_chol, kAgreementTol, Compare::relative)) << "N = " << N;
    const SecondOrderSystem s = chain.linear_system();
    const SparseMatrix S = a * s.M + b * s.D + c * (s.K + chain.nonlinear_jacobian(q));
    EXPECT_TRUE(matrices_near(Vector(S * x_tri), r, kAgreementTol, Compare::relative))
        << "N = " << N;
  }
}

// ---------------------------------------------------------------------------------------------
// Streamed use: rows generated block by block, the factorization fused with the forward sweep.

/// The streamed factorization and sweeps of (A, b) on the solver: factorize_forward (or forward
/// if factorized already) and backward; the solution, or nothing if the factorization declined.
std::optional<Vector> streamed_solve(TridiagonalSpdSolver& solver, const Tridiagonal& A,
                                     const Vector& b, bool factorize,
                                     std::vector<Index>* seen = nullptr) {
  const Index n = A.diag.size();
  auto rows = [&](Index first, Index count, double* d, double* e, double* r) {
    EXPECT_TRUE(count >= 1 && count <= TridiagonalSpdSolver::kStreamBlock && first >= 0 &&
                first + count <= n)
        << first << " + " << count;
    for (Index i = 0; i < count; ++i) {
      d[i] = A.diag[first + i];
      r[i] = b[first + i];
    }
    for (Index i = 0; i <= count; ++i) {
      const Index j = first + i - 1;                         // e_j couples rows j and j + 1
      e[i] = j >= 0 && j + 1 < n ? A.off[j] : std::nan("");  // e_{-1}, e_{n-1}: never read
    }
  };
  auto rhs = [&](Index first, Index count, double* r) {
    for (Index i = 0; i < count; ++i) r[i] = b[first + i];
  };
  Vector y(n);
  if (factorize) {
    if (!solver.factorize_forward(n, rows, y.data())) return std::nullopt;
  } else {
    solver.forward(rhs, y.data());
  }
  Vector x = Vector::Constant(n, std::nan(""));
  std::vector<Index> count(static_cast<std::size_t>(n), 0);
  solver.backward(y.data(), [&](Index first, Index len, const double* z) {
    for (Index i = 0; i < len; ++i) {
      x[first + i] = z[i];
      ++count[static_cast<std::size_t>(first + i)];
    }
  });
  for (Index i = 0; i < n; ++i)
    EXPECT_EQ(count[static_cast<std::size_t>(i)], 1) << "row " << i << " of n = " << n;
  if (seen) *seen = count;
  return x;
}

TEST(TridiagonalSolver, StreamedFactorizationAndSweepsAreThePlainOnes) {
  // The same recurrences in the same order: the pivots and both sweeps equal the plain path's
  // bit for bit, at every size (each branch of the twisted layout, block boundaries at 128).
  std::vector<Index> ns = sizes();
  for (Index n : {127, 128, 129, 255, 256, 257, 258, 513}) ns.push_back(n);
  for (Index n : ns) {
    for (const Tridiagonal& A : {random_dominant(n, static_cast<unsigned>(n)), laplacian(n)}) {
      const Vector b = random_vector(n, 7u + static_cast<unsigned>(n));
      const Vector b2 = random_vector(n, 9u + static_cast<unsigned>(n));
      TridiagonalSpdSolver plain, streamed;
      plain.factorize(A.diag, A.off);
      ASSERT_FALSE(plain.used_lapack()) << "n = " << n;
      Vector x, x2;
      plain.solve(b, x);
      plain.solve(b2, x2);
      const std::optional<Vector> s = streamed_solve(streamed, A, b, true);
      ASSERT_TRUE(s.has_value()) << "n = " << n;
      EXPECT_TRUE(streamed.twisted());
      EXPECT_TRUE(matrices_near(*s, x, 0.0)) << "n = " << n;
      EXPECT_LE(backward_error(A, *s, b), kBackwardErrorTol) << "n = " << n;
      // A second right-hand side through the streamed forward sweep alone.
      EXPECT_TRUE(matrices_near(*streamed_solve(streamed, A, b2, false), x2, 0.0)) << "n = " << n;
    }
  }
}

TEST(TridiagonalSolver, StreamedFactorizationDeclinesWhereThePlainOneFallsBackToLapack) {
  // Minors out of range (as MinorsOutOfRangeFallBackToLapack) and an indefinite matrix: the
  // streamed factorization declines and holds nothing, so the streamed sweeps refuse.
  const Index n = 300;
  Tridiagonal A = random_dominant(n, 5u);
  for (Index i = 200; i < 210; ++i) A.diag[i] = 0x1p200;
  Tridiagonal B = random_dominant(n, 6u);
  B.off.setZero();
  B.diag[150] = -1.0;  // the twist row k = 149's neighbour
  Tridiagonal C = random_dominant(n, 7u);
  C.diag[149] = -1.0;  // the twist row itself
  C.off.setZero();
  for (const Tridiagonal* M : {&A, &B, &C}) {
    TridiagonalSpdSolver solver;
    EXPECT_FALSE(streamed_solve(solver, *M, random_vector(n, 1u), true).has_value());
    EXPECT_FALSE(solver.twisted());
    Vector y(n);
    EXPECT_THROW(solver.forward([](Index, Index, double*) {}, y.data()), InvalidArgument);
    EXPECT_THROW(solver.backward(y.data(), [](Index, Index, const double*) {}), InvalidArgument);
  }
  // After the plain factorization's LAPACK fallback, too.
  TridiagonalSpdSolver solver;
  solver.factorize(A.diag, A.off);
  ASSERT_TRUE(solver.used_lapack());
  EXPECT_FALSE(solver.twisted());
}

// ---------------------------------------------------------------------------------------------
// Failure modes: the offending values are named.

std::string numerical_error(const Tridiagonal& A) {
  TridiagonalSpdSolver solver;
  try {
    solver.factorize(A.diag, A.off);
  } catch (const NumericalError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TridiagonalSolver, NotPositiveDefiniteNamesTheRowAndPivot) {
  Tridiagonal A = random_dominant(30, 41u);
  A.off.setZero();
  A.diag[17] = -2.5;  // pivot -2.5 exactly at row 17 (diagonal matrix)
  const std::string message = numerical_error(A);
  EXPECT_NE(message.find("not positive definite"), std::string::npos) << message;
  EXPECT_NE(message.find("pivot -2.5 <= 0 at row 17"), std::string::npos) << message;
  // Indefinite with a positive diagonal: [[1, 2], [2, 1]] has eigenvalues 3 and -1.
  const std::string two = numerical_error({Vector::Constant(2, 1.0), Vector::Constant(1, 2.0)});
  EXPECT_NE(two.find("pivot -3 <= 0 at row 1"), std::string::npos) << two;
}

TEST(TridiagonalSolver, NonFiniteEntriesAreNamed) {
  Tridiagonal A = random_dominant(20, 43u);
  A.diag[4] = std::nan("");
  std::string message = numerical_error(A);
  EXPECT_NE(message.find("diagonal entry 4 is not finite: nan"), std::string::npos) << message;
  A = random_dominant(20, 43u);
  A.off[9] = INFINITY;
  message = numerical_error(A);
  EXPECT_NE(message.find("off-diagonal entry 9 is not finite: inf"), std::string::npos) << message;
}

TEST(TridiagonalSolver, BadSizesAndOrderAreInvalidArguments) {
  TridiagonalSpdSolver solver;
  Vector x;
  EXPECT_THROW(solver.solve(Vector::Ones(3), x), InvalidArgument);  // nothing factorized
  EXPECT_THROW(solver.factorize(Vector(), Vector()), InvalidArgument);
  try {
    solver.factorize(Vector::Ones(5), Vector::Zero(5));
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("off-diagonal has 5 entries, the diagonal 5"),
              std::string::npos)
        << e.what();
  }
  solver.factorize(Vector::Ones(5), Vector::Zero(4));
  try {
    solver.solve(Vector::Ones(4), x);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("size 4 for a matrix of size 5"), std::string::npos)
        << e.what();
  }
  // A failed factorization leaves nothing to solve with.
  EXPECT_THROW(solver.factorize(-Vector::Ones(5), Vector::Zero(4)), NumericalError);
  EXPECT_THROW(solver.solve(Vector::Ones(5), x), InvalidArgument);
}

}  // namespace
}  // namespace mor
