// SPDX-License-Identifier: GPL-3.0-or-later
// Method "pod": POD-Galerkin of the (nonlinear) chain from the snapshots of [[training]] runs
// (and of earlier results files), its cubic force hyper-reduced by DEIM / Q-DEIM.
#include "experiments/runner/methods/chain_projection.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

template <class O, class V>
void pod_keys(O& o, V& v) {
  v(Key{"order", "", "r (set this or energy)"}, o.order);
  v(Key{"energy", "", "the captured snapshot energy in (0, 1] that chooses r (or order)"},
    o.energy);
  hyper_reduction_keys(o, v);
  v(Key{"pod_snapshots", "",
        "the snapshots of the basis: [\"p\"] positions, [\"p\", \"v\"] positions and "
        "velocities side by side"},
    o.pod_snapshots);
  v(Key{"compare_orders", "", "further orders from the same nested basis, for /error_vs_r"},
    o.compare_orders);
  v(Key{"store_bases", "", "write V (N x r) to the results file"}, o.store_bases);
}

class PodMethod final : public ChainProjectionMethod {
 public:
  using ChainProjectionMethod::ChainProjectionMethod;
  std::string_view name() const override { return "pod"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    pod_keys(o_, w);
  }
};

std::unique_ptr<ReductionMethod> read_pod(TableReader& r, const std::string& source,
                                          const std::filesystem::path& base_dir) {
  ChainProjectionOptions o;
  KeyReader reader(r, "reduction", base_dir);
  pod_keys(o, reader);
  r.finish(method_keys_context(r, "pod"));
  check_hyper_reduction(r, source, o);
  require((o.order > 0) != (o.energy > 0.0), source,
          ": reduction: set exactly one of reduction.order (r >= 1) and reduction.energy (in "
          "(0, 1]); got order = ",
          o.order, ", energy = ", o.energy);
  require(o.energy <= 1.0, r.where("energy"), ": reduction.energy must be in (0, 1], got ",
          o.energy);
  require(!o.pod_snapshots.empty(), r.where("pod_snapshots"),
          ": reduction.pod_snapshots must name \"p\", \"v\" or both");
  for (const auto& f : o.pod_snapshots)
    require(f == "p" || f == "v", r.where("pod_snapshots"), ": reduction.pod_snapshots entry '", f,
            "' must be \"p\" (positions) or \"v\" (velocities)");
  return std::make_unique<PodMethod>(std::move(o));
}

void pod_method_keys(std::vector<KeyDoc>& rows) {
  ChainProjectionOptions o;
  KeyDocs docs(rows, "reduction");
  pod_keys(o, docs);
}

}  // namespace

extern const MethodInfo kPodMethod{
    "pod",
    "POD-Galerkin of the nonlinear chain from training runs, the cubic force hyper-reduced by "
    "DEIM or Q-DEIM",
    &read_pod, &pod_method_keys, &order_from_stored<layout::kReductionPodSv, order_for_energy>};

}  // namespace mor::experiments
