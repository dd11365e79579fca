// SPDX-License-Identifier: GPL-3.0-or-later
// In-memory records (src/io/record.hpp): what is recorded in memory and then written to a results
// file reads back exactly as written, and the in-memory record refuses what the file's writer
// refuses, with the same kind of error.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/io/record.hpp"
#include "src/io/results.hpp"
#include "support/temp_dir.hpp"

namespace {

using mor::Matrix;
using mor::Vector;
using mor::io::AttributeValue;
using mor::io::Record;
using mor::io::RecordSink;
using mor::io::ResultsReader;
using mor::io::ResultsWriter;

using RecordTest = mor::testing::TempDirTest;

/// The records a method makes: nested groups made implicitly, every kind of dataset and
/// attribute, an attribute replaced by one of another type.
void make_records(RecordSink& out) {
  out.create_group("/reduction");
  out.set_attribute("/reduction", "method", std::string("bt"));
  out.set_attribute("/reduction", "r", std::int64_t{7});
  out.set_attribute("/reduction", "bound", 2.5e-3);
  out.set_attribute("/reduction", "bound", std::int64_t{-1});  // replaced, new type
  out.write_vector("/reduction/hsv", Vector::LinSpaced(5, 1.0, 0.2));
  Matrix A(2, 3);
  A << 1, 2, 3, 4, 5, 6;
  out.write_matrix("reduction/reduced/A", A);  // intermediate group, relative path
  out.set_attribute("/reduction/reduced", "form", std::string("first order"));
  out.write_integers("/reduction/deim_masses", {3, 1, 2});
  out.write_strings("/reduction/names", {"a", "bc"});
  out.set_attribute("/reduction/hsv", "shifts", std::vector<double>{-1.0, -2.0});
  out.set_attribute("/reduction/hsv", "steps", std::vector<std::int64_t>{4, 5});
}

TEST_F(RecordTest, WrittenThroughMemoryReadsBackExactly) {
  Record rec;
  make_records(rec);
  const auto file = dir_ / "r.h5";
  {
    ResultsWriter w(file);
    write_record(w, rec);
    w.commit();
  }
  const ResultsReader r(file);
  EXPECT_EQ(r.attribute_string("/reduction", "method"), "bt");
  EXPECT_EQ(r.attribute_int("/reduction", "r"), 7);
  EXPECT_EQ(r.attribute_int("/reduction", "bound"), -1);
  EXPECT_EQ(r.read_vector("/reduction/hsv"), Vector::LinSpaced(5, 1.0, 0.2));
  const Matrix A = r.read_matrix("/reduction/reduced/A");
  ASSERT_EQ(A.rows(), 2);
  ASSERT_EQ(A.cols(), 3);
  EXPECT_EQ(A(0, 2), 3.0);
  EXPECT_EQ(A(1, 0), 4.0);
  EXPECT_EQ(r.attribute_string("/reduction/reduced", "form"), "first order");
  EXPECT_EQ(r.read_vector("/reduction/deim_masses"), (Vector(3) << 3, 1, 2).finished());
  EXPECT_EQ(r.read_strings("/reduction/names"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(std::get<std::vector<double>>(r.attribute("/reduction/hsv", "shifts")),
            (std::vector<double>{-1.0, -2.0}));
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(r.attribute("/reduction/hsv", "steps")),
            (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(r.list("/reduction"),
            (std::vector<std::string>{"deim_masses", "hsv", "names", "reduced"}));
}

TEST_F(RecordTest, KeepsTheOrderMadeAndFindsNormalisedPaths) {
  Record rec;
  make_records(rec);
  std::vector<std::string> paths;
  for (const auto& n : rec.nodes()) paths.push_back(n.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/", "/reduction", "/reduction/hsv",
                                             "/reduction/reduced", "/reduction/reduced/A",
                                             "/reduction/deim_masses", "/reduction/names"}));
  ASSERT_NE(rec.find("reduction//reduced/"), nullptr);
  EXPECT_TRUE(rec.find("reduction//reduced/")->group);
  EXPECT_FALSE(rec.find("/reduction/hsv")->group);
  EXPECT_EQ(rec.find("/reduction/missing"), nullptr);
  // An attribute set twice keeps its first place and its last value.
  const auto& attrs = rec.find("/reduction")->attributes;
  ASSERT_EQ(attrs.size(), 3u);
  EXPECT_EQ(attrs[2].first, "bound");
  EXPECT_EQ(std::get<std::int64_t>(attrs[2].second), -1);
}

/// Which error f throws: "io", "argument", or "none".
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const mor::IoError&) {
    return "io";
  } catch (const mor::InvalidArgument&) {
    return "argument";
  }
  return "none";
}

TEST_F(RecordTest, RefusesWhatTheResultsFileRefuses) {
  Record rec;
  ResultsWriter file(dir_ / "f.h5");
  for (RecordSink* out : {static_cast<RecordSink*>(&rec), static_cast<RecordSink*>(&file)}) {
    SCOPED_TRACE(out == &rec ? "Record" : "ResultsWriter");
    out->write_vector("/a/v", Vector::Ones(2));
    EXPECT_EQ(error_of([&] { out->set_attribute("/a/missing", "x", 1.0); }), "io");
    EXPECT_EQ(error_of([&] { out->write_vector("/a/v", Vector::Ones(2)); }), "io");
    EXPECT_EQ(error_of([&] { out->write_matrix("/a", Matrix::Ones(1, 1)); }), "io");
    EXPECT_EQ(error_of([&] { out->create_group("/a/v"); }), "io");
    EXPECT_EQ(error_of([&] { out->create_group(""); }), "argument");
    EXPECT_EQ(error_of([&] { out->set_attribute("/a", "", 1.0); }), "argument");
    EXPECT_EQ(error_of([&] { out->create_group("/a"); }), "none");  // an existing group
  }
}

}  // namespace
