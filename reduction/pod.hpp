// SPDX-License-Identifier: GPL-3.0-or-later
// Proper orthogonal decomposition (POD) of a snapshot matrix: the r-dimensional subspace that
// best approximates the snapshots in the least-squares sense (Sirovich 1987; Holmes, Lumley &
// Berkooz, "Turbulence, Coherent Structures, Dynamical Systems and Symmetry", 1996).
//
// For snapshots X = [x_1 ... x_k] (n x k, several trajectories may be concatenated) and positive
// weights w defining <x, y>_W = x^T W y, W = diag(w) (W = I without weights), the thin SVD
//     W^{1/2} X = U S Y^T,   S = diag(s_1 >= s_2 >= ... >= 0)
// gives the POD basis V = W^{-1/2} U_r, W-orthonormal (V^T W V = I_r), and for the projector
// V V^T W the training error (Schmidt-Eckart-Young-Mirsky)
//     ||X - V V^T W X||_W,F^2 = sum_{i>r} s_i^2,
// the minimum over all r-dimensional subspaces. For the mass-spring chain, weights = m * 1
// makes V M-orthonormal (M = m I).
#pragma once

#include <optional>
#include <string_view>

#include "src/core/types.hpp"

namespace mor {

enum class PodMethod {
  automatic,   ///< see automatic_pod_method
  svd,         ///< LAPACK dgesdd of W^{1/2} X, thin U: every singular value, to eps * s_1
  snapshots,   ///< method of snapshots (Sirovich 1987): eigenpairs of the k x k X^T W X
  randomized,  ///< randomized range finder with power iterations (Halko, Martinsson & Tropp,
               ///< SIAM Rev. 53 (2011) 217-288, Alg. 4.4 and 5.1), then the SVD of Q^T W^{1/2} X
};
PodMethod parse_pod_method(std::string_view name);  ///< "automatic", "svd", "snapshots", ...
std::string_view to_string(PodMethod m);

/// Exactly one of `order` and `energy` must be set.
struct PodOptions {
  PodMethod method = PodMethod::automatic;
  std::optional<Index> order;  ///< r >= 1, at most the numerical rank of X (see pod)
  /// With `order`: an order above the numerical rank is lowered to the rank instead of being
  /// an error (the order is then an upper bound, as for DEIM bases "2 r, or fewer if the
  /// snapshots have fewer modes").
  bool order_up_to_rank = false;
  /// In (0, 1]: the smallest r with sum_{i<=r} s_i^2 >= energy * sum_i s_i^2 (capped at the
  /// numerical rank, so energy = 1 gives the rank).
  std::optional<double> energy;
  // Randomized method only.
  Index oversampling = 10;     ///< p: the sketch has r + p columns when `order` is set
  Index power_iterations = 2;  ///< q: passes of X X^T W, re-orthonormalized by QR each time
  unsigned seed = 1;           ///< of the Gaussian test matrix
  /// l, the sketch width; 0 chooses max(order, basis_columns) + oversampling, or min(n, k) with
  /// `energy` (which then needs the whole spectrum and saves nothing over svd).
  Index randomized_rank = 0;
  /// If larger than the selected order r: V gets this many columns (at most the numerical rank
  /// the method resolves), the modes r + 1, ... after the leading r, which are the basis of
  /// order r. One call then serves several orders (nested bases); r, the energies and the
  /// singular values are those of r as without it.
  Index basis_columns = 0;
};

struct PodResult {
  /// n x r POD basis, V^T W V = I_r (V^T V = I_r without weights); n x c with c > r columns
  /// when PodOptions::basis_columns asks for them, the leading r being the basis of order r
  Matrix V;
  /// Singular values s_i of W^{1/2} X, descending, as far as the method resolves them: svd all
  /// min(n, k); snapshots those above pod_snapshots_rank_tolerance * s_1 (only the leading r when
  /// the iterative eigensolver served an order request); randomized the l values of the sketch, of
  /// which the trailing ones beyond r underestimate s_i.
  Vector singular_values;
  Index r = 0;
  double captured_energy = 0;   ///< sum_{i<=r} s_i^2 / ||W^{1/2} X||_F^2, in [0, 1]
  double discarded_energy = 0;  ///< ||W^{1/2} X||_F^2 - sum_{i<=r} s_i^2 = sum_{i>r} s_i^2
  PodMethod method_used = PodMethod::svd;  ///< never automatic
  double seconds = 0;                      ///< wall time of pod()
};

/// The method `automatic` chooses for n x k snapshots: svd when n * k <= 2e7 (a dense SVD of a
/// few seconds) or k > n / 4 (too wide for the others to save much); otherwise snapshots when
/// k <= 4000 (a k x k eigenproblem); otherwise randomized when an order is requested, and svd
/// when an energy is (the energy criterion needs every singular value).
PodMethod automatic_pod_method(Index n, Index k, bool order_requested);

/// Singular values of W^{1/2} X above pod_rank_tolerance(n, k) * s_1 count towards the
/// numerical rank for the svd and randomized methods: max(n, k) * eps, the rounding level of a
/// backward-stable SVD (the rule of LAPACK's and NumPy's matrix_rank).
double pod_rank_tolerance(Index n, Index k);

/// The method of snapshots squares the singular values: s_i^2 comes from X^T W X and its
/// eigendecomposition, both accurate to about pod_rank_tolerance(n, k) * s_1^2 in the worst
/// case, so it keeps only modes with s_i > pod_snapshots_rank_tolerance(n, k) * s_1 =
/// sqrt(max(n, k) * eps) * s_1, which also defines its numerical rank. (The often-quoted
/// sqrt(eps) is too low: the rounding eigenvalues of an exactly rank-deficient X^T X measure
/// 1.4e-8 to 1.9e-8 * s_1 after the square root for n from 200 to 1e5, k = 200.)
double pod_snapshots_rank_tolerance(Index n, Index k);

/// The POD basis of the snapshots X (n x k) in the inner product of `weights` (size n, every
/// entry positive and finite; nullptr: Euclidean). The snapshots method re-orthonormalizes
/// X Y S^{-1} by a QR factorization, so V^T W V = I holds to rounding for every method. The
/// large products of the snapshots and randomized methods (X^T W X, the sketches and their
/// power iterations) and the QR factorizations of their tall bases run on OpenBLAS (dsyrk,
/// dgemm, dgeqrf/dorgqr: src/linalg/blas.hpp, lapack.hpp), the small ones on Eigen.
/// @throws InvalidArgument for an empty X (n = 0 or k = 0), a non-finite entry (naming the
///         first (row, column)), a zero X, both or neither of order and energy, order < 1,
///         energy outside (0, 1], weights of the wrong size or not positive, negative
///         oversampling, power_iterations, randomized_rank or basis_columns,
///         randomized_rank < max(order, basis_columns), or an
///         order above the numerical rank unless order_up_to_rank (naming the rank and its
///         tolerance);
///         NumericalError if the dense eigensolver of the method of snapshots fails.
PodResult pod(const Matrix& X, const PodOptions& options, const Vector* weights = nullptr);

}  // namespace mor
