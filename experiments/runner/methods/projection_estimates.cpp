// SPDX-License-Identifier: GPL-3.0-or-later
// The training of a parametric projection ([parameters], docs/methods/parametric.md) estimated
// before it runs: its full runs, the greedy's reduced runs, the incremental SVD's updates and
// the memory of the snapshots' compression (projection_run.cpp: SnapshotCompression).
#include <algorithm>
#include <cmath>

#include "experiments/runner/estimates.hpp"
#include "experiments/runner/methods/projection.hpp"
#include "reduction/incremental_svd.hpp"

namespace mor::experiments {

namespace {

/// Seconds per floating-point operation of an incremental-SVD update (products with U, the QR
/// of the new block, [U Q] U_K: memory-bound dgemm on this machine).
constexpr double kSvdSecondsPerFlop = 1e-10;
/// Seconds per multiply-add of the greedy's sampled residual (|S| x r operators, memory-bound).
constexpr double kResidualSecondsPerFma = 0.5e-9;

/// One Brand update (reduction/incremental_svd.hpp) of c kept columns by a block of b: U^T B and
/// U P twice (8 n c b), the QR of n x b (4 n b^2), [U Q] U_K (2 n (c + b) c).
double svd_update_seconds(double rows, double c, double b) {
  return kSvdSecondsPerFlop * rows * (8.0 * c * b + 4.0 * b * b + 2.0 * (c + b) * c);
}

/// A run of `snapshots` compressed by its own incremental SVD (blocks of b, c columns once it
/// has them), then merged into the training's (one update by a block of c).
double run_svd_seconds(double rows, double c, double snapshots) {
  const double b = static_cast<double>(IncrementalSvd::automatic_block(static_cast<Index>(rows)));
  double seconds = 0, held = 0;
  for (double left = snapshots; left > 0; left -= b) {
    const double block = std::min(b, left);
    seconds += svd_update_seconds(rows, held, block);
    held = std::min(c, held + block);
  }
  return seconds + svd_update_seconds(rows, c, std::min(c, snapshots));
}

}  // namespace

std::optional<ParametricTrainingEstimate> ProjectionMethod::estimate_parametric_training(
    const ExperimentConfig& c, double full_seconds) const {
  if (c.parameters.empty() || !parametric_for(*c.model)) return std::nullopt;
  const ProjectionTrainingOptions& t = training();
  const ParametricTraining& pt = t.parametric;
  const Index N = c.model_size();
  const double n = static_cast<double>(N);
  const double inputs = static_cast<double>(c.training.size());
  const double steps = static_cast<double>(step_count(c.integrator));
  const double per_run =
      std::floor(steps / static_cast<double>(std::max<Index>(1, t.training_stride))) + 1.0;
  const bool nonlinear = !c.model->is_linear();
  const NonlinearTreatment treatment = nonlinear ? t.nonlinear : NonlinearTreatment::full;
  const bool deim = treatment == NonlinearTreatment::deim;
  const bool ecsw = treatment == NonlinearTreatment::ecsw;
  const std::vector<PodSnapshotField> fields = state_snapshots();
  const double state_fields = static_cast<double>(std::max<std::size_t>(fields.size(), 1));

  ParametricTrainingEstimate e;
  e.points = pt.points();
  // The compression's columns, as reduce_by_projection plans them: four times the order (100
  // when energy chooses it), twice the DEIM points (deim_order, or twice that order), >= 100.
  const Index r_hint = order() > 0 ? order() : Index{100};
  const Index m_hint = t.deim_order > 0 ? t.deim_order : 2 * r_hint;
  e.state_columns = fields.empty() ? 0 : std::max<Index>(4 * r_hint, 100);
  e.force_columns = deim ? std::max<Index>(2 * m_hint, 100) : 0;
  const double force_rows = t.deim_sampling == DeimSampling::elements
                                ? static_cast<double>(c.model->nonlinear_elements())
                                : n;

  // Full runs: every point, or the greedy's most; the greedy's reduced runs: at each iteration
  // every unselected point (its indicator), and at each selected point after the first (the
  // true error of the model before it).
  const bool greedy = e.greedy = pt.sampling == ParametricSampling::greedy;
  const Index k = pt.points();
  const Index most = greedy && pt.greedy_max_points > 0 ? std::min(pt.greedy_max_points, k) : k;
  double sweeps = 0, candidate_runs = 0;
  if (greedy) {
    for (Index selected = 1; selected < most;
         selected = std::min(most, selected + std::max<Index>(1, pt.greedy_batch))) {
      sweeps += 1;
      candidate_runs += static_cast<double>(k - selected);
    }
    candidate_runs += static_cast<double>(most - 1);
  }
  e.full_runs = static_cast<Index>(static_cast<double>(most) * inputs);
  e.reduced_runs = static_cast<Index>(candidate_runs * inputs);

  // Time: the full runs, each compressed by its own incremental SVDs and merged into the
  // training's (reduction/incremental_svd.hpp), one POD of U S per greedy iteration and at the
  // end, the reduced runs with the sampled residual every training_stride-th step.
  const double snapshots = static_cast<double>(e.full_runs) * per_run;
  double seconds = static_cast<double>(e.full_runs) * full_seconds;
  const double qc = static_cast<double>(e.state_columns), gc = static_cast<double>(e.force_columns);
  const double runs = static_cast<double>(e.full_runs);
  if (e.state_columns > 0) seconds += runs * run_svd_seconds(n, qc, per_run * state_fields);
  if (e.force_columns > 0) seconds += runs * run_svd_seconds(force_rows, gc, per_run);
  const double pod_seconds = (e.state_columns > 0 ? svd_update_seconds(n, 0, qc) : 0.0) +
                             (e.force_columns > 0 ? svd_update_seconds(force_rows, 0, gc) : 0.0);
  seconds += sweeps * 2.0 * pod_seconds + pod_seconds;
  if (greedy) {
    const Index r = std::max<Index>(1, order() > 0 ? order() : 20);
    const double rows = static_cast<double>(std::min<Index>(N, 4 * r + 40));
    const double residual = 5.0 * rows * static_cast<double>(r) * kResidualSecondsPerFma;
    seconds += static_cast<double>(e.reduced_runs) *
               (steps * estimate_reduced_step_seconds(r) + per_run * residual);
  }
  // The method's own work at each training point (empirical_bt's local balancing).
  seconds += static_cast<double>(most) * point_seconds(c, full_seconds);
  e.seconds = seconds;

  // Memory: per snapshot set the training's U (n c) and per run at once its own U and buffer
  // (n (c + b)), or while a run is merged its U S (n c); with several at once, one being merged
  // while the others run: n (2 c + J (c + b)). The models at the center (the projections') and
  // of each run at once.
  const double jobs = static_cast<double>(std::max(1, c.training_jobs));
  e.jobs = std::max(1, c.training_jobs);
  auto set_bytes = [&](double rows, double cols) {
    const double b = static_cast<double>(IncrementalSvd::automatic_block(static_cast<Index>(rows)));
    return 8.0 * rows * (jobs > 1 ? 2.0 * cols + jobs * (cols + b) : 2.0 * cols + b);
  };
  double bytes = (e.state_columns > 0 ? set_bytes(n, qc) : 0.0) +
                 (e.force_columns > 0 ? set_bytes(force_rows, gc) : 0.0);
  if (ecsw) {
    // ECSW trains on the positions of every run, kept whole (grown by half when full), and
    // its training matrix, subsampled to stay under its limit.
    bytes += 1.5 * 8.0 * n * snapshots;
    bytes += std::min(static_cast<double>(EcswOptions{}.memory_limit),
                      ecsw_matrix_bytes(std::max<Index>(order(), 1), static_cast<Index>(snapshots),
                                        c.model->nonlinear_elements()));
  }
  const bool implicit_scheme = c.integrator.scheme != Scheme::rk4;
  bytes += (1.0 + jobs) *
           (400.0 * n + (implicit_scheme ? c.model->factor_mib() * 1024.0 * 1024.0 : 0.0));
  e.bytes = bytes;
  return e;
}

}  // namespace mor::experiments
