// SPDX-License-Identifier: GPL-3.0-or-later
// Model kinds "pendulum", "bricard", "flyball", "robot": the nonlinear multibody benchmarks
// (models/multibody.hpp: IFToMM A01, A04, A05 and the Schiehlen robot) as full models of the one
// runner. A kind integrates itself with CVODE and so owns [simulation]; what a run of it does:
//  - the full run (FullModel::simulate): the nonlinear model driven by [input] from its rest
//    state (the operating point of its linearisation) over [linear] t_end, outputs as
//    deviations from the rest state's;
//  - the linear methods reduce its linearisation about that rest state (lti_operator), their
//    reduced models are integrated by CVODE the same way, and /error compares them with the
//    nonlinear run;
//  - its own analysis (FullModel::analyse, in multibody_analysis.cpp): the benchmark run from the
//    benchmark's initial state over its horizon (CPU time, the exact solution where there is
//    one, a run at tighter tolerances, the energy balance, the constraint residual, the bodies'
//    points for the animation) into /benchmark and /animation, and the linearisation (M, D, K,
//    B, Cp, Cv, its poles, its response, the nonlinear one at amplitudes a and a/2) into /linear.
// Format and results: docs/multibody.md; examples experiments/a0*.toml, robot.toml.
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <ostream>

#include "experiments/runner/config.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/models/multibody_full_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/multibody.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

namespace multibody_detail {

std::string rest_state(std::string_view id) {
  if (id == "pendulum") return "the hanging equilibrium";
  if (id == "bricard") return "the stable equilibrium";
  if (id == "flyball") return "the steady rotation at the benchmark's angular momentum";
  if (id == "robot") return "the initial pose held by the static efforts";
  return "the operating point";
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

CvodeOptions restarting_at_jumps(const CvodeOptions& o, const Signal& input) {
  CvodeOptions with = o;
  with.discontinuities = input.discontinuities();
  return with;
}

Sampled simulate_linear(const DenseSecondOrderSystem& sys, const Signal& input,
                        const CvodeOptions& o) {
  const LinearOde ode(sys);
  OdeProblem p;
  Vector u(sys.n_inputs());
  p.rhs = [&ode, &input, u](double t, const Vector& x, Vector& xdot) mutable {
    input.evaluate(t, u);
    ode.rhs(x, u, xdot);
  };
  p.jacobian = [&ode](double, const Vector&, Matrix& J) { J = ode.J; };
  Vector x = Vector::Zero(2 * sys.n());
  Sampled out;
  const Index n = sys.n();
  out.stats = integrate_cvode(p, x, restarting_at_jumps(o, input), [&](double t, const Vector& xt) {
    out.t.push_back(t);
    Vector y = sys.Cp * xt.head(n) + sys.Cv * xt.tail(n);
    if (sys.D_ff.size() > 0) {
      input.evaluate(t, u);
      y.noalias() += sys.D_ff * u;
    }
    out.y.push_back(std::move(y));
  });
  return out;
}

std::vector<Vector> resample(const std::vector<double>& t, const std::vector<Vector>& y,
                             const std::vector<double>& grid) {
  std::vector<Vector> out;
  out.reserve(grid.size());
  std::size_t j = 0;
  for (double s : grid) {
    while (j + 2 < t.size() && t[j + 1] < s) ++j;
    const std::size_t j1 = std::min(j + 1, t.size() - 1);
    const double w = t[j1] > t[j] ? std::clamp((s - t[j]) / (t[j1] - t[j]), 0.0, 1.0) : 0.0;
    out.push_back((1.0 - w) * y[j] + w * y[j1]);
  }
  return out;
}

}  // namespace multibody_detail

namespace {

using detail::concat;
using multibody_detail::joined;
using multibody_detail::MultibodyFullModel;
using multibody_detail::MultibodyLinear;
using multibody_detail::MultibodyOutput;
using multibody_detail::MultibodySettings;
using multibody_detail::rest_state;

/// [simulation] of a multibody kind: the CVODE runs. t_end = 0 and method = "preferred" stand
/// for the benchmark's own horizon and method.
struct MultibodySimulation {
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
    v(Key{"rtol", "", "CVODE relative tolerance, > 0 (every run of the model)"}, rtol);
    v(Key{"atol", "", "CVODE absolute tolerance, > 0"}, atol);
    v(Key{"t_end", "s", "end of the benchmark run; 0: the benchmark's horizon"}, t_end);
    v(Key{"output_dt", "s",
          "output interval of the benchmark run, in (0, t_end]; at most 10^8 outputs"},
      output_dt);
    v(Key{"max_step", "s", "CVODE's largest step; 0: no limit"}, max_step);
    v(Key{"max_steps", "", "CVODE's step limit per output interval"}, max_steps);
    v(Key{"reference_factor", "",
          "accuracy check: the benchmark run at tolerances / this factor (> 1); 0: none"},
      reference_factor);
  }
};

inline constexpr const char* kLinearTable = "linear";

/// The runs of a multibody kind keep every output (and the CVODE runs their states): t_end /
/// output_dt is held to the step limit of the other kinds (simulation.max_steps's default), and
/// the memory estimate counts them (own_runs_mib). 1e10 outputs grew 12 MB/s for ever.
void require_output_count(const TableReader& r, const char* table, double t_end, double dt) {
  const double outputs = t_end / dt;
  require(outputs <= static_cast<double>(kDefaultMaxSteps), r.where("output_dt"), ": ", table,
          ".t_end / output_dt = ", t_end, " / ", dt, " = ", outputs,
          " outputs, above the limit of ", kDefaultMaxSteps,
          " (simulation.max_steps of the other kinds); a larger ", table,
          ".output_dt or a shorter ", table, ".t_end");
}

class MultibodySpec final : public ModelSpec {
 public:
  explicit MultibodySpec(std::shared_ptr<const MultibodyModel> model)
      : ModelSpec(structure_of(*model)),
        model_(std::move(model)),
        linearised_(std::make_shared<const SecondOrderSystem>(model_->linearised())) {
    validate(*linearised_);
    settings_.cvode.method = model_->preferred_method();
    settings_.cvode.t_end = model_->horizon();
    settings_.cvode.output_dt = simulation_.output_dt;
    structure_to_update().own_runs_mib = runs_mib();
  }

