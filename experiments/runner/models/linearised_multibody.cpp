// SPDX-License-Identifier: GPL-3.0-or-later
// Model kind "linearised_multibody": the linearisation of a multibody benchmark (A01 pendulum,
// A04 Bricard, A05 flyball governor, Schiehlen robot; models/multibody.hpp) about its operating
// point, M q'' + D q' + K q = B u, y = Cp q + Cv q', as an LTI model like any other: every linear
// method, the analysis, the integrators and sweeps (e.g. over model.benchmark) run on it. The
// nonlinear benchmark runs themselves (CVODE, energy balance, animation) are the multibody
// experiment files (docs/multibody.md).
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/lti_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/multibody.hpp"
#include "src/core/errors.hpp"
#include "src/io/model_files.hpp"

namespace mor::experiments {
namespace {

struct LinearisedMultibodyOptions {
  std::string benchmark = "flyball";
};

/// The [model] keys of a linearised multibody benchmark, declared once.
template <class O, class V>
void linearised_multibody_keys(O& o, V& v) {
  v(Key{"benchmark", "",
        "the benchmark linearised: pendulum (A01), bricard (A04), flyball (A05) or robot "
        "(Schiehlen); about its operating point (docs/multibody.md)"},
    o.benchmark);
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

class LinearisedMultibodySpec final : public ModelSpec {
 public:
  LinearisedMultibodySpec(LinearisedMultibodyOptions o, const MultibodyModel& model)
      : ModelSpec(lti_structure(model.linearised())),
        o_(std::move(o)),
        title_(model.title()),
        inputs_(model.linear_input_names()),
        outputs_(model.linear_output_names()),
        system_(std::make_shared<const LinearSystem>(model.linearised())) {}

  std::string_view kind() const override { return "linearised_multibody"; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    linearised_multibody_keys(o_, w);
  }
  void record(io::ResultsWriter& out) const override {
    KeyRecorder rec(out, layout::kModel);
    linearised_multibody_keys(o_, rec);
    const auto& s = std::get<SecondOrderSystem>(*system_);
    out.set_attribute(layout::kModel, "title", title_ + ", linearised");
    out.set_attribute(layout::kModel, "n", static_cast<std::int64_t>(s.n()));
    out.set_attribute(layout::kModel, "input_names", joined_names(inputs_));
    out.set_attribute(layout::kModel, "output_names", joined_names(outputs_));
    out.set_attribute(
        layout::kModel, "symmetric",
        std::string(symmetric_iteration(s) ? "M, D, K symmetric" : "M, D or K nonsymmetric"));
    out.set_attribute(layout::kModel, "convention",
                      std::string("M q'' + D q' + K q = B u, y = Cp q + Cv q' (deviations from "
                                  "the operating point)"));
  }
  LinearSystem linear_system() const override { return *system_; }
  std::unique_ptr<FullModel> build(SparseBackend solver) const override {
    return std::make_unique<LtiFullModel>(system_, solver);
  }

 private:
  LinearisedMultibodyOptions o_;
  std::string title_;
  std::vector<std::string> inputs_, outputs_;
  std::shared_ptr<const LinearSystem> system_;
};

std::unique_ptr<ModelSpec> read_linearised_multibody(TableReader& r, const std::string& source,
                                                     const std::filesystem::path& base_dir) {
  LinearisedMultibodyOptions o;
  KeyReader reader(r, "model", base_dir);
  linearised_multibody_keys(o, reader);
  r.finish(" for model.type = \"linearised_multibody\"");
  std::unique_ptr<MultibodyModel> model;
  try {
    model = make_multibody_model(o.benchmark);
  } catch (const InvalidArgument& e) {
    const std::string near = suggestion(o.benchmark, multibody_model_ids());
    throw InvalidArgument(detail::concat(r.where("benchmark"), ": model.benchmark: ", e.what(),
                                         near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  auto spec = std::make_unique<LinearisedMultibodySpec>(std::move(o), *model);
  // The integrators and every method need M nonsingular (an ODE, not a DAE).
  io::check_nonsingular(std::get<SecondOrderSystem>(spec->linear_system()),
                        detail::concat(source, ": the linearised ", model->title()));
  return spec;
}

void linearised_multibody_model_keys(std::vector<KeyDoc>& rows) {
  LinearisedMultibodyOptions o;
  KeyDocs docs(rows, "model");
  linearised_multibody_keys(o, docs);
}

}  // namespace

extern const ModelKindInfo kLinearisedMultibodyKind{
    "linearised_multibody",
    "a multibody benchmark (pendulum, bricard, flyball, robot) linearised about its operating "
    "point: M q'' + D q' + K q = B u, y = Cp q + Cv q'",
    &read_linearised_multibody, &linearised_multibody_model_keys};

}  // namespace mor::experiments
