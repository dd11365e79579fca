// SPDX-License-Identifier: GPL-3.0-or-later
// The full model of the kinds that are nonlinear networks (src/systems/nonlinear_network.hpp):
// "network" (from files) and "lattice". Simulated by the fixed-step integrators on the network
// and its sparse workspace; projected (pod, DEIM, ECSW) onto reduction/projected_model.hpp with
// the network force evaluator (reduction/network_force.hpp).
#pragma once

#include <memory>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/lti_model.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor::experiments {

/// The symmetric-positive-definite backend asked for is replaced by UMFPACK when M, D or K is
/// not symmetric (G^T diag(phi') G always is).
class NetworkFullModel final : public FullModel, public NetworkOperators {
 public:
  NetworkFullModel(std::shared_ptr<const NonlinearNetwork> net, SparseBackend solver)
      : net_(std::move(net)), backend_(solver) {
    // G^T diag(phi') G is symmetric; M, D, K decide whether an SPD backend can serve.
    if (requires_spd(backend_) && !symmetric_iteration(net_->linear_system()))
      backend_ = SparseBackend::umfpack;
    ws_ = std::make_unique<NonlinearNetwork::Workspace>(*net_, backend_);
    // A nonlinear network's linearisation about rest (q = v = 0), where phi'(0) = 0 (phi has
    // no linear term: that lives in K), has the same M, D, K.
    set_facts({net_->n(), net_->n_inputs(), net_->n_outputs(), false, net_->is_linear(),
               &net_->linear_system(),
               net_->is_linear()
                   ? ""
                   : "rest (q = v = 0, where the nonlinear elements have no stiffness)",
               std::string(to_string(backend_))});
  }
  void output(const Vector& q, const Vector& v, const Vector&, Vector& y) const override {
    net_->output(q, v, y);
  }
  std::optional<double> energy(const Vector& q, const Vector& v) const override {
    return net_->kinetic_energy(v) + net_->potential_energy(q);
  }
  /// The linear network; a nonlinear one's linearisation about rest (q = v = 0), where
  /// phi'(0) = 0 (phi has no linear term: that lives in K): the same M, D, K.
  std::unique_ptr<LtiOperator> lti_operator() const override {
    return std::make_unique<SecondOrderLtiOperator>(net_->linear_system());
  }
  const NetworkOperators* network_operators() const override { return this; }
  const NonlinearNetwork& network() const override { return *net_; }
  IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q, Vector& v,
                            const StepObserver& observe, ProgressReporter* progress) override {
    return integrate(*net_, *ws_, input, o, q, v, observe, progress);
  }
  Index factorizations() const override { return ws_->factorizations(); }

 private:
  std::shared_ptr<const NonlinearNetwork> net_;
  SparseBackend backend_;
  std::unique_ptr<NonlinearNetwork::Workspace> ws_;
};

}  // namespace mor::experiments
