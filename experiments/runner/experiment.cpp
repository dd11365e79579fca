// SPDX-License-Identifier: GPL-3.0-or-later
// The runner of one experiment: builds the model, reduces it, simulates full and reduced, and
// streams everything into one HDF5 file committed atomically.
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
#include "experiments/runner/parametric_run.hpp"
#include "experiments/runner/pipeline.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/multibody.hpp"
#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/errors.hpp"
#include "src/core/version.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"

namespace mor::experiments {

using detail::concat;

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown");
}

double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0.0;
}

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::ostringstream os;
  os << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return os.str();
}

/// A reduced model's run: outputs at the output steps (rows of p values, feed-through
/// included) and reduced coordinates at every state_stride-th step (columns; none if 0).
struct ReducedTrajectory {
  std::vector<double> y;
  Matrix q;
  IntegrationStats stats;
};

template <class Model>
ReducedTrajectory simulate_reduced(const Model& model, const Matrix& D_ff, const Signal& input,
                                   const IntegratorOptions& o, Index state_stride,
                                   const RunOptions& options, const std::string& label) {
  const Index steps = step_count(o), p = model.n_outputs();
  IntegratorOptions run = o;
  run.stop_requested = options.stop_requested;
  if (state_stride > 0) run.observe_stride = std::gcd(o.observe_stride, state_stride);
  ReducedTrajectory traj;
  traj.q.resize(model.n(), state_stride > 0 ? steps / state_stride + 1 : 0);
  Index states = 0;
  Vector y(p);
  auto observe = [&](Index k, double, const Vector& q, const Vector& v, const Vector& u) {
    if (k % o.observe_stride == 0 || k == steps) {
      model.output(q, v, y);
      if (D_ff.size() > 0) y.noalias() += D_ff * u;
      traj.y.insert(traj.y.end(), y.begin(), y.end());
    }
    if (state_stride > 0 && k % state_stride == 0) traj.q.col(states++) = q;
  };
  traj.stats = simulate_reduced_step(model, input, run, observe, label);
  return traj;
}

/// /reduced: the main reduced model's run, its outputs y_r at the full model's output times.
void record_reduced_run(io::ResultsWriter& out, const ReducedTrajectory& traj, Index p, Index r) {
  out.create_group(layout::kReduced);
  io::RowStream& s_y = out.open_row_stream(layout::kReducedOutputsY, p, 0);
  for (std::size_t at = 0; at < traj.y.size(); at += static_cast<std::size_t>(p))
    s_y.append(Vector(Eigen::Map<const Vector>(traj.y.data() + at, p)));
  out.set_attribute(layout::kReduced, "r", static_cast<std::int64_t>(r));
  out.set_attribute(layout::kReduced, "integration_s", traj.stats.seconds);
}

}  // namespace

void record_provenance(io::ResultsWriter& out, const std::string& name,
                       const std::string& description, const std::string& source,
                       const std::string& toml, const std::string& command_line) {
  out.set_attribute("/", "program", std::string("mor"));
  out.set_attribute("/", "program_version", std::string(program_version()));
  out.set_attribute("/", "git_commit", std::string(git_commit()));
  out.set_attribute("/", "created", utc_now());
  out.set_attribute("/", "host", host_name());
  out.set_attribute("/", "command_line", command_line);
  out.set_attribute("/", "experiment_name", name);
  out.set_attribute("/", "experiment_description", description);
  out.set_attribute("/", "experiment_source", source);
  out.set_attribute("/", "configuration", toml);
}

