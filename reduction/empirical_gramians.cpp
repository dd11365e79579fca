// SPDX-License-Identifier: GPL-3.0-or-later
// Empirical Gramians of a nonlinear network and position balancing (see the header).
#include "reduction/empirical_gramians.hpp"

#include "reduction/empirical_gramians_impl.hpp"

namespace mor {

Matrix position_directions(const Matrix& Phi) {
  Matrix Dir = Matrix::Zero(2 * Phi.rows(), Phi.cols());
  Dir.topRows(Phi.rows()) = Phi;
  return Dir;
}

Matrix empirical_controllability_factor(const NonlinearNetwork& network,
                                        const EmpiricalGramianOptions& options) {
  return empirical_detail::controllability_factor_of(network, options);
}
Matrix empirical_observability(const NonlinearNetwork& network, const Matrix& directions,
                               const EmpiricalGramianOptions& options) {
  return empirical_detail::observability_of(network, directions, options);
}
EmpiricalBalancingResult empirical_balancing(const NonlinearNetwork& network,
                                             const EmpiricalBalancingOptions& options) {
  return empirical_balancing_of(network, options);
}

}  // namespace mor
