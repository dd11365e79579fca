// SPDX-License-Identifier: GPL-3.0-or-later
// The sparse direct solvers, one parameterised test over every backend: backward error on
// model problems, the analyse-once / refactorize-many cycle of Newton iterations, several
// right-hand sides, aliasing, failure modes, and agreement with Eigen's dense solvers.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "src/core/errors.hpp"
#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "support/compare.hpp"

namespace mor {

/// Lets GoogleTest print a backend by name in failure messages.
void PrintTo(SparseBackend backend, std::ostream* os) {
  *os << to_string(backend);
}

namespace {

using testing::Compare;
using testing::matrices_near;

/// Normwise backward error ||A x - b|| / (||A|| ||x|| + ||b||) (infinity norms) that a stable
/// direct solver reaches: a small multiple of the unit roundoff.
constexpr double kBackwardErrorTol = 1e-13;
/// Agreement of a sparse and a dense solve of a well-conditioned n = 50 system.
constexpr double kDenseAgreementTol = 1e-12;

// ---------------------------------------------------------------------------------------------
// Test matrices

/// 5-point Laplacian on an m x m grid (n = m^2), Dirichlet boundary, scaled by h^2: SPD with
/// eigenvalues in (0, 8).
SparseMatrix laplacian_2d(int m) {
  std::vector<Triplet> t;
  const auto id = [m](int i, int j) { return i * m + j; };
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      t.emplace_back(id(i, j), id(i, j), 4.0);
      if (i > 0) t.emplace_back(id(i, j), id(i - 1, j), -1.0);
      if (i + 1 < m) t.emplace_back(id(i, j), id(i + 1, j), -1.0);
      if (j > 0) t.emplace_back(id(i, j), id(i, j - 1), -1.0);
      if (j + 1 < m) t.emplace_back(id(i, j), id(i, j + 1), -1.0);
    }
  }
  SparseMatrix A(m * m, m * m);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  return A;
}

/// 7-point Laplacian on an m x m x m grid, scaled by h^2: SPD with eigenvalues in (0, 12). Its
/// factor is dense enough that CHOLMOD switches to its supernodal method (the 2-D problems here
/// stay simplicial), which has its own solve path and workspaces.
SparseMatrix laplacian_3d(int m) {
  std::vector<Triplet> t;
  const auto id = [m](int i, int j, int k) { return (i * m + j) * m + k; };
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      for (int k = 0; k < m; ++k) {
        t.emplace_back(id(i, j, k), id(i, j, k), 6.0);
        if (i > 0) t.emplace_back(id(i, j, k), id(i - 1, j, k), -1.0);
        if (i + 1 < m) t.emplace_back(id(i, j, k), id(i + 1, j, k), -1.0);
        if (j > 0) t.emplace_back(id(i, j, k), id(i, j - 1, k), -1.0);
        if (j + 1 < m) t.emplace_back(id(i, j, k), id(i, j + 1, k), -1.0);
        if (k > 0) t.emplace_back(id(i, j, k), id(i, j, k - 1), -1.0);
        if (k + 1 < m) t.emplace_back(id(i, j, k), id(i, j, k + 1), -1.0);
      }
    }
  }
  SparseMatrix A(m * m * m, m * m * m);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  return A;
}

/// -Laplace(u) + c . grad(u) with central differences on an m x m grid: unsymmetric, same
/// pattern as laplacian_2d. peclet = |c| h / 2; above 1 the matrix loses diagonal dominance.
SparseMatrix convection_diffusion_2d(int m, double peclet) {
  std::vector<Triplet> t;
  const auto id = [m](int i, int j) { return i * m + j; };
  const double cx = peclet, cy = 0.5 * peclet;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      t.emplace_back(id(i, j), id(i, j), 4.0);
      if (i > 0) t.emplace_back(id(i, j), id(i - 1, j), -1.0 - cy);
      if (i + 1 < m) t.emplace_back(id(i, j), id(i + 1, j), -1.0 + cy);
      if (j > 0) t.emplace_back(id(i, j), id(i, j - 1), -1.0 - cx);
      if (j + 1 < m) t.emplace_back(id(i, j), id(i, j + 1), -1.0 + cx);
    }
  }
  SparseMatrix A(m * m, m * m);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  return A;
}

/// A + sigma I for A with a full diagonal: the same pattern, new values (a Newton Jacobian
/// M + gamma K changes exactly like this between steps).
SparseMatrix shifted(const SparseMatrix& A, double sigma) {
  SparseMatrix B = A;
  for (int j = 0; j < B.outerSize(); ++j) B.coeffRef(j, j) += sigma;
  return B;
}

