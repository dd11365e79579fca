// SPDX-License-Identifier: GPL-3.0-or-later
// Model kind "lattice": an nx x ny lattice of masses with linear + cubic springs to the four
// neighbours and to walls at the edges (models/lattice.hpp), a nonlinear network at any size.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/network_model.hpp"
#include "experiments/runner/models/spring_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "models/lattice.hpp"

namespace mor::experiments {
namespace {

/// The [model] keys of the lattice, declared once.
template <class P, class V>
void lattice_keys(P& p, V& v) {
  v(Key{"nx", "", "nodes along a row, >= 1"}, p.nx);
  v(Key{"ny", "", "nodes along a column, >= 1 (0: ny = nx)"}, p.ny);
  v(Key{"m", "kg", "mass of each node, > 0"}, p.m);
  v(Key{"k_l", "N/m", "linear spring stiffness, >= 0"}, p.k_l);
  v(Key{"d", "N s/m", "damper coefficient (damping = \"chain\": dampers along the springs), >= 0"},
    p.d);
  v(Key{"k_n", "N/m^3", "cubic spring coefficient, >= 0 (0: the linear lattice)"}, p.k_n);
  v.choice(Key{"damping", "", "dampers along the springs, or Rayleigh D = alpha M + beta K"},
           p.damping, kSpringDampings);
  v(Key{"alpha", "1/s", "Rayleigh mass coefficient (damping = \"rayleigh\"), >= 0"}, p.alpha);
  v(Key{"beta", "s", "Rayleigh stiffness coefficient (damping = \"rayleigh\"), >= 0"}, p.beta);
  v(Key{"inputs", "", "1-based nodes [i, j] the input forces act on; [] means [[nx, ny]]"},
    p.inputs);
  v(Key{"outputs", "", "1-based observed nodes [i, j]; [] means [[nx, ny]]"}, p.outputs);
  v.choice(Key{"output_quantity", "", "what the outputs observe"}, p.output_quantity,
           kOutputQuantities);
}

class LatticeSpec final : public ModelSpec {
 public:
  // The network is built on first use, not when the file is read: `--dry-run`, the memory
  // guards and the estimates need only the parameters (a lattice of 10^8 nodes is refused by
  // the guard before anything of its size is allocated).
  explicit LatticeSpec(LatticeParameters p) : ModelSpec(structure_of(p)), p_(std::move(p)) {}
  std::string_view kind() const override { return "lattice"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    lattice_keys(p_, w);
  }
  void record(io::ResultsWriter& out) const override {
    KeyRecorder rec(out, layout::kModel);
    lattice_keys(p_, rec);
    out.set_attribute(layout::kModel, "n", static_cast<std::int64_t>(p_.size()));
    out.set_attribute(layout::kModel, "elements", static_cast<std::int64_t>(p_.elements()));
    out.set_attribute(layout::kModel, "convention",
                      std::string("M q'' + D q' + K q + G^T phi(G q) = B u, y = Cp q + Cv q'; "
                                  "K = k_l G^T G, phi(s) = k_n s^3, node (i, j) is coordinate "
                                  "i - 1 + nx (j - 1)"));
  }
  LinearSystem linear_system() const override {
    require(is_linear(), "the lattice with k_n = ", p_.k_n,
            " is nonlinear and has no LTI form: set model.k_n = 0 for its linear part");
    return net()->linear_system();
  }
  NonlinearNetwork network() const override { return *net(); }
  std::unique_ptr<FullModel> build(SparseBackend solver) const override {
    return std::make_unique<NetworkFullModel>(net(), solver);
  }
  std::string parameter_refusal(const std::string& name) const override {
    return spring_parameter_refusal(name, p_.damping);
  }
  std::shared_ptr<const ModelSpec> at(const ParameterDomain& domain,
                                      const Vector& mu) const override {
    return std::make_shared<LatticeSpec>(spring_model_at(p_, domain, mu));
  }
  ParametricNetwork parametric_network(const ParameterDomain& domain) const override {
    return spring_parametric_network(lattice_network(spring_unit_model(p_)), spring_constants(p_),
                                     domain);
  }

 private:
  static ModelStructure structure_of(const LatticeParameters& p) {
    ModelStructure s;
    s.form = ModelStructure::Form::network;
    s.size = p.size();
    s.linear = p.k_n == 0.0;
    s.linear_first_order = false;
    s.nonlinear_elements = s.linear ? 0 : p.elements();
    // The Newton matrix's Cholesky factor of a 2-D grid has about 2.25 n log2 n nonzeros
    // (CHOLMOD's analysis of nx = 1000: 4.5e7). Measured full steps of
    // experiments/pod_deim_lattice.toml (t_end = 5, 2026-11-27, load 1-2): 251, 528 and 603 ns
    // per node at nx = 100, 316, 1000, about 30 ns n log2 n.
    const double n = static_cast<double>(p.size());
    s.implicit_step_seconds = 3e-8 * n * std::log2(std::max(n, 2.0));
    s.factor_mib = 2.25 * n * std::log2(std::max(n, 2.0)) * 12.0 / 1048576.0;  // value + row
    s.size_keys = "model.nx, model.ny";
    s.coordinate = "node";
    s.linear_hint = detail::concat("set model.k_n = 0 (got k_n = ", p.k_n, ")");
    return s;
  }

  std::shared_ptr<const NonlinearNetwork> net() const {
    std::call_once(
        built_, [this] { net_ = std::make_shared<const NonlinearNetwork>(lattice_network(p_)); });
    return net_;
  }

  LatticeParameters p_;
  mutable std::once_flag built_;
  mutable std::shared_ptr<const NonlinearNetwork> net_;
};

std::unique_ptr<ModelSpec> read_lattice_model(TableReader& r, const std::string& source,
                                              const std::filesystem::path& base_dir) {
  LatticeParameters p;
  KeyReader reader(r, "model", base_dir);
  lattice_keys(p, reader);
  r.finish(" for model.type = \"lattice\"");
  check_spring_model(r, source, p);
  return std::make_unique<LatticeSpec>(std::move(p));
}

void lattice_model_keys(std::vector<KeyDoc>& rows) {
  LatticeParameters p;
  KeyDocs docs(rows, "model");
  lattice_keys(p, docs);
}

}  // namespace

extern const ModelKindInfo kLatticeModelKind{
    "lattice",
    "an nx x ny lattice of masses with linear + cubic springs to the four neighbours and to "
    "walls (a nonlinear network at any size)",
    &read_lattice_model, &lattice_model_keys};

}  // namespace mor::experiments
