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
//  - its own analysis (FullModel::analyse): the benchmark run from the benchmark's initial state
//    over its horizon (CPU time, the exact solution where there is one, a run at tighter
//    tolerances, the energy balance, the constraint residual, the bodies' points for the
//    animation) into /benchmark and /animation, and the linearisation (M, D, K, B, Cp, Cv, its
//    poles, its response, the nonlinear one at amplitudes a and a/2) into /linear.
// Format and results: docs/multibody.md; examples experiments/a0*.toml, robot.toml.
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <ostream>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/multibody.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/results.hpp"
#include "src/linalg/lapack.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

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
    v(Key{"output_dt", "s", "output interval of the benchmark run, in (0, t_end]"}, output_dt);
    v(Key{"max_step", "s", "CVODE's largest step; 0: no limit"}, max_step);
    v(Key{"max_steps", "", "CVODE's step limit per output interval"}, max_steps);
    v(Key{"reference_factor", "",
          "accuracy check: the benchmark run at tolerances / this factor (> 1); 0: none"},
      reference_factor);
  }
};

/// [linear] of a multibody kind: the run driven by [input] from the rest state.
struct MultibodyLinear {
  bool enabled = true;
  double t_end = 10.0;
  double output_dt = 0.01;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"enabled", "",
          "record the linearisation (/linear: matrices, poles, its response against the "
          "nonlinear one at [input] and at half of it)"},
      enabled);
    v(Key{"t_end", "s",
          "horizon of the run driven by [input] from the rest state (nonlinear, linear and "
          "reduced)"},
      t_end);
    v(Key{"output_dt", "s", "its output interval, in (0, t_end]; t_end a whole number of them"},
      output_dt);
  }
};

/// The kind's own keys of [output].
struct MultibodyOutput {
  std::string animation = "gif";
  double animation_fps = 20.0;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"animation", "", "\"gif\" (an animated GIF of the motion) or \"none\""}, animation);
    v(Key{"animation_fps", "1/s", "frames per second of the animation, in (0, 100]"},
      animation_fps);
  }
};

inline constexpr const char* kLinearTable = "linear";

/// The state each benchmark's linearisation is about (the model headers define it).
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

double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

/// M q'' + D q' + K q = B u as x' = J x + [0; M^-1 B u], x = [q; q'] (M factorised once).
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

/// o, restarting the integration where the input jumps (a step's t_on).
CvodeOptions restarting_at_jumps(const CvodeOptions& o, const Signal& input) {
  CvodeOptions with = o;
  with.discontinuities = input.discontinuities();
  return with;
}

/// The linear model from rest under the input, by CVODE; y includes the feed-through D_ff u.
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

/// Linear interpolation of sampled states or outputs at the times of grid (for runs whose
/// output times are step points: models with a projection).
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

/// ||a - b||_2 / ||b||_2 over all samples (the same grid).
double relative_difference(const std::vector<Vector>& a, const std::vector<Vector>& b) {
  require(a.size() == b.size(), "internal: sample counts differ (", a.size(), " and ", b.size(),
          ")");
  double e2 = 0.0, r2 = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    e2 += (a[i] - b[i]).squaredNorm();
    r2 += b[i].squaredNorm();
  }
  return r2 > 0.0 ? std::sqrt(e2 / r2) : std::sqrt(e2);
}

DenseSecondOrderSystem to_dense(const SecondOrderSystem& s) {
  DenseSecondOrderSystem d{Matrix(s.M),  Matrix(s.D),  Matrix(s.K), Matrix(s.B),
                           Matrix(s.Cp), Matrix(s.Cv), Matrix()};
  validate(d);
  return d;
}

void write_sampled(io::ResultsWriter& out, const std::string& path, const std::vector<double>& t,
                   const Matrix& Y) {
  out.write_vector(layout::child(path, "t"), Eigen::Map<const Vector>(t.data(), Index(t.size())));
  out.write_matrix(layout::child(path, "y"), Y);
}

Matrix rows_of(const std::vector<Vector>& y) {
  Matrix Y(static_cast<Index>(y.size()), y.empty() ? 0 : y.front().size());
  for (std::size_t i = 0; i < y.size(); ++i) Y.row(static_cast<Index>(i)) = y[i].transpose();
  return Y;
}

/// What a multibody run needs, read once from the file.
struct MultibodySettings {
  CvodeOptions cvode;  ///< the benchmark run (t0, t_end, output_dt its own)
  double reference_factor = 100.0;
  MultibodyLinear linear;
  MultibodyOutput output;
};

