// SPDX-License-Identifier: GPL-3.0-or-later
// Method "pod": POD-Galerkin from the snapshots of [[training]] runs (and of earlier results
// files). A second-order model with a projection seam (the chain, network files, the lattice) is
// projected through it, its nonlinear force hyper-reduced by DEIM / Q-DEIM; an LTI model
// without one (a model file, first or second order; a linearised benchmark) by the Galerkin
// projection of its matrices, to an LTI reduced model the linear family simulates and analyses
// (projection_run.hpp: reduce_linear_by_pod).
#include <algorithm>
#include <cmath>

#include "experiments/runner/methods/projection.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

constexpr Choice<PodSnapshotField> kPodSnapshotFields[] = {
    {"p", PodSnapshotField::p}, {"v", PodSnapshotField::v}, {"x", PodSnapshotField::x}};

template <class O, class V>
void pod_keys(O& o, V& v) {
  v(Key{"order", "", "r (set this or energy)"}, o.order);
  v(Key{"energy", "", "the captured snapshot energy in (0, 1] that chooses r (or order)"},
    o.energy);
  hyper_reduction_keys(o.training, v);
  v.choices(Key{"pod_snapshots", "",
                "the snapshots of the basis: [\"p\"] positions, [\"p\", \"v\"] positions and "
                "velocities side by side; a first-order model's are its state x (default or "
                "[\"x\"])"},
            o.pod_snapshots, kPodSnapshotFields,
            "\"p\" (positions) or \"v\" (velocities), or \"x\" (the state of a first-order "
            "model)");
  v(Key{"compare_orders", "", "further orders from the same nested basis, for /error_vs_r"},
    o.training.compare_orders);
  v(Key{"store_bases", "", "write V (N x r) to the results file"}, o.training.store_bases);
  parametric_training_keys(o.training.parametric, v);
}

bool has_field(const PodReductionOptions& o, PodSnapshotField f) {
  return std::find(o.pod_snapshots.begin(), o.pod_snapshots.end(), f) != o.pod_snapshots.end();
}

/// The keys that tune the hyper-reduction of a nonlinear force: a linear model has none.
constexpr const char* kNonlinearKeys[] = {"nonlinear", "deim_method", "deim_order", "deim_sampling",
                                          "ecsw_tolerance"};

