// SPDX-License-Identifier: GPL-3.0-or-later
// A linear descriptor system seen only through the operations that Gramian solvers, balanced
// truncation and system norms need: products with A and E (and their transposes) and solves
// with the shifted matrix A + p E. Sparse first-order systems, structured second-order systems,
// small dense (reduced) systems and error systems share the low-rank ADI, the square-root BT and
// the norm code through this interface (the role Spectra's perform_op plays for eigensolvers).
//
//     E x' = A x + B u,   y = C x + D_ff u        n states, m inputs, p outputs
//     G(s) = C (s E - A)^{-1} B + D_ff = -C (A + p E)^{-1} B + D_ff   with p = -s
//
// The system data are constant and owned by the caller; an operator keeps only references to
// them plus its factorization cache, so it is the "workspace" of the system (non-copyable,
// non-const solves).
#pragma once

#include <memory>

#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/lti.hpp"

namespace mor {

class LtiOperator {
 public:
  virtual ~LtiOperator() = default;
  LtiOperator(const LtiOperator&) = delete;
  LtiOperator& operator=(const LtiOperator&) = delete;

  virtual Index n() const = 0;
  Index n_inputs() const { return B().cols(); }
  Index n_outputs() const { return C().rows(); }

  /// Input matrix B (n x m), output matrix C (p x n), feed-through D_ff (p x m), all dense.
  virtual const Matrix& B() const = 0;
  virtual const Matrix& C() const = 0;
  virtual const Matrix& D_ff() const = 0;

  /// Y = A X, or Y = A^T X if transpose (X: n x k, Y resized to n x k).
  virtual void apply_A(const Matrix& X, Matrix& Y, bool transpose = false) const = 0;
  /// Y = E X, or Y = E^T X if transpose.
  virtual void apply_E(const Matrix& X, Matrix& Y, bool transpose = false) const = 0;
  /// True when E is the identity, so callers may skip the products.
  virtual bool E_is_identity() const { return false; }
  /// True when A and E are known to be exactly symmetric (then the pencil's spectrum is real
  /// whenever E is definite, and A + p E is its own transpose); false when unknown.
  virtual bool symmetric_pencil() const { return false; }

  /// X = (A + p E)^{-1} R, or (A + p E)^{-T} R if transpose (plain transpose, no conjugation),
  /// for a real shift p. R is n x k; X may alias R.
  /// @throws NumericalError naming p if A + p E is singular.
  virtual void solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose = false) = 0;
  /// The same for a complex shift p (complex arithmetic, complex right-hand sides).
  virtual void solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                             bool transpose = false) = 0;

  /// Y = H X for an energy weight H of the realisation, if the operator knows one: H symmetric
  /// and invertible with H E symmetric positive definite and H A + (H A)^T negative
  /// semidefinite, so that the pencil (H A, H E) is dissipative (for the transposed pencil
  /// (A^T, E^T) when transpose is set). A Galerkin projection in this inner product,
  /// (V^T H A V, V^T H E V), keeps every eigenvalue in the closed left half plane; the rational
  /// Krylov Gramian solver relies on it. Returns false, leaving Y untouched, when no weight is
  /// known (the default).
  virtual bool apply_energy_weight(const Matrix& X, Matrix& Y, bool transpose = false) {
    (void)X, (void)Y, (void)transpose;
    return false;
  }

  /// Res = R - (A + p E) X for a complex shift p, with every product accumulated in extended
  /// precision (long double), for mixed-precision iterative refinement of shifted solves
  /// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., sec. 12.1): the
  /// refinement then converges to a solution accurate to about eps whenever the solve's
  /// condition number times eps stays below 1, which a residual in working precision cannot
  /// give. Returns false, leaving Res untouched, when the operator cannot (the default).
  virtual bool shifted_residual_extended(Complex p, const ComplexMatrix& R, const ComplexMatrix& X,
                                         ComplexMatrix& Res) const {
    (void)p, (void)R, (void)X, (void)Res;
    return false;
  }

  /// A second operator on the same system data with its own factor cache and scratch, for
  /// shifted solves on another thread (an operator's cache is not thread-safe; the system data
  /// are only read). Its solves give the same results as this one's. nullptr (the default)
  /// when the operator does not offer one.
  virtual std::unique_ptr<LtiOperator> solver_copy() const { return nullptr; }

 protected:
  LtiOperator() = default;
};

