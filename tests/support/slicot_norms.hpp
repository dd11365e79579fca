// SPDX-License-Identifier: GPL-3.0-or-later
// SLICOT's system norms as independent test oracles: AB13BD (H2 norm) and AB13DD (L-infinity
// norm, continuous time, with a general E), with small C++ wrappers that copy their inputs.
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/core/types.hpp"

// Fortran 77 interfaces of Debian's libslicot (gfortran: 32-bit INTEGER, everything by
// reference, and one hidden trailing size_t length per CHARACTER argument).
extern "C" {
/// H2 (JOBN = 'H') or L2 ('L') norm of (A, B, C, D); A, B, C, D are overwritten.
double ab13bd_(const char* dico, const char* jobn, const int* n, const int* m, const int* p,
               double* a, const int* lda, double* b, const int* ldb, double* c, const int* ldc,
               double* d, const int* ldd, int* nq, const double* tol, double* dwork,
               const int* ldwork, int* iwarn, int* info, std::size_t dico_len,
               std::size_t jobn_len);

/// L-infinity norm of C (lambda E - A)^{-1} B + D (Bruinsma-Steinbuch with refinements);
/// gpeak[0] / gpeak[1] is the norm, fpeak[0] / fpeak[1] the peak frequency (fpeak[1] = 0: inf).
void ab13dd_(const char* dico, const char* jobe, const char* equil, const char* jobd, const int* n,
             const int* m, const int* p, double* fpeak, double* a, const int* lda, double* e,
             const int* lde, double* b, const int* ldb, double* c, const int* ldc, double* d,
             const int* ldd, double* gpeak, const double* tol, int* iwork, double* dwork,
             const int* ldwork, std::complex<double>* cwork, const int* lcwork, int* info,
             std::size_t dico_len, std::size_t jobe_len, std::size_t equil_len,
             std::size_t jobd_len);
}

namespace mor::testing {

struct SlicotH2 {
  double norm = 0.0;
  int iwarn = 0;  ///< AB13BD's count of stability violations in its coprime factorization
};

/// ||C (sI - A)^{-1} B||_H2 of a stable continuous-time system by AB13BD.
/// @throws std::runtime_error with INFO if AB13BD fails.
inline SlicotH2 slicot_h2_norm(const Matrix& A, const Matrix& B, const Matrix& C) {
  Matrix a = A, b = B, c = C;
  const int n = static_cast<int>(A.rows()), m = static_cast<int>(B.cols()),
            p = static_cast<int>(C.rows());
  Matrix d = Matrix::Zero(std::max(p, 1), std::max(m, 1));
  const int lda = std::max(n, 1), ldb = std::max(n, 1), ldc = std::max(p, 1), ldd = ldc;
  const int ldwork = 2 * std::max({1, m * (n + m) + std::max({n * (n + 5), m * (m + 2), 4 * p}),
                                   n * (std::max(n, p) + 4) + std::min(n, p)});
  std::vector<double> dwork(static_cast<std::size_t>(ldwork));
  int nq = 0, iwarn = 0, info = 0;
  const double tol = 0.0;  // default tolerance for the controllability test
  SlicotH2 r;
  r.norm = ab13bd_("C", "H", &n, &m, &p, a.data(), &lda, b.data(), &ldb, c.data(), &ldc, d.data(),
                   &ldd, &nq, &tol, dwork.data(), &ldwork, &iwarn, &info, 1, 1);
  if (info != 0) throw std::runtime_error("SLICOT AB13BD failed: INFO = " + std::to_string(info));
  r.iwarn = iwarn;
  return r;
}

struct SlicotLinf {
  double norm = 0.0;
  double omega = 0.0;  ///< peak frequency (rad/s), infinity if attained there
};

/// ||C (sE - A)^{-1} B + D||_Linf of a continuous-time system by AB13DD (E empty: identity,
/// D empty: zero), relative accuracy tol. @throws std::runtime_error with INFO on failure.
inline SlicotLinf slicot_linf_norm(const Matrix& E, const Matrix& A, const Matrix& B,
                                   const Matrix& C, const Matrix& D, double tol) {
  const int n = static_cast<int>(A.rows()), m = static_cast<int>(B.cols()),
            p = static_cast<int>(C.rows());
  const bool with_e = E.size() != 0, with_d = D.size() != 0;
  Matrix a = A, b = B, c = C;
  // Full-size E and D even when they are flagged absent: the 2010 AB13DD reads p x m entries of
  // D with JOBD = 'Z' (valgrind: reads past a 1 x 1 array), which made its results depend on
  // whatever followed in memory.
  Matrix e = with_e ? E : Matrix(Matrix::Identity(std::max(n, 1), std::max(n, 1)));
  Matrix d = with_d ? D : Matrix(Matrix::Zero(std::max(p, 1), std::max(m, 1)));
  const int lda = std::max(n, 1), ldb = std::max(n, 1), ldc = std::max(p, 1);
  const int lde = std::max(n, 1), ldd = std::max(p, 1);
  // The documented upper bound on the workspace, doubled (this is the 2010 release).
  const int ldwork = 2 * std::max(1, 15 * n * n + p * p + m * m + (6 * n + 3) * (p + m) +
                                         4 * p * m + n * m + 22 * n + 7 * std::min(p, m));
  const int lcwork = 2 * std::max(1, (n + m) * (n + p) + 2 * std::min(p, m) + std::max(p, m));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(n, 1)));
  std::vector<double> dwork(static_cast<std::size_t>(ldwork));
  std::vector<std::complex<double>> cwork(static_cast<std::size_t>(lcwork));
  double fpeak[2] = {0.0, 1.0};  // no estimate
  double gpeak[2] = {0.0, 0.0};
  int info = 0;
  ab13dd_("C", with_e ? "G" : "I", "N", with_d ? "D" : "Z", &n, &m, &p, fpeak, a.data(), &lda,
          e.data(), &lde, b.data(), &ldb, c.data(), &ldc, d.data(), &ldd, gpeak, &tol, iwork.data(),
          dwork.data(), &ldwork, cwork.data(), &lcwork, &info, 1, 1, 1, 1);
  if (info != 0) throw std::runtime_error("SLICOT AB13DD failed: INFO = " + std::to_string(info));
  SlicotLinf r;
  r.norm = gpeak[1] == 0.0 ? std::numeric_limits<double>::infinity() : gpeak[0] / gpeak[1];
  r.omega = fpeak[1] == 0.0 ? std::numeric_limits<double>::infinity() : fpeak[0] / fpeak[1];
  return r;
}

}  // namespace mor::testing
