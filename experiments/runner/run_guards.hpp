// SPDX-License-Identifier: GPL-3.0-or-later
// Guards of the `mor` program, checked before anything runs or is printed, so that bad input
// ends with one line naming the problem (exit 2) instead of a run that cannot succeed, a
// replaced input file, or a table printed from a damaged file: the files named on the command
// line, the model type, the output path, the memory a run needs, and the layout of a results
// file. Plus the clean-up of what killed runs leave behind. docs/hardening.md lists the fault
// classes and where each is caught.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace mor::io {
class ResultsReader;
}

namespace mor::experiments {

struct ExperimentConfig;
struct SweepConfig;

/// Refuses a file named on the command line that exists but is not a regular file (a
/// directory, a FIFO): `what` names its role ("experiment file"). A missing file is left to the
/// reader, which names it.
/// @throws InvalidArgument "<what> '<file>' is a directory, not a regular file".
void require_regular_file(const std::filesystem::path& file, std::string_view what);

/// Refuses a model.type (after the overrides) that is neither a registered model kind nor a
/// multibody model, naming the nearest known one, before the tables of another kind are judged
/// (model.type = "pendulumm" would otherwise read as a chain with an unknown table [linear]).
/// TOML errors and a missing or non-string type are left to the loaders.
/// @throws InvalidArgument "<file>:<line>: unknown model.type '<type>'; did you mean ...".
void require_known_model_type(const std::filesystem::path& file,
                              const std::vector<std::string>& overrides);

/// Refuses an empty output name given on the command line (-o "").
/// @throws InvalidArgument naming the option.
void require_nonempty_output(bool given, const std::string& output, std::string_view option);

/// The smallest hard memory limit in MiB (0 if unknown), the budget of one run: 90% of the
/// physical memory, RLIMIT_AS (less what is mapped) or the memory cgroup's limit
/// (src/core/memory.hpp).
double run_memory_budget_mib();
/// Refuses, before anything is allocated, a run whose memory estimate (estimate_run_mib, the
/// estimate `mor sweep` guards its points with) exceeds the hard limit; returns a warning line
/// (empty if none) when it exceeds the memory available now (MemAvailable). kept_mib: what the
/// front end keeps in memory besides (Python's samples), added to the estimate.
/// @throws InvalidArgument naming N, the method, the estimate, the limit and which limit it is.
std::string check_run_memory(const ExperimentConfig& c, double kept_mib = 0.0);
/// The same for building the model alone (`mor export` of an experiment file).
std::string check_model_memory(const ExperimentConfig& c);

/// Checks the layout of a results file before `mor info` prints it: a run's or multibody run's
/// groups and datasets (present, of the right kind, numeric, rows that agree), a sweep's root
/// attributes, /table (every column of points_total rows) and /fits (columns of one length).
/// @throws IoError "results file '<file>' is damaged: <object> ..." naming the first missing or
///         wrong object.
void check_results_layout(const io::ResultsReader& r);

/// Removes what killed or interrupted sweeps left in c.points_dir: the worker log of every point
/// whose results file is complete (a log only explains a failure) and empty logs. Errors are
/// ignored.
void remove_point_leftovers(const SweepConfig& c) noexcept;

/// One line for a std::filesystem error: "cannot <operation> '<path>': <reason>".
std::string describe(const std::filesystem::filesystem_error& e);

}  // namespace mor::experiments