namespace {

using Clock = std::chrono::steady_clock;

/// What every stage of one run shares: the configuration, the built model, the input, the open
/// results file and the summary being filled.
struct Run {
  const ExperimentConfig& c;
  const RunOptions& options;
  FullModel& model;
  const Signal& input;
  io::ResultsWriter& out;
  RunSummary& summary;
  Index steps = 0;
  void stage(const char* name, double fraction = 0.0) const {
    if (options.report_stage) options.report_stage(name, fraction);
  }
};

/// The full run's integration time without its writing (known once the full run is done).
double full_stepping_seconds(const Run& run) {
  return run.summary.stats.seconds - run.summary.write_seconds;
}

/// /model, /simulation and /input: what is run, before anything runs.
void record_setup(const Run& run) {
  const ExperimentConfig& c = run.c;
  io::ResultsWriter& out = run.out;
  out.create_group(layout::kModel);
  out.set_attribute(layout::kModel, "type", std::string(c.model->kind()));
  c.run_model()->record(out);  // with [parameters], at the run's own point
  if (!c.parameters.empty()) record_parameters(c, out);

  const IntegratorOptions& o = c.integrator;
  out.create_group(layout::kSimulation);
  if (c.model->owns_simulation()) {
    out.set_attribute(layout::kSimulation, "integrator", std::string("the model's own (CVODE)"));
  } else {
    out.set_attribute(layout::kSimulation, "integrator", std::string(to_string(o.scheme)));
    out.set_attribute(layout::kSimulation, "solver", run.model.solver_used());
  }
  out.set_attribute(layout::kSimulation, "dt", o.dt);
  out.set_attribute(layout::kSimulation, "t0", o.t0);
  out.set_attribute(layout::kSimulation, "t_end", o.t_end);
  out.set_attribute(layout::kSimulation, "steps", static_cast<std::int64_t>(run.steps));
  if (!c.model->owns_simulation()) {
    out.set_attribute(layout::kSimulation, "rho_infinity", o.rho_infinity);
    out.set_attribute(layout::kSimulation, "newton_rtol", o.newton_rtol);
    out.set_attribute(layout::kSimulation, "newton_atol", o.newton_atol);
    out.set_attribute(layout::kSimulation, "reuse_jacobian",
                      static_cast<std::int64_t>(o.reuse_jacobian));
    out.set_attribute(layout::kSimulation, "newton_bound",
                      static_cast<std::int64_t>(o.newton_bound));
  }
  out.set_attribute(layout::kSimulation, "output_stride",
                    static_cast<std::int64_t>(o.observe_stride));
  out.set_attribute(layout::kSimulation, "snapshot_stride",
                    static_cast<std::int64_t>(c.snapshot_stride));
  out.set_attribute(layout::kSimulation, "initial_state",
                    c.model->owns_simulation()
                        ? "rest: " + run.model.linearisation() + " (the model's own rest state)"
                        : std::string("rest (q = v = 0)"));
  out.set_attribute(layout::kSimulation, "state",
                    std::string(run.model.first_order()
                                    ? "first order: v is the state x of E x' = A x + B u (or of "
                                      "x' = f(x, u)), q its time integral"
                                    : "second order: q positions, v velocities"));
  out.create_group(layout::kInput);
  out.set_attribute(layout::kInput, "type", c.input.type);
  out.set_attribute(layout::kInput, "description", run.input.describe());
}

/// The linear family (bt, sobt, modal, irka): the model's linear system, or a nonlinear model's
/// linearisation about its rest state, reduced to a linear reduced model.
struct LinearFamilyRun {
  std::unique_ptr<LtiOperator> full;  ///< shared by the reduction and the analysis
  ReducedModel reduced;
};

LinearFamilyRun reduce_linear_family(const Run& run) {
  const ExperimentConfig& c = run.c;
  LinearFamilyRun lin;
  lin.full = run.model.lti_operator();
  run.summary.linearisation = run.model.linearisation();
  progress_note(concat(c.name, ": reducing (", c.reduction->name(), ", n = ", run.model.n(),
                       run.summary.linearisation.empty()
                           ? std::string()
                           : ", the linearisation about " + run.summary.linearisation,
                       ") ..."));
  ReductionStep step;
  try {
    step = reduce_step(c, run.model, lin.full.get(), run.out, run.options.stop_requested);
  } catch (const NumericalError& e) {
    // e.g. no Gramians of an undamped linearisation: say which method met which system.
    throw NumericalError(concat("reduction.method = \"", c.reduction->name(), "\" of ",
                                run.summary.linearisation.empty()
                                    ? std::string("the model")
                                    : "the linearisation about " + run.summary.linearisation,
                                ": ", e.what()));
  }
  lin.reduced = std::move(*step.linear);
  const ReductionSummary& summary = lin.reduced.summary;
  if (!run.summary.linearisation.empty())
    run.out.set_attribute(layout::kReduction, "reduces",
                          "the linearisation about " + run.summary.linearisation +
                              " (the errors compare with the nonlinear model)");
  progress_note(concat(c.name, ": reduced to r = ", summary.r, " in ",
                       std::round(summary.seconds * 100) / 100, " s"));
  run.summary.reduced_order = summary.r;
  run.summary.reduction_seconds = summary.seconds;
  run.summary.offline_stages = summary.stages;
  return lin;
}

/// After the full run: the reduced linear model's run (by the model's own integrator if it has
/// one), its output error against the full model, and the frequency-domain analysis.
std::vector<double> finish_linear_family(const Run& run, LinearFamilyRun& lin,
                                         const std::vector<double>& y_full) {
  const ExperimentConfig& c = run.c;
  run.stage("reduced simulation");
  const std::string label = concat("r = ", lin.reduced.summary.r, ", spectral abscissa ",
                                   lin.reduced.summary.spectral_abscissa.value_or(std::nan("")));
  ReducedTrajectory traj;
  const Index steps = run.steps, stride = c.integrator.observe_stride;
  const bool own = run.model.simulate_reduced_linear(
      lin.reduced.second_order, run.input, c.integrator,
      [&](Index k, double, const Vector& y) {
        if (k % stride == 0 || k == steps) traj.y.insert(traj.y.end(), y.begin(), y.end());
      },
      traj.stats);
  if (!own) {
    const DenseSecondOrderModel reduced_model(lin.reduced.second_order);
    traj = simulate_reduced(reduced_model, lin.reduced.second_order.D_ff, run.input, c.integrator,
                            0, run.options, label);
  }
  record_reduced_run(run.out, traj, run.model.n_outputs(), lin.reduced.summary.r);
  run.summary.reduced_stats = traj.stats;
  // The further orders of one nested basis (pod's compare_orders), run the same way.
  std::vector<ReducedTrajectory> others;
  for (const auto& [r, system] : lin.reduced.others) {
    ReducedTrajectory& t = others.emplace_back();
    const bool by_model = run.model.simulate_reduced_linear(
        system, run.input, c.integrator,
        [&](Index k, double, const Vector& y) {
          if (k % stride == 0 || k == steps) t.y.insert(t.y.end(), y.begin(), y.end());
        },
        t.stats);
    if (!by_model)
      t = simulate_reduced(DenseSecondOrderModel(system), system.D_ff, run.input, c.integrator, 0,
                           run.options, concat("r = ", r));
  }
  SimulatedComparison runs{c.reduction->name(),
                           full_stepping_seconds(run),
                           y_full,
                           run.model.n_outputs(),
                           steps,
                           {},
                           nullptr};
  runs.orders.push_back({lin.reduced.summary.r, 0, &traj.y, traj.stats.seconds});
  for (std::size_t i = 0; i < others.size(); ++i)
    runs.orders.push_back({lin.reduced.others[i].first, 0, &others[i].y, others[i].stats.seconds});
  run.summary.figures = analyse_simulated_step(c, runs, run.out);
  run.stage("analysis");
  if (c.analysis) {
    std::string what;
    for (const Measure* m : c.analysis->to_run(AppliesTo::linear_reduced))
      what += (what.empty() ? "" : ", ") + m->progress_text();
    if (!what.empty())
      progress_note(
          concat(c.name, ": frequency analysis of full and reduced model (", what, ") ..."));
  }
  for (auto& figure : analyse_linear_step(c, *lin.full, lin.reduced, run.out))
    run.summary.figures.push_back(std::move(figure));
  return std::move(traj.y);
}

/// The projection family (pod, empirical_bt): projected nonlinear models trained on the full
/// model's simulations, run before the full model so that its run compares states on the fly.
struct ProjectionFamilyRun {
  ProjectionReduction reduced;
  ReducedTrajectory main;
  std::vector<ReducedTrajectory> others;  ///< reduction.compare_orders
  Index state_stride = 0;                 ///< snapshot stride, or 10 output strides
  /// ||q - V q_r||_2 and ||q||_2 at every state_stride-th step.
  StateComparison states;
  Index state_col = 0;