class PodMethod final : public ProjectionMethod {
 public:
  PodMethod(PodReductionOptions o, std::vector<std::string> nonlinear_keys_given,
            std::vector<std::string> parametric_keys_given, bool snapshots_given)
      : o_(std::move(o)),
        nonlinear_keys_given_(std::move(nonlinear_keys_given)),
        parametric_keys_given_(std::move(parametric_keys_given)),
        snapshots_given_(snapshots_given) {}
  std::string_view name() const override { return "pod"; }
  Index order() const override { return o_.order; }
  /// A network kind with parameters (the chain, the lattice): the POD of the snapshots at every
  /// training point, the hyper-reduction trained on their forces.
  /// An LTI model whose matrices are projected: local POD bases at the training points, one
  /// global Galerkin basis (experiments/runner/parametric_linear.hpp).
  bool parametric_for(const ModelSpec& model) const override {
    return model.projectable() || projects_matrices(model);
  }
  const ParametricLinearKeys* parametric_linear() const override { return &linear_; }
  const ProjectionTrainingOptions& training() const override { return o_.training; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    pod_keys(o_, w);
  }
  /// An LTI model without a projection seam (a model file, a linearised benchmark) is reduced
  /// to an LTI model by the Galerkin projection of its matrices; the chain, network and lattice
  /// kinds (linear or not) by their projection seam.
  Family family_for(const ModelSpec& model) const override {
    return projects_matrices(model) ? Family::linear : Family::projection;
  }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    const ModelSpec& m = *c.model;
    for (const auto& key : parametric_keys_given_)
      require(!c.parameters.empty(), where, ": reduction.", key,
              " chooses the training points of a parametric reduced model: it needs "
              "[parameters]");
    check_training_points(c, where, o_.training.parametric.training_points);
    if (!c.parameters.empty()) {
      require(!projects_matrices(m) || o_.training.parametric.sampling == ParametricSampling::all,
              where,
              ": reduction.sampling = \"greedy\" is the POD-greedy of the network kinds; an LTI "
              "model's parametric POD takes its local bases at every training point: "
              "sampling = \"all\"");
      require(o_.training.training_files.empty(), where,
              ": reduction.training_files hold snapshots at one parameter; a parametric "
              "reduction trains on its own runs at its training points: leave it out");
      require(o_.training.compare_orders.empty(), where,
              ": reduction.compare_orders is not available with [parameters]");
    }
    const bool first_order = m.first_order();
    const bool x_asked = has_field(o_, PodSnapshotField::x);
    if (first_order)
      require(!snapshots_given_ || (o_.pod_snapshots.size() == 1 && x_asked), where,
              ": reduction.pod_snapshots: a first-order model's snapshots are of its state x "
              "(positions and velocities belong to a second-order model): leave it out or set "
              "[\"x\"]");
    else
      require(!x_asked, where,
              ": reduction.pod_snapshots = \"x\" is the state of a first-order model; a "
              "second-order model's snapshots are \"p\" (positions) and \"v\" (velocities)");
    if (!projects_matrices(m)) {
      ProjectionMethod::check(c, where);
      return;
    }
    for (const auto& key : nonlinear_keys_given_)
      throw InvalidArgument(detail::concat(
          where, ": reduction.", key,
          " tunes the hyper-reduction of a nonlinear force, and this model is linear: its "
          "matrices are projected as they are, with no force to interpolate; leave it out"));
    const Index n = c.model_size();
    for (Index order : o_.training.compare_orders)
      require(order >= 1 && order <= n, where,
              ": reduction.compare_orders entries must be in [1, n = ", n, "], got ", order);
    require(!c.training.empty() || !o_.training.training_files.empty(), where,
            ": reduction.method = \"pod\" needs training data: [[training]] inputs or "
            "reduction.training_files");
  }
  ReducedModel reduce_linear_in_run(const ExperimentConfig& c, const FullModel& model,
                                    LtiOperator& full, const SecondOrderSystem* second_order,
                                    const std::atomic<bool>* stop) const override {
    return reduce_linear_by_pod(c, o_, model, full, second_order, stop);
  }
  double estimate_seconds(const ExperimentConfig& c, double full_seconds) const override {
    if (const auto p = estimate_parametric_training(c, full_seconds)) return p->seconds;
    const double N = static_cast<double>(c.model_size());
    const double runs = static_cast<double>(c.training.size());
    const double steps = static_cast<double>(step_count(c.integrator));
    const double snapshots =
        runs * steps / static_cast<double>(std::max<Index>(1, o_.training.training_stride));
    return runs * full_seconds + 5e-9 * N * snapshots * 2.0;
  }

  // The projection seam's bases: the POD of the training runs' position snapshots.
  std::vector<PodSnapshotField> state_snapshots() const override { return o_.pod_snapshots; }
  ProjectionBases bases(const ExperimentConfig& c, const FullModel&, Matrix Q, Index min_columns,
                        ReductionSummary& summary, const std::atomic<bool>*) const override {
    // With [parameters] Q is the incremental SVD's U S (a few hundred orthogonal columns): the
    // dense SVD resolves its every singular value, where the automatic choice for a tall Q
    // (the method of snapshots) would cut the rank at sqrt(n eps) s_1.
    PodReductionOptions o = o_;
    if (!c.parameters.empty() && o.training.pod_method == mor::PodMethod::automatic)
      o.training.pod_method = mor::PodMethod::svd;
    PodResult pod_q = pod_basis_and_record(o, Q, min_columns, false, summary);
    Q.resize(0, 0);
    summary.stages.emplace_back("pod_s", pod_q.seconds);
    ProjectionBases b;
    b.r = pod_q.r;
    b.V = std::move(pod_q.V);
    return b;
  }

 protected:
  void check_model(const ExperimentConfig& c, const std::string& where) const override {
    require(c.model->projectable(), where, ": reduction.method = \"", name(),
            "\" projects the matrices of a linear model or the force of a second-order "
            "network; this model's equations are nonlinear and first order, x' = f(t, x, u), "
            "with neither: use \"bt\", \"modal\" or \"irka\" (they reduce its "
            "linearisation about its rest state)");
  }
  bool needs_training(const ExperimentConfig&) const override { return true; }

 private:
  /// A linear model whose kind has no projection seam: its matrices are projected.
  static bool projects_matrices(const ModelSpec& model) {
    return model.is_linear() && !model.projectable();
  }
  PodReductionOptions o_;
  /// The parametric keys of an LTI model's POD: its training points, W = V.
  ParametricLinearKeys linear_{
      o_.training.parametric.parameter_samples, o_.training.parametric.parameter_seed,
      o_.training.parametric.training_points, 0, GlobalProjection::galerkin};
  std::vector<std::string> nonlinear_keys_given_;
  std::vector<std::string> parametric_keys_given_;
  bool snapshots_given_ = false;
};

