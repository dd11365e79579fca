// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/parametric_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parametric_linear.hpp"
#include "experiments/runner/pipeline.hpp"
#include "experiments/runner/results_layout.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {

using detail::concat;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void check_parameters(const ModelSpec& spec, const ParameterDomain& domain,
                      const toml::table* where, const toml::table* model_table,
                      const std::string& source) {
  auto at = [&](const std::string& name) {
    const toml::node* n = where != nullptr ? where->get(name) : nullptr;
    return n != nullptr ? located(source, *n) : source;
  };
  for (const Parameter& p : domain.parameters()) {
    const std::string why = spec.parameter_refusal(p.name);
    require(why.empty(), at(p.name), ": parameters.", p.name, " cannot be a parameter: ", why);
    require(model_table == nullptr || !model_table->contains(p.name), at(p.name), ": ", p.name,
            " is given both in [model] (", p.name,
            " = a value) and in [parameters] (a range): "
            "keep one");
  }
  if (!domain.empty())
    for (const std::string& name : spec.required_parameters())
      require(domain.index_of(name) >= 0, where != nullptr ? located(source, *where) : source,
              ": the model has affine terms in the parameter ", name, " (X_", name,
              " beside a matrix X), and [parameters] gives it no range: add ", name,
              " = { min = ..., max = ... }");
  const Index np = domain.size();
  require(np <= 16, source, ": [parameters] names ", np, " parameters, at most 16 are supported");
  for (Index v = 0; v < (Index{1} << np) && np > 0; ++v) {
    Vector mu(np);
    for (Index j = 0; j < np; ++j) {
      const Parameter& q = domain.parameters()[static_cast<std::size_t>(j)];
      mu[j] = ((v >> j) & 1) ? q.max : q.min;
    }
    try {
      (void)spec.at(domain, mu);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(concat(where != nullptr ? located(source, *where) : source,
                                   ": the model at the corner ", domain.describe(mu),
                                   " of [parameters]: ", e.what()));
    }
  }
}

void record_parameters(const ExperimentConfig& c, io::ResultsWriter& out) {
  const ParameterDomain& d = c.parameters;
  out.create_group(layout::kParameters);
  out.write_strings(layout::kParametersNames, d.names());
  Vector lo(d.size()), hi(d.size()), log(d.size());
  for (Index j = 0; j < d.size(); ++j) {
    const Parameter& p = d.parameters()[static_cast<std::size_t>(j)];
    lo[j] = p.min;
    hi[j] = p.max;
    log[j] = p.log ? 1.0 : 0.0;
  }
  out.write_vector(layout::kParametersMin, lo);
  out.write_vector(layout::kParametersMax, hi);
  out.write_vector(layout::kParametersLog, log);
  out.write_vector(layout::kParametersReference, c.run_point.size() > 0 ? c.run_point : d.center());
}

namespace {

/// What the reduced side of one validation point gives: its outputs at the full run's output
/// steps, its integration statistics, the seconds of its evaluation at mu, and figures by name
/// (the measures of a linear model, the local model's).
struct ReducedAt {
  std::vector<double> y;
  IntegrationStats stats;
  double evaluation_s = 0;
  std::vector<std::pair<std::string, double>> figures;
};
using ReducedRun = std::function<ReducedAt(const Vector& mu, const std::string& at,
                                           const IntegratorOptions& o, FullModel& full)>;

RunSummary::Validation validate(const ExperimentConfig& c, const Signal& input,
                                io::ResultsWriter& out, const std::atomic<bool>* stop,
                                const ReducedRun& reduced_at) {
  const ParameterDomain& d = c.parameters;
  const Matrix X =
      c.validation_points.rows() > 0
          ? c.validation_points
          : d.sample(c.validation_samples, static_cast<std::uint64_t>(c.validation_seed));
  const Index k = X.rows();
  IntegratorOptions o = c.integrator;
  o.stop_requested = stop;
  const double steps = static_cast<double>(std::max<Index>(1, step_count(o)));
  Vector error(k), full_step(k), reduced_step(k), evaluation(k);
  // Figures by name, in the order first seen; NaN where a point has none.
  std::vector<std::pair<std::string, Vector>> figures;
  for (Index i = 0; i < k; ++i) {
    const Vector mu = X.row(i).transpose();
    const std::string at = d.describe(mu);
    progress_note(concat(c.name, ": validation point ", i + 1, "/", k, " (", at, ")"));
    // The full model at mu.
    const std::unique_ptr<FullModel> full = c.model->at(d, mu)->build(c.solver);
    std::vector<double> y;
    Vector yk(full->n_outputs());
    ProgressReporter progress(concat(c.name, ": validation ", i + 1, "/", k),
                              g_progress_enabled.load());
    IntegrationStats fs;
    try {
      fs = simulate_full_step(
          *full, input, o,
          [&](Index, double, const Vector& q, const Vector& v, const Vector& u) {
            full->output(q, v, u, yk);
            y.insert(y.end(), yk.begin(), yk.end());
          },
          &progress);
    } catch (const NumericalError& e) {
      throw NumericalError(concat("validation run of the full model at ", at, ": ", e.what()));
    }
    // The reduced model evaluated at mu, on the same output steps.
    ReducedAt r = reduced_at(mu, at, o, *full);
    require(r.y.size() == y.size(), "internal: validation at ", at, ": ", y.size(), " full and ",
            r.y.size(), " reduced output values");
    double e2 = 0, y2 = 0;
    for (std::size_t j = 0; j < y.size(); ++j) {
      e2 += (y[j] - r.y[j]) * (y[j] - r.y[j]);
      y2 += y[j] * y[j];
    }
    error[i] = y2 > 0 ? std::sqrt(e2 / y2) : std::sqrt(e2);
    full_step[i] = fs.seconds / steps;
    reduced_step[i] = r.stats.seconds / steps;
    evaluation[i] = r.evaluation_s;
    for (const auto& figure : r.figures) {
      auto it = std::find_if(figures.begin(), figures.end(),
                             [&](const auto& f) { return f.first == figure.first; });
      if (it == figures.end())
        it = figures.insert(figures.end(), {figure.first, Vector::Constant(k, std::nan(""))});
      it->second[i] = figure.second;
    }
  }
  out.create_group(layout::kValidation);
  out.write_strings(layout::kValidationParameterNames, d.names());
  out.write_matrix(layout::kValidationParameters, X);
  out.write_vector(layout::kValidationOutputError, error);
  out.write_vector(layout::kValidationFullStep, full_step);
  out.write_vector(layout::kValidationReducedStep, reduced_step);
  out.write_vector(layout::kValidationEvaluation, evaluation);
  if (!figures.empty()) {
    out.create_group(layout::kValidationFigures);
    for (const auto& [name, values] : figures)
      out.write_vector(layout::child(layout::kValidationFigures, name), values);
  }
  RunSummary::Validation v;
  v.points = k;
  if (k > 0) {
    v.max_error = error.maxCoeff();
    v.median_error = median({error.begin(), error.end()});
    v.full_step_s = median({full_step.begin(), full_step.end()});
    v.reduced_step_s = median({reduced_step.begin(), reduced_step.end()});
    v.evaluation_s = median({evaluation.begin(), evaluation.end()});
  }
  for (const auto& [name, values] : figures) {
    double worst = -1;
    for (double x : values)
      if (std::isfinite(x)) worst = std::max(worst, x);
    if (worst >= 0) v.max_figures.emplace_back(name, worst);
  }
  out.set_attribute(layout::kValidation, "points", static_cast<std::int64_t>(k));
  out.set_attribute(layout::kValidation, "seed", static_cast<std::int64_t>(c.validation_seed));
  out.set_attribute(layout::kValidation, "max_output_error", v.max_error);
  out.set_attribute(layout::kValidation, "median_output_error", v.median_error);
  return v;
}

}  // namespace

