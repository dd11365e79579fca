// SPDX-License-Identifier: GPL-3.0-or-later
// The dense Hammarling solver against analytic solutions, the Kronecker-product formula, SLICOT
// SB03OD (Lyapunov factors) and AB09AD (Hankel singular values of the linear chain); the
// sign-function solver against the same residuals, the Schur path and AB09AD.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>

#include <Eigen/Dense>

#include "models/mass_spring_chain.hpp"
#include "reduction/dense_lyapunov.hpp"
#include "reduction/lti_operator.hpp"
#include "src/core/errors.hpp"
#include "src/linalg/lapack.hpp"
#include "src/systems/lti.hpp"
#include "support/compare.hpp"
#include "support/random_systems.hpp"
#include "support/slicot.hpp"

namespace mor {
namespace {

using testing::random_normal;

using testing::Compare;
using testing::matrices_near;

// Hammarling's method is backward stable, so ||A X + X A^T + B B^T|| / ||B B^T|| is a modest
// multiple of eps ||A|| ||X|| / ||B B^T||; the lightly damped pairs below (real part -1e-3, so
// ||X|| ~ 500 ||B B^T||) make that up to 4e-14 per state as measured; 1e-12 leaves a margin 25.
constexpr double kResidualTolPerState = 1e-12;
// Two backward-stable solvers (or the Kronecker LU) differ by up to about cond * eps, and the
// Lyapunov operators here have condition numbers ||A|| / sep up to ~1e4 (pairs with real part
// -1e-3 next to ||A|| ~ 3): measured differences reach 6e-12, relative to max |X_ij|.
constexpr double kSolutionTol = 1e-10;
// Hankel singular values against SLICOT AB09AD. The project's bar is a relative 1e-10 for every
// sigma_i > 1e-10 sigma_1; it holds for the leading HSVs but is out of reach of any double
// precision method for the small ones: against an 80-bit (long double) run of the same algorithm
// on the N = 200 chain, AB09AD's own sigma_i near 1e-10 sigma_1 are off by about 1e-7 relative
// (and ours by as much), i.e. both carry absolute errors of up to a few eps sigma_1, the
// normwise backward error of the Schur form. So each sigma_i must agree to
// kHsvRelTol sigma_i + kHsvAbsTol sigma_1. The measured differences reach 1.4e-15 sigma_1, so
// kHsvAbsTol = 2e-14 (~90 eps) leaves a margin of ~15 and still catches a loss of the
// square-root accuracy: HSVs from the eigenvalues of P Q (Gramians formed, not factored) err by
// ~eps sigma_1^2 / sigma_i, i.e. ~1e-6 sigma_1 near sigma_i = 1e-10 sigma_1.
constexpr double kHsvRelTol = 1e-10;
constexpr double kHsvAbsTol = 2e-14;
constexpr double kHsvFloor = 1e-10;
// The sign function is not backward stable: its Gramians carry a forward error of about
// cond(A) eps relative to ||X||. Residuals per state, Gramian agreement and the absolute HSV
// tolerance for it (measured values and margins at the tests).
constexpr double kSignResidualTolPerState = 1e-12;
constexpr double kSignSolutionTol = 1e-10;
constexpr double kSignHsvAbsTol = 2e-14;

/// A = V D V^{-1} with a prescribed spectrum: D block diagonal with the real eigenvalues and
/// the 2x2 blocks [a w; -w a] of the pairs a +- i w, V random with condition number ~10.
Matrix matrix_with_spectrum(const std::vector<double>& real_eigenvalues,
                            const std::vector<Complex>& pairs, std::mt19937& gen) {
  const Index n = static_cast<Index>(real_eigenvalues.size() + 2 * pairs.size());
  Matrix D = Matrix::Zero(n, n);
  Index i = 0;
  for (const Complex& p : pairs) {
    D(i, i) = D(i + 1, i + 1) = p.real();
    D(i, i + 1) = p.imag();
    D(i + 1, i) = -p.imag();
    i += 2;
  }
  for (double r : real_eigenvalues) {
    D(i, i) = r;
    ++i;
  }
  const Matrix V = Matrix::Identity(n, n) + 0.3 * random_normal(n, n, gen) / std::sqrt(double(n));
  return V * D * V.inverse();
}

/// A test matrix with real eigenvalues, well damped pairs, lightly damped pairs and pairs very
/// close to the real axis (near-critically damped modes, the delicate case of the 2x2 blocks).
Matrix mixed_spectrum_matrix(Index n, std::mt19937& gen) {
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::vector<double> reals;
  std::vector<Complex> pairs;
  Index size = 0;
  for (Index kind = 0; size < n; kind = (kind + 1) % 4) {
    if (kind == 0 || size + 1 == n) {
      reals.push_back(-0.1 - 3.0 * uni(gen));
      size += 1;
      continue;
    }
    const double w = 0.2 + 3.0 * uni(gen);
    if (kind == 1) pairs.emplace_back(-0.5 - 2.0 * uni(gen), w);     // well damped
    if (kind == 2) pairs.emplace_back(-1e-3 * (1.0 + uni(gen)), w);  // lightly damped
    if (kind == 3) pairs.emplace_back(-0.5 - uni(gen), 1e-7 * w);    // nearly real
    size += 2;
  }
  return matrix_with_spectrum(reals, pairs, gen);
}

/// ||A X + X A^T + B B^T||_F / ||B B^T||_F for X = U U^T.
double relative_residual(const Matrix& A, const Matrix& B, const Matrix& U) {
  const Matrix X = U * U.transpose();
  const Matrix BBt = B * B.transpose();
  return (A * X + X * A.transpose() + BBt).norm() / BBt.norm();
}

/// vec(X) = -(I kron A + A kron I)^{-1} vec(B B^T): an independent dense reference, n <= 30.
Matrix kronecker_lyapunov(const Matrix& A, const Matrix& B) {
  const Index n = A.rows();
  Matrix K = Matrix::Zero(n * n, n * n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i) {
      K.block(j * n, i * n, n, n).diagonal().array() += A(j, i);  // A kron I
      if (i == j) K.block(j * n, j * n, n, n) += A;               // I kron A
    }
  const Matrix BBt = B * B.transpose();
  const Vector x = K.partialPivLu().solve(-BBt.reshaped());
  return x.reshaped(n, n);
}

bool is_upper_triangular(const Matrix& U) {
  for (Index j = 0; j < U.cols(); ++j)
    for (Index i = j + 1; i < U.rows(); ++i)
      if (U(i, j) != 0.0) return false;
  return true;
}

Index complex_eigenvalue_count(const Matrix& A) {
  const Eigen::VectorXcd ev = A.eigenvalues();
  return std::count_if(ev.begin(), ev.end(), [](const Complex& z) { return z.imag() != 0.0; });
}

TEST(DenseLyapunov, ResidualOfRandomStableMatrices) {
  std::mt19937 gen(20240611);
  for (Index n : {1, 2, 7, 40, 90}) {
    // Plain random matrices shifted to be stable (mostly complex pairs) and matrices with a
    // prescribed mixed spectrum.
    Matrix A_shifted = random_normal(n, n, gen);
    A_shifted.diagonal().array() -= 1.2 * std::sqrt(double(n)) + 0.5;
    for (const Matrix& A : {A_shifted, mixed_spectrum_matrix(n, gen)}) {
      if (n >= 7) {
        ASSERT_GT(complex_eigenvalue_count(A), 0) << "the test needs complex pairs";
      }
      for (Index m : {Index(1), Index(3), n + 5}) {
        const Matrix B = random_normal(n, m, gen);
        const Matrix U = lyapunov_cholesky_factor(A, B);
        ASSERT_EQ(U.rows(), n);
        ASSERT_EQ(U.cols(), n);
        EXPECT_TRUE(is_upper_triangular(U)) << "n = " << n << ", m = " << m;
        EXPECT_LE(relative_residual(A, B, U), kResidualTolPerState * n)
            << "n = " << n << ", m = " << m;
      }
    }
  }
}

TEST(DenseLyapunov, DiagonalMatrixMatchesClosedForm) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> uni(0.01, 5.0);
  const Index n = 25;
  Vector a(n);
  for (Index i = 0; i < n; ++i) a(i) = -uni(gen);
  for (Index m : {1, 3}) {
    const Matrix B = random_normal(n, m, gen);
    const Matrix BBt = B * B.transpose();
    Matrix X_exact(n, n);  // X_ij = -(B B^T)_ij / (a_i + a_j)
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i < n; ++i) X_exact(i, j) = -BBt(i, j) / (a(i) + a(j));
    const Matrix U = lyapunov_cholesky_factor(a.asDiagonal().toDenseMatrix(), B);
    EXPECT_TRUE(matrices_near(U * U.transpose(), X_exact, kSolutionTol, Compare::relative))
        << "m = " << m;
  }
}

