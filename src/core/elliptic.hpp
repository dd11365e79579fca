// SPDX-License-Identifier: GPL-3.0-or-later
// Jacobi elliptic functions sn, cn, dn, for exact reference solutions (the large-amplitude
// pendulum of MBS benchmark A01). The complete elliptic integral K(k) is the standard library's
// std::comp_ellint_1 (C++17 special functions); sn, cn, dn are in neither the standard library
// nor the project's dependencies, hence this small kernel.
#pragma once

namespace mor {

struct JacobiElliptic {
  double sn = 0, cn = 1, dn = 1;
};

/// sn(u | m), cn(u | m), dn(u | m) for the parameter m = k^2 in [0, 1], by the arithmetic-
/// geometric mean and descending Landen transformation (Abramowitz & Stegun 16.4): a handful of
/// AGM steps, accurate to a few eps times (1 + |u|) (the phase 2^N a_N u carries the rounding
/// of u) for m up to about 0.99; closer to 1 the phase loses digits (about 1e-10 absolute at
/// m = 1 - 1e-6, |u| ~ 30). m = 0 gives sin, cos, 1; m = 1 gives tanh, sech, sech.
/// @throws InvalidArgument for m outside [0, 1] or non-finite u or m.
JacobiElliptic jacobi_elliptic(double u, double m);

}  // namespace mor
