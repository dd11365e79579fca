// SPDX-License-Identifier: GPL-3.0-or-later
// The nonlinear mass-spring-damper chain of MORwiki ("Mass-Spring-Damper", after Kawano &
// Scherpen 2015), fixed to walls at both ends, for any N >= 1.
//
// MORwiki formulas (implemented exactly; the MATLAB snippet on that page contradicts them, see
// README):   p' = v,   M v' = K_w p + D_w v + f(p) + B u,   y = C p,
//   M = m I, K_w = k_l T, D_w = d T, T = tridiag(1, -2, 1),
//   f(p) = -k_n (U p)^3 - k_n (L p)^3,  (U p)_i = p_i - p_{i+1},  (L p)_i = p_i - p_{i-1},
//   p_0 = p_{N+1} = 0 (walls), B = e_N, C = e_N^T.
// This project's mechanical sign convention (src/systems/lti.hpp) writes the same dynamics as
//   M q'' + D q' + K q + g(q) = B u,   K = -K_w,  D = -D_w,  g = -f,
// with K, D positive definite and g = grad V, V(q) = k_n/4 sum_{s=0}^{N} (q_{s+1} - q_s)^4 the
// energy of the N + 1 cubic springs (s = 0 and s = N tie the end masses to the walls).
//
// Options beyond the benchmark: Rayleigh damping D = alpha M + beta K in place of d T, and
// inputs and outputs at any masses (outputs as positions or velocities).
//
// The integrator hot path (force, iteration matrix) is matrix-free: a three-point stencil over
// q and v, one pass over memory, O(N). The iteration matrix is tridiagonal and SPD: it is
// assembled into its two diagonals and factorized by TridiagonalSpdSolver in O(N), with no
// symbolic analysis, transpose or pattern (src/linalg/tridiagonal_solver.hpp). The sparse
// matrices are built only when asked for.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "src/core/types.hpp"
#include "src/integrators/second_order_model.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/linalg/tridiagonal_solver.hpp"
#include "src/systems/lti.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// The damping of a spring model (the chain, the lattice): damping = "chain" or "rayleigh".
enum class SpringDamping {
  dampers,   ///< dampers in parallel with the springs, D = d (-T) on the chain (the benchmark)
  rayleigh,  ///< D = alpha M + beta K: a well-damped variant
};
enum class OutputQuantity { position, velocity };
/// How a chain's workspace factorizes its tridiagonal SPD iteration matrix.
enum class ChainSolver {
  tridiagonal,  ///< TridiagonalSpdSolver: O(N), no symbolic work; the fastest exact path
  sparse,       ///< a SuiteSparse backend through SparseSolver (the generic path; cross-checks)
};

struct ChainParameters {
  Index N = 1000;    ///< number of masses, >= 1
  double m = 1.0;    ///< mass of each body, > 0
  double k_l = 1.0;  ///< linear spring stiffness, >= 0
  double d = 1.0;    ///< damper coefficient (SpringDamping::dampers), >= 0
  double k_n = 2.0;  ///< cubic spring coefficient, >= 0 (hardening)
  SpringDamping damping = SpringDamping::dampers;
  double alpha = 0.0;  ///< Rayleigh mass coefficient, >= 0
  double beta = 0.0;   ///< Rayleigh stiffness coefficient, >= 0
  /// 1-based indices of the masses the inputs act on (force); empty means {N}.
  std::vector<Index> inputs;
  /// 1-based indices of the observed masses; empty means {N}.
  std::vector<Index> outputs;
  OutputQuantity output_quantity = OutputQuantity::position;
};

/// @throws InvalidArgument naming the parameter and its value if any is out of range or not
/// finite (N <= 0, m <= 0, negative stiffness or damping, mass indices outside [1, N]).
void validate(const ChainParameters& p);

/// The constants the chain and the lattice share: m > 0; k_l, d, k_n, alpha, beta >= 0; all
/// finite. @throws InvalidArgument "<model>: parameter <name> must be ..., got <value>".
void validate_spring_constants(const char* model, double m, double k_l, double d, double k_n,
                               double alpha, double beta);

