// SPDX-License-Identifier: GPL-3.0-or-later
// Model kind "network": a nonlinear second-order network a researcher brings as a .mat (v4, v5,
// v7.3) or MatrixMarket file set (src/io/model_files.hpp, import_network):
//   M q'' + D q' + K q + G^T phi(G q) = B u,  y = Cp q + Cv q' (src/systems/nonlinear_network.hpp)
// M, D, K, B, Cp, Cv named as the file kind's second-order form, G (m x n) and phi (m x 4 or
// 1 x 4: the coefficients of s^2 .. s^5). `mor export` of the nonlinear chain writes this form.
// The file is read once, when the experiment file is read.
//
// Parameters: M, D and K may come with affine terms X_<name> (MatrixMarket P.K_<name>.mtx),
// X(mu) = X + sum_name mu_name X_<name>, as for the file kind (affine_file_terms.hpp); the
// network's force (G, phi) and B, Cp, Cv have none.
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/affine_file_terms.hpp"
#include "experiments/runner/models/network_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "src/io/model_files.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor::experiments {
namespace {

struct NetworkModelOptions {
  std::filesystem::path path;
  std::map<std::string, std::string> variables;
  std::map<std::string, std::string> files;
};

/// The [model] keys of a network file, declared once.
template <class O, class V>
void network_keys(O& o, V& v) {
  v(Key{"path", "",
        "a .mat file (MATLAB v4, v5 or v7.3), or the prefix P of MatrixMarket files P.X.mtx, "
        "P_X.mtx or P.X (X = M, D, K, B, Cp, Cv, G, phi); relative to the experiment file"},
    o.path);
  v(Key{"variables", "", "the file's names of the matrices, e.g. { G = \"Delta\" }"}, o.variables);
  v(Key{"files", "",
        "MatrixMarket files listed per matrix instead of a prefix, e.g. { G = \"g.mtx\" }; "
        "relative to the experiment file"},
    o.files);
}

class NetworkSpec final : public ModelSpec {
 public:
  NetworkSpec(NetworkModelOptions o, io::ModelReport report,
              std::shared_ptr<const NonlinearNetwork> net, std::string name,
              std::shared_ptr<AffineTermCache> terms)
      : ModelSpec(structure_of(*net)),
        o_(std::move(o)),
        report_(std::move(report)),
        net_(std::move(net)),
        name_(std::move(name)),
        terms_(std::move(terms)) {}

  std::string parameter_refusal(const std::string& name) const override {
    return file_parameter_refusal(terms_.get(), name_, name);
  }
  std::vector<std::string> required_parameters() const override {
    return terms_ ? terms_->parameters() : std::vector<std::string>{};
  }
  /// The network with M(mu), D(mu), K(mu); M checked nonsingular (positive definite for a
  /// symmetric one) there.
  std::shared_ptr<const ModelSpec> at(const ParameterDomain& domain,
                                      const Vector& mu) const override {
    NonlinearNetwork net = parametric_network(domain).at(mu);
    io::check_nonsingular(net.linear_system(), detail::concat(name_, " at ", domain.describe(mu)));
    return std::make_shared<NetworkSpec>(
        o_, report_, std::make_shared<const NonlinearNetwork>(std::move(net)), name_, terms_);
  }
  ParametricNetwork parametric_network(const ParameterDomain& domain) const override {
    require(terms_ != nullptr, "the model file ", name_, " has no affine terms");
    const std::vector<io::AffineTerm>& t = terms_->read();
    const SecondOrderSystem& s = net_->linear_system();
    ParametricNetwork p{*net_, with_terms(s.M, "M", t, domain), with_terms(s.D, "D", t, domain),
                        with_terms(s.K, "K", t, domain), AffineCoefficient{}};
    return p;
  }

