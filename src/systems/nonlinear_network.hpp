// SPDX-License-Identifier: GPL-3.0-or-later
// A nonlinear second-order network: linear springs, dampers and masses plus m nonlinear
// elements, each acting on one linear combination of the coordinates (a spring's elongation):
//
//     M q'' + D q' + K q + G^T phi(G q) = B u,      y = Cp q + Cv q',
//
// n coordinates, G sparse m x n (row e: the element quantity s_e = (G q)_e), phi acting element
// by element, phi_e(s) = c_e2 s^2 + c_e3 s^3 + c_e4 s^4 + c_e5 s^5 (the linear part lives in K),
// coefficients per element (m x 4) or one row for all (1 x 4). This project's sign convention
// (src/systems/lti.hpp): M SPD, D and K positive semidefinite, and G^T phi(G q) = grad V_n,
// V_n(q) = sum_e Phi_e((G q)_e), Phi_e' = phi_e, the energy of the nonlinear elements.
// A linear model is the case m = 0. The law is one function (element_law below); a new law is
// a new body of it.
//
// As an integrator model (src/integrators/second_order_model.hpp) it is constant data; the
// Newton matrix S = a M + b D + c (K + G^T diag(phi'(G q)) G) has one pattern for every q,
// analysed once by the workspace's sparse solver (src/linalg/sparse_solver.hpp) and then only
// refactorized numerically, the values scattered through index maps computed once.
//
// Restricted evaluation (pyMOR's Operator.restricted(dofs)): "these rows of G^T phi(G q), from
// these entries of q", and "these elements phi((G q)_e)" (UDEIM's unassembled rows): what a
// hyper-reduced model (reduction/network_force.hpp) needs of the network, never its stencil.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "src/core/types.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/systems/lti.hpp"

namespace mor {

/// The element law: phi(s) and phi'(s) for the coefficients c[0..3] of s^2 .. s^5 (Horner).
[[gnu::always_inline]] inline void element_law(const double* c, double s, double& phi,
                                               double& dphi) {
  phi = s * s * (c[0] + s * (c[1] + s * (c[2] + s * c[3])));
  dphi = s * (2.0 * c[0] + s * (3.0 * c[1] + s * (4.0 * c[2] + s * 5.0 * c[3])));
}
/// Phi(s) = c0 s^3 / 3 + c1 s^4 / 4 + c2 s^5 / 5 + c3 s^6 / 6, the energy with Phi' = phi.
inline double element_energy(const double* c, double s) {
  return s * s * s * (c[0] / 3.0 + s * (c[1] / 4.0 + s * (c[2] / 5.0 + s * c[3] / 6.0)));
}

/// The rows of the network's nonlinear force a restricted evaluation computes, and what it
/// needs: elements (rows of G) and source coordinates (entries of q), with the local pieces of
/// G and G^T. Indices are 0-based and ascending (rows: in the order asked for).
struct RestrictedNonlinearity {
  std::vector<Index> rows;      ///< the rows of G^T phi(G q) computed (empty: element sampling)
  std::vector<Index> elements;  ///< the elements they need (or the elements asked for)
  std::vector<Index> dofs;      ///< the entries of q those elements read
  SparseMatrix G_local;         ///< G(elements, dofs), elements x dofs
  SparseMatrix A_local;         ///< G^T(rows, elements), rows x elements (empty: elements)
  Matrix coefficients;          ///< coefficients of the elements, elements x 4

  /// The element rows G(elements, :) X of a dense X (n x c) through the local G and the dofs it
  /// reads: O(nnz c), nothing of size n formed.
  Matrix element_rows(const Matrix& X) const { return G_local * X(dofs, Eigen::all); }
};

class NonlinearNetwork {
 public:
  /// sys: M, D, K, B, Cp, Cv (validated; M, D, K symmetric is the caller's promise for SPD
  /// solvers); G: m x n (m = 0 for a linear model); coefficients: m x 4 or 1 x 4 (one law for
  /// all), finite.
  /// @throws InvalidArgument naming the size or entry that does not fit.
  NonlinearNetwork(SecondOrderSystem sys, SparseMatrix G, Matrix coefficients);

  // --- SecondOrderModel -----------------------------------------------------------------------
  Index n() const { return sys_.n(); }
  Index n_inputs() const { return sys_.n_inputs(); }
  Index n_outputs() const { return sys_.n_outputs(); }
  /// True if m = 0 or every coefficient is zero.
  bool is_linear() const { return linear_; }
  /// F = B u - D v - K q - G^T phi(G q). q, v: any Eigen column expressions of size n (each
  /// evaluated once).
  template <class Q, class V>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
             Vector& F) const;
  void mass(const Vector& x, Vector& out) const { out.noalias() = sys_.M * x; }
  /// m if M = m I exactly, else nullopt.
  std::optional<double> uniform_mass() const { return uniform_mass_; }
  void output(const Vector& q, const Vector& v, Vector& y) const {
    y.noalias() = sys_.Cp * q;
    y.noalias() += sys_.Cv * v;
  }

