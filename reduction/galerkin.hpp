// SPDX-License-Identifier: GPL-3.0-or-later
// Galerkin projection of a linear system on a basis V: the reduced matrices of POD of an LTI
// model (experiments/runner/projection_run.hpp), W = V. With x = V x_r (first order) or
// q = V q_r (second order) and the residual orthogonal to range(V):
//     E_r = V^T E V,  A_r = V^T A V,  B_r = V^T B,  C_r = C V,  D_r = D
//     M_r = V^T M V,  D_r = V^T D V,  K_r = V^T K V,  B_r = V^T B,  Cp_r = Cp V,  Cv_r = Cv V
// (Antoulas, "Approximation of Large-Scale Dynamical Systems", SIAM 2005, sec. 9.1). A symmetric
// positive definite E (M) stays so; a dissipative pencil (A + A^T <= 0, E = E^T > 0) keeps its
// poles in the closed left half plane, any other may not.
#pragma once

#include "reduction/lti_operator.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/lti.hpp"

namespace mor {

/// A dense first-order reduced system E_r x' = A_r x + B_r u, y = C_r x + D_r u.
struct DenseFirstOrderSystem {
  Matrix E, A, B, C, D;
};

/// The Galerkin projection of sys on V (n x r, sys.n() rows); D_r is sys's feed-through (zeros
/// p x m if it has none). @throws InvalidArgument if V has another number of rows or no column.
DenseFirstOrderSystem galerkin_first_order(const LtiOperator& sys, const Matrix& V);

/// The Galerkin projection of the second-order sys on V (n_q x r); D_ff zeros p x m.
/// @throws InvalidArgument if V has another number of rows or no column.
DenseSecondOrderSystem galerkin_second_order(const SecondOrderSystem& sys, const Matrix& V);
/// The Petrov-Galerkin projection of the second-order sys with trial basis V and test basis W
/// (both n_q x r; W = V for Galerkin): M_r = W^T M V, D_r = W^T D V, K_r = W^T K V,
/// B_r = W^T B, Cp_r = Cp V, Cv_r = Cv V, D_ff zeros p x m. The one place the reduced models
/// (this file's LTI ones, and the projected nonlinear model of reduction/projected_model.hpp)
/// project their linear part. Sizes are the caller's to check (as the models do, naming them).
DenseSecondOrderSystem project_second_order(const SecondOrderSystem& sys, const Matrix& V,
                                            const Matrix& W);

}  // namespace mor
