// SPDX-License-Identifier: GPL-3.0-or-later
// The sparse LTI operators and KLU's LU: shifted solves (real and complex shifts, transposed)
// against dense residuals and against each other, structured products against dense ones, the
// multi-shift cache under eviction, and the failure modes.
#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>

#include "reduction/lti_operator.hpp"
#include "src/core/errors.hpp"
#include "src/linalg/complex_sparse_lu.hpp"
#include "src/systems/lti.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::random_descriptor;
using testing::symmetric_grid;
using testing::to_sparse;

// The test matrices are well conditioned (condition numbers below ~100), so a backward-stable
// sparse LU leaves ||S X - R||_max / ||R||_max of a few eps: measured at most 3.1e-15 over all
// solves below. 1e-12 is the project's bar for shifted solves.
constexpr double kSolveTol = 1e-12;
// Two solvers (structured against first-order against dense) of the same system differ by
// cond * eps at most: measured at most 1.3e-15.
constexpr double kAgreeTol = 1e-12;
// Products with a handful of terms per entry: sums in different orders differ by a few ulps
// (measured at most 1.3e-15 relative to the largest entry).
constexpr double kProductTol = 1e-14;

// ---------------------------------------------------------------------------------------------
// Test systems

/// A chain with a consistent (tridiagonal) mass matrix, stiffness K = tridiag(-1, 2, -1),
/// damping D = alpha M + beta K plus a damper between masses 1 and 3 (so that D's pattern is
/// not K's), forces at masses `inputs`, positions and velocities observed at the ends.
SecondOrderSystem fe_chain(Index n, double alpha, double beta, bool gyroscopic = false) {
  Matrix M = Matrix::Zero(n, n), K = Matrix::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    M(i, i) = 2.0 / 3.0;
    K(i, i) = 2.0;
    if (i + 1 < n) {
      M(i, i + 1) = M(i + 1, i) = 1.0 / 6.0;
      K(i, i + 1) = K(i + 1, i) = -1.0;
    }
  }
  Matrix D = alpha * M + beta * K;
  D(0, 0) += 0.3;
  D(2, 2) += 0.3;
  D(0, 2) -= 0.3;
  D(2, 0) -= 0.3;
  if (gyroscopic) {  // a skew-symmetric (gyroscopic) coupling: D is no longer symmetric
    D(1, 3) += 0.2;
    D(3, 1) -= 0.2;
  }
  Matrix B = Matrix::Zero(n, 2);
  B(n - 1, 0) = 1.0;
  B(n / 2, 1) = 0.5;
  Matrix Cp = Matrix::Zero(2, n), Cv = Matrix::Zero(2, n);
  Cp(0, n - 1) = 1.0;
  Cv(1, 0) = 1.0;
  SecondOrderSystem sys;
  sys.M = to_sparse(M);
  sys.D = to_sparse(D);
  sys.K = to_sparse(K);
  sys.B = to_sparse(B);
  sys.Cp = to_sparse(Cp);
  sys.Cv = to_sparse(Cv);
  return sys;
}

Matrix random_rhs(Index n, Index k, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  Matrix R(n, k);
  for (Index i = 0; i < R.size(); ++i) R(i) = unif(gen);
  return R;
}

ComplexMatrix random_complex_rhs(Index n, Index k, unsigned seed) {
  return random_rhs(n, k, seed).cast<Complex>() +
         Complex(0.0, 1.0) * random_rhs(n, k, seed + 1).cast<Complex>();
}

/// ||S X - R||_max / ||R||_max for S = A + p E (or its plain transpose) formed densely.
template <class Scalar, class Mat>
double shifted_residual(LtiOperator& op, Scalar p, const Mat& R, const Mat& X, bool transpose) {
  using Dense = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  Dense S = dense_A(op).cast<Scalar>() + p * dense_E(op).cast<Scalar>();
  if (transpose) S.transposeInPlace();
  return (S * X - R).cwiseAbs().maxCoeff() / R.cwiseAbs().maxCoeff();
}