std::unique_ptr<ReductionMethod> read_pod(TableReader& r, const std::string& source,
                                          const std::filesystem::path& base_dir) {
  PodReductionOptions o;
  KeyReader reader(r, "reduction", base_dir);
  pod_keys(o, reader);
  r.finish(method_keys_context(r, "pod"));
  check_hyper_reduction(r, o.order, o.training);
  require((o.order > 0) != (o.energy > 0.0), source,
          ": reduction: set exactly one of reduction.order (r >= 1) and reduction.energy (in "
          "(0, 1]); got order = ",
          o.order, ", energy = ", o.energy);
  require(o.energy <= 1.0, r.where("energy"), ": reduction.energy must be in (0, 1], got ",
          o.energy);
  require(!o.pod_snapshots.empty(), r.where("pod_snapshots"),
          ": reduction.pod_snapshots must name \"p\", \"v\" or both (\"x\" for a first-order "
          "model)");
  std::vector<std::string> nonlinear_keys_given;
  for (const char* key : kNonlinearKeys)
    if (r.given(key)) nonlinear_keys_given.emplace_back(key);
  std::vector<std::string> parametric_keys_given;
  for (const char* key : kParametricTrainingKeys)
    if (r.given(key)) parametric_keys_given.emplace_back(key);
  require(o.training.parametric.parameter_samples >= 1, r.where("parameter_samples"),
          ": reduction.parameter_samples must be >= 1, got ",
          o.training.parametric.parameter_samples);
  require(o.training.parametric.greedy_max_points >= 0, r.where("greedy_max_points"),
          ": reduction.greedy_max_points must be >= 0 (0: no limit), got ",
          o.training.parametric.greedy_max_points);
  require(o.training.parametric.greedy_batch >= 1, r.where("greedy_batch"),
          ": reduction.greedy_batch must be >= 1, got ", o.training.parametric.greedy_batch);
  require(std::isfinite(o.training.parametric.greedy_tolerance) &&
              o.training.parametric.greedy_tolerance >= 0.0,
          r.where("greedy_tolerance"), ": reduction.greedy_tolerance must be >= 0 and finite, got ",
          o.training.parametric.greedy_tolerance);
  const bool snapshots_given = r.given("pod_snapshots");
  return std::make_unique<PodMethod>(std::move(o), std::move(nonlinear_keys_given),
                                     std::move(parametric_keys_given), snapshots_given);
}

void pod_method_keys(std::vector<KeyDoc>& rows) {
  PodReductionOptions o;
  KeyDocs docs(rows, "reduction");
  pod_keys(o, docs);
}

}  // namespace

extern const MethodInfo kPodMethod{
    "pod",
    "POD-Galerkin from training runs: of an LTI model's matrices (E, A, B, C or M, D, K, B, Cp, "
    "Cv), or of a second-order network with its nonlinear force hyper-reduced by DEIM or Q-DEIM",
    &read_pod, &pod_method_keys, &order_from_stored<layout::kReductionPodSv, order_for_energy>};

}  // namespace mor::experiments
