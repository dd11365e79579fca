// SPDX-License-Identifier: GPL-3.0-or-later
// Balanced truncation of stable LTI systems: first-order square-root and balancing-free
// square-root BT from Gramian factors (dense Hammarling for small systems, low-rank ADI for large
// sparse ones), and structure-preserving second-order BT (Reis & Stykel 2008) whose reduced model
// is again M_r q'' + D_r q' + K_r q = B_r u.
//
// From factors P ~ Z_c Z_c^T, Q ~ Z_o Z_o^T (reduction/gramian.hpp) and the SVD
//     Z_o^T E Z_c = U S Y^T,   S = diag(sigma_1 >= sigma_2 >= ...)   (Hankel singular values)
// square-root BT (Laub et al. 1987; Tombs & Postlethwaite 1987) takes
//     V = Z_c Y_r S_r^{-1/2},  W = Z_o U_r S_r^{-1/2},  so W^T E V = I_r,
// the balancing-free variant (Varga 1991) orthonormal bases of the same two subspaces, and
//     E_r = W^T E V, A_r = W^T A V, B_r = W^T B, C_r = C V, D_r = D.
// For a stable system and exact Gramians the reduced model is stable and
//     sigma_{r+1} <= ||G - G_r||_Hinf <= 2 (sigma_{r+1} + ... + sigma_n)
// (Enns 1984; Glover 1984). With low-rank factors only the leading HSVs are known: the bound is
// then over the computed ones (BtResult::bound_is_complete says which).
#pragma once

#include <optional>
#include <string>

#include "reduction/dense_lyapunov.hpp"
#include "reduction/low_rank_adi.hpp"
#include "reduction/rational_krylov.hpp"
#include "src/systems/dense_model.hpp"

