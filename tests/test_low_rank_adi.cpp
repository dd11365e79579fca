// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank ADI against independent dense Gramians (the Kronecker-product formula for n <= 40,
// SLICOT SB03OD for n = 200), the low-rank residual norm (spectral and Frobenius) against its
// dense definition, the shift strategies (automatic, projection, Penzl, given) with real and
// complex shifts, on unsymmetric and symmetric pencils, the statuses and the failure modes.
#include <gtest/gtest.h>

#include <atomic>
#include <complex>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "models/mass_spring_chain.hpp"
#include "reduction/gramian.hpp"
#include "reduction/low_rank_adi.hpp"
#include "reduction/lti_operator.hpp"
#include "src/core/errors.hpp"
#include "src/systems/lti.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"
#include "support/slicot.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;
using testing::random_descriptor;
using testing::scalars_near;
using testing::symmetric_grid;
using testing::to_sparse;

// The ADI runs below stop at a relative residual of 1e-12. The error of X = Z Z^T solves a
// Lyapunov equation with that residual as right-hand side, so relative to max |X_ij| it is the
// residual times a modest factor on these systems: measured at most 7.6e-13 (Kronecker and
// SLICOT references, themselves accurate to ~1e-14). 1e-10 leaves a margin of 100 and is still
// far below what a wrong update formula or a lost column would give (>= 1e-3).
constexpr double kAdiTol = 1e-12;
constexpr double kGramianTol = 1e-10;
// The ADI's residual ||W^T W|| is exact for the computed factor up to rounding in the W
// recursion; the true residual from the QR of [E Z, A Z, B] carries an absolute rounding error of
// a few eps ||A|| ||Z||^2 / ||B||^2. Measured: agreement to 3-4 digits, and 3.6e-16 against
// 7.5e-16 at the rounding floor. Compared with a relative 1e-3 plus an absolute 1e-13 floor.
constexpr double kResidualAgreeRel = 1e-3;
constexpr double kResidualAgreeAbs = 1e-13;
// lyapunov_residual against the dense formula on a random factor (residual of order 1):
// rounding only.
constexpr double kResidualFormulaTol = 1e-12;

// ---------------------------------------------------------------------------------------------
// Systems and dense references

/// The linear mass-spring chain with N masses (n = 2N states, E = I since m = 1).
SecondOrderSystem chain(Index N, bool rayleigh) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  if (rayleigh) {
    p.damping = SpringDamping::rayleigh;
    p.alpha = 0.2;
    p.beta = 0.2;
  }
  return MassSpringChain(p).linear_system();
}

/// A chain with a consistent tridiagonal mass matrix (so E = diag(I, M) is not the identity),
/// Rayleigh damping, two inputs and two outputs.
SecondOrderSystem fe_chain(Index n) {
  Matrix M = Matrix::Zero(n, n), K = Matrix::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    M(i, i) = 2.0 / 3.0;
    K(i, i) = 2.0;
    if (i + 1 < n) {
      M(i, i + 1) = M(i + 1, i) = 1.0 / 6.0;
      K(i, i + 1) = K(i + 1, i) = -1.0;
    }
  }
  Matrix B = Matrix::Zero(n, 2), Cp = Matrix::Zero(2, n), Cv = Matrix::Zero(2, n);
  B(n - 1, 0) = 1.0;
  B(0, 1) = 1.0;
  Cp(0, n - 1) = 1.0;
  Cv(1, n / 2) = 1.0;
  SecondOrderSystem sys;
  sys.M = to_sparse(M);
  sys.D = to_sparse(0.1 * M + 0.1 * K);
  sys.K = to_sparse(K);
  sys.B = to_sparse(B);
  sys.Cp = to_sparse(Cp);
  sys.Cv = to_sparse(Cv);
  return sys;
}

Matrix diagonal(std::initializer_list<double> values) {
  Matrix D = Matrix::Zero(static_cast<Index>(values.size()), static_cast<Index>(values.size()));
  Index i = 0;
  for (double v : values) {
    D(i, i) = v;
    ++i;
  }
  return D;
}

