// SPDX-License-Identifier: GPL-3.0-or-later
// Generalized differential (GD) balancing of nonlinear second-order networks
// (Y. Kawano, J.M.A. Scherpen, "Model reduction by generalized differential balancing", in
// Mathematical Control Theory I, LNCIS 461, Springer 2015, pp. 349-362).
//
// The network (src/systems/nonlinear_network.hpp; the chain, models/mass_spring_chain.hpp, is the
// case G = Delta, the (N+1) x N difference matrix with the walls, phi_s(e) = k_n e^3)
//   M q'' + D q' + K q + G^T phi(G q) = B_2 u,   y = Cp q + Cv q',
// N coordinates, m elements, phi_s(e) = a2_s e^2 + a3_s e^3 + a4_s e^4 + a5_s e^5, in first-order
// form, x = (q, v) in R^n, n = 2 N:
//   x' = f(x) + B u,  y = C x,   f(x) = (v, -M^{-1} (K q + D v + G^T phi(G q))),
//   B = (0; M^{-1} B_2),  C = (Cp  Cv).
// Its Jacobian is an affine family in one coefficient per element:
//   J(x) = df/dx(x) = A + sum_s c_s(x) H_s,   c_s(x) = phi_s'(e_s(x)),   e = G q,
//   A = (0  I; -M^{-1} K  -M^{-1} D),   H_s = -(0  0; M^{-1} g_s g_s^T  0),
// g_s^T the row s of G. Elements with phi_s = 0 have c_s = 0 and no H_s.
// GD Gramians (the paper's Definition): constant P, Q > 0 with, for every x considered,
//   J(x) P + P J(x)^T + B B^T <= 0   (controllability),
//   J(x)^T Q + Q J(x) + C^T C <= 0   (observability).
// The family over x reduces to finitely many linear matrix inequalities (docs/methods/
// differential_balancing.md derives it):
//  - over the whole state space (rho = infinity, the paper's global Gramians): the linear
//    inequality at J = A plus the homogeneous inequality H_s P + P H_s^T <= 0 per element (and
//    -H_s too where c_s takes both signs). They force P's position block to vanish, so for the
//    chain with k_n > 0 no P > 0 exists, and the solver reports the system infeasible;
//  - over the region X_rho = {x : ||G_a q||_2 <= rho} (G_a: the rows of the elements with
//    phi_s != 0; positions only, velocities free), for laws without an s^2 term (a2_s = 0):
//      hardening odd laws (a4_s = 0, a3_s >= 0, a5_s >= 0): 0 <= c_s <= cbar_s e_s^2 / rho^2,
//        cbar_s = 3 a3_s rho^2 + 5 a5_s rho^4;
//      any other law with a2_s = 0:  |c_s| <= cbar_s e_s^2 / rho^2,
//        cbar_s = 3 |a3_s| rho^2 + 4 |a4_s| rho^3 + 5 |a5_s| rho^4;
//    so sum_s |c_s| / cbar_s <= ||e||^2 / rho^2 <= 1 and J lies in the convex hull of A,
//    A + cbar_s H_s (every element) and A - cbar_s H_s (the elements of the second kind): the
//    inequalities at those vertices imply them on all of X_rho. For the chain that is A and
//    A + 3 k_n rho^2 H_s, s = 0..N. A law with a2_s != 0 has |c_s| bounded only by
//    cbar_s |e_s| / rho near e_s = 0, and these bounds add up to sqrt(m), not 1, over the
//    region: refused (require_region_laws names the element).
// Each Gramian is the solution of a semidefinite program (DSDP 5, dual-scaling interior point):
// minimise trace(P) subject to the vertex LMIs and P >= eps I, over n (n + 1) / 2 unknowns with
// one block of size n per vertex plus one (m + 2 blocks for m hardening elements); cost per
// iteration about (n^2 / 2)^2 (m + 1) * nnz for the Schur matrix plus (n^2 / 2)^3 / 3 for its
// Cholesky factor, so in practice N <~ 30 (see the doc).
// Balancing (square root): P = R R^T, Q = L L^T, L^T R = U Sigma Z^T; the GD Hankel singular
// values are sigma_i = sqrt(lambda_i(P Q)); truncation keeps the first r balanced coordinates:
//   z' = W_r^T f(V_r z) + W_r^T B u,  y_r = C V_r z,
//   V_r = R Z_1 Sigma_1^{-1/2},  W_r = L U_1 Sigma_1^{-1/2},  W_r^T V_r = I.
// The a priori error bound of GD balanced truncation (the generalized-Gramian bound of linear BT
// carried over by the paper): for x(0) = 0, z(0) = 0 and trajectories in the region where the
// inequalities hold,  ||y - y_r||_{L2} <= 2 sum_{i > r} sigma_i ||u||_{L2}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/core/types.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// J(x) = A + sum_s c_s(x) H_s of a network's first-order drift (see the file comment).
struct JacobianFamily {
  Matrix A;  ///< n x n, the Jacobian at rest (linear part), n = 2 N
  /// H_s = -(0 0; M^{-1} g_s g_s^T 0), n x n, one per element with phi_s != 0
  std::vector<Matrix> H;
  std::vector<Index> elements;  ///< the element (row of G) of each H, ascending
  Matrix B;                     ///< n x inputs, (0; M^{-1} B_2)
  Matrix C;                     ///< outputs x n, (Cp Cv)
  Matrix G;                     ///< m x N element matrix, e = G q (the chain: Delta, (N+1) x N)
  Matrix M_inv;                 ///< N x N
  Matrix coefficients;          ///< m x 4: a2, a3, a4, a5 of every element (chain: 0, k_n, 0, 0)
  Index n_coordinates() const { return M_inv.rows(); }
};
/// The family of a network (the chain through its network form).
/// Dense, O(m N^2) storage: meant for N up to a few tens.
JacobianFamily jacobian_family(const NonlinearNetwork& network);

