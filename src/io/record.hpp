// SPDX-License-Identifier: GPL-3.0-or-later
// Records in memory before they are files: what a reduction method or an analysis records
// (groups, attributes, vectors, matrices, integers, strings under the results layout's paths) is
// written to a RecordSink. The results file's writer (io::ResultsWriter) is one sink; io::Record
// is another, an in-memory tree that the Python module turns into its objects and that
// write_record copies into a results file. Both obey the same rules, so a record that one
// accepts the other accepts too.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "src/core/types.hpp"

namespace mor::io {

/// The value of an attribute: string (UTF-8, stored up to its first NUL), scalar double or
/// int64, or a 1-D array of either.
using AttributeValue =
    std::variant<std::string, double, std::int64_t, std::vector<double>, std::vector<std::int64_t>>;

/// Where records are written. Paths are absolute within a results file ("/reduction/hsv").
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  /// Creates the group at path and any missing intermediate groups; no-op for an existing group.
  /// @throws InvalidArgument if path is empty; IoError if a non-group object is in the way.
  virtual void create_group(const std::string& path) = 0;
  /// Sets (or replaces) attribute name of the object at object_path.
  /// @throws InvalidArgument if name is empty; IoError if the object does not exist.
  virtual void set_attribute(const std::string& object_path, const std::string& name,
                             const AttributeValue& value) = 0;
  /// A 1-D float64 dataset; intermediate groups are created.
  /// @throws IoError if something already exists at path.
  virtual void write_vector(const std::string& path, const Vector& v) = 0;
  /// A 2-D float64 dataset of dims (A.rows(), A.cols()). @throws IoError if path exists.
  virtual void write_matrix(const std::string& path, const Matrix& A) = 0;
  /// A 1-D int64 dataset. @throws IoError if path exists.
  virtual void write_integers(const std::string& path, const std::vector<std::int64_t>& v) = 0;
  /// A 1-D dataset of UTF-8 strings. @throws IoError if path exists.
  virtual void write_strings(const std::string& path, const std::vector<std::string>& v) = 0;

 protected:
  RecordSink() = default;
  RecordSink(const RecordSink&) = default;
  RecordSink& operator=(const RecordSink&) = default;
};

/// An in-memory record: groups and datasets in the order they were made, each with its
/// attributes in the order they were first set. Copyable.
class Record final : public RecordSink {
 public:
  using Data = std::variant<std::monostate, Vector, Matrix, std::vector<std::int64_t>,
                            std::vector<std::string>>;
  struct Node {
    std::string path;  ///< normalised: "/a/b"
    bool group = true;
    Data data;  ///< datasets only
    std::vector<std::pair<std::string, AttributeValue>> attributes;
  };

  Record();
  void create_group(const std::string& path) override;
  void set_attribute(const std::string& object_path, const std::string& name,
                     const AttributeValue& value) override;
  void write_vector(const std::string& path, const Vector& v) override;
  void write_matrix(const std::string& path, const Matrix& A) override;
  void write_integers(const std::string& path, const std::vector<std::int64_t>& v) override;
  void write_strings(const std::string& path, const std::vector<std::string>& v) override;

  /// Every node, the root "/" first, then in the order made.
  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  /// The node at path, or nullptr.
  const Node* find(const std::string& path) const;
  bool exists(const std::string& path) const { return find(path) != nullptr; }

 private:
  Node* find_mutable(const std::string& path);
  void add_dataset(const std::string& path, Data data);
  std::vector<Node> nodes_;
};

/// Writes every group, dataset and attribute of r into out, in r's order (the root's
/// attributes onto out's root).
/// @throws as out's functions (IoError where r's objects already exist in out).
void write_record(RecordSink& out, const Record& r);

}  // namespace mor::io
