// SPDX-License-Identifier: GPL-3.0-or-later
// Named tolerances and one comparison helper for scalars, vectors and matrices: on failure both
// sides, the tolerance and the worst entry are printed.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <Eigen/Core>

#include "src/core/errors.hpp"

namespace mor::testing {

/// Machine epsilon of double.
inline constexpr double kEps = std::numeric_limits<double>::epsilon();

enum class Compare { absolute, relative };

/// ||a - b||_max <= tol (absolute) or ||a - b||_max <= tol * max(||b||_max, tiny) (relative).
template <class A, class B>
::testing::AssertionResult matrices_near(const Eigen::MatrixBase<A>& a,
                                         const Eigen::MatrixBase<B>& b, double tol,
                                         Compare kind = Compare::absolute) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "size mismatch: " << a.rows() << "x" << a.cols()
                                         << " against " << b.rows() << "x" << b.cols();
  if (a.size() == 0) return ::testing::AssertionSuccess();
  Eigen::Index i = 0, j = 0;
  const double err = (a - b).cwiseAbs().maxCoeff(&i, &j);
  const double scale = kind == Compare::relative
                           ? std::max(b.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min())
                           : 1.0;
  if (std::isfinite(err) && err <= tol * scale) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(17);
  os << (kind == Compare::relative ? "relative" : "absolute") << " difference " << err / scale
     << " exceeds tolerance " << tol << "; worst entry (" << i << ", " << j << "): " << a(i, j)
     << " against " << b(i, j);
  if (a.size() <= 12) os << "\nleft:\n" << a << "\nright:\n" << b;
  return ::testing::AssertionFailure() << os.str();
}

inline ::testing::AssertionResult scalars_near(double a, double b, double tol,
                                               Compare kind = Compare::absolute) {
  const double scale =
      kind == Compare::relative ? std::max(std::abs(b), std::numeric_limits<double>::min()) : 1.0;
  const double err = std::abs(a - b);
  if (std::isfinite(err) && err <= tol * scale) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(17);
  os << a << " against " << b << ": " << (kind == Compare::relative ? "relative" : "absolute")
     << " difference " << err / scale << " exceeds tolerance " << tol;
  return ::testing::AssertionFailure() << os.str();
}

/// The message of the InvalidArgument thrown by f, or "no error" (for checks that a message
/// names the offending value).
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace mor::testing