/// The Gramian `kind` of the operator from the Kronecker form of A X E^T + E X A^T + B B^T = 0:
/// (E kron A + A kron E) vec X = -vec(B B^T) (for observability A, E, B replaced by A^T, E^T,
/// C^T). Dense LU of order n^2: n <= 40.
Matrix kronecker_gramian(const LtiOperator& op, GramianKind kind) {
  const bool obs = kind == GramianKind::observability;
  const Matrix A = obs ? Matrix(dense_A(op).transpose()) : dense_A(op);
  const Matrix E = obs ? Matrix(dense_E(op).transpose()) : dense_E(op);
  const Matrix B = obs ? Matrix(op.C().transpose()) : op.B();
  const Index n = A.rows();
  Matrix L(n * n, n * n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i) L.block(i * n, j * n, n, n) = E(i, j) * A + A(i, j) * E;
  const Matrix rhs = -B * B.transpose();
  const Vector x = L.partialPivLu().solve(Eigen::Map<const Vector>(rhs.data(), n * n));
  return Eigen::Map<const Matrix>(x.data(), n, n);
}

/// The same Gramian by SLICOT SB03OD (Hammarling) on E^{-1} A, E^{-1} B.
Matrix slicot_gramian(const LtiOperator& op, GramianKind kind) {
  const bool obs = kind == GramianKind::observability;
  const Matrix A = obs ? Matrix(dense_A(op).transpose()) : dense_A(op);
  const Matrix E = obs ? Matrix(dense_E(op).transpose()) : dense_E(op);
  const Matrix B = obs ? Matrix(op.C().transpose()) : op.B();
  const Eigen::PartialPivLU<Matrix> lu(E);
  const Matrix U = testing::slicot_lyapunov_factor(lu.solve(A), lu.solve(B));
  return U * U.transpose();
}

/// ||A X E^T + E X A^T + B B^T||_2 / ||B^T B||_2 formed densely (or the observability form).
double dense_residual(const LtiOperator& op, GramianKind kind, const Matrix& Z) {
  const bool obs = kind == GramianKind::observability;
  const Matrix A = obs ? Matrix(dense_A(op).transpose()) : dense_A(op);
  const Matrix E = obs ? Matrix(dense_E(op).transpose()) : dense_E(op);
  const Matrix B = obs ? Matrix(op.C().transpose()) : op.B();
  const Matrix X = Z * Z.transpose();
  const Matrix R = A * X * E.transpose() + E * X * A.transpose() + B * B.transpose();
  return R.jacobiSvd().singularValues()(0) / (B.transpose() * B).jacobiSvd().singularValues()(0);
}

AdiOptions options(ShiftStrategy strategy, double tolerance = kAdiTol) {
  AdiOptions o;
  o.strategy = strategy;
  o.tolerance = tolerance;
  return o;
}

/// The checks every converged run must pass: status, bookkeeping, the true residual against the
/// ADI's own and against the tolerance, and the Gramian against the reference.
void check_run(LtiOperator& op, GramianKind kind, const AdiResult& r, const Matrix& reference,
               const std::string& where) {
  SCOPED_TRACE(where + ": " + r.message);
  ASSERT_EQ(r.status, AdiStatus::converged);
  EXPECT_EQ(static_cast<Index>(r.residual_history.size()), r.iterations);
  EXPECT_EQ(static_cast<Index>(r.shifts.size()), r.iterations);
  const Index m = kind == GramianKind::controllability ? op.n_inputs() : op.n_outputs();
  EXPECT_EQ(r.Z.cols(), r.iterations * m);
  EXPECT_LE(r.residual_history.back(), kAdiTol);
  const double true_residual = lyapunov_residual(op, kind, r.Z);
  EXPECT_LE(std::abs(true_residual - r.residual_history.back()),
            kResidualAgreeRel * r.residual_history.back() + kResidualAgreeAbs)
      << "true residual " << true_residual << ", ADI residual " << r.residual_history.back();
  EXPECT_TRUE(
      matrices_near(Matrix(r.Z * r.Z.transpose()), reference, kGramianTol, Compare::relative));
}

