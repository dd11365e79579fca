// SPDX-License-Identifier: GPL-3.0-or-later
// Empirical Gramians of a nonlinear second-order network (src/systems/nonlinear_network.hpp)
// from simulated free responses, and the position balancing built on them (Lall, Marsden &
// Glavaski, Int. J. Robust Nonlinear Control 12 (2002) 519-535; the definitions follow Himpe's
// emgr, Algorithms 11 (2018) 91, with zero steady state, no input rotations other than the two
// signs). The functions below take a network; the algorithms are templates over the simulated
// model (reduction/empirical_gramians_impl.hpp), which a kind with a faster model of its own
// than its network form instantiates in its own file.
//
// The network  M q'' + D q' + K q + g(q) = B u,  y = Cp q + Cv q',  g(q) = G^T phi(G q),  has the
// state x = [q; v] (2N) and the linear part  E x' = A x + B u,  E = diag(I, M)
// (descriptor_system()). Every simulation below is a free response (u = 0) by mor::integrate over
// [t0, t_end] with the caller's IntegratorOptions; a snapshot is kept every
// integrator.observe_stride steps (and at the last step), and integrals over time are trapezoidal
// sums over the kept snapshots t_i with weights w_i. Amplitudes c_1..c_K (K = amplitudes.size())
// and both signs are used throughout.
//
// Controllability. An impulse u = c e_j delta(t) moves the network from rest to
// x0 = [0; M^{-1} B e_j c] at once and leaves it free, so it is simulated as the free response
// from that state. With x^{jk+-}(t) that response,
//     W_C = 1/(2K) sum_{k=1..K} sum_{j=1..m} sum_{+-} c_k^{-2} int x^{jk+-}(t) x^{jk+-}(t)^T dt,
// kept as the factor Z_c (2N x s, W_C = Z_c Z_c^T; s = 2 K m n_t for n_t snapshots per run)
// with columns sqrt(w_i / (2K)) x^{jk+-}(t_i) / c_k; W_C itself (2N x 2N) is never formed.
// For a linear chain W_C is the algebraic P (A P E^T + E P A^T + B B^T = 0, reduction/gramian.hpp)
// as dt -> 0 and t_end -> infinity, whatever the amplitudes. With implicit_midpoint, snapshots at
// every step and t_end -> infinity the error is exactly dt^2/4 X, A X E^T + E X A^T +
// (A E^{-1} B)(A E^{-1} B)^T = 0: the midpoint map is the Cayley transform of dt E^{-1} A / 2,
// whose Stein equation is the Lyapunov equation with E^{-1} B replaced by
// (I - dt E^{-1} A / 2) E^{-1} B; its first-order term dt/2 E^{-1} B B^T E^{-T} is exactly what
// the trapezoid's half weight at t = 0 removes. Likewise W_O below errs by dt^2/4 times the
// observability Gramian of C E^{-1} A in place of C.
//
// Observability on a subspace. For directions Dir = [d_1 ... d_{n_d}] (2N x n_d) and y^{ik+-}(t)
// the output of the free response from x0 = +- c_k d_i,
//     W_O(i, l) = 1/(2K) sum_{k, +-} c_k^{-2} int y^{ik+-}(t)^T y^{lk+-}(t) dt     (n_d x n_d),
// from 2 K n_d simulations. For a linear chain W_O -> Dir^T E^T Q E Dir, Q the algebraic
// observability Gramian (A^T Q E + E^T Q A + C^T C = 0); for position directions [Phi; 0] that is
// Phi^T Q_qq Phi since E = diag(I, M). Directions are meant to be orthonormal, so that c_k is the
// size of the initial state; the formula does not require it.
//
// Position balancing (the empirical analogue of balancing the position Gramians P_qq, Q_qq, the
// pair that ranks Reis & Stykel's position variant; here both bases come from that pair, so
// W^T V = I). With Z_q the position rows of Z_c:
//     Phi (N x d)   POD basis of Z_q (reduction/pod.hpp, Euclidean, Phi^T Phi = I_d),
//     L_c = Phi^T Z_q (d x s),  Phi^T P_qq Phi ~ L_c L_c^T,
//     W_O for the directions [Phi; 0] = L_o L_o^T,
//     L_o^T L_c = U Sigma Y^T,  V = Phi L_c Y_r Sigma_r^{-1/2},  W = Phi L_o U_r Sigma_r^{-1/2},
// so W^T V = I_r. L_o = R^T comes from a Householder QR of the stacked, weighted output
// snapshots (W_O = R^T R), not from an eigendecomposition of W_O: that would square the
// conditioning (small Sigma lost below sqrt(eps) Sigma_1) and need clipping of negative
// eigenvalues; the QR factor is exact to rounding and never indefinite.
// For a linear chain and d = N, Sigma = sqrt(eig(P_qq Q_qq)) in the limit above (the singular
// values of second_order_balanced_truncation's variant p).
#pragma once

#include <vector>

#include "reduction/balanced_truncation.hpp"
#include "reduction/pod.hpp"
#include "src/integrators/integrate.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