/// How an element's stiffness c_s = phi_s'(e_s) is bounded on the region (file comment).
enum class ElementBound {
  none,        ///< phi_s = 0: no vertex
  one_sided,   ///< hardening odd law: 0 <= c_s <= cbar_s e_s^2 / rho^2, vertex A + cbar_s H_s
  two_sided,   ///< a2_s = 0 otherwise: |c_s| <= cbar_s e_s^2 / rho^2, vertices A +- cbar_s H_s
  unsupported  ///< a2_s != 0: no such bound
};
/// The bound of the law with coefficients c[0..3] = a2, a3, a4, a5.
ElementBound element_bound(const double* c);
/// cbar_s of that law on ||G_a q||_2 <= rho (finite rho > 0; 0 for ElementBound::none).
double element_stiffness_bound(const double* c, double rho);

/// @throws InvalidArgument, naming the first element (1-based) and its coefficients, if some
/// element's law has no vertex bound over a region (a2_s != 0) and rho is finite; any law is
/// accepted for rho = infinity (the homogeneous inequalities +-H_s cover every sign of c_s).
void require_region_laws(const Matrix& coefficients, double rho);

/// The finite set of matrix inequalities equivalent to (or, for a region, sufficient for) the
/// family over the states considered: for every affine vertex A_k
///   A_k X + X A_k^T + G <= 0,
/// and for every homogeneous direction H_s
///   H_s X + X H_s^T <= 0,
/// with (X, A_k, G) = (P, A_k, B B^T) for controllability, (Q, A_k^T, C^T C) for observability.
struct LmiFamily {
  std::vector<Matrix> affine;       ///< A_0 = A first
  std::vector<Matrix> homogeneous;  ///< +-H_s (only over the whole state space)
  std::vector<Matrix> transposed() const;
};
/// rho: the region X_rho = {||G_a q||_2 <= rho} (m); rho = infinity: the whole state space.
/// Affine vertices in element order: A, then A + cbar_s H_s (and A - cbar_s H_s right after it
/// for a two-sided law). A linear family: the single linear inequality.
/// @throws InvalidArgument for rho <= 0 or NaN, or a law require_region_laws refuses.
LmiFamily lmi_family(const JacobianFamily& family, double rho);

enum class LmiStatus {
  solved,         ///< DSDP converged and every inequality verified (see max_relative_residual)
  infeasible,     ///< DSDP found no feasible point (certificate of infeasibility of the LMIs)
  not_converged,  ///< iteration limit, small steps or a numerical failure; or not verified
};
std::string_view to_string(LmiStatus status);

struct DifferentialGramianOptions {
  /// region ||G_a q||_2 <= rho (m; the chain: ||Delta q||_2); infinity: every state (global)
  double rho = 1.0;
  /// X >= eps ||G||_2 I (relative lower bound keeping the Gramian definite).
  double epsilon = 1e-9;
  double gap_tolerance = 1e-7;  ///< DSDP's relative duality gap at which it stops
  int max_iterations = 300;     ///< DSDP iterations per Gramian
  /// A solution counts as verified if every inequality's largest eigenvalue is
  /// <= feasibility_tolerance * (2 ||A_k||_F ||X||_2 + ||G||_2) (the scale of its terms).
  double feasibility_tolerance = 1e-8;
};

