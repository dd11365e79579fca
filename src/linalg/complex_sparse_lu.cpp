// SPDX-License-Identifier: GPL-3.0-or-later
// KLU's LU behind KluPattern / KluLu (complex_sparse_lu.hpp). KLU's "z" routines
// take complex numbers as interleaved (re, im) doubles, which is the layout of std::complex<double>
// arrays (guaranteed by the C++ standard), so Eigen's complex storage is passed without copies.
#include "src/linalg/complex_sparse_lu.hpp"

#include <klu.h>

#include <algorithm>
#include <limits>
#include <new>

#include "src/core/errors.hpp"

namespace mor {

namespace {

const char* klu_status_name(int status) {
  switch (status) {
    case KLU_OK:
      return "KLU_OK";
    case KLU_SINGULAR:
      return "KLU_SINGULAR: singular matrix";
    case KLU_OUT_OF_MEMORY:
      return "KLU_OUT_OF_MEMORY";
    case KLU_INVALID:
      return "KLU_INVALID: invalid input";
    case KLU_TOO_LARGE:
      return "KLU_TOO_LARGE: integer overflow";
    default:
      return "unknown KLU status";
  }
}

[[noreturn]] void fail(const char* call, const klu_common& c) {
  if (c.status == KLU_OUT_OF_MEMORY) throw std::bad_alloc();
  throw NumericalError(detail::concat("KLU: ", call, " failed with status ", c.status, " (",
                                      klu_status_name(c.status), ")"));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

KluPattern::KluPattern(const SparseMatrix& A) {
  require(A.rows() == A.cols(), "KluPattern: the matrix must be square, got ", A.rows(), "x",
          A.cols());
  require(A.rows() > 0, "KluPattern: the matrix is empty");
  require(A.isCompressed(), "KluPattern: the matrix must be compressed (call makeCompressed())");
  n_ = A.rows();
  outer_.assign(A.outerIndexPtr(), A.outerIndexPtr() + n_ + 1);
  inner_.assign(A.innerIndexPtr(), A.innerIndexPtr() + A.nonZeros());
  klu_common common;
  klu_defaults(&common);
  // klu_analyze reads but does not write the pattern arrays.
  klu_symbolic* s = klu_analyze(static_cast<int>(n_), outer_.data(), inner_.data(), &common);
  if (s == nullptr) fail("klu_analyze", common);
  symbolic_ = s;
}

KluPattern::~KluPattern() {
  if (symbolic_ != nullptr) {
    klu_common common;
    klu_defaults(&common);
    auto* s = static_cast<klu_symbolic*>(symbolic_);
    klu_free_symbolic(&s, &common);
  }
}

// ---------------------------------------------------------------------------------------------

/// Each factorization has its own klu_common: KLU keeps its memory accounting there, which gives
/// memory_bytes() exactly, and separate objects never share mutable state.
template <class Scalar>
struct KluLu<Scalar>::Common {
  klu_common c;
};

namespace {

/// klu_refactor keeps the pivot order of the last klu_factor. When the new values make those
/// pivots tiny (pivot ratio below this) or let the entries of U grow far beyond those of A
/// (reciprocal pivot growth below kRefactorGrowthMin), the refactorization is not trusted and a
/// full factorization with fresh partial pivoting is done instead.
constexpr double kRefactorRcondMin = 1e-12;
constexpr double kRefactorGrowthMin = 1e-8;

constexpr bool is_complex(const double*) {
  return false;
}
constexpr bool is_complex(const Complex*) {
  return true;
}

// KLU's real and complex entry points, chosen by the scalar type. KLU's prototypes take
// non-const pointers; it does not write through the pattern and value arrays in these calls.
klu_numeric* klu_factor_any(int* Ap, int* Ai, double* Ax, klu_symbolic* S, klu_common* c,
                            bool cplx) {
  return cplx ? klu_z_factor(Ap, Ai, Ax, S, c) : klu_factor(Ap, Ai, Ax, S, c);
}
int klu_refactor_any(int* Ap, int* Ai, double* Ax, klu_symbolic* S, klu_numeric* N, klu_common* c,
                     bool cplx) {
  return cplx ? klu_z_refactor(Ap, Ai, Ax, S, N, c) : klu_refactor(Ap, Ai, Ax, S, N, c);
}
int klu_rcond_any(klu_symbolic* S, klu_numeric* N, klu_common* c, bool cplx) {
  return cplx ? klu_z_rcond(S, N, c) : klu_rcond(S, N, c);
}
int klu_rgrowth_any(int* Ap, int* Ai, double* Ax, klu_symbolic* S, klu_numeric* N, klu_common* c,
                    bool cplx) {
  return cplx ? klu_z_rgrowth(Ap, Ai, Ax, S, N, c) : klu_rgrowth(Ap, Ai, Ax, S, N, c);
}
int klu_solve_any(klu_symbolic* S, klu_numeric* N, int ldim, int nrhs, double* B, klu_common* c,
                  bool cplx, bool transpose) {
  if (cplx)
    return transpose ? klu_z_tsolve(S, N, ldim, nrhs, B, 0, c)
                     : klu_z_solve(S, N, ldim, nrhs, B, c);
  return transpose ? klu_tsolve(S, N, ldim, nrhs, B, c) : klu_solve(S, N, ldim, nrhs, B, c);
}

}  // namespace

template <class Scalar>
KluLu<Scalar>::KluLu(std::shared_ptr<const KluPattern> pattern)
    : pattern_(std::move(pattern)), common_(std::make_unique<Common>()) {
  require(pattern_ != nullptr, "KluLu: null pattern");
  klu_defaults(&common_->c);
}

template <class Scalar>
KluLu<Scalar>::~KluLu() {
  release();
}

template <class Scalar>
void KluLu<Scalar>::release() {
  if (numeric_ != nullptr) {
    auto* num = static_cast<klu_numeric*>(numeric_);
    klu_free_numeric(&num, &common_->c);  // frees real and complex Numeric objects alike
    numeric_ = nullptr;
  }
}

template <class Scalar>
std::size_t KluLu<Scalar>::memory_bytes() const {
  return numeric_ != nullptr ? common_->c.memusage : 0;
}

template <class Scalar>
void KluLu<Scalar>::factorize(const Scalar* values) {
  constexpr bool cplx = is_complex(static_cast<const Scalar*>(nullptr));
  const char* name = cplx ? "complex KLU" : "KLU";
  klu_common& c = common_->c;
  auto* sym = static_cast<klu_symbolic*>(pattern_->symbolic());
  int* Ap = const_cast<int*>(pattern_->outer().data());
  int* Ai = const_cast<int*>(pattern_->inner().data());
  double* Ax = const_cast<double*>(reinterpret_cast<const double*>(values));

  if (numeric_ != nullptr) {
    auto* num = static_cast<klu_numeric*>(numeric_);
    if (klu_refactor_any(Ap, Ai, Ax, sym, num, &c, cplx) && klu_rcond_any(sym, num, &c, cplx) &&
        c.rcond >= kRefactorRcondMin && klu_rgrowth_any(Ap, Ai, Ax, sym, num, &c, cplx) &&
        c.rgrowth >= kRefactorGrowthMin) {
      return;
    }
    const klu_common failed = c;
    release();  // unsafe or singular with the old pivots: pivot afresh
    if (failed.status < KLU_OK) fail(cplx ? "klu_z_refactor" : "klu_refactor", failed);
  }

  klu_numeric* num = klu_factor_any(Ap, Ai, Ax, sym, &c, cplx);
  if (num == nullptr) {
    if (c.status == KLU_SINGULAR) {
      throw NumericalError(detail::concat(
          name, ": ", cplx ? "klu_z_factor" : "klu_factor", " failed with status ", c.status, " (",
          klu_status_name(c.status), "); zero pivot in column ", c.singular_col,
          " of the matrix (elimination step ", c.numerical_rank, " of ", n(), ")"));
    }
    fail(cplx ? "klu_z_factor" : "klu_factor", c);
  }
  numeric_ = num;
  // KLU stops only at exactly zero pivots; a pivot ratio at rounding level means the matrix is
  // singular up to rounding and any solution would be noise.
  if (!klu_rcond_any(sym, num, &c, cplx)) {
    const klu_common failed = c;
    release();
    fail(cplx ? "klu_z_rcond" : "klu_rcond", failed);
  }
  if (!(c.rcond >= std::numeric_limits<double>::epsilon())) {
    const double rcond = c.rcond;
    release();
    throw NumericalError(detail::concat(
        name, ": the matrix is numerically singular (status ", klu_status_name(KLU_SINGULAR),
        "): pivot ratio min|U_kk| / max|U_kk| = ", rcond, " is below machine epsilon"));
  }
}

template <class Scalar>
void KluLu<Scalar>::factorize(const SparseType& A) {
  require(A.rows() == n() && A.cols() == n(), "KluLu: got a ", A.rows(), "x", A.cols(),
          " matrix, the analysed pattern is ", n(), "x", n());
  require(A.isCompressed() && A.nonZeros() == pattern_->nonzeros() &&
              std::equal(pattern_->outer().begin(), pattern_->outer().end(), A.outerIndexPtr()) &&
              std::equal(pattern_->inner().begin(), pattern_->inner().end(), A.innerIndexPtr()),
          "KluLu: the matrix pattern (", A.nonZeros(), " nonzeros) differs from the analysed one (",
          pattern_->nonzeros(), " nonzeros)");
  factorize(A.valuePtr());
}

template <class Scalar>
void KluLu<Scalar>::solve_in_place(DenseMatrix& X, bool transpose) {
  constexpr bool cplx = is_complex(static_cast<const Scalar*>(nullptr));
  require(numeric_ != nullptr, "KluLu: solve called without a successful factorize");
  require(X.rows() == n(), "KluLu: right-hand side has ", X.rows(), " rows, expected ", n());
  if (X.cols() == 0) return;
  auto* sym = static_cast<klu_symbolic*>(pattern_->symbolic());
  auto* num = static_cast<klu_numeric*>(numeric_);
  klu_common& c = common_->c;
  if (!klu_solve_any(sym, num, static_cast<int>(n()), static_cast<int>(X.cols()),
                     reinterpret_cast<double*>(X.data()), &c, cplx, transpose)) {
    fail(transpose ? "klu_tsolve" : "klu_solve", c);
  }
}

template <class Scalar>
void KluLu<Scalar>::solve(const DenseMatrix& B, DenseMatrix& X, bool transpose) {
  if (&B != &X) X = B;
  solve_in_place(X, transpose);
}

template class KluLu<double>;
template class KluLu<Complex>;

}  // namespace mor
