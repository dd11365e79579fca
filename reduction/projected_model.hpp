// SPDX-License-Identifier: GPL-3.0-or-later
// One integrator model for every projected nonlinear second-order model: the reduced chain
// (reduction/reduced_chain.hpp: its stencil kernels and exact cubic tensor, bit for bit as
// before) or the reduced network (reduction/reduced_network.hpp: any network, the chain's
// network form included). The snapshot methods build one of them through the full model's
// projection seam, and the runner simulates, lifts and compares it without knowing which. Both
// project their linear part (W^T M V, W^T D V, W^T K V, W^T B, Cp V, Cv V) by the one
// project_second_order of reduction/galerkin.hpp; they differ in the reduced force only.
// Each call dispatches once on the held kind: O(1) beside the O(r^2) to O(r^3) work of a call.
#pragma once

#include <memory>
#include <optional>
#include <variant>

#include "reduction/reduced_chain.hpp"
#include "reduction/reduced_network.hpp"

namespace mor {

/// How a projection treats the nonlinear force: what the full model's projection seam takes.
struct ProjectionOptions {
  NonlinearTreatment nonlinear = NonlinearTreatment::deim;
  /// NonlinearTreatment::deim: the interpolation of the nodal or element force (read during
  /// construction only).
  const DeimResult* deim = nullptr;
  DeimSampling sampling = DeimSampling::nodes;
  /// NonlinearTreatment::ecsw: the weighted elements (read during construction only).
  const EcswResult* ecsw = nullptr;
  std::size_t tensor_memory_limit = kDefaultReducedTensorMemoryLimit;
};

class ProjectedModel {
  // Defined first: the members below deduce their return types from it.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit([&](const auto& p) -> decltype(auto) { return f(*p); }, m_);
  }

 public:
  explicit ProjectedModel(std::unique_ptr<ReducedChainModel> m) : m_(std::move(m)) {}
  explicit ProjectedModel(std::unique_ptr<ReducedNetworkModel> m) : m_(std::move(m)) {}

  Index n() const {
    return visit([](const auto& m) { return m.n(); });
  }
  Index n_inputs() const {
    return visit([](const auto& m) { return m.n_inputs(); });
  }
  Index n_outputs() const {
    return visit([](const auto& m) { return m.n_outputs(); });
  }
  bool is_linear() const {
    return visit([](const auto& m) { return m.is_linear(); });
  }
  template <class Q, class V>
  void force(const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& v, const Vector& u,
             Vector& F) const {
    visit([&](const auto& m) { m.force(q, v, u, F); });
  }
  void output(const Vector& q, const Vector& v, Vector& y) const {
    visit([&](const auto& m) { m.output(q, v, y); });
  }
  void mass(const Vector& x, Vector& out) const {
    visit([&](const auto& m) { m.mass(x, out); });
  }
  std::optional<double> uniform_mass() const {
    return visit([](const auto& m) { return m.uniform_mass(); });
  }
  Vector lift(const Eigen::Ref<const Vector>& q_r) const {
    return visit([&](const auto& m) { return m.lift(q_r); });
  }
  Vector project(const Eigen::Ref<const Vector>& q) const {
    return visit([&](const auto& m) { return m.project(q); });
  }
  Index full_size() const {
    return visit([](const auto& m) { return m.full_size(); });
  }
  const Matrix& M_r() const {
    return visit([](const auto& m) -> const Matrix& { return m.M_r(); });
  }
  const Matrix& D_r() const {
    return visit([](const auto& m) -> const Matrix& { return m.D_r(); });
  }
  const Matrix& K_r() const {
    return visit([](const auto& m) -> const Matrix& { return m.K_r(); });
  }
  const Matrix& B_r() const {
    return visit([](const auto& m) -> const Matrix& { return m.B_r(); });
  }
  const Matrix& Cp_r() const {
    return visit([](const auto& m) -> const Matrix& { return m.Cp_r(); });
  }
  const Matrix& Cv_r() const {
    return visit([](const auto& m) -> const Matrix& { return m.Cv_r(); });
  }
  const Matrix& V() const {
    return visit([](const auto& m) -> const Matrix& { return m.V(); });
  }
  const Matrix& W() const {
    return visit([](const auto& m) -> const Matrix& { return m.W(); });
  }
  /// The held model if it is a Model (one of the two kinds), else nullptr: for the workspace
  /// and for benchmarks of a kind's own kernels.
  template <class Model>
  const Model* held() const {
    const auto* p = std::get_if<std::unique_ptr<Model>>(&m_);
    return p ? p->get() : nullptr;
  }

  /// Dispatches to the held model's workspace (reduction/reduced_workspace.hpp). Defined in
  /// projected_model.cpp, which alone instantiates both dense workspaces: inline here, every
  /// file that includes this header compiled them again (about 2 s each, the runner's 30 files).
  class Workspace {
   public:
    explicit Workspace(const ProjectedModel& model, SparseBackend backend = SparseBackend::umfpack);
    ~Workspace();
    Workspace(Workspace&&) noexcept;
    void solve_mass(const Vector& r, Vector& x);
    void factorize_iteration(double a, double b, double c, const Vector& q);
    void solve_iteration(const Vector& r, Vector& x);
    Index factorizations() const;
    // Folded implicit midpoint (reduction/reduced_workspace.hpp), where the held model has it.
    bool midpoint_folded() const;
    void midpoint_prepare(double h, const Vector& q, const Vector& v, const Vector& u);
    void midpoint_correction(const Vector& x, Vector& delta);

   private:
    using Held = std::variant<ReducedChainModel::Workspace, ReducedNetworkModel::Workspace>;
    std::unique_ptr<Held> ws_;
  };

 private:
  std::variant<std::unique_ptr<ReducedChainModel>, std::unique_ptr<ReducedNetworkModel>> m_;
};

}  // namespace mor