  std::string_view kind() const override { return model_->id(); }
  void write_toml(std::ostream&) const override {}
  void record(io::ResultsWriter& out) const override {
    out.set_attribute(layout::kModel, "title", model_->title());
    out.set_attribute(layout::kModel, "state_size",
                      static_cast<std::int64_t>(model_->state_size()));
    out.set_attribute(layout::kModel, "horizon", model_->horizon());
    out.set_attribute(layout::kModel, "output_names", joined(model_->output_names()));
    out.set_attribute(layout::kModel, "linearised_about", rest_state(model_->id()));
    out.set_attribute(layout::kModel, "linear_input_names", joined(model_->linear_input_names()));
    out.set_attribute(layout::kModel, "linear_output_names", joined(model_->linear_output_names()));
    out.set_attribute(layout::kModel, "convention",
                      std::string("x' = f(t, x, u) from the rest state x0 (CVODE), y = outputs(x) "
                                  "- outputs(x0); linearised M q'' + D q' + K q = B u, y = Cp q "
                                  "+ Cv q' about x0"));
  }
  LinearSystem linear_system() const override {
    throw InvalidArgument(concat(
        "the ", model_->title(), " is nonlinear and has no LTI form; its linearisation about ",
        rest_state(model_->id()), " is model.type = \"linearised_multibody\" with benchmark = \"",
        model_->id(), "\""));
  }
  std::unique_ptr<FullModel> build(SparseBackend) const override {
    return std::make_unique<MultibodyFullModel>(model_, linearised_, settings_);
  }

