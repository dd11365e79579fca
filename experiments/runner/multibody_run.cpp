// SPDX-License-Identifier: GPL-3.0-or-later
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

double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

/// M q'' + D q' + K q = B u as x' = f(t, x) = J x + [0; M^-1 B u], x = [q; q'] (M factorised
/// once, J formed once).
struct LinearOde {
  const DenseSecondOrderSystem& s;
  Eigen::PartialPivLU<Matrix> M_lu;
  Matrix J;
  explicit LinearOde(const DenseSecondOrderSystem& sys) : s(sys), M_lu(sys.M) {
    const Index n = s.n();
    J.setZero(2 * n, 2 * n);
    J.topRightCorner(n, n).setIdentity();
    J.bottomLeftCorner(n, n) = -M_lu.solve(s.K);
    J.bottomRightCorner(n, n) = -M_lu.solve(s.D);
  }
  void rhs(const Vector& x, const Vector& u, Vector& xdot) const {
    xdot.noalias() = J * x;
    xdot.tail(s.n()) += M_lu.solve(s.B * u);
  }
};

/// A run sampled on a time grid: t (k) and y (k x p).
struct Sampled {
  std::vector<double> t;
  std::vector<Vector> y;
  CvodeStats stats;
  Matrix as_matrix() const {
    Matrix Y(static_cast<Index>(y.size()), y.empty() ? 0 : y.front().size());
    for (std::size_t i = 0; i < y.size(); ++i) Y.row(static_cast<Index>(i)) = y[i].transpose();
    return Y;
  }
};

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
  out.stats = integrate_cvode(p, x, o, [&](double t, const Vector& xt) {
    out.t.push_back(t);
    out.y.push_back(sys.Cp * xt.head(n) + sys.Cv * xt.tail(n));
  });
  return out;
}

/// The nonlinear model driven from its operating point by `scale` times the input; outputs are
/// deviations from those at the operating point.
Sampled simulate_nonlinear_driven(const MultibodyModel& model,
                                  const MultibodyModel::LinearisationPoint& lp, const Signal& input,
                                  double scale, const CvodeOptions& o) {
  OdeProblem p;
  Vector u(input.size());
  p.rhs = [&lp, &input, scale, u](double t, const Vector& x, Vector& xdot) mutable {
    input.evaluate(t, u);
    u *= scale;
    lp.rhs(t, x, u, xdot);
  };
  Vector x = lp.x;
  {
    Vector probe = x;
    if (model.project(o.t0, probe))
      p.projection = [&model](double t, Vector& xx) { model.project(t, xx); };
  }
  Vector y0;
  lp.outputs(lp.x, y0);
  Sampled out;
  Vector y;
  out.stats = integrate_cvode(p, x, o, [&](double t, const Vector& xt) {
    lp.outputs(xt, y);
    out.t.push_back(t);
    out.y.push_back(y - y0);
  });
  return out;
}

/// ||a - b||_2 / ||b||_2 over all samples (the same grid).
double relative_difference(const Sampled& a, const Sampled& b) {
  require(a.y.size() == b.y.size(), "internal: sample counts differ (", a.y.size(), " and ",
          b.y.size(), ")");
  double e2 = 0.0, r2 = 0.0;
  for (std::size_t i = 0; i < a.y.size(); ++i) {
    e2 += (a.y[i] - b.y[i]).squaredNorm();
    r2 += b.y[i].squaredNorm();
  }
  return r2 > 0.0 ? std::sqrt(e2 / r2) : std::sqrt(e2);
}

/// Linear interpolation of a sampled run at the times of grid (for runs whose output times are
/// step points: models with a projection).
Sampled resample(const Sampled& s, const std::vector<double>& grid) {
  Sampled out;
  out.stats = s.stats;
  std::size_t j = 0;
  for (double t : grid) {
    while (j + 2 < s.t.size() && s.t[j + 1] < t) ++j;
    const double t0 = s.t[j], t1 = s.t[std::min(j + 1, s.t.size() - 1)];
    const double w = t1 > t0 ? std::clamp((t - t0) / (t1 - t0), 0.0, 1.0) : 0.0;
    out.t.push_back(t);
    out.y.push_back((1.0 - w) * s.y[j] + w * s.y[std::min(j + 1, s.t.size() - 1)]);
  }
  return out;
}