TEST(DenseLyapunov, ComplexPairsMatchKroneckerFormula) {
  std::mt19937 gen(99);
  // A single rotation-like block, lightly damped.
  {
    Matrix A(2, 2);
    A << -0.01, 3.0, -2.0, -0.01;
    for (Index m : {1, 2}) {
      const Matrix B = random_normal(2, m, gen);
      const Matrix U = lyapunov_cholesky_factor(A, B);
      EXPECT_TRUE(matrices_near(U * U.transpose(), kronecker_lyapunov(A, B), kSolutionTol,
                                Compare::relative))
          << "m = " << m;
    }
  }
  // Mixed spectra, including pairs within 1e-7 of the real axis, and a plain random matrix.
  for (Index n : {5, 16, 30}) {
    Matrix A_shifted = random_normal(n, n, gen);
    A_shifted.diagonal().array() -= 1.2 * std::sqrt(double(n)) + 0.5;
    for (const Matrix& A : {mixed_spectrum_matrix(n, gen), A_shifted})
      for (Index m : {1, 3}) {
        const Matrix B = random_normal(n, m, gen);
        const Matrix U = lyapunov_cholesky_factor(A, B);
        EXPECT_TRUE(matrices_near(U * U.transpose(), kronecker_lyapunov(A, B), kSolutionTol,
                                  Compare::relative))
            << "n = " << n << ", m = " << m;
      }
  }
}

