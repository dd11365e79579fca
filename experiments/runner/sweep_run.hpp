// SPDX-License-Identifier: GPL-3.0-or-later
// Running a sweep: every point in a worker process of its own (`mor sweep <file> --worker <key>`),
// so that a point's peak memory is its own, a failing point cannot take the sweep down, and
// points run in parallel on the machine's cores. Under `mpirun -np K` (Open MPI) rank 0 hands
// out the points, largest estimated cost first, to the ranks' free slots (its own included);
// each point's results file reaches rank 0 (over MPI when the ranks are on different hosts), and
// rank 0 writes the merged file. A point whose stored file matches its configuration is not run
// again, so an interrupted sweep resumes where it stopped.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "experiments/runner/sweep.hpp"

namespace mor::experiments {

struct SweepRunOptions {
  /// Points running at once in this process; 0: the cores, divided among the ranks on this host
  /// under mpirun.
  int jobs = 0;
  bool progress = false;  ///< a redrawn progress line on stderr (else a line per finished point)
  bool quiet = false;     ///< nothing but errors
  bool restart = false;   ///< run every point again, ignoring stored ones
  std::string command_line;
  /// How to start a worker: the program and the arguments before "--worker <key>" (the sweep
  /// file and the overrides, so that the worker expands the same grid).
  std::filesystem::path program;
  std::vector<std::string> worker_arguments;
  const std::atomic<bool>* stop_requested = nullptr;
};

struct SweepRunSummary {
  Index points = 0;
  Index stored = 0;  ///< complete before this run (skipped)
  Index ran = 0;     ///< completed in this run
  Index failed = 0;
  bool interrupted = false;
  bool merged = false;  ///< this process wrote the merged file (rank 0)
  int ranks = 1, jobs = 1;
  double seconds = 0;
};

/// Runs the points of c that are not stored yet and writes the merged results file.
/// Initialises MPI when started by mpirun (Open MPI's or PMIx's environment variables), and
/// finalises it before returning.
/// @throws InvalidArgument for a point above the memory budget (before anything runs), IoError
///         if the points directory is locked by another sweep or a file cannot be written.
SweepRunSummary run_sweep(const SweepConfig& c, const SweepRunOptions& options);

/// Writes progress records of a worker to a file descriptor: one line "stage<TAB>fraction" per
/// report; the parent shows them in its progress line.
std::function<void(const std::string& stage, double fraction)> stage_reporter(int fd);

}  // namespace mor::experiments
