// SPDX-License-Identifier: GPL-3.0-or-later
// Experiment files: reading and validating one into an ExperimentConfig, and its effective
// configuration written back as TOML (experiments/runner/experiment_keys.hpp declares the keys).
#include "experiments/runner/experiment.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parameters.hpp"
#include "experiments/runner/parametric_run.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/errors.hpp"
#include "src/core/version.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

/// The effective configuration, every default filled in, as TOML: stored in results files.

SimulationTable simulation_table(const ExperimentConfig& c) {
  const IntegratorOptions& o = c.integrator;
  return {o.scheme,         o.dt,           o.t_end,       c.solver,
          o.rho_infinity,   o.newton_rtol,  o.newton_atol, o.newton_max_iterations,
          o.reuse_jacobian, o.newton_bound, c.max_steps};
}

OutputTable output_table(const ExperimentConfig& c) {
  return {c.integrator.observe_stride, c.snapshot_stride, c.snapshot_fields, c.compression,
          c.plots};
}

std::string to_toml(const ExperimentConfig& c) {
  std::ostringstream os;
  os.precision(17);
  KeyWriter w(os);
  os << "[experiment]\n";
  ExperimentTable e{c.name, c.description, c.output.string()};
  e.visit_keys(w);
  os << "\n[model]\ntype = " << toml_string(std::string(c.model->kind())) << "\n";
  {
    // The keys that are parameters are in [parameters] only.
    std::ostringstream model;
    model.precision(17);
    c.model->write_toml(model);
    std::istringstream lines(model.str());
    for (std::string line; std::getline(lines, line);) {
      const std::string key = line.substr(0, line.find(" = "));
      if (c.parameters.index_of(key) < 0) os << line << "\n";
    }
  }
  os << "\n[input]\n";
  write_input(os, c.input);
  for (const InputSpec& t : c.training) {
    os << "\n[[training]]\n";
    write_input(os, t);
  }
  os << "\n[simulation]\n";
  if (c.model->owns_simulation())
    c.model->write_table("simulation", os);
  else
    simulation_table(c).visit_keys(w);
  if (const ModelKindInfo* kind = find_model_kind(c.model->kind());
      kind != nullptr && !kind->extra_table.empty()) {
    os << "\n[" << kind->extra_table << "]\n";
    c.model->write_table(kind->extra_table, os);
  }
  os << "\n[output]\n";
  output_table(c).visit_keys(w);
  c.model->write_table("output", os);
  os << "\n[reduction]\nmethod = " << toml_string(std::string(c.reduction->name())) << "\n";
  {
    // The training keys of a parametric reduction only with [parameters] (they are refused
    // without it): the configuration of a run at one point is what it was before them.
    std::ostringstream reduction;
    reduction.precision(17);
    c.reduction->write_toml(reduction);
    std::istringstream lines(reduction.str());
    for (std::string line; std::getline(lines, line);) {
      const std::string key = line.substr(0, line.find(" = "));
      const auto is = [&](const char* k) { return key == k; };
      const bool parametric_key =
          std::any_of(std::begin(kParametricTrainingKeys), std::end(kParametricTrainingKeys), is) ||
          std::any_of(std::begin(kParametricLinearKeys), std::end(kParametricLinearKeys), is);
      if (!parametric_key || !c.parameters.empty()) os << line << "\n";
    }
  }
  os << "\n[analysis]\n";
  (c.analysis ? *c.analysis : Analysis()).write_toml(os);
  write_parameters(os, c.parameters);
  if (!c.parameters.empty()) {
    os << "\n[validation]\n";
    ValidationTable v{c.validation_samples, c.validation_seed, c.validation_compare_local, {}};
    for (Index i = 0; i < c.validation_points.rows(); ++i) {
      const Vector row = c.validation_points.row(i).transpose();
      v.points.emplace_back(row.begin(), row.end());
    }
    v.visit_keys(w);
  }
  return os.str();
}

}  // namespace

/// The effective keys of one input table, its type first.
void write_input(std::ostream& os, const InputSpec& in) {
  os << "type = " << toml_string(in.type) << "\n";
  KeyWriter w(os);
  InputSpec copy = in;
  signal_keys(copy, w);
}