TEST(DenseLyapunov, ZeroRightHandSideGivesZeroFactor) {
  std::mt19937 gen(3);
  const Matrix A = mixed_spectrum_matrix(9, gen);
  EXPECT_EQ(lyapunov_cholesky_factor(A, Matrix::Zero(9, 2)).norm(), 0.0);
}

TEST(DenseLyapunov, AgreesWithSlicotSB03OD) {
  std::mt19937 gen(1234);
  for (Index n : {10, 60, 150}) {
    Matrix A_shifted = random_normal(n, n, gen);
    A_shifted.diagonal().array() -= 1.2 * std::sqrt(double(n)) + 0.5;
    for (const Matrix& A : {mixed_spectrum_matrix(n, gen), A_shifted})
      for (Index m : {Index(1), Index(4), n + 3}) {
        const Matrix B = random_normal(n, m, gen);
        const Matrix U = lyapunov_cholesky_factor(A, B);
        const Matrix U_slicot = testing::slicot_lyapunov_factor(A, B);
        EXPECT_TRUE(matrices_near(U * U.transpose(), U_slicot * U_slicot.transpose(), kSolutionTol,
                                  Compare::relative))
            << "n = " << n << ", m = " << m;
      }
  }
}

/// ||A X E^T + E X A^T + B B^T||_F / ||B B^T||_F (controllability) or
/// ||A^T X E + E^T X A + C^T C||_F / ||C^T C||_F (observability) for X = Z Z^T.
double generalized_residual(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                            const Matrix& Z, GramianKind kind) {
  const Matrix X = Z * Z.transpose();
  if (kind == GramianKind::controllability) {
    const Matrix BBt = B * B.transpose();
    return (A * X * E.transpose() + E * X * A.transpose() + BBt).norm() / BBt.norm();
  }
  const Matrix CtC = C.transpose() * C;
  return (A.transpose() * X * E + E.transpose() * X * A + CtC).norm() / CtC.norm();
}

