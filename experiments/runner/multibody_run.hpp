// SPDX-License-Identifier: GPL-3.0-or-later
// Experiment files of the multibody benchmarks (models/multibody.hpp: A01 pendulum, A04
// Bricard, A05 flyball governor, Schiehlen robot): one file runs
//  1. the nonlinear benchmark with CVODE (its horizon, its outputs, the energy balance, the
//     constraint residual, CPU time, the accuracy against the exact solution where there is one
//     and against a run at 100x tighter tolerances), with the bodies' points for the animation;
//  2. the linearised model (M, D, K, B, Cp, Cv and its poles) and, from the operating point, the
//     nonlinear and the linear response to the same small input at two amplitudes a and a/2
//     (their difference must shrink like a^2: the ratio is recorded);
//  3. its reduction (balanced truncation, second-order BT, or modal truncation where BT has no
//     Gramians), the full and the reduced linear model integrated the same way (CVODE), and the
//     frequency-domain comparison.
// The format is in README.md ("Multibody experiment files"); examples experiments/a0*.toml.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/method.hpp"
#include "src/integrators/cvode.hpp"

namespace mor::experiments {

struct MultibodyExperimentConfig {
  std::string name = "multibody";
  std::string description;
  std::filesystem::path output;  ///< default results/<name>.h5
  std::string model;             ///< an id of make_multibody_model
  /// [simulation]: the benchmark run (t_end defaults to the benchmark's horizon, method to the
  /// model's preferred one).
  CvodeOptions cvode;
  /// The accuracy check: the same run at rtol, atol / reference_factor (0: none).
  double reference_factor = 100.0;
  /// [linear]: the linear-nonlinear comparison and the reduced model's run.
  bool linear = true;
  InputSpec input;  ///< on every input of the linear model
  double linear_t_end = 10.0;
  double linear_output_dt = 0.01;
  /// [reduction] method: none, bt, sobt, modal.
  /// A registered linear method (none, bt, sobt, modal), read through the registry.
  std::shared_ptr<const ReductionMethod> reduction;
  AnalysisSpec analysis;
  /// [output]
  bool plots = true;
  std::string animation = "gif";  ///< gif or none
  double animation_fps = 20.0;
  std::string source, toml;
};

/// True if the experiment file (overrides applied) names a multibody model in model.type.
/// @throws IoError if it cannot be read; InvalidArgument if it is not valid TOML.
bool is_multibody_experiment(const std::filesystem::path& file,
                             const std::vector<std::string>& overrides = {});

/// Strict parsing, as load_experiment. @throws InvalidArgument naming file, line, key and value.
MultibodyExperimentConfig load_multibody_experiment(const std::filesystem::path& file,
                                                    const std::vector<std::string>& overrides = {});
MultibodyExperimentConfig parse_multibody_experiment(
    const std::string& text, const std::string& source, const std::filesystem::path& base_dir,
    const std::vector<std::string>& overrides = {});

/// The key reference of multibody experiment files (`mor keys --file multibody`).
std::vector<KeyDoc> multibody_key_reference();

struct MultibodyRunSummary {
  std::filesystem::path results;
  std::string title;
  CvodeStats cvode;
  double cpu_seconds = 0;            ///< the benchmark run alone (no recording), process CPU time
  double wall_seconds = 0;           ///< the same, wall clock
  double exact_error = -1;           ///< max |y - y_exact| over the outputs, -1 if no exact one
  double reference_difference = -1;  ///< max |y - y_reference| (tighter run), -1 if none
  double energy_initial = 0;
  double energy_balance_error = 0;  ///< max |E - E0 - W|, J
  double constraint_residual = 0;
  double linear_difference = -1;  ///< relative, nonlinear against linear at amplitude a
  double linear_ratio = -1;       ///< that difference at a over the one at a/2 (about 2)
  Index reduced_order = 0, linear_order = 0;
  double reduced_error = -1;  ///< relative output error, reduced against full linear
  double h2_error_relative = -1, hinf_error = -1;
  double total_seconds = 0;
};

/// Runs the experiment and writes the results file (temporary name, renamed when complete).
/// @throws InvalidArgument, NumericalError, IoError.
/// before_commit is called with the open results file and the finished summary just before the
/// file is committed (what it writes is part of the atomic file; sweeps record their row so).
MultibodyRunSummary run_multibody_experiment(
    const MultibodyExperimentConfig& config, const RunOptions& options = {},
    const std::function<void(io::ResultsWriter&, const MultibodyRunSummary&)>& before_commit = {});

}  // namespace mor::experiments