// ---------------------------------------------------------------------------------------------
// KLU

TEST(KluLu, ComplexSolvesAndTransposedSolvesMatchDenseLu) {
  const DescriptorSystem sys = random_descriptor(50, 1, 1, 3);
  ComplexSparseMatrix S = sys.A.cast<Complex>() + Complex(0.3, -1.7) * sys.E.cast<Complex>();
  S.makeCompressed();
  auto pattern = std::make_shared<const KluPattern>(SparseMatrix(S.real()));
  ComplexSparseLu lu(pattern);
  lu.factorize(S);
  const ComplexMatrix dense = ComplexMatrix(S);
  const ComplexMatrix R = random_complex_rhs(50, 3, 5);
  for (bool transpose : {false, true}) {
    ComplexMatrix X;
    lu.solve(R, X, transpose);
    const ComplexMatrix ref = transpose ? ComplexMatrix(dense.transpose().partialPivLu().solve(R))
                                        : ComplexMatrix(dense.partialPivLu().solve(R));
    EXPECT_TRUE(matrices_near(X, ref, kAgreeTol, Compare::relative)) << "transpose " << transpose;
  }
  // Refactorization with new values (the cheap path reusing the pivot order), solved in place.
  ComplexSparseMatrix S2 = S;
  for (Index k = 0; k < S2.nonZeros(); ++k) S2.valuePtr()[k] *= Complex(1.0 + 0.01 * k, 0.2);
  lu.factorize(S2);
  ComplexMatrix X = R;
  lu.solve_in_place(X);
  EXPECT_TRUE(matrices_near(ComplexMatrix(S2 * X), R, kSolveTol, Compare::relative));
  EXPECT_GT(lu.memory_bytes(), 0u);
}

TEST(KluLu, RealLuSolvesBothOrientations) {
  const DescriptorSystem sys = random_descriptor(40, 1, 1, 4);
  SparseMatrix S = sys.A + 0.4 * sys.E;
  S.makeCompressed();
  RealSparseLu lu(std::make_shared<const KluPattern>(S));
  lu.factorize(S);
  const Matrix R = random_rhs(40, 2, 6);
  Matrix X;
  lu.solve(R, X);
  EXPECT_TRUE(matrices_near(Matrix(S * X), R, kSolveTol, Compare::relative));
  lu.solve(R, X, true);
  EXPECT_TRUE(
      matrices_near(Matrix(SparseMatrix(S.transpose()) * X), R, kSolveTol, Compare::relative));
}