  void read_table(std::string_view table, TableReader& r,
                  const std::filesystem::path& base_dir) override {
    read_own_table(table, r, base_dir);
    structure_to_update().own_runs_mib = runs_mib();
  }
  void read_own_table(std::string_view table, TableReader& r,
                      const std::filesystem::path& base_dir) {
    if (table == "simulation") {
      KeyReader reader(r, "simulation", base_dir);
      simulation_.visit_keys(reader);
      CvodeOptions& o = settings_.cvode;
      try {
        o.method = simulation_.method == "preferred" ? model_->preferred_method()
                                                     : parse_cvode_method(simulation_.method);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(
            concat(r.where("method"), ": simulation: ", e.what(), " (or preferred)"));
      }
      o.rtol = simulation_.rtol;
      o.atol = simulation_.atol;
      o.t_end = simulation_.t_end == 0.0 ? model_->horizon() : simulation_.t_end;
      o.output_dt = simulation_.output_dt;
      o.max_step = simulation_.max_step;
      o.max_steps = simulation_.max_steps;
      settings_.reference_factor = simulation_.reference_factor;
      require(o.rtol > 0.0 && std::isfinite(o.rtol) && o.atol > 0.0 && std::isfinite(o.atol),
              r.where("rtol"),
              ": simulation.rtol and atol must be finite numbers > 0, got rtol = ", o.rtol,
              ", atol = ", o.atol);
      require(std::isfinite(o.t_end) && o.t_end > 0.0, r.where("t_end"),
              ": simulation.t_end must be > 0, got ", o.t_end);
      require(o.output_dt > 0.0 && o.output_dt <= o.t_end, r.where("output_dt"),
              ": simulation.output_dt must be in (0, t_end], got ", o.output_dt);
      require_output_count(r, "simulation", o.t_end, o.output_dt);
      require(o.max_step >= 0.0, r.where("max_step"), ": simulation.max_step must be >= 0, got ",
              o.max_step);
      require(o.max_steps >= 1, r.where("max_steps"), ": simulation.max_steps must be >= 1, got ",
              o.max_steps);
      require(settings_.reference_factor == 0.0 || settings_.reference_factor > 1.0,
              r.where("reference_factor"),
              ": simulation.reference_factor must be 0 (no reference run) or > 1, got ",
              settings_.reference_factor);
    } else if (table == kLinearTable) {
      MultibodyLinear& l = settings_.linear;
      KeyReader reader(r, kLinearTable, base_dir);
      l.visit_keys(reader);
      require(std::isfinite(l.t_end) && l.t_end > 0.0, r.where("t_end"),
              ": linear.t_end must be > 0, got ", l.t_end);
      require(l.output_dt > 0.0 && l.output_dt <= l.t_end, r.where("output_dt"),
              ": linear.output_dt must be in (0, t_end], got ", l.output_dt);
      require_output_count(r, kLinearTable, l.t_end, l.output_dt);
      try {
        validate(integrator_options());
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(concat(r.where("output_dt"), ": linear: ", e.what()));
      }
    } else if (table == "output") {
      MultibodyOutput& o = settings_.output;
      KeyReader reader(r, "output", base_dir);
      o.visit_keys(reader);
      require(o.animation == "gif" || o.animation == "none", r.where("animation"),
              ": output.animation must be \"gif\" or \"none\", got '", o.animation, "'");
      require(o.animation_fps > 0.0 && o.animation_fps <= 100.0, r.where("animation_fps"),
              ": output.animation_fps must be in (0, 100], got ", o.animation_fps);
    }
  }
  void write_table(std::string_view table, std::ostream& os) const override {
    KeyWriter w(os);
    if (table == "simulation") {
      MultibodySimulation t = simulation_;
      t.method = std::string(to_string(settings_.cvode.method));
      t.t_end = settings_.cvode.t_end;
      t.visit_keys(w);
    } else if (table == kLinearTable) {
      MultibodyLinear l = settings_.linear;
      l.visit_keys(w);
    } else if (table == "output") {
      MultibodyOutput o = settings_.output;
      o.visit_keys(w);
    }
  }
  /// A first-order ODE integrated by its own CVODE run, with a second-order linearisation.
  static ModelStructure structure_of(const MultibodyModel& model) {
    ModelStructure s;
    s.form = ModelStructure::Form::first_order_ode;
    s.size = model.state_size();
    s.linear = false;
    s.linear_size = model.linearised().n();
    s.linear_first_order = false;
    return s;
  }
  double runs_mib() const {
    // Per output of the benchmark run (its state, time and outputs, kept by it, its reference
    // run and the analysis) and per output of the linearisation's runs (at [input] and at half
    // of it, nonlinear and linear): measured on A01 (5 values a row) at 5e5 outputs, 346 and 512
    // bytes, i.e. about 70 and 100 bytes per value.
    const double values = static_cast<double>(model_->state_size() + 1) +
                          static_cast<double>(model_->output_names().size());
    const CvodeOptions& o = settings_.cvode;
    const MultibodyLinear& l = settings_.linear;
    const double bytes = 80.0 * values * (o.t_end / o.output_dt + 1.0) +
                         (l.enabled ? 112.0 * values * (l.t_end / l.output_dt + 1.0) : 0.0);
    return bytes / (1024.0 * 1024.0);
  }
  IntegratorOptions integrator_options() const override {
    IntegratorOptions o;
    o.t0 = 0.0;
    o.t_end = settings_.linear.t_end;
    o.dt = settings_.linear.output_dt;
    o.observe_stride = 1;
    return o;
  }

