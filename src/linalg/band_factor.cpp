// SPDX-License-Identifier: GPL-3.0-or-later
// LAPACK's band and tridiagonal LU and band Cholesky of matrices given on a sparse pattern
// (see band_factor.hpp).
#include "src/linalg/band_factor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/core/errors.hpp"

extern "C" {
// LAPACK's tridiagonal and band factorizations (Fortran prototypes: INTEGER is 32 bits in
// Debian's builds; gfortran appends the lengths of CHARACTER arguments as hidden size_t
// arguments).
void dgttrf_(const int* n, double* dl, double* d, double* du, double* du2, int* ipiv, int* info);
void dgttrs_(const char* trans, const int* n, const int* nrhs, const double* dl, const double* d,
             const double* du, const double* du2, const int* ipiv, double* b, const int* ldb,
             int* info, std::size_t trans_len);
void dgbtrf_(const int* m, const int* n, const int* kl, const int* ku, double* ab, const int* ldab,
             int* ipiv, int* info);
void dgbtrs_(const char* trans, const int* n, const int* kl, const int* ku, const int* nrhs,
             const double* ab, const int* ldab, const int* ipiv, double* b, const int* ldb,
             int* info, std::size_t trans_len);
void dpbtrf_(const char* uplo, const int* n, const int* kd, double* ab, const int* ldab, int* info,
             std::size_t uplo_len);
void dpbtrs_(const char* uplo, const int* n, const int* kd, const int* nrhs, const double* ab,
             const int* ldab, double* b, const int* ldb, int* info, std::size_t uplo_len);
// The complex (COMPLEX*16) counterparts; std::complex<double> has the layout of Fortran's.
void zgttrf_(const int* n, mor::Complex* dl, mor::Complex* d, mor::Complex* du, mor::Complex* du2,
             int* ipiv, int* info);
void zgttrs_(const char* trans, const int* n, const int* nrhs, const mor::Complex* dl,
             const mor::Complex* d, const mor::Complex* du, const mor::Complex* du2,
             const int* ipiv, mor::Complex* b, const int* ldb, int* info, std::size_t trans_len);
void zgbtrf_(const int* m, const int* n, const int* kl, const int* ku, mor::Complex* ab,
             const int* ldab, int* ipiv, int* info);
void zgbtrs_(const char* trans, const int* n, const int* kl, const int* ku, const int* nrhs,
             const mor::Complex* ab, const int* ldab, const int* ipiv, mor::Complex* b,
             const int* ldb, int* info, std::size_t trans_len);
}