DenseSecondOrderSystem to_dense(const SecondOrderSystem& s) {
  DenseSecondOrderSystem d{Matrix(s.M),  Matrix(s.D),  Matrix(s.K), Matrix(s.B),
                           Matrix(s.Cp), Matrix(s.Cv), Matrix()};
  validate(d);
  return d;
}

void write_names(io::ResultsWriter& out, const std::string& path, const std::string& name,
                 const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  out.set_attribute(path, name, joined);
}

void write_sampled(io::ResultsWriter& out, const std::string& path, const Sampled& s) {
  out.write_vector(layout::child(path, "t"),
                   Eigen::Map<const Vector>(s.t.data(), Index(s.t.size())));
  out.write_matrix(layout::child(path, "y"), s.as_matrix());
}

}  // namespace

MultibodyRunSummary run_multibody_experiment(
    const MultibodyExperimentConfig& c, const RunOptions& options,
    const std::function<void(io::ResultsWriter&, const MultibodyRunSummary&)>& before_commit) {
  const auto t_start = Clock::now();
  const auto model = make_multibody_model(c.model);
  MultibodyRunSummary summary;
  summary.title = model->title();
  io::ResultsWriter out(c.output);
  record_provenance(out, c.name, c.description, c.source, c.toml, options.command_line);
  out.create_group(layout::kModel);
  out.set_attribute(layout::kModel, "type", c.model);
  out.set_attribute(layout::kModel, "title", model->title());
  out.set_attribute(layout::kModel, "state_size", static_cast<std::int64_t>(model->state_size()));
  out.set_attribute(layout::kModel, "horizon", model->horizon());
  write_names(out, layout::kModel, "output_names", model->output_names());

  // 1. The benchmark run: timed alone (outputs only at the end), repeated for a stable figure.
  CvodeOptions timed = c.cvode;
  timed.output_dt = 0.0;
  {
    constexpr double kMinTimedSeconds = 0.3;
    constexpr int kMaxRepeats = 20;
    int repeats = 0;
    double cpu = 0.0, wall = 0.0;
    do {
      Vector x = model->initial_state();
      const double c0 = cpu_seconds();
      const auto w0 = Clock::now();
      summary.cvode = simulate_multibody(*model, x, timed).cvode;
      cpu += cpu_seconds() - c0;
      wall += seconds_since(w0);
      ++repeats;
    } while (wall < kMinTimedSeconds && repeats < kMaxRepeats);
    summary.cpu_seconds = cpu / repeats;
    summary.wall_seconds = wall / repeats;
    out.create_group(layout::kBenchmark);
    out.set_attribute(layout::kBenchmark, "cpu_seconds", summary.cpu_seconds);
    out.set_attribute(layout::kBenchmark, "wall_seconds", summary.wall_seconds);
    out.set_attribute(layout::kBenchmark, "timed_repeats", static_cast<std::int64_t>(repeats));
  }
  const CvodeOptions& o = c.cvode;
  out.set_attribute(layout::kBenchmark, "method", std::string(to_string(o.method)));
  out.set_attribute(layout::kBenchmark, "rtol", o.rtol);
  out.set_attribute(layout::kBenchmark, "atol", o.atol);
  out.set_attribute(layout::kBenchmark, "t_end", o.t_end);
  out.set_attribute(layout::kBenchmark, "steps", static_cast<std::int64_t>(summary.cvode.steps));
  out.set_attribute(layout::kBenchmark, "rhs_evaluations",
                    static_cast<std::int64_t>(summary.cvode.rhs_evaluations));
  out.set_attribute(layout::kBenchmark, "jacobian_evaluations",
                    static_cast<std::int64_t>(summary.cvode.jacobian_evaluations));
  out.set_attribute(layout::kBenchmark, "projections",
                    static_cast<std::int64_t>(summary.cvode.projections));

  // The recorded run.
  const Index np = model->points(model->initial_state()).cols();
  io::RowStream& s_t = out.open_row_stream(layout::kBenchmarkT, 1, 0);
  io::RowStream& s_x = out.open_row_stream(layout::kBenchmarkX, model->state_size(), 0);
  io::RowStream& s_y =
      out.open_row_stream(layout::kBenchmarkY, static_cast<Index>(model->output_names().size()), 0);
  io::RowStream& s_e = out.open_row_stream(layout::kBenchmarkEnergy, 1, 0);
  io::RowStream& s_b = out.open_row_stream(layout::kBenchmarkEnergyBalance, 1, 0);
  io::RowStream& s_c = out.open_row_stream(layout::kBenchmarkConstraintResidual, 1, 0);
  io::RowStream* s_exact = nullptr;
  Vector y, y_exact;
  if (model->exact_outputs(0.0, y_exact))
    s_exact = &out.open_row_stream(layout::kBenchmarkYExact, y_exact.size(), 0);
  io::RowStream* s_points =
      np > 0 ? &out.open_row_stream(layout::kAnimationPoints, 3 * np, 0) : nullptr;
  Sampled recorded;
  double exact_error = 0.0;
  Vector x = model->initial_state();
  const MultibodyRunStats stats =
      simulate_multibody(*model, x, o, [&](double t, const Vector& xt, double balance) {
        if (options.stop_requested && options.stop_requested->load())
          throw Interrupted("interrupted");
        model->outputs(t, xt, y);
        s_t.append(&t);
        s_x.append(xt);
        s_y.append(y);
        const double e = model->energy(xt), cr = model->constraint_residual(xt);
        s_e.append(&e);
        s_b.append(&balance);
        s_c.append(&cr);
        if (s_exact) {
          model->exact_outputs(t, y_exact);
          s_exact->append(y_exact);
          exact_error = std::max(exact_error, (y - y_exact).cwiseAbs().maxCoeff());
        }
        if (s_points) {
          const Eigen::Matrix3Xd P = model->points(xt);
          s_points->append(Eigen::Map<const Vector>(P.data(), P.size()));
        }
        recorded.t.push_back(t);
        recorded.y.push_back(y);
      });
  summary.energy_initial = stats.energy_initial;
  summary.energy_balance_error = stats.energy_balance_error;
  summary.constraint_residual = stats.constraint_residual;
  if (s_exact) summary.exact_error = exact_error;
  out.set_attribute(layout::kBenchmark, "energy_initial", stats.energy_initial);
  out.set_attribute(layout::kBenchmark, "energy_balance_error", stats.energy_balance_error);
  out.set_attribute(layout::kBenchmark, "constraint_residual", stats.constraint_residual);
  out.set_attribute(layout::kBenchmark, "exact_error", summary.exact_error);
  if (np > 0) {
    Matrix seg(static_cast<Index>(model->segments().size()), 2);
    Index k = 0;
    for (const auto& [a, b] : model->segments()) {
      seg(k, 0) = a;
      seg(k++, 1) = b;
    }
    out.write_matrix(layout::kAnimationSegments, seg);
    out.set_attribute(layout::kAnimation, "fps", c.animation_fps);
    out.set_attribute(layout::kAnimation, "format", c.animation);
  }

  // The accuracy reached: against the same run at tighter tolerances, on the same times.
  if (c.reference_factor > 0.0) {
    CvodeOptions tight = o;
    tight.rtol /= c.reference_factor;
    tight.atol /= c.reference_factor;
    Sampled ref;
    Vector xr = model->initial_state();
    simulate_multibody(*model, xr, tight, [&](double t, const Vector& xt, double) {
      model->outputs(t, xt, y);
      ref.t.push_back(t);
      ref.y.push_back(y);
    });
    const Sampled on_grid = resample(ref, recorded.t);
    double d = 0.0;
    for (std::size_t i = 0; i < recorded.y.size(); ++i)
      d = std::max(d, (recorded.y[i] - on_grid.y[i]).cwiseAbs().maxCoeff());
    summary.reference_difference = d;
    out.set_attribute(layout::kBenchmark, "reference_rtol", tight.rtol);
    out.set_attribute(layout::kBenchmark, "reference_difference", d);
  }

  // 2. The linearised model.
  if (c.linear) {
    const SecondOrderSystem sys = model->linearised();
    validate(sys);
    const DenseSecondOrderSystem dense = to_dense(sys);
    summary.linear_order = sys.n();
    const std::string g = layout::kLinear;
    out.create_group(g);
    for (const auto& [name, A] : {std::pair{"M", &dense.M},
                                  {"D", &dense.D},
                                  {"K", &dense.K},
                                  {"B", &dense.B},
                                  {"Cp", &dense.Cp},
                                  {"Cv", &dense.Cv}})
      out.write_matrix(layout::child(g, name), *A);
    write_names(out, g, "input_names", model->linear_input_names());
    write_names(out, g, "output_names", model->linear_output_names());
    {
      const Eigen::EigenSolver<Matrix> es(LinearOde(dense).J, false);
      out.write_vector(layout::kLinearPolesReal, es.eigenvalues().real());
      out.write_vector(layout::kLinearPolesImag, es.eigenvalues().imag());
    }
    const auto input = make_signal(c.input, sys.n_inputs());
    out.set_attribute(g, "input", input->describe());
    CvodeOptions lo = o;
    lo.t0 = 0.0;
    lo.t_end = c.linear_t_end;
    lo.output_dt = c.linear_output_dt;
    const Sampled lin = simulate_linear(dense, *input, lo);
    write_sampled(out, layout::child(g, "response"), lin);
    if (const auto lp = model->linearisation_point()) {
      // Same input at a and a/2 into the nonlinear model: the differences fall like a^2.
      const Sampled nl = resample(simulate_nonlinear_driven(*model, *lp, *input, 1.0, lo), lin.t);
      const Sampled nl_half =
          resample(simulate_nonlinear_driven(*model, *lp, *input, 0.5, lo), lin.t);
      Sampled lin_half = lin;
      for (auto& v : lin_half.y) v *= 0.5;
      write_sampled(out, layout::child(g, "nonlinear_response"), nl);
      summary.linear_difference = relative_difference(nl, lin);
      const double half = relative_difference(nl_half, lin_half);
      summary.linear_ratio = half > 0.0 ? summary.linear_difference / half : -1.0;
      out.set_attribute(g, "relative_difference", summary.linear_difference);
      out.set_attribute(g, "relative_difference_half_amplitude", half);
      out.set_attribute(g, "difference_ratio", summary.linear_ratio);
    }

    // 3. The reduction of the linearised model.
    if (c.reduction->family() == ReductionMethod::Family::linear) {
      SecondOrderLtiOperator full(sys);
      ReducedModel reduced = c.reduction->reduce_linear(full, &sys, out);
      summary.reduced_order = reduced.r;
      const Sampled red_run = simulate_linear(reduced.second_order, *input, lo);
      write_sampled(out, layout::kReduced, red_run);
      summary.reduced_error = relative_difference(red_run, lin);
      out.set_attribute(layout::kReduced, "relative_output_error", summary.reduced_error);
      out.set_attribute(layout::kReduced, "steps", static_cast<std::int64_t>(red_run.stats.steps));
      out.set_attribute(layout::kLinear, "steps", static_cast<std::int64_t>(lin.stats.steps));
      const AnalysisOutcome a =
          analyse_and_record(c.analysis, c.reduction->norm_options(), full, reduced, out);
      summary.h2_error_relative = a.h2_error_relative;
      summary.hinf_error = a.hinf_error;
    }
  }
  summary.total_seconds = seconds_since(t_start);
  out.set_attribute("/", "total_seconds", summary.total_seconds);
  if (before_commit) before_commit(out, summary);
  out.commit();
  summary.results = c.output;
  return summary;
}

}  // namespace mor::experiments