TEST(DenseGramian, GeneralizedEquationsWithRandomE) {
  std::mt19937 gen(555);
  const Index n = 50;
  const Matrix E = Matrix::Identity(n, n) + 0.4 * random_normal(n, n, gen) / std::sqrt(double(n));
  const Matrix A_stable = mixed_spectrum_matrix(n, gen);
  const Matrix A = E * A_stable;  // E^{-1} A = A_stable
  const Matrix B = random_normal(n, 2, gen), C = random_normal(3, n, gen);
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    const Matrix Z = dense_gramian_factor(E, A, B, C, kind);
    ASSERT_EQ(Z.rows(), n);
    ASSERT_EQ(Z.cols(), n);
    EXPECT_LE(generalized_residual(E, A, B, C, Z, kind), kResidualTolPerState * n)
        << to_string(kind);
  }
  // An empty E is the identity.
  for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
    const Matrix Z = dense_gramian_factor(Matrix(), A_stable, B, C, kind);
    EXPECT_LE(generalized_residual(Matrix::Identity(n, n), A_stable, B, C, Z, kind),
              kResidualTolPerState * n)
        << to_string(kind);
  }
}

struct DenseChain {
  Matrix E, A, B, C;
};

DenseChain dense_chain(Index N, SpringDamping damping, double mass = 1.0) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  p.m = mass;
  p.damping = damping;
  if (damping == SpringDamping::rayleigh) {
    p.alpha = 0.2;
    p.beta = 0.2;
  }
  const MassSpringChain chain(p);
  const DescriptorSystem ds = to_descriptor(chain.linear_system());
  return {Matrix(ds.E), Matrix(ds.A), Matrix(ds.B), Matrix(ds.C)};
}

TEST(DenseGramian, GeneralizedEquationsOfTheChain) {
  for (SpringDamping damping : {SpringDamping::dampers, SpringDamping::rayleigh}) {
    const DenseChain s = dense_chain(30, damping, /*mass=*/1.7);
    const Index n = s.A.rows();
    for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
      const Matrix Z = dense_gramian_factor(s.E, s.A, s.B, s.C, kind);
      EXPECT_LE(generalized_residual(s.E, s.A, s.B, s.C, Z, kind), kResidualTolPerState * n)
          << to_string(kind);
      // The operator overload forms the same dense matrices.
      const DenseLtiOperator op(s.E, s.A, s.B, s.C);
      EXPECT_TRUE(matrices_near(dense_gramian_factor(op, kind), Z, 0.0)) << to_string(kind);
    }
  }
}

