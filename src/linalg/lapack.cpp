// SPDX-License-Identifier: GPL-3.0-or-later
// LAPACK/BLAS wrappers (src/linalg/lapack.hpp).
#include "src/linalg/lapack.hpp"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "src/core/errors.hpp"

extern "C" {
// Fortran prototypes (INTEGER is 32 bits in Debian's builds; gfortran appends the lengths of
// CHARACTER arguments as hidden size_t arguments).
void dgees_(const char* jobvs, const char* sort, int (*select)(const double*, const double*),
            const int* n, double* a, const int* lda, int* sdim, double* wr, double* wi, double* vs,
            const int* ldvs, double* work, const int* lwork, int* bwork, int* info,
            std::size_t jobvs_len, std::size_t sort_len);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info, std::size_t jobz_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, std::size_t transa_len,
            std::size_t transb_len);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
void dgecon_(const char* norm, const int* n, const double* a, const int* lda, const double* anorm,
             double* rcond, double* work, int* iwork, int* info, std::size_t norm_len);
void dgeqp3_(const int* m, const int* n, double* a, const int* lda, int* jpvt, double* tau,
             double* work, const int* lwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             std::size_t jobz_len, std::size_t uplo_len);
void dsterf_(const int* n, double* d, double* e, int* info);
void dsygvd_(const int* itype, const char* jobz, const char* uplo, const int* n, double* a,
             const int* lda, double* b, const int* ldb, double* w, double* work, const int* lwork,
             int* iwork, const int* liwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info, std::size_t jobvl_len,
            std::size_t jobvr_len);
void dgehrd_(const int* n, const int* ilo, const int* ihi, double* a, const int* lda, double* tau,
             double* work, const int* lwork, int* info);
void dorghr_(const int* n, const int* ilo, const int* ihi, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void dggev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* b, const int* ldb, double* alphar, double* alphai, double* beta, double* vl,
            const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info,
            std::size_t jobvl_len, std::size_t jobvr_len);
void zgesdd_(const char* jobz, const int* m, const int* n, std::complex<double>* a, const int* lda,
             double* s, std::complex<double>* u, const int* ldu, std::complex<double>* vt,
             const int* ldvt, std::complex<double>* work, const int* lwork, double* rwork,
             int* iwork, int* info, std::size_t jobz_len);
void zgetrf_(const int* m, const int* n, std::complex<double>* a, const int* lda, int* ipiv,
             int* info);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const std::complex<double>* a,
             const int* lda, const int* ipiv, std::complex<double>* b, const int* ldb, int* info,
             std::size_t trans_len);
void zgecon_(const char* norm, const int* n, const std::complex<double>* a, const int* lda,
             const double* anorm, double* rcond, std::complex<double>* work, double* rwork,
             int* info, std::size_t norm_len);
}

