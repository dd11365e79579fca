// SPDX-License-Identifier: GPL-3.0-or-later
// The reduction half of an experiment run on a nonlinear second-order model by projection
// (the chain, a network file, the lattice: any kind whose full model offers the snapshot-method
// seam of experiments/runner/model_kind.hpp):
//  - reduction.method = "pod": training runs of the full model on the [[training]] inputs (and
//    snapshots read from earlier results files), POD of the position snapshots, Galerkin
//    projection (W = V);
//  - reduction.method = "empirical_bt": position balancing by empirical Gramians
//    (reduction/empirical_gramians.hpp), Petrov-Galerkin projection with the balancing bases;
// both with the nonlinear force hyper-reduced by DEIM / Q-DEIM from the training runs' snapshots
// of the nodal force (reduction.deim_sampling = "nodes") or of the element forces ("elements"),
// or by ECSW's weighted elements trained on the reduced position snapshots
// (reduction.nonlinear = "ecsw", reduction/ecsw.hpp), or reduced exactly, or evaluated in full.
// reduction.compare_orders adds further reduced models from the same nested bases, for the output
// error against r. Used by run_experiment (experiment.cpp); the HDF5 layout is documented in
// README.md.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "reduction/projected_model.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

class FullModel;

/// One projected model: V (n x r), W, and the DEIM samples m.
struct ProjectedVariant {
  Index r = 0;
  Index m = 0;                     ///< DEIM samples (0 without DEIM)
  Index ecsw_elements = 0;         ///< ECSW: the weighted elements k (0 without ECSW)
  Index n_elements = 0;            ///< ECSW: the elements m_e they were chosen from
  Index ecsw_snapshot_stride = 1;  ///< ECSW: every k-th training snapshot (C's memory limit)
  std::unique_ptr<ProjectedModel> model;
};

struct ProjectionReduction {
  ProjectedVariant main;  ///< at reduction.order (or the order the energy / tolerance gave)
  /// The other orders of reduction.compare_orders, ascending (main's order not repeated).
  std::vector<ProjectedVariant> others;
  Index training_snapshots = 0;  ///< columns of the training snapshot matrix (0 if none)
  /// Offline wall-clock seconds per stage, in the order run ("snapshots_s", "pod_s", ...).
  std::vector<std::pair<std::string, double>> stages;
  double seconds = 0;  ///< all stages
};

/// Reduces `model` as red says (POD or empirical balancing; training runs of c.model) and
/// writes /reduction (method, r, m, singular values, the DEIM indices and error constant, the
/// offline cost per stage, optionally V and W).
/// @throws InvalidArgument for unusable training data (no snapshots, another n, an order above
///         the snapshot or Gramian rank); NumericalError if a training or Gramian run diverges;
///         Interrupted.
ProjectionReduction reduce_by_projection(const ExperimentConfig& c,
                                         const ChainProjectionOptions& red, const FullModel& model,
                                         io::RecordSink& out, const std::atomic<bool>* stop);

/// POD of a linear model that has no projection seam (model files, the linearised multibody
/// benchmarks): snapshots of the state x (first order; of q, and of v if red.pod_snapshots has
/// "v", for a second-order model) from the [[training]] runs of `model` and red's training
/// files, the POD basis V (order or energy), and the Galerkin projection (reduction/galerkin.hpp)
/// of `full` (first order: E, A, B, C, D) or of second_order (M, D, K, B, Cp, Cv): an LTI
/// reduced model of order r = the columns of V. Writes /reduction (method, r, the POD record,
/// the reduced matrices, the training counts and stage times, V if red.store_bases).
/// @throws InvalidArgument for unusable training data (no snapshots, another n, an order above
///         the snapshot rank); NumericalError if a training run diverges; Interrupted.
ReducedModel reduce_linear_by_pod(const ExperimentConfig& c, const ChainProjectionOptions& red,
                                  const FullModel& model, LtiOperator& full,
                                  const SecondOrderSystem* second_order, io::RecordSink& out,
                                  const std::atomic<bool>* stop);

}  // namespace mor::experiments