  void compare_state(const Vector& q) {
    if (state_col >= main.q.cols()) return;
    const double e2 = (q - reduced.main.model->lift(main.q.col(state_col++))).squaredNorm();
    const double r2 = q.squaredNorm();
    states.err2 += e2;
    states.ref2 += r2;
    if (r2 > 0.0) states.max_relative = std::max(states.max_relative, std::sqrt(e2 / r2));
  }
};

void reduce_projection_family(const Run& run, ProjectionFamilyRun& proj) {
  const ExperimentConfig& c = run.c;
  const std::string method(c.reduction->name());
  proj.state_stride = c.snapshot_stride > 0 ? c.snapshot_stride : 10 * c.integrator.observe_stride;
  proj.states.stride = proj.state_stride;
  ReductionStep step = reduce_step(c, run.model, nullptr, run.out, run.options.stop_requested);
  proj.reduced = std::move(*step.projection);
  run.summary.reduced_order = proj.reduced.summary.r;
  run.summary.deim_samples = proj.reduced.main.m;
  run.summary.ecsw_elements = proj.reduced.main.ecsw_elements;
  run.summary.n_elements = proj.reduced.main.n_elements;
  run.summary.ecsw_snapshot_stride = proj.reduced.main.ecsw_snapshot_stride;
  run.summary.reduction_seconds = proj.reduced.summary.seconds;
  run.summary.offline_stages = proj.reduced.summary.stages;
  run.stage("reduced simulation");
  proj.main = simulate_reduced(*proj.reduced.main.model, Matrix(), run.input, c.integrator,
                               proj.state_stride, run.options,
                               concat(method, ", r = ", proj.reduced.main.r));
  for (const auto& other : proj.reduced.others)
    proj.others.push_back(simulate_reduced(*other.model, Matrix(), run.input, c.integrator, 0,
                                           run.options, concat(method, ", r = ", other.r)));
}

void finish_projection_family(const Run& run, ProjectionFamilyRun& proj,
                              const std::vector<double>& y_full) {
  record_reduced_run(run.out, proj.main, run.model.n_outputs(), proj.reduced.main.r);
  run.summary.reduced_stats = proj.main.stats;
  SimulatedComparison runs{run.c.reduction->name(),
                           full_stepping_seconds(run),
                           y_full,
                           run.model.n_outputs(),
                           run.steps,
                           {},
                           &proj.states};
  runs.orders.push_back(
      {proj.reduced.main.r, proj.reduced.main.m, &proj.main.y, proj.main.stats.seconds});
  for (std::size_t i = 0; i < proj.others.size(); ++i)
    runs.orders.push_back({proj.reduced.others[i].r, proj.reduced.others[i].m, &proj.others[i].y,
                           proj.others[i].stats.seconds});
  run.summary.figures = analyse_simulated_step(run.c, runs, run.out);
}

/// The full model's run: /outputs every output stride, /snapshots every snapshot stride, and
/// `every_state(q)` every state_stride-th step (0: never). Keeps the outputs if keep_outputs.
std::vector<double> simulate_full(const Run& run, bool keep_outputs, Index state_stride,
                                  const std::function<void(const Vector&)>& every_state) {
  const ExperimentConfig& c = run.c;
  FullModel& model = run.model;
  io::ResultsWriter& out = run.out;
  const IntegratorOptions& o = c.integrator;
  const Index N = model.n(), steps = run.steps;
  out.create_group(layout::kOutputs);
  io::RowStream& s_t = out.open_row_stream(layout::kOutputsT, 1, 0);
  io::RowStream& s_u = out.open_row_stream(layout::kOutputsU, model.n_inputs(), 0);
  io::RowStream& s_y = out.open_row_stream(layout::kOutputsY, model.n_outputs(), 0);
  const auto field = [&](const char* f) {
    return c.snapshot_stride > 0 &&
           std::count(c.snapshot_fields.begin(), c.snapshot_fields.end(), f) > 0;
  };
  const bool snapshots = c.snapshot_stride > 0 && !c.snapshot_fields.empty();
  io::RowStream *s_st = nullptr, *s_p = nullptr, *s_v = nullptr, *s_x = nullptr;
  // What the measures of the snapshots (the stored energy, ...) do at each one.
  std::vector<std::function<void(double, const Vector&, const Vector&)>> snapshot_measures;
  if (snapshots) {
    out.create_group(layout::kSnapshots);
    s_st = &out.open_row_stream(layout::kSnapshotsT, 1, 0);
    if (field("p")) s_p = &out.open_row_stream(layout::kSnapshotsP, N, c.compression);
    if (field("v")) s_v = &out.open_row_stream(layout::kSnapshotsV, N, c.compression);
    if (field("x")) s_x = &out.open_row_stream(layout::kSnapshotsX, N, c.compression);
    snapshot_measures = snapshot_step(c, model, out).observers;
  }

  // The integrator observes at every multiple of gcd(output, snapshot, state stride); this
  // observer sorts out which of the streams a step belongs to.
  IntegratorOptions step_options = o;
  step_options.stop_requested = run.options.stop_requested;
  if (snapshots) step_options.observe_stride = std::gcd(o.observe_stride, c.snapshot_stride);
  if (state_stride > 0)
    step_options.observe_stride = std::gcd(step_options.observe_stride, state_stride);
  Vector y(model.n_outputs());
  std::vector<double> y_full;
  double write_seconds = 0.0;
  auto observe = [&](Index k, double t, const Vector& q, const Vector& v, const Vector& u) {
    const auto w0 = Clock::now();
    if (k % o.observe_stride == 0 || k == steps) {
      model.output(q, v, u, y);
      s_t.append(&t);
      s_u.append(u);
      s_y.append(y);
      if (keep_outputs) y_full.insert(y_full.end(), y.begin(), y.end());
      ++run.summary.outputs;
    }
    if (state_stride > 0 && k % state_stride == 0) every_state(q);
    if (snapshots && (k % c.snapshot_stride == 0 || k == steps)) {
      s_st->append(&t);
      if (s_p) s_p->append(q);
      if (s_v) s_v->append(v);
      if (s_x) s_x->append(v);  // first order: v is the state
      for (const auto& measure : snapshot_measures) measure(t, q, v);
      ++run.summary.snapshots;
    }
    write_seconds += std::chrono::duration<double>(Clock::now() - w0).count();
  };

  ProgressReporter progress(c.name, run.options.progress, stderr,
                            [&](double f) { run.stage("full simulation", f); });
  run.stage("full simulation");
  run.summary.stats = simulate_full_step(model, run.input, step_options, observe, &progress);
  run.summary.write_seconds = write_seconds;
  return y_full;
}

void record_timings(const Run& run) {
  RunSummary& summary = run.summary;
  io::ResultsWriter& out = run.out;
  const double steps = static_cast<double>(std::max<Index>(1, run.steps));
  const double stepping = summary.stats.seconds - summary.write_seconds;
  out.create_group(layout::kTimings);
  out.set_attribute(layout::kTimings, "setup_s", summary.setup_seconds);
  out.set_attribute(layout::kTimings, "integration_s", summary.stats.seconds);
  out.set_attribute(layout::kTimings, "write_s", summary.write_seconds);
  out.set_attribute(layout::kTimings, "stepping_s", stepping);
  out.set_attribute(layout::kTimings, "ns_per_step_per_dof",
                    1e9 * stepping / steps / static_cast<double>(run.model.n()));
  out.set_attribute(layout::kTimings, "steps", static_cast<std::int64_t>(summary.stats.steps));
  out.set_attribute(layout::kTimings, "force_evaluations",
                    static_cast<std::int64_t>(summary.stats.force_evaluations));
  out.set_attribute(layout::kTimings, "newton_iterations",
                    static_cast<std::int64_t>(summary.stats.newton_iterations));
  out.set_attribute(layout::kTimings, "factorizations",
                    static_cast<std::int64_t>(run.model.factorizations()));
  if (run.c.reduction->family_for(*run.c.model) != ReductionMethod::Family::none) {
    out.set_attribute(layout::kTimings, "reduction_s", summary.reduction_seconds);
    out.set_attribute(layout::kTimings, "reduced_integration_s", summary.reduced_stats.seconds);
  }
}

}  // namespace

