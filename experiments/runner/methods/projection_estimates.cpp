// SPDX-License-Identifier: GPL-3.0-or-later
// The training of a parametric projection ([parameters], docs/methods/parametric.md) estimated
// before it runs: its full runs, the greedy's reduced runs, the incremental SVD's updates and
// the memory of the snapshots' compression (projection_run.cpp: SnapshotCompression).
#include <algorithm>
#include <cmath>

#include "experiments/runner/estimates.hpp"
#include "experiments/runner/methods/projection.hpp"

namespace mor::experiments {

namespace {

/// Snapshots an IncrementalSvd buffers between updates (its default block).
constexpr double kSvdBlock = 256.0;
/// Seconds of one incremental-SVD update per n (c + block)^2: 38 updates of 10^5 x 376 took
/// about 140 s (docs/methods/parametric.md, N = 10^5); a dense POD of n x c likewise.
constexpr double kSvdSecondsPerUnit = 2.6e-10;
/// The working set of one update besides the held U S and buffer: [U S, B] copied by dgesdd and
/// its U, about 1.5 n (c + block) doubles (peaks of 179 MiB at N = 10^4, 1099 MiB at 10^5).
constexpr double kSvdWorkingSets = 1.5;
/// Seconds per multiply-add of the greedy's sampled residual (|S| x r operators, memory-bound).
constexpr double kResidualSecondsPerFma = 0.5e-9;

double svd_update_seconds(double rows, double columns) {
  return kSvdSecondsPerUnit * rows * (columns + kSvdBlock) * (columns + kSvdBlock);
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

  // Time: the full runs, the incremental SVD's updates (one per 256 snapshots, and one per
  // greedy iteration folding its partial block in, with the POD of U S that follows), the
  // reduced runs with the sampled residual every training_stride-th step, the final PODs.
  const double snapshots = static_cast<double>(e.full_runs) * per_run;
  double seconds = static_cast<double>(e.full_runs) * full_seconds;
  const double qc = static_cast<double>(e.state_columns), gc = static_cast<double>(e.force_columns);
  const double q_update = e.state_columns > 0 ? svd_update_seconds(n, qc) : 0.0;
  const double g_update = e.force_columns > 0 ? svd_update_seconds(force_rows, gc) : 0.0;
  seconds += std::ceil(snapshots * state_fields / kSvdBlock) * q_update +
             std::ceil(snapshots / kSvdBlock) * g_update;
  seconds += sweeps * 2.0 * (q_update + g_update) + (q_update + g_update);
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

  // Memory: each incremental SVD's U S and buffer, one update's working set, the two models
  // built besides the run's own (the projections' at the center, each training point's).
  const double q_set = e.state_columns > 0 ? 8.0 * n * (qc + kSvdBlock) : 0.0;
  const double g_set = e.force_columns > 0 ? 8.0 * force_rows * (gc + kSvdBlock) : 0.0;
  double bytes = q_set + g_set + kSvdWorkingSets * std::max(q_set, g_set);
  if (ecsw) {
    // ECSW trains on the positions of every run, kept whole (grown by half when full), and
    // its training matrix, subsampled to stay under its limit.
    bytes += 1.5 * 8.0 * n * snapshots;
    bytes += std::min(static_cast<double>(EcswOptions{}.memory_limit),
                      ecsw_matrix_bytes(std::max<Index>(order(), 1), static_cast<Index>(snapshots),
                                        c.model->nonlinear_elements()));
  }
  const bool implicit_scheme = c.integrator.scheme != Scheme::rk4;
  bytes += 2.0 * (400.0 * n + (implicit_scheme ? c.model->factor_mib() * 1024.0 * 1024.0 : 0.0));
  e.bytes = bytes;
  return e;
}

}  // namespace mor::experiments
