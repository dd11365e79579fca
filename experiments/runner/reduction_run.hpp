// SPDX-License-Identifier: GPL-3.0-or-later
// The reduction half of an experiment run: the linear reduced model and its records in the
// results file (the analysis of it is the registered measures', experiments/runner/measure.hpp).
// Used by run_experiment (experiment.cpp); the layout is documented in README.md.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/balanced_truncation.hpp"
#include "reduction/parametric_lti.hpp"
#include "src/io/record.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

/// Offline wall-clock seconds per stage, in the order run ("gramians_s", "snapshots_s", ...).
using StageTimes = std::vector<std::pair<std::string, double>>;

/// The state an iteration or a solve of a method ended in, with its reason: IRKA's iteration
/// ("converged", "max_iterations", ...), differential balancing's SDPs, ECSW's NNLS.
struct MethodStatus {
  /// What it is the status of: "" for the method's own iteration, else a stage
  /// ("controllability", "ecsw"); its attributes are then <name>_status and <name>_message.
  std::string name;
  std::string status;
  std::optional<std::string> message;  ///< the reason in words, if the method gives one
};

/// What a reduction method reports of one reduction, typed (Ceres' Solve + Summary): the order,
/// the spectra its order rule reads, its a priori bound, the statuses of its iterations with
/// their reasons, the wall time of every stage, and its own records (its effective keys, its
/// diagnostics, the reduced matrices, the bases if stored). A method returns it with its
/// reduced model and records nothing while it computes; write_reduction is the one function
/// that writes it (into a results file in a run, into memory for the Python module), so a
/// method that fails midway leaves no partial /reduction behind.
struct ReductionSummary {
  /// An empty summary of `method`, its own records started (/reduction with attribute method).
  explicit ReductionSummary(std::string method_name = "");

  std::string method;
  Index r = 0;  ///< the main reduced model's order
  /// Offline wall time, all stages, and per stage in the order run.
  double seconds = 0;
  StageTimes stages;
  /// max Re lambda(A_r) of a linear reduced model (< 0: asymptotically stable), if computed.
  std::optional<double> spectral_abscissa;
  /// The method's a priori bound on ||G - G_r||_Hinf (BT: 2 sum_{i>r} sigma_i) and whether every
  /// discarded sigma_i entered it (a low-rank Gramian's spectrum may be cut short).
  std::optional<double> error_bound;
  bool bound_is_complete = true;
  /// The spectra a method's order rule reads and a researcher plots (Hankel singular values,
  /// POD singular values, ...), each at its results-layout path (layout::kReductionHsv, ...).
  std::vector<std::pair<std::string, Vector>> spectra;
  std::vector<MethodStatus> statuses;
  /// The method's own records under /reduction (written by the helpers of this header and
  /// KeyRecorder, as into a results file).
  io::Record details;

  /// The spectrum at `path`, or nullptr.
  const Vector* spectrum(const std::string& path) const;
};

/// Writes s under /reduction of out: the method's own records, then the typed fields as
/// attributes (r, seconds, every stage's seconds, spectral_abscissa, error_bound and
/// bound_is_complete, each status) and the spectra as datasets, at results_layout's paths.
/// @throws as out's functions (IoError where /reduction's objects already exist).
void write_reduction(io::RecordSink& out, const ReductionSummary& s);

