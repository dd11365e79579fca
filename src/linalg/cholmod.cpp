// SPDX-License-Identifier: GPL-3.0-or-later
// CHOLMOD behind one module (see cholmod.hpp), the only file that includes cholmod.h: the
// SparseSolver backend, the factors of one analysed pattern, MatrixMarket reading and writing.
#include "src/linalg/cholmod.hpp"

#include <cholmod.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <string>
#include <string_view>

#include "src/core/errors.hpp"
#include "src/linalg/checked_sparse_solver.hpp"
#include "src/linalg/cholmod_views.hpp"

namespace mor {

namespace {

/// Throws, for a factorization that failed, the overflow it is if the matrix holds a non-finite
/// entry: such a matrix is "not positive definite" only because its coefficients (a stiffness of
/// 1e300, a force's slope at an overflowing state) left the range of doubles.
void throw_if_not_finite(const SparseMatrix& A, std::string_view who) {
  for (Index k = 0; k < A.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(A, k); it; ++it)
      if (!std::isfinite(it.value()))
        throw NumericalError(detail::concat(
            who, ": the matrix has the entry (", it.row() + 1, ", ", it.col() + 1,
            ") = ", it.value(),
            ", not finite: the model's coefficients (or a force's slope at the state) overflow "
            "the range of doubles; scale the model or its input"));
}

using detail::CheckedSparseSolver;
using detail::concat;

const char* cholmod_status_text(int status) {
  switch (status) {
    case CHOLMOD_OK:
      return "ok";
    case CHOLMOD_NOT_INSTALLED:
      return "method not installed";
    case CHOLMOD_OUT_OF_MEMORY:
      return "out of memory";
    case CHOLMOD_TOO_LARGE:
      return "integer overflow";
    case CHOLMOD_INVALID:
      return "invalid input";
    case CHOLMOD_GPU_PROBLEM:
      return "GPU problem";
    case CHOLMOD_NOT_POSDEF:
      return "matrix not positive definite";
    case CHOLMOD_DSMALL:
      return "tiny diagonal entry";
    default:
      return "unknown status";
  }
}

// ---------------------------------------------------------------------------------------------
// The SparseSolver backend

class CholmodSolver final : public CheckedSparseSolver {
 public:
  CholmodSolver() {
    cholmod_start(&common_);
    common_.print = 0;  // library code never prints; failures come back as exceptions
    // Simplicial factors stay LDL' (CHOLMOD's default, final_ll = 0): without the square roots
    // and the divisions by diag(L) a solve is faster (measured 10 ms against 17 ms for LL' on a
    // tridiagonal matrix with n = 10^6). Supernodal factors are always LL'.
  }
  ~CholmodSolver() override {
    cholmod_free_factor(&L_, &common_);
    cholmod_free_dense(&Y_, &common_);
    cholmod_free_dense(&E_, &common_);
    cholmod_finish(&common_);
  }

  SparseBackend backend() const override { return SparseBackend::cholmod; }

 private:
  [[noreturn]] void fail(const char* call) const {
    if (common_.status == CHOLMOD_OUT_OF_MEMORY) throw std::bad_alloc();
    throw NumericalError(detail::concat(name(), ": ", call, " failed with status ", common_.status,
                                        " (", cholmod_status_text(common_.status), ")"));
  }

  void do_analyze(const SparseMatrix& A) override {
    cholmod_free_factor(&L_, &common_);
    cholmod_sparse view = cholmod_views::lower_view(A);
    L_ = cholmod_analyze(&view, &common_);
    if (L_ == nullptr || common_.status < CHOLMOD_OK) fail("cholmod_analyze");
  }

  /// First step k < end with D(k) <= 0 (or NaN) of a simplicial LDL' factor, end if none.
  /// A simplicial LDL' factorization stops only at zero pivots, not at negative ones, so the
  /// SPD check (A is SPD iff every D(k) > 0) is done here; it costs O(n).
  std::size_t first_nonpositive_pivot(std::size_t end) const {
    const int* Lp = static_cast<const int*>(L_->p);
    const double* Lx = static_cast<const double*>(L_->x);
    for (std::size_t k = 0; k < end; ++k) {
      if (!(Lx[Lp[k]] > 0.0)) return k;  // D(k) is stored first in column k
    }
    return end;
  }