bool has_complex_shift(const AdiResult& r) {
  for (Complex p : r.shifts)
    if (p.imag() != 0.0) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Gramians against dense references

TEST(LowRankAdi, ChainGramiansMatchKroneckerReference) {
  // Well damped (Rayleigh) and lightly damped (the benchmark's dampers) chains of 20 masses:
  // the lightly damped one has complex eigenvalues near the imaginary axis, so both strategies
  // must use complex shift pairs there.
  for (bool rayleigh : {true, false}) {
    const SecondOrderSystem so = chain(20, rayleigh);
    SecondOrderLtiOperator op(so);
    for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
      const Matrix reference = kronecker_gramian(op, kind);
      // Projection shifts reflect the unstable estimates and meet the eigenvalue 1 exactly.
      // (Penzl's
      // shifts converge on this all-unstable A, to the solution of its Lyapunov equation: not
      // caught.)
      for (ShiftStrategy strategy : {ShiftStrategy::projection}) {
        const AdiResult r = low_rank_adi(op, kind, options(strategy));
        check_run(op, kind, r, reference,
                  std::string(rayleigh ? "rayleigh" : "lightly damped") + " chain, " +
                      std::string(to_string(kind)) + ", " + std::string(to_string(strategy)));
        if (!rayleigh) {
          EXPECT_TRUE(has_complex_shift(r)) << to_string(strategy);
        }
      }
    }
  }
}

TEST(LowRankAdi, DescriptorGramiansMatchKroneckerReference) {
  // E != I in both: the structured operator with a consistent mass matrix (and the first-order
  // operator on the same system), and a random unsymmetric pencil with both LU backends.
  const SecondOrderSystem so = fe_chain(15);
  const DescriptorSystem fo = to_descriptor(so);
  const DescriptorSystem rnd = random_descriptor(40, 2, 3, 31);
  SecondOrderLtiOperator structured(so);
  SparseLtiOperator first_order(fo);
  SparseLtiOperator random_klu(rnd, SparseBackend::klu);
  SparseLtiOperator random_umfpack(rnd, SparseBackend::umfpack);
  struct Case {
    const char* name;
    LtiOperator* op;
  };
  for (const Case& c :
       {Case{"second-order, M tridiagonal", &structured},
        Case{"first-order form of it", &first_order}, Case{"random pencil, KLU", &random_klu},
        Case{"random pencil, UMFPACK", &random_umfpack}}) {
    for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
      const Matrix reference = kronecker_gramian(*c.op, kind);
      // Projection shifts reflect the unstable estimates and meet the eigenvalue 1 exactly.
      // (Penzl's
      // shifts converge on this all-unstable A, to the solution of its Lyapunov equation: not
      // caught.)
      for (ShiftStrategy strategy : {ShiftStrategy::projection}) {
        const AdiResult r = low_rank_adi(*c.op, kind, options(strategy));
        check_run(*c.op, kind, r, reference,
                  std::string(c.name) + ", " + std::string(to_string(kind)) + ", " +
                      std::string(to_string(strategy)));
      }
    }
  }
}

TEST(LowRankAdi, SymmetricPencilGramiansMatchKroneckerReference) {
  // The rail's structure: automatic takes Penzl's shifts, which are real for a symmetric pencil
  // (its Ritz values are Rayleigh quotients); projection shifts, with and without the residual
  // in the projection space and with a min-max selection, must give the same Gramians.
  const DescriptorSystem sys = symmetric_grid(6);
  SparseLtiOperator op(sys);
  ASSERT_TRUE(op.symmetric_pencil());
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    const Matrix reference = kronecker_gramian(op, kind);
    const std::string k(to_string(kind));
    for (ShiftStrategy strategy :
         {ShiftStrategy::automatic, ShiftStrategy::penzl, ShiftStrategy::projection}) {
      const AdiResult r = low_rank_adi(op, kind, options(strategy));
      check_run(op, kind, r, reference, k + ", " + std::string(to_string(strategy)));
      EXPECT_EQ(r.strategy, strategy == ShiftStrategy::projection ? ShiftStrategy::projection
                                                                  : ShiftStrategy::penzl);
      EXPECT_FALSE(has_complex_shift(r)) << to_string(strategy);
    }
    AdiOptions o = options(ShiftStrategy::projection);
    o.projection_with_residual = false;
    o.projection_columns = 8;
    o.projection_shifts = 3;
    check_run(op, kind, low_rank_adi(op, kind, o), reference,
              k + ", projection on Z alone, 3 shifts per round");
  }
}

