// SPDX-License-Identifier: GPL-3.0-or-later
// What the projection methods (pod.cpp, empirical_bt.cpp) share: the hyper-reduction
// and training keys, the checks against the experiment, the memory estimate and the reduction
// itself (experiments/runner/projection_run.hpp); each method supplies its bases.
#pragma once

#include <cmath>
#include <ostream>

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "reduction/deim.hpp"
#include "reduction/ecsw.hpp"
#include "reduction/pod.hpp"

namespace mor::experiments {

/// The names files spell the hyper-reduction's choices by (the reduction library's to_string).
inline constexpr Choice<PodMethod> kPodMethods[] = {{"automatic", PodMethod::automatic},
                                                    {"svd", PodMethod::svd},
                                                    {"snapshots", PodMethod::snapshots},
                                                    {"randomized", PodMethod::randomized}};
inline constexpr Choice<NonlinearTreatment> kNonlinearTreatments[] = {
    {"deim", NonlinearTreatment::deim},
    {"ecsw", NonlinearTreatment::ecsw},
    {"tensor", NonlinearTreatment::tensor},
    {"full", NonlinearTreatment::full}};
inline constexpr Choice<DeimMethod> kDeimMethods[] = {{"deim", DeimMethod::deim},
                                                      {"qdeim", DeimMethod::qdeim}};
inline constexpr Choice<DeimSampling> kDeimSamplings[] = {{"nodes", DeimSampling::nodes},
                                                          {"elements", DeimSampling::elements}};

/// The keys after the method's own: hyper-reduction, training data, compared orders.
template <class O, class V>
void hyper_reduction_keys(O& o, V& v) {
  v.choice(Key{"pod_method", "", "automatic, svd, snapshots (method of snapshots) or randomized"},
           o.pod_method, kPodMethods);
  v.choice(Key{"nonlinear", "",
               "the nonlinear force: deim (hyper-reduced by interpolation), ecsw (hyper-reduced by "
               "weighted elements, keeping the gradient structure and the energy), tensor (exact, "
               "O(r^4); the chain only) or full (O(N))"},
           o.nonlinear, kNonlinearTreatments);
  v.choice(Key{"deim_method", "", "deim (greedy) or qdeim (pivoted QR)"}, o.deim_method,
           kDeimMethods);
  v(Key{"deim_order", "", "m interpolation points; 0: 2 r"}, o.deim_order);
  v.choice(Key{"deim_sampling", "",
               "what DEIM samples: nodes (rows of G^T phi(G q), each with the elements in its "
               "support) or elements (rows of phi(G q), unassembled as in UDEIM)"},
           o.deim_sampling, kDeimSamplings);
  v(Key{"ecsw_tolerance", "",
        "nonlinear = \"ecsw\": tau, the relative residual of the reduced force over the "
        "training snapshots at which the NNLS for the element weights stops, in (0, 1)"},
    o.ecsw_tolerance);
  v(Key{"training_stride", "", "steps between training snapshots"}, o.training_stride);
  v(Key{"training_files", "",
        "results files whose /snapshots/p (a first-order model's /snapshots/x) are training "
        "data too (relative to the experiment file)"},
    o.training_files);
}

/// Checks the hyper-reduction keys and the order. @throws InvalidArgument naming the key.
inline void check_hyper_reduction(const TableReader& r, Index order,
                                  const ProjectionTrainingOptions& o) {
  require(order >= 0, r.where("order"), ": reduction.order must be >= 1, got ", order);
  require(o.deim_order >= 0, r.where("deim_order"),
          ": reduction.deim_order must be >= 1 (or 0: 2 r), got ", o.deim_order);
  require(o.ecsw_tolerance > 0.0 && o.ecsw_tolerance < 1.0, r.where("ecsw_tolerance"),
          ": reduction.ecsw_tolerance must be in (0, 1), got ", o.ecsw_tolerance);
  require(o.training_stride >= 1, r.where("training_stride"),
          ": reduction.training_stride must be >= 1, got ", o.training_stride);
}

/// A method that reduces by projection with bases of its own (ProjectionBasisMethod) and the
/// shared training and hyper-reduction (reduce_by_projection). It checks and estimates what
/// they share; the method adds what is its own through the hooks below.
class ProjectionMethod : public ReductionMethod, public ProjectionBasisMethod {
 public:
  Family family() const override { return Family::projection; }
  std::string_view name() const override = 0;
  void check(const ExperimentConfig& c, const std::string& where) const override {
    check_model(c, where);
    const ProjectionTrainingOptions& t = training();
    if (t.nonlinear == NonlinearTreatment::tensor)
      require(c.model->reduced_tensor() || c.model->is_linear(), where,
              ": reduction.nonlinear = \"tensor\" is the chain's exact reduced cubic; model.type "
              "= \"",
              c.model->kind(), "\" has general element laws: use \"deim\", \"ecsw\" or \"full\"");
    const Index N = c.model_size();
    for (Index order : t.compare_orders)
      require(order >= 1 && order <= N, where,
              ": reduction.compare_orders entries must be in [1, N = ", N, "], got ", order);
    require(!needs_training(c) || !c.training.empty() || !t.training_files.empty(), where,
            ": reduction.method = \"", name(), "\" needs training data", training_hint(),
            ": [[training]] inputs or reduction.training_files");
  }
  double estimate_bytes(const ExperimentConfig& c) const override {
    // With [parameters]: the incremental SVDs of the snapshots of every training point.
    if (const auto p = estimate_parametric_training(c, 0.0)) return p->bytes + own_bytes(c);
    // Two snapshot matrices (positions and forces) of N x k with a working copy each; the
    // method's own (empirical balancing's impulse responses) on top.
    const ProjectionTrainingOptions& t = training();
    const double N = static_cast<double>(c.model_size());
    const double steps = static_cast<double>(step_count(c.integrator));
    const double k = static_cast<double>(c.training.size()) *
                     (steps / static_cast<double>(std::max<Index>(1, t.training_stride)) + 1.0);
    // ECSW's training matrix C (8 r k m_e bytes), subsampled to stay under its limit.
    const double ecsw =
        t.nonlinear == NonlinearTreatment::ecsw && !c.model->is_linear()
            ? std::min(static_cast<double>(EcswOptions{}.memory_limit),
                       ecsw_matrix_bytes(std::max<Index>(order(), 1), static_cast<Index>(k),
                                         c.model->nonlinear_elements()))
            : 0.0;
    return 2.0 * 2.0 * 8.0 * N * k + own_bytes(c) + ecsw;
  }
  /// With [parameters] and a parametric form: the runs of the training (sampling "all" or
  /// "greedy"), the incremental SVDs' updates and memory (projection_estimates.cpp).
  std::optional<ParametricTrainingEstimate> estimate_parametric_training(
      const ExperimentConfig& c, double full_seconds) const override;
  ProjectionReduction reduce_projection(const ExperimentConfig& c, const FullModel& model,
                                        const std::atomic<bool>* stop) const override {
    return reduce_by_projection(c, training(), *this, model, stop);
  }
  /// The training and hyper-reduction options the method holds.
  virtual const ProjectionTrainingOptions& training() const = 0;

 protected:
  /// Whether `c.model` is one this method reduces. @throws InvalidArgument saying why not.
  virtual void check_model(const ExperimentConfig& c, const std::string& where) const = 0;
  /// Whether the reduction of c needs training runs or files.
  virtual bool needs_training(const ExperimentConfig& c) const = 0;
  /// What the training data are for, in the message when they are missing ("" or " (...)").
  virtual const char* training_hint() const { return ""; }
  /// Bytes the method holds besides the training snapshots.
  virtual double own_bytes(const ExperimentConfig&) const { return 0.0; }
  /// With [parameters]: seconds of the method's own work at each training point besides the
  /// training runs (empirical_bt: its local balancing), given a full run's.
  virtual double point_seconds(const ExperimentConfig&, double) const { return 0.0; }
};

}  // namespace mor::experiments