class MultibodyFullModel final : public FullModel {
 public:
  MultibodyFullModel(std::shared_ptr<const MultibodyModel> model,
                     std::shared_ptr<const SecondOrderSystem> linearised,
                     const MultibodySettings& settings)
      : model_(std::move(model)),
        linearised_(std::move(linearised)),
        settings_(settings),
        point_(model_->linearisation_point()) {
    require(point_.has_value(), model_->title(),
            " has no operating point to drive from (internal: every benchmark has one)");
    point_->outputs(point_->x, y0_);
  }

  Index n() const override { return model_->state_size(); }
  Index n_inputs() const override { return linearised_->n_inputs(); }
  Index n_outputs() const override { return linearised_->Cp.rows(); }
  bool first_order() const override { return true; }
  bool is_linear() const override { return false; }
  void output(const Vector&, const Vector& x, const Vector&, Vector& y) const override {
    point_->outputs(x, y);
    y -= y0_;
  }
  std::optional<double> energy(const Vector&, const Vector& x) const override {
    return model_->energy(x);
  }
  std::unique_ptr<LtiOperator> lti_operator() const override {
    return std::make_unique<SecondOrderLtiOperator>(*linearised_);
  }
  const SecondOrderSystem* second_order_system() const override { return linearised_.get(); }
  std::string linearisation() const override { return rest_state(model_->id()); }

