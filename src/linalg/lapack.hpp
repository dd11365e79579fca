// SPDX-License-Identifier: GPL-3.0-or-later
// Thin wrappers over the LAPACK and BLAS routines the dense O(n^3) kernels call directly
// (Debian's liblapack.so.3 / libblas.so.3, which the alternatives system points to OpenBLAS:
// blocked, multithreaded). Each takes Eigen matrices (column-major, as Fortran expects), checks
// sizes, sizes the workspace by LAPACK's own query and turns INFO into an exception.
#pragma once

#include <vector>

#include "src/core/types.hpp"

namespace mor::lapack {

/// Real Schur form A = Q T Q^T by dgees (Hessenberg reduction, blocked multishift QR with
/// aggressive early deflation, no reordering). On entry T holds A (n x n); on return T is
/// quasi upper triangular (1x1 and 2x2 diagonal blocks, LAPACK's standard form: a 2x2 block has
/// equal diagonal entries and off-diagonal entries of opposite sign) and Q is orthogonal.
/// @throws InvalidArgument if T is not square or has a non-finite entry; NumericalError if the
///         QR algorithm did not converge (INFO > 0).
void real_schur(Matrix& T, Matrix& Q);

/// Thin singular value decomposition X = U diag(s) V^T (X is m x n, k = min(m, n); U m x k,
/// V n x k, s descending) by dgesdd (divide and conquer). X is destroyed.
/// @throws NumericalError if X has a non-finite entry or the iteration did not converge.
void svd(Matrix& X, Matrix& U, Vector& s, Matrix& V);

/// A thin singular value decomposition X = U diag(s) V^T.
struct Svd {
  Matrix U;  ///< m x k left singular vectors
  Vector s;  ///< k singular values, descending
  Matrix V;  ///< n x k right singular vectors
};

/// svd() of a matrix taken by value (move it in to save the copy).
Svd thin_svd(Matrix X);

/// Singular values of X (descending) by dgesdd without vectors. X is destroyed.
Vector singular_values(Matrix& X);

/// A thin singular value decomposition X = U diag(s) V^H of a complex matrix.
struct ComplexSvd {
  ComplexMatrix U;  ///< m x k left singular vectors
  Vector s;         ///< k singular values, descending
  ComplexMatrix V;  ///< n x k right singular vectors
};

/// Thin singular value decomposition of a complex matrix (k = min(m, n)) by zgesdd (divide and
/// conquer), the matrix taken by value.
/// @throws NumericalError if X has a non-finite entry or the iteration did not converge.
ComplexSvd thin_complex_svd(ComplexMatrix X);

/// The spectral norm ||X||_2 = sigma_max(X) of a complex matrix by zgesdd without vectors (the
/// Euclidean norm for a single row or column, 0 for an empty matrix). A matrix with a NaN entry
/// gives NaN, one with an infinite entry (and no NaN) +infinity: a transfer function evaluated
/// at a pole.
double spectral_norm(const ComplexMatrix& X);

/// LU decomposition with partial pivoting A = P L U of a square complex matrix by zgetrf
/// (blocked), for solves with A or A^T by zgetrs and LAPACK's condition estimate (zgecon).
class ComplexLu {
 public:
  /// @throws InvalidArgument if A is not square; NumericalError if it has a non-finite entry.
  explicit ComplexLu(ComplexMatrix A);
  /// A^{-1} B, or A^{-T} B (transposed, not conjugated) if transposed is set.
  /// @throws InvalidArgument if B has not n rows; NumericalError if A is exactly singular (a zero
  ///         pivot) or B has a non-finite entry.
  ComplexMatrix solve(ComplexMatrix B, bool transposed = false) const;
  /// LAPACK's estimate of the reciprocal 1-norm condition number 1 / (||A||_1 ||A^{-1}||_1)
  /// (zgecon, O(n^2)); 0 for an exactly singular A, 1 for an empty one.
  double rcond() const;
  /// Whether zgetrf met an exactly zero pivot (A is singular; solve() throws).
  bool singular() const { return zero_pivot_ > 0; }