TEST(KluLu, SingularMatrixNamesTheStatus) {
  // [1 1 0; 1 1 0; 0 0 1]: the second pivot is exactly zero whatever the row order.
  Matrix A = Matrix::Identity(3, 3);
  A.topLeftCorner(2, 2).setOnes();
  const SparseMatrix sp = to_sparse(A);
  ComplexSparseLu lu(std::make_shared<const KluPattern>(sp));
  try {
    lu.factorize(ComplexSparseMatrix(sp.cast<Complex>()));
    FAIL() << "no exception for a singular matrix";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("KLU_SINGULAR"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(lu.factorized());
  ComplexMatrix X = ComplexMatrix::Ones(3, 1);
  EXPECT_THROW(lu.solve_in_place(X), InvalidArgument);
}

TEST(KluLu, PatternMismatchIsRejected) {
  const SparseMatrix I = to_sparse(Matrix::Identity(5, 5));
  ComplexSparseLu lu(std::make_shared<const KluPattern>(I));
  const ComplexSparseMatrix other = to_sparse(Matrix::Ones(5, 5)).cast<Complex>();
  EXPECT_THROW(lu.factorize(other), InvalidArgument);
  SparseMatrix rect(3, 4);
  EXPECT_THROW(KluPattern{rect}, InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// SparseLtiOperator

class SparseOperator : public ::testing::TestWithParam<SparseBackend> {};

TEST_P(SparseOperator, ShiftedSolvesSatisfyTheSystem) {
  const DescriptorSystem sys = random_descriptor(60, 2, 3, 7);
  SparseLtiOperator op(sys, GetParam());
  const Matrix R = random_rhs(60, 2, 8);
  const ComplexMatrix Rc = random_complex_rhs(60, 2, 9);
  for (bool transpose : {false, true}) {
    for (double p : {-0.5, 0.7, 0.0}) {
      Matrix X;
      op.solve_shifted(p, R, X, transpose);
      EXPECT_LE(shifted_residual(op, p, R, X, transpose), kSolveTol)
          << "p = " << p << ", transpose " << transpose;
    }
    for (Complex p : {Complex(-0.4, 1.3), Complex(0.3, -2.0)}) {
      ComplexMatrix X;
      op.solve_shifted(p, Rc, X, transpose);
      EXPECT_LE(shifted_residual(op, p, Rc, X, transpose), kSolveTol)
          << "p = " << p << ", transpose " << transpose;
    }
  }
}

TEST_P(SparseOperator, ProductsAndDataMatchTheSystem) {
  const DescriptorSystem sys = random_descriptor(30, 2, 3, 10);
  SparseLtiOperator op(sys, GetParam());
  EXPECT_EQ(op.n(), 30);
  EXPECT_TRUE(matrices_near(op.B(), Matrix(sys.B), 0.0));
  EXPECT_TRUE(matrices_near(op.C(), Matrix(sys.C), 0.0));
  EXPECT_TRUE(matrices_near(op.D_ff(), sys.D_ff, 0.0));
  EXPECT_FALSE(op.E_is_identity());
  const Matrix X = random_rhs(30, 3, 11);
  Matrix Y;
  op.apply_A(X, Y, true);
  EXPECT_TRUE(
      matrices_near(Y, Matrix(Matrix(sys.A).transpose() * X), kProductTol, Compare::relative));
  op.apply_E(X, Y);
  EXPECT_TRUE(matrices_near(Y, Matrix(Matrix(sys.E) * X), kProductTol, Compare::relative));
  DescriptorSystem identity_E = sys;
  identity_E.E = to_sparse(Matrix::Identity(30, 30));
  EXPECT_TRUE(SparseLtiOperator(identity_E, GetParam()).E_is_identity());
}

TEST_P(SparseOperator, CacheEvictionAndRecyclingKeepSolvesExact) {
  // 40 distinct shifts, cycled three times: more than the cache holds at first, so entries are
  // evicted, recycled (refactorized in place) and the capacity grows; every solve must stay
  // exact, and a repeated shift must give the bitwise same result as its first solve.
  const DescriptorSystem sys = random_descriptor(40, 1, 1, 12);
  SparseLtiOperator op(sys, GetParam());
  const Matrix R = random_rhs(40, 1, 13);
  const ComplexMatrix Rc = R.cast<Complex>();
  std::vector<Matrix> first_real(40);
  std::vector<ComplexMatrix> first_complex(40);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 40; ++i) {
      const double p = -0.1 - 0.05 * i;
      const Complex pc(-0.1 - 0.03 * i, 0.2 + 0.1 * i);
      Matrix X;
      ComplexMatrix Xc;
      op.solve_shifted(p, R, X, i % 2 == 1);
      op.solve_shifted(pc, Rc, Xc, i % 3 == 1);
      ASSERT_LE(shifted_residual(op, p, R, X, i % 2 == 1), kSolveTol) << "round " << round;
      ASSERT_LE(shifted_residual(op, pc, Rc, Xc, i % 3 == 1), kSolveTol) << "round " << round;
      if (round == 0) {
        first_real[i] = X;
        first_complex[i] = Xc;
      } else {
        EXPECT_TRUE(matrices_near(X, first_real[i], kAgreeTol, Compare::relative));
        EXPECT_TRUE(matrices_near(Xc, first_complex[i], kAgreeTol, Compare::relative));
      }
    }
  }
}

TEST_P(SparseOperator, SingularShiftNamesTheShift) {
  // Eigenvalues 1, -2, -3, -4 (E = I): A + p E is singular for p = -1.
  DescriptorSystem sys;
  Matrix A = Matrix::Zero(4, 4);
  A.diagonal() << 1.0, -2.0, -3.0, -4.0;
  sys.A = to_sparse(A);
  sys.E = to_sparse(Matrix::Identity(4, 4));
  sys.B = to_sparse(Matrix::Ones(4, 1));
  sys.C = to_sparse(Matrix::Ones(1, 4));
  sys.D_ff = Matrix::Zero(1, 1);
  SparseLtiOperator op(sys, GetParam());
  Matrix X;
  try {
    op.solve_shifted(-1.0, Matrix::Ones(4, 1), X);
    FAIL() << "no exception for a singular shifted matrix";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("p = -1"), std::string::npos) << e.what();
  }
  ComplexMatrix Xc;
  try {
    op.solve_shifted(Complex(-1.0, 0.0), ComplexMatrix::Ones(4, 1), Xc);
    FAIL() << "no exception for a singular shifted matrix";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("p = (-1,0)"), std::string::npos) << e.what();
  }
  // The failed factorizations are not cached: a good shift still works.
  op.solve_shifted(-0.5, Matrix::Ones(4, 1), X);
  EXPECT_LE(shifted_residual(op, -0.5, Matrix(Matrix::Ones(4, 1)), X, false), kSolveTol);
}

