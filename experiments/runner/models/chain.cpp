// SPDX-License-Identifier: GPL-3.0-or-later
// Model kind "mass_spring_chain": the MORwiki nonlinear mass-spring-damper chain at any N
// (models/mass_spring_chain.hpp), linear when k_n = 0.
#include <optional>
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/spring_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "models/mass_spring_chain.hpp"
#include "reduction/empirical_gramians_impl.hpp"

namespace mor::experiments {
namespace {

/// The [model] keys of the chain, declared once.
template <class P, class V>
void chain_keys(P& p, V& v) {
  v(Key{"N", "", "number of masses, >= 1"}, p.N);
  v(Key{"m", "kg", "mass of each body, > 0"}, p.m);
  v(Key{"k_l", "N/m", "linear spring stiffness, >= 0"}, p.k_l);
  v(Key{"d", "N s/m", "damper coefficient (damping = \"chain\"), >= 0"}, p.d);
  v(Key{"k_n", "N/m^3", "cubic spring coefficient, >= 0 (0: the linear chain)"}, p.k_n);
  v.choice(Key{"damping", "",
               "dampers along the chain (the benchmark) or Rayleigh D = alpha M + "
               "beta K"},
           p.damping, kSpringDampings);
  v(Key{"alpha", "1/s", "Rayleigh mass coefficient (damping = \"rayleigh\"), >= 0"}, p.alpha);
  v(Key{"beta", "s", "Rayleigh stiffness coefficient (damping = \"rayleigh\"), >= 0"}, p.beta);
  v(Key{"inputs", "", "1-based masses the input forces act on; [] means [N]"}, p.inputs);
  v(Key{"outputs", "", "1-based observed masses; [] means [N]"}, p.outputs);
  v.choice(Key{"output_quantity", "", "what the outputs observe"}, p.output_quantity,
           kOutputQuantities);
}

class ChainFullModel final : public FullModel, public NetworkOperators {
 public:
  ChainFullModel(const ChainParameters& p, SparseBackend solver)
      : chain_(p), ws_(chain_, solver), solver_(solver), linear_(chain_.linear_system()) {
    set_facts(
        {chain_.n(), chain_.n_inputs(), chain_.n_outputs(), false, chain_.is_linear(), &linear_,
         chain_.is_linear() ? "" : "rest (q = v = 0, where the cubic springs have no stiffness)",
         std::string(to_string(solver_))});
  }
  void output(const Vector& q, const Vector& v, const Vector&, Vector& y) const override {
    chain_.output(q, v, y);
  }
  std::optional<double> energy(const Vector& q, const Vector& v) const override {
    return chain_.kinetic_energy(v) + chain_.potential_energy(q);
  }
  /// The linear chain; with k_n > 0 its linearisation about rest, where the cubic springs have
  /// no stiffness: the same M, D, K.
  std::unique_ptr<LtiOperator> lti_operator() const override {
    return std::make_unique<SecondOrderLtiOperator>(linear_);
  }
  // The network structure, with the chain's stencil as the faster evaluation of its force, its
  // projection (the exact reduced cubic tensor, DEIM over masses) and its empirical Gramians'
  // simulations; ECSW, element sampling and differential balancing go through its network.
  const NetworkOperators* network_operators() const override { return this; }
  const NonlinearNetwork& network() const override {
    if (!network_) network_ = std::make_unique<NonlinearNetwork>(chain_.network());
    return *network_;
  }
  void nonlinear_force(const Vector& q, Vector& g) const override { chain_.nonlinear_force(q, g); }
  ProjectedModel project(const Matrix& V, const Matrix& W,
                         const ProjectionOptions& o) const override {
    // Node sampling (and the full and tensor treatments) on the chain's own stencil kernels;
    // element sampling and ECSW on its network form.
    const bool elements = o.nonlinear == NonlinearTreatment::deim &&
                          o.sampling == DeimSampling::elements && !chain_.is_linear();
    if (elements || o.nonlinear == NonlinearTreatment::ecsw)
      return NetworkOperators::project(V, W, o);
    return ProjectedModel(linear_, CubicPathStencil{chain_.n(), chain_.parameters().k_n}, V, W, o);
  }
  EmpiricalBalancingResult empirical_balancing(const EmpiricalBalancingOptions& o) const override {
    // The chain's own stencil and tridiagonal solves: its network form is exact too, but its
    // Gramian runs took five times as long at N = 1000 (general element laws, CHOLMOD).
    return mor::empirical_balancing_of(chain_, o);
  }
  IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q, Vector& v,
                            const StepObserver& observe, ProgressReporter* progress) override {
    return integrate(chain_, ws_, input, o, q, v, observe, progress);
  }
  Index factorizations() const override { return ws_.factorizations(); }

