// SPDX-License-Identifier: GPL-3.0-or-later
// Results files: HDF5 files with root attributes format = "mor-results", format_version = 1,
// holding groups, dense vectors and matrices, attributes, and appendable row streams (e.g. one
// snapshot per time step). Written through a temporary file that is renamed into place at
// commit(), so a results file under its final name is always complete: a failure (a full disk,
// an HDF5 error) leaves the previous file of that name, or none, and no temporary file.
//
// Layout conventions, so that h5py/NumPy see the same shapes as Eigen:
//  - a Vector of size n is a 1-D dataset (n);
//  - a Matrix A is a 2-D dataset (A.rows(), A.cols()): entry (i, j) is h5py's ds[i, j];
//  - a row stream of width w holding k rows is a 2-D dataset (k, w), float64, chunked;
//  - strings are variable-length UTF-8 (h5py returns str), doubles IEEE float64, integers int64,
//    vector attributes 1-D.
// Paths are HDF5 paths relative to the root ("/a/b" and "a/b" are the same object).
// Not for concurrent use of one writer or reader from several threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "src/core/types.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/output_lock.hpp"
#include "src/io/record.hpp"

namespace mor::io {

/// The format tag and version written to the root of every results file.
inline constexpr const char* kResultsFormat = "mor-results";
inline constexpr std::int64_t kResultsFormatVersion = 1;

class ResultsWriter;

/// An appendable 2-D float64 dataset of shape (rows(), width()) that grows along rows; created
/// and owned by a ResultsWriter. Each append() extends the dataset by one row, so the file always
/// holds exactly the rows appended. Memory use is bounded by the chunk cache (about two row-bands
/// of chunks, see ResultsWriter::open_row_stream), independent of the number of rows.
class RowStream {
 public:
  RowStream(const RowStream&) = delete;
  RowStream& operator=(const RowStream&) = delete;
  ~RowStream();

  /// Appends one row: row[0 .. width()-1].
  /// @throws InvalidArgument if row is null; IoError if HDF5 fails (the writer is then
  ///         discarded, see ResultsWriter) or the writer was committed or discarded.
  void append(const double* row);
  /// Appends one row. @throws InvalidArgument unless row.size() == width(); IoError as above.
  void append(const Eigen::Ref<const Vector>& row);

  /// Rows appended so far.
  Index rows() const noexcept { return rows_; }
  /// Doubles per row, fixed at creation.
  Index width() const noexcept { return width_; }
  /// The dataset's path in the file.
  const std::string& path() const noexcept { return path_; }

 private:
  friend class ResultsWriter;
  RowStream(ResultsWriter& writer, h5::Dataset dataset, std::string path,
            std::filesystem::path file, Index width);
  /// Closes the dataset (flushing cached chunks); afterwards append() throws IoError.
  void close();

  ResultsWriter* writer_;  // the owner, discarded when an append fails; kept current on moves
  h5::Dataset dataset_;
  h5::Dataspace row_space_;  // memory dataspace of one row, reused by every append
  std::string path_;
  std::filesystem::path file_;
  Index width_ = 0;
  Index rows_ = 0;
};

/// Writes one results file. Non-copyable, movable (a moved-from writer is inert).
///
/// Failures: when HDF5 or the file system fails in any call (the disk is full, an HDF5 error),
/// the call discards the writer (closes everything, removes the temporary file) and throws
/// IoError with a one-line message naming final_path() and the reason ("No space left on
/// device"); later calls throw IoError too. A refusal that changes nothing (a path that exists,
/// a missing object, a source that is not a results file, an invalid argument) leaves the writer
/// open. Messages name final_path(), except for the creation of the temporary file.
class ResultsWriter final : public RecordSink {
 public:
  /// Creates the parent directories of final_path and the file "<final_path>.tmp-<pid>"
  /// (truncated if present); the file appears under final_path only at commit(), replacing any
  /// results file there. Writes the root attributes format = "mor-results", format_version = 1
  /// (int64). Temporary files of killed writers of final_path are removed first
  /// (remove_stale_temporaries); directories it created are removed again if the writer is
  /// discarded and they are empty, so that a failed run leaves no trace. The writer claims
  /// final_path for its life (OutputLock: "<final_path>.lock"), joining a claim this process
  /// already holds on it.
  /// @throws IoError naming the path if final_path holds something other than a results file
  ///         (require_replaceable_by_results), if another run is writing it or another program
  ///         holds it open for writing (OutputLock), or if a directory or the file cannot be
  ///         created.
  explicit ResultsWriter(const std::filesystem::path& final_path);
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;
  ResultsWriter(ResultsWriter&& other) noexcept;
  ResultsWriter& operator=(ResultsWriter&& other) noexcept;
  /// Without commit(): closes and removes the temporary file, so no partial results remain.
  ~ResultsWriter();

