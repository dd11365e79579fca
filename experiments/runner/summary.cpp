// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/summary.hpp"

#include <algorithm>
#include <string>

#include "experiments/runner/estimates.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"

namespace mor::experiments {

namespace {

std::string stage_name(std::string stage) {
  if (stage.size() > 2 && stage.compare(stage.size() - 2, 2, "_s") == 0)
    stage.resize(stage.size() - 2);
  for (auto& ch : stage)
    if (ch == '_') ch = ' ';
  return stage;
}

/// The figures of the run that go in `line`, each by its measure's format and note; the first
/// after `lead`, the others after ", ".
void print_figures(const ExperimentConfig& c, const RunSummary& s, SummaryLine line,
                   const char* lead, std::FILE* out) {
  for (const FigureInfo& f : measure_figures()) {
    if (f.summary.empty() || f.line != line) continue;
    const double v = figure_or(s.figures, f.name, -1.0);
    if (v < 0) continue;
    char value[160];
    std::snprintf(value, sizeof value, std::string(f.summary).c_str(), v);
    std::fprintf(out, "%s%s%s", lead, value, f.note != nullptr ? f.note(c, s).c_str() : "");
    lead = ", ";
  }
}

/// The lines of --dry-run for [parameters]: the training's runs and time, its memory, the
/// validation's runs and time (all included in the estimates above them).
void print_parametric_estimate(const ExperimentConfig& c, const ParametricEstimate& p,
                               std::FILE* out) {
  const auto ll = [](Index i) { return static_cast<long long>(i); };
  const ParametricTrainingEstimate& t = p.training;
  const auto inputs = static_cast<long long>(c.training.size());
  const long long points = inputs > 0 ? ll(t.full_runs) / inputs : 0;
  constexpr double kMiB = 1024.0 * 1024.0;
  if (t.local) {
    if (t.greedy)
      std::fprintf(out,
                   "# Training (sampling = \"greedy\", %lld candidate points): reduction.method "
                   "= \"%s\" at the points the greedy selects (at most %lld), the full transfer "
                   "function at every point on the greedy's frequencies, about %.3g s, about %.0f "
                   "MiB; a global basis per iteration.\n",
                   ll(t.points), std::string(c.reduction->name()).c_str(),
                   ll(c.reduction->parametric_linear()->local_reductions()), t.seconds,
                   t.bytes / kMiB);
    else
      std::fprintf(out,
                   "# Training: reduction.method = \"%s\" at each of %lld training points, about "
                   "%.3g s, about %.0f MiB; then one global basis.\n",
                   std::string(c.reduction->name()).c_str(), ll(t.points), t.seconds,
                   t.bytes / kMiB);
    std::fprintf(out,
                 "# Validation: %lld full and %lld reduced runs on [input] with the [analysis] "
                 "measures at each point%s (validation.parameter_samples = %lld), about %.3g s, "
                 "about %.0f MiB besides the run's own model.\n",
                 ll(p.validation_points), ll(p.validation_points),
                 c.validation_compare_local ? " and the method's local model there" : "",
                 ll(p.validation_points), p.validation_seconds, p.validation_mib);
    return;
  }
  if (t.greedy)
    std::fprintf(out,
                 "# Training (sampling = \"greedy\", %lld candidate points): at most %lld full "
                 "runs (%lld points x %lld [[training]] inputs) and %lld reduced runs (the "
                 "indicators and true errors), about %.3g s.\n",
                 ll(t.points), ll(t.full_runs), points, inputs, ll(t.reduced_runs), t.seconds);
  else
    std::fprintf(out,
                 "# Training (sampling = \"all\"): %lld full runs (%lld points x %lld "
                 "[[training]] inputs), about %.3g s.\n",
                 ll(t.full_runs), points, inputs, t.seconds);
  std::string kept;
  if (t.state_columns > 0)
    kept = detail::concat(t.state_columns, " columns of the state snapshots (4 r, at least 100)");
  if (t.force_columns > 0)
    kept += detail::concat(kept.empty() ? "" : " and ", t.force_columns,
                           " of the force snapshots (2 m, at least 100)");
  std::fprintf(out,
               "# Training memory: the incremental SVDs keep %s; with %d run%s at once (--jobs), "
               "each compressing its own snapshots, and the models, about %.0f MiB.\n",
               kept.empty() ? "no snapshots" : kept.c_str(), t.jobs, t.jobs == 1 ? "" : "s",
               t.bytes / kMiB);
  std::fprintf(out,
               "# Validation: %lld full and %lld reduced runs on [input] "
               "(validation.parameter_samples = %lld), about %.3g s, about %.0f MiB besides the "
               "run's own model.\n",
               ll(p.validation_points), ll(p.validation_points), ll(p.validation_points),
               p.validation_seconds, p.validation_mib);
}

}  // namespace

void print_run_summary(const ExperimentConfig& c, const RunSummary& s,
                       const std::filesystem::path& plots_dir, std::FILE* out) {
  const auto ll = [](Index i) { return static_cast<long long>(i); };
  const bool reduced = s.reduced_order > 0;
  const double stepping = s.stats.seconds - s.write_seconds;
  const double steps = static_cast<double>(s.stats.steps);
  std::fprintf(out, "mor: %s%s%s\n", c.name.c_str(), c.description.empty() ? "" : ": ",
               c.description.c_str());
  const std::string kind(c.model->kind());
  const std::string coordinate(c.model->coordinate());
  const std::string coordinates =
      coordinate.empty() ? "" : coordinate + (coordinate.back() == 's' ? "es" : "s");
  if (!coordinates.empty())
    std::fprintf(out, "  model     %s, N = %lld %s (%lld states), %s\n", kind.c_str(),
                 ll(c.model->size()), coordinates.c_str(), 2 * ll(c.model->size()),
                 c.model->is_linear() ? "linear" : "nonlinear");
  else
    std::fprintf(out, "  model     %s, n = %lld%s\n", kind.c_str(), ll(c.model->size()),
                 c.model->first_order() ? " states (first order)" : " (second order)");
  if (c.model->owns_simulation())
    std::fprintf(out, "  full      %lld steps of the model's own CVODE run to t = %g: %.3g s\n",
                 ll(s.stats.steps), c.integrator.t_end, stepping);
  else
    std::fprintf(out, "  full      %lld steps of %s (dt = %g): %.3g s, %.3g ns per step per %s\n",
                 ll(s.stats.steps), std::string(to_string(c.integrator.scheme)).c_str(),
                 c.integrator.dt, stepping,
                 1e9 * stepping / steps / static_cast<double>(c.model_size()),
                 coordinate.empty() ? "state" : coordinate.c_str());
  if (reduced) {
    std::fprintf(out, "  reduced   %s", std::string(c.reduction->name()).c_str());
    if (!s.linearisation.empty())
      std::fprintf(out, " of the linearisation about %s", s.linearisation.c_str());
    std::fprintf(out, ", r = %lld", ll(s.reduced_order));
    if (s.deim_samples > 0) std::fprintf(out, " (%lld DEIM points)", ll(s.deim_samples));
    if (s.ecsw_elements > 0 && s.ecsw_snapshot_stride > 1)
      std::fprintf(out,
                   " (ECSW: %lld elements of %lld, trained on every %lld-th snapshot: the "
                   "training matrix's memory limit)",
                   ll(s.ecsw_elements), ll(s.n_elements), ll(s.ecsw_snapshot_stride));
    else if (s.ecsw_elements > 0)
      std::fprintf(out, " (ECSW: %lld elements of %lld)", ll(s.ecsw_elements), ll(s.n_elements));
    std::fprintf(out, ": %.3g s", s.reduced_stats.seconds);
    print_figures(c, s, SummaryLine::reduced, ", ", out);
    std::fprintf(out, "\n  offline   %.3g s", s.reduction_seconds);
    const char* sep = ": ";
    for (const auto& [stage, seconds] : s.offline_stages) {
      std::fprintf(out, "%s%s %.3g s", sep, stage_name(stage).c_str(), seconds);
      sep = ", ";
    }
    // The measures' figures (experiments/runner/measure.hpp), with what they note of the run.
    print_figures(c, s, SummaryLine::error, "\n  error     ", out);
    std::fprintf(out, "\n");
  }
  if (s.validation) {
    const auto& v = *s.validation;
    std::string domain;
    for (const Parameter& p : c.parameters.parameters())
      domain += detail::concat(domain.empty() ? "" : ", ", p.name, " in [", p.min, ", ", p.max, "]",
                               p.log ? " (log)" : "");
    std::fprintf(out, "  domain    %s: %lld training points; the runs above at %s\n",
                 domain.c_str(), ll(v.training_points),
                 c.parameters.describe(c.parameters.center()).c_str());
    if (v.selected_points > 0)
      std::fprintf(
          out, "  greedy    %s at %lld of the %lld points (%s)\n",
          c.reduction && c.reduction->family_for(*c.model) == ReductionMethod::Family::linear
              ? "local reductions"
              : "full runs",
          ll(v.selected_points), ll(v.training_points), v.greedy_note.c_str());
    std::fprintf(out,
                 "  validated %lld unseen points on [input]: relative output error max %.3g, "
                 "median %.3g; per step %.3g us reduced, %.3g us full (%.3gx), evaluation at a "
                 "point %.3g us\n",
                 ll(v.points), v.max_error, v.median_error, 1e6 * v.reduced_step_s,
                 1e6 * v.full_step_s, v.reduced_step_s > 0 ? v.full_step_s / v.reduced_step_s : 0.0,
                 1e6 * v.evaluation_s);
    if (!v.max_figures.empty()) {
      std::string figures;
      for (const auto& [name, value] : v.max_figures)
        figures += detail::concat(figures.empty() ? "" : ", ", name, " ", value);
      std::fprintf(out, "  validated largest over the points: %s\n", figures.c_str());
    }
  }
  if (!s.model_figures.empty()) {
    std::fprintf(out, "  checks   ");
    const char* sep = " ";
    for (const auto& [name, value] : s.model_figures) {
      std::fprintf(out, "%s%s %.3g", sep, name.c_str(), value);
      sep = ", ";
    }
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "  total     %.3g s (setup %.3g s, writing %.3g s)", s.total_seconds,
               s.setup_seconds, s.write_seconds);
  print_figures(c, s, SummaryLine::total, ", ", out);
  std::fprintf(out, "\n");
  std::fprintf(out, "  results   %s  (mor info %s)\n", s.results.string().c_str(),
               s.results.string().c_str());
  if (!plots_dir.empty()) std::fprintf(out, "  figures   %s/\n", plots_dir.string().c_str());
  std::fflush(out);
}

void print_dry_run(const ExperimentConfig& c, std::FILE* out) {
  std::fprintf(out, "%s\n", c.toml.c_str());
  const double memory_mib = physical_memory_mib();
  std::fprintf(out,
               "# %s: valid. Model %s of size %lld; reduction %s.\n"
               "# Estimates (rough, one core): about %.3g s, about %.0f MiB of memory (this "
               "machine: %.0f MiB).\n"
               "# Results would go to %s.\n",
               c.source.c_str(), std::string(c.model->kind()).c_str(),
               static_cast<long long>(c.model_size()), std::string(c.reduction->name()).c_str(),
               estimate_run_seconds(c), estimate_run_mib(c), memory_mib, c.output.string().c_str());
  if (const auto p = estimate_parametric(c)) print_parametric_estimate(c, *p, out);
  std::fflush(out);
}

}  // namespace mor::experiments
