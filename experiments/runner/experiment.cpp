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

#include "experiments/runner/chain_reduction_run.hpp"
#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/multibody.hpp"
#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/reduced_chain.hpp"
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
  typename Model::Workspace ws(model);
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
  Vector q = Vector::Zero(model.n()), v = Vector::Zero(model.n());
  ProgressReporter progress(concat(label, ": reduced run"), g_progress_enabled.load());
  try {
    traj.stats = integrate(model, ws, input, run, q, v, observe, &progress);
  } catch (const NumericalError& e) {
    throw NumericalError(concat("reduced model (", label, "): ", e.what()));
  }
  return traj;
}

/// ||y - y_r||_2 / ||y||_2 over all samples and outputs (or ||y - y_r||_2 if y = 0), and
/// max |y - y_r|.
struct OutputError {
  double relative_l2 = 0, max_abs = 0;
};

OutputError output_error(const std::vector<double>& y_full, const std::vector<double>& y_reduced) {
  require(y_reduced.size() == y_full.size(), "internal: ", y_reduced.size(),
          " reduced output samples against ", y_full.size(), " full ones");
  double err2 = 0.0, ref2 = 0.0;
  OutputError e;
  for (std::size_t i = 0; i < y_full.size(); ++i) {
    const double d = y_full[i] - y_reduced[i];
    err2 += d * d;
    ref2 += y_full[i] * y_full[i];
    e.max_abs = std::max(e.max_abs, std::abs(d));
  }
  e.relative_l2 = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return e;
}

/// Writes /reduced/outputs/y and /error/y = y - y_r at the full model's output times.
void write_output_errors(io::ResultsWriter& out, const std::vector<double>& y_full,
                         const ReducedTrajectory& traj, Index p, Index r, RunSummary& summary) {
  const OutputError err = output_error(y_full, traj.y);
  out.create_group(layout::kReduced);
  io::RowStream& s_y = out.open_row_stream(layout::kReducedOutputsY, p, 0);
  io::RowStream& s_e = out.open_row_stream(layout::kErrorY, p, 0);
  for (std::size_t row = 0; row * static_cast<std::size_t>(p) < y_full.size(); ++row) {
    const std::size_t at = row * static_cast<std::size_t>(p);
    const Eigen::Map<const Vector> yf(y_full.data() + at, p), yr(traj.y.data() + at, p);
    s_y.append(Vector(yr));
    s_e.append(Vector(yf - yr));
  }
  summary.reduced_stats = traj.stats;
  summary.output_error_relative = err.relative_l2;
  out.set_attribute(layout::kReduced, "r", static_cast<std::int64_t>(r));
  out.set_attribute(layout::kReduced, "integration_s", traj.stats.seconds);
  out.set_attribute(layout::kError, "max_abs", err.max_abs);
  out.set_attribute(layout::kError, "relative_l2", summary.output_error_relative);
  out.set_attribute(layout::kError, "definition",
                    std::string("y - y_r at /outputs/t; relative_l2 = ||y - y_r||_2 / ||y||_2 "
                                "over all samples and outputs"));
}

/// /error_vs_r: the output error and the reduced cost per step of every order of
/// reduction.compare_orders (and the main one), ascending in r.
void write_error_against_order(io::ResultsWriter& out, const std::string& method,
                               const std::vector<double>& y_full, const ChainReduction& reduction,
                               const ReducedTrajectory& main,
                               const std::vector<ReducedTrajectory>& others, Index steps) {
  struct Row {
    Index r, m;
    OutputError e;
    double step_s;
  };
  const double per_step = 1.0 / static_cast<double>(std::max<Index>(1, steps));
  std::vector<Row> rows{{reduction.main.r, reduction.main.m, output_error(y_full, main.y),
                         main.stats.seconds * per_step}};
  for (std::size_t i = 0; i < others.size(); ++i)
    rows.push_back({reduction.others[i].r, reduction.others[i].m, output_error(y_full, others[i].y),
                    others[i].stats.seconds * per_step});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.r < b.r; });
  const auto n = static_cast<Index>(rows.size());
  Vector r(n), m(n), rel(n), max_abs(n), step(n);
  for (Index i = 0; i < n; ++i) {
    const Row& row = rows[static_cast<std::size_t>(i)];
    r[i] = static_cast<double>(row.r);
    m[i] = static_cast<double>(row.m);
    rel[i] = row.e.relative_l2;
    max_abs[i] = row.e.max_abs;
    step[i] = row.step_s;
  }
  out.create_group(layout::kErrorVsR);
  out.write_vector(layout::child(layout::kErrorVsR, "r"), r);
  out.write_vector(layout::child(layout::kErrorVsR, "m"), m);
  out.write_vector(layout::child(layout::kErrorVsR, "relative_l2"), rel);
  out.write_vector(layout::child(layout::kErrorVsR, "max_abs"), max_abs);
  out.write_vector(layout::child(layout::kErrorVsR, "reduced_step_s"), step);
  out.set_attribute(layout::kErrorVsR, "method", method);
  out.set_attribute(layout::kErrorVsR, "definition",
                    std::string("output error of the reduced model of order r (bases nested: "
                                "the leading r columns of the widest), m DEIM samples (0: none); "
                                "relative_l2 and max_abs as in /error; reduced_step_s its "
                                "integration time per step"));
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