RunSummary::Validation validate_parametric(const ExperimentConfig& c,
                                           const ParametricProjectedModel& model,
                                           const Signal& input, io::ResultsWriter& out,
                                           const std::atomic<bool>* stop) {
  return validate(
      c, input, out, stop,
      [&](const Vector& mu, const std::string& at, const IntegratorOptions& o, FullModel&) {
        ReducedAt r;
        const auto t0 = Clock::now();
        const ProjectedModel reduced = model.at(mu);
        r.evaluation_s = seconds_since(t0);
        Vector yr;
        r.stats = simulate_reduced_step(
            reduced, input, o,
            [&](Index, double, const Vector& q, const Vector& v, const Vector&) {
              reduced.output(q, v, yr);
              r.y.insert(r.y.end(), yr.begin(), yr.end());
            },
            concat("validation at ", at));
        return r;
      });
}

RunSummary::Validation validate_parametric_linear(const ExperimentConfig& c,
                                                  const ParametricLtiModel& model,
                                                  const Signal& input, io::ResultsWriter& out,
                                                  const std::atomic<bool>* stop) {
  auto simulate = [&](const DenseSecondOrderSystem& sys, const IntegratorOptions& o,
                      const std::string& label, ReducedAt& r) {
    const DenseSecondOrderModel reduced(sys);
    Vector yr(sys.Cp.rows());
    r.stats = simulate_reduced_step(
        reduced, input, o,
        [&](Index, double, const Vector& q, const Vector& v, const Vector& u) {
          reduced.output(q, v, yr);
          if (sys.D_ff.size() > 0) yr.noalias() += sys.D_ff * u;
          r.y.insert(r.y.end(), yr.begin(), yr.end());
        },
        label);
  };
  return validate(
      c, input, out, stop,
      [&](const Vector& mu, const std::string& at, const IntegratorOptions& o, FullModel& full) {
        ReducedAt r;
        const auto t0 = Clock::now();
        ReducedModel reduced = reduced_model_at(model, mu);
        r.evaluation_s = seconds_since(t0);
        simulate(reduced.second_order, o, concat("validation at ", at), r);
        r.figures.emplace_back("spectral_abscissa",
                               reduced.summary.spectral_abscissa.value_or(std::nan("")));
        if (c.analysis == nullptr && !c.validation_compare_local) return r;
        // The measures of a linear reduced model (the norms of G(mu) - G_r(mu), ...)
        // at mu, and with compare_local the method's own local model there.
        const std::unique_ptr<LtiOperator> lti = full.lti_operator();
        io::Record scratch;
        for (auto& figure : analyse_linear_step(c, *lti, reduced, scratch))
          r.figures.push_back(std::move(figure));
        if (c.validation_compare_local) {
          ReducedModel local = c.reduction->reduce_linear_in_run(at_point(c, mu), full, *lti,
                                                                 full.second_order_system(), stop);
          r.figures.emplace_back("local_r", static_cast<double>(local.summary.r));
          if (local.summary.error_bound)
            r.figures.emplace_back("local_error_bound", *local.summary.error_bound);
          io::Record scratch_local;
          for (auto& [name, value] : analyse_linear_step(c, *lti, local, scratch_local))
            r.figures.emplace_back("local_" + name, value);
        }
        return r;
      });
}

}  // namespace mor::experiments
