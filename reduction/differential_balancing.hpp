// SPDX-License-Identifier: GPL-3.0-or-later
// Generalized differential (GD) balancing of the nonlinear mass-spring-damper chain
// (Y. Kawano, J.M.A. Scherpen, "Model reduction by generalized differential balancing", in
// Mathematical Control Theory I, LNCIS 461, Springer 2015, pp. 349-362).
//
// The chain (models/mass_spring_chain.hpp) in first-order form, x = (q, v) in R^n, n = 2 N:
//   x' = f(x) + B u,  y = C x,   f(x) = (v, -M^{-1} (K q + D v + g(q))),
//   B = (0; M^{-1} B_2),  C = (Cp  Cv),  g(q) = k_n Delta^T (Delta q)^3.
// Its Jacobian is an affine family in N + 1 nonnegative coefficients:
//   J(x) = df/dx(x) = A + sum_{s=0}^{N} c_s(x) H_s,   c_s(x) = 3 k_n e_s(x)^2 >= 0,
//   A = (0  I; -M^{-1} K  -M^{-1} D),   H_s = -(0  0; M^{-1} delta_s delta_s^T  0),
// e = Delta q the N + 1 spring elongations and delta_s^T the row s of Delta.
// GD Gramians (the paper's Definition): constant P, Q > 0 with, for every x considered,
//   J(x) P + P J(x)^T + B B^T <= 0   (controllability),
//   J(x)^T Q + Q J(x) + C^T C <= 0   (observability).
// The family over x reduces to finitely many linear matrix inequalities (docs/methods/
// differential_balancing.md derives it):
//  - over the whole state space (the paper's global Gramians): the linear inequality at J = A
//    plus one homogeneous inequality H_s P + P H_s^T <= 0 per spring. These force P's position
//    block to vanish, so for k_n > 0 no P > 0 (indeed no P >= 0 with B != 0) exists: the chain
//    has no global GD Gramians, and the solver reports the system infeasible;
//  - over the region X_rho = {x : ||Delta q||_2 <= rho}: sum_s c_s <= cbar = 3 k_n rho^2, so J
//    lies in the convex hull of the N + 2 vertices A and A + cbar H_s, and the inequalities at
//    those vertices imply them on all of X_rho.
// Each Gramian is the solution of a semidefinite program (DSDP 5, dual-scaling interior point):
// minimise trace(P) subject to the vertex LMIs and P >= eps I, over n (n + 1) / 2 unknowns with
// N + 3 blocks of size n; cost per iteration about (n^2 / 2)^2 (N + 2) * nnz for the Schur
// matrix plus (n^2 / 2)^3 / 3 for its Cholesky factor, so in practice N <~ 30 (see the doc).
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

#include "models/mass_spring_chain.hpp"
#include "src/core/types.hpp"

