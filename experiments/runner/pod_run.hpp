// SPDX-License-Identifier: GPL-3.0-or-later
// The POD half of an experiment run (reduction.method = "pod"): training runs of the full
// nonlinear chain on the [[training]] inputs (and snapshots read from earlier results files),
// POD of the position snapshots, POD + DEIM / Q-DEIM of the nodal cubic-force snapshots, and the
// Galerkin-projected, hyper-reduced ReducedChainModel. Used by run_experiment (experiment.cpp);
// the HDF5 layout is documented in README.md.
#pragma once

#include <atomic>
#include <memory>

#include "experiments/runner/experiment.hpp"
#include "reduction/reduced_chain.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

struct PodReduction {
  std::unique_ptr<ReducedChainModel> model;
  Index r = 0;                   ///< POD order
  Index m = 0;                   ///< DEIM samples (0 without DEIM)
  Index training_snapshots = 0;  ///< columns of the snapshot matrix
  double snapshots_s = 0;        ///< training simulations and reading files
  double pod_s = 0;              ///< POD of the positions
  double deim_s = 0;             ///< POD of the forces and the DEIM selection
  double projection_s = 0;       ///< building the reduced model
  double seconds = 0;            ///< all of the above
};

/// Trains and builds the reduced model as c.reduction says and writes /reduction (method, r,
/// m, the singular values of both snapshot sets, the captured energy, the DEIM indices and
/// error constant, the offline cost per stage, optionally V).
/// @throws InvalidArgument for unusable training data (no snapshots, another N, an order above
///         the snapshot rank); NumericalError if a training run diverges; Interrupted.
PodReduction pod_reduce_and_record(const ExperimentConfig& c, const MassSpringChain& chain,
                                   io::ResultsWriter& out, const std::atomic<bool>* stop);

}  // namespace mor::experiments
