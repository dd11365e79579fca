// SPDX-License-Identifier: GPL-3.0-or-later
// Central differences, the independent reference of the Jacobian and gradient tests.
#pragma once

#include <algorithm>
#include <cmath>

#include "src/core/types.hpp"

namespace mor::testing {

/// The Jacobian of f at x by central differences: column j is
/// (f(x + h_j e_j) - f(x - h_j e_j)) / (2 h_j), h_j = h max(1, |x_j|). Accurate to O(h_j^2)
/// times f's third derivatives plus rounding of order eps |f| / h_j (about 1e-10 relative for
/// smooth f with h = 1e-6). f(const Vector& x, Vector& out) writes f(x).
template <class F>
Matrix central_difference_jacobian(F&& f, const Vector& x, double h = 1e-6) {
  Matrix J;
  Vector xp, xm, fp, fm;
  for (Index j = 0; j < x.size(); ++j) {
    const double hj = h * std::max(1.0, std::abs(x[j]));
    xp = x;
    xm = x;
    xp[j] += hj;
    xm[j] -= hj;
    f(xp, fp);
    f(xm, fm);
    if (j == 0) J.resize(fp.size(), x.size());
    J.col(j) = (fp - fm) / (2.0 * hj);
  }
  return J;
}

/// The gradient of the scalar function phi(const Vector&) at x, the same way.
template <class Phi>
Vector central_difference_gradient(Phi&& phi, const Vector& x, double h = 1e-6) {
  return central_difference_jacobian(
             [&](const Vector& y, Vector& out) { out = Vector::Constant(1, phi(y)); }, x, h)
      .transpose();
}

}  // namespace mor::testing
