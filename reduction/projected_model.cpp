// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/projected_model.hpp"

namespace mor {

namespace {

using Held = std::variant<ReducedChainModel::Workspace, ReducedNetworkModel::Workspace>;

std::unique_ptr<Held> make_workspace(const ProjectedModel& model, SparseBackend backend) {
  if (const ReducedChainModel* c = model.held<ReducedChainModel>())
    return std::make_unique<Held>(std::in_place_index<0>, *c, backend);
  return std::make_unique<Held>(std::in_place_index<1>, *model.held<ReducedNetworkModel>(),
                                backend);
}

}  // namespace

ProjectedModel::Workspace::Workspace(const ProjectedModel& model, SparseBackend backend)
    : ws_(make_workspace(model, backend)) {}
ProjectedModel::Workspace::~Workspace() = default;
ProjectedModel::Workspace::Workspace(Workspace&&) noexcept = default;

void ProjectedModel::Workspace::solve_mass(const Vector& r, Vector& x) {
  std::visit([&](auto& w) { w.solve_mass(r, x); }, *ws_);
}
void ProjectedModel::Workspace::factorize_iteration(double a, double b, double c, const Vector& q) {
  std::visit([&](auto& w) { w.factorize_iteration(a, b, c, q); }, *ws_);
}
void ProjectedModel::Workspace::solve_iteration(const Vector& r, Vector& x) {
  std::visit([&](auto& w) { w.solve_iteration(r, x); }, *ws_);
}
Index ProjectedModel::Workspace::factorizations() const {
  return std::visit([](const auto& w) { return w.factorizations(); }, *ws_);
}
bool ProjectedModel::Workspace::midpoint_folded() const {
  return std::visit([](const auto& w) { return w.midpoint_folded(); }, *ws_);
}
void ProjectedModel::Workspace::midpoint_prepare(double h, const Vector& q, const Vector& v,
                                                 const Vector& u) {
  std::visit([&](auto& w) { w.midpoint_prepare(h, q, v, u); }, *ws_);
}
void ProjectedModel::Workspace::midpoint_correction(const Vector& x, Vector& delta) {
  std::visit([&](auto& w) { w.midpoint_correction(x, delta); }, *ws_);
}

}  // namespace mor