/// A general sparse descriptor system (E, A, B, C, D_ff). Shifted matrices A + p E are
/// factorized by a sparse LU (KLU or UMFPACK for real shifts, KLU's complex LU for complex
/// shifts); the symbolic analysis of the pattern of A + E is done once and reused for every
/// shift. When A and E are exactly symmetric (the rail and other symmetric FE models: E SPD,
/// A negative definite), a real p < 0 makes -(A + p E) symmetric positive definite and CHOLMOD's
/// Cholesky factorizes it instead, one factor for both orientations, at a fraction of the LU's
/// cost; the first shift for which CHOLMOD finds it indefinite hands this operator back to the
/// LU. The system must outlive the operator.
class SparseLtiOperator final : public LtiOperator {
 public:
  explicit SparseLtiOperator(const DescriptorSystem& sys, SparseBackend lu = SparseBackend::klu);
  /// The operator keeps a reference: a temporary system would dangle.
  SparseLtiOperator(DescriptorSystem&&, SparseBackend = SparseBackend::klu) = delete;
  ~SparseLtiOperator() override;

  Index n() const override;
  const Matrix& B() const override;
  const Matrix& C() const override;
  const Matrix& D_ff() const override;
  void apply_A(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  void apply_E(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  bool E_is_identity() const override;
  bool symmetric_pencil() const override;
  void solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose = false) override;
  void solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                     bool transpose = false) override;
  bool shifted_residual_extended(Complex p, const ComplexMatrix& R, const ComplexMatrix& X,
                                 ComplexMatrix& Res) const override;
  std::unique_ptr<LtiOperator> solver_copy() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The first-order form x = [q; v] of a second-order system M q'' + D q' + K q = B u,
/// y = Cp q + Cv q' (see to_descriptor in src/systems/lti.hpp):
///     E = [I 0; 0 M],  A = [0 I; -K -D],  B = [0; B],  C = [Cp Cv],  n = 2 n_q.
/// Shifted solves never form the 2 n_q system: with S(p) = p^2 M - p D + K (n_q x n_q),
///     (A + p E) [x1; x2] = [b1; b2]   <=>  S(p) x1 = (p M - D) b1 - b2,   x2 = b1 - p x1
///     (A + p E)^T [x1; x2] = [b1; b2] <=>  S(p) x2 = p b2 - b1,           x1 = b2 - (p M - D) x2
/// For real p < 0 and symmetric positive (semi)definite M, D, K, S(p) is symmetric positive
/// definite and CHOLMOD factorizes it; complex p use KLU's complex LU. The symbolic analysis of
/// the pattern of M + D + K is done once. When that pattern is banded with bandwidth w <= 8 (the
/// chain: tridiagonal), shifts are factorized in O(n_q w^2) without any analysis instead:
/// the tridiagonal L D L^T of TridiagonalSpdSolver or LAPACK's band Cholesky for SPD S(p),
/// LAPACK's tridiagonal or band LU otherwise (complex p: zgttrf / zgbtrf). The system must
/// outlive the operator.
class SecondOrderLtiOperator final : public LtiOperator {
 public:
  explicit SecondOrderLtiOperator(const SecondOrderSystem& sys);
  /// The operator keeps a reference: a temporary system would dangle.
  SecondOrderLtiOperator(SecondOrderSystem&&) = delete;
  ~SecondOrderLtiOperator() override;

