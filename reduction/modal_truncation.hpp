// SPDX-License-Identifier: GPL-3.0-or-later
// Modal truncation of a second-order system  M q'' + D q' + K q = B u,  y = Cp q + Cv q':
// the undamped modes  K phi_i = omega_i^2 M phi_i  (M symmetric positive definite, K symmetric;
// phi_i^T M phi_j = delta_ij) and the Galerkin projection onto r of them,
//   M_r = I,  K_r = diag(omega_i^2) (to rounding: formed as V^T M V, V^T K V),  D_r = Phi_r^T D
//   Phi_r,  B_r = Phi_r^T B, Cp_r = Cp Phi_r,  Cv_r = Cv Phi_r.
// It serves where balanced truncation is degenerate: undamped or rigid-body systems (poles on
// the imaginary axis, no Gramians), such as the linearised multibody benchmarks. Dense: meant
// for small and moderate n (an n x n generalized symmetric eigenproblem).
//
// Which modes: rigid-body modes (omega_i = 0, a double pole at 0) are always kept first, then the
// elastic modes in decreasing  mu_i = ||[Cp phi_i, omega_i Cv phi_i]|| ||B^T phi_i|| / omega_i^2
// (the static gain of the mode: its peak under damping ratio zeta is mu_i / (2 zeta)), or simply
// the lowest frequencies first.
#pragma once

#include <string_view>

#include "reduction/lti_operator.hpp"
#include "src/core/types.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/lti.hpp"

namespace mor {

enum class ModalSelection { dominance, lowest_frequency };
/// "dominance", "lowest_frequency"; @throws InvalidArgument naming the value.
ModalSelection parse_modal_selection(std::string_view name);
std::string_view to_string(ModalSelection s);

struct ModalOptions {
  Index order = 0;  ///< r, 1 <= r <= n
  ModalSelection selection = ModalSelection::dominance;
  /// omega_i below this fraction of the largest omega (or of 1 rad/s if all are tiny) counts as
  /// a rigid-body mode.
  double rigid_tolerance = 1e-8;
};

struct ModalResult {
  DenseSecondOrderSystem reduced;  ///< M_r = I, K_r diagonal (to rounding)
  Matrix V;                        ///< n x r, the kept M-orthonormal modes
  Vector omega;                    ///< all n undamped angular frequencies, ascending, rad/s
  Vector dominance;                ///< mu_i of every mode in the order of omega (inf: rigid)
  std::vector<Index> kept;         ///< indices into omega of the kept modes, in V's order
  Index r = 0;
  double seconds = 0.0;
};

/// @throws InvalidArgument for r outside 1..n, a non-symmetric M or K, or an M that is not
///         positive definite (naming its smallest eigenvalue); NumericalError if K has a
///         negative eigenvalue beyond rounding (an unstable equilibrium), naming it.
ModalResult modal_truncation(const SecondOrderSystem& sys, const ModalOptions& options);

/// Modal truncation of a first-order system E x' = A x + B u, y = C x + D u with a symmetric
/// pencil (E symmetric positive definite, A symmetric: heat, diffusion and the steel rail's
/// models): the modes A phi_i = lambda_i E phi_i (phi_i^T E phi_j = delta_ij, lambda_i <= 0) and
/// the Galerkin projection onto r of them, E_r = I, A_r = diag(lambda_i) (to rounding: formed as
/// V^T E V, V^T A V), B_r = V^T B, C_r = C V, D_r = D. Modes with lambda_i = 0 (integrators)
/// are kept first, then by decreasing mu_i = ||C phi_i|| ||B^T phi_i|| / |lambda_i| (the mode's
/// static gain, its H-infinity norm), or the slowest first (selection lowest_frequency). Dense:
/// E and A are formed from the operator (n x n each).
struct ModalFirstOrderResult {
  Matrix E, A, B, C, D_ff;  ///< the reduced system, r x r, r x m, p x r, p x m
  Matrix V;                 ///< n x r, the kept E-orthonormal modes
  Vector lambda;            ///< all n eigenvalues, in descending order (slowest first)
  Vector dominance;         ///< mu_i of every mode in the order of lambda (inf: lambda_i = 0)
  std::vector<Index> kept;  ///< indices into lambda of the kept modes, in V's order
  Index r = 0;
  double seconds = 0.0;
};

/// Largest n modal truncation of a first-order system forms densely.
inline constexpr Index kModalDenseLimit = 8000;

/// @throws InvalidArgument for r outside 1..n, n above kModalDenseLimit, a pencil that is not
///         symmetric (naming which matrix, with the hint to use bt or irka), or an E that is not
///         positive definite; NumericalError if A has a positive eigenvalue beyond rounding (an
///         unstable model), naming it.
ModalFirstOrderResult modal_truncation(const LtiOperator& sys, const ModalOptions& options);

}  // namespace mor
