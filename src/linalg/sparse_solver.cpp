// SPDX-License-Identifier: GPL-3.0-or-later
// The five sparse direct solver backends declared in sparse_solver.hpp (CHOLMOD's in cholmod.cpp).
// SuiteSparse types stay in these files: callers see only SparseSolver.
//
// One rule for the hot path (a solve per Newton iteration, N up to 10^6): the SuiteSparse
// backends size their solve workspaces once (in analyze_pattern or the first solve) and reuse
// them, so a solve does not allocate; the Eigen backends allocate inside Eigen.
#include "src/linalg/sparse_solver.hpp"

#include <klu.h>
#include <umfpack.h>

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>

#include <algorithm>
#include <array>
#include <new>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/linalg/checked_sparse_solver.hpp"
#include "src/linalg/cholmod.hpp"

namespace mor {

namespace {

constexpr std::array<SparseBackend, 5> kAllBackends = {
    SparseBackend::cholmod, SparseBackend::umfpack, SparseBackend::klu, SparseBackend::eigen_ldlt,
    SparseBackend::eigen_lu};

using detail::CheckedSparseSolver;

// ---------------------------------------------------------------------------------------------
// UMFPACK

const char* umfpack_status_text(int status) {
  switch (status) {
    case UMFPACK_OK:
      return "ok";
    case UMFPACK_WARNING_singular_matrix:
      return "singular matrix";
    case UMFPACK_WARNING_determinant_underflow:
      return "determinant underflow";
    case UMFPACK_WARNING_determinant_overflow:
      return "determinant overflow";
    case UMFPACK_ERROR_out_of_memory:
      return "out of memory";
    case UMFPACK_ERROR_invalid_Numeric_object:
      return "invalid Numeric object";
    case UMFPACK_ERROR_invalid_Symbolic_object:
      return "invalid Symbolic object";
    case UMFPACK_ERROR_argument_missing:
      return "argument missing";
    case UMFPACK_ERROR_n_nonpositive:
      return "n nonpositive";
    case UMFPACK_ERROR_invalid_matrix:
      return "invalid matrix (unsorted or duplicate entries)";
    case UMFPACK_ERROR_different_pattern:
      return "pattern differs from the analysed one";
    case UMFPACK_ERROR_invalid_system:
      return "invalid system";
    case UMFPACK_ERROR_invalid_permutation:
      return "invalid permutation";
    case UMFPACK_ERROR_internal_error:
      return "internal error";
    case UMFPACK_ERROR_file_IO:
      return "file I/O error";
    case UMFPACK_ERROR_ordering_failed:
      return "ordering failed";
    default:
      return "unknown status";
  }
}

class UmfpackSolver final : public CheckedSparseSolver {
 public:
  UmfpackSolver() {
    umfpack_di_defaults(control_.data());
    // No iterative refinement: it would need A alive at solve time (the interface does not keep
    // it), it costs a matrix-vector product per solve, and the Newton iteration around the
    // solve already corrects the residual.
    control_[UMFPACK_IRSTEP] = 0;
  }
  ~UmfpackSolver() override { release(); }

  SparseBackend backend() const override { return SparseBackend::umfpack; }

 private:
  void release() {
    if (numeric_ != nullptr) umfpack_di_free_numeric(&numeric_);
    if (symbolic_ != nullptr) umfpack_di_free_symbolic(&symbolic_);
  }

  [[noreturn]] void fail(const char* call, int status) const {
    if (status == UMFPACK_ERROR_out_of_memory) throw std::bad_alloc();
    throw NumericalError(detail::concat(name(), ": ", call, " failed with status ", status, " (",
                                        umfpack_status_text(status), ")"));
  }

  void do_analyze(const SparseMatrix& A) override {
    release();
    const int n = static_cast<int>(A.rows());
    // The values steer UMFPACK's choice between its symmetric and unsymmetric strategies.
    const int status = umfpack_di_symbolic(n, n, A.outerIndexPtr(), A.innerIndexPtr(), A.valuePtr(),
                                           &symbolic_, control_.data(), info_.data());
    if (status != UMFPACK_OK) {
      if (symbolic_ != nullptr) umfpack_di_free_symbolic(&symbolic_);
      fail("umfpack_di_symbolic", status);
    }
    wi_.assign(static_cast<std::size_t>(n), 0);
    w_.assign(static_cast<std::size_t>(n), 0.0);  // n suffices without iterative refinement
  }

  void do_factorize(const SparseMatrix& A) override {
    // Free first: the old factor is useless now and would double the peak memory.
    if (numeric_ != nullptr) umfpack_di_free_numeric(&numeric_);
    const int status = umfpack_di_numeric(A.outerIndexPtr(), A.innerIndexPtr(), A.valuePtr(),
                                          symbolic_, &numeric_, control_.data(), info_.data());
    if (status != UMFPACK_OK) {
      // A singular matrix still yields a Numeric object (with a zero pivot); never keep it.
      if (numeric_ != nullptr) umfpack_di_free_numeric(&numeric_);
      fail("umfpack_di_numeric", status);
    }
  }