  std::string_view kind() const override { return "network"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    network_keys(o_, w);
  }
  void record(io::ResultsWriter& out) const override {
    KeyRecorder rec(out, layout::kModel);
    network_keys(o_, rec);
    out.set_attribute(layout::kModel, "n", static_cast<std::int64_t>(net_->n()));
    out.set_attribute(layout::kModel, "elements", static_cast<std::int64_t>(net_->n_elements()));
    out.set_attribute(layout::kModel, "structure", io::describe(report_));
    if (terms_) out.set_attribute(layout::kModel, "affine_terms", describe_affine_terms(*terms_));
    out.set_attribute(layout::kModel, "convention",
                      std::string("M q'' + D q' + K q + G^T phi(G q) = B u, y = Cp q + Cv q'; "
                                  "phi(s) = c2 s^2 + c3 s^3 + c4 s^4 + c5 s^5 per element"));
  }
  LinearSystem linear_system() const override {
    require(is_linear(), "the network has m = ", net_->n_elements(),
            " nonlinear elements and no LTI form");
    return net_->linear_system();
  }
  NonlinearNetwork network() const override { return *net_; }
  std::unique_ptr<FullModel> build(SparseBackend solver) const override {
    return std::make_unique<NetworkFullModel>(net_, solver);
  }

 private:
  static ModelStructure structure_of(const NonlinearNetwork& net) {
    ModelStructure s;
    s.form = ModelStructure::Form::network;
    s.size = net.n();
    s.linear = net.is_linear();
    s.linear_first_order = false;
    s.nonlinear_elements = s.linear ? 0 : net.n_elements();
    s.linear_hint = detail::concat("the network has m = ", net.n_elements(),
                                   " nonlinear elements (a linear network has no G, or phi = 0)");
    return s;
  }

  NetworkModelOptions o_;
  io::ModelReport report_;
  std::shared_ptr<const NonlinearNetwork> net_;
  std::string name_;
  std::shared_ptr<AffineTermCache> terms_;  ///< null: the file has no affine terms
};

std::unique_ptr<ModelSpec> read_network_model(TableReader& r, const std::string& source,
                                              const std::filesystem::path& base_dir) {
  NetworkModelOptions o;
  KeyReader reader(r, "model", base_dir);
  network_keys(o, reader);
  r.finish(" for model.type = \"network\"");
  require(!o.path.empty() || !o.files.empty(), source,
          ": model.type = \"network\" needs model.path (a .mat file or a MatrixMarket prefix) or "
          "model.files");
  io::ModelFileSpec spec;
  spec.path = o.path;
  for (const auto& [role, file] : o.files) spec.files[role] = resolve(file, base_dir);
  spec.variables = o.variables;
  spec.form = io::ModelForm::second_order;
  io::ImportedNetwork imported = io::import_network(spec);
  const std::string name = o.path.empty() ? o.files.begin()->second : o.path.string();
  io::check_nonsingular(imported.system, name);
  std::shared_ptr<const NonlinearNetwork> net;
  try {
    net = std::make_shared<const NonlinearNetwork>(std::move(imported.system),
                                                   std::move(imported.G), std::move(imported.phi));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(detail::concat(name, ": ", e.what()));
  }
  std::shared_ptr<AffineTermCache> terms = find_affine_term_cache(spec, imported.report);
  if (terms)
    for (const io::AffineTerm& t : terms->terms)
      require(t.role == "M" || t.role == "D" || t.role == "K", name, ": ", t.variable,
              " is an affine term of ", t.role,
              "; a network's parameters enter M, D and K only (X_<name> for X = M, D, K)");
  return std::make_unique<NetworkSpec>(std::move(o), std::move(imported.report), std::move(net),
                                       name, std::move(terms));
}

void network_model_keys(std::vector<KeyDoc>& rows) {
  NetworkModelOptions o;
  KeyDocs docs(rows, "model");
  network_keys(o, docs);
}

}  // namespace

extern const ModelKindInfo kNetworkModelKind{
    "network",
    "a nonlinear second-order network M q'' + D q' + K q + G^T phi(G q) = B u from a .mat or "
    "MatrixMarket file set (the file kind's M, D, K, B, Cp, Cv plus G and phi)",
    &read_network_model, &network_model_keys};

}  // namespace mor::experiments
