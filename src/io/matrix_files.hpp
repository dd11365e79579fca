// SPDX-License-Identifier: GPL-3.0-or-later
// Named matrices in interchange files: MATLAB .mat (v4, v5 and v7.3, through matio) and
// MatrixMarket (through CHOLMOD's reader and writer). This is the only module that sees matio or
// CHOLMOD's file functions; everything above it sees Eigen matrices.
//
// Errors: IoError when a file is missing, unreadable, foreign, truncated or syntactically broken
// (or cannot be written); InvalidArgument when the file is fine but a variable is absent or of a
// kind a real matrix cannot hold (complex, cell, struct, char, more than 2-D). Every message
// names the file and the variable. Nothing here prints; matio's logging is left uninitialised
// (silent) and HDF5's error printing is switched off on the calling thread.
//
// Writers go through "<file>.tmp-<pid>-<k>" in the same folder, renamed into place only once the
// file is complete: a failed write leaves no new file and any previous file untouched.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "src/core/types.hpp"

namespace mor::io {

/// A matrix read from a file, with how the file stored it.
struct MatrixVariable {
  /// The values; a dense variable becomes sparse with its exact zeros dropped.
  SparseMatrix value;
  /// MAT: the sparse class; MatrixMarket: "coordinate" format.
  bool stored_sparse = false;
  /// MAT class ("double", "single", "logical", "int16", ...) or MatrixMarket field ("real",
  /// "integer", "pattern"), converted to double on reading.
  std::string stored_class;
  /// MatrixMarket "general" coordinate files: entries whose (i, j) appeared before, summed
  /// into it (0 for other files), and the first of them as "(i, j)", for the caller to report.
  Index duplicates_summed = 0;
  std::string first_duplicate;
};

/// The size of a matrix as a file's header declares it, known before its data is read.
struct DeclaredShape {
  Index rows = 0, cols = 0;
  /// Stored entries the header declares (a sparse MAT variable: unknown, -1).
  Index entries = -1;
};

/// A matrix to write under a name: sparse (a MAT sparse variable, a MatrixMarket coordinate
/// file) or dense (a MAT double array, a MatrixMarket array file).
using MatrixValue = std::variant<SparseMatrix, Matrix>;
struct NamedMatrix {
  std::string name;  ///< a MATLAB variable name: a letter, then letters, digits, '_'; <= 63 chars
  MatrixValue value;
};

enum class MatVersion {
  v5,   ///< MATLAB 5 (zlib-compressed variables, as MATLAB's -v7); scipy.io.loadmat reads it
  v73,  ///< MATLAB 7.3 (HDF5); h5py, MATLAB and matio read it
};

// ---------------------------------------------------------------------------------------------
// MATLAB .mat files

/// The names of the variables in a MAT file (v4, v5 or v7.3), in file order.
/// @throws IoError if the file is missing, not a MAT file, or truncated.
std::vector<std::string> mat_variable_names(const std::filesystem::path& file);

/// Reads one 2-D real numeric variable (double; single, integer and logical classes are
/// converted to double exactly). Sparse variables keep their stored pattern.
/// @throws IoError if the file is missing, not a MAT file, truncated or the variable unreadable;
/// @throws InvalidArgument if the variable is absent (the message lists the variables present),
///         complex, of a non-numeric class (cell, struct, char, object, ...) or not 2-D.
MatrixVariable read_mat_variable(const std::filesystem::path& file, const std::string& name);

/// The size of a 2-D variable from its header alone (no data is read); nullopt when the header
/// cannot tell (absent, damaged, not 2-D: read_mat_variable then names the problem).
std::optional<DeclaredShape> mat_variable_shape(const std::filesystem::path& file,
                                                const std::string& name);

/// Writes vars into one MAT file (replacing it atomically), sparse values as sparse variables
/// and dense ones as double arrays.
/// @throws InvalidArgument for an invalid or repeated name, or sizes beyond the format's 32-bit
///         indices; IoError if the file cannot be written.
void write_mat(const std::filesystem::path& file, const std::vector<NamedMatrix>& vars,
               MatVersion version = MatVersion::v5);

// ---------------------------------------------------------------------------------------------
// MatrixMarket files

/// Reads a real MatrixMarket file ("coordinate" or "array"; "real", "integer" or "pattern";
/// "general", "symmetric" or "skew-symmetric"). Symmetric storage comes back as the full matrix;
/// duplicate coordinate entries are summed (as CHOLMOD and scipy do); "pattern" entries are 1.
/// The file is checked strictly first (banner, one entry per line, indices 1-based and in range,
/// symmetric entries on or below the diagonal, exactly the declared number of entries), because
/// CHOLMOD's reader alone would accept a file without banner, switch to 0-based indices when it
/// meets a 0, and ignore trailing entries.
/// @throws IoError naming the file, the line and the problem (or CHOLMOD's status) for a missing
///         or broken file; InvalidArgument for a complex or Hermitian file, or a finite value of
///         magnitude >= 1e308 (CHOLMOD's reader would turn it into Inf).
/// Before anything is allocated, the size the file declares is held against the memory this
/// process may use (src/core/memory.hpp): a 3-line file declaring 10^9 x 10^9 would otherwise
/// have CHOLMOD allocate gigabytes of column pointers. Duplicate coordinate entries are refused
/// in a symmetric or skew-symmetric file (each stands for two) and counted in a general one.
MatrixVariable read_matrix_market_variable(const std::filesystem::path& file);

/// The banner's and size line's declared size, without reading the entries.
/// @throws IoError as read_matrix_market_variable for a missing file or a broken header.
DeclaredShape matrix_market_shape(const std::filesystem::path& file);

/// Rough bytes that reading a matrix of this shape takes at its peak (the library's storage,
/// CSC column pointers and entries, and Eigen's copy); entries -1: the column pointers only.
double read_bytes(const DeclaredShape& shape);
/// read_matrix_market_variable(file).value.
SparseMatrix read_matrix_market(const std::filesystem::path& file);

/// Writes A as a "coordinate" file (CHOLMOD's writer: "symmetric" when A is exactly symmetric,
/// "integer" or "pattern" when its values allow; every value in the shortest form that reads back
/// exactly, up to 19 significant digits). Replaces the file atomically.
/// @throws InvalidArgument if A has a NaN or Inf entry or one of magnitude >= 1e308 (CHOLMOD
///         writes NaN and Inf as +-1e308 and reads magnitudes >= 1e308 as Inf); IoError if the
///         file cannot be written.
void write_matrix_market(const std::filesystem::path& file, const SparseMatrix& A);
/// Writes A as an "array real general" file (column-major), values as above.
void write_matrix_market(const std::filesystem::path& file, const Matrix& A);
/// Writes several files as one step: every file goes to its temporary first, and only when all
/// are complete are they renamed into place, so a failure while writing leaves none of them new
/// or damaged (only a failing rename, after the data is written, can leave a partial set).
void write_matrix_market_files(
    const std::vector<std::pair<std::filesystem::path, MatrixValue>>& files);

}  // namespace mor::io
