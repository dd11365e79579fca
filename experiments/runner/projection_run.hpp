// SPDX-License-Identifier: GPL-3.0-or-later
// The reduction half of an experiment run on a nonlinear second-order model by projection
// (a network file, the lattice, the chain: any kind whose full model offers the snapshot-method
// seam of experiments/runner/model_kind.hpp). A method supplies its bases (ProjectionBasisMethod):
//  - reduction.method = "pod" (methods/pod.cpp): POD of the training runs' position snapshots,
//    Galerkin projection (W = V);
//  - reduction.method = "empirical_bt" (methods/empirical_bt.cpp): position balancing by
//    empirical Gramians (reduction/empirical_gramians.hpp), Petrov-Galerkin projection with the
//    balancing bases;
// reduce_by_projection does the rest for either: training runs of the full model on the
// [[training]] inputs (and snapshots read from earlier results files), the nonlinear force
// hyper-reduced by DEIM / Q-DEIM from the training runs' snapshots of the nodal force
// (reduction.deim_sampling = "nodes") or of the element forces ("elements"), or by ECSW's
// weighted elements trained on the reduced position snapshots (reduction.nonlinear = "ecsw",
// reduction/ecsw.hpp), or reduced exactly, or evaluated in full; the projection; the record.
// reduction.compare_orders adds further reduced models from the same nested bases, for the output
// error against r. Used by run_experiment (experiment.cpp); the HDF5 layout is documented in
// README.md.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/parameters.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "reduction/deim.hpp"
#include "reduction/parametric_model.hpp"
#include "reduction/pod.hpp"
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
  /// With [parameters]: the parametric reduced model of main's order; main is then the model at
  /// the center of the domain (ExperimentConfig::run_model).
  std::shared_ptr<const ParametricProjectedModel> parametric;
  /// With [parameters]: the training points (k x p, the domain's order); with sampling =
  /// "greedy" how many of them it selected (0: every one ran) and how it stopped.
  Matrix training_points;
  Index selected_points = 0;
  std::string greedy_note;
  /// The other orders of reduction.compare_orders, ascending (main's order not repeated).
  std::vector<ProjectedVariant> others;
  Index training_snapshots = 0;  ///< columns of the training snapshot matrix (0 if none)
  /// What the method reports of the reduction (written by write_reduction).
  ReductionSummary summary;
};

/// What the projection methods share (POD, methods/pod.cpp; empirical balancing,
/// methods/empirical_bt.cpp): the training data, the hyper-reduction of the nonlinear force, the
/// compared orders and what to store. Each method declares the keys it takes.
struct ProjectionTrainingOptions {
  PodMethod pod_method = PodMethod::automatic;  ///< of the snapshots (and of a subspace)
  /// deim, ecsw (hyper-reduced), tensor (exact, a cubic stencil's), full (O(n))
  NonlinearTreatment nonlinear = NonlinearTreatment::deim;
  DeimMethod deim_method = DeimMethod::qdeim;
  Index deim_order = 0;  ///< m interpolation points; 0 chooses 2 r
  /// nodes (rows of G^T phi) or elements (rows of phi)
  DeimSampling deim_sampling = DeimSampling::nodes;
  double ecsw_tolerance = 1e-6;  ///< tau of ECSW's NNLS, in (0, 1)
  Index training_stride = 10;    ///< steps between training snapshots
  /// Results files whose /snapshots/p (every row a snapshot of the positions) are training
  /// data too, besides the [[training]] runs (relative to the experiment file).
  std::vector<std::filesystem::path> training_files;
  /// Further orders r whose reduced models (from the same nested bases) are simulated too, for
  /// the output error against r (/error_vs_r).
  std::vector<Index> compare_orders;
  bool store_bases = false;  ///< write V and W (n x r each) to the results file
  /// With [parameters]: the training points (experiments/runner/parameters.hpp).
  ParametricTraining parametric;

  /// The largest of compare_orders (0 if none): the bases need at least that many columns.
  Index compare_max() const;
};

/// The snapshots POD's basis is computed from (reduction.pod_snapshots).
enum class PodSnapshotField {
  p,  ///< positions q
  v,  ///< velocities, side by side with the positions: one basis V for q
  x,  ///< the state of a first-order model
};

/// Method "pod" (methods/pod.cpp): POD-Galerkin from training snapshots.
struct PodReductionOptions {
  Index order = 0;      ///< r; or
  double energy = 0.0;  ///< captured snapshot energy in (0, 1]
  /// The snapshots of the basis: positions and optionally velocities (a second-order model,
  /// the reduced model stays second order), or the state x (a first-order model).
  std::vector<PodSnapshotField> pod_snapshots = {PodSnapshotField::p};
  ProjectionTrainingOptions training;
};

