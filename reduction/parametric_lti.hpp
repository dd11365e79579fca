// SPDX-License-Identifier: GPL-3.0-or-later
// Parametric reduction of LTI systems by a global basis (Baur, Beattie, Benner & Gugercin,
// SIAM J. Sci. Comput. 33 (2011) 2489-2518, sec. 4): local bases V_j, W_j of a reduction method
// at training points mu_j, concatenated and compressed by an SVD into one pair V, W for the
// whole domain; every affine term of the full system is projected once,
//   E_r(mu) = sum_i theta_i(mu) W^T E_i V,   A_r(mu) = ...,   B_r(mu) = ..., C_r(mu) = ...,
// (second order: M_r, D_r, K_r, B_r, Cp_r, Cv_r with bases of the positions), so that the reduced
// model at any mu costs O(terms r^2 + terms r (m + p)), nothing of size n.
//
// Two-sided (Petrov-Galerkin, W from the local W_j) keeps the interpolation and balancing the
// local methods build; one-sided (Galerkin, W = V from the local V_j and W_j together) keeps
// symmetry and definiteness: a system with E = E^T > 0 and A + A^T < 0 (or M, D, K symmetric
// positive definite) stays asymptotically stable at every mu, which two-sided projection does not
// promise.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reduction/lti_operator.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/parametric.hpp"

namespace mor {

/// The global basis of local bases X_j (n x r_j each, any scaling): the leading r left singular
/// vectors of the stack [X_1 S_1, ..., X_k S_k], each column of X_j scaled to unit norm and then
/// by its weight (S_j: the column norms' inverses times w_j; no weights: 1), and every singular
/// value of the stack. The weights say how much each local direction matters: balanced
/// truncation's column i by sqrt(sigma_i / sigma_1), its Hankel singular value, so that the
/// compression keeps what dominates the local models rather than what most of them share.
struct GlobalBasis {
  Matrix U;   ///< n x r, orthonormal columns
  Vector sv;  ///< the stack's singular values, descending (their squares sum to sum w^2)
};
/// @throws InvalidArgument if there are no local bases, their row counts differ, r < 1, or r
///         exceeds the directions the stack spans (singular values above 1e-10 sigma_1), naming
///         both counts.
GlobalBasis global_basis(const std::vector<Matrix>& local, Index r,
                         const std::vector<Vector>& weights = {});

/// The reduced model at one parameter, in both forms the runner needs: the second-order form it
/// simulates (a first-order model embedded as from_first_order does) and the first-order
/// operator of the same transfer function (for the norms).
struct ReducedLtiAt {
  DenseSecondOrderSystem second_order;
  std::unique_ptr<DenseLtiOperator> first_order;
};

class ParametricLtiModel {
 public:
  /// First order: E_r(mu) = W^T E(mu) V, A_r(mu) = W^T A(mu) V, B_r(mu) = W^T B(mu),
  /// C_r(mu) = C(mu) V, D_ff; W empty: W = V.
  /// @throws InvalidArgument if V, W and the system's sizes differ.
  ParametricLtiModel(ParameterDomain domain, const ParametricDescriptorSystem& sys, const Matrix& V,
                     const Matrix& W);
  /// Second order (bases of the positions): M_r(mu) = W^T M(mu) V, D_r, K_r likewise,
  /// B_r(mu) = W^T B(mu), Cp_r(mu) = Cp(mu) V, Cv_r(mu) = Cv(mu) V; W empty: W = V.
  ParametricLtiModel(ParameterDomain domain, const ParametricSecondOrderSystem& sys,
                     const Matrix& V, const Matrix& W);

  /// The model from its reduced terms as terms() and feedthrough() give them (a stored model read
  /// back): "M", "D", "K", "B", "Cp", "Cv" (second order; feedthrough ignored) or "E", "A", "B",
  /// "C" and the feedthrough (p x m terms; first order).
  /// @throws InvalidArgument naming the role if one is missing or has no term, or a term's shape
  ///         does not fit one order r (E, A or M, D, K r x r, B r rows, C, Cp, Cv r columns).
  ParametricLtiModel(ParameterDomain domain,
                     std::vector<std::pair<std::string, AffineOperator<Matrix>>> terms,
                     AffineOperator<Matrix> feedthrough);

  /// The reduced model at mu.
  /// @throws InvalidArgument naming the parameter, its value and its range if mu is outside the
  ///         domain.
  ReducedLtiAt at(const Vector& mu) const;

  const ParameterDomain& domain() const { return domain_; }
  bool second_order() const { return second_order_; }
  Index r() const { return r_; }
  /// The reduced affine terms by role ("E", "A", "B", "C" or "M", "D", "K", "B", "Cp", "Cv"),
  /// for the record and export.
  const std::vector<std::pair<std::string, AffineOperator<Matrix>>>& terms() const {
    return terms_;
  }
  const AffineOperator<Matrix>& feedthrough() const { return D_ff_; }

 private:
  const AffineOperator<Matrix>& term(const char* role) const;

  ParameterDomain domain_;
  bool second_order_ = false;
  Index r_ = 0;
  std::vector<std::pair<std::string, AffineOperator<Matrix>>> terms_;
  AffineOperator<Matrix> D_ff_;
};

}  // namespace mor