// DenseGramianFactors shares one Schur form between both Gramians (A^T's from A's): each factor
// must solve its own generalized equation (the residual formula above, formed densely), the
// Hankel product must be Z_o^T E Z_c of those factors, Z_c Y and Z_o Y must be the products
// with them, and the Lanczos residual estimate (in Schur coordinates) must be at rounding level.
TEST(DenseGramian, OneSchurFormForBothGramians) {
  std::mt19937 gen(777);
  const Index n = 60;
  const Matrix E = Matrix::Identity(n, n) + 0.4 * random_normal(n, n, gen) / std::sqrt(double(n));
  const Matrix A_stable = mixed_spectrum_matrix(n, gen);
  const Matrix B = random_normal(n, 2, gen), C = random_normal(3, n, gen);
  for (const bool identity : {true, false}) {
    const Matrix E_used = identity ? Matrix() : E;
    const Matrix E_dense = identity ? Matrix(Matrix::Identity(n, n)) : E;
    const Matrix A = identity ? A_stable : Matrix(E * A_stable);  // E^{-1} A = A_stable
    const DenseGramianFactors f(E_used, A, B, C);
    const Matrix Zc = f.controllability_factor(), Zo = f.observability_factor();
    for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
      const Matrix& Z = kind == GramianKind::controllability ? Zc : Zo;
      EXPECT_LE(generalized_residual(E_dense, A, B, C, Z, kind), kResidualTolPerState * n)
          << to_string(kind) << " E = I " << identity;
      EXPECT_LE(f.residual(kind), kResidualTolPerState * n) << to_string(kind);
      EXPECT_GT(f.residual(kind), 0.0) << to_string(kind);
      if (identity) {
        // For comparison only: the exact 2-norm of the residual in the original coordinates
        // (reduction/gramian.hpp) also carries the rounding of Q, so it is larger.
        const DenseLtiOperator op(Matrix(), A, B, C);
        std::cout << "[ " << to_string(kind) << " ] residual in Schur coordinates (estimate) "
                  << f.residual(kind) << ", in the original ones " << lyapunov_residual(op, kind, Z)
                  << "\n";
      }
      // The same Gramian as the solver of one equation at a time (its own Schur form of A or
      // A^T).
      const Matrix Z1 = dense_gramian_factor(E_used, A, B, C, kind);
      const Matrix X1 = Z1 * Z1.transpose();
      EXPECT_TRUE(matrices_near(Z * Z.transpose(), X1, kSolutionTol * X1.cwiseAbs().maxCoeff(),
                                Compare::absolute))
          << to_string(kind) << " E = I " << identity;
    }
    const Matrix H = Zo.transpose() * E_dense * Zc;
    EXPECT_TRUE(matrices_near(f.hankel_product(), H, 1e-12 * H.norm(), Compare::absolute));
    const Matrix Y = random_normal(n, 4, gen);
    EXPECT_TRUE(matrices_near(f.controllability_times(Y), Zc * Y, 1e-13 * (Zc * Y).norm(),
                              Compare::absolute));
    EXPECT_TRUE(matrices_near(f.observability_times(Y), Zo * Y, 1e-13 * (Zo * Y).norm(),
                              Compare::absolute));
    EXPECT_EQ(f.eigenvalues().size(), n);
  }
}

// The sign-function path of DenseGramianFactors on the same random systems: each factor solves
// its own generalized equation (formed densely), the Lanczos estimate agrees, the Gramians equal
// the Schur path's, and the Hankel product and the products with Y are those of the factors.
TEST(DenseGramian, SignFunctionSolvesBothEquations) {
  std::mt19937 gen(777);
  const Index n = 60;
  const Matrix E = Matrix::Identity(n, n) + 0.4 * random_normal(n, n, gen) / std::sqrt(double(n));
  const Matrix A_stable = mixed_spectrum_matrix(n, gen);
  const Matrix B = random_normal(n, 2, gen), C = random_normal(3, n, gen);
  for (const bool identity : {true, false}) {
    const Matrix E_used = identity ? Matrix() : E;
    const Matrix E_dense = identity ? Matrix(Matrix::Identity(n, n)) : E;
    const Matrix A = identity ? A_stable : Matrix(E * A_stable);  // E^{-1} A = A_stable
    const DenseGramianFactors f(E_used, A, B, C, DenseLyapunovSolver::sign_function);
    ASSERT_EQ(f.solver(), DenseLyapunovSolver::sign_function);
    EXPECT_GT(f.sign_steps(), 0);
    EXPECT_LE(f.sign_steps(), kSignFunctionMaxSteps);
    EXPECT_TRUE(f.eigenvalues().size() == 0);
    const Matrix Zc = f.controllability_factor(), Zo = f.observability_factor();
    EXPECT_EQ(Zc.cols(), f.rank_c());
    EXPECT_EQ(Zo.cols(), f.rank_o());
    const DenseGramianFactors schur(E_used, A, B, C, DenseLyapunovSolver::schur);
    ASSERT_EQ(schur.solver(), DenseLyapunovSolver::schur);
    for (GramianKind kind : {GramianKind::controllability, GramianKind::observability}) {
      const Matrix& Z = kind == GramianKind::controllability ? Zc : Zo;
      const double formed = generalized_residual(E_dense, A, B, C, Z, kind);
      EXPECT_LE(formed, kSignResidualTolPerState * n) << to_string(kind) << " E = I " << identity;
      EXPECT_LE(f.residual(kind), kSignResidualTolPerState * n) << to_string(kind);
      EXPECT_GT(f.residual(kind), 0.0) << to_string(kind);
      std::cout << "[ sign function, " << to_string(kind) << ", E = I " << identity << " ] "
                << f.sign_steps() << " steps, rank " << Z.cols() << ", residual " << formed
                << " (estimate " << f.residual(kind) << "; Schur path " << schur.residual(kind)
                << ")\n";
      const Matrix Zs = kind == GramianKind::controllability ? schur.controllability_factor()
                                                             : schur.observability_factor();
      const Matrix X = Zs * Zs.transpose();
      EXPECT_TRUE(matrices_near(Matrix(Z * Z.transpose()), X,
                                kSignSolutionTol * X.cwiseAbs().maxCoeff(), Compare::absolute))
          << to_string(kind) << " E = I " << identity;
    }
    const Matrix H = Zo.transpose() * E_dense * Zc;
    EXPECT_TRUE(matrices_near(f.hankel_product(), H, 1e-12 * H.norm(), Compare::absolute));
    const Matrix Yc = random_normal(f.rank_c(), 4, gen), Yo = random_normal(f.rank_o(), 4, gen);
    EXPECT_TRUE(matrices_near(f.controllability_times(Yc), Zc * Yc, 1e-13 * (Zc * Yc).norm(),
                              Compare::absolute));
    EXPECT_TRUE(matrices_near(f.observability_times(Yo), Zo * Yo, 1e-13 * (Zo * Yo).norm(),
                              Compare::absolute));
    EXPECT_THROW(f.controllability_times(random_normal(f.rank_c() + 1, 1, gen)), InvalidArgument);
  }
}

