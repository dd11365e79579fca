// SPDX-License-Identifier: GPL-3.0-or-later
// Energy-conserving sampling and weighting (ECSW; Farhat, Avery, Chapman & Cortial, IJNME 98,
// 2014; Farhat, Chapman & Avery, IJNME 102, 2015) of a nonlinear network's reduced force, and
// the non-negative least squares it rests on (Lawson & Hanson, Solving Least Squares Problems,
// 1974, ch. 23).
//
// The Galerkin reduced force of a network is a sum over its m_e elements,
//     g_r(q_r) = sum_e (G V)_e^T phi_e((G V)_e q_r),
// and ECSW keeps that sum over a few elements S with weights w_e > 0:
//     g_r(q_r) ~ sum_{e in S} w_e (G V)_e^T phi_e((G V)_e q_r) = E^T diag(w) phi(E q_r),
// E = (G V)_S. It is the gradient of sum_{e in S} w_e Phi_e(E_e q_r) (Phi_e' = phi_e): the
// reduced force stays conservative, its Jacobian symmetric, and an energy-conserving integrator
// (implicit midpoint) keeps the discrete energy balance of the reduced model. The weights are
// trained on snapshots q_r^j: with c_{e,j} = (G W)_e^T phi_e((G V)_e q_r^j) (r entries) and C
// (r ns x m_e) the column e of which stacks c_{e,j} over j, b = C 1 (the exact reduced force at
// each snapshot), they solve the sparse NNLS
//     min ||w||_0  subject to  ||C w - b||_2 <= tau ||b||_2,  w >= 0,
// approximately, by the Lawson-Hanson active-set iteration stopped as soon as the residual
// meets tau (each iteration adds the one element that decreases the residual fastest).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "src/core/types.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// How a non-negative least-squares iteration ended.
enum class NnlsStatus {
  tolerance_met,    ///< ||C w - b|| <= tau ||b||
  optimal,          ///< the KKT conditions hold to the optimality tolerance before tau was met
  iteration_limit,  ///< stopped after max_iterations outer iterations, neither of the above
};
std::string_view to_string(NnlsStatus s);

struct NnlsOptions {
  /// tau: stop as soon as ||C w - b||_2 <= tau ||b||_2; 0 runs to the NNLS optimum. >= 0.
  double tolerance = 0.0;
  /// Optimality: stop when no column of the zero set has a scaled gradient
  /// (C^T (b - C w))_j / ||C_j|| above this times ||b||. > 0.
  double optimality_tolerance = 1e-12;
  /// Outer iterations (each adds one column); 0: 3 times the columns (Lawson & Hanson's cap).
  Index max_iterations = 0;
};

struct NnlsResult {
  Vector w;                        ///< the solution, >= 0 (size: the columns of C)
  std::vector<Index> support;      ///< indices with w > 0, ascending
  double relative_residual = 0.0;  ///< ||C w - b||_2 / ||b||_2 (0 if b = 0)
  Index iterations = 0;            ///< outer iterations (columns added)
  NnlsStatus status = NnlsStatus::tolerance_met;
};

/// min ||C w - b||_2 subject to w >= 0 by Lawson & Hanson's active-set algorithm (1974, ch. 23,
/// algorithm NNLS), stopped early at the tolerance. The columns are scaled to unit norm inside
/// (zero columns are never chosen); each inner least-squares solve uses a QR of the passive
/// columns kept up to date by Gram-Schmidt (adding) and Givens rotations (removing): an
/// iteration costs O(rows (cols + k)) with k passive columns. A column numerically dependent on
/// the passive ones is skipped.
/// C: rows x cols, finite; b: rows, finite.
/// @throws InvalidArgument naming the value for mismatched sizes, an empty C, non-finite entries
///         or a negative tolerance. The iteration cap is a status, not an error.
NnlsResult nnls(const Matrix& C, const Vector& b, const NnlsOptions& options = {});

struct EcswOptions {
  /// tau, the relative residual of the reduced force over the training snapshots. In (0, 1).
  double tolerance = 1e-6;
  /// C (r ns x m_e doubles) may take at most this many bytes: beyond it every k-th snapshot is
  /// used (k the smallest that fits); if one snapshot alone does not fit, the training throws.
  std::size_t memory_limit = std::size_t{1} << 30;
  /// NNLS outer iterations; 0: 3 m_e.
  Index max_iterations = 0;
};

/// The selected elements and their weights, with what the training achieved.
struct EcswResult {
  std::vector<Index> elements;     ///< S: 0-based rows of G, ascending, each with w_e > 0
  Vector weights;                  ///< w_S, positive (size |S|)
  double tolerance = 0.0;          ///< tau asked for
  double relative_residual = 0.0;  ///< ||C w - b|| / ||b|| reached on the snapshots used
  Index iterations = 0;            ///< NNLS outer iterations
  NnlsStatus status = NnlsStatus::tolerance_met;
  Index snapshots = 0;       ///< training snapshots given
  Index snapshots_used = 0;  ///< columns of C's blocks: every snapshot_stride-th snapshot
  Index snapshot_stride = 1;
  double seconds = 0.0;  ///< building C and the NNLS
};

/// Bytes of ECSW's training matrix C: 8 r ns m_e (a double: no overflow).
double ecsw_matrix_bytes(Index r, Index snapshots, Index elements);

/// ECSW training of the network's reduced force on q = V q_r, residual orthogonal to range(W)
/// (W empty: Galerkin, W = V, the case with the energy), from reduced snapshots Qr (r x ns; the
/// projections of the training states, e.g. V^T q^j for an orthonormal V).
/// net: nonlinear (m_e >= 1); V: n x r; W: n x r or empty; Qr: r x ns, ns >= 1, finite.
/// @throws InvalidArgument naming the value for wrong sizes, a linear network, non-finite
///         snapshots, a tolerance outside (0, 1), snapshots whose reduced force is zero (nothing
///         to fit), or a C above the memory limit even for one snapshot (with the estimate).
EcswResult ecsw(const NonlinearNetwork& net, const Matrix& V, const Matrix& W, const Matrix& Qr,
                const EcswOptions& options = {});

}  // namespace mor