  void do_solve(const double* B, double* X, Index k) override {
    const Index n = rows();
    for (Index j = 0; j < k; ++j) {
      // Ap/Ai/Ax may be null without iterative refinement; wsolve never allocates.
      const int status =
          umfpack_di_wsolve(UMFPACK_A, nullptr, nullptr, nullptr, X + j * n, B + j * n, numeric_,
                            control_.data(), info_.data(), wi_.data(), w_.data());
      if (status != UMFPACK_OK) fail("umfpack_di_wsolve", status);
    }
  }

  std::array<double, UMFPACK_CONTROL> control_{};
  std::array<double, UMFPACK_INFO> info_{};
  void* symbolic_ = nullptr;
  void* numeric_ = nullptr;
  std::vector<int> wi_;  // umfpack_di_wsolve workspaces, sized once per pattern
  std::vector<double> w_;
};

// ---------------------------------------------------------------------------------------------
// KLU

const char* klu_status_text(int status) {
  switch (status) {
    case KLU_OK:
      return "ok";
    case KLU_SINGULAR:
      return "singular matrix";
    case KLU_OUT_OF_MEMORY:
      return "out of memory";
    case KLU_INVALID:
      return "invalid input";
    case KLU_TOO_LARGE:
      return "integer overflow";
    default:
      return "unknown status";
  }
}

class KluSolver final : public CheckedSparseSolver {
 public:
  /// klu_refactor reuses the pivot order of the last klu_factor without looking at the new
  /// values. When the values have moved so far that those pivots became tiny (reciprocal pivot
  /// ratio min|U_kk| / max|U_kk| below this), the refactorization is unstable and a full
  /// klu_factor with fresh partial pivoting is done instead.
  static constexpr double kRefactorRcondMin = 1e-14;

  KluSolver() { klu_defaults(&common_); }
  ~KluSolver() override { release(); }

  SparseBackend backend() const override { return SparseBackend::klu; }

 private:
  void release() {
    if (numeric_ != nullptr) klu_free_numeric(&numeric_, &common_);
    if (symbolic_ != nullptr) klu_free_symbolic(&symbolic_, &common_);
  }

  [[noreturn]] void fail(const char* call) const {
    if (common_.status == KLU_OUT_OF_MEMORY) throw std::bad_alloc();
    throw NumericalError(detail::concat(name(), ": ", call, " failed with status ", common_.status,
                                        " (", klu_status_text(common_.status), ")"));
  }

  void do_analyze(const SparseMatrix& A) override {
    release();
    // KLU takes non-const pointers but does not write through them.
    symbolic_ = klu_analyze(static_cast<int>(A.rows()), const_cast<int*>(A.outerIndexPtr()),
                            const_cast<int*>(A.innerIndexPtr()), &common_);
    if (symbolic_ == nullptr) fail("klu_analyze");
  }

  void do_factorize(const SparseMatrix& A) override {
    int* Ap = const_cast<int*>(A.outerIndexPtr());
    int* Ai = const_cast<int*>(A.innerIndexPtr());
    double* Ax = const_cast<double*>(A.valuePtr());
    if (numeric_ != nullptr) {
      // Same pattern as the last klu_factor: a numeric-only refactorization is much cheaper.
      if (klu_refactor(Ap, Ai, Ax, symbolic_, numeric_, &common_) &&
          klu_rcond(symbolic_, numeric_, &common_) && common_.rcond >= kRefactorRcondMin) {
        return;
      }
      if (common_.status < KLU_OK) fail("klu_refactor");
      // A zero (KLU_SINGULAR) or tiny pivot: redo the factorization with fresh pivoting.
      klu_free_numeric(&numeric_, &common_);
    }
    numeric_ = klu_factor(Ap, Ai, Ax, symbolic_, &common_);
    if (numeric_ == nullptr) {
      if (common_.status == KLU_SINGULAR) {
        throw NumericalError(detail::concat(name(), ": matrix is singular; zero pivot in column ",
                                            common_.singular_col, " of A (elimination step ",
                                            common_.numerical_rank, " of ", A.rows(), ")"));
      }
      fail("klu_factor");
    }
  }

  void do_solve(const double* B, double* X, Index k) override {
    std::copy(B, B + rows() * k, X);
    do_solve_in_place(X, k);
  }

  void do_solve_in_place(double* BX, Index k) override {
    const int n = static_cast<int>(rows());
    if (!klu_solve(symbolic_, numeric_, n, static_cast<int>(k), BX, &common_)) fail("klu_solve");
  }

  klu_common common_{};
  klu_symbolic* symbolic_ = nullptr;
  klu_numeric* numeric_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Eigen

class EigenLdltSolver final : public CheckedSparseSolver {
 public:
  SparseBackend backend() const override { return SparseBackend::eigen_ldlt; }

