// SPDX-License-Identifier: GPL-3.0-or-later
// `mor export`: models out of mor, for MATLAB, SciPy, pyMOR and M.E.S.S. users.
//  - from a results file: the reduced model (E, A, B, C, D of first-order BT, or M, D, K, B,
//    Cp, Cv of second-order BT), the projection bases V, W when they were stored, and the
//    (Hankel) singular values hsv, sv;
//  - from an experiment file: its full-order model (the chain at any N, a model file in another
//    format), so that other tools can read it.
// Formats: a MATLAB .mat file (v5, which scipy.io.loadmat reads; or v7.3) holding one variable
// per matrix, or MatrixMarket files PATH.<name>.mtx, one per matrix.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mor::experiments {

enum class ExportFormat { mat, mat73, mtx };
/// "mat", "mat73", "mtx". @throws InvalidArgument naming the value.
ExportFormat parse_export_format(const std::string& name);

/// Writes the reduced model of a results file. Returns the files written.
/// @throws IoError for a missing or foreign results file; InvalidArgument if it holds no reduced
///         linear model (reduction.method = "none"), naming what it holds.
std::vector<std::filesystem::path> export_results(const std::filesystem::path& results,
                                                  ExportFormat format,
                                                  const std::filesystem::path& out);

/// Writes the full-order model of an experiment file (overrides as for mor run).
/// @throws InvalidArgument for a model without an LTI form (the nonlinear chain) and as
///         load_experiment.
std::vector<std::filesystem::path> export_experiment_model(
    const std::filesystem::path& experiment, const std::vector<std::string>& overrides,
    ExportFormat format, const std::filesystem::path& out);

}  // namespace mor::experiments