  /// The nonlinear model from its rest state under the input; v is its state x (absolute), q
  /// unused. CVODE's outputs on the grid k dt (resampled where the projection makes them step
  /// points).
  IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q, Vector& v,
                            const StepObserver& observe, ProgressReporter* progress) override {
    const auto w0 = Clock::now();
    const Index steps = step_count(o);
    OdeProblem p;
    Vector u(input.size());
    p.rhs = [this, &input, u](double t, const Vector& x, Vector& xdot) mutable {
      input.evaluate(t, u);
      point_->rhs(t, x, u, xdot);
    };
    Vector x = point_->x;
    {
      Vector probe = x;
      if (model_->project(o.t0, probe))
        p.projection = [this](double t, Vector& xx) { model_->project(t, xx); };
    }
    const CvodeOptions co = restarting_at_jumps(cvode_options(o), input);
    std::vector<double> ts;
    std::vector<Vector> xs;
    const CvodeStats stats = integrate_cvode(p, x, co, [&](double t, const Vector& xt) {
      if (o.stop_requested && o.stop_requested->load()) throw Interrupted("interrupted");
      ts.push_back(t);
      xs.push_back(xt);
      if (progress) progress->update(std::llround((t - o.t0) / o.dt), steps);
    });
    std::vector<double> grid(static_cast<std::size_t>(steps + 1));
    for (Index k = 0; k <= steps; ++k) grid[static_cast<std::size_t>(k)] = o.t0 + k * o.dt;
    const std::vector<Vector> on_grid = resample(ts, xs, grid);
    q.setZero(n());
    for (Index k = 0; k <= steps; ++k) {
      if (k % o.observe_stride != 0 && k != steps) continue;
      const double t = grid[static_cast<std::size_t>(k)];
      input.evaluate(t, u);
      v = on_grid[static_cast<std::size_t>(k)];
      observe(k, t, q, v, u);
    }
    IntegrationStats s;
    s.steps = stats.steps;
    s.force_evaluations = stats.rhs_evaluations;
    s.factorizations = stats.jacobian_evaluations;
    s.seconds = seconds_since(w0);
    jacobians_ = stats.jacobian_evaluations;
    return s;
  }
  Index factorizations() const override { return jacobians_; }
  std::string solver_used() const override {
    return concat("CVODE ", to_string(settings_.cvode.method));
  }

  bool simulate_reduced_linear(const DenseSecondOrderSystem& reduced, const Signal& input,
                               const IntegratorOptions& o, const OutputObserver& observe,
                               IntegrationStats& stats) const override {
    const auto w0 = Clock::now();
    const Sampled run = simulate_linear(reduced, input, cvode_options(o));
    const Index steps = step_count(o);
    require(static_cast<Index>(run.t.size()) == steps + 1, "internal: CVODE gave ", run.t.size(),
            " outputs of the reduced model for ", steps + 1, " output times");
    for (Index k = 0; k <= steps; ++k)
      observe(k, run.t[static_cast<std::size_t>(k)], run.y[static_cast<std::size_t>(k)]);
    stats.steps = run.stats.steps;
    stats.force_evaluations = run.stats.rhs_evaluations;
    stats.seconds = seconds_since(w0);
    return true;
  }

  ModelFigures analyse(const ModelAnalysisContext& context, io::ResultsWriter& out) override {
    ModelFigures figures;
    benchmark_run(context, out, figures);
    if (settings_.linear.enabled) linear_comparison(context, out, figures);
    return figures;
  }

 private:
  /// CVODE at the file's tolerances on the runner's output grid.
  CvodeOptions cvode_options(const IntegratorOptions& o) const {
    CvodeOptions co = settings_.cvode;
    co.t0 = o.t0;
    co.t_end = o.t_end;
    co.output_dt = o.dt;
    return co;
  }

  /// /benchmark and /animation: the benchmark's own run, timed alone, then recorded, then
  /// checked against a run at tighter tolerances.
  void benchmark_run(const ModelAnalysisContext& context, io::ResultsWriter& out,
                     ModelFigures& figures) const {
    const MultibodyModel& model = *model_;
    const CvodeOptions& o = settings_.cvode;
    CvodeOptions timed = o;
    timed.output_dt = 0.0;
    constexpr double kMinTimedSeconds = 0.3;
    constexpr int kMaxRepeats = 20;
    int repeats = 0;
    double cpu = 0.0, wall = 0.0;
    CvodeStats cvode;
    do {
      Vector x = model.initial_state();
      const double c0 = cpu_seconds();
      const auto w0 = Clock::now();
      cvode = simulate_multibody(model, x, timed).cvode;
      cpu += cpu_seconds() - c0;
      wall += seconds_since(w0);
      ++repeats;
    } while (wall < kMinTimedSeconds && repeats < kMaxRepeats);
    out.create_group(layout::kBenchmark);
    out.set_attribute(layout::kBenchmark, "cpu_seconds", cpu / repeats);
    out.set_attribute(layout::kBenchmark, "wall_seconds", wall / repeats);
    out.set_attribute(layout::kBenchmark, "timed_repeats", static_cast<std::int64_t>(repeats));
    out.set_attribute(layout::kBenchmark, "method", std::string(to_string(o.method)));
    out.set_attribute(layout::kBenchmark, "rtol", o.rtol);
    out.set_attribute(layout::kBenchmark, "atol", o.atol);
    out.set_attribute(layout::kBenchmark, "t_end", o.t_end);
    out.set_attribute(layout::kBenchmark, "steps", static_cast<std::int64_t>(cvode.steps));
    out.set_attribute(layout::kBenchmark, "rhs_evaluations",
                      static_cast<std::int64_t>(cvode.rhs_evaluations));
    out.set_attribute(layout::kBenchmark, "jacobian_evaluations",
                      static_cast<std::int64_t>(cvode.jacobian_evaluations));
    out.set_attribute(layout::kBenchmark, "projections",
                      static_cast<std::int64_t>(cvode.projections));
    figures.emplace_back("cvode_cpu_s", cpu / repeats);
    figures.emplace_back("cvode_steps", static_cast<double>(cvode.steps));

    // The recorded run.
    const Index np = model.points(model.initial_state()).cols();
    io::RowStream& s_t = out.open_row_stream(layout::kBenchmarkT, 1, 0);
    io::RowStream& s_x = out.open_row_stream(layout::kBenchmarkX, model.state_size(), 0);
    io::RowStream& s_y = out.open_row_stream(layout::kBenchmarkY,
                                             static_cast<Index>(model.output_names().size()), 0);
    io::RowStream& s_e = out.open_row_stream(layout::kBenchmarkEnergy, 1, 0);
    io::RowStream& s_b = out.open_row_stream(layout::kBenchmarkEnergyBalance, 1, 0);
    io::RowStream& s_c = out.open_row_stream(layout::kBenchmarkConstraintResidual, 1, 0);
    io::RowStream* s_exact = nullptr;
    Vector y, y_exact;
    if (model.exact_outputs(0.0, y_exact))
      s_exact = &out.open_row_stream(layout::kBenchmarkYExact, y_exact.size(), 0);
    io::RowStream* s_points =
        np > 0 ? &out.open_row_stream(layout::kAnimationPoints, 3 * np, 0) : nullptr;
    std::vector<double> recorded_t;
    std::vector<Vector> recorded_y;
    double exact_error = 0.0;
    Vector x = model.initial_state();
    const MultibodyRunStats stats =
        simulate_multibody(model, x, o, [&](double t, const Vector& xt, double balance) {
          if (context.stop_requested && context.stop_requested->load())
            throw Interrupted("interrupted");
          model.outputs(t, xt, y);
          s_t.append(&t);
          s_x.append(xt);
          s_y.append(y);
          const double e = model.energy(xt), cr = model.constraint_residual(xt);
          s_e.append(&e);
          s_b.append(&balance);
          s_c.append(&cr);
          if (s_exact) {
            model.exact_outputs(t, y_exact);
            s_exact->append(y_exact);
            exact_error = std::max(exact_error, (y - y_exact).cwiseAbs().maxCoeff());
          }
          if (s_points) {
            const Eigen::Matrix3Xd P = model.points(xt);
            s_points->append(Eigen::Map<const Vector>(P.data(), P.size()));
          }
          recorded_t.push_back(t);
          recorded_y.push_back(y);
        });
    out.set_attribute(layout::kBenchmark, "energy_initial", stats.energy_initial);
    out.set_attribute(layout::kBenchmark, "energy_balance_error", stats.energy_balance_error);
    out.set_attribute(layout::kBenchmark, "constraint_residual", stats.constraint_residual);
    out.set_attribute(layout::kBenchmark, "exact_error", s_exact ? exact_error : -1.0);
    if (s_exact) figures.emplace_back("exact_error", exact_error);
    figures.emplace_back("energy_initial", stats.energy_initial);
    figures.emplace_back("energy_balance_error", stats.energy_balance_error);
    figures.emplace_back("constraint_residual", stats.constraint_residual);
    if (np > 0) {
      Matrix seg(static_cast<Index>(model.segments().size()), 2);
      Index k = 0;
      for (const auto& [a, b] : model.segments()) {
        seg(k, 0) = a;
        seg(k++, 1) = b;
      }
      out.write_matrix(layout::kAnimationSegments, seg);
      out.set_attribute(layout::kAnimation, "fps", settings_.output.animation_fps);
      out.set_attribute(layout::kAnimation, "format", settings_.output.animation);
    }

    // The accuracy reached: against the same run at tighter tolerances, on the same times.
    if (settings_.reference_factor > 0.0) {
      CvodeOptions tight = o;
      tight.rtol /= settings_.reference_factor;
      tight.atol /= settings_.reference_factor;
      std::vector<double> ref_t;
      std::vector<Vector> ref_y;
      Vector xr = model.initial_state();
      simulate_multibody(model, xr, tight, [&](double t, const Vector& xt, double) {
        model.outputs(t, xt, y);
        ref_t.push_back(t);
        ref_y.push_back(y);
      });
      const std::vector<Vector> on_grid = resample(ref_t, ref_y, recorded_t);
      double d = 0.0;
      for (std::size_t i = 0; i < recorded_y.size(); ++i)
        d = std::max(d, (recorded_y[i] - on_grid[i]).cwiseAbs().maxCoeff());
      out.set_attribute(layout::kBenchmark, "reference_rtol", tight.rtol);
      out.set_attribute(layout::kBenchmark, "reference_difference", d);
      figures.emplace_back("reference_difference", d);
    }
  }

  /// /linear: the linearisation, its response to the input, the nonlinear model's at a and a/2
  /// (the difference must fall like a^2), and the reduced model against the linear one.
  void linear_comparison(const ModelAnalysisContext& context, io::ResultsWriter& out,
                         ModelFigures& figures) const {
    const SecondOrderSystem& sys = *linearised_;
    const DenseSecondOrderSystem dense = to_dense(sys);
    const std::string g = layout::kLinear;
    out.create_group(g);
    for (const auto& [name, A] : {std::pair{"M", &dense.M},
                                  {"D", &dense.D},
                                  {"K", &dense.K},
                                  {"B", &dense.B},
                                  {"Cp", &dense.Cp},
                                  {"Cv", &dense.Cv}})
      out.write_matrix(layout::child(g, name), *A);
    out.set_attribute(g, "input_names", joined(model_->linear_input_names()));
    out.set_attribute(g, "output_names", joined(model_->linear_output_names()));
    out.set_attribute(g, "about", rest_state(model_->id()));
    {
      Matrix J = LinearOde(dense).J;
      const ComplexVector poles = lapack::eigenvalues(J);
      out.write_vector(layout::kLinearPolesReal, poles.real());
      out.write_vector(layout::kLinearPolesImag, poles.imag());
    }
    out.set_attribute(g, "input", context.input.describe());
    const CvodeOptions lo = cvode_options(context.integrator);
    const Sampled lin = simulate_linear(dense, context.input, lo);
    write_sampled(out, layout::child(g, "response"), lin.t, lin.as_matrix());
    out.set_attribute(g, "steps", static_cast<std::int64_t>(lin.stats.steps));
    // Same input at a and a/2 into the nonlinear model: the differences fall like a^2.
    const std::vector<Vector> nl = driven(context.input, 1.0, lo, lin.t);
    const std::vector<Vector> nl_half = driven(context.input, 0.5, lo, lin.t);
    std::vector<Vector> lin_half = lin.y;
    for (auto& v : lin_half) v *= 0.5;
    write_sampled(out, layout::child(g, "nonlinear_response"), lin.t, rows_of(nl));
    const double difference = relative_difference(nl, lin.y);
    const double half = relative_difference(nl_half, lin_half);
    const double ratio = half > 0.0 ? difference / half : -1.0;
    out.set_attribute(g, "relative_difference", difference);
    out.set_attribute(g, "relative_difference_half_amplitude", half);
    out.set_attribute(g, "difference_ratio", ratio);
    figures.emplace_back("linear_difference", difference);
    figures.emplace_back("linear_ratio", ratio);

    // The reduced model's outputs (at /outputs/t) against the full linear model's.
    const std::vector<double>* yr = context.reduced_outputs;
    const Index p = n_outputs();
    if (yr == nullptr || static_cast<std::size_t>(p) * lin.t.size() != yr->size()) return;
    std::vector<Vector> reduced;
    for (std::size_t k = 0; k < lin.t.size(); ++k)
      reduced.push_back(Eigen::Map<const Vector>(yr->data() + k * static_cast<std::size_t>(p), p));
    write_sampled(out, layout::kReduced, lin.t, rows_of(reduced));
    const double error = relative_difference(reduced, lin.y);
    out.set_attribute(layout::kReduced, "relative_output_error", error);
    out.set_attribute(layout::kReduced, "relative_output_error_definition",
                      std::string("||y_r - y_lin||_2 / ||y_lin||_2 against the full linearised "
                                  "model (/linear/response); /error compares with the nonlinear "
                                  "model"));
    figures.emplace_back("reduced_linear_error", error);
  }

  /// The nonlinear model from its rest state under scale times the input, outputs as deviations,
  /// on the times of grid.
  std::vector<Vector> driven(const Signal& input, double scale, const CvodeOptions& o,
                             const std::vector<double>& grid) const {
    OdeProblem p;
    Vector u(input.size());
    p.rhs = [this, &input, scale, u](double t, const Vector& x, Vector& xdot) mutable {
      input.evaluate(t, u);
      u *= scale;
      point_->rhs(t, x, u, xdot);
    };
    Vector x = point_->x;
    {
      Vector probe = x;
      if (model_->project(o.t0, probe))
        p.projection = [this](double t, Vector& xx) { model_->project(t, xx); };
    }
    std::vector<double> ts;
    std::vector<Vector> ys;
    Vector y;
    integrate_cvode(p, x, restarting_at_jumps(o, input), [&](double t, const Vector& xt) {
      point_->outputs(xt, y);
      ts.push_back(t);
      ys.push_back(y - y0_);
    });
    return resample(ts, ys, grid);
  }

  std::shared_ptr<const MultibodyModel> model_;
  std::shared_ptr<const SecondOrderSystem> linearised_;
  MultibodySettings settings_;
  std::optional<MultibodyModel::LinearisationPoint> point_;
  Vector y0_;
  Index jacobians_ = 0;
};