 private:
  MassSpringChain chain_;
  MassSpringChain::Workspace ws_;
  SparseBackend solver_;
  SecondOrderSystem linear_;
  /// The chain's network form, built when first asked for (element sampling, ECSW,
  /// differential balancing).
  mutable std::unique_ptr<NonlinearNetwork> network_;
};

/// The chain is a network (G the difference stencil, phi(s) = k_n s^3) with an exact reduced
/// cubic tensor.
ModelStructure chain_structure(const ChainParameters& p) {
  ModelStructure s;
  s.form = ModelStructure::Form::network;
  s.size = p.N;
  s.linear = p.k_n == 0.0;
  s.linear_first_order = false;
  s.nonlinear_elements = s.linear ? 0 : p.N + 1;
  s.reduced_tensor = true;
  s.size_keys = "model.N";
  s.coordinate = "mass";
  s.linear_hint = detail::concat("set model.k_n = 0 (got k_n = ", p.k_n, ")");
  return s;
}

class ChainSpec final : public ModelSpec {
 public:
  explicit ChainSpec(ChainParameters p) : ModelSpec(chain_structure(p)), p_(std::move(p)) {}
  std::string_view kind() const override { return "mass_spring_chain"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    chain_keys(p_, w);
  }
  void record(io::ResultsWriter& out) const override {
    KeyRecorder rec(out, layout::kModel);
    chain_keys(p_, rec);
    // Resolved defaults: the masses the inputs and outputs are at.
    auto or_last = [&](const std::vector<Index>& v) {
      return v.empty() ? std::vector<std::int64_t>{p_.N}
                       : std::vector<std::int64_t>(v.begin(), v.end());
    };
    out.set_attribute(layout::kModel, "inputs", or_last(p_.inputs));
    out.set_attribute(layout::kModel, "outputs", or_last(p_.outputs));
    out.set_attribute(layout::kModel, "convention",
                      std::string("M q'' + D q' + K q + g(q) = B u, y = Cp q + Cv q'; K = -k_l T, "
                                  "D = -d T (or alpha M + beta K), g = -f of MORwiki"));
  }
  LinearSystem linear_system() const override {
    require(is_linear(), "the chain with k_n = ", p_.k_n,
            " is nonlinear and has no LTI form: set model.k_n = 0 for its linear part");
    return MassSpringChain(p_).linear_system();
  }
  NonlinearNetwork network() const override { return MassSpringChain(p_).network(); }
  std::unique_ptr<FullModel> build(SparseBackend solver) const override {
    return std::make_unique<ChainFullModel>(p_, solver);
  }
  std::string parameter_refusal(const std::string& name) const override {
    return spring_parameter_refusal(name, p_.damping);
  }
  std::shared_ptr<const ModelSpec> at(const ParameterDomain& domain,
                                      const Vector& mu) const override {
    return std::make_shared<ChainSpec>(spring_model_at(p_, domain, mu));
  }
  ParametricNetwork parametric_network(const ParameterDomain& domain) const override {
    return spring_parametric_network(MassSpringChain(spring_unit_model(p_)).network(),
                                     spring_constants(p_), domain);
  }

 private:
  ChainParameters p_;
};

std::unique_ptr<ModelSpec> read_chain_model(TableReader& r, const std::string& source,
                                            const std::filesystem::path& base_dir) {
  ChainParameters p;
  KeyReader reader(r, "model", base_dir);
  chain_keys(p, reader);
  r.finish();
  check_spring_model(r, source, p);
  return std::make_unique<ChainSpec>(std::move(p));
}

void chain_model_keys(std::vector<KeyDoc>& rows) {
  ChainParameters p;
  KeyDocs docs(rows, "model");
  chain_keys(p, docs);
}

}  // namespace

extern const ModelKindInfo kMassSpringChainKind{
    "mass_spring_chain",
    "the MORwiki nonlinear mass-spring-damper chain at any N (linear when k_n = 0)",
    &read_chain_model, &chain_model_keys};

}  // namespace mor::experiments