  void do_factorize(const SparseMatrix& A) override {
    cholmod_sparse view = cholmod_views::lower_view(A);
    // A nonpositive pivot is only a warning (status > 0); hard errors (< 0) come first.
    if (!cholmod_factorize(&view, L_, &common_) || common_.status < CHOLMOD_OK) {
      fail("cholmod_factorize");
    }
    // L->minor is the first zero pivot (any nonpositive one for LL'); n if there is none.
    std::size_t failed = L_->minor;
    if (!L_->is_super && !L_->is_ll) failed = first_nonpositive_pivot(std::min(failed, L_->n));
    if (failed < L_->n) {
      throw_if_not_finite(A, name());
      // The failing step is a column of the permuted matrix P A P'; Perm maps it back to A.
      const auto k = static_cast<Index>(failed);
      const int* perm = static_cast<const int*>(L_->Perm);
      const Index column = (perm != nullptr && L_->ordering != CHOLMOD_NATURAL) ? perm[k] : k;
      throw NumericalError(detail::concat(name(),
                                          ": matrix is not positive definite; nonpositive pivot "
                                          "at column ",
                                          column, " of A (elimination step ", k, " of ", L_->n,
                                          ")"));
    }
  }

  void do_solve(const double* B, double* X, Index k) override {
    const Index n = rows();
    cholmod_dense b =
        cholmod_views::dense_view(const_cast<double*>(B), n, k);  // read only by CHOLMOD
    cholmod_dense x = cholmod_views::dense_view(X, n, k);
    cholmod_dense* x_handle = &x;
    // Y and E persist between calls: cholmod_solve would allocate and free them every time.
    const int ok =
        cholmod_solve2(CHOLMOD_A, L_, &b, nullptr, &x_handle, nullptr, &Y_, &E_, &common_);
    if (!ok || common_.status < CHOLMOD_OK) fail("cholmod_solve2");
    if (!L_->is_super && Y_ != nullptr) {
      // SuiteSparse 5.x allocates the simplicial workspace Y as max(4, k) x n but reshapes its
      // header to the last block of columns solved; the next call then sees a "wrong" shape and
      // frees and reallocates Y (32 MB at n = 10^6, every solve). Restoring the allocated shape
      // (nzmax is unchanged) lets it be reused.
      const auto rows = static_cast<std::size_t>(std::max<Index>(4, k));
      if (Y_->ncol == static_cast<std::size_t>(n) && Y_->nzmax >= rows * Y_->ncol) {
        Y_->nrow = rows;
        Y_->d = rows;
      }
    }
  }

  cholmod_common common_{};
  cholmod_factor* L_ = nullptr;
  cholmod_dense* Y_ = nullptr;  // cholmod_solve2 workspaces, owned by CHOLMOD
  cholmod_dense* E_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// MatrixMarket files

/// A started cholmod_common that never prints and reads "pattern" files as ones.
class CholmodCommon {
 public:
  CholmodCommon() {
    cholmod_start(&c_);
    c_.print = 0;
    // Without it, CHOLMOD gives a symmetric pattern file the values 1 + degree on the diagonal
    // and -1 elsewhere; with it, every entry is 1 (as scipy.io.mmread returns).
    c_.prefer_binary = 1;
  }
  ~CholmodCommon() { cholmod_finish(&c_); }
  CholmodCommon(const CholmodCommon&) = delete;
  CholmodCommon& operator=(const CholmodCommon&) = delete;
  cholmod_common* get() noexcept { return &c_; }
  std::string status() const {
    return concat("CHOLMOD status ", c_.status, " (", cholmod_status_text(c_.status), ")");
  }