InputSpec read_input(TableReader& r, const std::string& name, const std::string& source,
                     const std::filesystem::path& base_dir) {
  InputSpec in;
  in.type = r.text("type", in.type);
  const auto known = std::find_if(std::begin(kSignalTypes), std::end(kSignalTypes),
                                  [&](const SignalType& t) { return t.name == in.type; });
  if (known == std::end(kSignalTypes)) {
    std::vector<std::string> names;
    for (const auto& t : kSignalTypes) names.emplace_back(t.name);
    const std::string near = suggestion(in.type, names);
    throw InvalidArgument(concat(r.where("type"), ": ", name, ".type '", in.type,
                                 "' is not a known signal (", join(names), ")",
                                 near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  KeyReader reader(r, name, base_dir);
  signal_keys(in, reader);
  r.finish(" for input type '" + in.type + "'");
  if (in.type == "multisine")
    require(in.seed >= 0, r.where("seed"), ": ", name, ".seed must be >= 0, got ", in.seed);
  if (in.type == "table")
    require(!in.file.empty(), source, ": ", name, ".type = \"table\" needs ", name, ".file");
  return in;
}

std::vector<InputSpec> read_training(const toml::node* training, const std::string& source,
                                     const std::filesystem::path& base_dir) {
  std::vector<InputSpec> runs;
  if (training == nullptr) return runs;
  const toml::array* arr = training->as_array();
  require(arr != nullptr && arr->is_array_of_tables(), located(source, *training),
          ": training must be an array of tables ([[training]] with the keys of [input])");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string name = concat("training[", i, "]");
    TableReader r((*arr)[i].as_table(), name, source);
    runs.push_back(read_input(r, name, source, base_dir));
  }
  return runs;
}

void read_simulation(TableReader& r, const std::filesystem::path& base_dir, ExperimentConfig& c) {
  SimulationTable t;
  KeyReader reader(r, "simulation", base_dir);
  t.visit_keys(reader);
  r.finish();
  require(t.newton_max_iterations >= 1 && t.newton_max_iterations <= 1000000,
          r.where("newton_max_iterations"),
          ": simulation.newton_max_iterations must be in 1..10^6, got ", t.newton_max_iterations);
  IntegratorOptions& o = c.integrator;
  o.scheme = t.integrator;
  c.solver = t.solver;
  o.dt = t.dt;
  o.t0 = 0.0;
  o.t_end = t.t_end;
  o.rho_infinity = t.rho_infinity;
  o.newton_rtol = t.newton_rtol;
  o.newton_atol = t.newton_atol;
  o.newton_max_iterations = static_cast<int>(t.newton_max_iterations);
  o.reuse_jacobian = t.reuse_jacobian;
  o.newton_bound = t.newton_bound;
  require(t.max_steps >= 1, r.where("max_steps"), ": simulation.max_steps must be >= 1, got ",
          t.max_steps);
  c.max_steps = t.max_steps;
  // A mistyped dt (1e-12 for 1e-2) would run for days: refused unless the file raises
  // max_steps. dt and t_end themselves are validated with the integrator's options.
  const double steps = t.t_end / t.dt;
  require(!(std::isfinite(steps) && steps > static_cast<double>(t.max_steps)), r.where("dt"),
          ": t_end / dt = ", t.t_end, " / ", t.dt, " = ", steps,
          " steps, above simulation.max_steps = ", t.max_steps,
          "; a larger dt, or set simulation.max_steps explicitly if that many steps are meant");
}

void check_reduction(const ExperimentConfig& c, const std::string& where,
                     const std::string& source) {
  require(c.parameters.empty() || c.reduction->parametric_for(*c.model), where,
          ": [parameters] asks for a parametric reduced model, which reduction.method = \"",
          c.reduction->name(), "\" does not build of model.type = \"", c.model->kind(),
          "\" in this version; the parametric methods are \"pod\" (any kind with "
          "parameters) and \"bt\", \"irka\", \"sobt\" (LTI models, the linear chain and "
          "lattice)");
  require(!c.validation_compare_local ||
              c.reduction->family_for(*c.model) == ReductionMethod::Family::linear,
          where,
          ": validation.compare_local compares with the local models of a linear method "
          "(bt, irka, sobt, pod of an LTI model); reduction.method = \"",
          c.reduction->name(), "\" of this model is not one");
  if (!c.parameters.empty() &&
      c.reduction->family_for(*c.model) == ReductionMethod::Family::linear) {
    // A linear method reduces the linear system (a nonlinear model's linearisation about
    // rest): a parameter it does not contain (the chain's k_n) cannot vary its reduced model.
    const ParametricDescriptorSystem sys =
        first_order_form(c.model->parametric_linear_system(c.parameters));
    for (Index j = 0; j < c.parameters.size(); ++j) {
      bool used = false;
      for (const auto* op : {&sys.E, &sys.A, &sys.B, &sys.C})
        for (const auto& t : op->terms)
          used = used || std::count(t.theta.factors.begin(), t.theta.factors.end(), j) > 0;
      for (const auto& t : sys.D_ff.terms)
        used = used || std::count(t.theta.factors.begin(), t.theta.factors.end(), j) > 0;
      const std::string& name = c.parameters.parameters()[static_cast<std::size_t>(j)].name;
      require(used, where, ": reduction.method = \"", c.reduction->name(),
              "\" reduces the linear system",
              c.model->is_linear() ? std::string() : std::string(" (the linearisation about rest)"),
              ", on which the parameter ", name,
              " has no effect: leave it out of [parameters], or use \"pod\"");
    }
  }
  c.reduction->check(c, where);
  require(c.reduction->family() == ReductionMethod::Family::projection || c.training.empty(),
          source,
          ": [[training]] inputs are used by reduction.method = \"pod\" and "
          "\"empirical_bt\" only");
}

/// [parameters] and [validation] against the model just read: each parameter a key the model's
/// operators are affine in and not given in [model], the model valid at every vertex of the
/// domain (its keys' bounds are then met inside: each bound is on one key).
void read_parametric_tables(const toml::table* parameters, const toml::table* validation,
                            const toml::table* model_table, const ModelSpec& spec,
                            const std::string& source, const std::filesystem::path& base_dir,
                            ExperimentConfig& c) {
  c.parameters = read_parameters(parameters, source);
  check_parameters(spec, c.parameters, parameters, model_table, source);
  const Index p = c.parameters.size();
  TableReader r(validation, "validation", source);
  ValidationTable t;
  KeyReader reader(r, "validation", base_dir);
  t.visit_keys(reader);
  r.finish();
  if (validation != nullptr && p == 0)
    throw InvalidArgument(concat(located(source, *validation),
                                 ": [validation] checks a parametric reduced model at unseen "
                                 "parameters: it needs [parameters]"));
  require(t.parameter_samples >= 0, r.where("parameter_samples"),
          ": validation.parameter_samples must be >= 0, got ", t.parameter_samples);
  c.validation_samples = t.parameter_samples;
  c.validation_seed = t.parameter_seed;
  c.validation_compare_local = t.compare_local;
  if (!t.points.empty())
    c.validation_points =
        points_in_domain(c.parameters, t.points, r.where("points"), "validation.points");
}

ExperimentConfig parse_experiment(const std::string& text, const std::string& source,
                                  const std::filesystem::path& base_dir,
                                  const std::vector<std::string>& overrides) {
  // Parsed once, and not copied: a copy of a toml++ node loses its line numbers.
  toml::table parsed = parse_toml(text, source);
  std::vector<std::string> tables = {"experiment", "model",     "input",     "training",
                                     "simulation", "output",    "reduction", "analysis",
                                     "parameters", "validation"};
  for (const auto& k : model_kinds())
    if (!k.extra_table.empty() &&
        std::find(tables.begin(), tables.end(), k.extra_table) == tables.end())
      tables.emplace_back(k.extra_table);
  const toml::table root = checked_root(std::move(parsed), source, overrides, tables, {"training"});
  auto table = [&](std::string_view name) { return root[name].as_table(); };

  ExperimentConfig c;
  c.source = source;
  {
    TableReader r(table("experiment"), "experiment", source);
    read_experiment_table(r, source, c.name, c.description, c.output);
  }
  // The model first: its kind may own [simulation] and tables of its own, read once here before
  // the spec is shared.
  std::unique_ptr<ModelSpec> spec;
  const ModelKindInfo* kind = nullptr;
  {
    TableReader r(table("model"), "model", source);
    const std::string type = r.text("type", "mass_spring_chain");
    kind = find_model_kind(type);
    if (kind == nullptr) {
      std::vector<std::string> known;
      for (const auto& k : model_kinds()) known.emplace_back(k.name);
      const std::string near = suggestion(type, known);
      throw InvalidArgument(concat(r.where("type"), ": unknown model.type '", type, "'",
                                   near.empty() ? "" : "; did you mean '" + near + "'?",
                                   " (known: ", join(known), ")"));
    }
    spec = kind->read(r, source, base_dir);
  }
  for (const auto& k : model_kinds()) {
    if (k.extra_table.empty() || k.extra_table == kind->extra_table) continue;
    if (const toml::node* n = root.get(k.extra_table)) {
      std::vector<std::string> owners;
      for (const auto& o : model_kinds())
        if (o.extra_table == k.extra_table) owners.emplace_back(o.name);
      throw InvalidArgument(concat(located(source, *n), ": [", k.extra_table,
                                   "] belongs to model.type ", join(owners), ", not to '",
                                   kind->name, "'"));
    }
  }
  if (!kind->extra_table.empty()) {
    const std::string name(kind->extra_table);
    TableReader r(table(name), name, source);
    spec->read_table(name, r, base_dir);
    r.finish(concat(" for model.type = \"", kind->name, "\""));
  }
  {
    TableReader r(table("input"), "input", source);
    c.input = read_input(r, "input", source, base_dir);
  }
  c.training = read_training(root.get("training"), source, base_dir);
  if (spec->owns_simulation()) {
    TableReader r(table("simulation"), "simulation", source);
    spec->read_table("simulation", r, base_dir);
    r.finish(concat(" for model.type = \"", kind->name,
                    "\" (integrated by its own CVODE run: `mor keys simulation`)"));
    c.integrator = spec->integrator_options();
  } else {
    TableReader r(table("simulation"), "simulation", source);
    read_simulation(r, base_dir, c);
  }
  {
    TableReader r(table("output"), "output", source);
    OutputTable t;
    const bool first_order = spec->first_order();
    if (first_order) t.snapshot_fields = {"x"};
    spec->read_table("output", r, base_dir);
    KeyReader reader(r, "output", base_dir);
    t.visit_keys(reader);
    r.finish();
    c.integrator.observe_stride = t.output_stride;
    c.snapshot_stride = t.snapshot_stride;
    c.snapshot_fields = t.snapshot_fields;
    c.plots = t.plots;
    require(c.snapshot_stride >= 0, r.where("snapshot_stride"),
            ": output.snapshot_stride must be >= 0 (0: no snapshots), got ", c.snapshot_stride);
    require(t.compression >= 0 && t.compression <= 9, r.where("compression"),
            ": output.compression must be a deflate level 0..9, got ", t.compression);
    c.compression = static_cast<int>(t.compression);
    for (const auto& f : c.snapshot_fields)
      require(first_order ? f == "x" : f == "p" || f == "v", r.where("snapshot_fields"),
              ": output.snapshot_fields entry '", f, "' must be ",
              first_order ? "\"x\" (the state of a first-order model)"
                          : "\"p\" (positions) or \"v\" (velocities)");
    for (auto f = c.snapshot_fields.begin(); f != c.snapshot_fields.end(); ++f)
      require(std::find(c.snapshot_fields.begin(), f, *f) == f, r.where("snapshot_fields"),
              ": output.snapshot_fields names '", *f, "' twice; each field is stored once");
  }
  read_parametric_tables(table("parameters"), table("validation"), table("model"), *spec, source,
                         base_dir, c);
  c.model = std::move(spec);
  {
    TableReader r(table("reduction"), "reduction", source);
    c.reduction = read_reduction(r, source, base_dir);
    check_reduction(c, r.where("method"), source);
  }
  {
    TableReader r(table("analysis"), "analysis", source);
    c.analysis = Analysis::read(r);
  }
  try {
    validate(c.integrator);  // a kind that owns [simulation] checked its own keys
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(concat(source, ": simulation: ", e.what()));
  }
  c.toml = to_toml(c);
  return c;
}

std::shared_ptr<const ModelSpec> ExperimentConfig::run_model() const {
  require(model != nullptr, source, ": no model");
  if (parameters.empty()) return model;
  return model->at(parameters, run_point.size() > 0 ? run_point : parameters.center());
}

Index ExperimentConfig::model_size() const {
  require(model != nullptr, source, ": no model");
  return model->size();
}

ExperimentConfig load_experiment(const std::filesystem::path& file,
                                 const std::vector<std::string>& overrides) {
  return parse_experiment(read_text_file(file), file.string(), file.parent_path(), overrides);
}

std::unique_ptr<Signal> make_signal(const InputSpec& in, Index m) {
  if (in.type == "zero") return make_zero_signal(m);
  if (in.type == "step") return make_step_signal(m, in.amplitude, in.t_on);
  if (in.type == "sine")
    return make_sine_signal(m, in.amplitude, in.frequency, in.phase, in.offset);
  if (in.type == "chirp") return make_chirp_signal(m, in.amplitude, in.f0, in.f1, in.t1);
  if (in.type == "multisine")
    return make_multisine_signal(m, in.amplitude, in.frequencies,
                                 static_cast<std::uint64_t>(in.seed));
  return make_table_signal(m, in.file);
}

}  // namespace mor::experiments