 private:
  std::shared_ptr<const MultibodyModel> model_;
  std::shared_ptr<const SecondOrderSystem> linearised_;
  MultibodySimulation simulation_;
  MultibodySettings settings_;
};

std::unique_ptr<ModelSpec> read_multibody(std::string_view id, TableReader& r) {
  r.finish(concat(" for model.type = \"", id, "\" (a multibody benchmark takes only model.type)"));
  return std::make_unique<MultibodySpec>(make_multibody_model(id));
}

template <const char* id>
std::unique_ptr<ModelSpec> read_kind(TableReader& r, const std::string&,
                                     const std::filesystem::path&) {
  return read_multibody(id, r);
}

void no_model_keys(std::vector<KeyDoc>&) {}

void multibody_table_keys(std::string_view table, std::vector<KeyDoc>& rows) {
  if (table == "simulation") {
    MultibodySimulation t;
    KeyDocs docs(rows, "simulation");
    t.visit_keys(docs);
  } else if (table == kLinearTable) {
    MultibodyLinear l;
    KeyDocs docs(rows, kLinearTable);
    l.visit_keys(docs);
  } else if (table == "output") {
    MultibodyOutput o;
    KeyDocs docs(rows, "output");
    o.visit_keys(docs);
  }
}

constexpr char kPendulum[] = "pendulum";
constexpr char kBricard[] = "bricard";
constexpr char kFlyball[] = "flyball";
constexpr char kRobot[] = "robot";

}  // namespace

extern const ModelKindInfo kPendulumKind{
    kPendulum,
    "IFToMM A01 simple pendulum (nonlinear, CVODE): released horizontal, exact solution; "
    "linearised about the hanging equilibrium",
    &read_kind<kPendulum>,
    &no_model_keys,
    kLinearTable,
    &multibody_table_keys};
extern const ModelKindInfo kBricardKind{
    kBricard,
    "IFToMM A04 Bricard mechanism (nonlinear, redundant coordinates projected onto the "
    "constraints, CVODE); linearised about its stable equilibrium",
    &read_kind<kBricard>,
    &no_model_keys,
    kLinearTable,
    &multibody_table_keys};
extern const ModelKindInfo kFlyballKind{
    kFlyball,
    "IFToMM A05 stiff flyball governor (nonlinear, CVODE BDF); linearised about its steady "
    "rotation",
    &read_kind<kFlyball>,
    &no_model_keys,
    kLinearTable,
    &multibody_table_keys};
extern const ModelKindInfo kRobotKind{
    kRobot,
    "Schiehlen robot (nonlinear, CVODE) under its actuator efforts; linearised about its "
    "initial pose held by the static efforts",
    &read_kind<kRobot>,
    &no_model_keys,
    kLinearTable,
    &multibody_table_keys};

}  // namespace mor::experiments