  /// n = 2 n_q.
  Index n() const override;
  const Matrix& B() const override;
  const Matrix& C() const override;
  const Matrix& D_ff() const override;
  void apply_A(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  void apply_E(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  void solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose = false) override;
  void solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                     bool transpose = false) override;
  /// H = diag(K, I) (then H E = diag(K, M), H A = [0 K; -K -D]) or, for the transposed pencil,
  /// H = diag(K^{-1}, I) (H E^T = diag(K^{-1}, M), H A^T = [0 -I; I -D]): the energy inner
  /// product. Available when M, D, K are symmetric and K is positive definite (CHOLMOD
  /// factorizes S(0) = K, shared with the shift cache); false otherwise.
  bool apply_energy_weight(const Matrix& X, Matrix& Y, bool transpose = false) override;
  std::unique_ptr<LtiOperator> solver_copy() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A small dense system (reduced models, dense references). E may be empty, meaning the
/// identity. Shifted solves use a dense partial-pivoting LU per shift. Holds copies.
class DenseLtiOperator final : public LtiOperator {
 public:
  DenseLtiOperator(Matrix E, Matrix A, Matrix B, Matrix C, Matrix D_ff = Matrix());

  Index n() const override { return A_.rows(); }
  const Matrix& B() const override { return B_; }
  const Matrix& C() const override { return C_; }
  const Matrix& D_ff() const override { return D_; }
  /// E (the identity if it was given empty) and A as dense matrices.
  Matrix E() const;
  const Matrix& A() const { return A_; }
  /// The eigenvalues of the pencil (A, E), i.e. of E^{-1} A (n of them; E nonsingular).
  ComplexVector poles() const;
  void apply_A(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  void apply_E(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  bool E_is_identity() const override { return E_.size() == 0; }
  bool symmetric_pencil() const override {
    return A_ == A_.transpose() && (E_.size() == 0 || E_ == E_.transpose());
  }
  void solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose = false) override;
  void solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                     bool transpose = false) override;
  bool shifted_residual_extended(Complex p, const ComplexMatrix& R, const ComplexMatrix& X,
                                 ComplexMatrix& Res) const override;

 private:
  Matrix E_, A_, B_, C_, D_;
};

/// The error system G - G_r of a full system and a reduced one with the same numbers of inputs
/// and outputs: E = diag(E, E_r), A = diag(A, A_r), B = [B; B_r], C = [C, -C_r],
/// D_ff = D - D_r. Both operators must outlive this one.
class ErrorLtiOperator final : public LtiOperator {
 public:
  ErrorLtiOperator(LtiOperator& full, LtiOperator& reduced);

  Index n() const override { return full_.n() + reduced_.n(); }
  const Matrix& B() const override { return B_; }
  const Matrix& C() const override { return C_; }
  const Matrix& D_ff() const override { return D_; }
  void apply_A(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  void apply_E(const Matrix& X, Matrix& Y, bool transpose = false) const override;
  bool E_is_identity() const override { return full_.E_is_identity() && reduced_.E_is_identity(); }
  void solve_shifted(double p, const Matrix& R, Matrix& X, bool transpose = false) override;
  void solve_shifted(Complex p, const ComplexMatrix& R, ComplexMatrix& X,
                     bool transpose = false) override;
  /// Blockwise; true when both operators compute extended residuals.
  bool shifted_residual_extended(Complex p, const ComplexMatrix& R, const ComplexMatrix& X,
                                 ComplexMatrix& Res) const override;

 private:
  LtiOperator& full_;
  LtiOperator& reduced_;
  Matrix B_, C_, D_;
};

/// The first-order form x = [q; v] of a dense second-order system (as to_descriptor does for
/// sparse ones): E = diag(I, M), A = [0 I; -K -D], B = [0; B], C = [Cp Cv], D_ff.
DenseLtiOperator to_first_order(const DenseSecondOrderSystem& sys);

/// Dense E and A of any operator (n x n, by applying it to the identity); for small systems,
/// dense references and tests only.
Matrix dense_E(const LtiOperator& sys);
Matrix dense_A(const LtiOperator& sys);

}  // namespace mor
