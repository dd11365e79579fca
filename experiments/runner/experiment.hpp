// SPDX-License-Identifier: GPL-3.0-or-later
// The runner of one experiment (config.hpp): builds the model, reduces it, simulates full and
// reduced, runs the model's own analysis, and streams everything into one HDF5 file committed
// atomically. The results layout is experiments/runner/results_layout.hpp.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/config.hpp"
#include "src/integrators/integrate.hpp"

namespace mor::io {
class ResultsWriter;
}

namespace mor::experiments {

struct RunSummary;

struct RunOptions {
  bool progress = false;     ///< progress line on stderr
  std::string command_line;  ///< recorded as provenance
  /// Polled every step; when it turns true the run throws Interrupted and writes nothing.
  const std::atomic<bool>* stop_requested = nullptr;
  /// Called as the run enters a stage ("reduction", "reduced simulation", "full simulation",
  /// "analysis", "writing"; fraction 0) and during the full simulation (fraction in [0, 1]).
  std::function<void(const std::string& stage, double fraction)> report_stage;
  /// Called with the open results file and the finished summary just before it is committed
  /// (renamed into place): what it writes is part of the atomic file.
  std::function<void(io::ResultsWriter&, const RunSummary&)> before_commit;
};

struct RunSummary {
  std::filesystem::path results;
  IntegrationStats stats;
  IntegrationStats reduced_stats;  ///< the reduced model's run (reduction.method != none)
  Index reduced_order = 0;
  double reduction_seconds = 0;  ///< Gramians and projection
  /// The figures of the measures that ran (experiments/runner/measure.hpp), by name, e.g.
  /// ("output_error", ||y - y_r||_2 / ||y||_2 over all output samples), ("state_error",
  /// ||q - V q_r|| / ||q||, projections), ("h2_error", ||G - G_r||_H2 / ||G||_H2),
  /// ("hinf_error", ||G - G_r||_Hinf); a norm that could not be computed has none.
  /// figure_or(figures, name, -1) reads one.
  std::vector<std::pair<std::string, double>> figures;
  Index snapshots = 0, outputs = 0;
  double setup_seconds = 0, write_seconds = 0, total_seconds = 0;
  double build_seconds = 0;  ///< the chain and its workspace
  Index deim_samples = 0;    ///< m of the main reduced model (0 without DEIM)
  Index ecsw_elements = 0;   ///< k of the main reduced model (0 without ECSW), of n_elements
  Index n_elements = 0;
  Index ecsw_snapshot_stride = 1;  ///< ECSW trained on every k-th snapshot (memory limit)
  /// Offline wall-clock seconds per stage of the reduction, in the order run, e.g.
  /// ("gramians_s", ..), ("projection_s", ..) for BT; ("snapshots_s", ..), ("pod_s", ..) for POD.
  std::vector<std::pair<std::string, double>> offline_stages;
  /// "" unless a linear method reduced a nonlinear model: then the state its linearisation is
  /// about (FullModel::linearisation()), and the errors compare with the nonlinear model.
  std::string linearisation;
  /// The model's own analysis (FullModel::analyse), e.g. ("energy_balance_error", ..).
  std::vector<std::pair<std::string, double>> model_figures;
  /// With [parameters]: the parametric reduced model at the validation points (/validation).
  struct Validation {
    Index training_points = 0, points = 0;
    Index selected_points = 0;  ///< sampling = "greedy": the points it ran the full model at
    std::string greedy_note;    ///< how the greedy stopped, and its indicator's correlation
    double max_error = 0, median_error = 0;                        ///< relative L2 output errors
    double full_step_s = 0, reduced_step_s = 0, evaluation_s = 0;  ///< medians
    /// The largest value of each figure over the points (linear methods: hinf_error, ...).
    std::vector<std::pair<std::string, double>> max_figures;
  };
  std::optional<Validation> validation;
};

/// Builds the model, simulates it and writes the results file (under a temporary name,
/// renamed when complete: a failed run leaves no file behind).
/// @throws InvalidArgument, NumericalError, IoError as the parts below it.
RunSummary run_experiment(const ExperimentConfig& config, const RunOptions& options = {});

/// Human-readable summary of a results file (provenance, configuration, datasets, timings).
/// @throws IoError for a missing, unreadable or foreign file.
void print_results_info(const std::filesystem::path& results, std::ostream& out);

/// What `mor info` prints for a results file, read in this process: its layout checked
/// (check_results_layout), then a sweep's table (print_sweep_info) or a run's summary
/// (print_results_info). `mor info` calls it in a child process (io::read_contained), since
/// HDF5 1.10 can crash or loop on a damaged file.
/// @throws IoError for a missing, unreadable, foreign or damaged file.
void print_info(const std::filesystem::path& results, std::ostream& out);

/// The root attributes of every results file: program, version, git commit, time, host,
/// command line, the experiment's name, description, source and effective configuration.
void record_provenance(io::ResultsWriter& out, const std::string& name,
                       const std::string& description, const std::string& source,
                       const std::string& toml, const std::string& command_line);

/// Peak resident memory of this process in MiB (VmHWM), 0 if unknown.
double peak_rss_mib();

/// This machine's host name ("unknown" if the system does not say).
std::string host_name();

}  // namespace mor::experiments
