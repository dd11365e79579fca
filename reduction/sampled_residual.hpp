// SPDX-License-Identifier: GPL-3.0-or-later
// The residual of a parametric network's equations (src/systems/parametric.hpp) at a lifted
// reduced trajectory, evaluated only at a few rows: the error indicator of the POD-greedy
// (reduction.sampling = "greedy"). With q = V q_r, v = V v_r, a = V a_r (a_r the reduced model's
// acceleration) and the rows S (e.g. the DEIM points),
//   R_S(mu) = (M(mu) V)_S a_r + (D(mu) V)_S v_r + (K(mu) V)_S q_r + theta_f(mu) g_1,S(V q_r)
//             - B_S u,
// with (X_i V)_S formed once per affine term and g_1,S from the network's restricted
// evaluation (the elements in the support of S, from the rows of V they read): O(|S| r) per
// evaluation, independent of N. Galerkin makes V^T R = 0, not R_S = 0: R_S measures what the
// projection and the hyper-reduction leave out at those rows. It is an indicator, not a bound.
#pragma once

#include <vector>

#include "src/core/types.hpp"
#include "src/systems/parametric.hpp"

namespace mor {

class SampledResidual {
 public:
  /// net: the parametric network; V: n x r, the trial basis; rows: 0-based, distinct, in [0, n).
  /// @throws InvalidArgument naming the value for wrong sizes or bad rows.
  SampledResidual(const ParametricNetwork& net, const Matrix& V, const std::vector<Index>& rows);

  /// The sampled operators at mu.
  struct At {
    Matrix MV, DV, KV;  ///< |S| x r
    double force = 1.0;
  };
  At at(const Vector& mu) const;

  /// Adds ||R_S||^2 to r2 and the squared norm of the sum of the terms' magnitudes, ||(M V a)_S||
  /// + ||(D V v)_S|| + ||(K V q)_S|| + ||g_S|| + ||B_S u||, to s2 (the scale of the residual).
  void accumulate(const At& at, const Vector& q_r, const Vector& v_r, const Vector& a_r,
                  const Vector& u, double& r2, double& s2) const;

 private:
  AffineOperator<Matrix> MV_, DV_, KV_;  // rows S of X_i V
  Matrix B_;                             // |S| x m_in
  AffineCoefficient force_;
  bool linear_ = true;
  Matrix E_;        // elements x r: G_local V_dofs
  Matrix C_;        // elements x 4: the unit laws
  SparseMatrix A_;  // |S| x elements: G^T(S, elements)
};

}  // namespace mor
