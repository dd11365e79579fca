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

double estimate_run_seconds(const ExperimentConfig& c) {
  const double N = static_cast<double>(c.model_size());
  const double steps = static_cast<double>(step_count(c.integrator));
  const bool explicit_scheme = c.integrator.scheme == Scheme::rk4;
  const double full = steps * (explicit_scheme ? 6e-9 * N : c.model->implicit_step_seconds());
  double reduction = c.reduction ? c.reduction->estimate_seconds(c, full) : 0.0;
  if (c.reduction && c.analysis &&
      c.reduction->family_for(*c.model) == ReductionMethod::Family::linear)
    reduction += c.analysis->estimate_seconds(AppliesTo::linear_reduced, N);
  return 0.05 + full + reduction;
}

double estimate_run_mib(const ExperimentConfig& c) {
  const double N = static_cast<double>(c.model_size());
  double bytes = 400.0 * N + 50e6 + io::kNetworkRunBytesPerElement * extra_elements(c);
  if (c.reduction) bytes += c.reduction->estimate_bytes(c);
  const bool implicit_scheme = c.integrator.scheme != Scheme::rk4;
  return bytes / (1024.0 * 1024.0) + (implicit_scheme ? c.model->factor_mib() : 0.0) +
         c.model->own_runs_mib();
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