// The automatic choice: the Schur path below kSignFunctionMinStates states and for an
// ill-conditioned A (rcond below kSignFunctionMinRcond), the sign function otherwise; an unstable
// A gets the Schur path's message naming the eigenvalue under automatic, and a NumericalError
// naming the sign iteration when the sign function is asked for.
TEST(DenseGramian, AutomaticSolverChoice) {
  std::mt19937 gen(31);
  const Index n = kSignFunctionMinStates;
  const Matrix B = random_normal(n, 1, gen), C = random_normal(1, n, gen);
  {
    const Matrix A = mixed_spectrum_matrix(40, gen);
    const DenseGramianFactors f(Matrix(), A, B.topRows(40), C.leftCols(40));
    EXPECT_EQ(f.solver(), DenseLyapunovSolver::schur);
  }
  // Eigenvalues -0.1 .. -3.1, moderately conditioned V: the sign function.
  std::vector<double> reals(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) reals[static_cast<std::size_t>(i)] = -0.1 - 3.0 * double(i) / n;
  const Matrix A_good = matrix_with_spectrum(reals, {}, gen);
  const DenseGramianFactors good(Matrix(), A_good, B, C);
  EXPECT_EQ(good.solver(), DenseLyapunovSolver::sign_function);
  // An eigenvalue of -1e-11 next to ones of order 1: rcond ~ 1e-11, the Schur path.
  reals[0] = -1e-11;
  const Matrix A_ill = matrix_with_spectrum(reals, {}, gen);
  const DenseGramianFactors ill(Matrix(), A_ill, B, C);
  EXPECT_EQ(ill.solver(), DenseLyapunovSolver::schur);
  // Unstable: +0.5.
  reals[0] = 0.5;
  const Matrix A_bad = matrix_with_spectrum(reals, {}, gen);
  try {
    DenseGramianFactors f(Matrix(), A_bad, B, C);
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("not stable"), std::string::npos) << e.what();
  }
  try {
    DenseGramianFactors f(Matrix(), A_bad, B, C, DenseLyapunovSolver::sign_function);
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("sign"), std::string::npos) << e.what();
  }
}

// Both solvers of DenseGramianFactors against AB09AD on the chains of N = 200 (n = 400): the
// Schur path to kHsvAbsTol, the sign function to kSignHsvAbsTol (its factors carry the forward
// error of the Newton iteration, about cond(A) eps relative to ||P|| rather than a backward
// error of eps).
class ChainHsv : public ::testing::TestWithParam<DenseLyapunovSolver> {};

