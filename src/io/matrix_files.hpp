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
// file is complete: a failed write leaves no new file and any previous file untouched. matio and
// CHOLMOD do not report failed writes (matio ignores fwrite's result, so a full disk gave a 0-byte
// file; CHOLMOD's failed fprintf reads "invalid input"): they write into memory (a memfd), which
// is then copied to the temporary with every write, the fsync and the close checked, so a full
// disk is "No space left on device" naming the file. MAT v7.3 goes through HDF5, which cannot
// open a memfd by name but reports failed writes: it writes the temporary, which is then fsync'ed
// and read back. The copy polls the stop flag (src/core/interrupt.hpp), matio's writing checks
// it per variable and CHOLMOD's FILE fails its writes once it is set (CHOLMOD stops at a failed
// write). A set of files (stage_*) is renamed only once all are complete.
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
/// Whether name is a MATLAB variable name: a letter, then letters, digits or '_', at most 63.
bool is_variable_name(const std::string& name);

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

/// Files written completely to temporaries "<file>.tmp-<pid>-<k>" next to their final names
/// (each fsync'ed, open and flock'ed until committed) and not yet in place. Removes the
/// temporaries unless commit() or release() was called. Move-only.
class StagedFiles {
 public:
  StagedFiles() = default;
  StagedFiles(StagedFiles&& other) noexcept;
  StagedFiles& operator=(StagedFiles&& other) noexcept;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles();

  /// Takes over temporaries written by another process (release() there, which has exited or
  /// will not touch them again): committed or removed as if staged here.
  static StagedFiles adopt(
      const std::vector<std::pair<std::filesystem::path, std::filesystem::path>>& pairs);

  /// The final names, in order.
  std::vector<std::filesystem::path> files() const;
  /// Renames every temporary to its final name (atomically replacing each), in order, and returns
  /// files(). Only a rename failing after others succeeded (or the process killed between them)
  /// can leave part of a set new: the one window, a few system calls wide.
  /// @throws IoError naming both names; the temporaries not yet renamed are removed.
  std::vector<std::filesystem::path> commit();
  /// Leaves the temporaries in place for another process to commit; returns (temporary, final)
  /// pairs.
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> release();

  struct Entry {
    std::filesystem::path temporary, file;
    int fd = -1;  ///< the temporary, open and flock'ed (-1 once closed)
  };
  /// Internal: adds a created temporary (taking over fd).
  Entry& add(Entry entry);

 private:
  void discard() noexcept;
  std::vector<Entry> entries_;
};

/// The size of a 2-D variable from its header alone (no data is read); nullopt when the header
/// cannot tell (absent, damaged, not 2-D: read_mat_variable then names the problem).
std::optional<DeclaredShape> mat_variable_shape(const std::filesystem::path& file,
                                                const std::string& name);

/// Writes vars into one MAT file (replacing it atomically), sparse values as sparse variables
/// and dense ones as double arrays.
/// @throws InvalidArgument for an invalid or repeated name, or sizes beyond the format's 32-bit
///         indices; IoError if the file cannot be written (naming it and the reason, e.g. "No
///         space left on device"); Interrupted if a stop was requested meanwhile.
void write_mat(const std::filesystem::path& file, const std::vector<NamedMatrix>& vars,
               MatVersion version = MatVersion::v5);
/// write_mat to a temporary only. `header` (at most 116 characters, "MATLAB 5.0 MAT-file, ..."
/// or "MATLAB 7.3 MAT-file, ..." by convention) is the text of the file's header; empty: matio's.
StagedFiles stage_mat(const std::filesystem::path& file, const std::vector<NamedMatrix>& vars,
                      MatVersion version, const std::string& header = {});
/// The text of a MAT file's header (v5 and v7.3: the first 116 bytes, trailing blanks and NULs
/// removed); empty if the file is shorter or not a MAT v5/v7.3 file.
std::string mat_header_text(const std::filesystem::path& file);

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
/// The files of write_matrix_market_files written to temporaries only. A non-empty `comment` (one
/// line) is written as "%<comment>" right after each file's banner.
StagedFiles stage_matrix_market_files(
    const std::vector<std::pair<std::filesystem::path, MatrixValue>>& files,
    const std::string& comment = {});

// ---------------------------------------------------------------------------------------------
// Temporaries of killed writers

/// Removes "<file>.tmp-<pid>-<k>" next to file whose process is gone (in this PID namespace) and
/// which nobody holds flock'ed: what a writer killed by a signal left. Errors are ignored.
/// Returns how many were removed.
int remove_dead_temporaries(const std::filesystem::path& file) noexcept;

}  // namespace mor::io