/// A with the values of row and column j set to zero but kept in the pattern: singular for every
/// backend, with the same pattern as A.
SparseMatrix zero_row_and_column(const SparseMatrix& A, int j) {
  SparseMatrix B = A;
  for (int c = 0; c < B.outerSize(); ++c) {
    for (SparseMatrix::InnerIterator it(B, c); it; ++it) {
      if (it.row() == j || it.col() == j) it.valueRef() = 0.0;
    }
  }
  return B;
}

/// Random sparse n x n matrix with about `per_column` off-diagonal entries per column and a
/// strictly dominant positive diagonal: nonsingular, and SPD if symmetric. Fixed seed.
SparseMatrix random_sparse(int n, int per_column, bool symmetric, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> row(0, n - 1);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<Triplet> t;
  Vector row_sum = Vector::Zero(n);
  for (int j = 0; j < n; ++j) {
    for (int e = 0; e < per_column; ++e) {
      const int i = row(gen);
      if (i == j) continue;
      const double v = value(gen);
      t.emplace_back(i, j, v);
      row_sum[i] += std::abs(v);
      if (symmetric) {
        t.emplace_back(j, i, v);
        row_sum[j] += std::abs(v);
      }
    }
  }
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, row_sum[i] + 0.5 + std::abs(value(gen)));
  SparseMatrix A(n, n);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  return A;
}

Vector random_vector(Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Vector v(n);
  for (Index i = 0; i < n; ++i) v[i] = value(gen);
  return v;
}

double norm_inf(const SparseMatrix& A) {
  return (A.cwiseAbs() * Vector::Ones(A.cols())).maxCoeff();
}

/// Normwise backward error of x as a solution of A x = b.
double backward_error(const SparseMatrix& A, const Vector& x, const Vector& b) {
  const double r = (A * x - b).lpNorm<Eigen::Infinity>();
  return r / (norm_inf(A) * x.lpNorm<Eigen::Infinity>() + b.lpNorm<Eigen::Infinity>());
}

