// SPDX-License-Identifier: GPL-3.0-or-later
// Finiteness checks of matrices handed to a reduced model or a solver.
#pragma once

#include <cmath>

#include "src/core/errors.hpp"
#include "src/core/types.hpp"

namespace mor {

/// Every entry of X finite, else InvalidArgument "<context><name>(i, j) is <value>" naming the
/// first non-finite entry in column order.
inline void require_finite(const Matrix& X, const char* context, const char* name) {
  if (X.allFinite()) return;
  for (Index j = 0; j < X.cols(); ++j)
    for (Index i = 0; i < X.rows(); ++i)
      require(std::isfinite(X(i, j)), context, name, "(", i, ", ", j, ") is ", X(i, j));
}

}  // namespace mor
