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

std::string to_toml(const MultibodyExperimentConfig& c) {
  std::ostringstream os;
  os.precision(17);
  const CvodeOptions& o = c.cvode;
  const AnalysisSpec& a = c.analysis;
  os << "[experiment]\nname = " << toml_string(c.name)
     << "\ndescription = " << toml_string(c.description)
     << "\noutput = " << toml_string(c.output.string())
     << "\n\n[model]\ntype = " << toml_string(c.model) << "\n\n[simulation]\nmethod = \""
     << to_string(o.method) << "\"\nrtol = " << o.rtol << "\natol = " << o.atol
     << "\nt_end = " << o.t_end << "\noutput_dt = " << o.output_dt << "\nmax_step = " << o.max_step
     << "\nmax_steps = " << o.max_steps << "\nreference_factor = " << c.reference_factor
     << "\n\n[linear]\nenabled = " << (c.linear ? "true" : "false")
     << "\nt_end = " << c.linear_t_end << "\noutput_dt = " << c.linear_output_dt << "\n\n[input]\n";
  write_input(os, c.input);
  os << "\n[reduction]\nmethod = " << toml_string(std::string(c.reduction->name())) << "\n";
  c.reduction->write_toml(os);
  os << "\n[analysis]\n";
  AnalysisSpec analysis = a;
  KeyWriter writer(os);
  analysis_keys(analysis, writer);
  os << "\n[output]\nplots = " << (c.plots ? "true" : "false")
     << "\nanimation = " << toml_string(c.animation) << "\nanimation_fps = " << c.animation_fps
     << "\n";
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

/// M q'' + D q' + K q = B u as x' = f(t, x) = J x + [0; M^-1 B u], x = [q; q'] (M factorised
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
    CvodeOptions& o = c.cvode;
    try {
      o.method =
          parse_cvode_method(r.text("method", std::string(to_string(model->preferred_method()))));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(concat(r.where("method"), ": simulation: ", e.what()));
    }
    o.rtol = r.real("rtol", o.rtol);
    o.atol = r.real("atol", o.atol);
    o.t_end = r.real("t_end", model->horizon());
    o.output_dt = r.real("output_dt", 0.01);
    o.max_step = r.real("max_step", 0.0);
    o.max_steps = r.integer("max_steps", o.max_steps);
    c.reference_factor = r.real("reference_factor", c.reference_factor);
    r.finish();
    require(o.rtol > 0.0 && o.atol > 0.0, r.where("rtol"),
            ": simulation.rtol and atol must be > 0, got rtol = ", o.rtol, ", atol = ", o.atol);
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
    c.linear = r.boolean("enabled", c.linear);
    c.linear_t_end = r.real("t_end", c.linear_t_end);
    c.linear_output_dt = r.real("output_dt", c.linear_output_dt);
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
    c.plots = r.boolean("plots", c.plots);
    c.animation = r.text("animation", c.animation);
    c.animation_fps = r.real("animation_fps", c.animation_fps);
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

}  // namespace mor::experiments
