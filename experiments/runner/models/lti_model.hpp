// SPDX-License-Identifier: GPL-3.0-or-later
// A full model that is a sparse linear system, first-order (E x' = A x + B u, y = C x + D u)
// or second-order (M q'' + D q' + K q = B u, y = Cp q + Cv q'), for the kinds that bring their
// own matrices (model files; the linear chain goes through its own matrix-free kind). Simulated
// by the second-order integrators on SparseSecondOrderModel, first-order systems through the
// exact embedding of src/systems/lti.hpp (embed_in_second_order: descriptor form, no E^{-1} A).
#pragma once

#include <memory>
#include <variant>

#include "experiments/runner/model_kind.hpp"
#include "src/systems/sparse_model.hpp"

namespace mor::experiments {

/// The symmetric-positive-definite backend asked for is replaced by UMFPACK when the iteration
/// matrices cannot be symmetric (a nonsymmetric E, A or M, D, K).
class LtiFullModel final : public FullModel {
 public:
  /// @throws InvalidArgument if the sizes are inconsistent; NumericalError if E (or M) cannot
  ///         be factorized (singular: a differential-algebraic system).
  LtiFullModel(std::shared_ptr<const LinearSystem> system, SparseBackend solver);

  void output(const Vector& q, const Vector& v, const Vector& u, Vector& y) const override;
  std::unique_ptr<LtiOperator> lti_operator() const override;
  IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q, Vector& v,
                            const StepObserver& observe, ProgressReporter* progress) override;
  Index factorizations() const override { return workspace_->factorizations(); }

 private:
  std::shared_ptr<const LinearSystem> system_;
  SparseSecondOrderModel model_;
  SparseBackend backend_;
  std::unique_ptr<SparseSecondOrderModel::Workspace> workspace_;
  Matrix D_ff_;  ///< first order: the feed-through the embedding cannot carry
};

/// True if every matrix of the integrator's iteration matrices is exactly symmetric.
bool symmetric_iteration(const SecondOrderSystem& s);

}  // namespace mor::experiments
