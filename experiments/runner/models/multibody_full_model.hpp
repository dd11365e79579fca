// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to the multibody kinds, not a public API: the full model of a benchmark, shared by
// multibody.cpp (the kinds, the model's runs) and multibody_analysis.cpp (its analysis).
#pragma once

#include <Eigen/LU>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/runner/model_kind.hpp"
#include "models/multibody.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/results.hpp"

namespace mor::experiments::multibody_detail {

using detail::concat;

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
    v(Key{"output_dt", "s",
          "its output interval, in (0, t_end]; t_end a whole number of them, at most 10^8"},
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

/// The state each benchmark's linearisation is about (the model headers define it).
std::string rest_state(std::string_view id);

std::string joined(const std::vector<std::string>& names);

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
CvodeOptions restarting_at_jumps(const CvodeOptions& o, const Signal& input);

/// The linear model from rest under the input, by CVODE; y includes the feed-through D_ff u.
Sampled simulate_linear(const DenseSecondOrderSystem& sys, const Signal& input,
                        const CvodeOptions& o);

/// Linear interpolation of sampled states or outputs at the times of grid (for runs whose
/// output times are step points: models with a projection).
std::vector<Vector> resample(const std::vector<double>& t, const std::vector<Vector>& y,
                             const std::vector<double>& grid);

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
    set_facts({model_->state_size(), linearised_->n_inputs(), linearised_->Cp.rows(), true, false,
               linearised_.get(), rest_state(model_->id()),
               concat("CVODE ", to_string(settings_.cvode.method))});
  }

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
                     ModelFigures& figures) const;

  /// /linear: the linearisation, its response to the input, the nonlinear model's at a and a/2
  /// (the difference must fall like a^2), and the reduced model against the linear one.
  void linear_comparison(const ModelAnalysisContext& context, io::ResultsWriter& out,
                         ModelFigures& figures) const;

  /// The nonlinear model from its rest state under scale times the input, outputs as deviations,
  /// on the times of grid.
  std::vector<Vector> driven(const Signal& input, double scale, const CvodeOptions& o,
                             const std::vector<double>& grid) const;

  std::shared_ptr<const MultibodyModel> model_;
  std::shared_ptr<const SecondOrderSystem> linearised_;
  MultibodySettings settings_;
  std::optional<MultibodyModel::LinearisationPoint> point_;
  Vector y0_;
  Index jacobians_ = 0;
};

}  // namespace mor::experiments::multibody_detail
