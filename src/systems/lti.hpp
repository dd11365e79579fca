// SPDX-License-Identifier: GPL-3.0-or-later
// Linear time-invariant systems in the two forms the reduction modules consume.
//
// Sign convention (mechanical, as in Reis & Stykel and pyMOR's SecondOrderModel):
//     M q'' + D q' + K q = B u,      y = C_p q + C_v q'
// with M symmetric positive definite and D, K symmetric positive semidefinite for passive
// mechanical systems. The MORwiki chain writes its matrices with the opposite sign
// (M v' = K p + D v + ...); models convert at construction (see models/mass_spring_chain.hpp).
#pragma once

#include "src/core/types.hpp"

namespace mor {

/// Second-order LTI system. Sizes: n coordinates, m inputs, p outputs.
///   M, D, K : n x n      B : n x m      Cp, Cv : p x n
struct SecondOrderSystem {
  SparseMatrix M, D, K, B, Cp, Cv;

  Index n() const { return M.rows(); }
  Index n_inputs() const { return B.cols(); }
  Index n_outputs() const { return Cp.rows(); }
};

/// First-order descriptor system  E x' = A x + B u,  y = C x + D_ff u.
/// Sizes: n states, m inputs, p outputs.  E, A : n x n   B : n x m   C : p x n   D_ff : p x m
struct DescriptorSystem {
  SparseMatrix E, A, B, C;
  Matrix D_ff;  ///< feed-through (the "D" of (E, A, B, C, D)); named apart from the damping D

  Index n() const { return A.rows(); }
  Index n_inputs() const { return B.cols(); }
  Index n_outputs() const { return C.rows(); }
};

/// Checks the sizes of a second-order system; @throws InvalidArgument naming the mismatch.
void validate(const SecondOrderSystem& sys);
/// Checks the sizes of a descriptor system; @throws InvalidArgument naming the mismatch.
void validate(const DescriptorSystem& sys);

/// The first-order form with x = [q; v]:
///   E = [I 0; 0 M],  A = [0 I; -K -D],  B = [0; B],  C = [Cp Cv],  D_ff = 0.
/// Its 2n x 2n matrices are sparse; nothing dense of size n is formed.
DescriptorSystem to_descriptor(const SecondOrderSystem& sys);

/// The exact second-order embedding of E x' = A x + B u, y = C x (+ D_ff u, which the embedding
/// cannot carry: callers add it):  M = E, D = -A, K = 0, B = B, Cp = 0, Cv = C, with x = q'.
/// The velocity equation is the descriptor system itself, so the second-order integrators solve
/// with E - h/2 A (implicit midpoint) and never form E^{-1} A (the sparse counterpart of
/// from_first_order in src/systems/dense_model.hpp).
SecondOrderSystem embed_in_second_order(const DescriptorSystem& sys);

}  // namespace mor