class MassSpringChain {
 public:
  /// @throws InvalidArgument (see validate).
  explicit MassSpringChain(const ChainParameters& params);

  const ChainParameters& parameters() const { return params_; }
  Index n() const { return n_; }
  Index n_inputs() const { return static_cast<Index>(in_.size()); }
  Index n_outputs() const { return static_cast<Index>(out_.size()); }
  bool is_linear() const { return params_.k_n == 0.0; }

  /// F = B u - D v - K q - g(q), matrix-free. q, v: any Eigen column expressions of size n.
  template <class Q, class V>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
             Vector& F) const;
  /// The same force handed over in blocks (see SecondOrderModel in
  /// src/integrators/second_order_model.hpp): sink(i0, len, f) with f the rows
  /// [i0, i0 + len) of F, valid during the call, blocks in increasing order.
  template <class Q, class V, class Sink>
  void force_blocks(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
                    Sink&& sink) const;
  void mass(const Vector& x, Vector& out) const { out = params_.m * x; }
  std::optional<double> uniform_mass() const { return params_.m; }
  /// y = Cp q + Cv v.
  void output(const Vector& q, const Vector& v, Vector& y) const;

  /// g(q) = -f(q), the cubic spring forces.
  void nonlinear_force(const Vector& q, Vector& g) const;
  /// dg/dq(q), n x n tridiagonal symmetric positive semidefinite.
  SparseMatrix nonlinear_jacobian(const Vector& q) const;

  /// The linear part (M, D, K, B, Cp, Cv) in the mechanical sign convention.
  SecondOrderSystem linear_system() const;
  /// The linear part as E x' = A x + B u, x = [q; v] (2n states).
  DescriptorSystem descriptor_system() const;
  /// The chain as a network (src/systems/nonlinear_network.hpp): the linear part, G the
  /// (N+1) x N difference matrix with both wall springs ((G q)_s = q_s - q_{s-1}, walls 0) and
  /// the law phi(s) = k_n s^3 (coefficients (0, k_n, 0, 0)); m = 0 for a linear chain.
  NonlinearNetwork network() const;

  /// Energies for balance checks: T = v'Mv/2, V = q'Kq/2 + k_n/4 sum e^4, P_d = v'Dv,
  /// P_in = v'Bu (power of the inputs).
  double kinetic_energy(const Vector& v) const;
  double potential_energy(const Vector& q) const;
  double dissipation_power(const Vector& v) const;
  double input_power(const Vector& v, const Vector& u) const;

  /// Factorizations and scratch for the integrators.
  class Workspace {
   public:
    /// solver: how the iteration matrix is factorized; backend: the SuiteSparse solver when
    /// solver is ChainSolver::sparse, ignored otherwise (the tridiagonal path is exact and
    /// faster than any of them, so an experiment's `solver` key does not slow the chain down).
    explicit Workspace(const MassSpringChain& chain, SparseBackend backend = SparseBackend::cholmod,
                       ChainSolver solver = ChainSolver::tridiagonal);
    void solve_mass(const Vector& r, Vector& x) const { x = r / chain_.params_.m; }
    /// S = a M + b D + c (K + dg/dq(q)), a, b, c >= 0 (S is then SPD), assembled in O(n) and
    /// factorized; skipped for a linear chain with unchanged a, b, c. Size: q n.
    /// @throws NumericalError if S is not positive definite (a or m not positive) or not finite.
    void factorize_iteration(double a, double b, double c, const Vector& q);
    /// x = S^{-1} r for the last factorize_iteration; x may alias r. Sizes: r, x n.
    void solve_iteration(const Vector& r, Vector& x);
    /// Implicit midpoint's Newton iteration in two passes over memory (StreamedMidpointModel,
    /// src/integrators/second_order_model.hpp), on the tridiagonal path: the first pass
    /// generates the stage state, the residual and (if refactorize) S's rows block by block
    /// and runs S's factorization and forward sweep on them while they are in L1; the second
    /// runs the back sweep and updates x with its norms. Where the streamed factorization
    /// would fall back to LAPACK, the plain calls run instead (and throw as they do).
    bool midpoint_streamed() const { return streamed_ && !sparse_; }
    /// Off: integrators take the plain calls (factorize_iteration, force, solve_iteration) on
    /// the tridiagonal path too; for the tests and benchmarks that compare the two.
    void use_streamed(bool on) { streamed_ = on; }
    /// x -= S^{-1} R(x), R(x) = M (x - v) - h F(q + h/2 v_s, v_s, u), v_s = (v + x) / 2,
    /// S = M + h/2 D + h^2/4 (K + dg/dq) at that stage if refactorize (else the last S; for a
    /// linear chain with an unchanged h, always the last). If bound (and the chain is
    /// nonlinear), the back sweep also takes the residual at the new x, for
    /// NewtonNorms::next = ||R(x)||_inf / iteration_excess(). Sizes: q, v, x n; u n_inputs().
    /// @throws NumericalError as factorize_iteration.
    NewtonNorms midpoint_newton(bool refactorize, bool bound, double h, const Vector& q,
                                const Vector& v, const Vector& u, Vector& x);
    /// min_i (S_ii - sum_{j != i} |S_ij|) of the last iteration matrix (BoundedIterationModel):
    /// at least a m = m for implicit midpoint, since K + dg/dq of hardening springs and the
    /// chain's D are weakly diagonally dominant; 0 where S is not strictly diagonally dominant
    /// (no bound), and before the first factorization.
    double iteration_excess() const { return excess_; }
    Index factorizations() const { return factorizations_; }
    ChainSolver solver() const { return solver_kind_; }
    /// "tridiagonal", or the SuiteSparse backend's name ("cholmod", ...), for results files.
    std::string_view solver_name() const;

   private:
    const MassSpringChain& chain_;
    ChainSolver solver_kind_;
    TridiagonalSpdSolver tridiagonal_;
    Vector diag_, off_;                     // S's diagonal (n) and off-diagonal (n - 1)
    std::unique_ptr<SparseSolver> sparse_;  // ChainSolver::sparse only
    SparseMatrix S_;                        // ChainSolver::sparse: tridiagonal, both triangles
    bool streamed_ = true;
    Vector y_;                         // midpoint_newton: the forward sweep's L^{-1} R
    Vector stage_, residual_, delta_;  // midpoint_newton's plain fallback
    double a_ = -1, b_ = -1, c_ = -1;
    double excess_ = 0.0;  // iteration_excess()
    Index factorizations_ = 0;
  };

 private:
  /// Rows [0, len) of the force without inputs from q and v at rows -1 .. len (valid pointers;
  /// the walls as zeros): the three-point stencil.
  void stencil_rows(const double* q, const double* v, Index len, double* out) const;
  /// The force of lazy q, v block by block: rows [i0, i0 + len) go to target(i0, buffer) (an
  /// L1 buffer of the block's size, or any other storage), then sink(i0, len, rows) runs.
  template <class Q, class V, class Target, class Sink>
  void blocks(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
              Target&& target, Sink&& sink) const;

  ChainParameters params_;
  Index n_;
  std::vector<Index> in_, out_;  // 0-based mass indices
  // Three-point stencils: (K q)_i = k_diag q_i + k_off (q_{i-1} + q_{i+1}), likewise D.
  double k_diag_, k_off_, d_diag_, d_off_;
};

