// SPDX-License-Identifier: GPL-3.0-or-later
// No-copy CHOLMOD views of Eigen storage, for cholmod.cpp alone (the module that keeps cholmod.h
// from the rest of the project): its SparseSolver backend and CholmodShared's factors.
#pragma once

#include <cholmod.h>

#include "src/core/types.hpp"

namespace mor::cholmod_views {

/// A no-copy view of A for CHOLMOD; stype = -1 makes CHOLMOD read only the lower triangle.
/// Eigen's compressed storage is exactly CHOLMOD's packed CSC with sorted row indices.
inline cholmod_sparse lower_view(const SparseMatrix& A) {
  cholmod_sparse view{};
  view.nrow = static_cast<std::size_t>(A.rows());
  view.ncol = static_cast<std::size_t>(A.cols());
  view.nzmax = static_cast<std::size_t>(A.nonZeros());
  // CHOLMOD takes non-const pointers but does not write through them in analyze/factorize.
  view.p = const_cast<int*>(A.outerIndexPtr());
  view.i = const_cast<int*>(A.innerIndexPtr());
  view.nz = nullptr;
  view.x = const_cast<double*>(A.valuePtr());
  view.z = nullptr;
  view.stype = -1;
  view.itype = CHOLMOD_INT;
  view.xtype = CHOLMOD_REAL;
  view.dtype = CHOLMOD_DOUBLE;
  view.sorted = 1;
  view.packed = 1;
  return view;
}

/// An n x k column-major view with leading dimension n, the exact shape cholmod_solve2
/// computes for X; with that shape it reuses a supplied X instead of freeing and reallocating
/// it, so the solution is written straight into the caller's storage.
inline cholmod_dense dense_view(double* data, Index n, Index k) {
  cholmod_dense view{};
  view.nrow = static_cast<std::size_t>(n);
  view.ncol = static_cast<std::size_t>(k);
  view.nzmax = static_cast<std::size_t>(n * k);
  view.d = static_cast<std::size_t>(n);
  view.x = data;
  view.z = nullptr;
  view.xtype = CHOLMOD_REAL;
  view.dtype = CHOLMOD_DOUBLE;
  return view;
}

}  // namespace mor::cholmod_views
