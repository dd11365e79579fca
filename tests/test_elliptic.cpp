// SPDX-License-Identifier: GPL-3.0-or-later
// Jacobi elliptic functions (src/core/elliptic.hpp) against the properties that define them:
// the two Pythagorean identities, sn' = cn dn (which with sn(0) = 0 fixes sn), the values at the
// quarter period K(k) of the standard library's std::comp_ellint_1, the period 4K, and the
// limits m = 0 (sin) and m = 1 (tanh).
#include "src/core/elliptic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "src/core/errors.hpp"

namespace mor {
namespace {

/// The range of the accuracy claim (m <= 0.99); A01's pendulum has m = 1/2.
const double kParameters[] = {1e-12, 0.1, 0.5, 0.9, 0.99};
/// A few eps per unit of |u|: the phase 2^N a_N u carries the rounding of u (measured 1.9e-14
/// at |u| ~ 20).
constexpr double kIdentityTol = 4e-15;
/// Central difference with h = 1e-4: truncation h^2 / 6 |sn'''| <= 2e-9, rounding eps / h.
constexpr double kDerivativeTol = 1e-8;

TEST(Elliptic, IdentitiesHoldEverywhere) {
  for (double m : kParameters)
    for (double u = -20.0; u <= 20.0; u += 0.37) {
      const auto e = jacobi_elliptic(u, m);
      const double tol = kIdentityTol * (1.0 + std::abs(u));
      EXPECT_NEAR(e.sn * e.sn + e.cn * e.cn, 1.0, tol) << "u = " << u << ", m = " << m;
      EXPECT_NEAR(e.dn * e.dn + m * e.sn * e.sn, 1.0, tol) << "u = " << u << ", m = " << m;
    }
}

TEST(Elliptic, DerivativeOfSnIsCnDn) {
  constexpr double h = 1e-4;
  for (double m : kParameters)
    for (double u = -5.0; u <= 5.0; u += 0.29) {
      const double slope = (jacobi_elliptic(u + h, m).sn - jacobi_elliptic(u - h, m).sn) / (2 * h);
      const auto e = jacobi_elliptic(u, m);
      EXPECT_NEAR(slope, e.cn * e.dn, kDerivativeTol) << "u = " << u << ", m = " << m;
    }
}

TEST(Elliptic, QuarterPeriodAndPeriodFromTheCompleteIntegral) {
  for (double m : kParameters) {
    const double K = std::comp_ellint_1(std::sqrt(m));
    const auto e = jacobi_elliptic(K, m);
    EXPECT_NEAR(e.sn, 1.0, 1e-15 * K) << "m = " << m;
    EXPECT_NEAR(e.cn, 0.0, 1e-14 * K) << "m = " << m;
    EXPECT_NEAR(e.dn, std::sqrt(1.0 - m), 1e-14 * K) << "m = " << m;
    for (double u : {0.3, 1.7, -2.2}) {
      const auto a = jacobi_elliptic(u, m), b = jacobi_elliptic(u + 4.0 * K, m);
      EXPECT_NEAR(a.sn, b.sn, 1e-13 * (1.0 + 4.0 * K)) << "u = " << u << ", m = " << m;
      EXPECT_NEAR(a.cn, b.cn, 1e-13 * (1.0 + 4.0 * K)) << "u = " << u << ", m = " << m;
    }
  }
}

TEST(Elliptic, LimitsAreSineAndTanh) {
  for (double u : {-3.0, -0.5, 0.0, 0.8, 2.5}) {
    const auto zero = jacobi_elliptic(u, 0.0), one = jacobi_elliptic(u, 1.0);
    EXPECT_DOUBLE_EQ(zero.sn, std::sin(u));
    EXPECT_DOUBLE_EQ(one.sn, std::tanh(u));
    // Continuity into the limits: O(m) and O(1 - m) away.
    EXPECT_NEAR(jacobi_elliptic(u, 1e-12).sn, std::sin(u), 1e-11);
    EXPECT_NEAR(jacobi_elliptic(u, 1.0 - 1e-12).sn, std::tanh(u), 1e-10);
  }
}

TEST(Elliptic, BadInputIsNamed) {
  for (double m : {-0.1, 1.5, std::nan("")}) {
    try {
      jacobi_elliptic(0.5, m);
      ADD_FAILURE() << "m = " << m << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("parameter m"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(jacobi_elliptic(INFINITY, 0.5), InvalidArgument);
}

}  // namespace
}  // namespace mor
