// SPDX-License-Identifier: GPL-3.0-or-later
// Method "empirical_bt": position balancing of a second-order network by empirical Gramians
// (reduction/empirical_gramians.hpp), a Petrov-Galerkin model with the balancing bases, the
// nonlinear force hyper-reduced by DEIM / Q-DEIM or ECSW from the [[training]] runs' snapshots
// (experiments/runner/projection_run.hpp).
#include "experiments/runner/methods/projection.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/empirical_gramians.hpp"

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
  v(Key{"compare_orders", "", "further orders from the same nested bases, for /error_vs_r"},
    o.training.compare_orders);
  v(Key{"store_bases", "", "write V and W (N x r) to the results file"}, o.training.store_bases);
}

class EmpiricalBtMethod final : public ProjectionMethod {
 public:
  explicit EmpiricalBtMethod(EmpiricalBtOptions o) : o_(std::move(o)) {}
  std::string_view name() const override { return "empirical_bt"; }
  Index order() const override { return o_.order; }
  const ProjectionTrainingOptions& training() const override { return o_.training; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    empirical_keys(o_, w);
  }
  double estimate_seconds(const ExperimentConfig&, double full_seconds) const override {
    return 20.0 * full_seconds;
  }

  // The projection seam's bases: the balancing bases of the empirical position Gramians, from
  // free responses of the model; no position snapshots.
  std::vector<PodSnapshotField> state_snapshots() const override { return {}; }
  ProjectionBases bases(const ExperimentConfig& c, const FullModel& model, Matrix,
                        Index min_columns, ReductionSummary& summary,
                        const std::atomic<bool>* stop) const override {
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
    EmpiricalBalancingResult eb = [&] {
      try {
        return network_of(model).empirical_balancing(eo);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(detail::concat("reduction.method = \"empirical_bt\": ", e.what()));
      }
    }();
    summary.stages.emplace_back("controllability_s", eb.seconds.controllability);
    summary.stages.emplace_back("subspace_pod_s", eb.seconds.pod);
    summary.stages.emplace_back("observability_s", eb.seconds.observability);
    summary.stages.emplace_back("balancing_s", eb.seconds.balancing);
    io::RecordSink& out = summary.details;
    const std::string& grp = layout::kReduction;
    if (o_.order > 0)
      out.set_attribute(grp, "order_requested", static_cast<std::int64_t>(o_.order));
    else
      out.set_attribute(grp, "tolerance", o_.tolerance);
    out.set_attribute(grp, "discarded_sum", eb.discarded_sum);
    out.set_attribute(grp, "subspace_dimension", static_cast<std::int64_t>(eb.Phi.cols()));
    out.set_attribute(grp, "gramian_horizon", eo.gramians.integrator.t_end - c.integrator.t0);
    out.set_attribute(grp, "amplitudes", o_.amplitudes);
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
  double own_bytes(const ExperimentConfig& c) const override {
    return 8.0 * static_cast<double>(c.model_size()) * 400.0;  // the impulse responses
  }

 private:
  EmpiricalBtOptions o_;
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
  return std::make_unique<EmpiricalBtMethod>(std::move(o));
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
