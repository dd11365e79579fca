// SPDX-License-Identifier: GPL-3.0-or-later
// Model kind "file": an LTI model a researcher brings as a MATLAB .mat (v4, v5, v7.3) or
// MatrixMarket file set, first order E x' = A x + B u, y = C x + D u or second order
// M q'' + D q' + K q = B u, y = Cp q + Cv q' (src/io/model_files.hpp reads and checks it).
// The model is imported once, when the experiment file is read, so that a broken file is
// reported before anything runs.
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/lti_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "src/io/model_files.hpp"

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
  FileSpec(FileModelOptions o, io::ImportedModel imported)
      : ModelSpec(lti_structure(imported.system)),
        o_(std::move(o)),
        report_(std::move(imported.report)),
        system_(std::make_shared<const LinearSystem>(std::move(imported.system))) {}

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
  return std::make_unique<FileSpec>(std::move(o), std::move(imported));
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
