// SPDX-License-Identifier: GPL-3.0-or-later
// Multibody experiment files: reading and validating one, and its effective configuration as TOML.
#include "experiments/runner/multibody_run.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/multibody.hpp"
#include "reduction/lti_operator.hpp"
#include "reduction/modal_truncation.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

const std::vector<std::string> kReductionMethods = {"none", "bt", "sobt", "modal"};

inline constexpr Choice<CvodeMethod> kCvodeMethods[] = {{"bdf", CvodeMethod::bdf},
                                                        {"adams", CvodeMethod::adams}};

/// [simulation] of a multibody file: the CVODE run. t_end = 0 and method = "preferred" stand for
/// the benchmark's own horizon and method.
struct MultibodySimulationTable {
  std::string method = "preferred";
  double rtol = CvodeOptions{}.rtol;
  double atol = CvodeOptions{}.atol;
  double t_end = 0.0;
  double output_dt = 0.01;
  double max_step = 0.0;
  Index max_steps = CvodeOptions{}.max_steps;
  double reference_factor = 100.0;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"method", "",
          "CVODE's method: bdf, adams, or preferred (the benchmark's: BDF for the stiff A05)"},
      method);
    v(Key{"rtol", "", "CVODE relative tolerance, > 0"}, rtol);
    v(Key{"atol", "", "CVODE absolute tolerance, > 0"}, atol);
    v(Key{"t_end", "s", "end of the benchmark run; 0: the benchmark's horizon"}, t_end);
    v(Key{"output_dt", "s", "output interval, in (0, t_end]"}, output_dt);
    v(Key{"max_step", "s", "CVODE's largest step; 0: no limit"}, max_step);
    v(Key{"max_steps", "", "CVODE's step limit"}, max_steps);
    v(Key{"reference_factor", "",
          "accuracy check: the same run at tolerances / this factor (> 1); 0: none"},
      reference_factor);
  }
};

/// [linear] of a multibody file: the linearisation's comparison and the reduced model's run.
template <class C, class V>
void linear_keys(C& c, V& v) {
  v(Key{"enabled", "", "linearise at the benchmark's operating point and compare"}, c.linear);
  v(Key{"t_end", "s", "horizon of the linear, nonlinear and reduced responses to [input]"},
    c.linear_t_end);
  v(Key{"output_dt", "s", "their output interval, in (0, t_end]"}, c.linear_output_dt);
}

/// [output] of a multibody file.
template <class C, class V>
void multibody_output_keys(C& c, V& v) {
  v(Key{"plots", "", "make the PNG figures after the run"}, c.plots);
  v(Key{"animation", "", "\"gif\" (an animated GIF of the motion) or \"none\""}, c.animation);
  v(Key{"animation_fps", "1/s", "frames per second of the animation, in (0, 100]"},
    c.animation_fps);
}

MultibodySimulationTable simulation_table(const MultibodyExperimentConfig& c) {
  const CvodeOptions& o = c.cvode;
  return {std::string(to_string(o.method)),
          o.rtol,
          o.atol,
          o.t_end,
          o.output_dt,
          o.max_step,
          o.max_steps,
          c.reference_factor};
}

std::string to_toml(const MultibodyExperimentConfig& c) {
  std::ostringstream os;
  os.precision(17);
  KeyWriter w(os);
  os << "[experiment]\n";
  ExperimentTable e{c.name, c.description, c.output.string()};
  e.visit_keys(w);
  os << "\n[model]\ntype = " << toml_string(c.model) << "\n\n[simulation]\n";
  simulation_table(c).visit_keys(w);
  os << "\n[linear]\n";
  MultibodyExperimentConfig copy = c;
  linear_keys(copy, w);
  os << "\n[input]\n";
  write_input(os, c.input);
  os << "\n[reduction]\nmethod = " << toml_string(std::string(c.reduction->name())) << "\n";
  c.reduction->write_toml(os);
  os << "\n[analysis]\n";
  analysis_keys(copy.analysis, w);
  os << "\n[output]\n";
  multibody_output_keys(copy, w);
  return os.str();
}

std::string read_model_type(const toml::table& root) {
  const toml::node* n = root["model"]["type"].node();
  if (!n) return "";
  if (auto v = n->value_exact<std::string>()) return *v;
  return "";
}

