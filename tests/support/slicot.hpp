// SPDX-License-Identifier: GPL-3.0-or-later
// SLICOT (Debian libslicot, Fortran 77) as an independent dense oracle for the reduction tests:
// prototypes of AB09AD (balanced truncation, Hankel singular values) and SB03OD (Cholesky factor
// of a Lyapunov solution, Hammarling's method) plus small wrappers on Eigen matrices.
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
// gfortran passes every CHARACTER argument's length as a hidden size_t appended after the
// declared arguments, in order. INTEGER is 32 bits in Debian's build.

/// AB09AD(DICO, JOB, EQUIL, ORDSEL, N, M, P, NR, A, LDA, B, LDB, C, LDC, HSV, TOL, IWORK, DWORK,
/// LDWORK, IWARN, INFO): square-root balanced truncation of a stable (A, B, C); HSV (N) receives
/// all N Hankel singular values in decreasing order. A, B, C are overwritten by the reduced
/// model. LIWORK = 0 for JOB = 'B', N for JOB = 'N';
/// LDWORK >= max(1, N (2 N + max(N, M, P) + 5) + N (N + 1) / 2).
void ab09ad_(const char* dico, const char* job, const char* equil, const char* ordsel, const int* n,
             const int* m, const int* p, int* nr, double* a, const int* lda, double* b,
             const int* ldb, double* c, const int* ldc, double* hsv, const double* tol, int* iwork,
             double* dwork, const int* ldwork, int* iwarn, int* info, std::size_t dico_len,
             std::size_t job_len, std::size_t equil_len, std::size_t ordsel_len);

/// SB03OD(DICO, FACT, TRANS, N, M, A, LDA, Q, LDQ, B, LDB, SCALE, WR, WI, DWORK, LDWORK, INFO):
/// with DICO = 'C', TRANS = 'T': A X + X A^T = -scale^2 B B^T, X = U U^T, U upper triangular
/// returned in the leading N x N part of B, whose array must be N x max(M, N) (LDB >= N).
/// FACT = 'N' computes the Schur form (A and Q are overwritten). LDWORK >= max(1, 4 N + min(M, N)).
void sb03od_(const char* dico, const char* fact, const char* trans, const int* n, const int* m,
             double* a, const int* lda, double* q, const int* ldq, double* b, const int* ldb,
             double* scale, double* wr, double* wi, double* dwork, const int* ldwork, int* info,
             std::size_t dico_len, std::size_t fact_len, std::size_t trans_len);
}

namespace mor::testing {

/// All n Hankel singular values (decreasing) of the stable continuous-time system (A, B, C) by
/// AB09AD (square-root B&T, no equilibration). @throws std::runtime_error on INFO != 0.
inline Eigen::VectorXd slicot_hankel_singular_values(const Eigen::MatrixXd& A,
                                                     const Eigen::MatrixXd& B,
                                                     const Eigen::MatrixXd& C) {
  const int n = static_cast<int>(A.rows()), m = static_cast<int>(B.cols()),
            p = static_cast<int>(C.rows());
  if (A.cols() != n || B.rows() != n || C.cols() != n)
    throw std::runtime_error("slicot_hankel_singular_values: inconsistent sizes");
  // Column-major copies: AB09AD overwrites them with the reduced model.
  Eigen::MatrixXd a = A, b = B, c = C;
  const int lda = std::max(1, n), ldb = std::max(1, n), ldc = std::max(1, p);
  Eigen::VectorXd hsv = Eigen::VectorXd::Zero(n);
  // ORDSEL = 'F' with NR = N: every HSV is computed before the order is chosen (NR may come back
  // smaller, with IWARN = 1, for a non-minimal system; HSV is complete either way).
  int nr = n, iwarn = 0, info = 0;
  const double tol = 0.0;
  std::vector<int> iwork(1);
  const int ldwork =
      std::max(1, n * (2 * n + std::max({n, m, p}) + 5) + n * (n + 1) / 2) + 64 * std::max(1, n);
  std::vector<double> dwork(static_cast<std::size_t>(ldwork));
  ab09ad_("C", "B", "N", "F", &n, &m, &p, &nr, a.data(), &lda, b.data(), &ldb, c.data(), &ldc,
          hsv.data(), &tol, iwork.data(), dwork.data(), &ldwork, &iwarn, &info, 1, 1, 1, 1);
  if (info != 0) throw std::runtime_error("AB09AD failed: INFO = " + std::to_string(info));
  return hsv;
}

/// Upper triangular U (n x n) with A X + X A^T + B B^T = 0, X = U U^T, by SB03OD (DICO = 'C',
/// FACT = 'N', TRANS = 'T'); the returned U already includes SLICOT's scale factor.
/// @throws std::runtime_error on INFO != 0 (including the "nearly singular" warning INFO = 1).
inline Eigen::MatrixXd slicot_lyapunov_factor(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  const int n = static_cast<int>(A.rows()), m = static_cast<int>(B.cols());
  if (A.cols() != n || B.rows() != n)
    throw std::runtime_error("slicot_lyapunov_factor: inconsistent sizes");
  Eigen::MatrixXd a = A, q(std::max(1, n), std::max(1, n));
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(std::max(1, n), std::max({1, m, n}));
  b.topLeftCorner(n, m) = B;
  const int lda = std::max(1, n), ldq = std::max(1, n), ldb = std::max(1, n);
  double scale = 1.0;
  Eigen::VectorXd wr(std::max(1, n)), wi(std::max(1, n));
  const int ldwork = std::max(1, 4 * n + std::min(m, n)) + 64 * std::max(1, n);
  std::vector<double> dwork(static_cast<std::size_t>(ldwork));
  int info = 0;
  sb03od_("C", "N", "T", &n, &m, a.data(), &lda, q.data(), &ldq, b.data(), &ldb, &scale, wr.data(),
          wi.data(), dwork.data(), &ldwork, &info, 1, 1, 1);
  if (info != 0) throw std::runtime_error("SB03OD failed: INFO = " + std::to_string(info));
  Eigen::MatrixXd U = b.topLeftCorner(n, n).triangularView<Eigen::Upper>();
  return U / scale;
}

}  // namespace mor::testing