namespace mor {

namespace {

/// LAPACK's general tridiagonal and band LU, real (d*) or complex (z*), chosen by overload.
inline void gttrf(int n, double* dl, double* d, double* du, double* du2, int* ipiv, int* info) {
  dgttrf_(&n, dl, d, du, du2, ipiv, info);
}
inline void gttrf(int n, Complex* dl, Complex* d, Complex* du, Complex* du2, int* ipiv, int* info) {
  zgttrf_(&n, dl, d, du, du2, ipiv, info);
}
inline void gttrs(char t, int n, int k, const double* dl, const double* d, const double* du,
                  const double* du2, const int* ipiv, double* b, int* info) {
  dgttrs_(&t, &n, &k, dl, d, du, du2, ipiv, b, &n, info, 1);
}
inline void gttrs(char t, int n, int k, const Complex* dl, const Complex* d, const Complex* du,
                  const Complex* du2, const int* ipiv, Complex* b, int* info) {
  zgttrs_(&t, &n, &k, dl, d, du, du2, ipiv, b, &n, info, 1);
}
inline void gbtrf(int n, int w, double* ab, int ldab, int* ipiv, int* info) {
  dgbtrf_(&n, &n, &w, &w, ab, &ldab, ipiv, info);
}
inline void gbtrf(int n, int w, Complex* ab, int ldab, int* ipiv, int* info) {
  zgbtrf_(&n, &n, &w, &w, ab, &ldab, ipiv, info);
}
inline void gbtrs(char t, int n, int w, int k, const double* ab, int ldab, const int* ipiv,
                  double* b, int* info) {
  dgbtrs_(&t, &n, &w, &w, &k, ab, &ldab, ipiv, b, &n, info, 1);
}
inline void gbtrs(char t, int n, int w, int k, const Complex* ab, int ldab, const int* ipiv,
                  Complex* b, int* info) {
  zgbtrs_(&t, &n, &w, &w, &k, ab, &ldab, ipiv, b, &n, info, 1);
}
/// |x|^2 without the square root (and without std::abs's hypot for complex x).
inline double squared_magnitude(double x) {
  return x * x;
}
inline double squared_magnitude(Complex x) {
  return x.real() * x.real() + x.imag() * x.imag();
}

}  // namespace

Index bandwidth(const SparseMatrix& P) {
  Index w = 0;
  for (Index j = 0; j < P.outerSize(); ++j)
    for (int q = P.outerIndexPtr()[j]; q < P.outerIndexPtr()[j + 1]; ++q)
      w = std::max<Index>(w, std::abs(P.innerIndexPtr()[q] - j));
  return w;
}

template <class S>
void BandLu<S>::factorize(const SparseMatrix& P, const S* values, Index w) {
  factorized_ = false;
  n_ = static_cast<int>(P.rows());
  w_ = static_cast<int>(std::max<Index>(w, 1));
  const int* Pp = P.outerIndexPtr();
  const int* Pi = P.innerIndexPtr();
  const std::size_t n = static_cast<std::size_t>(n_);
  int info = 0;
  const S* pivots = nullptr;  // u_kk at position k * stride
  std::size_t stride = 1;
  if (w_ == 1) {
    // Column j holds d_j, dl_j (row j + 1) and du_{j-1} (row j - 1): each is zeroed and summed
    // in the same pass (a separate zero fill of the three diagonals took 3.6% of BM_bt/100000).
    d_.resize(n);
    dl_.resize(n > 1 ? n - 1 : 1);
    du_.resize(n > 1 ? n - 1 : 1);
    for (int j = 0; j < n_; ++j) {
      S dj(0), lj(0), uj(0);
      for (int q = Pp[j]; q < Pp[j + 1]; ++q) {
        const int i = Pi[q];
        if (i == j)
          dj += values[q];
        else if (i == j + 1)
          lj += values[q];
        else
          uj += values[q];  // i == j - 1
      }
      d_[j] = dj;
      if (j + 1 < n_) dl_[j] = lj;
      if (j > 0) du_[j - 1] = uj;
    }
    du2_.resize(n > 2 ? n - 2 : 1);  // dgttrf/zgttrf write du2 and ipiv
    ipiv_.resize(n);
    gttrf(n_, dl_.data(), d_.data(), du_.data(), du2_.data(), ipiv_.data(), &info);
    pivots = d_.data();
  } else {
    ldab_ = 3 * w_ + 1;  // AB(2w + i - j, j) = A(i, j), w more rows for the pivoting's fill
    ab_.assign(static_cast<std::size_t>(ldab_) * n, S(0));
    for (int j = 0; j < n_; ++j)
      for (int q = Pp[j]; q < Pp[j + 1]; ++q)
        ab_[static_cast<std::size_t>(2 * w_ + Pi[q] - j) + static_cast<std::size_t>(j) * ldab_] +=
            values[q];
    ipiv_.assign(n, 0);
    gbtrf(n_, w_, ab_.data(), ldab_, ipiv_.data(), &info);
    pivots = ab_.data() + 2 * w_;
    stride = static_cast<std::size_t>(ldab_);
  }
  if (info < 0)
    throw NumericalError(
        detail::concat("LAPACK band factorization: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("banded LU: zero pivot in column ", info, " of ", n_));
  // The pivot ratio on squared magnitudes (no square roots): lo^2 >= eps^2 hi^2.
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const double v = squared_magnitude(pivots[k * stride]);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  constexpr double eps = std::numeric_limits<double>::epsilon();
  if (!(lo >= eps * eps * hi))
    throw NumericalError(detail::concat("banded LU: numerically singular (pivot ratio ",
                                        std::sqrt(lo / hi), " below machine epsilon)"));
  factorized_ = true;
}

template <class S>
void BandLu<S>::solve_in_place(S* X, int k, bool transpose) const {
  if (!factorized_) throw NumericalError("banded factorization: nothing is factorized");
  if (k == 0) return;
  const char t = transpose ? 'T' : 'N';
  int info = 0;
  if (w_ == 1)
    gttrs(t, n_, k, dl_.data(), d_.data(), du_.data(), du2_.data(), ipiv_.data(), X, &info);
  else
    gbtrs(t, n_, w_, k, ab_.data(), ldab_, ipiv_.data(), X, &info);
  if (info != 0) throw NumericalError(detail::concat("LAPACK band solve: INFO = ", info));
}

template <class S>
std::size_t BandLu<S>::bytes() const {
  return sizeof(S) * (d_.size() + dl_.size() + du_.size() + du2_.size() + ab_.size()) +
         sizeof(int) * ipiv_.size();
}

template class BandLu<double>;
template class BandLu<Complex>;

void BandFactor::factorize(const SparseMatrix& P, const double* values, Index w, bool spd) {
  factorized_ = false;
  n_ = static_cast<int>(P.rows());
  w_ = static_cast<int>(std::max<Index>(w, 1));
  spd_ = spd;
  const int* Pp = P.outerIndexPtr();
  const int* Pi = P.innerIndexPtr();
  const std::size_t n = static_cast<std::size_t>(n_);
  if (!spd_) {
    lu_.factorize(P, values, w);
    factorized_ = true;
    return;
  }
  if (w_ == 1) {
    diag_.setZero(n_);
    off_.setZero(std::max(n_ - 1, 0));
    for (int j = 0; j < n_; ++j)
      for (int q = Pp[j]; q < Pp[j + 1]; ++q) {
        if (Pi[q] == j)
          diag_(j) += values[q];
        else if (Pi[q] == j + 1)
          off_(j) += values[q];
      }
    spd_tridiagonal_.factorize(diag_, off_);  // throws unless positive definite
    factorized_ = true;
    return;
  }
  int info = 0;
  ldab_ = w_ + 1;  // lower band: AB(i - j, j) = A(i, j) for j <= i <= j + w
  ab_.assign(static_cast<std::size_t>(ldab_) * n, 0.0);
  for (int j = 0; j < n_; ++j)
    for (int q = Pp[j]; q < Pp[j + 1]; ++q)
      if (Pi[q] >= j) ab_[static_cast<std::size_t>(Pi[q] - j + j * ldab_)] += values[q];
  dpbtrf_("L", &n_, &w_, ab_.data(), &ldab_, &info, 1);
  if (info < 0)
    throw NumericalError(
        detail::concat("LAPACK band factorization: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(
        detail::concat("banded Cholesky: the matrix is not positive definite "
                       "(leading minor of order ",
                       info, " of ", n_, ")"));
  // |l_kk|^2 is the pivot of the Cholesky factorization
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const double v =
        ab_[k * static_cast<std::size_t>(ldab_)] * ab_[k * static_cast<std::size_t>(ldab_)];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!(lo >= std::numeric_limits<double>::epsilon() * hi))
    throw NumericalError(detail::concat("banded Cholesky: numerically singular (pivot ratio ",
                                        lo / hi, " below machine epsilon)"));
  factorized_ = true;
}

void BandFactor::solve_in_place(Matrix& X, bool transpose) {
  const int k = static_cast<int>(X.cols());
  int info = 0;
  if (!factorized_) throw NumericalError("banded factorization: nothing is factorized");
  if (k == 0) return;
  if (!spd_) {
    lu_.solve_in_place(X.data(), k, transpose);
  } else if (w_ == 1) {
    for (int c = 0; c < k; ++c) {
      diag_ = X.col(c);  // the factor keeps its own copy of the matrix: scratch
      spd_tridiagonal_.solve(diag_, diag_);
      X.col(c) = diag_;
    }
  } else {
    dpbtrs_("L", &n_, &w_, &k, ab_.data(), &ldab_, X.data(), &n_, &info, 1);
  }
  if (info != 0) throw NumericalError(detail::concat("LAPACK band solve: INFO = ", info));
}

std::size_t BandFactor::bytes() const {
  if (!spd_) return lu_.bytes();
  if (w_ == 1) return 2 * sizeof(double) * static_cast<std::size_t>(n_);
  return sizeof(double) * ab_.size();
}

}  // namespace mor