bool is_multibody_id(const std::string& id) {
  const auto ids = multibody_model_ids();
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

bool is_multibody_experiment(const std::filesystem::path& file,
                             const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(read_text_file(file), file.string());
  } catch (const toml::parse_error& e) {
    throw InvalidArgument(
        concat(file.string(), ":", e.source().begin.line, ": not valid TOML: ", e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o);
  return is_multibody_id(read_model_type(root));
}

MultibodyExperimentConfig parse_multibody_experiment(const std::string& text,
                                                     const std::string& source,
                                                     const std::filesystem::path& base_dir,
                                                     const std::vector<std::string>& overrides) {
  toml::table root = parse_root(
      text, source, overrides,
      {"experiment", "model", "simulation", "linear", "input", "reduction", "analysis", "output"});
  auto table = [&](const char* name) { return root[name].as_table(); };
  MultibodyExperimentConfig c;
  c.source = source;
  {
    TableReader r(table("experiment"), "experiment", source);
    read_experiment_table(r, source, c.name, c.description, c.output);
  }
  std::unique_ptr<MultibodyModel> model;
  {
    TableReader r(table("model"), "model", source);
    c.model = r.text("type", "");
    r.finish(" (multibody models take only model.type)");
    require(is_multibody_id(c.model), r.where("type"), ": model.type '", c.model,
            "' is not a multibody model (known: ", join(multibody_model_ids()), ")");
    model = make_multibody_model(c.model);
  }
  {
    TableReader r(table("simulation"), "simulation", source);
    MultibodySimulationTable t;
    KeyReader reader(r, "simulation", base_dir);
    t.visit_keys(reader);
    r.finish();
    CvodeOptions& o = c.cvode;
    try {
      o.method = t.method == "preferred" ? model->preferred_method() : parse_cvode_method(t.method);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(
          concat(r.where("method"), ": simulation: ", e.what(), " (or preferred)"));
    }
    o.rtol = t.rtol;
    o.atol = t.atol;
    o.t_end = t.t_end == 0.0 ? model->horizon() : t.t_end;
    o.output_dt = t.output_dt;
    o.max_step = t.max_step;
    o.max_steps = t.max_steps;
    c.reference_factor = t.reference_factor;
    require(o.rtol > 0.0 && std::isfinite(o.rtol) && o.atol > 0.0 && std::isfinite(o.atol),
            r.where("rtol"),
            ": simulation.rtol and atol must be finite numbers > 0, got rtol = ", o.rtol,
            ", atol = ", o.atol);
    require(std::isfinite(o.t_end) && o.t_end > 0.0, r.where("t_end"),
            ": simulation.t_end must be > 0, got ", o.t_end);
    require(o.output_dt > 0.0 && o.output_dt <= o.t_end, r.where("output_dt"),
            ": simulation.output_dt must be in (0, t_end], got ", o.output_dt);
    require(o.max_step >= 0.0, r.where("max_step"), ": simulation.max_step must be >= 0, got ",
            o.max_step);
    require(c.reference_factor == 0.0 || c.reference_factor > 1.0, r.where("reference_factor"),
            ": simulation.reference_factor must be 0 (no reference run) or > 1, got ",
            c.reference_factor);
  }
  {
    TableReader r(table("linear"), "linear", source);
    KeyReader reader(r, "linear", base_dir);
    linear_keys(c, reader);
    r.finish();
    require(std::isfinite(c.linear_t_end) && c.linear_t_end > 0.0, r.where("t_end"),
            ": linear.t_end must be > 0, got ", c.linear_t_end);
    require(c.linear_output_dt > 0.0 && c.linear_output_dt <= c.linear_t_end, r.where("output_dt"),
            ": linear.output_dt must be in (0, t_end], got ", c.linear_output_dt);
  }
  {
    TableReader r(table("input"), "input", source);
    c.input = read_input(r, "input", source, base_dir);
  }
  {
    TableReader r(table("reduction"), "reduction", source);
    c.reduction = read_reduction(r, source, base_dir, kReductionMethods);
  }
  {
    TableReader r(table("analysis"), "analysis", source);
    c.analysis = read_analysis(r);
  }
  {
    TableReader r(table("output"), "output", source);
    KeyReader reader(r, "output", base_dir);
    multibody_output_keys(c, reader);
    r.finish();
    require(c.animation == "gif" || c.animation == "none", r.where("animation"),
            ": output.animation must be \"gif\" or \"none\", got '", c.animation, "'");
    require(c.animation_fps > 0.0 && c.animation_fps <= 100.0, r.where("animation_fps"),
            ": output.animation_fps must be in (0, 100], got ", c.animation_fps);
  }
  c.toml = to_toml(c);
  return c;
}

MultibodyExperimentConfig load_multibody_experiment(const std::filesystem::path& file,
                                                    const std::vector<std::string>& overrides) {
  return parse_multibody_experiment(read_text_file(file), file.string(), file.parent_path(),
                                    overrides);
}

std::vector<KeyDoc> multibody_key_reference() {
  std::vector<KeyDoc> rows;
  MultibodyExperimentConfig c;
  {
    ExperimentTable t;
    t.name = c.name;
    KeyDocs docs(rows, "experiment");
    t.visit_keys(docs);
  }
  std::string ids;
  for (const auto& id : multibody_model_ids()) ids += (ids.empty() ? "" : ", ") + id;
  rows.push_back({"model", "type", "one of " + ids, "(required)", "",
                  "the multibody benchmark (`mor list models`); [model] takes no other key", ""});
  {
    MultibodySimulationTable t;
    KeyDocs docs(rows, "simulation");
    t.visit_keys(docs);
  }
  {
    KeyDocs docs(rows, "linear");
    linear_keys(c, docs);
  }
  rows.push_back({"input", "type", "as in experiment files", "\"sine\"", "",
                  "the input of the linear comparison, on every input of the linear model "
                  "([input] takes the keys of experiment files: `mor keys input`)",
                  ""});
  {
    std::string methods;
    for (const auto& m : kReductionMethods) methods += (methods.empty() ? "" : ", ") + m;
    rows.push_back({"reduction", "method", "one of " + methods, "\"none\"", "",
                    "reduction of the linearisation; the method's keys as in experiment files "
                    "(`mor keys reduction`)",
                    ""});
  }
  {
    KeyDocs docs(rows, "analysis");
    analysis_keys(c.analysis, docs);
  }
  {
    KeyDocs docs(rows, "output");
    multibody_output_keys(c, docs);
  }
  return rows;
}

}  // namespace mor::experiments
