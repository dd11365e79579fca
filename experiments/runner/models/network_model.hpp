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
class NetworkFullModel final : public FullModel {
 public:
  NetworkFullModel(std::shared_ptr<const NonlinearNetwork> net, SparseBackend solver)
      : net_(std::move(net)), backend_(solver) {
    // G^T diag(phi') G is symmetric; M, D, K decide whether an SPD backend can serve.
    if (requires_spd(backend_) && !symmetric_iteration(net_->linear_system()))
      backend_ = SparseBackend::umfpack;
    ws_ = std::make_unique<NonlinearNetwork::Workspace>(*net_, backend_);
  }
  Index n() const override { return net_->n(); }
  Index n_inputs() const override { return net_->n_inputs(); }
  Index n_outputs() const override { return net_->n_outputs(); }
  bool is_linear() const override { return net_->is_linear(); }
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
  const SecondOrderSystem* second_order_system() const override { return &net_->linear_system(); }
  std::string linearisation() const override {
    return net_->is_linear() ? ""
                             : "rest (q = v = 0, where the nonlinear elements have no stiffness)";
  }
  void nonlinear_force(const Vector& q, Vector& g) const override {
    if (net_->is_linear())
      g.setZero(net_->n());
    else
      net_->nonlinear_force(q, g);
  }
  Index n_elements() const override { return net_->is_linear() ? 0 : net_->n_elements(); }
  EmpiricalBalancingResult empirical_balancing(const EmpiricalBalancingOptions& o) const override {
    return mor::empirical_balancing(*net_, o);
  }
  DifferentialBalancing differential_balancing(const DifferentialGramianOptions& o) const override {
    return mor::differential_balancing(*net_, o);
  }
  void element_forces(const Vector& q, Vector& f) const override { net_->element_forces(q, f); }
  EcswResult ecsw(const Matrix& V, const Matrix& W, const Matrix& Qr,
                  const EcswOptions& o) const override {
    return mor::ecsw(*net_, V, W, Qr, o);
  }
  ProjectedModel project(const Matrix& V, const Matrix& W,
                         const ProjectionOptions& o) const override {
    require(o.nonlinear != NonlinearTreatment::tensor || net_->is_linear(),
            "reduction.nonlinear = \"tensor\" is the chain's exact reduced cubic; a network's "
            "element laws take \"deim\", \"ecsw\" or \"full\"");
    require(o.nonlinear != NonlinearTreatment::ecsw || net_->is_linear() || o.ecsw != nullptr,
            "reduction.nonlinear = \"ecsw\": no ECSW weights were trained");
    return ProjectedModel(*net_, V, W, o);
  }
  IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q, Vector& v,
                            const StepObserver& observe, ProgressReporter* progress) override {
    return integrate(*net_, *ws_, input, o, q, v, observe, progress);
  }
  Index factorizations() const override { return ws_->factorizations(); }
  std::string solver_used() const override { return std::string(to_string(backend_)); }

 private:
  std::shared_ptr<const NonlinearNetwork> net_;
  SparseBackend backend_;
  std::unique_ptr<NonlinearNetwork::Workspace> ws_;
};

}  // namespace mor::experiments
