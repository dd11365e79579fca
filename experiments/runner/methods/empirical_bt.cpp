// SPDX-License-Identifier: GPL-3.0-or-later
// Method "empirical_bt": position balancing of a second-order network by empirical Gramians
// (reduction/empirical_gramians.hpp), a Petrov-Galerkin model with the balancing bases, the
// nonlinear force hyper-reduced by DEIM / Q-DEIM or ECSW from the [[training]] runs' snapshots
// (experiments/runner/projection_run.hpp).
#include "experiments/runner/methods/projection.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/empirical_gramians.hpp"
#include "reduction/parametric_lti.hpp"
#include "src/core/progress.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

template <class O, class V>
void empirical_keys(O& o, V& v) {
  v(Key{"order", "", "r (set this or tolerance)"}, o.order);
  v(Key{"tolerance", "",
        "the smallest r with 2 sum_{i>r} sigma_i <= tolerance over the empirical values (or "
        "order)"},
    o.tolerance);
  v(Key{"amplitudes", "N s", "impulse sizes and initial-state sizes c_k of the free responses"},
    o.amplitudes);
  v(Key{"subspace_order", "", "d, the POD of the impulse responses' positions (or energy)"},
    o.subspace_order);
  v(Key{"subspace_energy", "", "its captured energy; 0 with subspace_order 0: 1 - 1e-8"},
    o.subspace_energy);
  v(Key{"gramian_horizon", "s", "of every free response; 0: the simulation's horizon"},
    o.gramian_horizon);
  hyper_reduction_keys(o.training, v);
  parametric_point_keys(o.training.parametric, v);
  v(Key{"compare_orders", "", "further orders from the same nested bases, for /error_vs_r"},
    o.training.compare_orders);
  v(Key{"store_bases", "", "write V and W (N x r) to the results file"}, o.training.store_bases);
}

class EmpiricalBtMethod final : public ProjectionMethod {
 public:
  EmpiricalBtMethod(EmpiricalBtOptions o, std::vector<std::string> parametric_keys_given)
      : o_(std::move(o)), parametric_given_(std::move(parametric_keys_given)) {}
  std::string_view name() const override { return "empirical_bt"; }
  Index order() const override { return o_.order; }
  const ProjectionTrainingOptions& training() const override { return o_.training; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    empirical_keys(o_, w);
  }
  /// The balancing's free responses (about 20 full runs); with [parameters] at every training
  /// point, with the training runs of the hyper-reduction.
  double estimate_seconds(const ExperimentConfig& c, double full_seconds) const override {
    if (const auto p = estimate_parametric_training(c, full_seconds)) return p->seconds;
    return 20.0 * full_seconds;
  }