 private:
  ComplexMatrix lu_;       ///< L (unit, below the diagonal) and U of zgetrf
  std::vector<int> ipiv_;  ///< the row interchanges, 1-based
  double norm1_ = 0.0;     ///< ||A||_1
  int zero_pivot_ = 0;     ///< zgetrf's INFO > 0: U(i, i) = 0
};

/// C = alpha * op(A) * op(B) + beta * C by dgemm, op(X) = X or X^T; C must already have the
/// size of the product (any content when beta = 0).
void gemm(bool transpose_a, bool transpose_b, double alpha, const Eigen::Ref<const Matrix>& A,
          const Eigen::Ref<const Matrix>& B, double beta, Eigen::Ref<Matrix> C);

/// The k x n upper trapezoidal factor R of the QR decomposition X = Q R (X m x n, k = min(m, n))
/// by dgeqrf (blocked Householder); X is destroyed. Q is not formed.
Matrix qr_r_factor(Matrix& X);

/// The first c columns of the Q factor of X = Q R (X m x c, m >= c) in place, by dgeqrf and dorgqr
/// (blocked Householder): an orthonormal basis of range(X) for X of full column rank.
/// @throws InvalidArgument if X has more columns than rows.
void qr_q_factor(Matrix& X);

/// Both factors of X = Q R (X m x n, m >= n): X is replaced by Q's n columns (orthonormal) and R
/// (n x n, upper triangular) is returned, by dgeqrf and dorgqr (blocked Householder). For X of
/// deficient rank, Q is still orthonormal and R has the (near-)zero diagonal entries.
/// @throws InvalidArgument if X has more columns than rows.
Matrix qr_in_place(Matrix& X);

/// The inverse of the square matrix X in place by dgetrf (blocked LU with partial pivoting) and
/// dgetri. If rcond is given, it receives LAPACK's estimate (dgecon) of the reciprocal
/// 1-norm condition number of X, computed from the LU before the inversion (O(n^2)).
/// @throws InvalidArgument if X is not square or has a non-finite entry; NumericalError if X is
///         exactly singular (a zero pivot, dgetrf INFO > 0).
void invert(Matrix& X, double* rcond = nullptr);

/// QR decomposition with column pivoting X P = Q R by dgeqp3 (X m x n, k = min(m, n)): returns
/// the k x n upper trapezoidal R and the permutation as 0-based indices, column j of X P being
/// column perm[j] of X; the diagonal of R decreases in magnitude, which reveals the numerical
/// rank. X is destroyed; Q is not formed.
/// If Q is given, it receives the first k columns of the orthogonal factor (dorgqr).
Matrix pivoted_qr_r_factor(Matrix& X, Eigen::VectorXi& perm, Matrix* Q = nullptr);

/// Eigenvalues of the symmetric matrix X (ascending) by dsyevd without vectors; only the lower
/// triangle is read (as by Eigen's SelfAdjointEigenSolver), X is destroyed. A matrix with a
/// non-finite entry gives NaN eigenvalues (as a norm of it would be NaN), not an error.
/// @throws InvalidArgument if X is not square; NumericalError if the iteration did not converge.
Vector symmetric_eigenvalues(Matrix& X);

/// Eigenvalues w (ascending) and orthonormal eigenvectors of the symmetric matrix X = V diag(w)
/// V^T by dsyevd (divide and conquer); only the lower triangle is read; on return X holds V.
/// @throws InvalidArgument if X is not square; NumericalError if X has a non-finite entry or the
///         iteration did not converge.
void symmetric_eigen(Matrix& X, Vector& w);

/// Eigenvalues (ascending) of the symmetric tridiagonal matrix with the given diagonal (n) and
/// sub-diagonal (n - 1) by dsterf (root-free QL/QR).
/// @throws InvalidArgument if the sizes do not match; NumericalError if an entry is not finite or
///         the iteration did not converge.
Vector symmetric_tridiagonal_eigenvalues(const Vector& diagonal, const Vector& sub_diagonal);

/// The symmetric-definite pencil A v = lambda B v (A symmetric, B symmetric positive definite) by
/// dsygvd (Cholesky factor of B, then divide and conquer): eigenvalues w ascending, eigenvectors
/// in A on return, normalised V^T B V = I. Only the lower triangles are read; B is destroyed.
/// @throws InvalidArgument if the sizes do not match; NumericalError if an entry is not finite,
///         B is not positive definite or the iteration did not converge.
void generalized_symmetric_eigen(Matrix& A, Matrix& B, Vector& w);

/// Eigenvalues of the general real square matrix A by dgeev (Hessenberg QR, no vectors): complex
/// pairs consecutive, positive imaginary part first. A is destroyed.
/// @throws InvalidArgument if A is not square; NumericalError if it has a non-finite entry or the
///         QR algorithm did not converge.
ComplexVector eigenvalues(Matrix& A);

/// Eigenvalues lambda and right eigenvectors (A V = V diag(lambda); each column of unit 2-norm,
/// its largest component real) of the general real square matrix A by dgeev. A is destroyed.
/// @throws as eigenvalues().
void eigen(Matrix& A, ComplexVector& lambda, ComplexMatrix& V);

/// Hessenberg form A = Q H Q^T by dgehrd and dorghr: on entry H holds A (square); on return H is
/// upper Hessenberg (zeros below the sub-diagonal) and Q orthogonal.
/// @throws InvalidArgument if H is not square or has a non-finite entry.
void hessenberg(Matrix& H, Matrix& Q);

/// Full singular value decomposition X = U diag(s) V^T (X m x n; U m x m and V n x n orthogonal,
/// s the min(m, n) singular values, descending) by dgesdd: V's last n - rank columns span the
/// null space. X is taken by value.
/// @throws NumericalError if X has a non-finite entry or the iteration did not converge.
Svd full_svd(Matrix X);

/// Eigenvalues lambda_i = alpha_i / beta_i of the pencil (A, B), A x = lambda B x, by dggev (QZ
/// algorithm, no vectors): beta_i >= 0, and beta_i = 0 (or tiny against |alpha_i|) marks an
/// infinite eigenvalue of a singular B; complex pairs are consecutive, positive imaginary part
/// first. A and B are destroyed.
/// @throws InvalidArgument if A or B is not square of one size; NumericalError if either has a
///         non-finite entry or the QZ iteration did not converge (INFO > 0).
void generalized_eigenvalues(Matrix& A, Matrix& B, ComplexVector& alpha, Vector& beta);

}  // namespace mor::lapack
