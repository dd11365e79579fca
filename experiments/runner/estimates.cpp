// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/estimates.hpp"

#include <unistd.h>

#include <algorithm>

#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "src/io/model_files.hpp"

namespace mor::experiments {

namespace {

/// The 400 bytes per state cover about one nonlinear element per state (the chain's springs, the
/// lattice's); a network file may declare far more elements than coordinates, each counted apart.
double extra_elements(const ExperimentConfig& c) {
  return std::max(0.0, static_cast<double>(c.model->nonlinear_elements()) -
                           static_cast<double>(c.model_size()));
}

}  // namespace

double estimate_full_seconds(const ExperimentConfig& c) {
  const double N = static_cast<double>(c.model_size());
  const double steps = static_cast<double>(step_count(c.integrator));
  const bool explicit_scheme = c.integrator.scheme == Scheme::rk4;
  return steps * (explicit_scheme ? 6e-9 * N : c.model->implicit_step_seconds());
}

double estimate_reduced_step_seconds(Index r) {
  const double rr = static_cast<double>(std::max<Index>(r, 1));
  return 1e-7 + 1.6e-9 * rr * rr;
}

std::optional<ParametricEstimate> estimate_parametric(const ExperimentConfig& c) {
  if (c.parameters.empty() || !c.reduction) return std::nullopt;
  const double full = estimate_full_seconds(c);
  auto training = c.reduction->estimate_parametric_training(c, full);
  const bool linear = c.reduction->family_for(*c.model) == ReductionMethod::Family::linear;
  const double N = static_cast<double>(c.model_size());
  if (!training && linear && c.reduction->parametric_linear() != nullptr) {
    // A linear method: its own reduction at every training point (or at the greedy's most), one
    // after the other; the greedy also evaluates the full transfer function at every point on
    // its grid (one shifted solve each, as a Bode point: 1.3e-7 n s) and the H-infinity error
    // at each selected point (about 100 solves).
    const ParametricLinearKeys& keys = *c.reduction->parametric_linear();
    ParametricTrainingEstimate t;
    t.local = true;
    t.greedy = keys.sampling == ParametricSampling::greedy;
    t.points = keys.points();
    const double reductions = static_cast<double>(keys.local_reductions());
    t.seconds = reductions * c.reduction->estimate_seconds(c, full);
    if (t.greedy)
      t.seconds += 1.3e-7 * N *
                   (static_cast<double>(t.points * keys.greedy_frequencies) + 100.0 * reductions);
    t.bytes = c.reduction->estimate_bytes(c);
    training = t;
  }
  if (!training) return std::nullopt;
  ParametricEstimate e;
  e.training = *training;
  e.validation_points =
      c.validation_points.rows() > 0 ? c.validation_points.rows() : c.validation_samples;
  // Each point: the model built there, its full run and the reduced model's on [input]. The
  // order: the method's, or the 100 columns the compression plans for when energy chooses it.
  const Index r = c.reduction->order() > 0 ? c.reduction->order() : 100;
  const double steps = static_cast<double>(step_count(c.integrator));
  e.validation_seconds =
      static_cast<double>(e.validation_points) * (full + steps * estimate_reduced_step_seconds(r));
  if (linear) {
    // At each point the measures of a linear reduced model, and with compare_local the
    // method's own local model and its measures.
    const double analysis =
        c.analysis ? c.analysis->estimate_seconds(AppliesTo::linear_reduced, N) : 0.0;
    const double local =
        c.validation_compare_local ? c.reduction->estimate_seconds(c, full) + analysis : 0.0;
    e.validation_seconds += static_cast<double>(e.validation_points) * (analysis + local);
  }
  const bool implicit_scheme = c.integrator.scheme != Scheme::rk4;
  e.validation_mib = 400.0 * static_cast<double>(c.model_size()) / (1024.0 * 1024.0) +
                     (implicit_scheme ? c.model->factor_mib() : 0.0);
  return e;
}

double estimate_run_seconds(const ExperimentConfig& c) {
  const double N = static_cast<double>(c.model_size());
  const double full = estimate_full_seconds(c);
  double reduction = c.reduction ? c.reduction->estimate_seconds(c, full) : 0.0;
  if (c.reduction && c.analysis &&
      c.reduction->family_for(*c.model) == ReductionMethod::Family::linear)
    reduction += c.analysis->estimate_seconds(AppliesTo::linear_reduced, N);
  const auto parametric = estimate_parametric(c);
  // A linear method's parametric training: its reduction at every training point.
  if (parametric && parametric->training.local)
    reduction += parametric->training.seconds - c.reduction->estimate_seconds(c, full);
  return 0.05 + full + reduction + (parametric ? parametric->validation_seconds : 0.0);
}

double estimate_run_mib(const ExperimentConfig& c) {
  const double N = static_cast<double>(c.model_size());
  constexpr double kMiB = 1024.0 * 1024.0;
  double bytes = 400.0 * N + 50e6 + io::kNetworkRunBytesPerElement * extra_elements(c);
  // The reduction (with [parameters], its training) and the validation come one after the
  // other: the larger of the two.
  double reduction = c.reduction ? c.reduction->estimate_bytes(c) : 0.0;
  if (const auto parametric = estimate_parametric(c))
    reduction = std::max(reduction, parametric->validation_mib * kMiB);
  bytes += reduction;
  const bool implicit_scheme = c.integrator.scheme != Scheme::rk4;
  return bytes / kMiB + (implicit_scheme ? c.model->factor_mib() : 0.0) + c.model->own_runs_mib();
}

double estimate_model_mib(const ExperimentConfig& c) {
  return (400.0 * static_cast<double>(c.model_size()) + 50e6 +
          io::kNetworkBuildBytesPerElement * extra_elements(c)) /
         (1024.0 * 1024.0);
}

double physical_memory_mib() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / 1048576.0
                               : 0.0;
}

}  // namespace mor::experiments