RunSummary run_experiment(const ExperimentConfig& c, const RunOptions& options) {
  const auto t_start = Clock::now();
  RunSummary summary;
  // Stages deep inside the run (training runs, reduced runs) draw progress as the full run does.
  const ProgressScope progress_scope(options.progress);
  const std::unique_ptr<FullModel> model = c.run_model()->build(c.solver);
  const auto input = make_signal(c.input, model->n_inputs());
  summary.build_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();

  io::ResultsWriter out(c.output);
  record_provenance(out, c.name, c.description, c.source, c.toml, options.command_line);
  const Run run{c, options, *model, *input, out, summary, step_count(c.integrator)};
  record_setup(run);

  // Reduce first: a reduction that fails (bad order, unconverged ADI) costs no simulation.
  using Family = ReductionMethod::Family;
  const Family family = reduction_family(c);
  if (family != Family::none) run.stage("reduction");
  std::optional<LinearFamilyRun> linear;
  std::optional<ProjectionFamilyRun> projection;
  if (family == Family::linear) linear = reduce_linear_family(run);
  if (family == Family::projection) reduce_projection_family(run, projection.emplace());

  summary.setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  const std::vector<double> y_full =
      simulate_full(run, family != Family::none, projection ? projection->state_stride : 0,
                    [&](const Vector& q) { projection->compare_state(q); });
  std::vector<double> y_reduced;
  if (linear) {
    y_reduced = finish_linear_family(run, *linear, y_full);
    if (const auto& parametric = linear->reduced.parametric) {
      run.stage("validation");
      summary.validation =
          validate_parametric_linear(c, *parametric, *input, out, options.stop_requested);
      summary.validation->training_points = linear->reduced.training_points.rows();
      summary.validation->selected_points = linear->reduced.selected_points;
      summary.validation->greedy_note = linear->reduced.greedy_note;
    }
  }
  if (projection) {
    finish_projection_family(run, *projection, y_full);
    y_reduced = projection->main.y;
    if (const auto& parametric = projection->reduced.parametric) {
      run.stage("validation");
      summary.validation = validate_parametric(c, *parametric, *input, out, options.stop_requested);
      summary.validation->training_points = projection->reduced.training_points.rows();
      summary.validation->selected_points = projection->reduced.selected_points;
      summary.validation->greedy_note = projection->reduced.greedy_note;
    }
  }
  record_timings(run);

  run.stage("model analysis");
  const ModelAnalysisContext context{
      *input, c.integrator, family != Family::none ? &y_reduced : nullptr, options.stop_requested};
  summary.model_figures = model->analyse(context, out);

  for (auto& figure : analyse_run_step(c, out)) summary.figures.push_back(std::move(figure));
  summary.total_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  out.set_attribute(layout::kTimings, "total_s", summary.total_seconds);
  if (options.before_commit) options.before_commit(out, summary);
  run.stage("writing");
  out.commit();
  summary.results = c.output;
  return summary;
}

}  // namespace mor::experiments