/// Method "empirical_bt" (methods/empirical_bt.cpp): position balancing by empirical Gramians.
struct EmpiricalBtOptions {
  Index order = 0;         ///< r; or
  double tolerance = 0.0;  ///< 2 sum_{i>r} sigma_i <= tolerance (a heuristic)
  std::vector<double> amplitudes = {0.25, 0.5, 1.0};  ///< impulse and initial-state sizes c_k
  Index subspace_order = 0;                           ///< d, the position subspace; or
  double subspace_energy = 0.0;                       ///< its captured energy (default 1 - 1e-8)
  double gramian_horizon = 0.0;  ///< s of every free response; 0: the simulation's horizon
  ProjectionTrainingOptions training;
};

/// The bases a projection method computes: V (n x R) and W (n x R; empty: Galerkin, W = V),
/// R >= every order wanted, nested (the leading r columns are the bases of order r); r the main
/// order.
struct ProjectionBases {
  Matrix V, W;
  Index r = 0;
};

/// What differs between the projection methods: the bases. reduce_by_projection does the rest
/// (training runs, hyper-reduction, projection, the record).
class ProjectionBasisMethod {
 public:
  virtual ~ProjectionBasisMethod() = default;
  /// reduction.method, as recorded ("pod", "empirical_bt").
  virtual std::string_view name() const = 0;
  /// The snapshots of the state the bases are computed from (then the training runs collect
  /// them, whatever the nonlinear treatment); none: the method computes its bases otherwise.
  virtual std::vector<PodSnapshotField> state_snapshots() const = 0;
  /// The bases of `model`, at least min_columns wide, from Q (n x k snapshots of the fields
  /// state_snapshots names, columns of velocities after those of positions; empty if none). Adds
  /// the method's records, spectra and stages to `summary`.
  /// @throws InvalidArgument for an order the data do not support; NumericalError; Interrupted.
  virtual ProjectionBases bases(const ExperimentConfig& c, const FullModel& model, Matrix Q,
                                Index min_columns, ReductionSummary& summary,
                                const std::atomic<bool>* stop) const = 0;
};

/// Reduces `model` with the bases `method` computes, trained and hyper-reduced as `training`
/// says; its summary holds what /reduction records (method, r, m, singular values, the DEIM
/// indices and error constant, the offline cost per stage, optionally V and W).
/// @throws InvalidArgument for unusable training data (no snapshots, another n, an order above
///         the snapshot or Gramian rank); NumericalError if a training or Gramian run diverges;
///         Interrupted.
ProjectionReduction reduce_by_projection(const ExperimentConfig& c,
                                         const ProjectionTrainingOptions& training,
                                         const ProjectionBasisMethod& method,
                                         const FullModel& model, const std::atomic<bool>* stop);

/// The POD basis of the snapshots Q as `o` asks (order or energy; at least min_columns columns,
/// nested), with its record in `summary`: what was asked, the method used, the snapshot fields
/// ("x": a first-order model's state), the energies and every singular value computed.
/// @throws InvalidArgument for an order above the snapshots' rank.
PodResult pod_basis_and_record(const PodReductionOptions& o, const Matrix& Q, Index min_columns,
                               bool first_order, ReductionSummary& summary);

/// POD of a linear model that has no projection seam (model files, the linearised multibody
/// benchmarks): snapshots of the state x (first order; of q, and of v if o.pod_snapshots has
/// "v", for a second-order model) from the [[training]] runs of `model` and the training
/// files, the POD basis V (order or energy), and the Galerkin projection (reduction/galerkin.hpp)
/// of `full` (first order: E, A, B, C, D) or of second_order (M, D, K, B, Cp, Cv): an LTI
/// reduced model of order r = the columns of V. Its summary holds what /reduction records
/// (method, r, the POD record, the reduced matrices, the training counts and stage times, V if
/// store_bases).
/// @throws InvalidArgument for unusable training data (no snapshots, another n, an order above
///         the snapshot rank); NumericalError if a training run diverges; Interrupted.
ReducedModel reduce_linear_by_pod(const ExperimentConfig& c, const PodReductionOptions& o,
                                  const FullModel& model, LtiOperator& full,
                                  const SecondOrderSystem* second_order,
                                  const std::atomic<bool>* stop);

}  // namespace mor::experiments