// ---------------------------------------------------------------------------------------------

[[gnu::always_inline]] inline void MassSpringChain::stencil_rows(const double* q, const double* v,
                                                                 Index len, double* out) const {
  const double kd = k_diag_, ko = k_off_, dd = d_diag_, dof = d_off_, kn = params_.k_n;
  for (Index i = 0; i < len; ++i) {
    const double qm = q[i - 1], q0 = q[i], qp = q[i + 1];
    const double el = q0 - qm, er = q0 - qp;
    out[i] = -(kd * q0 + ko * (qm + qp)) - (dd * v[i] + dof * (v[i - 1] + v[i + 1])) -
             kn * (el * el * el + er * er * er);
  }
}

template <class Q, class V>
void MassSpringChain::force(const Eigen::MatrixBase<Q>& q_expr, const Eigen::MatrixBase<V>& v_expr,
                            const Vector& u, Vector& F) const {
  const Index N = n_;
  F.resize(N);
  double* f = F.data();
  constexpr bool in_memory =
      (Q::Flags & Eigen::DirectAccessBit) && Q::InnerStrideAtCompileTime == 1 &&
      (V::Flags & Eigen::DirectAccessBit) && V::InnerStrideAtCompileTime == 1;
  if constexpr (in_memory) {
    // Plain vectors: the stencil straight from memory; the end rows see the walls.
    const double* q = q_expr.derived().data();
    const double* v = v_expr.derived().data();
    const double qe[3] = {0.0, q[0], N > 1 ? q[1] : 0.0}, ve[3] = {0.0, v[0], N > 1 ? v[1] : 0.0};
    stencil_rows(qe + 1, ve + 1, 1, f);
    if (N > 1) {
      stencil_rows(q + 1, v + 1, N - 2, f + 1);
      const double ql[3] = {q[N - 2], q[N - 1], 0.0}, vl[3] = {v[N - 2], v[N - 1], 0.0};
      stencil_rows(ql + 1, vl + 1, 1, f + N - 1);
    }
    for (std::size_t j = 0; j < in_.size(); ++j) f[in_[j]] += u[static_cast<Index>(j)];
  } else {
    blocks(
        q_expr, v_expr, u, [f](Index i0, double*) { return f + i0; },
        [](Index, Index, const double*) {});
  }
}

