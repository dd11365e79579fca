// SPDX-License-Identifier: GPL-3.0-or-later
// The layout of results files, declared once: every HDF5 group and dataset the runners write
// and `mor info`, `mor export`, the sweep merge and training-file reads open, by name. The
// Python reader (python/mor_results.py) takes its table PATHS from python/mor_layout.py, which
// is `mor layout --python` (test python_layout); docs/results-layout.md is
// `mor layout --markdown` (test docs_layout). No runner spells a path literally.
//
// A sweep's merged file holds each point's whole results file under /points/<key>, so every
// path of a run also exists there relative to that group.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

namespace mor::experiments::layout {

// X(identifier, name, path, kind, what it holds); kind: group (attributes and children),
// dataset, or table (a group of same-length 1-D column datasets).
#define MOR_RESULTS_LAYOUT(X)                                                                      \
  X(kRoot, "root", "/", "group",                                                                   \
    "attributes: format, format_version, program, version, git_commit, created, host, "            \
    "command_line, name, description, source, configuration (the effective TOML)")                 \
  X(kModel, "model", "/model", "group", "attributes: the model's keys, sizes and structure")       \
  X(kSimulation, "simulation", "/simulation", "group",                                             \
    "attributes: integrator, solver, dt, t0, t_end, steps, Newton settings, strides, state")       \
  X(kInput, "input", "/input", "group", "attributes: type and description of the test input")      \
  X(kTimings, "timings", "/timings", "group",                                                      \
    "attributes: seconds per stage, ns per step per state, counts, peak memory")                   \
  X(kOutputs, "outputs", "/outputs", "group", "the full model's outputs")                          \
  X(kOutputsT, "outputs.t", "/outputs/t", "dataset", "n_out x 1: output times (s)")                \
  X(kOutputsU, "outputs.u", "/outputs/u", "dataset", "n_out x m: the input at those times")        \
  X(kOutputsY, "outputs.y", "/outputs/y", "dataset", "n_out x p: the outputs y")                   \
  X(kSnapshots, "snapshots", "/snapshots", "group", "state snapshots (output.snapshot_stride)")    \
  X(kSnapshotsT, "snapshots.t", "/snapshots/t", "dataset", "n_snap x 1: snapshot times (s)")       \
  X(kSnapshotsEnergy, "snapshots.energy", "/snapshots/energy", "dataset",                          \
    "n_snap x 1: stored energy (models that define one)")                                          \
  X(kSnapshotsP, "snapshots.p", "/snapshots/p", "dataset", "n_snap x N: positions q")              \
  X(kSnapshotsV, "snapshots.v", "/snapshots/v", "dataset", "n_snap x N: velocities q'")            \
  X(kSnapshotsX, "snapshots.x", "/snapshots/x", "dataset",                                         \
    "n_snap x n: the state of a first-order model")                                                \
  X(kReduction, "reduction", "/reduction", "group",                                                \
    "attributes: method, its keys as run, r, bound, seconds per offline stage")                    \
  X(kReductionReduced, "reduction.reduced", "/reduction/reduced", "group",                         \
    "the reduced matrices: E, A, B, C, D (first order) or M, D, K, B, Cp, Cv (second order)")      \
  X(kReductionV, "reduction.V", "/reduction/V", "dataset", "n x r: the right basis V")             \
  X(kReductionW, "reduction.W", "/reduction/W", "dataset", "n x r: the left basis W")              \
  X(kReductionHsv, "reduction.hsv", "/reduction/hsv", "dataset",                                   \
    "Hankel singular values (bt), position HSVs (sobt)")                                           \
  X(kReductionSv, "reduction.sv", "/reduction/sv", "dataset",                                      \
    "sobt: the singular values the variant truncates")                                             \
  X(kReductionPodSv, "reduction.pod_singular_values", "/reduction/pod_singular_values", "dataset", \
    "pod: singular values of the snapshot matrix")                                                 \
  X(kReductionForceSv, "reduction.force_singular_values", "/reduction/force_singular_values",      \
    "dataset", "DEIM: singular values of the force snapshots")                                     \
  X(kReductionEmpiricalSv, "reduction.empirical_singular_values",                                  \
    "/reduction/empirical_singular_values", "dataset", "empirical_bt: balanced singular values")   \
  X(kReductionSubspaceSv, "reduction.subspace_singular_values",                                    \
    "/reduction/subspace_singular_values", "dataset",                                              \
    "empirical_bt: singular values of the position subspace")                                      \
  X(kReductionDeimMasses, "reduction.deim_masses", "/reduction/deim_masses", "dataset",            \
    "DEIM: the 1-based masses whose forces are evaluated")                                         \
  X(kReductionEcswElements, "reduction.ecsw_elements", "/reduction/ecsw_elements", "dataset",      \
    "ECSW: the 1-based elements (rows of G) of positive weight, ascending")                        \
  X(kReductionEcswWeights, "reduction.ecsw_weights", "/reduction/ecsw_weights", "dataset",         \
    "ECSW: their weights w_e > 0")                                                                 \
  X(kReductionDeimBasis, "reduction.deim_basis", "/reduction/deim_basis", "dataset",               \
    "DEIM, with store_bases: the force basis U (a row per mass or element, m columns)")            \
  X(kReductionOmega, "reduction.omega", "/reduction/omega", "dataset",                             \
    "modal, second-order models: undamped natural frequencies of every mode (rad/s)")              \
  X(kReductionEigenvalues, "reduction.eigenvalues", "/reduction/eigenvalues", "dataset",           \
    "modal, first-order models: the eigenvalues lambda_i of every mode, slowest first (1/s)")      \
  X(kReductionDominance, "reduction.dominance", "/reduction/dominance", "dataset",                 \
    "modal: dominance (static modal gain) of every mode, in the order of omega or eigenvalues")    \
  X(kReductionShifts, "reduction.shifts", "/reduction/shifts", "dataset",                          \
    "irka: the final shifts, r x 2 (real, imaginary parts)")                                       \
  X(kReductionHistory, "reduction.history", "/reduction/history", "table",                         \
    "irka: per iteration shift_change, model_change, interpolation_residual, h2_error, "           \
    "seconds, surrogate_order, surrogate_iterations, shifts_re, shifts_im (and inner_iterations "  \
    "for second order)")                                                                           \
  X(kReductionGdHsv, "reduction.hankel_singular_values", "/reduction/hankel_singular_values",      \
    "dataset", "differential_balancing: generalized differential Hankel singular values")          \
  X(kReductionErrorBound, "reduction.error_bound", "/reduction/error_bound", "dataset",            \
    "differential_balancing: the bound 2 sum_{i>r} sigma_i for every r")                           \
  X(kReductionPositionSv, "reduction.position_singular_values",                                    \
    "/reduction/position_singular_values", "dataset",                                              \
    "differential_balancing: the position values that order its projection")                       \
  X(kReductionControllabilityResiduals, "reduction.controllability_residuals",                     \
    "/reduction/controllability_residuals", "dataset",                                             \
    "differential_balancing: largest eigenvalue of each controllability LMI")                      \
  X(kReductionObservabilityResiduals, "reduction.observability_residuals",                         \
    "/reduction/observability_residuals", "dataset",                                               \
    "differential_balancing: largest eigenvalue of each observability LMI")                        \
  X(kReductionP, "reduction.P", "/reduction/P", "dataset",                                         \
    "differential_balancing: the controllability Gramian P (store_bases)")                         \
  X(kReductionQ, "reduction.Q", "/reduction/Q", "dataset",                                         \
    "differential_balancing: the observability Gramian Q (store_bases)")                           \
  X(kReductionAdiControllability, "reduction.adi_controllability",                                 \
    "/reduction/adi_controllability", "group",                                                     \
    "LR-ADI of the controllability Gramian: attributes, datasets residuals and shifts")            \
  X(kReductionAdiObservability, "reduction.adi_observability", "/reduction/adi_observability",     \
    "group", "LR-ADI of the observability Gramian")                                                \
  X(kReductionRksmControllability, "reduction.rksm_controllability",                               \
    "/reduction/rksm_controllability", "group", "RKSM of the controllability Gramian")             \
  X(kReductionRksmObservability, "reduction.rksm_observability", "/reduction/rksm_observability",  \
    "group", "RKSM of the observability Gramian")                                                  \
  X(kReductionTrainingParameters, "reduction.training_parameters",                                 \
    "/reduction/training_parameters", "dataset",                                                   \
    "with [parameters]: k x p, the training points (columns in /parameters/names' order)")         \
  X(kReductionAffine, "reduction.affine", "/reduction/affine", "group",                            \
    "with [parameters]: the reduced affine terms <role>_<i> of X_r(mu) = sum_i theta_i(mu) "       \
    "<role>_i (roles M, D, K, B, Cp, Cv, or E, A, B, C, Dff for a first-order reduced model), "    \
    "with attributes scale and factors (theta_i = scale times the product of the named "           \
    "parameters, e.g. \"beta*k_l\"), and the force coefficient's (force_scale, force_factors)")    \
  X(kReductionLocalOrders, "reduction.local_orders", "/reduction/local_orders", "dataset",         \
    "linear methods with [parameters]: k, the local model's order at each training point")         \
  X(kReductionLocalErrorBounds, "reduction.local_error_bounds", "/reduction/local_error_bounds",   \
    "dataset",                                                                                     \
    "linear methods with [parameters]: k, each local model's a priori bound (NaN: none)")          \
  X(kReductionGlobalSv, "reduction.global_sv", "/reduction/global_sv", "dataset",                  \
    "linear methods with [parameters]: the singular values of the local bases side by side")       \
  X(kReductionGreedy, "reduction.greedy", "/reduction/greedy", "table",                            \
    "sampling = \"greedy\": per selected point iteration, point, indicator, true_error, "          \
    "enriched_error")                                                                              \
  X(kParameters, "parameters", "/parameters", "group",                                             \
    "with [parameters]: the domain; attribute reference (the run's own point, the center)")        \
  X(kParametersNames, "parameters.names", "/parameters/names", "dataset",                          \
    "p: the parameter names, sorted (the column order of every k x p table)")                      \
  X(kParametersMin, "parameters.min", "/parameters/min", "dataset", "p: the lower bounds")         \
  X(kParametersMax, "parameters.max", "/parameters/max", "dataset", "p: the upper bounds")         \
  X(kParametersLog, "parameters.log", "/parameters/log", "dataset",                                \
    "p: 1 for a log scale, 0 for a linear one")                                                    \
  X(kParametersReference, "parameters.reference", "/parameters/reference", "dataset",              \
    "p: the point of the run's own full and reduced simulations (the center; a sweep point's "     \
    "own)")                                                                                        \
  X(kValidation, "validation", "/validation", "group",                                             \
    "with [parameters]: the parametric reduced model at unseen points on [input]; attributes "     \
    "max and median of output_error, seed")                                                        \
  X(kValidationParameterNames, "validation.parameter_names", "/validation/parameter_names",        \
    "dataset", "p: the parameter names, sorted")                                                   \
  X(kValidationParameters, "validation.parameters", "/validation/parameters", "dataset",           \
    "k x p: the validation points (columns in parameter_names' order)")                            \
  X(kValidationOutputError, "validation.output_error", "/validation/output_error", "dataset",      \
    "k: ||y - y_r||_2 / ||y||_2 over all output samples at each point (as /error relative_l2)")    \
  X(kValidationFullStep, "validation.full_step_s", "/validation/full_step_s", "dataset",           \
    "k: the full model's seconds per step at each point")                                          \
  X(kValidationReducedStep, "validation.reduced_step_s", "/validation/reduced_step_s", "dataset",  \
    "k: the reduced model's seconds per step at each point (its evaluation at the point not "      \
    "included)")                                                                                   \
  X(kValidationEvaluation, "validation.evaluation_s", "/validation/evaluation_s", "dataset",       \
    "k: seconds of the parametric reduced model's evaluation at each point")                       \
  X(kValidationFigures, "validation.figures", "/validation/figures", "group",                      \
    "linear methods: k values per figure of the [analysis] measures at each point (hinf_error, "   \
    "h2_error, ...; NaN where not computed), and with compare_local the local model's: local_r, "  \
    "local_error_bound, local_<figure>")                                                           \
  X(kReduced, "reduced", "/reduced", "group",                                                      \
    "the reduced model's run: attributes r, integration_s (multibody: relative_output_error)")     \
  X(kReducedOutputsY, "reduced.outputs.y", "/reduced/outputs/y", "dataset",                        \
    "n_out x p: reduced outputs y_r at /outputs/t")                                                \
  X(kError, "error", "/error", "group",                                                            \
    "attributes: max_abs, relative_l2 of y - y_r (and state errors of projections)")               \
  X(kErrorY, "error.y", "/error/y", "dataset", "n_out x p: y - y_r")                               \
  X(kErrorVsR, "error_vs_r", "/error_vs_r", "table",                                               \
    "columns r, m, relative_l2, max_abs, reduced_step_s: the error against r")                     \
  X(kAnalysis, "analysis", "/analysis", "group",                                                   \
    "attributes: the figures of the registered measures (mor list measures): H2 and "              \
    "H-infinity norms of full, reduced and error systems, with methods, accuracies, statuses")     \
  X(kAnalysisOmega, "analysis.omega", "/analysis/omega", "dataset",                                \
    "frequencies (rad/s) of the full, reduced and error curves: the fixed grid, or for large "     \
    "models adaptively placed ones (bode_method)")                                                 \
  X(kAnalysisSigmaFull, "analysis.sigma_full", "/analysis/sigma_full", "dataset",                  \
    "sigma_max(G(i omega))")                                                                       \
  X(kAnalysisSigmaReduced, "analysis.sigma_reduced", "/analysis/sigma_reduced", "dataset",         \
    "sigma_max(G_r(i omega))")                                                                     \
  X(kAnalysisSigmaError, "analysis.sigma_error", "/analysis/sigma_error", "dataset",               \
    "sigma_max(G(i omega) - G_r(i omega))")                                                        \
  X(kAnalysisOmegaReduced, "analysis.omega_reduced", "/analysis/omega_reduced", "dataset",         \
    "the fixed logarithmic grid of bode_points frequencies (rad/s)")                               \
  X(kAnalysisSigmaReducedDense, "analysis.sigma_reduced_dense", "/analysis/sigma_reduced_dense",   \
    "dataset", "sigma_max(G_r(i omega_reduced))")                                                  \
  X(kBenchmark, "benchmark", "/benchmark", "group",                                                \
    "multibody: the benchmark run (attributes: CVODE statistics, accuracy)")                       \
  X(kBenchmarkT, "benchmark.t", "/benchmark/t", "dataset", "n_t x 1: times (s)")                   \
  X(kBenchmarkX, "benchmark.x", "/benchmark/x", "dataset", "n_t x n: the state")                   \
  X(kBenchmarkY, "benchmark.y", "/benchmark/y", "dataset", "n_t x p: the outputs")                 \
  X(kBenchmarkEnergy, "benchmark.energy", "/benchmark/energy", "dataset", "n_t x 1: energy E")     \
  X(kBenchmarkEnergyBalance, "benchmark.energy_balance", "/benchmark/energy_balance", "dataset",   \
    "n_t x 1: E - E0 - W (work of the inputs)")                                                    \
  X(kBenchmarkConstraintResidual, "benchmark.constraint_residual",                                 \
    "/benchmark/constraint_residual", "dataset", "n_t x 1: constraint residual (A04)")             \
  X(kBenchmarkYExact, "benchmark.y_exact", "/benchmark/y_exact", "dataset",                        \
    "n_t x p: the closed-form solution (A01)")                                                     \
  X(kAnimation, "animation", "/animation", "group", "multibody: attributes fps, format")           \
  X(kAnimationPoints, "animation.points", "/animation/points", "dataset",                          \
    "n_t x 3 n_points: point positions")                                                           \
  X(kAnimationSegments, "animation.segments", "/animation/segments", "dataset",                    \
    "pairs of 0-based point indices drawn as bars")                                                \
  X(kLinear, "linear", "/linear", "group",                                                         \
    "multibody: the linearisation (attributes) and its matrices M, D, K, B, Cp, Cv")               \
  X(kLinearPolesReal, "linear.poles_real", "/linear/poles_real", "dataset", "Re of the poles")     \
  X(kLinearPolesImag, "linear.poles_imag", "/linear/poles_imag", "dataset", "Im of the poles")     \
  X(kLinearResponseT, "linear.response.t", "/linear/response/t", "dataset",                        \
    "times of the linear model's response")                                                        \
  X(kLinearResponseY, "linear.response.y", "/linear/response/y", "dataset",                        \
    "the linear model's response")                                                                 \
  X(kLinearNonlinearResponseT, "linear.nonlinear_response.t", "/linear/nonlinear_response/t",      \
    "dataset", "times of the nonlinear model's response to the same input")                        \
  X(kLinearNonlinearResponseY, "linear.nonlinear_response.y", "/linear/nonlinear_response/y",      \
    "dataset", "the nonlinear model's response (deviation from the operating point)")              \
  X(kReducedT, "reduced.t", "/reduced/t", "dataset", "multibody: times of the reduced response")   \
  X(kReducedY, "reduced.y", "/reduced/y", "dataset", "multibody: the reduced response")            \
  X(kTable, "table", "/table", "table", "sweep: one 1-D dataset per column, a row per point")      \
  X(kFits, "fits", "/fits", "table",                                                               \
    "sweep: power-law fits, columns series, column, exponent, coefficient, N_min, N_max, points")  \
  X(kPoints, "points", "/points", "group", "sweep: /points/<key> holds the point's results file")  \
  X(kSweepPoint, "sweep_point", "/sweep_point", "group",                                           \
    "sweep point: its row of the table, as attributes")

#define MOR_LAYOUT_CONSTANT(id, name, path, kind, doc) inline const std::string id = path;
MOR_RESULTS_LAYOUT(MOR_LAYOUT_CONSTANT)
#undef MOR_LAYOUT_CONSTANT

/// One entry of the layout.
struct Entry {
  std::string_view name, path, kind, doc;
};

/// Every entry, in declaration order.
std::span<const Entry> entries();

/// path + "/" + child, e.g. child(kReductionReduced, "A") = "/reduction/reduced/A".
std::string child(std::string_view path, std::string_view name);

/// The layout as aligned text (`mor layout`) or as the Markdown of docs/results-layout.md.
void print(bool markdown, std::ostream& out);
/// The layout as the Python module python/mor_layout.py (its dict PATHS: name -> path), which the
/// Python reader python/mor_results.py imports (`mor layout --python`).
void print_python(std::ostream& out);

}  // namespace mor::experiments::layout