 private:
  cholmod_common c_{};
};

/// A no-copy unsymmetric (stype 0) CHOLMOD view of a compressed Eigen matrix.
/// CHOLMOD refuses null value and index arrays even when there are no entries ("invalid input");
/// Eigen has null arrays for an empty matrix. These stand in (never read: no entries).
int kNoIndex[1] = {0};
double kNoValue[1] = {0.0};

cholmod_sparse general_view(const SparseMatrix& A) {
  cholmod_sparse v{};
  v.nrow = static_cast<std::size_t>(A.rows());
  v.ncol = static_cast<std::size_t>(A.cols());
  v.nzmax = static_cast<std::size_t>(A.nonZeros());
  v.p = const_cast<int*>(A.outerIndexPtr());  // CHOLMOD's writer only reads
  v.i = A.innerIndexPtr() != nullptr ? const_cast<int*>(A.innerIndexPtr()) : kNoIndex;
  v.x = A.valuePtr() != nullptr ? const_cast<double*>(A.valuePtr()) : kNoValue;
  v.stype = 0;
  v.itype = CHOLMOD_INT;
  v.xtype = CHOLMOD_REAL;
  v.dtype = CHOLMOD_DOUBLE;
  v.sorted = 1;
  v.packed = 1;
  return v;
}

}  // namespace

std::unique_ptr<SparseSolver> make_cholmod_solver() {
  return std::make_unique<CholmodSolver>();
}

// ---------------------------------------------------------------------------------------------
// One analysis for many shifts

struct CholmodShared::Impl {
  explicit Impl(const SparseMatrix& P) {
    cholmod_start(&c_);
    c_.print = 0;  // library code never prints
    // CHOLMOD goes supernodal from flops / nnz(L) >= 40 on. The rail (n = 20209, a 2-D mesh)
    // has 43 there, and its supernodal factorization took twice the simplicial one (22 against
    // 12 ms, OpenBLAS, one or two threads): its supernodes are too small for BLAS to pay off.
    // 3-D meshes lie far above the raised switch.
    c_.supernodal_switch = 100.0;
    cholmod_sparse view = cholmod_views::lower_view(P);
    symbolic_ = cholmod_analyze(&view, &c_);
    if (symbolic_ == nullptr || c_.status < CHOLMOD_OK) fail("cholmod_analyze");
  }
  ~Impl() {
    cholmod_free_factor(&symbolic_, &c_);
    cholmod_free_dense(&Y_, &c_);
    cholmod_free_dense(&E_, &c_);
    cholmod_finish(&c_);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  /// A numeric factor of P (its current values); recycles `L` (a factor of this pattern, of
  /// `bytes` bytes) if given. Sets bytes to the size of the new factor.
  /// @throws NumericalError if P is not positive definite (the factor is freed).
  cholmod_factor* factorize(const SparseMatrix& P, cholmod_factor* L, std::size_t& bytes) {
    const std::size_t base = c_.memory_inuse - (L != nullptr ? bytes : 0);
    if (L == nullptr) {
      L = cholmod_copy_factor(symbolic_, &c_);
      if (L == nullptr) fail("cholmod_copy_factor");
    }
    cholmod_sparse view = cholmod_views::lower_view(P);
    if (!cholmod_factorize(&view, L, &c_) || c_.status < CHOLMOD_OK) {
      cholmod_free_factor(&L, &c_);
      fail("cholmod_factorize");
    }
    // L->minor is the first zero pivot (any nonpositive one for LL'); a simplicial LDL' factor
    // stops only at zero pivots, so its D is scanned for negative ones (D(k) first in column k).
    std::size_t failed = L->minor;
    if (!L->is_super && !L->is_ll) {
      const int* Lp = static_cast<const int*>(L->p);
      const double* Lx = static_cast<const double*>(L->x);
      for (std::size_t k = 0; k < std::min(failed, L->n); ++k) {
        if (!(Lx[Lp[k]] > 0.0)) {
          failed = k;
          break;
        }
      }
    }
    if (failed < L->n) {
      const std::size_t n = L->n;
      cholmod_free_factor(&L, &c_);
      throw_if_not_finite(P, "CHOLMOD");
      throw NumericalError(
          detail::concat("CHOLMOD: the matrix is not positive definite "
                         "(nonpositive pivot at elimination step ",
                         failed, " of ", n, ")"));
    }
    bytes = c_.memory_inuse - base;
    return L;
  }

  /// X = A^{-1} B for the factor L (B, X: n x k, column-major, distinct).
  void solve(cholmod_factor* L, const double* B, double* X, Index n, Index k) {
    cholmod_dense b = cholmod_views::dense_view(const_cast<double*>(B), n, k);  // read only
    cholmod_dense x = cholmod_views::dense_view(X, n, k);
    cholmod_dense* x_handle = &x;
    if (!cholmod_solve2(CHOLMOD_A, L, &b, nullptr, &x_handle, nullptr, &Y_, &E_, &c_) ||
        c_.status < CHOLMOD_OK)
      fail("cholmod_solve2");
    if (!L->is_super && Y_ != nullptr) {
      // SuiteSparse 5.x reshapes the simplicial workspace Y to the last block solved and then
      // reallocates it on the next call; restoring the allocated shape lets it be reused.
      const auto rows = static_cast<std::size_t>(std::max<Index>(4, k));
      if (Y_->ncol == static_cast<std::size_t>(n) && Y_->nzmax >= rows * Y_->ncol) {
        Y_->nrow = rows;
        Y_->d = rows;
      }
    }
  }

  void free(cholmod_factor*& L) { cholmod_free_factor(&L, &c_); }

 private:
  [[noreturn]] void fail(const char* call) const {
    if (c_.status == CHOLMOD_OUT_OF_MEMORY) throw std::bad_alloc();
    throw NumericalError(detail::concat("CHOLMOD: ", call, " failed with status ", c_.status));
  }

  cholmod_common c_{};
  cholmod_factor* symbolic_ = nullptr;
  cholmod_dense* Y_ = nullptr;  // cholmod_solve2 workspaces, shared by all factors
  cholmod_dense* E_ = nullptr;
};

CholmodShared::CholmodShared(const SparseMatrix& P) : impl_(std::make_unique<Impl>(P)) {}
CholmodShared::~CholmodShared() = default;

void CholmodFactor::factorize(const SparseMatrix& P) {
  cholmod_factor* L = L_;
  L_ = nullptr;  // on failure the factor is freed by CholmodShared
  L_ = shared_.impl_->factorize(P, L, bytes_);
}

void CholmodFactor::solve(const Matrix& B, Matrix& X) {
  X.resize(B.rows(), B.cols());
  shared_.impl_->solve(L_, B.data(), X.data(), B.rows(), B.cols());
}

void CholmodFactor::release() {
  if (L_ != nullptr) shared_.impl_->free(L_);
}

// ---------------------------------------------------------------------------------------------
// MatrixMarket files

void write_matrix_market_cholmod(std::FILE* f, const SparseMatrix& A, const std::string& file) {
  CholmodCommon c;
  cholmod_sparse view = general_view(A);
  if (cholmod_write_sparse(f, &view, nullptr, nullptr, c.get()) < 0)
    throw IoError(concat("cannot write ", file, ": ", c.status()));
}

void write_matrix_market_cholmod(std::FILE* f, const Matrix& D, const std::string& file) {
  CholmodCommon c;
  cholmod_dense view{};
  view.nrow = static_cast<std::size_t>(D.rows());
  view.ncol = static_cast<std::size_t>(D.cols());
  view.nzmax = static_cast<std::size_t>(D.size());
  view.d = static_cast<std::size_t>(D.rows());
  view.x = D.size() > 0 ? const_cast<double*>(D.data()) : kNoValue;  // only read
  view.xtype = CHOLMOD_REAL;
  view.dtype = CHOLMOD_DOUBLE;
  if (cholmod_write_dense(f, &view, nullptr, c.get()) < 0)
    throw IoError(concat("cannot write ", file, ": ", c.status()));
}

SparseMatrix read_matrix_market_cholmod(
    std::FILE* f, const std::string& file,
    const std::function<SparseMatrix(Index rows, Index cols, Index ld, const double* x)>&
        dense_to_sparse) {
  CholmodCommon c;
  int mtype = 0;
  // prefer = 1: a sparse result is unsymmetric (stype 0), symmetric storage expanded.
  void* m = cholmod_read_matrix(f, 1, &mtype, c.get());
  if (m == nullptr)
    throw IoError(concat("CHOLMOD cannot read the MatrixMarket file ", file, ": ", c.status()));
  if (mtype == CHOLMOD_DENSE) {
    auto* X = static_cast<cholmod_dense*>(m);
    const auto rows = static_cast<Index>(X->nrow), cols = static_cast<Index>(X->ncol);
    const auto ld = static_cast<Index>(X->d);
    const double* x = static_cast<const double*>(X->x);
    const bool real = X->xtype == CHOLMOD_REAL;
    SparseMatrix out;
    if (real) out = dense_to_sparse(rows, cols, ld, x);
    cholmod_free_dense(&X, c.get());
    if (!real) throw InvalidArgument(concat("MatrixMarket file ", file, " holds a complex matrix"));
    return out;
  }
  cholmod_sparse* A = nullptr;
  if (mtype == CHOLMOD_SPARSE) {
    A = static_cast<cholmod_sparse*>(m);
  } else {  // a triplet form (not expected with prefer = 1): convert
    auto* T = static_cast<cholmod_triplet*>(m);
    A = cholmod_triplet_to_sparse(T, 0, c.get());
    cholmod_free_triplet(&T, c.get());
    if (A == nullptr) throw IoError(concat("CHOLMOD cannot convert ", file, ": ", c.status()));
  }
  const auto free_sparse = [&c](cholmod_sparse* S) { cholmod_free_sparse(&S, c.get()); };
  std::unique_ptr<cholmod_sparse, decltype(free_sparse)> owner(A, free_sparse);
  if (A->stype != 0) {  // symmetric storage: both triangles (defensive; prefer = 1 does this)
    cholmod_sparse* full = cholmod_copy(A, 0, 1, c.get());
    if (full == nullptr)
      throw IoError(
          concat("CHOLMOD cannot expand the symmetric matrix of ", file, ": ", c.status()));
    owner.reset(full);
    A = full;
  }
  if (A->xtype != CHOLMOD_REAL || A->itype != CHOLMOD_INT)
    throw InvalidArgument(concat("MatrixMarket file ", file, " does not hold a real matrix"));
  if ((!A->packed || !A->sorted) && (!cholmod_sort(A, c.get()) || !A->packed))  // sort packs
    throw IoError(concat("CHOLMOD cannot sort ", file, ": ", c.status()));
  const int* p = static_cast<const int*>(A->p);
  const Eigen::Map<const SparseMatrix> map(static_cast<Index>(A->nrow), static_cast<Index>(A->ncol),
                                           p[A->ncol], p, static_cast<const int*>(A->i),
                                           static_cast<const double*>(A->x));
  return SparseMatrix(map);
}

}  // namespace mor
