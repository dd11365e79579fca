// SPDX-License-Identifier: GPL-3.0-or-later
// What `mor run` prints when a run ends: a short block a researcher reads in ten seconds (the
// model, the full and the reduced run, the offline cost, the errors, where the files are).
#pragma once

#include <cstdio>
#include <filesystem>

#include "experiments/runner/experiment.hpp"

namespace mor::experiments {

/// Writes the summary of a finished run to `out`. plots_dir: where the figures go (empty: no
/// figures).
void print_run_summary(const ExperimentConfig& c, const RunSummary& s,
                       const std::filesystem::path& plots_dir, std::FILE* out);

/// `mor run --dry-run`: the resolved configuration as TOML (every default filled in), then the
/// model's size and the rough time and memory estimates (experiments/runner/estimates.hpp)
/// against this machine's memory; with [parameters], a line each for the training's runs and
/// time, its memory, and the validation's runs, time and memory (estimate_parametric).
void print_dry_run(const ExperimentConfig& c, std::FILE* out);

}  // namespace mor::experiments
