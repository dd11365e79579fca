// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeps: one TOML file names a grid of experiments (studies, each an experiment file with
// overrides, crossed with grid axes such as model.N, model.path or reduction.order); every point
// is an ordinary experiment run (experiment.hpp) whose results file lands in <output stem>.points/
// and is merged, with a table of all points and power-law fits of the costs against N, into one
// results file. The format and the layout are documented in README.md ("Sweeps").
//
// This file holds what does not depend on how points are scheduled: reading the sweep file,
// expanding the grid, cost and memory estimates, the per-point record, the merged file and its
// summary. sweep_run.hpp runs the points (processes, MPI).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/keys.hpp"

namespace mor::io {
class ResultsReader;
class ResultsWriter;
}  // namespace mor::io

namespace mor::experiments {

/// One point of the grid: an experiment configuration and where its results go.
struct SweepPoint {
  Index index = 0;    ///< position in grid order (the table's row)
  std::string key;    ///< unique, file-name safe: "<study>_N<N>[_<axis><value>...]"
  std::string study;  ///< the [[study]] it belongs to
  /// The study and its grid axes other than model.N ("bt, reduction.order=20"): the curve the
  /// point lies on when costs are plotted against N.
  std::string series;
  /// (axis key, value as written in TOML) for every grid axis, model.N first.
  std::vector<std::pair<std::string, std::string>> axes;
  /// name = key, output = the point's file, no plots.
  ExperimentConfig config;
  Index size = 0;      ///< the model's size: n (states or coordinates), N for the chain
  std::string method;  ///< the reduction method's name
  /// The effective experiment as TOML with the name and output left neutral: two points are the
  /// same experiment iff these are equal, and a stored point is reused iff it matches.
  std::string configuration;
  double cost_seconds = 0;  ///< rough wall-time estimate on one core (scheduling, time left)
  double memory_mib = 0;    ///< rough peak-memory estimate
};

struct SweepConfig {
  std::string name = "sweep";
  std::string description;
  std::filesystem::path output;      ///< the merged results file; default results/<name>.h5
  std::filesystem::path points_dir;  ///< one results file per point: <output without .h5>.points
  std::vector<double> tolerances = {1e-4, 1e-6};  ///< r needed for these (relative), per point
  double fit_min_N = 1000;       ///< power laws are fitted over the points with N >= this
  double memory_budget_mib = 0;  ///< per point; 0: 90% of physical memory / parallel jobs
  bool plots = true;
  std::vector<SweepPoint> points;  ///< grid order: studies as written, then axes, N slowest
  std::string source;              ///< the sweep file
  std::string toml;                ///< the sweep file with overrides applied
};

/// The key reference of sweep files (`mor keys --file sweep`).
std::vector<KeyDoc> sweep_key_reference();

/// Reads a sweep file and expands its grid. Overrides "sweep.key=value" change the [sweep]
/// table; any other "table.key=value" is applied to every point after its study and grid.
/// @throws InvalidArgument naming the file, the study and the point for: unknown keys, an empty
///         grid or axis, no study, an experiment file that is not a chain experiment, a point
///         whose experiment is invalid (e.g. an unknown reduction.method), and two points that
///         are the same experiment; IoError if a file cannot be read.
SweepConfig load_sweep(const std::filesystem::path& file,
                       const std::vector<std::string>& overrides = {});
/// The same from TOML text; `source` names it in messages, `base_dir` resolves relative paths.
SweepConfig parse_sweep(const std::string& text, const std::string& source,
                        const std::filesystem::path& base_dir,
                        const std::vector<std::string>& overrides = {});

/// The memory budget of one point in MiB: c.memory_budget_mib, or 90% of the physical memory
/// divided by the number of points running at once.
double point_memory_budget_mib(const SweepConfig& c, int concurrent_points);
/// Refuses, before anything runs, a sweep with a point whose memory estimate exceeds the budget.
/// @throws InvalidArgument naming the point, its estimate and the budget.
void check_memory_budget(const SweepConfig& c, int concurrent_points);

/// The stored file of a point, if it is complete and matches the point's configuration.
std::optional<std::filesystem::path> completed_point_file(const SweepConfig& c,
                                                          const SweepPoint& p);

/// A point file of the sweep's own folder that no run could replace (not HDF5: empty, cut at
/// its first bytes, or another file put there; HDF5 but not a results file), renamed aside to
/// "<key>.h5.unreadable" (or "-2", "-3", ... if taken) so that the point runs again and nothing
/// is lost. Returns the one-line notice naming both files and the size of the one set aside, or
/// "" if there was nothing to set aside (missing, a results file, or a file HDF5 cannot open, which
/// the run replaces).
/// @throws IoError if another program holds the file open for writing; filesystem_error if the
///         rename fails.
std::string set_aside_unreadable_point_file(const SweepConfig& c, const SweepPoint& p);

/// Runs one point (in this process) and writes its results file with the /sweep_point record
/// (key, study, series, axes, configuration, and the row of the table). Used by the worker
/// processes of `mor sweep`.
void run_sweep_point(const SweepConfig& c, const SweepPoint& p, const RunOptions& options);

/// What happened to a point in this or an earlier run, for the merged table.
struct PointOutcome {
  enum class Status { pending, done, failed } status = Status::pending;
  std::string message;  ///< failed: the error
};

/// Writes the merged results file (temporary name, renamed): provenance, /table (a row per point
/// in grid order), /fits (a power law per series and cost column), /points/<key> (a copy of each
/// completed point's file). outcomes[i] belongs to c.points[i]; a point with a stored completed
/// file is "done" whatever its outcome says.
/// @throws IoError if a file cannot be read or written.
void write_sweep_results(const SweepConfig& c, const std::vector<PointOutcome>& outcomes,
                         const std::string& command_line);

/// A power law cost ~ coefficient * N^exponent, fitted by least squares in log-log.
struct PowerLawFit {
  std::string series, column;
  double exponent = 0, coefficient = 0, N_min = 0, N_max = 0;
  Index points = 0;
};
/// Least-squares fit of log(cost) = log(coefficient) + exponent log(N) over the pairs with
/// N >= N_min_fit and cost > 0 (finite). Needs two distinct N; otherwise std::nullopt.
std::optional<PowerLawFit> fit_power_law(const std::vector<double>& N,
                                         const std::vector<double>& cost, double N_min_fit);

/// Prints a sweep results file: its status, the table and the fits (used by `mor info`).
/// @throws IoError if the file is not a sweep results file.
void print_sweep_info(const io::ResultsReader& r, std::ostream& out);
/// Whether a results file is a sweep results file (root attribute kind = "sweep").
bool is_sweep_results(const io::ResultsReader& r);

}  // namespace mor::experiments