RunSummary run_experiment(const ExperimentConfig& c, const RunOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  RunSummary summary;
  // Stages deep inside the run (training runs, reduced runs) draw progress as the full run does.
  const ProgressScope progress_scope(options.progress);
  const std::unique_ptr<FullModel> model = c.model->build(c.solver);
  const auto input = make_signal(c.input, model->n_inputs());
  const Index N = model->n();
  summary.build_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  auto stage = [&](const char* name, double fraction = 0.0) {
    if (options.report_stage) options.report_stage(name, fraction);
  };

  io::ResultsWriter out(c.output);
  record_provenance(out, c.name, c.description, c.source, c.toml, options.command_line);

  out.create_group(layout::kModel);
  out.set_attribute(layout::kModel, "type", std::string(c.model->kind()));
  c.model->record(out);

  const IntegratorOptions& o = c.integrator;
  const Index steps = step_count(o);
  out.create_group(layout::kSimulation);
  out.set_attribute(layout::kSimulation, "integrator", std::string(to_string(o.scheme)));
  out.set_attribute(layout::kSimulation, "solver", model->solver_used());
  out.set_attribute(layout::kSimulation, "dt", o.dt);
  out.set_attribute(layout::kSimulation, "t0", o.t0);
  out.set_attribute(layout::kSimulation, "t_end", o.t_end);
  out.set_attribute(layout::kSimulation, "steps", static_cast<std::int64_t>(steps));
  out.set_attribute(layout::kSimulation, "rho_infinity", o.rho_infinity);
  out.set_attribute(layout::kSimulation, "newton_rtol", o.newton_rtol);
  out.set_attribute(layout::kSimulation, "newton_atol", o.newton_atol);
  out.set_attribute(layout::kSimulation, "reuse_jacobian",
                    static_cast<std::int64_t>(o.reuse_jacobian));
  out.set_attribute(layout::kSimulation, "output_stride",
                    static_cast<std::int64_t>(o.observe_stride));
  out.set_attribute(layout::kSimulation, "snapshot_stride",
                    static_cast<std::int64_t>(c.snapshot_stride));
  out.set_attribute(layout::kSimulation, "initial_state", std::string("rest (q = v = 0)"));
  out.set_attribute(
      layout::kSimulation, "state",
      std::string(model->first_order() ? "first order: v is the state x of E x' = A x + B u, q its "
                                         "time integral"
                                       : "second order: q positions, v velocities"));
  out.create_group(layout::kInput);
  out.set_attribute(layout::kInput, "type", c.input.type);
  out.set_attribute(layout::kInput, "description", input->describe());

  // Reduce first: a reduction that fails (bad order, unconverged ADI) costs no simulation.
  const std::string method(c.reduction->name());
  const bool pod_reducing = c.reduction->family() == ReductionMethod::Family::chain_projection;
  const bool bt_reducing = c.reduction->family() == ReductionMethod::Family::linear;
  const bool reducing = pod_reducing || bt_reducing;
  std::unique_ptr<LtiOperator> full_operator;  // bt, sobt: shared by reduction and analysis
  ReducedModel reduced;
  ChainReduction pod_reduced;
  ReducedTrajectory pod_traj;
  std::vector<ReducedTrajectory> other_trajs;  // reduction.compare_orders
  // The reduced chain runs first (it is cheap) so that the full run can compare states on the
  // fly at every state_stride-th step (snapshot stride, or 10 output strides).
  const Index state_stride =
      pod_reducing ? (c.snapshot_stride > 0 ? c.snapshot_stride : 10 * o.observe_stride) : 0;
  if (reducing) stage("reduction");
  if (bt_reducing) {
    full_operator = model->lti_operator();
    progress_note(concat(c.name, ": reducing (", method, ", n = ", N, ") ..."));
    reduced = c.reduction->reduce_linear(*full_operator, model->second_order_system(), out);
    progress_note(concat(c.name, ": reduced to r = ", reduced.r, " in ",
                         std::round(reduced.seconds * 100) / 100, " s"));
    summary.reduced_order = reduced.r;
    summary.reduction_seconds = reduced.seconds;
    summary.offline_stages = reduced.stages;
  } else if (pod_reducing) {
    pod_reduced = c.reduction->reduce_chain(c, *model->chain(), out, options.stop_requested);
    summary.reduced_order = pod_reduced.main.r;
    summary.deim_samples = pod_reduced.main.m;
    summary.reduction_seconds = pod_reduced.seconds;
    summary.offline_stages = pod_reduced.stages;
    stage("reduced simulation");
    pod_traj = simulate_reduced(*pod_reduced.main.model, Matrix(), *input, o, state_stride, options,
                                concat(method, ", r = ", pod_reduced.main.r));
    for (const auto& other : pod_reduced.others)
      other_trajs.push_back(simulate_reduced(*other.model, Matrix(), *input, o, 0, options,
                                             concat(method, ", r = ", other.r)));
  }

  out.create_group(layout::kOutputs);
  io::RowStream& s_t = out.open_row_stream(layout::kOutputsT, 1, 0);
  io::RowStream& s_u = out.open_row_stream(layout::kOutputsU, model->n_inputs(), 0);
  io::RowStream& s_y = out.open_row_stream(layout::kOutputsY, model->n_outputs(), 0);
  const bool snapshots = c.snapshot_stride > 0 && !c.snapshot_fields.empty();
  const bool snap_p =
      snapshots && std::count(c.snapshot_fields.begin(), c.snapshot_fields.end(), "p");
  const bool snap_v =
      snapshots && std::count(c.snapshot_fields.begin(), c.snapshot_fields.end(), "v");
  const bool snap_x =
      snapshots && std::count(c.snapshot_fields.begin(), c.snapshot_fields.end(), "x");
  io::RowStream *s_st = nullptr, *s_p = nullptr, *s_v = nullptr, *s_x = nullptr, *s_e = nullptr;
  if (snapshots) {
    out.create_group(layout::kSnapshots);
    s_st = &out.open_row_stream(layout::kSnapshotsT, 1, 0);
    if (snap_p) s_p = &out.open_row_stream(layout::kSnapshotsP, N, c.compression);
    if (snap_v) s_v = &out.open_row_stream(layout::kSnapshotsV, N, c.compression);
    if (snap_x) s_x = &out.open_row_stream(layout::kSnapshotsX, N, c.compression);
    if (model->energy(Vector::Zero(N), Vector::Zero(N)))
      s_e = &out.open_row_stream(layout::kSnapshotsEnergy, 1, 0);
  }

  // The integrator observes at every multiple of gcd(output, snapshot stride); this observer
  // sorts out which of the two streams a step belongs to.
  IntegratorOptions run = o;
  run.stop_requested = options.stop_requested;
  run.observe_stride = snapshots ? std::gcd(o.observe_stride, c.snapshot_stride) : o.observe_stride;
  if (pod_reducing) run.observe_stride = std::gcd(run.observe_stride, state_stride);
  Vector y(model->n_outputs());
  std::vector<double> y_full;  // kept for the reduced model's output error
  double write_seconds = 0.0;
  // POD: ||q - V q_r||_2 and ||q||_2 at every state_stride-th step.
  double state_err2 = 0.0, state_ref2 = 0.0, state_err_max = 0.0;
  Index state_col = 0;
  auto observe = [&](Index k, double t, const Vector& q, const Vector& v, const Vector& u) {
    const auto w0 = Clock::now();
    if (k % o.observe_stride == 0 || k == steps) {
      model->output(q, v, u, y);
      s_t.append(&t);
      s_u.append(u);
      s_y.append(y);
      if (reducing) y_full.insert(y_full.end(), y.begin(), y.end());
      ++summary.outputs;
    }
    if (pod_reducing && k % state_stride == 0 && state_col < pod_traj.q.cols()) {
      const double e2 =
          (q - pod_reduced.main.model->lift(pod_traj.q.col(state_col++))).squaredNorm();
      const double r2 = q.squaredNorm();
      state_err2 += e2;
      state_ref2 += r2;
      if (r2 > 0.0) state_err_max = std::max(state_err_max, std::sqrt(e2 / r2));
    }
    if (snapshots && (k % c.snapshot_stride == 0 || k == steps)) {
      s_st->append(&t);
      if (s_p) s_p->append(q);
      if (s_v) s_v->append(v);
      if (s_x) s_x->append(v);  // first order: v is the state
      if (s_e) {
        const double energy = *model->energy(q, v);
        s_e->append(&energy);
      }
      ++summary.snapshots;
    }
    write_seconds += std::chrono::duration<double>(Clock::now() - w0).count();
  };

  Vector q = Vector::Zero(N), v = Vector::Zero(N);
  ProgressReporter progress(c.name, options.progress, stderr,
                            [&](double f) { stage("full simulation", f); });
  stage("full simulation");
  summary.setup_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  summary.stats = model->simulate(*input, run, q, v, observe, &progress);
  summary.write_seconds = write_seconds;
  if (bt_reducing) {
    stage("reduced simulation");
    const DenseSecondOrderModel reduced_model(reduced.second_order);
    const ReducedTrajectory traj = simulate_reduced(
        reduced_model, reduced.second_order.D_ff, *input, o, 0, options,
        concat("r = ", reduced.r, ", spectral abscissa ", reduced.spectral_abscissa));
    write_output_errors(out, y_full, traj, model->n_outputs(), reduced.r, summary);
  } else if (pod_reducing) {
    write_output_errors(out, y_full, pod_traj, model->n_outputs(), pod_reduced.main.r, summary);
    if (!other_trajs.empty())
      write_error_against_order(out, method, y_full, pod_reduced, pod_traj, other_trajs, steps);
    summary.state_error_relative =
        state_ref2 > 0.0 ? std::sqrt(state_err2 / state_ref2) : std::sqrt(state_err2);
    out.set_attribute(layout::kError, "state_relative_l2", summary.state_error_relative);
    out.set_attribute(layout::kError, "state_relative_max", state_err_max);
    out.set_attribute(layout::kError, "state_stride", static_cast<std::int64_t>(state_stride));
    out.set_attribute(layout::kError, "state_definition",
                      std::string("q - V q_r every state_stride steps; state_relative_l2 = "
                                  "||q - V q_r|| / ||q|| over all of them, state_relative_max = "
                                  "max over time of the pointwise relative error"));
  }

  const double stepping = summary.stats.seconds - write_seconds;
  out.create_group(layout::kTimings);
  out.set_attribute(layout::kTimings, "setup_s", summary.setup_seconds);
  out.set_attribute(layout::kTimings, "integration_s", summary.stats.seconds);
  out.set_attribute(layout::kTimings, "write_s", write_seconds);
  out.set_attribute(layout::kTimings, "stepping_s", stepping);
  out.set_attribute(layout::kTimings, "ns_per_step_per_dof",
                    1e9 * stepping / static_cast<double>(steps) / static_cast<double>(N));
  out.set_attribute(layout::kTimings, "steps", static_cast<std::int64_t>(summary.stats.steps));
  out.set_attribute(layout::kTimings, "force_evaluations",
                    static_cast<std::int64_t>(summary.stats.force_evaluations));
  out.set_attribute(layout::kTimings, "newton_iterations",
                    static_cast<std::int64_t>(summary.stats.newton_iterations));
  out.set_attribute(layout::kTimings, "factorizations",
                    static_cast<std::int64_t>(model->factorizations()));
  if (bt_reducing) {
    stage("analysis");
    progress_note(concat(c.name, ": frequency analysis of full and reduced model (",
                         c.analysis.h2 ? "H2 norms, " : "",
                         c.analysis.hinf ? "H-infinity norms, " : "", c.analysis.bode_points,
                         " Bode points) ..."));
    const AnalysisOutcome a =
        analyse_and_record(c.analysis, c.reduction->norm_options(), *full_operator, reduced, out);
    summary.h2_error_relative = a.h2_error_relative;
    summary.hinf_error = a.hinf_error;
  }
  if (reducing) {
    out.set_attribute(layout::kTimings, "reduction_s", summary.reduction_seconds);
    out.set_attribute(layout::kTimings, "reduced_integration_s", summary.reduced_stats.seconds);
    // Full stepping time per step over the reduced model's (same integrator and options; the
    // reduced run has no writer, so its integration time is its stepping time).
    const double reduced_per_step =
        summary.reduced_stats.seconds / static_cast<double>(std::max<Index>(1, steps));
    summary.speedup_per_step =
        reduced_per_step > 0.0 ? (stepping / static_cast<double>(steps)) / reduced_per_step : 0.0;
    out.set_attribute(layout::kTimings, "speedup_per_step", summary.speedup_per_step);
  }
  summary.peak_rss_mb = peak_rss_mib();
  out.set_attribute(layout::kTimings, "peak_rss_mib", summary.peak_rss_mb);
  summary.total_seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  out.set_attribute(layout::kTimings, "total_s", summary.total_seconds);
  if (options.before_commit) options.before_commit(out, summary);
  stage("writing");
  out.commit();
  summary.results = c.output;
  return summary;
}

}  // namespace mor::experiments