  /// With [parameters]: the balancing bases at every training point, one Galerkin basis of
  /// them (experiments/runner/parametric_linear.hpp's global basis), the force hyper-reduced
  /// from the snapshots of every training point.
  bool parametric_for(const ModelSpec& model) const override { return model.projectable(); }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    ProjectionMethod::check(c, where);
    refuse_parametric_keys(c, where, parametric_given_);
    check_training_points(c, where, o_.training.parametric.training_points);
    if (!c.parameters.empty()) {
      require(o_.training.training_files.empty(), where,
              ": reduction.training_files hold snapshots at one parameter; a parametric "
              "reduction trains on its own runs at its training points: leave it out");
      require(o_.training.compare_orders.empty(), where,
              ": reduction.compare_orders is not available with [parameters]");
    }
  }

  // The projection seam's bases: the balancing bases of the empirical position Gramians, from
  // free responses of the model; no position snapshots.
  std::vector<PodSnapshotField> state_snapshots() const override { return {}; }
  ProjectionBases bases(const ExperimentConfig& c, const FullModel& model, Matrix,
                        Index min_columns, ReductionSummary& summary,
                        const std::atomic<bool>* stop) const override {
    if (!c.parameters.empty()) return parametric_bases(c, summary, stop);
    EmpiricalBalancingResult eb = balance(c, model, min_columns, stop);
    summary.stages.emplace_back("controllability_s", eb.seconds.controllability);
    summary.stages.emplace_back("subspace_pod_s", eb.seconds.pod);
    summary.stages.emplace_back("observability_s", eb.seconds.observability);
    summary.stages.emplace_back("balancing_s", eb.seconds.balancing);
    io::RecordSink& out = summary.details;
    const std::string& grp = layout::kReduction;
    record_keys(out, c);
    out.set_attribute(grp, "discarded_sum", eb.discarded_sum);
    out.set_attribute(grp, "subspace_dimension", static_cast<std::int64_t>(eb.Phi.cols()));
    out.set_attribute(
        grp, "simulations",
        static_cast<std::int64_t>(eb.simulations_controllability + eb.simulations_observability));
    summary.spectra.emplace_back(layout::kReductionEmpiricalSv, eb.sigma);
    summary.spectra.emplace_back(layout::kReductionSubspaceSv, eb.subspace_singular_values);
    ProjectionBases b;
    b.r = eb.r;
    b.V = std::move(eb.V);
    b.W = std::move(eb.W);
    return b;
  }

 private:
  /// The order or tolerance asked for, the horizon and the amplitudes (/reduction attributes).
  void record_keys(io::RecordSink& out, const ExperimentConfig& c) const {
    const std::string& grp = layout::kReduction;
    if (o_.order > 0)
      out.set_attribute(grp, "order_requested", static_cast<std::int64_t>(o_.order));
    else
      out.set_attribute(grp, "tolerance", o_.tolerance);
    out.set_attribute(
        grp, "gramian_horizon",
        o_.gramian_horizon > 0.0 ? o_.gramian_horizon : c.integrator.t_end - c.integrator.t0);
    out.set_attribute(grp, "amplitudes", o_.amplitudes);
  }

  /// The local balancing bases at the training points (the same points reduce_by_projection
  /// trains the hyper-reduction at), each column of unit length weighted by sqrt(sigma_i /
  /// sigma_1) of its empirical value, and the leading r left singular vectors of all of them
  /// (V_j and W_j together): W = V (Galerkin), so that the reduced M, D, K stay symmetric
  /// positive definite at every parameter. r: the order, or the largest local order.
  ProjectionBases parametric_bases(const ExperimentConfig& c, ReductionSummary& summary,
                                   const std::atomic<bool>* stop) const {
    const auto t = Clock::now();
    const ParametricTraining& pt = o_.training.parametric;
    const Matrix X = training_set(c.parameters, pt.training_points, pt.parameter_samples,
                                  pt.parameter_seed, c.name, "reduction.training_points");
    std::vector<Matrix> local;
    std::vector<Vector> weights;
    Index r = 0, simulations = 0;
    Vector local_orders(X.rows());
    for (Index i = 0; i < X.rows(); ++i) {
      const Vector mu = X.row(i).transpose();
      progress_note(detail::concat(c.name, ": empirical balancing ", i + 1, "/", X.rows(), " at ",
                                   c.parameters.describe(mu), " ..."));
      const std::unique_ptr<FullModel> here = c.model->at(c.parameters, mu)->build(c.solver);
      EmpiricalBalancingResult eb = [&] {
        try {
          return balance(c, *here, 0, stop);
        } catch (const NumericalError& e) {
          throw NumericalError(detail::concat("the empirical balancing at the training point ",
                                              c.parameters.describe(mu), ": ", e.what()));
        }
      }();
      r = std::max(r, eb.r);
      local_orders[i] = static_cast<double>(eb.r);
      simulations += eb.simulations_controllability + eb.simulations_observability;
      Vector w = hankel_weights(eb.sigma, eb.V.cols());
      if (w.size() != eb.V.cols()) w = Vector::Ones(eb.V.cols());
      local.push_back(std::move(eb.V));
      local.push_back(std::move(eb.W));
      weights.push_back(w);
      weights.push_back(w);
    }
    if (o_.order > 0) r = o_.order;
    const GlobalBasis g = global_basis(local, r, weights);
    summary.stages.emplace_back("local_balancing_s", seconds_since(t));
    io::RecordSink& out = summary.details;
    record_keys(out, c);
    out.set_attribute(layout::kReduction, "global_projection", std::string("galerkin"));
    out.set_attribute(layout::kReduction, "simulations", static_cast<std::int64_t>(simulations));
    out.write_vector(layout::kReductionLocalOrders, local_orders);
    summary.spectra.emplace_back(layout::kReductionGlobalSv, g.sv);
    ProjectionBases b;
    b.r = r;
    b.V = g.U;
    return b;
  }

  /// Empirical balancing of `model` with the method's keys (the bases at least min_columns wide).
  EmpiricalBalancingResult balance(const ExperimentConfig& c, const FullModel& model,
                                   Index min_columns, const std::atomic<bool>* stop) const {
    EmpiricalBalancingOptions eo;
    eo.gramians.amplitudes = o_.amplitudes;
    eo.gramians.integrator = c.integrator;
    eo.gramians.integrator.t_end =
        c.integrator.t0 +
        (o_.gramian_horizon > 0.0 ? o_.gramian_horizon : c.integrator.t_end - c.integrator.t0);
    eo.gramians.integrator.observe_stride = o_.training.training_stride;
    eo.gramians.integrator.stop_requested = stop;
    eo.subspace.method = o_.training.pod_method;
    if (o_.subspace_order > 0)
      eo.subspace.order = o_.subspace_order;
    else
      eo.subspace.energy = o_.subspace_energy;
    if (o_.order > 0)
      eo.selection.order = o_.order;
    else
      eo.selection.tolerance = o_.tolerance;
    eo.min_columns = min_columns;
    try {
      return network_of(model).empirical_balancing(eo);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(detail::concat("reduction.method = \"empirical_bt\": ", e.what()));
    }
  }

 protected:
  void check_model(const ExperimentConfig& c, const std::string& where) const override {
    if (c.model->is_linear())
      require(c.model->empirical_gramians(), where, ": reduction.method = \"", name(),
              "\": the empirical Gramians of a linear model are its exact Gramians (Lall, "
              "Marsden & Glavaski 2002), which \"bt\" (or \"sobt\" for a second-order "
              "model) computes without simulating: use it, or \"pod\" for a reduction from "
              "simulations");
    else
      require(c.model->empirical_gramians(), where, ": reduction.method = \"", name(),
              "\" balances the position Gramians of a second-order model simulated from impulses "
              "and initial positions; this model's equations are nonlinear and first order, x' = "
              "f(t, x, u), with no positions to balance: use \"bt\", \"modal\" or \"irka\" "
              "(they reduce its linearisation about its rest state)");
  }
  /// Training runs only for the hyper-reduction: force snapshots (DEIM), positions (ECSW).
  bool needs_training(const ExperimentConfig& c) const override {
    const NonlinearTreatment t = o_.training.nonlinear;
    return !c.model->is_linear() &&
           (t == NonlinearTreatment::deim || t == NonlinearTreatment::ecsw);
  }
  const char* training_hint() const override {
    return " (force snapshots for DEIM, position snapshots for ECSW)";
  }
  double point_seconds(const ExperimentConfig&, double full_seconds) const override {
    return 20.0 * full_seconds;
  }
  double own_bytes(const ExperimentConfig& c) const override {
    return 8.0 * static_cast<double>(c.model_size()) * 400.0;  // the impulse responses
  }

 private:
  EmpiricalBtOptions o_;
  std::vector<std::string> parametric_given_;
};

