// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/models/lti_model.hpp"

#include "src/core/errors.hpp"

namespace mor::experiments {
namespace {

bool exactly_symmetric(const SparseMatrix& X) {
  if (X.rows() != X.cols()) return false;
  const SparseMatrix diff = X - SparseMatrix(X.transpose());
  for (Index k = 0; k < diff.nonZeros(); ++k)
    if (diff.valuePtr()[k] != 0.0) return false;
  return true;
}

SecondOrderSystem second_order_form(const LinearSystem& s) {
  if (const auto* d = std::get_if<DescriptorSystem>(&s)) return embed_in_second_order(*d);
  return std::get<SecondOrderSystem>(s);
}

}  // namespace

bool symmetric_iteration(const SecondOrderSystem& s) {
  return exactly_symmetric(s.M) && exactly_symmetric(s.D) && exactly_symmetric(s.K);
}

LtiFullModel::LtiFullModel(std::shared_ptr<const LinearSystem> system, SparseBackend solver)
    : system_(std::move(system)), model_(second_order_form(*system_)), backend_(solver) {
  if (requires_spd(backend_) && !symmetric_iteration(model_.system()))
    backend_ = SparseBackend::umfpack;
  if (const auto* d = std::get_if<DescriptorSystem>(system_.get())) D_ff_ = d->D_ff;
  workspace_ = std::make_unique<SparseSecondOrderModel::Workspace>(model_, backend_);
  set_facts({model_.n(), model_.n_inputs(), model_.n_outputs(),
             std::holds_alternative<DescriptorSystem>(*system_), true,
             std::get_if<SecondOrderSystem>(system_.get()), "", std::string(to_string(backend_))});
}

void LtiFullModel::output(const Vector& q, const Vector& v, const Vector& u, Vector& y) const {
  model_.output(q, v, y);
  if (D_ff_.size() > 0) y.noalias() += D_ff_ * u;
}

std::unique_ptr<LtiOperator> LtiFullModel::lti_operator() const {
  if (const auto* d = std::get_if<DescriptorSystem>(system_.get()))
    return std::make_unique<SparseLtiOperator>(*d);
  return std::make_unique<SecondOrderLtiOperator>(std::get<SecondOrderSystem>(*system_));
}

IntegrationStats LtiFullModel::simulate(const Signal& input, const IntegratorOptions& o, Vector& q,
                                        Vector& v, const StepObserver& observe,
                                        ProgressReporter* progress) {
  return integrate(model_, *workspace_, input, o, q, v, observe, progress);
}

}  // namespace mor::experiments
