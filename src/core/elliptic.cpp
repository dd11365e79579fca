// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/core/elliptic.hpp"

#include <array>
#include <cmath>
#include <limits>

#include "src/core/errors.hpp"

namespace mor {

JacobiElliptic jacobi_elliptic(double u, double m) {
  require(std::isfinite(u), "jacobi_elliptic: the argument u = ", u, " must be finite");
  require(std::isfinite(m) && m >= 0.0 && m <= 1.0, "jacobi_elliptic: the parameter m = ", m,
          " must lie in [0, 1]");
  if (m == 0.0) return {std::sin(u), std::cos(u), 1.0};
  if (m == 1.0) {
    const double sech = 1.0 / std::cosh(u);
    return {std::tanh(u), sech, sech};
  }
  // AGM: a_0 = 1, b_0 = sqrt(1 - m), c_0 = sqrt(m); a_{n+1} = (a_n + b_n)/2,
  // b_{n+1} = sqrt(a_n b_n), c_{n+1} = (a_n - b_n)/2, until c_N is negligible (quadratic
  // convergence: at most about 6 steps for m < 1 - 1e-16).
  constexpr int kMaxSteps = 40;
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  std::array<double, kMaxSteps + 1> a{}, c{};
  a[0] = 1.0;
  c[0] = std::sqrt(m);
  double b = std::sqrt(1.0 - m);
  int n = 0;
  while (std::abs(c[n]) > kEps * a[n] && n < kMaxSteps) {
    a[n + 1] = 0.5 * (a[n] + b);
    c[n + 1] = 0.5 * (a[n] - b);
    b = std::sqrt(a[n] * b);
    ++n;
  }
  // Descending: phi_N = 2^N a_N u, phi_{n-1} = (phi_n + asin(c_n / a_n sin phi_n)) / 2.
  double phi = std::ldexp(a[n] * u, n);
  for (int j = n; j > 0; --j) phi = 0.5 * (phi + std::asin(c[j] / a[j] * std::sin(phi)));
  const double sn = std::sin(phi), cn = std::cos(phi);
  // dn^2 = 1 - m sn^2 = cn^2 + (1 - m) sn^2: two non-negative terms, no cancellation (A&S's
  // cos phi_0 / cos(phi_1 - phi_0) is 0 / 0 at cn = 0).
  return {sn, cn, std::sqrt(cn * cn + (1.0 - m) * sn * sn)};
}

}  // namespace mor