std::unique_ptr<ReductionMethod> read_empirical_bt(TableReader& r, const std::string& source,
                                                   const std::filesystem::path& base_dir) {
  EmpiricalBtOptions o;
  KeyReader reader(r, "reduction", base_dir);
  empirical_keys(o, reader);
  r.finish(method_keys_context(r, "empirical_bt"));
  check_hyper_reduction(r, o.order, o.training);
  require_order_or_tolerance(r, source, o.order, o.tolerance);
  require(!o.amplitudes.empty(), r.where("amplitudes"), ": reduction.amplitudes must not be empty");
  for (double a : o.amplitudes)
    require(std::isfinite(a) && a > 0.0, r.where("amplitudes"),
            ": reduction.amplitudes must be finite and > 0, got ", a);
  require(o.subspace_order >= 0, r.where("subspace_order"),
          ": reduction.subspace_order must be >= 1, got ", o.subspace_order);
  require(o.subspace_order == 0 || o.subspace_energy == 0.0, source,
          ": reduction: set at most one of reduction.subspace_order and "
          "reduction.subspace_energy; got ",
          o.subspace_order, " and ", o.subspace_energy);
  require(o.subspace_energy >= 0.0 && o.subspace_energy <= 1.0, r.where("subspace_energy"),
          ": reduction.subspace_energy must be in (0, 1], got ", o.subspace_energy);
  if (o.subspace_order == 0 && o.subspace_energy == 0.0) o.subspace_energy = kDefaultSubspaceEnergy;
  require(o.gramian_horizon >= 0.0 && std::isfinite(o.gramian_horizon), r.where("gramian_horizon"),
          ": reduction.gramian_horizon must be > 0 (or 0: the simulation's), got ",
          o.gramian_horizon);
  return std::make_unique<EmpiricalBtMethod>(std::move(o), keys_given(r, kParametricPointKeys));
}

void empirical_bt_method_keys(std::vector<KeyDoc>& rows) {
  EmpiricalBtOptions o;
  KeyDocs docs(rows, "reduction");
  empirical_keys(o, docs);
}

}  // namespace

extern const MethodInfo kEmpiricalBtMethod{
    "empirical_bt",
    "position balancing of the nonlinear chain by empirical Gramians, hyper-reduced by DEIM or "
    "Q-DEIM",
    &read_empirical_bt, &empirical_bt_method_keys,
    &order_from_stored<layout::kReductionEmpiricalSv, order_for_bound>};

}  // namespace mor::experiments