  /// Creates the group at path and any missing intermediate groups ("/a/b" creates "/a").
  /// No-op if path is already a group.
  /// @throws InvalidArgument if path is empty; IoError if a non-group object is in the way.
  void create_group(const std::string& path) override;

  /// Sets attribute name of the object at object_path ("/" for the root, a group or a dataset),
  /// replacing an existing attribute of that name (whatever its type).
  /// @throws InvalidArgument if name is empty; IoError if the object does not exist.
  void set_attribute(const std::string& object_path, const std::string& name,
                     const AttributeValue& value) override;

  /// Writes v as a 1-D float64 dataset of size v.size(); intermediate groups are created.
  /// @throws IoError if something already exists at path.
  void write_vector(const std::string& path, const Vector& v) override;

  /// Writes A as a 2-D float64 dataset of dims (A.rows(), A.cols()) in HDF5's row-major order
  /// (one transposing copy of A is made). @throws IoError if something already exists at path.
  void write_matrix(const std::string& path, const Matrix& A) override;

  /// Writes v as a 1-D int64 dataset. @throws IoError if something already exists at path.
  void write_integers(const std::string& path, const std::vector<std::int64_t>& v) override;
  /// Writes v as a 1-D dataset of variable-length UTF-8 strings (h5py returns bytes objects;
  /// `.asstr()` gives str). @throws IoError if something already exists at path.
  void write_strings(const std::string& path, const std::vector<std::string>& v) override;
  /// Copies the whole results file `source` (its root attributes, groups and datasets) into the
  /// new group `group` of this file (H5Ocopy: datasets keep their chunking and filters).
  /// @throws IoError naming source if it is not a readable results file, or if group exists.
  void copy_file_into(const std::filesystem::path& source, const std::string& group);
  /// Creates an empty row stream (0, width) at path, owned by the writer; the reference stays
  /// valid until the writer is destroyed (after commit() its append() throws).
  /// Storage: chunks of (rows_per_chunk, cols_per_chunk) doubles, about 1 MiB each, with
  ///   rows_per_chunk = clamp(2^17 / width, 1, 1024), cols_per_chunk = min(width, 2^17),
  /// shuffle + deflate at deflate_level (0: no filters). A dataset chunk cache of two row-bands of
  /// chunks keeps the band being filled in memory, so that each chunk is compressed and written
  /// once, when it is evicted, and never re-read or re-compressed.
  /// @throws InvalidArgument unless width >= 1 and 0 <= deflate_level <= 9; IoError if path exists
  ///         or deflate is unavailable.
  RowStream& open_row_stream(const std::string& path, Index width, int deflate_level = 1);

  /// Flushes and closes everything (row streams included), then renames the temporary file to
  /// final_path (std::filesystem::rename: atomic on one filesystem). Afterwards the writer is
  /// inert: every write throws IoError.
  /// @throws IoError on failure, after removing the temporary file; also if a program opened
  ///         final_path for writing during the run (require_not_held_for_writing): its file stays.
  void commit();

  /// True until commit() or a move from this writer.
  bool is_open() const noexcept { return file_.valid(); }
  const std::filesystem::path& temporary_path() const noexcept { return temporary_path_; }
  const std::filesystem::path& final_path() const noexcept { return final_path_; }

 private:
  friend class RowStream;
  /// Throws IoError unless the writer is open.
  void require_open(const char* operation) const;
  /// Runs f; if it throws after an HDF5 failure, or a write failed meanwhile (the driver records
  /// those, see h5::write_access), discards the writer and throws.
  template <class F>
  void guarded(F&& f);
  /// If a write to the file failed: discards the writer and throws IoError with the reason.
  void throw_if_write_failed();
  /// Closes all handles and removes the temporary file, ignoring errors (destructor, failures).
  /// Nothing more is written to the file, so that closing cannot fail.
  void discard() noexcept;

  std::filesystem::path final_path_;
  std::filesystem::path temporary_path_;
  std::vector<std::filesystem::path> created_directories_;  // outermost first
  OutputLock lock_;  // released after the temporary file is gone (members die after ~ResultsWriter)
  std::shared_ptr<h5::WriteState> state_;  // before file_: the driver uses it until file_ closes
  h5::File file_;
  std::vector<std::unique_ptr<RowStream>> streams_;
};

/// Refuses to let a results file replace `path` unless nothing is there or it is a results file
/// (or an HDF5 file too damaged to open, such as a results file cut short): an experiment file,
/// a model file (.mat, .mtx), a directory or any other file named as the output by mistake stays,
/// and so does a file another program holds open for writing (require_not_held_for_writing).
/// @throws IoError naming path and what it is.
void require_replaceable_by_results(const std::filesystem::path& path);

/// Removes the temporary files "<final_path>.tmp-<pid>" left next to final_path by writers that
/// were killed: those whose process is gone and whose file nobody holds locked. Errors are
/// ignored (a file that cannot be removed stays). Returns how many were removed.
int remove_stale_temporaries(const std::filesystem::path& final_path) noexcept;

/// What a path of a results file names.
enum class ObjectType { missing, group, dataset, other };

/// Reads a results file. Read-only; movable.
class ResultsReader {
 public:
  /// Opens path read-only.
  /// @throws IoError naming path and saying which, if the file does not exist, is not an HDF5
  ///         file, is HDF5 but not a mor results file (root attribute "format" missing or not
  ///         "mor-results"), or has a format_version this program does not read (> 1).
  explicit ResultsReader(const std::filesystem::path& path);

