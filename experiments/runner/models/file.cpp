// SPDX-License-Identifier: GPL-3.0-or-later
// Model kind "file": an LTI model a researcher brings as a MATLAB .mat (v4, v5, v7.3) or
// MatrixMarket file set, first order E x' = A x + B u, y = C x + D u or second order
// M q'' + D q' + K q = B u, y = Cp q + Cv q' (src/io/model_files.hpp reads and checks it).
// The model is imported once, when the experiment file is read, so that a broken file is
// reported before anything runs.
//
// Parameters: a matrix X of the file may come with affine terms X_<name> (MatrixMarket
// P.X_<name>.mtx), X(mu) = X + sum_name mu_name X_<name>; the parameters of a file model are
// the names found, and [parameters] gives each a range. The terms are read when the model is
// first asked for at a parameter, once.
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/affine_file_terms.hpp"
#include "experiments/runner/models/lti_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "src/io/model_files.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor::experiments {
namespace {

constexpr Choice<io::ModelForm> kForms[] = {{"automatic", io::ModelForm::automatic},
                                            {"first_order", io::ModelForm::first_order},
                                            {"second_order", io::ModelForm::second_order}};

struct FileModelOptions {
  std::filesystem::path path;
  io::ModelForm form = io::ModelForm::automatic;
  std::map<std::string, std::string> variables;
  std::map<std::string, std::string> files;
};

/// The [model] keys of a model file, declared once.
template <class O, class V>
void file_keys(O& o, V& v) {
  v(Key{"path", "",
        "a .mat file (MATLAB v4, v5 or v7.3), or the prefix P of MatrixMarket files P.X.mtx, "
        "P_X.mtx or P.X (X = E, A, B, C, D or M, D, K, B, Cp, Cv); relative to the experiment "
        "file"},
    o.path);
  v.choice(Key{"form", "",
               "first order (E, A, B, C, D; E and D optional), second order (M, D, K, B, Cp, "
               "Cv; D, Cv optional), or automatic: second order if the file has M and K and no A"},
           o.form, kForms);
  v(Key{"variables", "", "the file's names of the matrices, e.g. { A = \"A_rail\", D = \"E\" }"},
    o.variables);
  v(Key{"files", "",
        "MatrixMarket files listed per matrix instead of a prefix, e.g. { A = \"a.mtx\", B = "
        "\"b.mtx\" }; relative to the experiment file"},
    o.files);
}

class FileSpec final : public ModelSpec {
 public:
  FileSpec(FileModelOptions o, io::ImportedModel imported, std::string name,
           std::shared_ptr<AffineTermCache> terms)
      : ModelSpec(lti_structure(imported.system)),
        o_(std::move(o)),
        report_(std::move(imported.report)),
        system_(std::make_shared<const LinearSystem>(std::move(imported.system))),
        name_(std::move(name)),
        terms_(std::move(terms)) {}

  std::string parameter_refusal(const std::string& name) const override {
    return file_parameter_refusal(terms_.get(), name_, name);
  }
  std::vector<std::string> required_parameters() const override {
    return terms_ ? terms_->parameters() : std::vector<std::string>{};
  }
  std::shared_ptr<const ModelSpec> at(const ParameterDomain& domain,
                                      const Vector& mu) const override {
    LinearSystem sys = std::visit([&](const auto& p) -> LinearSystem { return p.at(mu); },
                                  parametric_linear_system(domain));
    // The methods and the integrators need E (or M) nonsingular at every point used.
    const std::string where = detail::concat(name_, " at ", domain.describe(mu));
    if (const auto* d = std::get_if<DescriptorSystem>(&sys))
      io::check_nonsingular(*d, where);
    else
      io::check_nonsingular(std::get<SecondOrderSystem>(sys), where);
    // A definite E of the file stays definite (check_nonsingular already factorizes a symmetric
    // M by Cholesky): checked at every point built, the box's corners first (check_parameters),
    // which covers the box (an affine family definite at the corners is definite at their
    // convex combinations).
    if (const auto* d = std::get_if<DescriptorSystem>(&sys)) {
      const io::MatrixReport* e = report_.find("E");
      if (e != nullptr && e->positive_definite == io::Verdict::yes) {
        SparseMatrix E = d->E;
        E.makeCompressed();
        auto solver = make_sparse_solver(SparseBackend::cholmod);
        try {
          solver->analyze_pattern(E);
          solver->factorize(E);
        } catch (const NumericalError&) {
          throw InvalidArgument(detail::concat(
              where,
              ": E is not positive definite there (the file's E is): its affine terms "
              "make it indefinite"));
        }
      }
    }
    io::ImportedModel imported{std::move(sys), report_};
    return std::make_shared<FileSpec>(o_, std::move(imported), name_, terms_);
  }
  ParametricLinearSystem parametric_linear_system(const ParameterDomain& domain) const override {
    require(terms_ != nullptr, "the model file ", name_, " has no affine terms");
    const std::vector<io::AffineTerm>& t = terms_->read();
    if (const auto* d = std::get_if<DescriptorSystem>(system_.get())) {
      ParametricDescriptorSystem p;
      p.E = with_terms(d->E, "E", t, domain);
      p.A = with_terms(d->A, "A", t, domain);
      p.B = with_terms(d->B, "B", t, domain);
      p.C = with_terms(d->C, "C", t, domain);
      p.D_ff = with_terms(d->D_ff, "D", t, domain);
      return p;
    }
    const auto& s = std::get<SecondOrderSystem>(*system_);
    ParametricSecondOrderSystem p;
    p.M = with_terms(s.M, "M", t, domain);
    p.D = with_terms(s.D, "D", t, domain);
    p.K = with_terms(s.K, "K", t, domain);
    p.B = with_terms(s.B, "B", t, domain);
    p.Cp = with_terms(s.Cp, "Cp", t, domain);
    p.Cv = with_terms(s.Cv, "Cv", t, domain);
    return p;
  }