namespace mor {

enum class BtProjection {
  square_root,     ///< balanced realisation: W^T E V = I, equal diagonal Gramians diag(S_r)
  balancing_free,  ///< orthonormal V and W spanning the same subspaces (better conditioned)
};
BtProjection parse_bt_projection(std::string_view name);  ///< "square_root", "balancing_free"
std::string_view to_string(BtProjection p);

enum class GramianMethod {
  automatic,  ///< dense when n <= dense_limit, low-rank ADI otherwise
  dense,      ///< factors of the dense system (O(n^3), n up to a few thousand): sign function
              ///< or Hammarling on a Schur form (GramianOptions::dense_solver)
  low_rank,   ///< LR-ADI factors of the sparse system
};
GramianMethod parse_gramian_method(std::string_view name);  ///< "automatic", "dense", "low_rank"
std::string_view to_string(GramianMethod m);

enum class LowRankSolver {
  adi,   ///< low-rank ADI (reduction/low_rank_adi.hpp): one solve per step, no dense work
  rksm,  ///< rational Krylov with adaptive poles (reduction/rational_krylov.hpp): converges on
         ///< lightly damped systems where ADI stalls, at O(k^3) dense work per update
};
LowRankSolver parse_low_rank_solver(std::string_view name);  ///< "adi", "rksm"
std::string_view to_string(LowRankSolver s);

/// The reduced order: exactly one of `order` (r >= 1) or `tolerance` (> 0: the smallest r with
/// 2 * sum_{i>r} sigma_i <= tolerance, over the computed HSVs) must be set.
struct OrderSelection {
  Index order = 0;
  double tolerance = 0.0;
};

/// How first- and second-order BT compute their Gramian factors.
struct GramianOptions {
  GramianMethod method = GramianMethod::automatic;
  Index dense_limit = 1500;  ///< automatic: dense Gramians up to this many states
  DenseLyapunovSolver dense_solver = DenseLyapunovSolver::automatic;  ///< for dense Gramians
  LowRankSolver solver = LowRankSolver::adi;                          ///< for the low-rank Gramians
  AdiOptions adi;                                                     ///< solver = adi
  RksmOptions rksm;                                                   ///< solver = rksm
  /// A low-rank Gramian whose solver did not converge is an error (NumericalError naming the
  /// residual) unless this is set; then the reduction proceeds and the result says so.
  bool allow_unconverged = false;
};

struct BtOptions {
  OrderSelection selection;
  BtProjection projection = BtProjection::square_root;
  GramianOptions gramians;
  /// If > 0: also the square-root BT model of order q, r <= q <= r + reference_extra_order, from
  /// the same factors (BtResult::reference), q the smallest with 2 sum_{i>q} sigma_i <=
  /// 1e-3 sigma_{r+1} (a thousandth of the lower bound of ||G - G_r||_Hinf) among the HSVs
  /// above the numerical rank threshold: a surrogate of G accurate enough to locate the peak of
  /// G - G_r (reduction/system_norms.hpp, hinf_error_with_reference). 0: none.
  Index reference_extra_order = 0;
};

/// Diagnostics shared by first- and second-order BT.
struct GramianDiagnostics {
  GramianMethod method = GramianMethod::dense;
  Index rank_c = 0, rank_o = 0;               ///< columns of Z_c and Z_o
  double residual_c = 0, residual_o = 0;      ///< relative Lyapunov residuals of the factors
  LowRankSolver solver = LowRankSolver::adi;  ///< of the low-rank method
  DenseLyapunovSolver dense_solver = DenseLyapunovSolver::schur;  ///< used (dense method only)
  Index sign_steps = 0;                             ///< inversions of the sign function
  std::optional<AdiResult> low_rank_c, low_rank_o;  ///< its runs (low-rank method only)
  bool converged = true;                            ///< false if a low-rank run did not converge
  double seconds = 0;                               ///< computing both factors
};

struct BtResult {
  Matrix Er, Ar, Br, Cr, Dr;  ///< reduced first-order system (Er = I for square_root)
  Matrix V, W;                ///< n x r projection bases
  Vector hsv;                 ///< every computed Hankel singular value, descending
  Index r = 0;
  double error_bound = 0.0;  ///< 2 * sum_{i>r} sigma_i over hsv
  /// true if hsv holds all n values (dense Gramians). The sign function's factors have the
  /// numerical rank k: its values beyond the k-th lie below its compression level (about
  /// eps sqrt(||P|| ||Q||)) and are reported as 0.
  bool bound_is_complete = false;
  /// max Re lambda of the reduced model: < 0 in exact arithmetic with exact Gramians; a
  /// non-negative value flags Gramian factors too inaccurate for the order chosen.
  double spectral_abscissa = 0;
  GramianDiagnostics gramians;
  double seconds_projection = 0;  ///< SVD, bases and projected matrices
  /// Low-rank Gramians and D_ff = 0: ||G||_H2 = ||C Z_c||_F from the controllability factor
  /// (accurate to about its relative Lyapunov residual); -1 otherwise.
  double h2_norm = -1.0;
  /// Low-rank ADI Gramians (solver adi): C Z_c (p x k), the controllability factor's outputs,
  /// column for column as LR-ADI produced them (its shifts: gramians.low_rank_c->shifts), for
  /// the H2 norm of G - G_r without another large solve (h2_error_from_adi_factor); else empty.
  Matrix CZc;
  /// With BtOptions::reference_extra_order: the square-root BT model of order q (E = I, D =
  /// D_ff) and its bound 2 sum_{i>q} sigma_i over the computed HSVs; q = 0 when none was formed
  /// (r equals the number of usable HSVs).
  Matrix Aref, Bref, Cref;
  Index q = 0;
  double reference_bound = -1.0;
};

/// First-order BT of the stable system `sys`.
/// @throws InvalidArgument for r < 1, r > n, r larger than the number of computed HSVs (or, for
///         square_root, than the numerical rank of Z_o^T E Z_c), both or neither of order and
///         tolerance; NumericalError for an unstable or singular system, a singular shift, or an
///         unconverged ADI (unless allowed).
BtResult balanced_truncation(LtiOperator& sys, const BtOptions& options);

/// The smallest r with 2 * sum_{i>r} sigma_i <= tolerance (r <= hsv.size()).
Index order_for_tolerance(const Vector& hsv, double tolerance);

/// Second-order BT variants of Reis & Stykel (Int. J. Control 81 (2008) 1331-1348), named after
/// the Gramian pairs whose singular values rank the reduced coordinates (as in pyMOR's SOBTp,
/// SOBTv, SOBTpv, SOBTvp). With P = [P_p .; . P_v] and E^T Q E = [Q_p .; . M Q_v M]:
///   position           p:  sqrt(eig(P_p Q_p)),        V from Z_c,p, W from Z_o,v
///   velocity           v:  sqrt(eig(P_v M Q_v M)),    V from Z_c,v, W from Z_o,v
///   position-velocity  pv: sqrt(eig(P_p M Q_v M)),    V from Z_c,p, W from Z_o,v
///   velocity-position  vp: sqrt(eig(P_v Q_p)),        V from Z_c,v, W from Z_o,p
/// No a-priori error bound or stability guarantee exists for these variants; the result
/// reports the reduced model's spectral abscissa.
enum class SecondOrderBtVariant { p, v, pv, vp };
SecondOrderBtVariant parse_second_order_bt_variant(std::string_view name);  ///< "p", "v", ...
std::string_view to_string(SecondOrderBtVariant v);

enum class SecondOrderProjection {
  square_root,     ///< V, W scaled by S_r^{-1/2}
  balancing_free,  ///< orthonormal V and W
  galerkin,  ///< W = V (orthonormal): keeps M_r, D_r, K_r symmetric (definite) when M, D, K are,
             ///< so a passive mechanical model stays stable
};
SecondOrderProjection parse_second_order_projection(std::string_view name);
std::string_view to_string(SecondOrderProjection p);

struct SecondOrderBtOptions {
  SecondOrderBtVariant variant = SecondOrderBtVariant::pv;
  SecondOrderProjection projection = SecondOrderProjection::balancing_free;
  /// `tolerance` here is a heuristic: 2 * sum_{i>r} of the variant's singular values.
  OrderSelection selection;
  GramianOptions gramians;
};

struct SecondOrderBtResult {
  DenseSecondOrderSystem reduced;  ///< M_r = W^T M V, ..., B_r = W^T B, Cp_r = Cp V, Cv_r = Cv V
  Matrix V, W;                     ///< n_q x r
  Vector sv;   ///< the variant's singular values (ranking the reduced coordinates), descending
  Vector hsv;  ///< first-order Hankel singular values from the same factors, for reference
  Index r = 0;
  double spectral_abscissa = 0;  ///< max Re lambda of the reduced model (< 0: stable)
  GramianDiagnostics gramians;
  double seconds_projection = 0;
};

/// Second-order BT of M q'' + D q' + K q = B u, y = Cp q + Cv q' (M nonsingular, system stable).
/// @throws as balanced_truncation.
SecondOrderBtResult second_order_balanced_truncation(const SecondOrderSystem& sys,
                                                     const SecondOrderBtOptions& options);

}  // namespace mor