TEST_P(ChainHsv, HankelSingularValuesOfTheChainMatchSlicotAB09AD) {
  const DenseLyapunovSolver solver = GetParam();
  const double abs_tol = solver == DenseLyapunovSolver::schur ? kHsvAbsTol : kSignHsvAbsTol;
  for (SpringDamping damping : {SpringDamping::dampers, SpringDamping::rayleigh}) {
    const std::string name = damping == SpringDamping::dampers ? "chain" : "rayleigh";
    const DenseChain s = dense_chain(200, damping);
    const Index n = s.A.rows();
    ASSERT_EQ(n, 400);
    const DenseGramianFactors f(s.E, s.A, s.B, s.C, solver);
    ASSERT_EQ(f.solver(), solver);
    Matrix H = f.hankel_product();
    const Vector computed = lapack::singular_values(H);
    Vector hsv = Vector::Zero(n);  // the sign function's omitted values are zero here
    hsv.head(computed.size()) = computed;
    const Eigen::PartialPivLU<Matrix> lu(s.E);
    const Vector hsv_slicot =
        testing::slicot_hankel_singular_values(lu.solve(s.A), lu.solve(s.B), s.C);
    const double sigma1 = hsv_slicot(0);
    double worst_relative = 0.0, worst_absolute = 0.0;
    Index compared = 0, leading_within_bar = -1;
    for (Index i = 0; i < n && hsv_slicot(i) > kHsvFloor * sigma1; ++i) {
      ++compared;
      const double diff = std::abs(hsv(i) - hsv_slicot(i));
      worst_relative = std::max(worst_relative, diff / hsv_slicot(i));
      if (diff > kHsvRelTol * hsv_slicot(i)) {
        if (leading_within_bar < 0) leading_within_bar = i;
        worst_absolute = std::max(worst_absolute, diff / sigma1);
      }
      EXPECT_LE(diff, kHsvRelTol * hsv_slicot(i) + abs_tol * sigma1)
          << "sigma_" << i + 1 << " = " << hsv_slicot(i) << " (AB09AD), " << hsv(i) << " here ("
          << name << " damping)";
    }
    if (leading_within_bar < 0) leading_within_bar = compared;
    ASSERT_GT(compared, 10) << "the HSVs should decay slowly enough to test " << name;
    ::testing::Test::RecordProperty("worst_relative_hsv_difference_" + name,
                                    detail::concat(worst_relative));
    ::testing::Test::RecordProperty("worst_hsv_difference_over_sigma1_" + name,
                                    detail::concat(worst_absolute));
    std::cout << "[ " << to_string(solver) << ", chain N = 200, " << name << " damping ] "
              << compared << " HSVs above 1e-10 sigma_1; the first " << leading_within_bar
              << " agree with AB09AD to 1e-10 relative; worst relative difference "
              << worst_relative << "; beyond 1e-10 relative, worst difference / sigma_1 "
              << worst_absolute << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(DenseGramian, ChainHsv,
                         ::testing::Values(DenseLyapunovSolver::schur,
                                           DenseLyapunovSolver::sign_function),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(DenseLyapunov, UnstableMatrixIsRejectedNamingTheEigenvalue) {
  Matrix A = Vector::LinSpaced(4, -4.0, -1.0).asDiagonal();
  A(2, 2) = 0.5;
  try {
    lyapunov_cholesky_factor(A, Matrix::Ones(4, 1));
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("0.5"), std::string::npos) << e.what();
  }
  // A complex pair 0.25 +- 2i.
  Matrix P(3, 3);
  P << 0.25, 2.0, 0.0, -2.0, 0.25, 0.0, 0.0, 0.0, -1.0;
  try {
    lyapunov_cholesky_factor(P, Matrix::Ones(3, 1));
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("0.25"), std::string::npos) << e.what();
  }
  // Eigenvalues on the imaginary axis, in a generalized system.
  Matrix Osc(2, 2);
  Osc << 0.0, 1.0, -1.0, 0.0;
  EXPECT_THROW(dense_gramian_factor(Matrix::Identity(2, 2) * 3.0, Osc, Matrix::Ones(2, 1),
                                    Matrix::Ones(1, 2), GramianKind::observability),
               NumericalError);
}

TEST(DenseGramian, SingularEIsRejected) {
  Matrix E = Matrix::Identity(3, 3);
  E(1, 1) = 0.0;
  const Matrix A = -Matrix::Identity(3, 3);
  EXPECT_THROW(dense_gramian_factor(E, A, Matrix::Ones(3, 1), Matrix::Ones(1, 3),
                                    GramianKind::controllability),
               NumericalError);
}

TEST(DenseGramian, SizeMismatchesAreRejected) {
  const Matrix A = -Matrix::Identity(3, 3);
  const Matrix B = Matrix::Ones(3, 1), C = Matrix::Ones(1, 3);
  EXPECT_THROW(lyapunov_cholesky_factor(Matrix::Ones(3, 2), B), InvalidArgument);
  EXPECT_THROW(lyapunov_cholesky_factor(A, Matrix::Ones(2, 1)), InvalidArgument);
  EXPECT_THROW(lyapunov_cholesky_factor(A, Matrix(3, 0)), InvalidArgument);
  EXPECT_THROW(lyapunov_cholesky_factor(Matrix(), Matrix()), InvalidArgument);
  EXPECT_THROW(dense_gramian_factor(Matrix::Identity(2, 2), A, B, C, GramianKind::controllability),
               InvalidArgument);
  EXPECT_THROW(
      dense_gramian_factor(Matrix(), A, Matrix::Ones(4, 1), C, GramianKind::controllability),
      InvalidArgument);
  EXPECT_THROW(dense_gramian_factor(Matrix(), A, B, Matrix::Ones(1, 2), GramianKind::observability),
               InvalidArgument);
  EXPECT_THROW(dense_gramian_factor(Matrix(), Matrix::Ones(3, 2), B, C, GramianKind::observability),
               InvalidArgument);
}

TEST(Slicot, AB09ADReproducesItsDocumentedExample) {
  // The example of the SLICOT AB09AD documentation (7 states, 2 inputs, 3 outputs): the oracle
  // returns all seven Hankel singular values, as printed there to four decimals.
  Matrix A(7, 7), B = Matrix::Zero(7, 2), C = Matrix::Zero(3, 7);
  A << -0.04165, 0, 4.92, -4.92, 0, 0, 0,  //
      -5.21, -12.5, 0, 0, 0, 0, 0,         //
      0, 3.33, -3.33, 0, 0, 0, 0,          //
      0.545, 0, 0, 0, -0.545, 0, 0,        //
      0, 0, 0, 4.92, -0.04165, 0, 4.92,    //
      0, 0, 0, 0, -5.21, -12.5, 0,         //
      0, 0, 0, 0, 0, 3.33, -3.33;
  B(1, 0) = 12.5;
  B(5, 1) = 12.5;
  C(0, 0) = 1;
  C(1, 3) = 1;
  C(2, 4) = 1;
  Vector expected(7);
  expected << 2.5139, 2.0846, 1.9178, 0.7666, 0.5473, 0.0253, 0.0246;
  const Vector hsv = testing::slicot_hankel_singular_values(A, B, C);
  EXPECT_TRUE(matrices_near(hsv, expected, 0.6e-4));  // half a unit of the fourth decimal
  // And the solver here agrees with it.
  const Matrix Zc = dense_gramian_factor(Matrix(), A, B, C, GramianKind::controllability);
  const Matrix Zo = dense_gramian_factor(Matrix(), A, B, C, GramianKind::observability);
  const Vector ours = Eigen::JacobiSVD<Matrix>(Zo.transpose() * Zc).singularValues();
  EXPECT_TRUE(matrices_near(ours, hsv, kSolutionTol, Compare::relative));
}

}  // namespace
}  // namespace mor
