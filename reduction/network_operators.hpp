// SPDX-License-Identifier: GPL-3.0-or-later
// A nonlinear second-order network M q'' + D q' + K q + G^T phi(G q) = B u, y = Cp q + Cv q',
// as the snapshot methods use it: its data (src/systems/nonlinear_network.hpp) and the operators
// they apply to it, the nodal force g(q) = G^T phi(G q) and the element forces phi(G q) that DEIM
// samples, ECSW's weighted elements, the projection on q = V q_r, and position balancing by
// empirical and by differential Gramians. A full model of this structure
// (ModelStructure::Form::network: the chain, network files, the lattice) hands this object to
// the methods, which never ask the model's kind. Every operator has the network's own
// implementation; a model that knows a faster evaluation of the same mathematics (the chain's
// cubic stencil, which needs no G) overrides the evaluation, the projection and the empirical
// Gramians' simulations, and is otherwise its network.
#pragma once

#include "reduction/differential_balancing.hpp"
#include "reduction/ecsw.hpp"
#include "reduction/empirical_gramians.hpp"
#include "reduction/projected_model.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

class NetworkOperators {
 public:
  virtual ~NetworkOperators() = default;

  /// The network's data: M, D, K, B, Cp, Cv, G and phi. Refers to the model's data.
  virtual const NonlinearNetwork& network() const = 0;
  /// g(q) = G^T phi(G q), size n; zero for a linear network.
  virtual void nonlinear_force(const Vector& q, Vector& g) const;
  /// The network projected on q = V q_r with the residual orthogonal to range(W) (W empty:
  /// Galerkin), its force treated as o says (NonlinearTreatment::tensor needs a model that
  /// offers an exact reduced tensor; the network's own projection refuses it unless phi = 0).
  /// @throws InvalidArgument as ProjectedModel's construction, or for a treatment the
  ///         network does not offer.
  virtual ProjectedModel project(const Matrix& V, const Matrix& W,
                                 const ProjectionOptions& o) const;
  /// Position balancing by empirical Gramians of simulated impulse and initial-state responses
  /// (reduction/empirical_gramians.hpp).
  virtual EmpiricalBalancingResult empirical_balancing(const EmpiricalBalancingOptions& o) const;

  /// m_e, the nonlinear elements (rows of phi(G q)); 0 for a linear network.
  Index n_elements() const;
  /// phi(G q), size n_elements().
  void element_forces(const Vector& q, Vector& f) const { network().element_forces(q, f); }
  /// ECSW's elements and weights (reduction/ecsw.hpp) for the projection on V (W), trained on
  /// the reduced snapshots Qr (r x ns).
  EcswResult ecsw(const Matrix& V, const Matrix& W, const Matrix& Qr, const EcswOptions& o) const {
    return mor::ecsw(network(), V, W, Qr, o);
  }
  /// Balancing by generalized differential Gramians (SDPs; reduction/differential_balancing.hpp).
  DifferentialBalancing differential_balancing(const DifferentialGramianOptions& o) const {
    return mor::differential_balancing(network(), o);
  }

 protected:
  NetworkOperators() = default;
  NetworkOperators(const NetworkOperators&) = default;
  NetworkOperators& operator=(const NetworkOperators&) = default;
};

}  // namespace mor
