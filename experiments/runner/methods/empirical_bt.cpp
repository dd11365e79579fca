// SPDX-License-Identifier: GPL-3.0-or-later
// Method "empirical_bt": position balancing of the nonlinear chain by empirical Gramians
// (reduction/empirical_gramians.hpp), a Petrov-Galerkin model with the balancing bases, the
// cubic force hyper-reduced by DEIM / Q-DEIM from the [[training]] runs' force snapshots.
#include "experiments/runner/methods/projection.hpp"
#include "experiments/runner/results_layout.hpp"

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
  hyper_reduction_keys(o, v);
  v(Key{"compare_orders", "", "further orders from the same nested bases, for /error_vs_r"},
    o.compare_orders);
  v(Key{"store_bases", "", "write V and W (N x r) to the results file"}, o.store_bases);
}

class EmpiricalBtMethod final : public ProjectionMethod {
 public:
  using ProjectionMethod::ProjectionMethod;
  std::string_view name() const override { return "empirical_bt"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    empirical_keys(o_, w);
  }
};

std::unique_ptr<ReductionMethod> read_empirical_bt(TableReader& r, const std::string& source,
                                                   const std::filesystem::path& base_dir) {
  ChainProjectionOptions o;
  o.empirical = true;
  KeyReader reader(r, "reduction", base_dir);
  empirical_keys(o, reader);
  r.finish(method_keys_context(r, "empirical_bt"));
  check_hyper_reduction(r, o);
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
  ChainProjectionOptions o;
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
