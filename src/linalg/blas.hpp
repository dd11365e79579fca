// SPDX-License-Identifier: GPL-3.0-or-later
// Explicit CBLAS calls (OpenBLAS through Debian's libblas.so.3 / libopenblas.so) for the large
// products of named kernels: POD's randomized SVD and method of snapshots, the dense Gramian
// products. Eigen's own products stay everywhere else (a global EIGEN_USE_BLAS would also send
// the reduced models' tiny products through BLAS's call overhead). Each function takes Eigen
// matrices or blocks with unit inner stride (column-major), checks sizes and calls BLAS once.
//
// OpenBLAS runs a large call on its own threads, whose floating-point mode is the default one:
// subnormal numbers are not flushed there even when the caller flushes them (see
// detail::tall_product in reduction/low_rank_adi.hpp for the products where that matters).
#pragma once

#include "src/core/types.hpp"
#include "src/linalg/lapack.hpp"

namespace mor::blas {

/// C = alpha op(A) op(B) + beta C by dgemm: the project's one wrapper, lapack::gemm.
using lapack::gemm;

/// A B and A^T B as new matrices.
Matrix product(const Eigen::Ref<const Matrix>& A, const Eigen::Ref<const Matrix>& B);
Matrix transpose_product(const Eigen::Ref<const Matrix>& A, const Eigen::Ref<const Matrix>& B);

/// alpha A^T A (k x k for A n x k) by cblas_dsyrk (half of gemm's flops), both triangles filled.
Matrix gram(const Eigen::Ref<const Matrix>& A, double alpha = 1.0);

/// False when OpenBLAS runs its generic SSE3 kernels ("Prescott", openblas_get_corename): its
/// DYNAMIC_ARCH build (Debian's 0.3.21) falls back to them on CPUs it does not recognize, such as
/// the AVX-512 Xeons of this project's machines, where dgemm then ran at 6-9 GFlop/s against
/// Eigen's 7-25 (with OPENBLAS_CORETYPE=SkylakeX: 16-39). Callers keep Eigen's products then.
bool optimized();

/// The number of threads OpenBLAS uses for a large call (openblas_get_num_threads), and a way to
/// set it (openblas_set_num_threads; process-wide), for benchmarks that compare thread counts.
int threads();
void set_threads(int n);

}  // namespace mor::blas