::testing::AssertionResult solves_accurately(const SparseMatrix& A, const Vector& x,
                                             const Vector& b) {
  if (x.size() != b.size())
    return ::testing::AssertionFailure() << "x has " << x.size() << " entries, b " << b.size();
  const double eta = backward_error(A, x, b);
  if (eta <= kBackwardErrorTol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "backward error " << eta << " exceeds tolerance " << kBackwardErrorTol;
}

// ---------------------------------------------------------------------------------------------
// Fixtures: every backend, the LU backends (any nonsingular A), the SPD backends.

class SparseSolverTest : public ::testing::TestWithParam<SparseBackend> {
 protected:
  std::unique_ptr<SparseSolver> solver_ = make_sparse_solver(GetParam());
};
class LuSolverTest : public SparseSolverTest {};
class SpdSolverTest : public SparseSolverTest {};

const std::vector<SparseBackend> kAll = {SparseBackend::cholmod, SparseBackend::umfpack,
                                         SparseBackend::klu, SparseBackend::eigen_ldlt,
                                         SparseBackend::eigen_lu};

/// The backends for which requires_spd() equals spd.
std::vector<SparseBackend> backends_where(bool spd) {
  std::vector<SparseBackend> out;
  for (const SparseBackend b : kAll)
    if (requires_spd(b) == spd) out.push_back(b);
  return out;
}

std::string backend_name(const ::testing::TestParamInfo<SparseBackend>& info) {
  return std::string(to_string(info.param));
}

constexpr int kGrid = 60;  // n = 3600 unknowns

TEST_P(SparseSolverTest, ReportsBackendAndSize) {
  EXPECT_EQ(solver_->backend(), GetParam());
  EXPECT_EQ(solver_->rows(), 0);
  solver_->analyze_pattern(laplacian_2d(4));
  EXPECT_EQ(solver_->rows(), 16);
}

TEST_P(SparseSolverTest, SolvesLaplacianToBackwardErrorTolerance) {
  const SparseMatrix A = laplacian_2d(kGrid);
  const Vector b = random_vector(A.rows(), 1);
  solver_->analyze_pattern(A);
  solver_->factorize(A);
  Vector x;
  solver_->solve(b, x);
  EXPECT_TRUE(solves_accurately(A, x, b));
}

TEST_P(SparseSolverTest, RefactorizesSamePatternWithNewValues) {
  // The Newton use: one analysis, then a numeric factorization per iteration.
  const SparseMatrix A = laplacian_2d(kGrid);
  solver_->analyze_pattern(A);
  Vector x_previous;
  unsigned seed = 10;
  for (const double sigma : {0.0, 0.5, 1e-3, 10.0, 0.0, 3.0}) {
    const SparseMatrix As = shifted(A, sigma);
    const Vector b = random_vector(A.rows(), ++seed);
    solver_->factorize(As);
    Vector x;
    solver_->solve(b, x);
    EXPECT_TRUE(solves_accurately(As, x, b)) << "sigma = " << sigma;
  }
}

TEST_P(SparseSolverTest, SolvesMultipleRightHandSides) {
  const SparseMatrix A = shifted(laplacian_2d(kGrid), 0.25);
  solver_->analyze_pattern(A);
  solver_->factorize(A);
  // 5 columns: CHOLMOD's simplicial solve works in blocks of 4, so a partial block is covered.
  Matrix B(A.rows(), 5);
  for (Index j = 0; j < B.cols(); ++j) B.col(j) = random_vector(A.rows(), 100 + j);
  Matrix X;
  solver_->solve(B, X);
  ASSERT_EQ(X.rows(), A.rows());
  ASSERT_EQ(X.cols(), B.cols());
  for (Index j = 0; j < B.cols(); ++j) {
    EXPECT_TRUE(solves_accurately(A, X.col(j), B.col(j))) << "column " << j;
    Vector x;
    solver_->solve(Vector(B.col(j)), x);
    EXPECT_TRUE(matrices_near(X.col(j), x, 1e-14, Compare::relative)) << "column " << j;
  }
}

TEST_P(SparseSolverTest, SolutionMayAliasRightHandSide) {
  const SparseMatrix A = shifted(laplacian_2d(kGrid), 0.25);
  solver_->analyze_pattern(A);
  solver_->factorize(A);
  const Vector b = random_vector(A.rows(), 7);
  Vector x_separate;
  solver_->solve(b, x_separate);
  Vector bx = b;
  solver_->solve(bx, bx);
  EXPECT_TRUE(solves_accurately(A, bx, b));
  EXPECT_TRUE(matrices_near(bx, x_separate, 1e-14, Compare::relative));

  Matrix B(A.rows(), 3);
  for (Index j = 0; j < B.cols(); ++j) B.col(j) = random_vector(A.rows(), 20 + j);
  Matrix BX = B;
  solver_->solve(BX, BX);
  for (Index j = 0; j < B.cols(); ++j)
    EXPECT_TRUE(solves_accurately(A, BX.col(j), B.col(j))) << "column " << j;
}

TEST_P(SparseSolverTest, SolvesThreeDimensionalLaplacianInEveryForm) {
  // Every solve form once more on a problem CHOLMOD factors supernodally.
  const SparseMatrix A = laplacian_3d(12);
  solver_->analyze_pattern(A);
  for (const double sigma : {0.0, 2.0}) {
    const SparseMatrix As = shifted(A, sigma);
    solver_->factorize(As);
    const Vector b = random_vector(A.rows(), 60);
    Vector x;
    solver_->solve(b, x);
    EXPECT_TRUE(solves_accurately(As, x, b)) << "sigma = " << sigma;
    Vector bx = b;
    solver_->solve(bx, bx);
    EXPECT_TRUE(solves_accurately(As, bx, b)) << "aliased, sigma = " << sigma;
    Matrix B(A.rows(), 5);
    for (Index j = 0; j < B.cols(); ++j) B.col(j) = random_vector(A.rows(), 61 + j);
    Matrix X;
    solver_->solve(B, X);
    for (Index j = 0; j < B.cols(); ++j)
      EXPECT_TRUE(solves_accurately(As, X.col(j), B.col(j))) << "column " << j;
  }
}

TEST_P(SparseSolverTest, MatchesDenseSolveOnSmallMatrix) {
  // An independent check: Eigen's dense LLT / partial-pivoting LU on the same system.
  constexpr int n = 50;
  const bool spd = requires_spd(GetParam());
  const SparseMatrix A = random_sparse(n, 3, spd, 42);
  const Vector b = random_vector(n, 43);
  const Matrix dense = Matrix(A);
  const Vector x_dense = spd ? Vector(dense.llt().solve(b)) : Vector(dense.partialPivLu().solve(b));
  solver_->analyze_pattern(A);
  solver_->factorize(A);
  Vector x;
  solver_->solve(b, x);
  EXPECT_TRUE(matrices_near(x, x_dense, kDenseAgreementTol, Compare::relative));
}

TEST_P(SparseSolverTest, SingularMatrixThrowsNumericalErrorAndRecovers) {
  const SparseMatrix A = laplacian_2d(kGrid);
  const SparseMatrix S = zero_row_and_column(A, 123);
  solver_->analyze_pattern(S);
  try {
    solver_->factorize(S);
    FAIL() << "factorize accepted a singular matrix";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find(to_string(GetParam())), std::string::npos) << e.what();
  }
  // A failed factorization leaves no factor behind ...
  Vector x;
  EXPECT_THROW(solver_->solve(Vector::Ones(A.rows()), x), InvalidArgument);
  // ... and the analysis stays usable for the next (nonsingular) values.
  solver_->factorize(A);
  const Vector b = random_vector(A.rows(), 5);
  solver_->solve(b, x);
  EXPECT_TRUE(solves_accurately(A, x, b));
}