template <class Q, class V, class Sink>
void MassSpringChain::force_blocks(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v,
                                   const Vector& u, Sink&& sink) const {
  blocks(
      q, v, u, [](Index, double* buffer) { return buffer; }, sink);
}

template <class Q, class V, class Target, class Sink>
void MassSpringChain::blocks(const Eigen::MatrixBase<Q>& q_expr, const Eigen::MatrixBase<V>& v_expr,
                             const Vector& u, Target&& target, Sink&& sink) const {
  // q and v (lazy expressions: an RK4 or Newton stage) are evaluated once per entry into
  // buffers that stay in L1, kBlock masses at a time, so a stage costs one pass over its
  // operands; a sink that consumes F block by block spares F its trip to memory.
  constexpr Index kBlock = 256;
  alignas(64) double qb[kBlock + 2], vb[kBlock + 2], fb[kBlock];
  const Index N = n_;
  for (Index i0 = 0; i0 < N; i0 += kBlock) {
    const Index len = std::min(kBlock, N - i0);
    // Masses i0 - 1 .. i0 + len at buffer positions 0 .. len + 1 (0 for a wall).
    Eigen::Map<Vector>(qb + 1, len) = q_expr.derived().segment(i0, len);
    Eigen::Map<Vector>(vb + 1, len) = v_expr.derived().segment(i0, len);
    qb[0] = i0 > 0 ? q_expr.derived().coeff(i0 - 1) : 0.0;
    vb[0] = i0 > 0 ? v_expr.derived().coeff(i0 - 1) : 0.0;
    qb[len + 1] = i0 + len < N ? q_expr.derived().coeff(i0 + len) : 0.0;
    vb[len + 1] = i0 + len < N ? v_expr.derived().coeff(i0 + len) : 0.0;
    double* out = target(i0, fb);
    stencil_rows(qb + 1, vb + 1, len, out);
    for (std::size_t j = 0; j < in_.size(); ++j)
      if (in_[j] >= i0 && in_[j] < i0 + len) out[in_[j] - i0] += u[static_cast<Index>(j)];
    sink(i0, len, static_cast<const double*>(out));
  }
}

}  // namespace mor