/// A reduced model ready to simulate (second-order form, see src/systems/dense_model.hpp) and
/// to analyse (first-order dense operator of the same transfer function).
struct ReducedModel {
  DenseSecondOrderSystem second_order;
  std::unique_ptr<DenseLtiOperator> first_order;
  /// The method's a priori bound on ||G - G_r||_Hinf (BT: 2 sum_{i>r} sigma_i) if every
  /// discarded sigma_i entered it, for the analysis; < 0: none.
  double error_bound = -1;
  /// ||G||_H2 of the full model if the reduction computed it (BT: ||C Z_c||_F); < 0: not known.
  double h2_full = -1;
  /// Reduced models of further orders from the same nested basis (pod's
  /// reduction.compare_orders), ascending in r, main's order not repeated: simulated too, for
  /// the output error against r (/error_vs_r).
  std::vector<std::pair<Index, DenseSecondOrderSystem>> others;
  /// What the analysis reuses from the reduction (BT): a more accurate model of G with its Hinf
  /// bound, and the controllability LR-ADI's C Z_c with the shifts of its steps (see
  /// FrequencyAnalysisOptions); null / empty when the method has none.
  std::unique_ptr<DenseLtiOperator> reference;
  double reference_bound = -1;
  Matrix CZc;
  std::vector<Complex> adi_shifts;
  double adi_residual = -1;
  /// What the method reports of the reduction (written by write_reduction).
  ReductionSummary summary;
  /// The projection bases of a method that projects (bt, irka, sobt, pod): G_r = (W^T E V,
  /// W^T A V, W^T B, C V) with W empty meaning W = V; in the coordinates of the positions q of
  /// the second-order system if bases_of_positions, else of the states of the first-order form
  /// FullModel::lti_operator() reduces (x, or [q; v]). A parametric reduction's local bases
  /// (experiments/runner/parametric_linear.hpp); reduce_step drops them otherwise.
  Matrix V, W;
  bool bases_of_positions = false;
  /// How much column i of V and W matters (balanced truncation: sqrt(sigma_i / sigma_1)), for
  /// the global basis's compression; empty: all alike.
  Vector basis_weights;
  /// With [parameters]: the parametric reduced model this one is the center's model of.
  std::shared_ptr<const ParametricLtiModel> parametric;
  Matrix training_points;     ///< k x p, with parametric
  Index selected_points = 0;  ///< sampling = "greedy": the points it reduced locally at
  std::string greedy_note;    ///< how the greedy stopped, and its indicator's correlation
};

/// Writes the Gramian diagnostics of a balanced truncation into /reduction (method, ranks,
/// residuals, and the low-rank runs' histories and shifts).
void record_gramians(io::RecordSink& out, const GramianDiagnostics& g);

/// /reduction/reduced of a first-order reduced model E_r x' = A_r x + B_r u, y = C_r x + D_r u.
void record_reduced_first_order(io::RecordSink& out, const Matrix& E, const Matrix& A,
                                const Matrix& B, const Matrix& C, const Matrix& D);
/// /reduction/reduced of a second-order reduced model (its M, D, K, B, Cp, Cv).
template <class S>
void record_reduced_second_order(io::RecordSink& out, const S& s) {
  for (const auto& [name, X] : {std::pair<const char*, const Matrix*>{"M", &s.M},
                                {"D", &s.D},
                                {"K", &s.K},
                                {"B", &s.B},
                                {"Cp", &s.Cp},
                                {"Cv", &s.Cv}})
    out.write_matrix(layout::child(layout::kReductionReduced, name), *X);
}
/// /reduction/affine/<role>_<i>: the reduced affine terms of one operator, each with its
/// coefficient's attributes scale and factors (the parameter names of `domain` it multiplies).
void record_affine_terms(io::RecordSink& out, const std::string& role,
                         const AffineOperator<Matrix>& op, const ParameterDomain& domain);

/// One iteration of a greedy over training points (the POD-greedy, projection_run.cpp; the
/// linear methods', parametric_linear.cpp): the point it selected (a row of the training set),
/// the indicator that selected it, and the true relative error there of the reduced model before
/// it (and, for the POD-greedy, of the enriched model its estimate compares with); NaN where
/// unknown (the first point, the nearest to the center).
struct GreedyStep {
  Index iteration = 0, point = 0;
  double indicator = 0, true_error = 0, enriched_error = 0;
};

struct GreedyRun {
  std::vector<GreedyStep> steps;
  std::string stop;  ///< why it stopped
  double correlation = std::numeric_limits<double>::quiet_NaN();
  bool enriched = true;  ///< the steps have an enriched_error (the POD-greedy)
};

/// The Pearson correlation of log10 indicator and log10 true error over the steps where both
/// are finite and positive; NaN for fewer than 3 such steps or no spread.
double log_correlation(const std::vector<GreedyStep>& steps);

/// /reduction/greedy (iteration, point, indicator, true_error and, if g.enriched,
/// enriched_error; `description` says what they are) and /reduction's greedy_selected,
/// greedy_stop and greedy_indicator_error_correlation.
void record_greedy(io::RecordSink& out, const GreedyRun& g, const std::string& description);

/// /reduction/V and /reduction/W, if `store` (the store_bases key).
void record_bases(io::RecordSink& out, bool store, const Matrix& V, const Matrix& W);

/// How the analysis computes norms: dense up to dense_limit states, LR-ADI beyond.
struct NormOptions {
  Index dense_limit = 1500;
  AdiOptions adi;
};

}  // namespace mor::experiments