  // --- Structure --------------------------------------------------------------------------------
  Index n_elements() const { return G_.rows(); }
  const SecondOrderSystem& linear_system() const { return sys_; }
  const SparseMatrix& G() const { return G_; }
  /// m x 4 (expanded from a 1 x 4 row).
  const Matrix& coefficients() const { return coefficients_; }
  /// One row (1 x 4) if every element has the same law, else the m x 4 coefficients.
  Matrix compact_coefficients() const;

  /// g(q) = G^T phi(G q), size n.
  void nonlinear_force(const Eigen::Ref<const Vector>& q, Vector& g) const;
  /// phi(G q) element by element, size m.
  void element_forces(const Eigen::Ref<const Vector>& q, Vector& f) const;
  /// dg/dq = G^T diag(phi'(G q)) G, n x n symmetric, in the pattern of G^T G.
  SparseMatrix nonlinear_jacobian(const Eigen::Ref<const Vector>& q) const;

  /// The rows `rows` of G^T phi(G q) and what they need: every element in their support.
  /// @throws InvalidArgument for a row outside [0, n) or repeated.
  RestrictedNonlinearity restricted_rows(const std::vector<Index>& rows) const;
  /// The elements `elements` (rows of phi(G q)) and the entries of q they read.
  /// @throws InvalidArgument for an element outside [0, m) or repeated.
  RestrictedNonlinearity restricted_elements(const std::vector<Index>& elements) const;

  /// Energies for balance checks: T = v'Mv/2, V = q'Kq/2 + sum_e Phi_e((G q)_e), P_d = v'Dv,
  /// P_in = v'Bu.
  double kinetic_energy(const Vector& v) const;
  double potential_energy(const Vector& q) const;
  double dissipation_power(const Vector& v) const;
  double input_power(const Vector& v, const Vector& u) const;

  /// Factorizations and scratch for the integrators: S = a M + b D + c (K + dg/dq(q)) in the
  /// union pattern of M, D, K and G^T G, analysed once, refactorized per call.
  class Workspace {
   public:
    /// backend: the sparse solver of M and S (an SPD backend needs symmetric M, D, K and a
    /// positive definite S, i.e. a law with phi' >= 0 where the run goes).
    explicit Workspace(const NonlinearNetwork& network,
                       SparseBackend backend = SparseBackend::cholmod);
    void solve_mass(const Vector& r, Vector& x);
    /// Skipped for a linear network with unchanged (a, b, c).
    /// @throws NumericalError as the backend's factorization.
    void factorize_iteration(double a, double b, double c, const Vector& q);
    void solve_iteration(const Vector& r, Vector& x) { iteration_->solve(r, x); }
    /// min_i (|S_ii| - sum_{j != i} |S_ij|) of the last iteration matrix, 0 if S is not
    /// strictly diagonally dominant by rows (BoundedIterationModel,
    /// src/integrators/second_order_model.hpp). Networks whose G holds differences of
    /// coordinates (springs between nodes and to walls) with phi' >= 0 have K + dg/dq weakly
    /// dominant, so the excess is about a m for a lumped mass m.
    double iteration_excess() const { return excess_; }
    Index factorizations() const { return factorizations_; }
    SparseBackend backend() const { return iteration_->backend(); }

   private:
    const NonlinearNetwork& net_;
    std::unique_ptr<SparseSolver> mass_, iteration_;
    SparseMatrix S_;
    // Positions in S_.valuePtr() of the entries of M, D, K (in their storage order), and the
    // element contributions S(i, j) += c phi_e' G_ei G_ej as (position, element, G_ei G_ej).
    std::vector<Index> m_pos_, d_pos_, k_pos_, j_pos_, j_elem_;
    std::vector<double> j_coef_;
    Vector s_, dphi_;
    Vector row_diag_, row_off_;  // iteration_excess: |S_ii| and sum_{j != i} |S_ij| by row
    double excess_ = 0.0;
    double a_ = -1, b_ = -1, c_ = -1;
    Index factorizations_ = 0;
  };

 private:
  SecondOrderSystem sys_;
  SparseMatrix G_, Gt_;  // G (m x n) and G^T, both compressed
  Matrix coefficients_;  // m x 4
  bool linear_ = true;
  std::optional<double> uniform_mass_;
};

// ---------------------------------------------------------------------------------------------

template <class Q, class V>
void NonlinearNetwork::force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v,
                             const Vector& u, Vector& F) const {
  const Eigen::Ref<const Vector> qr(q.derived());
  const Eigen::Ref<const Vector> vr(v.derived());
  F.resize(n());
  F.noalias() = sys_.B * u;
  F.noalias() -= sys_.D * vr;
  F.noalias() -= sys_.K * qr;
  if (!linear_) {
    // The element forces phi(G q), m long, every Newton iteration: a per-thread scratch, so the
    // hot path allocates nothing (the model stays constant data shared by threads).
    thread_local Vector f;
    element_forces(qr, f);
    F.noalias() -= Gt_ * f;
  }
}

}  // namespace mor