TEST(LowRankAdi, PenzlCycleCarriesOverToTheTransposedPencil) {
  // The transposed pencil has the same spectrum: the observability run given the controllability
  // run's cycle uses exactly those shifts and still meets the reference. Projection shifts report
  // no cycle; given ones report theirs.
  const SecondOrderSystem so = fe_chain(12);
  SecondOrderLtiOperator op(so);
  const AdiResult c = low_rank_adi(op, GramianKind::controllability, options(ShiftStrategy::penzl));
  ASSERT_FALSE(c.shift_cycle.empty());
  EXPECT_TRUE(has_complex_shift(c));
  AdiOptions o = options(ShiftStrategy::penzl);
  o.shifts = c.shift_cycle;
  const AdiResult ob = low_rank_adi(op, GramianKind::observability, o);
  check_run(op, GramianKind::observability, ob, kronecker_gramian(op, GramianKind::observability),
            "Penzl cycle carried over");
  EXPECT_EQ(ob.shift_cycle, c.shift_cycle);
  for (std::size_t i = 0; i < ob.shifts.size(); ++i)
    EXPECT_EQ(ob.shifts[i], c.shift_cycle[i % c.shift_cycle.size()]) << "step " << i;
  EXPECT_TRUE(low_rank_adi(op, GramianKind::controllability, options(ShiftStrategy::projection))
                  .shift_cycle.empty());
}

TEST(LowRankAdi, AutomaticStrategyIsProjectionForUnsymmetricPencils) {
  const SecondOrderSystem so = chain(10, true);
  SecondOrderLtiOperator op(so);
  EXPECT_FALSE(op.symmetric_pencil());
  const AdiResult r =
      low_rank_adi(op, GramianKind::controllability, options(ShiftStrategy::automatic));
  EXPECT_EQ(r.strategy, ShiftStrategy::projection);
  EXPECT_NE(r.message.find("projection shifts"), std::string::npos) << r.message;
}

TEST(LowRankAdi, FrobeniusResidualMatchesTheDenseDefinition) {
  // residual_norm = frobenius stops on ||W^T W||_F / ||B^T B||_F, which must be the dense
  // ||A X E^T + E X A^T + B B^T||_F / ||B B^T||_F of the factor returned.
  const DescriptorSystem rnd = random_descriptor(30, 3, 2, 45);
  SparseLtiOperator op(rnd);
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    AdiOptions o = options(ShiftStrategy::projection);
    o.residual_norm = ResidualNorm::frobenius;
    const AdiResult r = low_rank_adi(op, kind, o);
    SCOPED_TRACE(r.message);
    ASSERT_EQ(r.status, AdiStatus::converged);
    EXPECT_LE(r.residual_history.back(), kAdiTol);
    const bool obs = kind == GramianKind::observability;
    const Matrix A = obs ? Matrix(dense_A(op).transpose()) : dense_A(op);
    const Matrix E = obs ? Matrix(dense_E(op).transpose()) : dense_E(op);
    const Matrix B = obs ? Matrix(op.C().transpose()) : op.B();
    const Matrix X = r.Z * r.Z.transpose();
    const double dense =
        (A * X * E.transpose() + E * X * A.transpose() + B * B.transpose()).norm() /
        (B.transpose() * B).norm();
    EXPECT_LE(std::abs(dense - r.residual_history.back()),
              kResidualAgreeRel * r.residual_history.back() + kResidualAgreeAbs)
        << "dense " << dense << ", ADI " << r.residual_history.back();
    EXPECT_TRUE(matrices_near(X, kronecker_gramian(op, kind), kGramianTol, Compare::relative));
  }
}