class MultibodySpec final : public ModelSpec {
 public:
  explicit MultibodySpec(std::shared_ptr<const MultibodyModel> model)
      : model_(std::move(model)),
        linearised_(std::make_shared<const SecondOrderSystem>(model_->linearised())) {
    validate(*linearised_);
    settings_.cvode.method = model_->preferred_method();
    settings_.cvode.t_end = model_->horizon();
    settings_.cvode.output_dt = simulation_.output_dt;
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
  Index size() const override { return model_->state_size(); }
  bool is_linear() const override { return false; }
  bool first_order() const override { return true; }
  LinearSystem linear_system() const override {
    throw InvalidArgument(concat(
        "the ", model_->title(), " is nonlinear and has no LTI form; its linearisation about ",
        rest_state(model_->id()), " is model.type = \"linearised_multibody\" with benchmark = \"",
        model_->id(), "\""));
  }
  std::unique_ptr<FullModel> build(SparseBackend) const override {
    return std::make_unique<MultibodyFullModel>(model_, linearised_, settings_);
  }

  bool has_linearisation() const override { return true; }
  Index linear_size() const override { return linearised_->n(); }
  bool linear_first_order() const override { return false; }
  bool owns_simulation() const override { return true; }
  void read_table(std::string_view table, TableReader& r,
                  const std::filesystem::path& base_dir) override {
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