namespace mor::lapack {

namespace {

/// A dimension as Fortran's INTEGER.
int fortran_int(Index value, const char* what) {
  require(value >= 0 && value <= std::numeric_limits<int>::max(), "LAPACK: ", what, " = ", value,
          " does not fit a 32-bit LAPACK integer");
  return static_cast<int>(value);
}

/// The optimal workspace LAPACK reported in a query (rounded up: it is returned as a double).
int workspace_size(double query) {
  return std::max(1, static_cast<int>(query + 0.5) + 1);
}

}  // namespace

void real_schur(Matrix& T, Matrix& Q) {
  const Index n = T.rows();
  require(T.cols() == n, "real Schur form: the matrix is ", T.rows(), "x", T.cols(),
          ", expected square");
  require(T.allFinite(), "real Schur form: the matrix has a non-finite entry");
  Q.resize(n, n);
  if (n == 0) return;
  const int nn = fortran_int(n, "n"), ld = std::max(1, nn);
  std::vector<double> wr(n), wi(n);
  int sdim = 0, info = 0, lwork = -1;
  double query = 0.0;
  dgees_("V", "N", nullptr, &nn, T.data(), &ld, &sdim, wr.data(), wi.data(), Q.data(), &ld, &query,
         &lwork, nullptr, &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgees_("V", "N", nullptr, &nn, T.data(), &ld, &sdim, wr.data(), wi.data(), Q.data(), &ld,
         work.data(), &lwork, nullptr, &info, 1, 1);
  if (info < 0) throw InvalidArgument(detail::concat("dgees: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("real Schur form (", n, "x", n,
                                        "): the QR algorithm did not converge (dgees INFO = ", info,
                                        ")"));
}

namespace {

/// dgesdd with JOBZ = 'S' (thin vectors), 'A' (full vectors) or 'N' (values only).
void gesdd(char jobz, Matrix& X, Matrix* U, Vector& s, Matrix* Vt) {
  const int m = fortran_int(X.rows(), "rows"), n = fortran_int(X.cols(), "columns");
  const int k = std::min(m, n);
  s.resize(k);
  if (k == 0) {
    if (U) jobz == 'A' ? U->setIdentity(m, m) : U->setZero(m, 0);
    if (Vt) jobz == 'A' ? Vt->setIdentity(n, n) : Vt->setZero(0, n);
    return;
  }
  // Its input is computed (Gramian factors, snapshots): a non-finite entry is a numerical failure.
  if (!X.allFinite())
    throw NumericalError("singular value decomposition: the matrix has a non-finite entry");
  const int lda = std::max(1, m);
  int ldu = 1, ldvt = 1;
  double dummy = 0.0;
  double* u = &dummy;
  double* vt = &dummy;
  if (jobz != 'N') {
    U->resize(m, jobz == 'A' ? m : k);
    Vt->resize(jobz == 'A' ? n : k, n);
    u = U->data();
    vt = Vt->data();
    ldu = std::max(1, m);
    ldvt = std::max(1, jobz == 'A' ? n : k);
  }
  std::vector<int> iwork(8 * static_cast<std::size_t>(k));
  int info = 0, lwork = -1;
  double query = 0.0;
  dgesdd_(&jobz, &m, &n, X.data(), &lda, s.data(), u, &ldu, vt, &ldvt, &query, &lwork, iwork.data(),
          &info, 1);
  lwork = workspace_size(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgesdd_(&jobz, &m, &n, X.data(), &lda, s.data(), u, &ldu, vt, &ldvt, work.data(), &lwork,
          iwork.data(), &info, 1);
  if (info < 0) throw InvalidArgument(detail::concat("dgesdd: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("singular value decomposition (", m, "x", n,
                                        ") did not converge (dgesdd INFO = ", info, ")"));
}

/// zgesdd with JOBZ = 'S' (thin vectors) or 'N' (values only); X finite.
void zgesdd(char jobz, ComplexMatrix& X, ComplexMatrix* U, Vector& s, ComplexMatrix* Vh) {
  const int m = fortran_int(X.rows(), "rows"), n = fortran_int(X.cols(), "columns");
  const int k = std::min(m, n);
  s.resize(k);
  if (k == 0) {
    if (U) U->setZero(m, 0);
    if (Vh) Vh->setZero(0, n);
    return;
  }
  const int lda = std::max(1, m);
  int ldu = 1, ldvt = 1;
  Complex dummy(0.0, 0.0);
  Complex* u = &dummy;
  Complex* vt = &dummy;
  std::size_t lrwork = 7 * static_cast<std::size_t>(k);  // LAPACK >= 3.7's bound for JOBZ = 'N'
  if (jobz == 'S') {
    U->resize(m, k);
    Vh->resize(k, n);
    u = U->data();
    vt = Vh->data();
    ldu = std::max(1, m);
    ldvt = std::max(1, k);
    const auto mx = static_cast<std::size_t>(std::max(m, n)), mn = static_cast<std::size_t>(k);
    lrwork = std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
  }
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(8 * static_cast<std::size_t>(k));
  int info = 0, lwork = -1;
  Complex query(0.0, 0.0);
  zgesdd_(&jobz, &m, &n, X.data(), &lda, s.data(), u, &ldu, vt, &ldvt, &query, &lwork, rwork.data(),
          iwork.data(), &info, 1);
  lwork = workspace_size(query.real());
  std::vector<Complex> work(static_cast<std::size_t>(lwork));
  zgesdd_(&jobz, &m, &n, X.data(), &lda, s.data(), u, &ldu, vt, &ldvt, work.data(), &lwork,
          rwork.data(), iwork.data(), &info, 1);
  if (info < 0) throw InvalidArgument(detail::concat("zgesdd: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("singular value decomposition (", m, "x", n,
                                        ", complex) did not converge (zgesdd INFO = ", info, ")"));
}

}  // namespace

ComplexSvd thin_complex_svd(ComplexMatrix X) {
  if (!X.allFinite())
    throw NumericalError("singular value decomposition: the complex matrix has a non-finite entry");
  ComplexSvd r;
  ComplexMatrix Vh;
  zgesdd('S', X, &r.U, r.s, &Vh);
  r.V = Vh.adjoint();
  return r;
}

double spectral_norm(const ComplexMatrix& X) {
  if (X.size() == 0) return 0.0;
  if (X.hasNaN()) return std::numeric_limits<double>::quiet_NaN();
  if (!X.allFinite()) return std::numeric_limits<double>::infinity();
  if (X.rows() == 1 || X.cols() == 1) return X.norm();
  ComplexMatrix Y = X;
  Vector s;
  zgesdd('N', Y, nullptr, s, nullptr);
  return s(0);
}

ComplexLu::ComplexLu(ComplexMatrix A) : lu_(std::move(A)) {
  const Index n = lu_.rows();
  require(lu_.cols() == n, "complex LU: the matrix is ", lu_.rows(), "x", lu_.cols(),
          ", expected square");
  if (!lu_.allFinite()) throw NumericalError("complex LU: the matrix has a non-finite entry");
  ipiv_.resize(static_cast<std::size_t>(n));
  if (n == 0) return;
  norm1_ = lu_.cwiseAbs().colwise().sum().maxCoeff();
  const int nn = fortran_int(n, "n"), lda = std::max(1, nn);
  int info = 0;
  zgetrf_(&nn, &nn, lu_.data(), &lda, ipiv_.data(), &info);
  if (info < 0) throw InvalidArgument(detail::concat("zgetrf: argument ", -info, " is invalid"));
  zero_pivot_ = info;
}

ComplexMatrix ComplexLu::solve(ComplexMatrix B, bool transposed) const {
  const Index n = lu_.rows();
  require(B.rows() == n, "complex LU solve: the right-hand side has ", B.rows(), " rows, expected ",
          n);
  if (zero_pivot_ > 0)
    throw NumericalError(detail::concat("complex LU solve: the ", n, "x", n,
                                        " matrix is singular (zgetrf: U(", zero_pivot_, ",",
                                        zero_pivot_, ") = 0)"));
  if (!B.allFinite())
    throw NumericalError("complex LU solve: the right-hand side has a non-finite entry");
  if (n == 0 || B.cols() == 0) return B;
  const int nn = fortran_int(n, "n"), nrhs = fortran_int(B.cols(), "columns"), ld = std::max(1, nn);
  const char trans = transposed ? 'T' : 'N';
  int info = 0;
  zgetrs_(&trans, &nn, &nrhs, lu_.data(), &ld, ipiv_.data(), B.data(), &ld, &info, 1);
  if (info < 0) throw InvalidArgument(detail::concat("zgetrs: argument ", -info, " is invalid"));
  return B;
}

double ComplexLu::rcond() const {
  const Index n = lu_.rows();
  if (n == 0) return 1.0;
  if (zero_pivot_ > 0 || norm1_ == 0.0) return 0.0;
  const int nn = fortran_int(n, "n"), lda = std::max(1, nn);
  std::vector<Complex> work(2 * static_cast<std::size_t>(n));
  std::vector<double> rwork(2 * static_cast<std::size_t>(n));
  double rc = 0.0;
  int info = 0;
  zgecon_("1", &nn, lu_.data(), &lda, &norm1_, &rc, work.data(), rwork.data(), &info, 1);
  if (info < 0) throw InvalidArgument(detail::concat("zgecon: argument ", -info, " is invalid"));
  return rc;
}

void svd(Matrix& X, Matrix& U, Vector& s, Matrix& V) {
  Matrix Vt;
  gesdd('S', X, &U, s, &Vt);
  V = Vt.transpose();
}

Svd thin_svd(Matrix X) {
  Svd r;
  svd(X, r.U, r.s, r.V);
  return r;
}

Svd full_svd(Matrix X) {
  Svd r;
  Matrix Vt;
  gesdd('A', X, &r.U, r.s, &Vt);
  r.V = Vt.transpose();
  return r;
}

Vector singular_values(Matrix& X) {
  Vector s;
  gesdd('N', X, nullptr, s, nullptr);
  return s;
}

void gemm(bool transpose_a, bool transpose_b, double alpha, const Eigen::Ref<const Matrix>& A,
          const Eigen::Ref<const Matrix>& B, double beta, Eigen::Ref<Matrix> C) {
  const Index m = transpose_a ? A.cols() : A.rows(), k = transpose_a ? A.rows() : A.cols();
  const Index kb = transpose_b ? B.cols() : B.rows(), n = transpose_b ? B.rows() : B.cols();
  require(k == kb && C.rows() == m && C.cols() == n, "gemm: op(A) is ", m, "x", k, ", op(B) ", kb,
          "x", n, ", C ", C.rows(), "x", C.cols());
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.0)
      C.setZero();
    else
      C *= beta;
    return;
  }
  const int mm = fortran_int(m, "m"), nn = fortran_int(n, "n"), kk = fortran_int(k, "k");
  const int lda = std::max<int>(1, fortran_int(A.outerStride(), "lda"));
  const int ldb = std::max<int>(1, fortran_int(B.outerStride(), "ldb"));
  const int ldc = std::max<int>(1, fortran_int(C.outerStride(), "ldc"));
  const char ta = transpose_a ? 'T' : 'N', tb = transpose_b ? 'T' : 'N';
  dgemm_(&ta, &tb, &mm, &nn, &kk, &alpha, A.data(), &lda, B.data(), &ldb, &beta, C.data(), &ldc, 1,
         1);
}

Matrix qr_r_factor(Matrix& X) {
  const int m = fortran_int(X.rows(), "rows"), n = fortran_int(X.cols(), "columns");
  const int k = std::min(m, n);
  if (k == 0) return Matrix(0, n);
  const int lda = std::max(1, m);
  std::vector<double> tau(static_cast<std::size_t>(k));
  int info = 0, lwork = -1;
  double query = 0.0;
  dgeqrf_(&m, &n, X.data(), &lda, tau.data(), &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeqrf_(&m, &n, X.data(), &lda, tau.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dgeqrf: argument ", -info, " is invalid"));
  return X.topRows(k).triangularView<Eigen::Upper>();
}

Matrix qr_in_place(Matrix& X) {
  const int m = fortran_int(X.rows(), "rows"), n = fortran_int(X.cols(), "columns");
  require(n <= m, "QR: the matrix is ", m, "x", n, ", expected at least as many rows as columns");
  if (n == 0) return Matrix(0, 0);
  const int lda = std::max(1, m);
  std::vector<double> tau(static_cast<std::size_t>(n));
  int info = 0, lwork = -1;
  double query = 0.0, query2 = 0.0;
  dgeqrf_(&m, &n, X.data(), &lda, tau.data(), &query, &lwork, &info);
  dorgqr_(&m, &n, &n, X.data(), &lda, tau.data(), &query2, &lwork, &info);
  lwork = std::max(workspace_size(query), workspace_size(query2));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeqrf_(&m, &n, X.data(), &lda, tau.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dgeqrf: argument ", -info, " is invalid"));
  Matrix R = X.topRows(n).triangularView<Eigen::Upper>();
  dorgqr_(&m, &n, &n, X.data(), &lda, tau.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dorgqr: argument ", -info, " is invalid"));
  return R;
}

void qr_q_factor(Matrix& X) {
  (void)qr_in_place(X);
}

void invert(Matrix& X, double* rcond) {
  const Index n = X.rows();
  require(X.cols() == n, "matrix inverse: the matrix is ", X.rows(), "x", X.cols(),
          ", expected square");
  require(X.allFinite(), "matrix inverse: the matrix has a non-finite entry");
  if (n == 0) {
    if (rcond) *rcond = 1.0;
    return;
  }
  const int nn = fortran_int(n, "n"), lda = std::max(1, nn);
  const double norm1 = rcond ? X.cwiseAbs().colwise().sum().maxCoeff() : 0.0;
  std::vector<int> ipiv(static_cast<std::size_t>(n));
  int info = 0;
  dgetrf_(&nn, &nn, X.data(), &lda, ipiv.data(), &info);
  if (info < 0) throw InvalidArgument(detail::concat("dgetrf: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("matrix inverse (", n, "x", n,
                                        "): the matrix is singular (dgetrf: U(", info, ",", info,
                                        ") = 0)"));
  if (rcond) {
    std::vector<double> work(4 * static_cast<std::size_t>(n));
    std::vector<int> iwork(static_cast<std::size_t>(n));
    dgecon_("1", &nn, X.data(), &lda, &norm1, rcond, work.data(), iwork.data(), &info, 1);
    if (info < 0) throw InvalidArgument(detail::concat("dgecon: argument ", -info, " is invalid"));
  }
  int lwork = -1;
  double query = 0.0;
  dgetri_(&nn, X.data(), &lda, ipiv.data(), &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgetri_(&nn, X.data(), &lda, ipiv.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dgetri: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("matrix inverse (", n, "x", n,
                                        "): the matrix is singular (dgetri INFO = ", info, ")"));
}

Matrix pivoted_qr_r_factor(Matrix& X, Eigen::VectorXi& perm, Matrix* Q) {
  const int m = fortran_int(X.rows(), "rows"), n = fortran_int(X.cols(), "columns");
  const int k = std::min(m, n);
  perm.setZero(n);  // jpvt = 0: every column is free to move
  if (k == 0) {
    for (int j = 0; j < n; ++j) perm(j) = j;
    if (Q) Q->setZero(m, 0);
    return Matrix(0, n);
  }
  const int lda = std::max(1, m);
  std::vector<double> tau(static_cast<std::size_t>(k));
  int info = 0, lwork = -1;
  double query = 0.0;
  dgeqp3_(&m, &n, X.data(), &lda, perm.data(), tau.data(), &query, &lwork, &info);
  lwork = workspace_size(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeqp3_(&m, &n, X.data(), &lda, perm.data(), tau.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dgeqp3: argument ", -info, " is invalid"));
  perm.array() -= 1;  // Fortran's 1-based indices
  Matrix R = X.topRows(k).triangularView<Eigen::Upper>();
  if (Q) {
    *Q = X.leftCols(k);
    lwork = -1;
    dorgqr_(&m, &k, &k, Q->data(), &lda, tau.data(), &query, &lwork, &info);
    lwork = workspace_size(query);
    work.resize(static_cast<std::size_t>(lwork));
    dorgqr_(&m, &k, &k, Q->data(), &lda, tau.data(), work.data(), &lwork, &info);
    if (info < 0) throw InvalidArgument(detail::concat("dorgqr: argument ", -info, " is invalid"));
  }
  return R;
}

namespace {

/// dsyevd with JOBZ = 'N' or 'V' on a square, finite X (its lower triangle, as Eigen's
/// SelfAdjointEigenSolver reads).
void syevd(char jobz, Matrix& X, Vector& w) {
  const int n = fortran_int(X.rows(), "n");
  w.resize(n);
  if (n == 0) return;
  const int lda = std::max(1, n);
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  double query = 0.0;
  dsyevd_(&jobz, "L", &n, X.data(), &lda, w.data(), &query, &lwork, &iquery, &liwork, &info, 1, 1);
  lwork = workspace_size(query);
  liwork = std::max(1, iquery);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  dsyevd_(&jobz, "L", &n, X.data(), &lda, w.data(), work.data(), &lwork, iwork.data(), &liwork,
          &info, 1, 1);
  if (info < 0) throw InvalidArgument(detail::concat("dsyevd: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("symmetric eigenvalues (", n, "x", n,
                                        ") did not converge (dsyevd INFO = ", info, ")"));
}

void require_square(const Matrix& X, const char* what) {
  require(X.cols() == X.rows(), what, ": the matrix is ", X.rows(), "x", X.cols(),
          ", expected square");
}

/// dgeev with JOBVR = 'N' or 'V' on a square A.
void geev(char jobvr, Matrix& A, ComplexVector& lambda, ComplexMatrix* V) {
  require_square(A, "eigenvalues");
  if (!A.allFinite()) throw NumericalError("eigenvalues: the matrix has a non-finite entry");
  const int n = fortran_int(A.rows(), "n"), lda = std::max(1, n), one = 1;
  lambda.resize(n);
  if (V) V->resize(n, n);
  if (n == 0) return;
  Vector wr(n), wi(n);
  Matrix vr(jobvr == 'V' ? n : 0, jobvr == 'V' ? n : 0);
  const int ldvr = jobvr == 'V' ? lda : 1;
  double dummy = 0.0, query = 0.0;
  double* vr_data = jobvr == 'V' ? vr.data() : &dummy;
  int info = 0, lwork = -1;
  dgeev_("N", &jobvr, &n, A.data(), &lda, wr.data(), wi.data(), &dummy, &one, vr_data, &ldvr,
         &query, &lwork, &info, 1, 1);
  lwork = workspace_size(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgeev_("N", &jobvr, &n, A.data(), &lda, wr.data(), wi.data(), &dummy, &one, vr_data, &ldvr,
         work.data(), &lwork, &info, 1, 1);
  if (info < 0) throw InvalidArgument(detail::concat("dgeev: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("eigenvalues (", n, "x", n,
                                        "): the QR algorithm did not converge (dgeev INFO = ", info,
                                        ")"));
  for (Index i = 0; i < n; ++i) lambda[i] = Complex(wr[i], wi[i]);
  if (!V) return;
  // A complex pair (wi(j) > 0, then its conjugate) is stored as vr(:, j) +- i vr(:, j + 1).
  for (Index j = 0; j < n; ++j) {
    if (wi[j] == 0.0) {
      V->col(j) = vr.col(j).cast<Complex>();
    } else {
      V->col(j).real() = vr.col(j);
      V->col(j).imag() = vr.col(j + 1);
      V->col(j + 1) = V->col(j).conjugate();
      ++j;
    }
  }
}

}  // namespace

Vector symmetric_eigenvalues(Matrix& X) {
  require_square(X, "symmetric eigenvalues");
  Vector w;
  if (!X.allFinite()) {
    w.setConstant(X.rows(), std::numeric_limits<double>::quiet_NaN());
    return w;
  }
  syevd('N', X, w);
  return w;
}

void symmetric_eigen(Matrix& X, Vector& w) {
  require_square(X, "symmetric eigendecomposition");
  if (!X.allFinite())
    throw NumericalError("symmetric eigendecomposition: the matrix has a non-finite entry");
  syevd('V', X, w);
}

Vector symmetric_tridiagonal_eigenvalues(const Vector& diagonal, const Vector& sub_diagonal) {
  const Index n = diagonal.size();
  require(sub_diagonal.size() == std::max<Index>(n - 1, 0), "tridiagonal eigenvalues: ", n,
          " diagonal and ", sub_diagonal.size(), " sub-diagonal entries");
  if (!diagonal.allFinite() || !sub_diagonal.allFinite())
    throw NumericalError("tridiagonal eigenvalues: the matrix has a non-finite entry");
  Vector d = diagonal;
  Vector e(std::max<Index>(n, 1));
  e.head(sub_diagonal.size()) = sub_diagonal;
  if (n == 0) return d;
  const int nn = fortran_int(n, "n");
  int info = 0;
  dsterf_(&nn, d.data(), e.data(), &info);
  if (info < 0) throw InvalidArgument(detail::concat("dsterf: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("tridiagonal eigenvalues (n = ", n,
                                        ") did not converge (dsterf INFO = ", info, ")"));
  return d;
}

void generalized_symmetric_eigen(Matrix& A, Matrix& B, Vector& w) {
  const Index n = A.rows();
  require(A.cols() == n && B.rows() == n && B.cols() == n,
          "generalized symmetric eigenproblem: A is ", A.rows(), "x", A.cols(), " and B ", B.rows(),
          "x", B.cols(), ", expected square of one size");
  if (!A.allFinite() || !B.allFinite())
    throw NumericalError("generalized symmetric eigenproblem: the pencil has a non-finite entry");
  w.resize(n);
  if (n == 0) return;
  const int nn = fortran_int(n, "n"), ld = std::max(1, nn), itype = 1;
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  double query = 0.0;
  dsygvd_(&itype, "V", "L", &nn, A.data(), &ld, B.data(), &ld, w.data(), &query, &lwork, &iquery,
          &liwork, &info, 1, 1);
  lwork = workspace_size(query);
  liwork = std::max(1, iquery);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  dsygvd_(&itype, "V", "L", &nn, A.data(), &ld, B.data(), &ld, w.data(), work.data(), &lwork,
          iwork.data(), &liwork, &info, 1, 1);
  if (info < 0) throw InvalidArgument(detail::concat("dsygvd: argument ", -info, " is invalid"));
  if (info > nn)
    throw NumericalError(detail::concat("generalized symmetric eigenproblem (", n, "x", n,
                                        "): B is not positive definite (leading minor of order ",
                                        info - nn, ")"));
  if (info > 0)
    throw NumericalError(detail::concat("generalized symmetric eigenproblem (", n, "x", n,
                                        ") did not converge (dsygvd INFO = ", info, ")"));
}

ComplexVector eigenvalues(Matrix& A) {
  ComplexVector lambda;
  geev('N', A, lambda, nullptr);
  return lambda;
}

void eigen(Matrix& A, ComplexVector& lambda, ComplexMatrix& V) {
  geev('V', A, lambda, &V);
}

void hessenberg(Matrix& H, Matrix& Q) {
  require_square(H, "Hessenberg form");
  if (!H.allFinite()) throw InvalidArgument("Hessenberg form: the matrix has a non-finite entry");
  const int n = fortran_int(H.rows(), "n"), lda = std::max(1, n), ilo = 1;
  if (n == 0) {
    Q.resize(0, 0);
    return;
  }
  std::vector<double> tau(static_cast<std::size_t>(std::max(1, n - 1)));
  int info = 0, lwork = -1;
  double query = 0.0, query2 = 0.0;
  dgehrd_(&n, &ilo, &n, H.data(), &lda, tau.data(), &query, &lwork, &info);
  Q.resize(n, n);
  dorghr_(&n, &ilo, &n, Q.data(), &lda, tau.data(), &query2, &lwork, &info);
  lwork = std::max(workspace_size(query), workspace_size(query2));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dgehrd_(&n, &ilo, &n, H.data(), &lda, tau.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dgehrd: argument ", -info, " is invalid"));
  Q = H;
  dorghr_(&n, &ilo, &n, Q.data(), &lda, tau.data(), work.data(), &lwork, &info);
  if (info < 0) throw InvalidArgument(detail::concat("dorghr: argument ", -info, " is invalid"));
  for (int j = 0; j + 2 < n; ++j) H.col(j).tail(n - j - 2).setZero();  // the reflectors
}

void generalized_eigenvalues(Matrix& A, Matrix& B, ComplexVector& alpha, Vector& beta) {
  const Index n = A.rows();
  require(A.cols() == n && B.rows() == n && B.cols() == n, "generalized eigenvalues: A is ",
          A.rows(), "x", A.cols(), " and B ", B.rows(), "x", B.cols(),
          ", expected square of one size");
  if (!A.allFinite() || !B.allFinite())
    throw NumericalError("generalized eigenvalues: the pencil has a non-finite entry");
  alpha.resize(n);
  beta.resize(n);
  if (n == 0) return;
  const int nn = fortran_int(n, "n"), ld = std::max(1, nn), one = 1;
  Vector ar(n), ai(n);
  double dummy = 0.0, query = 0.0;
  int info = 0, lwork = -1;
  dggev_("N", "N", &nn, A.data(), &ld, B.data(), &ld, ar.data(), ai.data(), beta.data(), &dummy,
         &one, &dummy, &one, &query, &lwork, &info, 1, 1);
  lwork = std::max(workspace_size(query), 8 * nn);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dggev_("N", "N", &nn, A.data(), &ld, B.data(), &ld, ar.data(), ai.data(), beta.data(), &dummy,
         &one, &dummy, &one, work.data(), &lwork, &info, 1, 1);
  if (info < 0) throw InvalidArgument(detail::concat("dggev: argument ", -info, " is invalid"));
  if (info > 0)
    throw NumericalError(detail::concat("generalized eigenvalues (", n, "x", n,
                                        "): the QZ iteration did not converge (dggev INFO = ", info,
                                        ")"));
  for (Index i = 0; i < n; ++i) alpha[i] = Complex(ar[i], ai[i]);
}

}  // namespace mor::lapack