struct EmpiricalGramianOptions {
  /// c_1..c_K: non-empty, each finite and > 0. Units: input impulse (N s) for the
  /// controllability runs, state size for the observability runs.
  std::vector<double> amplitudes = {0.25, 0.5, 1.0};
  /// Scheme, t0, t_end, dt of every simulation; observe_stride is the snapshot stride (1: every
  /// step). t_end - t0 should cover the decay of the free responses: the Gramians truncate the
  /// integrals there.
  IntegratorOptions integrator;
};

/// Z_c (2N x 2 K m n_t) with W_C = Z_c Z_c^T (see the file comment) of the network
/// M q'' + D q' + K q + G^T phi(G q) = B u (M need not be m I; the chain through its network
/// form). 2 K m simulations.
/// @throws InvalidArgument for empty, non-positive or non-finite amplitudes or bad integrator
///         options; NumericalError naming the input, amplitude and sign if a simulation becomes
///         non-finite or its Newton iteration fails (a smaller dt or amplitude is the remedy).
Matrix empirical_controllability_factor(const NonlinearNetwork& network,
                                        const EmpiricalGramianOptions& options);

/// W_O (n_d x n_d, symmetric positive semidefinite) for the directions (2N x n_d, n_d >= 1,
/// finite). 2 K n_d simulations.
/// @throws as empirical_controllability_factor, and InvalidArgument if directions does not have
///         2N rows or has no column or a non-finite entry; the NumericalError names the direction.
Matrix empirical_observability(const NonlinearNetwork& network, const Matrix& directions,
                               const EmpiricalGramianOptions& options);

/// [Phi; 0] (2N x d): directions that displace the positions along the columns of Phi (N x d)
/// at zero velocity.
Matrix position_directions(const Matrix& Phi);

/// Sigma_r below this fraction of Sigma_1 counts as zero for the square-root bases, which divide
/// by sqrt(Sigma_r): the simulated snapshots carry rounding of about (number of steps) * eps
/// ~ 1e-12 relative for 1e4 steps, so smaller singular values are indistinguishable from it.
inline constexpr double kEmpiricalRankTolerance = 1e-12;

struct EmpiricalBalancingOptions {
  EmpiricalGramianOptions gramians;
  /// d, the dimension of the position subspace: exactly one of subspace.order and
  /// subspace.energy (POD of the position rows of Z_c, Euclidean inner product).
  PodOptions subspace;
  /// r: exactly one of order (1 <= r <= d and r <= the numerical rank of L_o^T L_c) and
  /// tolerance (the smallest r with 2 sum_{i>r} Sigma_i <= tolerance; a heuristic here: no error
  /// bound is known for empirical or second-order balancing).
  OrderSelection selection;
  /// Keep Z_c in the result (2N x s doubles: large for long horizons and N).
  bool keep_controllability_factor = false;
  /// V and W get max(r, min_columns) columns. Their j-th columns do not depend on r, so the
  /// leading r' columns are the order-r' bases for every r': one balancing serves a comparison
  /// of several orders. min_columns above the numerical rank is an error, as an order is.
  Index min_columns = 0;
};

/// Wall-clock seconds per stage of empirical_balancing.
struct EmpiricalBalancingTimings {
  double controllability = 0;  ///< the 2 K m impulse-response simulations
  double pod = 0;              ///< POD of the position rows of Z_c and L_c
  double observability = 0;    ///< the 2 K d simulations and the QR factor of W_O
  double balancing = 0;        ///< SVD and bases
};

struct EmpiricalBalancingResult {
  /// N x max(r, min_columns) position bases, W^T V = I (Petrov-Galerkin: q ~ V q_r, test with W)
  Matrix V, W;
  Vector sigma;  ///< the min(d, s) empirical Hankel-type singular values, descending
  Index r = 0;
  double discarded_sum = 0;               ///< 2 sum_{i>r} sigma_i (an indicator, not a bound)
  Matrix Phi;                             ///< N x d POD basis of the position snapshots
  Vector subspace_singular_values;        ///< the POD singular values of Z_q
  Matrix Wo;                              ///< d x d W_O for the directions [Phi; 0]
  Matrix Zc;                              ///< 2N x s, empty unless keep_controllability_factor
  Index simulations_controllability = 0;  ///< 2 K m
  Index simulations_observability = 0;    ///< 2 K d
  EmpiricalBalancingTimings seconds;
};

/// Position balancing of a network by empirical Gramians (see the file comment; the impulse
/// sets v(0+) = M^{-1} B e_j c).
/// @throws InvalidArgument for bad amplitudes, integrator or POD options, both or neither of
///         selection.order and selection.tolerance, or an order r above d or above the numerical
///         rank (Sigma_r <= kEmpiricalRankTolerance Sigma_1), naming r and the rank;
///         NumericalError from the simulations (see empirical_controllability_factor).
EmpiricalBalancingResult empirical_balancing(const NonlinearNetwork& network,
                                             const EmpiricalBalancingOptions& options);

}  // namespace mor
