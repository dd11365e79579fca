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

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "src/io/matrix_files.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

enum class ExportFormat { mat, mat73, mtx };
/// "mat", "mat73", "mtx". @throws InvalidArgument naming the value.
ExportFormat parse_export_format(const std::string& name);

// Every file of an export is written to a temporary next to it (each write, fsync and close
// checked; a full disk is "No space left on device" naming the file) and renamed into place only
// once all are complete: a failure or a stop request (src/core/interrupt.hpp) before that leaves
// no new file and every earlier file as it was. The renames are the one window (docs/hardening.md).
// Files written by mor export carry a mark (the MAT header text, a MatrixMarket comment line)
// so that only they are replaced: see require_replaceable_by_export.

/// Writes the reduced model of a results file. Returns the files written.
/// The file is read in a child process (io::read_contained, limited to read_time_limit), since
/// HDF5 may crash or loop on a damaged file; the child only reads: it checks every matrix finite
/// (read_results_export) and hands them through the pipe (io::encode_matrices). This process
/// decodes them (a stream cut short or malformed, say by a child that crashed, is a damaged
/// results file), writes the temporaries and renames them: the writing (matio, CHOLMOD's
/// MatrixMarket writer, in time proportional to the data) is under no time limit, and a stop
/// request or a failure leaves nothing new, as for every export.
/// @throws IoError for a missing, damaged or foreign results file (a crash or the time limit of
///         the reader: "damaged results file: '<file>' (...)"), a matrix in it that is not finite
///         (naming the dataset), a file that cannot be written or may not be replaced;
///         InvalidArgument if it holds no reduced linear model (reduction.method = "none"), naming
///         what it holds; Interrupted.
std::vector<std::filesystem::path> export_results(const std::filesystem::path& results,
                                                  ExportFormat format,
                                                  const std::filesystem::path& out,
                                                  std::chrono::milliseconds read_time_limit);
/// What export_results writes, as the child reads it: the reduced matrices in the order their
/// form lists them (E, A, M, D, K, B, C, Cp, Cv), the bases V, W and the values hsv, sv that
/// are stored, each checked finite.
/// @throws IoError, InvalidArgument as export_results.
std::vector<io::NamedMatrix> read_results_export(const std::filesystem::path& results);
/// The shapes of the reduced model a results file stores fit one order r (E, A or M, D, K are
/// r x r, B has r rows, C, Cp, Cv r columns); read from the datasets' dims only. `mor info` and
/// `mor export` both run it, so that a file one calls damaged the other does not pass.
/// @throws IoError "results file '<file>' is damaged: /reduction/reduced/A is 3 x 5, which does
///         not fit a reduced model of order 3".
void check_reduced_model_shapes(const io::ResultsReader& r);

/// Refuses an --out that names no file: empty, or for mtx a prefix without a name of its own
/// ("/tmp/", ".", "..": the files would be the hidden "/tmp/.A.mtx", ...).
/// @throws InvalidArgument naming out and an example prefix.
void require_export_out(const std::filesystem::path& out, ExportFormat format);

/// Writes every file of an export of vars to out to its temporary (nothing is renamed yet; see
/// commit_export). Each final name is checked with require_replaceable_by_export first.
io::StagedFiles stage_export(const std::vector<io::NamedMatrix>& vars, ExportFormat format,
                             const std::filesystem::path& out);

/// Writes the full-order model of an experiment file (overrides as for mor run).
/// @throws InvalidArgument for a model without an LTI form (the nonlinear chain) and as
///         load_experiment.
std::vector<std::filesystem::path> export_experiment_model(
    const std::filesystem::path& experiment, const std::vector<std::string>& overrides,
    ExportFormat format, const std::filesystem::path& out);

/// Stops if a stop was requested (Interrupted), else renames the staged files into place and, for
/// a MatrixMarket set, removes the rest of an earlier set under the same prefix (out.<name>.mtx
/// files an export wrote that this one did not), so that the prefix names one model. Returns
/// the files written.
std::vector<std::filesystem::path> commit_export(io::StagedFiles& staged, ExportFormat format,
                                                 const std::filesystem::path& out);

/// Refuses to let an export replace `file` unless nothing is there or an earlier mor export
/// wrote it in the same format family (a MAT file, v5 or v7.3, whose header text names mor
/// export; a MatrixMarket file with mor export's comment line after the banner): the export's own
/// source, an experiment file, a results file, a model file it reads, a directory or any other
/// file stay. As `mor run -o` refuses anything but a results file (require_replaceable_by_results).
/// @throws IoError "refusing to write '<file>': it is <what>; name another output (--out)".
void require_replaceable_by_export(const std::filesystem::path& file, ExportFormat format);

/// Removes the temporaries that killed exports to out left ("<file>.tmp-<pid>-<k>" of each file
/// of the set, whose process is gone): io::remove_dead_temporaries. Errors are ignored.
void remove_dead_export_temporaries(const std::filesystem::path& out, ExportFormat format) noexcept;

}  // namespace mor::experiments
