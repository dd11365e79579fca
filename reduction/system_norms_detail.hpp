// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to the system norms (system_norms.cpp, h2_norm.cpp, hinf_norm.cpp), not a public API:
// the small dense helpers they share.
#pragma once

#include <limits>
#include <string>

#include "reduction/lti_operator.hpp"
#include "src/core/types.hpp"

namespace mor::norms_detail {

constexpr double kEps = std::numeric_limits<double>::epsilon();

/// Largest singular value of a small complex matrix (p x m transfer-function values).
double largest_singular_value(const ComplexMatrix& G);
double largest_singular_value(const Matrix& D);

/// "a + bi" with enough digits to recognise the value.
std::string complex_text(Complex z);

/// G_r(i w) of a small dense model by a dense LU.
ComplexMatrix dense_response(const DenseLtiOperator& sys, double w);

}  // namespace mor::norms_detail