  const std::filesystem::path& path() const noexcept { return path_; }

  /// Whether a group or dataset exists at path (false for dangling links). "/" always exists.
  bool exists(const std::string& path) const;

  /// What is at path (missing for a dangling link or a path through a dataset).
  ObjectType type(const std::string& path) const;
  /// Whether path is a dataset of integers or floating-point numbers.
  /// @throws IoError if path is not an existing dataset.
  bool is_numeric_dataset(const std::string& path) const;

  /// Names of the members of group, sorted. @throws IoError if not a group; a name "", "." or a/b.
  std::vector<std::string> list(const std::string& group) const;

  /// Names of the attributes of the object at object_path, sorted.
  /// @throws IoError if the object does not exist.
  /// On a damaged file HDF5 1.10.8 can crash inside this iteration (H5Aiterate2): read the
  /// attributes you expect with has_attribute() and attribute() instead where the names are
  /// known, and list only to show what is there (`mor info`, in a child process).
  std::vector<std::string> attribute_names(const std::string& object_path) const;

  /// Whether the object at object_path has an attribute called name (looked up by name, without
  /// iterating over the object's attributes). @throws IoError if the object does not exist.
  bool has_attribute(const std::string& object_path, const std::string& name) const;

  /// The attribute name of the object at object_path. Integer attributes of any width come back
  /// as int64, floating-point ones as double, strings (variable or fixed length) as std::string.
  /// @throws IoError naming object and attribute if either is missing, or if the attribute is of
  ///         another type (e.g. a string array or a 2-D array).
  AttributeValue attribute(const std::string& object_path, const std::string& name) const;
  /// @throws IoError as attribute(), or if the attribute is not a string.
  std::string attribute_string(const std::string& object_path, const std::string& name) const;
  /// A scalar double or int64 attribute as double.
  /// @throws IoError as attribute(), or if the attribute is not a scalar number.
  double attribute_double(const std::string& object_path, const std::string& name) const;
  /// @throws IoError as attribute(), or if the attribute is not a scalar integer.
  std::int64_t attribute_int(const std::string& object_path, const std::string& name) const;

  /// The dimensions of the dataset (empty for a scalar dataset).
  /// @throws IoError if dataset_path is not an existing dataset.
  std::vector<Index> dims(const std::string& dataset_path) const;

  /// A 1-D dataset, or a 2-D one with one row or one column, as a vector.
  /// @throws IoError if path is not a numeric dataset of such a shape.
  Vector read_vector(const std::string& path) const;

  /// Whether path is a dataset of strings (fixed or variable length).
  /// @throws IoError if path is not an existing dataset.
  bool is_string_dataset(const std::string& path) const;
  /// A 1-D dataset of strings. @throws IoError if path is not one.
  std::vector<std::string> read_strings(const std::string& path) const;
  /// A 2-D dataset of dims (m, n) as an m x n matrix (entry (i, j) = h5py's ds[i, j]).
  /// @throws IoError if path is not a 2-D numeric dataset.
  Matrix read_matrix(const std::string& path) const;
  /// read_matrix and read_vector for data that must be finite (a reduced model, bases, singular
  /// values: what `mor info` checks and `mor export` writes).
  /// @throws IoError "results file '<file>' is damaged: the dataset <path> holds NaN at (i, j)"
  ///         (1-based, row and column as h5py shows them) for the first entry that is NaN or
  ///         infinite, besides read_matrix's and read_vector's errors.
  Matrix read_finite_matrix(const std::string& path) const;
  Vector read_finite_vector(const std::string& path) const;

  /// Rows [first, first + count) of a 2-D dataset of dims (rows, width), e.g. a row stream, as a
  /// width x count matrix: column k is row first + k. count = -1 reads to the last row. HDF5's
  /// row-major rows are Eigen's column-major columns, so the rows are read in place, uncopied.
  /// @throws InvalidArgument unless 0 <= first <= rows and the range lies within [0, rows);
  ///         IoError if path is not a 2-D numeric dataset.
  Matrix read_rows_as_columns(const std::string& path, Index first = 0, Index count = -1) const;

 private:
  /// Opens the dataset at path, with messages naming it if missing or not a dataset.
  h5::Dataset open_dataset(const std::string& path) const;

  std::filesystem::path path_;
  h5::File file_;
};

}  // namespace mor::io