TEST_P(SparseSolverTest, MisuseThrowsInvalidArgument) {
  const SparseMatrix A = laplacian_2d(5);
  Vector x;
  Matrix X;
  EXPECT_THROW(solver_->solve(Vector::Ones(25), x), InvalidArgument);  // nothing analysed
  EXPECT_THROW(solver_->factorize(A), InvalidArgument);                // nothing analysed

  const SparseMatrix rectangular(25, 24);
  EXPECT_THROW(solver_->analyze_pattern(rectangular), InvalidArgument);
  EXPECT_THROW(solver_->analyze_pattern(SparseMatrix(0, 0)), InvalidArgument);
  SparseMatrix uncompressed = A;
  uncompressed.insert(0, 24) = 1.0;  // leaves the matrix in uncompressed mode
  ASSERT_FALSE(uncompressed.isCompressed());
  EXPECT_THROW(solver_->analyze_pattern(uncompressed), InvalidArgument);

  solver_->analyze_pattern(A);
  EXPECT_THROW(solver_->solve(Vector::Ones(25), x), InvalidArgument);  // not factorized
  EXPECT_THROW(solver_->factorize(laplacian_2d(4)), InvalidArgument);  // size differs
  SparseMatrix identity(25, 25);  // same size, different nonzero count
  identity.setIdentity();
  EXPECT_THROW(solver_->factorize(identity), InvalidArgument);
  EXPECT_THROW(solver_->factorize(SparseMatrix(A.topRows(24))), InvalidArgument);

  solver_->factorize(A);
  EXPECT_THROW(solver_->solve(Vector::Ones(24), x), InvalidArgument);
  EXPECT_THROW(solver_->solve(Matrix::Ones(26, 2), X), InvalidArgument);
  try {
    solver_->solve(Vector::Ones(24), x);
  } catch (const InvalidArgument& e) {
    // The message names both sizes.
    EXPECT_NE(std::string(e.what()).find("24"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("25"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(AllBackends, SparseSolverTest, ::testing::ValuesIn(kAll), backend_name);

// ---------------------------------------------------------------------------------------------
// LU backends

TEST_P(LuSolverTest, SolvesUnsymmetricConvectionDiffusion) {
  const SparseMatrix A0 = convection_diffusion_2d(kGrid, 0.3);
  solver_->analyze_pattern(A0);
  unsigned seed = 30;
  // Peclet numbers above 1 remove diagonal dominance, so pivoting matters.
  for (const double peclet : {0.3, 1.5, 4.0, 0.0}) {
    const SparseMatrix A = convection_diffusion_2d(kGrid, peclet);
    const Vector b = random_vector(A.rows(), ++seed);
    solver_->factorize(A);
    Vector x;
    solver_->solve(b, x);
    EXPECT_TRUE(solves_accurately(A, x, b)) << "Peclet " << peclet;
  }
}

TEST_P(LuSolverTest, RefactorizationThatNeedsNewPivotsStaysAccurate) {
  // 2x2 blocks [a 1; 1 a]: with a = 2 the diagonal pivots are fine; with a = 0 they are zero
  // and with a = 1e-20 tiny, so a refactorization reusing the first pivot order must not be
  // trusted (KLU falls back to a full factorization).
  constexpr int blocks = 200;
  const auto make = [](double a) {
    std::vector<Triplet> t;
    for (int k = 0; k < blocks; ++k) {
      t.emplace_back(2 * k, 2 * k, a);
      t.emplace_back(2 * k + 1, 2 * k + 1, a);
      t.emplace_back(2 * k, 2 * k + 1, 1.0);
      t.emplace_back(2 * k + 1, 2 * k, 1.0);
    }
    SparseMatrix A(2 * blocks, 2 * blocks);
    A.setFromTriplets(t.begin(), t.end());
    A.makeCompressed();
    return A;
  };
  solver_->analyze_pattern(make(2.0));
  unsigned seed = 50;
  for (const double a : {2.0, 1e-20, 3.0, 0.0, 2.0}) {
    const SparseMatrix A = make(a);
    const Vector b = random_vector(A.rows(), ++seed);
    solver_->factorize(A);
    Vector x;
    solver_->solve(b, x);
    EXPECT_TRUE(solves_accurately(A, x, b)) << "a = " << a;
  }
}

TEST_P(LuSolverTest, StructurallySingularMatrixThrowsNumericalError) {
  SparseMatrix A = convection_diffusion_2d(10, 0.5);
  A.prune([](const Index&, const Index& col, const double&) { return col != 17; });  // empty
  A.makeCompressed();
  ASSERT_EQ(A.col(17).nonZeros(), 0);
  EXPECT_THROW(
      {
        solver_->analyze_pattern(A);
        solver_->factorize(A);
      },
      NumericalError);
}

INSTANTIATE_TEST_SUITE_P(LuBackends, LuSolverTest, ::testing::ValuesIn(backends_where(false)),
                         backend_name);

// ---------------------------------------------------------------------------------------------
// SPD backends

TEST_P(SpdSolverTest, IndefiniteMatrixThrowsNumericalErrorNamingTheColumn) {
  constexpr int n = 40, bad = 27;
  std::vector<Triplet> t;
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, i == bad ? -1.0 : 1.0 + i);
  SparseMatrix D(n, n);
  D.setFromTriplets(t.begin(), t.end());
  solver_->analyze_pattern(D);
  try {
    solver_->factorize(D);
    FAIL() << "factorize accepted an indefinite matrix";
  } catch (const NumericalError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(to_string(GetParam())), std::string::npos) << what;
    EXPECT_NE(what.find("column " + std::to_string(bad)), std::string::npos) << what;
  }
}

TEST_P(SpdSolverTest, IndefiniteLaplacianThrowsNumericalError) {
  // Shifting by -1.3 moves some eigenvalues of either Laplacian below zero; the 3-D one is
  // factored supernodally by CHOLMOD, the 2-D one simplicially.
  for (const SparseMatrix& L : {laplacian_2d(kGrid), laplacian_3d(12)}) {
    const SparseMatrix A = shifted(L, -1.3);
    solver_->analyze_pattern(A);
    EXPECT_THROW(solver_->factorize(A), NumericalError) << "n = " << A.rows();
  }
}

TEST_P(SpdSolverTest, ReadsOnlyTheLowerTriangle) {
  const SparseMatrix A = shifted(laplacian_2d(kGrid), 0.1);
  SparseMatrix garbled = A;  // same pattern, nonsense strictly upper values
  for (int c = 0; c < garbled.outerSize(); ++c) {
    for (SparseMatrix::InnerIterator it(garbled, c); it; ++it)
      if (it.row() < it.col()) it.valueRef() = 1e3;
  }
  const Vector b = random_vector(A.rows(), 9);
  solver_->analyze_pattern(garbled);
  solver_->factorize(garbled);
  Vector x;
  solver_->solve(b, x);
  EXPECT_TRUE(solves_accurately(A, x, b));
}

INSTANTIATE_TEST_SUITE_P(SpdBackends, SpdSolverTest, ::testing::ValuesIn(backends_where(true)),
                         backend_name);

// ---------------------------------------------------------------------------------------------
// Names

TEST(SparseBackendNames, RoundTripThroughParse) {
  for (const SparseBackend b : kAll) EXPECT_EQ(parse_sparse_backend(to_string(b)), b);
  EXPECT_TRUE(requires_spd(SparseBackend::cholmod));
  EXPECT_TRUE(requires_spd(SparseBackend::eigen_ldlt));
  EXPECT_FALSE(requires_spd(SparseBackend::umfpack));
  EXPECT_FALSE(requires_spd(SparseBackend::klu));
  EXPECT_FALSE(requires_spd(SparseBackend::eigen_lu));
}

TEST(SparseBackendNames, UnknownNameThrowsInvalidArgumentNamingIt) {
  try {
    parse_sparse_backend("bogus");
    FAIL() << "parse_sparse_backend accepted \"bogus\"";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_sparse_backend(""), InvalidArgument);
  EXPECT_THROW(parse_sparse_backend("CHOLMOD"), InvalidArgument);  // names are case-sensitive
}

}  // namespace
}  // namespace mor