INSTANTIATE_TEST_SUITE_P(Backends, SparseOperator,
                         ::testing::Values(SparseBackend::klu, SparseBackend::umfpack),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST_P(SparseOperator, SymmetricPencilSolvesAreExactWithCholeskyAndLu) {
  // A stable symmetric pencil: real p < 0 go through the Cholesky of -(A + p E), p >= 0 (0 and
  // 1000, beyond the spectrum, so that A + p E is as well conditioned as for p < 0) and
  // complex p through the LU; every solve, in both orientations and in place, must satisfy the
  // system, and a cached shift must give the same result again.
  const DescriptorSystem sys = symmetric_grid(9, 0.0);
  SparseLtiOperator op(sys, GetParam());
  EXPECT_TRUE(op.symmetric_pencil());
  const DescriptorSystem unsymmetric = random_descriptor(20, 1, 1, 16);
  EXPECT_FALSE(SparseLtiOperator(unsymmetric, GetParam()).symmetric_pencil());
  // Products (one gather pass for a symmetric matrix), also in place, against dense ones.
  for (Index k : {1, 5, 11}) {
    const Matrix X = random_rhs(81, k, 20);
    for (bool transpose : {false, true}) {
      Matrix Y, Z = X;
      op.apply_A(X, Y, transpose);
      EXPECT_TRUE(matrices_near(Y, Matrix(Matrix(sys.A) * X), kProductTol, Compare::relative));
      op.apply_E(Z, Z, transpose);
      EXPECT_TRUE(matrices_near(Z, Matrix(Matrix(sys.E) * X), kProductTol, Compare::relative));
    }
  }
  const Matrix R = random_rhs(81, 3, 17);
  const ComplexMatrix Rc = random_complex_rhs(81, 2, 18);
  for (int round = 0; round < 2; ++round) {
    for (bool transpose : {false, true}) {
      for (double p : {-0.5, -40.0, 0.0, 1000.0}) {
        Matrix X;
        op.solve_shifted(p, R, X, transpose);
        EXPECT_LE(shifted_residual(op, p, R, X, transpose), kSolveTol)
            << "p = " << p << ", transpose " << transpose;
        Matrix Y = R;
        op.solve_shifted(p, Y, Y, transpose);  // in place
        EXPECT_TRUE(matrices_near(Y, X, kAgreeTol, Compare::relative)) << "p = " << p;
      }
      ComplexMatrix Xc;
      op.solve_shifted(Complex(-0.3, 2.0), Rc, Xc, transpose);
      EXPECT_LE(shifted_residual(op, Complex(-0.3, 2.0), Rc, Xc, transpose), kSolveTol);
    }
  }
}

TEST_P(SparseOperator, IndefiniteSymmetricPencilFallsBackToLu) {
  // A = -K + 1.5 I has eigenvalues on both sides of 0, so -(A + p E) is indefinite for small
  // p < 0 and the Cholesky fails: the LU must take over for that shift and every later one.
  const DescriptorSystem sys = symmetric_grid(7, 1.5);
  SparseLtiOperator op(sys, GetParam());
  const Matrix R = random_rhs(49, 2, 19);
  for (double p : {-0.01, -50.0, -0.01, -2.0}) {
    for (bool transpose : {false, true}) {
      Matrix X;
      op.solve_shifted(p, R, X, transpose);
      EXPECT_LE(shifted_residual(op, p, R, X, transpose), kSolveTol)
          << "p = " << p << ", transpose " << transpose;
    }
  }
}

TEST(SparseOperator, SpdBackendIsRejected) {
  const DescriptorSystem sys = random_descriptor(10, 1, 1, 14);
  EXPECT_THROW(SparseLtiOperator(sys, SparseBackend::cholmod), InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// SecondOrderLtiOperator

/// The structured operator, the first-order sparse operator on to_descriptor and the dense one.
struct ThreeOperators {
  explicit ThreeOperators(SecondOrderSystem s)
      : so(std::move(s)),
        ds(to_descriptor(so)),
        structured(so),
        first_order(ds),
        dense(Matrix(ds.E), Matrix(ds.A), Matrix(ds.B), Matrix(ds.C)) {}
  SecondOrderSystem so;
  DescriptorSystem ds;
  SecondOrderLtiOperator structured;
  SparseLtiOperator first_order;
  DenseLtiOperator dense;
};

TEST(SecondOrderOperator, ProductsAndDataMatchTheFirstOrderForm) {
  for (bool gyroscopic : {false, true}) {
    ThreeOperators ops(fe_chain(12, 0.1, 0.05, gyroscopic));
    LtiOperator& op = ops.structured;
    EXPECT_EQ(op.n(), 24);
    EXPECT_TRUE(matrices_near(op.B(), ops.dense.B(), 0.0));
    EXPECT_TRUE(matrices_near(op.C(), ops.dense.C(), 0.0));
    EXPECT_TRUE(matrices_near(op.D_ff(), Matrix(Matrix::Zero(2, 2)), 0.0));
    EXPECT_FALSE(op.E_is_identity());
    const Matrix X = random_rhs(24, 11, 20);  // more columns than one kernel block (8)
    for (bool transpose : {false, true}) {
      Matrix Y, Yref;
      op.apply_A(X, Y, transpose);
      ops.dense.apply_A(X, Yref, transpose);
      EXPECT_TRUE(matrices_near(Y, Yref, kProductTol, Compare::relative)) << transpose;
      op.apply_E(X, Y, transpose);
      ops.dense.apply_E(X, Yref, transpose);
      EXPECT_TRUE(matrices_near(Y, Yref, kProductTol, Compare::relative)) << transpose;
      Matrix Z = X;  // aliased output
      op.apply_A(Z, Z, transpose);
      ops.dense.apply_A(X, Yref, transpose);
      EXPECT_TRUE(matrices_near(Z, Yref, kProductTol, Compare::relative)) << transpose;
    }
  }
}

TEST(SecondOrderOperator, StructuredSolvesMatchFirstOrderAndDenseSolves) {
  for (bool gyroscopic : {false, true}) {
    ThreeOperators ops(fe_chain(15, 0.1, 0.05, gyroscopic));
    const Index n = 30;
    const Matrix R = random_rhs(n, 3, 21);
    const ComplexMatrix Rc = random_complex_rhs(n, 3, 22);
    for (bool transpose : {false, true}) {
      // p < 0: CHOLMOD on S(p) (symmetric case); p = 0: S = K; p > 0: S(p) indefinite, KLU.
      for (double p : {-0.8, -3.0, 0.0, 0.6}) {
        Matrix X, Xs, Xd;
        ops.structured.solve_shifted(p, R, X, transpose);
        ops.first_order.solve_shifted(p, R, Xs, transpose);
        ops.dense.solve_shifted(p, R, Xd, transpose);
        const std::string where = "p = " + std::to_string(p) + ", transpose " +
                                  std::to_string(transpose) + ", gyroscopic " +
                                  std::to_string(gyroscopic);
        EXPECT_LE(shifted_residual(ops.dense, p, R, X, transpose), kSolveTol) << where;
        EXPECT_TRUE(matrices_near(X, Xs, kAgreeTol, Compare::relative)) << where;
        EXPECT_TRUE(matrices_near(X, Xd, kAgreeTol, Compare::relative)) << where;
      }
      for (Complex p : {Complex(-0.2, 0.9), Complex(-1.5, -0.4), Complex(0.5, 2.0)}) {
        ComplexMatrix X, Xs, Xd;
        ops.structured.solve_shifted(p, Rc, X, transpose);
        ops.first_order.solve_shifted(p, Rc, Xs, transpose);
        ops.dense.solve_shifted(p, Rc, Xd, transpose);
        EXPECT_LE(shifted_residual(ops.dense, p, Rc, X, transpose), kSolveTol) << p;
        EXPECT_TRUE(matrices_near(X, Xs, kAgreeTol, Compare::relative)) << p;
        EXPECT_TRUE(matrices_near(X, Xd, kAgreeTol, Compare::relative)) << p;
      }
    }
  }
}

TEST(SecondOrderOperator, AliasedSolvesAndRepeatedShifts) {
  ThreeOperators ops(fe_chain(10, 0.2, 0.1));
  const Matrix R = random_rhs(20, 2, 23);
  for (bool transpose : {false, true}) {
    Matrix X = R;
    ops.structured.solve_shifted(-0.7, X, X, transpose);  // X aliases R
    Matrix ref;
    ops.dense.solve_shifted(-0.7, R, ref, transpose);
    EXPECT_TRUE(matrices_near(X, ref, kAgreeTol, Compare::relative));
    ComplexMatrix Xc = R.cast<Complex>();
    ops.structured.solve_shifted(Complex(-0.3, 0.8), Xc, Xc, transpose);
    ComplexMatrix refc;
    ops.dense.solve_shifted(Complex(-0.3, 0.8), ComplexMatrix(R.cast<Complex>()), refc, transpose);
    EXPECT_TRUE(matrices_near(Xc, refc, kAgreeTol, Compare::relative));
  }
}

/// The fe_chain with its damping replaced by D = 0.1 M + 0.05 K plus dampers between masses
/// (i, i + w) for each w in `spans`: S(p) then has bandwidth max(1, spans).
SecondOrderSystem chain_with_band(Index n, const std::vector<Index>& spans) {
  SecondOrderSystem sys = fe_chain(n, 0.1, 0.05);
  Matrix D = 0.1 * Matrix(sys.M) + 0.05 * Matrix(sys.K);
  for (Index w : spans) {
    D(0, 0) += 0.3;
    D(w, w) += 0.3;
    D(0, w) -= 0.3;
    D(w, 0) -= 0.3;
  }
  sys.D = to_sparse(D);
  return sys;
}

TEST(SecondOrderOperator, BandedAndSparseFactorizationsSolveExactly) {
  // Real shifts at bandwidth 1 (the chain: the tridiagonal L D L^T for SPD S(p), else LAPACK's
  // tridiagonal LU), 3 (band Cholesky / band LU) and 12 (beyond the band limit 8: CHOLMOD /
  // KLU); complex shifts by KLU throughout. Each against dense solves of the first-order form,
  // both orientations, also in place.
  for (const std::vector<Index>& spans :
       {std::vector<Index>{}, std::vector<Index>{3}, std::vector<Index>{12}}) {
    ThreeOperators ops(chain_with_band(16, spans));
    const Index n = 32;
    const Matrix R = random_rhs(n, 2, 31);
    const ComplexMatrix Rc = random_complex_rhs(n, 2, 32);
    const std::string band = spans.empty() ? "1" : std::to_string(spans[0]);
    for (bool transpose : {false, true}) {
      for (double p : {-0.8, 0.0, 0.6}) {
        Matrix X, Xd;
        ops.structured.solve_shifted(p, R, X, transpose);
        ops.dense.solve_shifted(p, R, Xd, transpose);
        const double res = shifted_residual(ops.dense, p, R, X, transpose);
        EXPECT_LE(res, kSolveTol) << "bandwidth " << band << ", p = " << p;
        EXPECT_TRUE(matrices_near(X, Xd, kAgreeTol, Compare::relative))
            << "bandwidth " << band << ", p = " << p;
        Matrix Y = R;
        ops.structured.solve_shifted(p, Y, Y, transpose);
        EXPECT_TRUE(matrices_near(Y, X, 0.0)) << "in place, bandwidth " << band << ", p = " << p;
      }
      for (Complex p : {Complex(-0.2, 0.9), Complex(0.5, 2.0)}) {
        ComplexMatrix X, Xd;
        ops.structured.solve_shifted(p, Rc, X, transpose);
        ops.dense.solve_shifted(p, Rc, Xd, transpose);
        const double res = shifted_residual(ops.dense, p, Rc, X, transpose);
        EXPECT_LE(res, kSolveTol) << "bandwidth " << band << ", p = " << p;
        EXPECT_TRUE(matrices_near(X, Xd, kAgreeTol, Compare::relative))
            << "bandwidth " << band << ", p = " << p;
      }
    }
    // The energy weight needs S(0) = K factorized as positive definite, on every path:
    // H = diag(K, I) and, transposed, diag(K^{-1}, I).
    const Matrix X = random_rhs(n, 3, 33);
    const Matrix K = Matrix(ops.so.K);
    Matrix Y;
    ASSERT_TRUE(ops.structured.apply_energy_weight(X, Y, false)) << "bandwidth " << band;
    Matrix ref = X;
    ref.topRows(16) = K * X.topRows(16);
    EXPECT_TRUE(matrices_near(Y, ref, kProductTol, Compare::relative)) << "bandwidth " << band;
    ASSERT_TRUE(ops.structured.apply_energy_weight(X, Y, true)) << "bandwidth " << band;
    ref.topRows(16) = K.partialPivLu().solve(X.topRows(16));
    EXPECT_TRUE(matrices_near(Y, ref, kAgreeTol, Compare::relative)) << "bandwidth " << band;
  }
}

TEST(SecondOrderOperator, SingularShiftNamesTheShift) {
  // Without damping, S(p) = p^2 M + K is singular at p = +- i w for every eigenfrequency w;
  // a free-free chain (K without the wall springs) is singular at p = 0.
  SecondOrderSystem sys = fe_chain(6, 0.0, 0.0);
  Matrix K = Matrix(sys.K);
  K(0, 0) = 1.0;
  K(5, 5) = 1.0;  // free ends: K 1 = 0
  sys.K = to_sparse(K);
  sys.D = to_sparse(Matrix::Zero(6, 6));
  SecondOrderLtiOperator op(sys);
  Matrix X;
  try {
    op.solve_shifted(0.0, Matrix::Ones(12, 1), X);
    FAIL() << "no exception for a singular shifted matrix";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("p = 0"), std::string::npos) << e.what();
  }
}

TEST(SecondOrderOperator, SizeMismatchesAreRejected) {
  SecondOrderSystem sys = fe_chain(5, 0.1, 0.1);
  SecondOrderLtiOperator op(sys);
  Matrix X;
  EXPECT_THROW(op.solve_shifted(-1.0, Matrix::Ones(9, 1), X), InvalidArgument);
  EXPECT_THROW(op.apply_A(Matrix::Ones(5, 1), X), InvalidArgument);
  sys.K = to_sparse(Matrix::Identity(4, 4));
  EXPECT_THROW(SecondOrderLtiOperator{sys}, InvalidArgument);
}

}  // namespace
}  // namespace mor