/// One Gramian and how the SDP went.
struct GramianSolve {
  Matrix X;  ///< P or Q, n x n symmetric (valid if status == solved)
  LmiStatus status = LmiStatus::not_converged;
  std::string message;  ///< one line: DSDP's verdict and the largest residual
  /// lambda_max of each inequality at X, affine ones first (<= 0 means satisfied).
  Vector residuals;
  double max_relative_residual = 0;  ///< max_k residuals_k / scale_k (see the options)
  int iterations = 0;
  double seconds = 0;
  Index unknowns = 0;  ///< n (n + 1) / 2
};

/// Solves  min trace(X)  s.t. the family's inequalities with constant term G (n x n, G >= 0) and
/// X >= eps ||G|| I, by DSDP. Never throws for an infeasible or unsolved program: the status and
/// message say so. @throws InvalidArgument for size mismatches or bad options.
GramianSolve solve_gramian_lmis(const LmiFamily& family, const Matrix& G,
                                const DifferentialGramianOptions& options);

/// lambda_max(A X + X A^T + G) for symmetric X: the independent check of one inequality.
double lyapunov_inequality_residual(const Matrix& A, const Matrix& X, const Matrix& G);

/// The GD-balanced truncation of a network's first-order form, for any r.
struct DifferentialBalancing {
  JacobianFamily family;
  GramianSolve controllability, observability;
  Vector sigma;  ///< GD Hankel singular values sqrt(lambda(P Q)), descending, n of them
  Matrix V, W;   ///< n x n balancing bases (columns in sigma's order), W^T V = I
  /// Position balancing of the Gramians' position blocks P_qq, Q_qq (N x N, descending values
  /// position_sigma), for the structure-preserving second-order projection of the network.
  Vector position_sigma;
  Matrix V_q, W_q;  ///< N x N, W_q^T V_q = I
  double seconds_balancing = 0;
  bool solved() const {
    return controllability.status == LmiStatus::solved && observability.status == LmiStatus::solved;
  }
  /// 2 sum_{i > r} sigma_i, the bound on ||y - y_r||_{L2} / ||u||_{L2} (x(0) = 0).
  double error_bound(Index r) const;
};

/// Both Gramians and the balancing of a family. If either SDP is not solved, the result carries
/// its status and message and no bases (check solved()).
/// @throws InvalidArgument for bad options or a law lmi_family refuses.
DifferentialBalancing differential_balancing(JacobianFamily family,
                                             const DifferentialGramianOptions& options);
/// The same for a network (the chain through its network form): its laws checked against the
/// region first (require_region_laws).
DifferentialBalancing differential_balancing(const NonlinearNetwork& network,
                                             const DifferentialGramianOptions& options);

/// The GD-truncated network, first order: z' = A_r z + G_r phi(E_r z) + B_r u, y_r = C_r z, with
/// A_r = W_r^T A V_r, B_r = W_r^T B, C_r = C V_r, and over the m_a elements with phi_s != 0:
/// E_r = G_a V_{q,r} (m_a x r), G_r = -W_{v,r}^T M^{-1} G_a^T (r x m_a), phi element by element
/// (element_law, s^2 .. s^5): the exact reduced force in O(m_a r).
class GdTruncatedModel {
 public:
  /// @throws InvalidArgument unless bal.solved() and 1 <= r <= n.
  GdTruncatedModel(const DifferentialBalancing& bal, Index r);
  Index n() const { return A_r_.rows(); }
  /// dz = A_r z + G_r phi(E_r z) + B_r u.
  void rhs(const Vector& z, const Vector& u, Vector& dz) const;
  void output(const Vector& z, Vector& y) const { y.noalias() = C_r_ * z; }
  Vector lift(const Vector& z) const { return V_ * z; }  ///< V_r z, size 2 N
  const Matrix& A_r() const { return A_r_; }
  const Matrix& B_r() const { return B_r_; }
  const Matrix& C_r() const { return C_r_; }

 private:
  Matrix A_r_, B_r_, C_r_, E_r_, G_r_, V_;
  Matrix coefficients_;  // m_a x 4, the laws of the rows of E_r
};

/// ||Delta q||_2 of the chain's positions q (size N): the quantity its region X_rho bounds.
double elongation_norm(const Vector& q);
/// ||G_a q||_2 (the elements with phi_s != 0): the quantity a network's region X_rho bounds.
double element_norm(const JacobianFamily& family, const Vector& q);

}  // namespace mor