 private:
  void do_analyze(const SparseMatrix& A) override { ldlt_.analyzePattern(A); }

  void do_factorize(const SparseMatrix& A) override {
    ldlt_.factorize(A);
    // SimplicialLDLT fails only at an exact zero pivot and accepts indefinite matrices; this
    // backend promises an SPD check like CHOLMOD, so negative pivots fail as well. After a
    // failure D holds valid pivots up to the failing one, which is zero, so the scan stops there.
    const Vector& d = ldlt_.vectorD();
    Index k = 0;
    while (k < d.size() && d[k] > 0.0) ++k;
    if (k < d.size()) {
      // Pivot k belongs to the permuted matrix P A P^T; Pinv maps it back to a column of A.
      const auto& pinv = ldlt_.permutationPinv();
      const Index column = pinv.size() > 0 ? static_cast<Index>(pinv.indices()[k]) : k;
      throw NumericalError(detail::concat(name(), ": matrix is not positive definite; pivot ", d[k],
                                          " at column ", column, " of A (elimination step ", k,
                                          " of ", d.size(), ")"));
    }
    if (ldlt_.info() != Eigen::Success) {
      throw NumericalError(detail::concat(name(), ": factorization failed (Eigen info ",
                                          static_cast<int>(ldlt_.info()), ")"));
    }
  }

  void do_solve(const double* B, double* X, Index k) override {
    const Index n = rows();
    Eigen::Map<Matrix>(X, n, k) = ldlt_.solve(Eigen::Map<const Matrix>(B, n, k));
  }

  // Lower: the interface promises SPD backends read only the lower triangle.
  Eigen::SimplicialLDLT<SparseMatrix, Eigen::Lower, Eigen::AMDOrdering<int>> ldlt_;
};

class EigenLuSolver final : public CheckedSparseSolver {
 public:
  SparseBackend backend() const override { return SparseBackend::eigen_lu; }

 private:
  void do_analyze(const SparseMatrix& A) override { lu_.analyzePattern(A); }

  void do_factorize(const SparseMatrix& A) override {
    lu_.factorize(A);
    if (lu_.info() != Eigen::Success) {
      const std::string what = lu_.lastErrorMessage();
      // Eigen's "ZERO COLUMN AT j" counts from 1 in the column-permuted matrix; say so, or the
      // number misleads whoever looks for column j of A.
      const bool names_column = what.find("ZERO COLUMN") != std::string::npos;
      throw NumericalError(detail::concat(
          name(), ": matrix is singular: ", what,
          names_column ? " (Eigen's column number counts from 1 after column permutation)" : ""));
    }
  }

  void do_solve(const double* B, double* X, Index k) override {
    const Index n = rows();
    Eigen::Map<Matrix>(X, n, k) = lu_.solve(Eigen::Map<const Matrix>(B, n, k));
  }

  Eigen::SparseLU<SparseMatrix, Eigen::COLAMDOrdering<int>> lu_;
};

}  // namespace

SparseBackend parse_sparse_backend(std::string_view name) {
  for (const SparseBackend backend : kAllBackends) {
    if (to_string(backend) == name) return backend;
  }
  std::string accepted;
  for (const SparseBackend backend : kAllBackends) {
    if (!accepted.empty()) accepted += ", ";
    accepted += to_string(backend);
  }
  throw InvalidArgument(
      detail::concat("unknown sparse backend \"", name, "\"; accepted: ", accepted));
}

std::string_view to_string(SparseBackend backend) {
  switch (backend) {
    case SparseBackend::cholmod:
      return "cholmod";
    case SparseBackend::umfpack:
      return "umfpack";
    case SparseBackend::klu:
      return "klu";
    case SparseBackend::eigen_ldlt:
      return "eigen_ldlt";
    case SparseBackend::eigen_lu:
      return "eigen_lu";
  }
  throw InvalidArgument(detail::concat("unknown SparseBackend value ", static_cast<int>(backend)));
}

bool requires_spd(SparseBackend backend) {
  return backend == SparseBackend::cholmod || backend == SparseBackend::eigen_ldlt;
}

std::unique_ptr<SparseSolver> make_sparse_solver(SparseBackend backend) {
  switch (backend) {
    case SparseBackend::cholmod:
      return make_cholmod_solver();
    case SparseBackend::umfpack:
      return std::make_unique<UmfpackSolver>();
    case SparseBackend::klu:
      return std::make_unique<KluSolver>();
    case SparseBackend::eigen_ldlt:
      return std::make_unique<EigenLdltSolver>();
    case SparseBackend::eigen_lu:
      return std::make_unique<EigenLuSolver>();
  }
  throw InvalidArgument(detail::concat("make_sparse_solver: unknown SparseBackend value ",
                                       static_cast<int>(backend)));
}

}  // namespace mor