namespace mor {

/// J(x) = A + sum_s c_s(x) H_s of the chain's first-order drift (see the file comment).
struct ChainJacobianFamily {
  Matrix A;               ///< n x n, the Jacobian at rest (linear part), n = 2 N
  std::vector<Matrix> H;  ///< N + 1 matrices H_s = -(0 0; M^{-1} delta_s delta_s^T 0), n x n
  Matrix B;               ///< n x m, (0; M^{-1} B_2)
  Matrix C;               ///< p x n, (Cp Cv)
  Matrix Delta;           ///< (N + 1) x N difference matrix with walls, e = Delta q
  Matrix M_inv;           ///< N x N
  double k_n = 0;         ///< the cubic coefficient: c_s(x) = 3 k_n e_s(x)^2
};
/// The family of `chain` (dense, O(N^3) storage: meant for N up to a few tens).
ChainJacobianFamily chain_jacobian_family(const MassSpringChain& chain);

/// The finite set of matrix inequalities equivalent to (or, for a region, sufficient for) the
/// family over the states considered: for every affine vertex A_k
///   A_k X + X A_k^T + G <= 0,
/// and for every homogeneous direction H_s
///   H_s X + X H_s^T <= 0,
/// with (X, A_k, G) = (P, A_k, B B^T) for controllability, (Q, A_k^T, C^T C) for observability.
struct LmiFamily {
  std::vector<Matrix> affine;       ///< A_0 = A first
  std::vector<Matrix> homogeneous;  ///< H_s (only over the whole state space)
  std::vector<Matrix> transposed() const;
};
/// rho: the region X_rho = {||Delta q||_2 <= rho} (m); rho = infinity: the whole state space.
/// k_n = 0: the single linear inequality. @throws InvalidArgument for rho <= 0 or NaN.
LmiFamily chain_lmi_family(const ChainJacobianFamily& family, double rho);

enum class LmiStatus {
  solved,         ///< DSDP converged and every inequality verified (see max_relative_residual)
  infeasible,     ///< DSDP found no feasible point (certificate of infeasibility of the LMIs)
  not_converged,  ///< iteration limit, small steps or a numerical failure; or not verified
};
std::string_view to_string(LmiStatus status);

struct DifferentialGramianOptions {
  double rho = 1.0;  ///< region ||Delta q||_2 <= rho (m); infinity: every state (global Gramians)
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

/// The GD-balanced truncation of the chain's first-order form, for any r.
struct DifferentialBalancing {
  ChainJacobianFamily family;
  GramianSolve controllability, observability;
  Vector sigma;  ///< GD Hankel singular values sqrt(lambda(P Q)), descending, n of them
  Matrix V, W;   ///< n x n balancing bases (columns in sigma's order), W^T V = I
  /// Position balancing of the Gramians' position blocks P_qq, Q_qq (N x N, descending values
  /// position_sigma), for the structure-preserving second-order projection of the chain.
  Vector position_sigma;
  Matrix V_q, W_q;  ///< N x N, W_q^T V_q = I
  double seconds_balancing = 0;
  bool solved() const {
    return controllability.status == LmiStatus::solved && observability.status == LmiStatus::solved;
  }
  /// 2 sum_{i > r} sigma_i, the bound on ||y - y_r||_{L2} / ||u||_{L2} (x(0) = 0).
  double error_bound(Index r) const;
};

/// Both Gramians and the balancing. If either SDP is not solved, the result carries its status
/// and message and no bases (check solved()). @throws InvalidArgument for bad options.
DifferentialBalancing differential_balancing(const MassSpringChain& chain,
                                             const DifferentialGramianOptions& options);

/// The GD-truncated chain, first order: z' = A_r z + G_r (E_r z)^3 + B_r u, y_r = C_r z, with
/// A_r = W_r^T A V_r, B_r = W_r^T B, C_r = C V_r, E_r = Delta V_{q,r} ((N+1) x r) and
/// G_r = -k_n W_{v,r}^T M^{-1} Delta^T (r x (N+1)): the exact reduced cubic in O(N r).
class GdTruncatedChain {
 public:
  /// @throws InvalidArgument unless bal.solved() and 1 <= r <= n.
  GdTruncatedChain(const DifferentialBalancing& bal, Index r);
  Index n() const { return A_r_.rows(); }
  /// dz = A_r z + G_r (E_r z)^3 + B_r u.
  void rhs(const Vector& z, const Vector& u, Vector& dz) const;
  void output(const Vector& z, Vector& y) const { y.noalias() = C_r_ * z; }
  Vector lift(const Vector& z) const { return V_ * z; }  ///< V_r z, size 2 N
  const Matrix& A_r() const { return A_r_; }
  const Matrix& B_r() const { return B_r_; }
  const Matrix& C_r() const { return C_r_; }

 private:
  Matrix A_r_, B_r_, C_r_, E_r_, G_r_, V_;
};

/// ||Delta q||_2 of the positions q (size N): the quantity the region X_rho bounds.
double elongation_norm(const Vector& q);

}  // namespace mor
