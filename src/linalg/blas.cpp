// SPDX-License-Identifier: GPL-3.0-or-later
// CBLAS wrappers (src/linalg/blas.hpp).
#include "src/linalg/blas.hpp"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <string_view>

#include "src/core/errors.hpp"

namespace mor::blas {

namespace {

/// A dimension or leading dimension as BLAS's 32-bit integer.
blasint blas_int(Index value, const char* what) {
  require(value >= 0 && value <= std::numeric_limits<blasint>::max(), "BLAS: ", what, " = ", value,
          " does not fit a 32-bit BLAS integer");
  return static_cast<blasint>(value);
}

}  // namespace

Matrix product(const Eigen::Ref<const Matrix>& A, const Eigen::Ref<const Matrix>& B) {
  Matrix C(A.rows(), B.cols());
  gemm(false, false, 1.0, A, B, 0.0, C);
  return C;
}

Matrix transpose_product(const Eigen::Ref<const Matrix>& A, const Eigen::Ref<const Matrix>& B) {
  Matrix C(A.cols(), B.cols());
  gemm(true, false, 1.0, A, B, 0.0, C);
  return C;
}

Matrix gram(const Eigen::Ref<const Matrix>& A, double alpha) {
  const Index n = A.rows(), k = A.cols();
  Matrix C = Matrix::Zero(k, k);
  if (k == 0 || n == 0) return C;
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, blas_int(k, "n"), blas_int(n, "k"), alpha,
              A.data(), std::max<blasint>(1, blas_int(A.outerStride(), "lda")), 0.0, C.data(),
              blas_int(k, "ldc"));
  for (Index j = 1; j < k; ++j)
    for (Index i = 0; i < j; ++i) C(i, j) = C(j, i);
  return C;
}

bool optimized() {
  static const bool fast = std::string_view(openblas_get_corename()) != "Prescott";
  return fast;
}

int threads() {
  return openblas_get_num_threads();
}

void set_threads(int n) {
  require(n >= 1, "BLAS: thread count ", n, " must be >= 1");
  openblas_set_num_threads(n);
}

}  // namespace mor::blas
