// SPDX-License-Identifier: GPL-3.0-or-later
// Results files: round trips are exact (HDF5 stores IEEE doubles bit for bit), matrices keep
// their orientation, row streams read back as columns, files appear only at commit, and every
// failure is an IoError naming the file and the object.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "src/core/errors.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/output_lock.hpp"
#include "src/io/results.hpp"
#include "support/compare.hpp"
#include "support/source_dir.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using mor::Index;
using mor::Matrix;
using mor::Vector;
using mor::io::AttributeValue;
using mor::io::ResultsReader;
using mor::io::ResultsWriter;
using mor::testing::matrices_near;

namespace {

using Hdf5Test = mor::testing::TempDirTest;

/// Passes if f throws mor::IoError whose message contains every one of parts.
::testing::AssertionResult throws_io_error(const std::function<void()>& f,
                                           const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const mor::IoError& e) {
    const std::string message = e.what();
    for (const auto& part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure()
               << "IoError message \"" << message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// Row r of a test stream of the given width: distinct, non-round values in every entry.
Vector stream_row(Index r, Index width) {
  Vector row(width);
  for (Index j = 0; j < width; ++j)
    row[j] = std::sin(0.37 * static_cast<double>(r) + 1e-3 * static_cast<double>(j)) + r;
  return row;
}

}  // namespace

TEST_F(Hdf5Test, VectorsAndMatricesRoundTripExactly) {
  const fs::path file = dir_ / "sub" / "dir" / "data.h5";  // parent directories are created
  Vector v = Vector::LinSpaced(11, -1.0, 1.0).array().exp();
  Matrix A(3, 5);  // non-square, so a transposed read would show as wrong dims
  for (Index i = 0; i < A.rows(); ++i)
    for (Index j = 0; j < A.cols(); ++j) A(i, j) = 10.0 * i + j + 0.125;
  {
    ResultsWriter writer(file);
    writer.write_vector("/v", v);
    writer.write_vector("/empty", Vector());
    writer.write_matrix("/deep/A", A);  // intermediate group "/deep" is created
    writer.write_matrix("/column", A.col(2));
    writer.write_matrix("/row", A.row(1));
    writer.commit();
  }
  const ResultsReader reader(file);
  EXPECT_TRUE(matrices_near(reader.read_vector("/v"), v, 0.0));
  EXPECT_EQ(reader.read_vector("/empty").size(), 0);
  EXPECT_EQ(reader.dims("/v"), std::vector<Index>({11}));
  EXPECT_EQ(reader.dims("/deep/A"), std::vector<Index>({3, 5}));
  const Matrix B = reader.read_matrix("/deep/A");
  ASSERT_TRUE(matrices_near(B, A, 0.0));
  EXPECT_EQ(B(2, 4), 24.125);
  EXPECT_TRUE(matrices_near(reader.read_vector("/column"), Vector(A.col(2)), 0.0));
  EXPECT_TRUE(matrices_near(reader.read_vector("/row"), Vector(A.row(1).transpose()), 0.0));
  EXPECT_TRUE(throws_io_error([&] { reader.read_matrix("/v"); }, {"/v", "not a matrix"}));
  EXPECT_TRUE(throws_io_error([&] { reader.read_vector("/deep/A"); }, {"/deep/A", "(3, 5)"}));
}

TEST_F(Hdf5Test, EveryAttributeTypeRoundTrips) {
  const fs::path file = dir_ / "attributes.h5";
  const std::vector<double> doubles = {1.5, -2.25, 1e-300};
  const std::vector<std::int64_t> ints = {1, -2, INT64_MAX};
  std::vector<double> large(20000);  // > 64 KiB: needs dense attribute storage
  for (std::size_t k = 0; k < large.size(); ++k) large[k] = 0.5 * static_cast<double>(k);
  {
    ResultsWriter writer(file);
    writer.create_group("/g");
    writer.write_vector("/g/x", Vector::Ones(3));
    for (const std::string object : {"/", "/g", "/g/x"}) {
      writer.set_attribute(object, "s", std::string("Ünïcode μ"));
      writer.set_attribute(object, "d", 0.1);
      writer.set_attribute(object, "i", std::int64_t{-7});
      writer.set_attribute(object, "dv", doubles);
      writer.set_attribute(object, "iv", ints);
    }
    writer.set_attribute("/", "empty_string", std::string());
    writer.set_attribute("/", "empty_doubles", std::vector<double>());
    writer.set_attribute("/", "large", large);
    writer.set_attribute("/g", "d", std::string("replaced by a string"));  // overwrite, new type
    writer.commit();
  }
  const ResultsReader reader(file);
  for (const std::string object : {"/", "/g/x"}) {
    EXPECT_EQ(reader.attribute_string(object, "s"), "Ünïcode μ");
    EXPECT_EQ(reader.attribute_double(object, "d"), 0.1);
    EXPECT_EQ(reader.attribute_int(object, "i"), -7);
    EXPECT_EQ(reader.attribute_double(object, "i"), -7.0);  // integers widen to double
    EXPECT_EQ(std::get<std::vector<double>>(reader.attribute(object, "dv")), doubles);
    EXPECT_EQ(std::get<std::vector<std::int64_t>>(reader.attribute(object, "iv")), ints);
  }
  EXPECT_EQ(reader.attribute("/g", "d"), AttributeValue(std::string("replaced by a string")));
  EXPECT_EQ(reader.attribute("/", "empty_string"), AttributeValue(std::string()));
  EXPECT_EQ(reader.attribute("/", "empty_doubles"), AttributeValue(std::vector<double>()));
  EXPECT_EQ(std::get<std::vector<double>>(reader.attribute("/", "large")), large);
  EXPECT_EQ(reader.attribute_string("/", "format"), "mor-results");
  EXPECT_EQ(reader.attribute_int("/", "format_version"), 1);
  EXPECT_EQ(reader.attribute_names("/g/x"), (std::vector<std::string>{"d", "dv", "i", "iv", "s"}));
  EXPECT_EQ(reader.attribute_names("/"),
            (std::vector<std::string>{"d", "dv", "empty_doubles", "empty_string", "format",
                                      "format_version", "i", "iv", "large", "s"}));

  EXPECT_TRUE(throws_io_error([&] { reader.attribute_int("/", "d"); }, {"'d'", "not an integer"}));
  EXPECT_TRUE(throws_io_error([&] { reader.attribute_double("/", "s"); }, {"'s'", "not a number"}));
  EXPECT_TRUE(throws_io_error([&] { reader.attribute_string("/", "i"); }, {"'i'", "not a string"}));
  EXPECT_TRUE(throws_io_error([&] { reader.attribute("/g", "missing"); },
                              {"missing", "/g", file.string()}));
  EXPECT_TRUE(
      throws_io_error([&] { reader.attribute("/nowhere", "s"); }, {"/nowhere", file.string()}));
}

TEST_F(Hdf5Test, NestedGroupsListAndExist) {
  const fs::path file = dir_ / "groups.h5";
  {
    ResultsWriter writer(file);
    writer.create_group("/a/b/c");  // intermediate groups
    writer.create_group("/a/b");    // already there: no-op
    writer.create_group("/z");
    writer.write_vector("/a/y", Vector::Zero(2));
    writer.write_vector("/a/x", Vector::Zero(2));
    EXPECT_TRUE(throws_io_error([&] { writer.create_group("/a/x"); }, {"/a/x", "dataset"}));
    EXPECT_TRUE(
        throws_io_error([&] { writer.write_vector("/a/x", Vector::Zero(1)); }, {"/a/x", "exists"}));
    EXPECT_TRUE(throws_io_error([&] { writer.set_attribute("/nope", "k", 1.0); }, {"/nope"}));
    EXPECT_THROW(writer.set_attribute("/", "", 1.0), mor::InvalidArgument);
    writer.commit();
  }
  const ResultsReader reader(file);
  EXPECT_EQ(reader.list("/"), (std::vector<std::string>{"a", "z"}));
  EXPECT_EQ(reader.list("/a"), (std::vector<std::string>{"b", "x", "y"}));
  EXPECT_EQ(reader.list("a/b"), (std::vector<std::string>{"c"}));
  EXPECT_TRUE(reader.list("/a/b/c").empty());
  for (const char* path : {"/", "/a", "/a/b/c", "/a/x", "a/x", "/a/b/"})
    EXPECT_TRUE(reader.exists(path)) << path;
  for (const char* path : {"/b", "/a/b/c/d", "/a/x/under_a_dataset", "/q/r"})
    EXPECT_FALSE(reader.exists(path)) << path;
  EXPECT_TRUE(throws_io_error([&] { reader.list("/a/x"); }, {"/a/x", "not a group"}));
  EXPECT_TRUE(throws_io_error([&] { reader.list("/missing"); }, {"/missing"}));
  EXPECT_TRUE(
      throws_io_error([&] { reader.read_vector("/a/missing"); }, {"/a/missing", file.string()}));
  EXPECT_TRUE(throws_io_error([&] { reader.read_matrix("/a/b"); }, {"/a/b", "not a dataset"}));
  EXPECT_TRUE(throws_io_error([&] { reader.dims("/nothing"); }, {"/nothing"}));
}

TEST_F(Hdf5Test, RowStreamReadsBackAsColumns) {
  const fs::path file = dir_ / "stream.h5";
  const Index width = 1000, rows = 300;  // 131 rows per chunk: several bands, a partial last one
  Matrix expected(width, rows);
  for (Index r = 0; r < rows; ++r) expected.col(r) = stream_row(r, width);
  {
    ResultsWriter writer(file);
    auto& compressed = writer.open_row_stream("/snapshots/q", width);
    auto& plain = writer.open_row_stream("/plain", width, 0);
    EXPECT_EQ(compressed.width(), width);
    for (Index r = 0; r < rows; ++r) {
      compressed.append(expected.col(r));
      plain.append(expected.col(r).data());
    }
    EXPECT_EQ(compressed.rows(), rows);
    EXPECT_THROW(compressed.append(Vector::Zero(width + 1)), mor::InvalidArgument);
    EXPECT_EQ(compressed.rows(), rows);
    EXPECT_THROW(writer.open_row_stream("/w0", 0), mor::InvalidArgument);
    EXPECT_THROW(writer.open_row_stream("/bad_level", 3, 10), mor::InvalidArgument);
    EXPECT_TRUE(throws_io_error([&] { writer.open_row_stream("/plain", 3); }, {"/plain"}));
    writer.set_attribute("/snapshots/q", "dt", 0.01);
    writer.commit();
    EXPECT_TRUE(throws_io_error([&] { compressed.append(expected.col(0)); }, {"/snapshots/q"}));
  }
  const ResultsReader reader(file);
  EXPECT_EQ(reader.dims("/snapshots/q"), std::vector<Index>({rows, width}));
  EXPECT_EQ(reader.attribute_double("/snapshots/q", "dt"), 0.01);
  EXPECT_TRUE(matrices_near(reader.read_rows_as_columns("/snapshots/q"), expected, 0.0));
  EXPECT_TRUE(matrices_near(reader.read_rows_as_columns("/plain"), expected, 0.0));
  struct Range {
    Index first, count;
  };
  for (const Range range : {Range{0, 1}, Range{130, 2}, Range{131, 131}, Range{250, -1},
                            Range{299, 1}, Range{300, 0}, Range{300, -1}}) {
    const Index count = range.count == -1 ? rows - range.first : range.count;
    EXPECT_TRUE(matrices_near(reader.read_rows_as_columns("/snapshots/q", range.first, range.count),
                              expected.middleCols(range.first, count), 0.0))
        << "first " << range.first << ", count " << range.count;
  }
  EXPECT_THROW(reader.read_rows_as_columns("/snapshots/q", 301), mor::InvalidArgument);
  EXPECT_THROW(reader.read_rows_as_columns("/snapshots/q", 200, 101), mor::InvalidArgument);
  EXPECT_THROW(reader.read_rows_as_columns("/snapshots/q", -1, 1), mor::InvalidArgument);
}

TEST_F(Hdf5Test, RowStreamsOfExtremeWidths) {
  const fs::path file = dir_ / "widths.h5";
  const Index wide = 200000;  // two chunk columns, the second one partial
  {
    ResultsWriter writer(file);
    auto& narrow = writer.open_row_stream("/narrow", 1);
    auto& broad = writer.open_row_stream("/broad", wide);
    for (Index r = 0; r < 5; ++r) {
      narrow.append(stream_row(r, 1));
      broad.append(stream_row(r, wide));
    }
    writer.commit();
  }
  const ResultsReader reader(file);
  EXPECT_EQ(reader.dims("/narrow"), std::vector<Index>({5, 1}));
  EXPECT_EQ(reader.dims("/broad"), std::vector<Index>({5, wide}));
  for (Index r = 0; r < 5; ++r) {
    EXPECT_TRUE(matrices_near(reader.read_rows_as_columns("/narrow", r, 1), stream_row(r, 1), 0.0));
    EXPECT_TRUE(
        matrices_near(reader.read_rows_as_columns("/broad", r, 1), stream_row(r, wide), 0.0));
  }
  EXPECT_TRUE(matrices_near(reader.read_vector("/narrow"),
                            Vector(reader.read_rows_as_columns("/narrow").transpose()), 0.0));
}

TEST_F(Hdf5Test, FileAppearsOnlyAtCommit) {
  const fs::path file = dir_ / "atomic.h5";
  ResultsWriter writer(file);
  EXPECT_EQ(writer.final_path(), file);
  EXPECT_EQ(writer.temporary_path().string(), file.string() + ".tmp-" + std::to_string(::getpid()));
  writer.write_vector("/v", Vector::Ones(4));
  writer.open_row_stream("/s", 10).append(Vector::Ones(10));
  EXPECT_TRUE(fs::exists(writer.temporary_path()));
  EXPECT_FALSE(fs::exists(file));
  writer.commit();
  EXPECT_FALSE(fs::exists(writer.temporary_path()));
  EXPECT_TRUE(fs::exists(file));
  EXPECT_FALSE(writer.is_open());
  EXPECT_TRUE(throws_io_error([&] { writer.write_vector("/w", Vector::Ones(1)); }, {"atomic.h5"}));
  EXPECT_TRUE(throws_io_error([&] { writer.commit(); }, {"atomic.h5"}));
  EXPECT_EQ(ResultsReader(file).read_rows_as_columns("/s").cols(), 1);
}

TEST_F(Hdf5Test, WriterWithoutCommitLeavesNoFile) {
  const fs::path file = dir_ / "abandoned.h5";
  fs::path temporary;
  {
    ResultsWriter writer(file);
    temporary = writer.temporary_path();
    writer.write_matrix("/A", Matrix::Identity(3, 3));
    auto& stream = writer.open_row_stream("/s", 1000);
    for (int r = 0; r < 10; ++r) stream.append(Vector::Zero(1000));
    EXPECT_TRUE(fs::exists(temporary));
  }
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Hdf5Test, MovedWriterKeepsTheFile) {
  const fs::path file = dir_ / "moved.h5";
  ResultsWriter first(file);
  first.write_vector("/v", Vector::Ones(2));
  ResultsWriter second(std::move(first));
  EXPECT_FALSE(first.is_open());  // NOLINT(bugprone-use-after-move): moved-from is inert
  second.commit();
  EXPECT_TRUE(ResultsReader(file).exists("/v"));
}

TEST_F(Hdf5Test, ReaderRejectsMissingForeignAndNonHdf5Files) {
  const fs::path missing = dir_ / "missing.h5";
  EXPECT_TRUE(
      throws_io_error([&] { ResultsReader r(missing); }, {missing.string(), "does not exist"}));

  const fs::path text = dir_ / "text.h5";
  std::ofstream(text) << "this is not an HDF5 file\n";
  EXPECT_TRUE(throws_io_error([&] { ResultsReader r(text); }, {text.string(), "not an HDF5 file"}));

  const fs::path foreign = dir_ / "foreign.h5";
  {
    ResultsWriter writer(foreign);
    writer.set_attribute("/", "format", std::string("someone-else"));
    writer.commit();
  }
  EXPECT_TRUE(throws_io_error([&] { ResultsReader r(foreign); },
                              {foreign.string(), "not a mor results file", "someone-else"}));

  const fs::path wrong_type = dir_ / "wrong_type.h5";
  {
    ResultsWriter writer(wrong_type);
    writer.set_attribute("/", "format", 1.0);
    writer.commit();
  }
  EXPECT_TRUE(throws_io_error([&] { ResultsReader r(wrong_type); },
                              {wrong_type.string(), "not a mor results file", "a double"}));

  const fs::path newer = dir_ / "newer.h5";
  {
    ResultsWriter writer(newer);
    writer.set_attribute("/", "format_version", std::int64_t{2});
    writer.commit();
  }
  EXPECT_TRUE(
      throws_io_error([&] { ResultsReader r(newer); }, {newer.string(), "format_version 2"}));
}

TEST_F(Hdf5Test, StringAndIntegerColumnsRoundTrip) {
  const fs::path file = dir_ / "columns.h5";
  const std::vector<std::string> texts = {"bt_N100", "", "failed: r = 30 exceeds the rank 28",
                                          "grüße, \"quoted\""};
  const std::vector<std::int64_t> integers = {-1, 0, 1000000, std::int64_t{1} << 53};
  {
    ResultsWriter w(file);
    w.write_strings("/table/key", texts);
    w.write_strings("/table/empty", {});
    w.write_integers("/table/N", integers);
    w.commit();
  }
  const ResultsReader r(file);
  EXPECT_TRUE(r.is_string_dataset("/table/key"));
  EXPECT_FALSE(r.is_string_dataset("/table/N"));
  EXPECT_EQ(r.read_strings("/table/key"), texts);
  EXPECT_TRUE(r.read_strings("/table/empty").empty());
  const Vector n = r.read_vector("/table/N");
  ASSERT_EQ(n.size(), 4);
  for (Index i = 0; i < 4; ++i) EXPECT_EQ(n(i), static_cast<double>(integers[i]));
  EXPECT_TRUE(throws_io_error([&] { r.read_strings("/table/N"); }, {"not a 1-D string array"}));
}

TEST_F(Hdf5Test, CopiedFileKeepsEveryDatasetAndAttribute) {
  // Groups with more than eight attributes, some variable-length strings, are stored densely:
  // the case HDF5 1.10.8's H5Ocopy crashes on (HDFGroup/hdf5#2414).
  const fs::path source = dir_ / "point.h5", merged = dir_ / "merged.h5";
  Matrix A(3, 4);
  for (Index k = 0; k < A.size(); ++k) A.data()[k] = std::sqrt(static_cast<double>(k) + 0.5);
  {
    ResultsWriter w(source);
    w.set_attribute("/", "program", std::string("mor"));
    w.create_group("/model");
    for (int k = 0; k < 12; ++k) {
      w.set_attribute("/", "text_" + std::to_string(k), std::string(k + 1, 'a' + k));
      w.set_attribute("/model", "value_" + std::to_string(k), 0.1 * k);
      w.set_attribute("/model", "label_" + std::to_string(k), "label " + std::to_string(k));
    }
    w.set_attribute("/model", "orders", std::vector<std::int64_t>{10, 20, 30});
    w.write_matrix("/reduction/reduced/A", A);
    w.set_attribute("/reduction/reduced/A", "unit", std::string("1/s"));
    w.write_strings("/table/key", {"x", "y"});
    mor::io::RowStream& rows = w.open_row_stream("/outputs/y", 2);
    for (Index k = 0; k < 5; ++k) rows.append(stream_row(k, 2));
    w.commit();
  }
  {
    ResultsWriter w(merged);
    w.copy_file_into(source, "/points/p1");
    w.copy_file_into(source, "/points/p2");
    EXPECT_TRUE(throws_io_error([&] { w.copy_file_into(source, "/points/p1"); }, {"/points/p1"}));
    const fs::path foreign = dir_ / "foreign.txt";
    std::ofstream(foreign) << "not hdf5";
    EXPECT_TRUE(throws_io_error([&] { w.copy_file_into(foreign, "/points/p3"); },
                                {foreign.string(), "not an HDF5 file"}));
    w.commit();
  }
  const ResultsReader in(source), out(merged);
  for (const std::string p : {"/points/p1", "/points/p2"}) {
    for (const std::string object : {"/", "/model", "/reduction/reduced/A"}) {
      const std::string copied = object == "/" ? p : p + object;
      ASSERT_EQ(out.attribute_names(copied), in.attribute_names(object)) << copied;
      for (const auto& name : in.attribute_names(object))
        EXPECT_EQ(out.attribute(copied, name), in.attribute(object, name)) << copied << " " << name;
    }
    EXPECT_TRUE(matrices_near(out.read_matrix(p + "/reduction/reduced/A"), A, 0.0));
    EXPECT_TRUE(
        matrices_near(out.read_matrix(p + "/outputs/y"), in.read_matrix("/outputs/y"), 0.0));
    EXPECT_EQ(out.read_strings(p + "/table/key"), (std::vector<std::string>{"x", "y"}));
  }
}

TEST_F(Hdf5Test, RefusalsKeepTheWriterOpenAndFailuresDiscardIt) {
  // A refusal changes nothing: the writer goes on and commits.
  const fs::path kept = dir_ / "kept.h5";
  {
    ResultsWriter writer(kept);
    writer.write_vector("/v", Vector::Ones(3));
    EXPECT_TRUE(throws_io_error([&] { writer.write_vector("/v", Vector::Ones(3)); },
                                {"'/v'", "exists already", kept.string()}));
    EXPECT_TRUE(
        throws_io_error([&] { writer.set_attribute("/none", "a", 1.0); }, {"no object '/none'"}));
    EXPECT_TRUE(writer.is_open());
    writer.write_vector("/w", Vector::Zero(2));
    writer.commit();
  }
  EXPECT_TRUE(ResultsReader(kept).exists("/w"));
  // An HDF5 failure (here the next checked call, made to fail) throws the file away at once.
  const fs::path lost = dir_ / "lost.h5";
  ResultsWriter writer(lost);
  mor::io::RowStream& stream = writer.open_row_stream("/s", 4);
  stream.append(Vector::Ones(4));
  mor::io::h5::fault::fail_call(1);
  EXPECT_TRUE(throws_io_error([&] { stream.append(Vector::Ones(4)); },
                              {"injected failure", lost.string()}));
  mor::io::h5::fault::fail_call(0);
  EXPECT_FALSE(writer.is_open());
  EXPECT_FALSE(fs::exists(writer.temporary_path()));
  EXPECT_TRUE(throws_io_error([&] { stream.append(Vector::Ones(4)); }, {"closed"}));
  EXPECT_TRUE(throws_io_error([&] { writer.commit(); }, {"no longer open", lost.string()}));
  EXPECT_EQ(mor::io::h5::open_objects(), 0);
  EXPECT_FALSE(fs::exists(lost));
}

TEST_F(Hdf5Test, DamagedFileIsReportedOnOneLine) {
  // HDF5's own descriptions of system errors span lines and dump buffer addresses; the message
  // is one line naming the file.
  const fs::path file = dir_ / "cut.h5";
  {
    ResultsWriter writer(file);
    writer.write_matrix("/A", Matrix::Identity(40, 40));
    writer.commit();
  }
  fs::resize_file(file, fs::file_size(file) / 2);
  try {
    const ResultsReader reader(file);
    static_cast<void>(reader.read_matrix("/A"));
    ADD_FAILURE() << "a file cut in half was read";
  } catch (const mor::IoError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  }
}

// ---------------------------------------------------------------------------------------------
// Global heap collections (where variable-length strings live, HDF5 File Format Specification
// 3.0, III.E): HDF5 1.10.8 loops for ever on a free-space object of size 0 and walks past its
// buffer on an object that claims more than the collection holds (fuzz_results found both). The
// reader's driver refuses such a collection before HDF5 decodes it, and reads sound ones as before.

namespace {

/// The file's bytes, and the offset of its first global heap collection ("GCOL").
struct HeapBytes {
  std::string bytes;
  std::size_t collection = std::string::npos;
};

HeapBytes read_bytes(const fs::path& file, std::size_t from = 0) {
  std::ifstream in(file, std::ios::binary);
  HeapBytes h{std::string(std::istreambuf_iterator<char>(in), {}), std::string::npos};
  h.collection = h.bytes.find("GCOL", from);
  return h;
}

std::uint64_t le64(const std::string& bytes, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

void put_le64(std::string& bytes, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

/// Offsets (from the collection's start) of its objects, walked by the test's own reading of the
/// format with 8-byte lengths: index 2 bytes, references 2, reserved 4, size 8, data padded to 8.
std::vector<std::pair<unsigned, std::size_t>> heap_objects(const HeapBytes& h) {
  std::vector<std::pair<unsigned, std::size_t>> objects;
  const std::uint64_t size = le64(h.bytes, h.collection + 8);
  for (std::size_t at = 16; at + 16 <= size;) {
    const unsigned index = static_cast<unsigned char>(h.bytes[h.collection + at]) |
                           static_cast<unsigned char>(h.bytes[h.collection + at + 1]) << 8;
    const std::uint64_t stored = le64(h.bytes, h.collection + at + 8);
    objects.emplace_back(index, at);
    if (index == 0) break;  // the free space, last
    at += 16 + ((stored + 7) / 8) * 8;
  }
  return objects;
}

}  // namespace

TEST_F(Hdf5Test, DamagedGlobalHeapIsRefusedAtOnce) {
  const fs::path good = dir_ / "good.h5";
  // A long string too: its collection is larger than the 4096 bytes HDF5 reads first.
  const std::string long_text(6000, 'x');
  {
    ResultsWriter writer(good);
    writer.set_attribute("/", "short", std::string("a variable-length string"));
    writer.set_attribute("/", "long", long_text);
    writer.commit();
  }
  {
    const ResultsReader reader(good);  // sound collections read as before
    EXPECT_EQ(reader.attribute_string("/", "short"), "a variable-length string");
    EXPECT_EQ(reader.attribute_string("/", "long"), long_text);
  }
  // The first collection with a free-space object (the one of the long string may be full).
  HeapBytes h = read_bytes(good);
  ASSERT_EQ(h.bytes.substr(0, 8), std::string("\x89HDF\r\n\x1a\n", 8));
  // Size of Lengths: superblock byte 14 in versions 0 and 1, byte 10 in 2 and 3 (II.A).
  ASSERT_EQ(h.bytes[h.bytes[8] <= 1 ? 14 : 10], 8)
      << "the test walks collections with 8-byte lengths";
  std::vector<std::pair<unsigned, std::size_t>> objects;
  for (; h.collection != std::string::npos; h = read_bytes(good, h.collection + 4)) {
    objects = heap_objects(h);
    if (objects.size() >= 2 && objects.back().first == 0) break;
  }
  ASSERT_NE(h.collection, std::string::npos)
      << "no global heap collection with objects and free space in " << good;

  const std::uint64_t collection_size = le64(h.bytes, h.collection + 8);
  const struct {
    std::size_t size_field;  // offset (from the collection) of the object size to overwrite
    std::uint64_t value;
    std::string message;
  } damages[] = {
      // HDF5 1.10.8 would loop for ever on this one (tests/fuzz/known/ has a fuzzed instance).
      {objects.back().second + 8, 0, "has size 0"},
      // The first object's data would end 8 bytes past the collection.
      {objects.front().second + 8, collection_size - objects.front().second - 8,
       "past the end of the collection"},
  };
  for (const auto& d : damages) {
    std::string bytes = h.bytes;
    put_le64(bytes, h.collection + d.size_field, d.value);
    const fs::path bad = dir_ / "bad.h5";
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes;
    // Without the check the read below never returns: SIGALRM ends the test instead of ctest's
    // timeout.
    ::alarm(30);
    EXPECT_TRUE(throws_io_error(
        [&] {
          const ResultsReader reader(bad);
          static_cast<void>(reader.attribute_string("/", "short"));
          static_cast<void>(reader.attribute_string("/", "long"));
        },
        {bad.string(), "damaged global heap collection at offset " + std::to_string(h.collection),
         d.message}));
    ::alarm(0);
  }
}

// A damaged file that fuzz_results found: /reduction/reduced has a member whose name is empty.
// `mor info` walked it as a group at /reduction/reduced/, whose members are those of
// /reduction/reduced, the empty name among them, for ever (the worker timed out on it). A name
// that cannot be a path component is refused by name.
TEST_F(Hdf5Test, MemberNamesThatAreNoPathComponentsAreRefused) {
  const fs::path file =
      mor::testing::source_dir() / "tests" / "fuzz" / "known" / "results_empty_link_name.h5";
  const ResultsReader reader(file);
  EXPECT_TRUE(throws_io_error([&] { static_cast<void>(reader.list("/reduction/reduced")); },
                              {"damaged results file", file.string(),
                               "group '/reduction/reduced' has a member named '',"}));
  EXPECT_FALSE(reader.list("/reduction").empty());  // the sound groups still list
}

// ---------------------------------------------------------------------------------------------
// Claims on an output file (src/io/output_lock.hpp): another process's claim and a file another
// program writes are refused by name; a killed claimant blocks nothing; nothing is left behind.

namespace {

/// An flock taken through a descriptor of its own, as another process would hold it.
class ForeignFlock {
 public:
  ForeignFlock(const fs::path& file, int operation, const std::string& text = "") {
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EXPECT_GE(fd_, 0) << file;
    if (!text.empty()) EXPECT_EQ(::write(fd_, text.data(), text.size()), ssize_t(text.size()));
    EXPECT_EQ(::flock(fd_, operation | LOCK_NB), 0) << file;
  }
  ~ForeignFlock() { ::close(fd_); }
  ForeignFlock(const ForeignFlock&) = delete;
  ForeignFlock& operator=(const ForeignFlock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

TEST_F(Hdf5Test, ClaimOfAnotherRunIsRefusedByNameAndProcess) {
  const fs::path file = dir_ / "busy.h5";
  const ForeignFlock other(dir_ / "busy.h5.lock", LOCK_EX, "4242\n");
  EXPECT_TRUE(throws_io_error([&] { mor::io::OutputLock lock(file); },
                              {"refusing to write results file '" + file.string() +
                                   "': another mor run (process 4242) is writing it",
                               "busy.h5.lock"}));
  EXPECT_TRUE(throws_io_error([&] { ResultsWriter w(file); }, {"another mor run (process 4242)"}));
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + ".tmp-" + std::to_string(::getpid())));
}

TEST_F(Hdf5Test, FileAnotherProgramWritesIsNeitherClaimedNorReplaced) {
  const fs::path file = dir_ / "theirs.h5";
  {
    ResultsWriter w(file);  // a results file, which a run would otherwise replace
    w.write_vector("/v", Vector::Ones(3));
    w.commit();
  }
  const auto size = fs::file_size(file);
  {
    const ForeignFlock writer(file, LOCK_EX);  // as HDF5 holds a file it writes
    for (const std::function<void()>& f : std::vector<std::function<void()>>{
             [&] { mor::io::OutputLock lock(file); }, [&] { ResultsWriter w(file); },
             [&] { mor::io::require_replaceable_by_results(file); }})
      EXPECT_TRUE(throws_io_error(f, {"refusing to write results file '" + file.string() +
                                      "': another program holds it open for writing"}));
    EXPECT_FALSE(fs::exists(dir_ / "theirs.h5.lock"));
  }
  EXPECT_EQ(fs::file_size(file), size);
  // A reader (a shared lock, as h5py's read mode takes) does not stop a run.
  const ForeignFlock reader(file, LOCK_SH);
  ResultsWriter w(file);
  w.write_vector("/w", Vector::Ones(2));
  w.commit();
  EXPECT_TRUE(ResultsReader(file).exists("/w"));
}

// The program holding the file may open it for writing only after the run started: the rename
// at commit keeps its file and our results go.
TEST_F(Hdf5Test, CommitKeepsAFileOpenedForWritingDuringTheRun) {
  const fs::path file = dir_ / "late.h5";
  ResultsWriter w(file);
  w.write_vector("/v", Vector::Ones(3));
  std::ofstream(file) << "theirs";
  const ForeignFlock writer(file, LOCK_EX);
  EXPECT_TRUE(throws_io_error([&] { w.commit(); }, {"another program holds it open for writing"}));
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "theirs");
  EXPECT_FALSE(fs::exists(w.temporary_path()));
  EXPECT_FALSE(fs::exists(dir_ / "late.h5.lock"));
}

TEST_F(Hdf5Test, ClaimsOfOneProcessAreSharedAndLeaveNothing) {
  const fs::path file = dir_ / "new" / "folder" / "mine.h5";
  {
    const mor::io::OutputLock run(file);  // as mor run claims it before the model is built
    EXPECT_TRUE(run.held());
    EXPECT_TRUE(fs::exists(dir_ / "new" / "folder" / "mine.h5.lock"));
    ResultsWriter w(file);  // joins the claim
    w.write_vector("/v", Vector::Ones(3));
    w.commit();
    EXPECT_TRUE(fs::exists(dir_ / "new" / "folder" / "mine.h5.lock"));  // the run's still holds
  }
  EXPECT_FALSE(fs::exists(dir_ / "new" / "folder" / "mine.h5.lock"));
  EXPECT_TRUE(ResultsReader(file).exists("/v"));
  // A claim that writes nothing removes the folders it made.
  { const mor::io::OutputLock unused(dir_ / "other" / "x.h5"); }
  EXPECT_FALSE(fs::exists(dir_ / "other"));
}

// A claimant that was killed left its lock file, unlocked (the kernel drops flocks with the
// process): the next claim takes it over and removes it at the end.
TEST_F(Hdf5Test, StaleLockFileBlocksNothing) {
  const fs::path file = dir_ / "stale.h5";
  std::ofstream(dir_ / "stale.h5.lock") << "999999\n";
  {
    ResultsWriter w(file);
    w.write_vector("/v", Vector::Ones(3));
    w.commit();
  }
  EXPECT_TRUE(ResultsReader(file).exists("/v"));
  EXPECT_FALSE(fs::exists(dir_ / "stale.h5.lock"));
}
