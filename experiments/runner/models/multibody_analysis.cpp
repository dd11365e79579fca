// SPDX-License-Identifier: GPL-3.0-or-later
// The multibody kinds' own analysis (FullModel::analyse, see multibody.cpp): the benchmark run
// against its references into /benchmark and /animation, and the linearisation into /linear.
#include "experiments/runner/models/multibody_full_model.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <ctime>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"
#include "models/multibody.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/results.hpp"
#include "src/linalg/lapack.hpp"

namespace mor::experiments::multibody_detail {
namespace {

double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
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

}  // namespace

void MultibodyFullModel::benchmark_run(const ModelAnalysisContext& context, io::ResultsWriter& out,
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
  io::RowStream& s_y =
      out.open_row_stream(layout::kBenchmarkY, static_cast<Index>(model.output_names().size()), 0);
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

void MultibodyFullModel::linear_comparison(const ModelAnalysisContext& context,
                                           io::ResultsWriter& out, ModelFigures& figures) const {
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

std::vector<Vector> MultibodyFullModel::driven(const Signal& input, double scale,
                                               const CvodeOptions& o,
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

}  // namespace mor::experiments::multibody_detail