TEST(LowRankAdi, ChainOf100MassesMatchesSlicot) {
  const SecondOrderSystem so = chain(100, true);
  SecondOrderLtiOperator op(so);
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    const AdiResult r = low_rank_adi(op, kind, options(ShiftStrategy::projection));
    check_run(op, kind, r, slicot_gramian(op, kind),
              "N = 100 chain, " + std::string(to_string(kind)));
  }
}

// ---------------------------------------------------------------------------------------------
// The tall products (two threads from 2 kMinRowsPerThread rows on)

/// The two-thread products only reorder the sums of the one-thread ones: X^T Y adds two partial
/// sums of about n/2 products each (rounding about n eps |x| |y| per entry, here below 1e-12 of
/// the largest entry); X Z computes each row as before.
constexpr double kSplitSumTol = 1e-12;
constexpr double kSplitRowTol = 1e-14;

TEST(TallProducts, TwoThreadSplitEqualsTheOneThreadProduct) {
  const Index n = 2 * detail::kMinRowsPerThread + 123;  // unequal halves
  std::mt19937 gen(20261124u);
  const Matrix X = testing::random_normal(n, 9, gen), Y = testing::random_normal(n, 27, gen);
  const Matrix Z = testing::random_normal(9, 4, gen);
  const Matrix XtY = X.transpose() * Y, XZ = X * Z;  // Eigen on this thread
  EXPECT_TRUE(
      matrices_near(detail::tall_transpose_product(X, Y), XtY, kSplitSumTol, Compare::relative));
  EXPECT_TRUE(matrices_near(detail::tall_product(X, Z), XZ, kSplitRowTol, Compare::relative));
  // Column blocks of a larger matrix (outer stride n), as the projection shifts pass them.
  EXPECT_TRUE(matrices_near(detail::tall_transpose_product(Y.middleCols(3, 5), Y.middleCols(1, 20)),
                            Matrix(Y.middleCols(3, 5).transpose() * Y.middleCols(1, 20)),
                            kSplitSumTol, Compare::relative));
  // Below the threshold the caller's thread does it all.
  const Index small = detail::kMinRowsPerThread;
  EXPECT_TRUE(matrices_near(detail::tall_transpose_product(X.topRows(small), Y.topRows(small)),
                            Matrix(X.topRows(small).transpose() * Y.topRows(small)), kSplitSumTol,
                            Compare::relative));
  EXPECT_THROW(detail::tall_transpose_product(X, Y.topRows(small)), InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// The residual norm

TEST(LyapunovResidual, MatchesTheDenseDefinition) {
  const DescriptorSystem rnd = random_descriptor(30, 2, 3, 41);
  SparseLtiOperator op(rnd);
  std::mt19937 gen(42);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix Z(30, 5);
  for (Index i = 0; i < Z.size(); ++i) Z(i) = normal(gen);
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    EXPECT_TRUE(scalars_near(lyapunov_residual(op, kind, Z), dense_residual(op, kind, Z),
                             kResidualFormulaTol, Compare::relative))
        << to_string(kind);
    // No factor: R = B B^T, relative residual 1.
    EXPECT_TRUE(scalars_near(lyapunov_residual(op, kind, Matrix(30, 0)), 1.0, kResidualFormulaTol));
  }
  EXPECT_THROW(lyapunov_residual(op, GramianKind::controllability, Matrix(29, 2)), InvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Given shifts, statuses, failures

TEST(LowRankAdi, GivenShiftsWithAComplexPair) {
  const DescriptorSystem rnd = random_descriptor(30, 2, 2, 51);
  SparseLtiOperator op(rnd);
  AdiOptions o = options(ShiftStrategy::given);
  o.shifts = {-1.5, Complex(-2.0, 0.5), Complex(-2.0, -0.5), -2.5};
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    const AdiResult r = low_rank_adi(op, kind, o);
    check_run(op, kind, r, kronecker_gramian(op, kind), "given shifts");
    // The shifts are used cyclically, the pair as two consecutive steps.
    ASSERT_GE(r.shifts.size(), 4u);
    EXPECT_EQ(r.shifts[0], Complex(-1.5));
    EXPECT_EQ(r.shifts[1], Complex(-2.0, 0.5));
    EXPECT_EQ(r.shifts[2], Complex(-2.0, -0.5));
    EXPECT_EQ(r.shifts[3], Complex(-2.5));
  }
}

TEST(LowRankAdi, StepLimitIsReportedAsMaxIterations) {
  const SecondOrderSystem so = chain(30, true);
  SecondOrderLtiOperator op(so);
  AdiOptions o = options(ShiftStrategy::projection);
  o.max_iterations = 5;
  const AdiResult r = low_rank_adi(op, GramianKind::controllability, o);
  EXPECT_EQ(r.status, AdiStatus::max_iterations);
  EXPECT_LE(r.iterations, 5);
  EXPECT_GE(r.iterations, 4);  // a complex pair is never split: 4 or 5 steps
  EXPECT_EQ(r.Z.cols(), r.iterations);
  EXPECT_GT(r.residual_history.back(), o.tolerance);
  EXPECT_NE(r.message.find("step limit 5"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find(std::to_string(r.iterations) + " steps"), std::string::npos)
      << r.message;
}

TEST(LowRankAdi, SlowProgressIsReportedAsStalled) {
  // A decay rate of 1e-3 against a single shift -100: each step shrinks that component by
  // |(l - p)/(l + p)| ~ 1 - 2e-5, so the residual does not drop by 10% in 5 steps.
  DescriptorSystem sys;
  sys.A = to_sparse(diagonal({-1e-3, -1.0}));
  sys.E = to_sparse(Matrix::Identity(2, 2));
  sys.B = to_sparse(Matrix::Ones(2, 1));
  sys.C = to_sparse(Matrix::Ones(1, 2));
  sys.D_ff = Matrix::Zero(1, 1);
  SparseLtiOperator op(sys);
  AdiOptions o = options(ShiftStrategy::given);
  o.shifts = {-100.0};
  o.stall_window = 5;
  const AdiResult r = low_rank_adi(op, GramianKind::controllability, o);
  EXPECT_EQ(r.status, AdiStatus::stalled) << r.message;
  EXPECT_LT(r.iterations, 20);
  EXPECT_NE(r.message.find("stalled"), std::string::npos) << r.message;
}

TEST(LowRankAdi, SingularShiftThrowsNamingTheShift) {
  // An eigenvalue at +1: A + p E is singular for the given shift p = -1.
  DescriptorSystem sys;
  sys.A = to_sparse(diagonal({1.0, -2.0, -3.0}));
  sys.E = to_sparse(Matrix::Identity(3, 3));
  sys.B = to_sparse(Matrix::Ones(3, 1));
  sys.C = to_sparse(Matrix::Ones(1, 3));
  sys.D_ff = Matrix::Zero(1, 1);
  SparseLtiOperator op(sys);
  AdiOptions o = options(ShiftStrategy::given);
  o.shifts = {-1.0};
  try {
    low_rank_adi(op, GramianKind::controllability, o);
    FAIL() << "no exception for a singular shifted matrix";
  } catch (const InvalidArgument& e) {
    // Re p < 0: -p = 1 is an eigenvalue in the right half-plane, bad input (issue 29).
    EXPECT_NE(std::string(e.what()).find("p = (-1,0)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the system is not stable"), std::string::npos)
        << e.what();
  }
}

TEST(LowRankAdi, InvalidOptionsAreRejected) {
  const DescriptorSystem rnd = random_descriptor(10, 1, 1, 61);
  SparseLtiOperator op(rnd);
  auto rejects = [&](AdiOptions o, const std::string& text) {
    try {
      low_rank_adi(op, GramianKind::controllability, o);
      ADD_FAILURE() << "accepted; expected an error naming \"" << text << "\"";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  AdiOptions o;
  o.tolerance = 0.0;
  rejects(o, "tolerance must be positive and finite, got 0");
  o = {};
  o.tolerance = -1e-3;
  rejects(o, "got -0.001");
  o = {};
  o.max_iterations = 0;
  rejects(o, "max_iterations must be at least 1, got 0");
  o = {};
  o.stall_factor = 1.5;
  rejects(o, "stall_factor must be in [0, 1)");
  o = options(ShiftStrategy::given);
  rejects(o, "needs at least one shift");
  o.shifts = {-1.0, 0.5};
  rejects(o, "given shift 1 is (0.5,0)");
  o.shifts = {Complex(-1.0, 2.0), -3.0};
  rejects(o, "is not its conjugate");
  o.shifts = {Complex(-1.0, 2.0)};
  rejects(o, "is not its conjugate");
  o = options(ShiftStrategy::penzl);
  o.penzl_shifts = 0;
  rejects(o, "penzl_shifts must be at least 1, got 0");
  o = {};
  o.projection_shifts = -1;
  rejects(o, "projection_shifts must be >= 0 (0: all), got -1");
  EXPECT_THROW(parse_shift_strategy("heuristic"), InvalidArgument);
  EXPECT_THROW(parse_residual_norm("max"), InvalidArgument);
}

TEST(LowRankAdi, StopRequestInterrupts) {
  const DescriptorSystem rnd = random_descriptor(10, 1, 1, 71);
  SparseLtiOperator op(rnd);
  std::atomic<bool> stop{true};
  AdiOptions o;
  o.stop_requested = &stop;
  EXPECT_THROW(low_rank_adi(op, GramianKind::controllability, o), Interrupted);
}

TEST(LowRankAdi, ZeroInputGivesAnEmptyFactor) {
  DescriptorSystem rnd = random_descriptor(10, 1, 1, 81);
  rnd.B = SparseMatrix(10, 1);
  SparseLtiOperator op(rnd);
  const AdiResult r = low_rank_adi(op, GramianKind::controllability);
  EXPECT_EQ(r.status, AdiStatus::converged);
  EXPECT_EQ(r.Z.rows(), 10);
  EXPECT_EQ(r.Z.cols(), 0);
}

// An unstable A (issue 29): the residual blows up; the message says the system is not stable and
// names the eigenvalue the shift computation met, as the dense solver does, instead of only
// "the residual factor became non-finite".
TEST(LowRankAdi, UnstableSystemIsNamedAsSuch) {
  DescriptorSystem d;
  const Index n = 30;
  d.E = SparseMatrix(n, n);
  d.E.setIdentity();
  d.A = SparseMatrix(n, n);
  for (Index i = 0; i < n; ++i) {
    d.A.insert(i, i) = 1.0 + static_cast<double>(i);  // eigenvalues 1 .. 30: all unstable
    if (i + 1 < n) d.A.insert(i, i + 1) = 0.5;
  }
  d.B = SparseMatrix(n, 1);
  d.B.insert(0, 0) = 1.0;
  d.C = SparseMatrix(1, n);
  d.C.insert(0, n - 1) = 1.0;
  d.D_ff = Matrix::Zero(1, 1);
  // Projection shifts reflect the unstable estimates and meet the eigenvalue 1 exactly. (Penzl's
  // shifts converge on this all-unstable A, to the solution of its Lyapunov equation: not caught.)
  for (ShiftStrategy strategy : {ShiftStrategy::projection}) {
    SparseLtiOperator op(d);
    AdiOptions o;
    o.strategy = strategy;
    try {
      low_rank_adi(op, GramianKind::controllability, o);
      ADD_FAILURE() << to_string(strategy) << ": an unstable system gave a Gramian";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("the system is not stable"), std::string::npos)
          << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << to_string(strategy) << ": not named as unstable: " << e.what();
    }
  }
}

TEST(LowRankAdi, Names) {
  EXPECT_EQ(to_string(GramianKind::controllability), "controllability");
  EXPECT_EQ(to_string(GramianKind::observability), "observability");
  for (ShiftStrategy s : {ShiftStrategy::automatic, ShiftStrategy::projection, ShiftStrategy::penzl,
                          ShiftStrategy::given})
    EXPECT_EQ(parse_shift_strategy(to_string(s)), s);
  for (ResidualNorm n : {ResidualNorm::spectral, ResidualNorm::frobenius})
    EXPECT_EQ(parse_residual_norm(to_string(n)), n);
  EXPECT_EQ(to_string(AdiStatus::stalled), "stalled");
}

}  // namespace
}  // namespace mor