  std::string_view kind() const override { return "file"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    file_keys(o_, w);
  }
  void record(io::ResultsWriter& out) const override {
    KeyRecorder rec(out, layout::kModel);
    file_keys(o_, rec);
    out.set_attribute(layout::kModel, "form",
                      std::string(first_order() ? "first_order" : "second_order"));
    out.set_attribute(layout::kModel, "n", static_cast<std::int64_t>(size()));
    out.set_attribute(layout::kModel, "structure", io::describe(report_));
    if (terms_) out.set_attribute(layout::kModel, "affine_terms", describe_affine_terms(*terms_));
    out.set_attribute(layout::kModel, "convention",
                      std::string(first_order() ? "E x' = A x + B u, y = C x + D u"
                                                : "M q'' + D q' + K q = B u, y = Cp q + Cv q'"));
  }
  LinearSystem linear_system() const override { return *system_; }
  std::unique_ptr<FullModel> build(SparseBackend solver) const override {
    return std::make_unique<LtiFullModel>(system_, solver);
  }

 private:
  FileModelOptions o_;
  io::ModelReport report_;
  std::shared_ptr<const LinearSystem> system_;
  std::string name_;
  std::shared_ptr<AffineTermCache> terms_;  ///< null: the file has no affine terms
};

std::unique_ptr<ModelSpec> read_file_model(TableReader& r, const std::string& source,
                                           const std::filesystem::path& base_dir) {
  FileModelOptions o;
  KeyReader reader(r, "model", base_dir);
  file_keys(o, reader);
  r.finish(" for model.type = \"file\"");
  require(!o.path.empty() || !o.files.empty(), source,
          ": model.type = \"file\" needs model.path (a .mat file or a MatrixMarket prefix) or "
          "model.files");
  io::ModelFileSpec spec;
  spec.path = o.path;
  for (const auto& [role, file] : o.files) spec.files[role] = resolve(file, base_dir);
  spec.variables = o.variables;
  spec.form = o.form;
  io::ImportedModel imported = io::import_model(spec);
  // Every method and the integrators need E (or M) nonsingular: a differential-algebraic
  // system is refused here, with the reason, rather than simulated wrongly.
  const std::string name = o.path.empty() ? o.files.begin()->second : o.path.string();
  if (const auto* d = std::get_if<DescriptorSystem>(&imported.system))
    io::check_nonsingular(*d, name);
  else
    io::check_nonsingular(std::get<SecondOrderSystem>(imported.system), name);
  std::shared_ptr<AffineTermCache> terms = find_affine_term_cache(spec, imported.report);
  return std::make_unique<FileSpec>(std::move(o), std::move(imported), name, std::move(terms));
}

void file_model_keys(std::vector<KeyDoc>& rows) {
  FileModelOptions o;
  KeyDocs docs(rows, "model");
  file_keys(o, docs);
}

}  // namespace

extern const ModelKindInfo kFileModelKind{
    "file",
    "an LTI model from a MATLAB .mat (v4, v5, v7.3) or MatrixMarket file: first order "
    "(E, A, B, C, D) or second order (M, D, K, B, Cp, Cv)",
    &read_file_model, &file_model_keys};

}  // namespace mor::experiments
