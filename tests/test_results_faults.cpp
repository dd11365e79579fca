// SPDX-License-Identifier: GPL-3.0-or-later
// Results files under failure: whichever HDF5 call or file write fails while a results file is
// written (streaming rows, copying a file in, at commit), the writer throws one mor::IoError with
// a one-line message, leaves the previous file byte for byte (or no file), no temporary file and
// no open HDF5 identifier, and the process exits cleanly afterwards. On a real full disk (a 2 MiB
// tmpfs, where mounting is permitted) the library and the `mor` program end with a message and
// an exit code, not a signal.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/results.hpp"
#include "support/sanitizers.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using mor::Index;
using mor::Matrix;
using mor::Vector;
using mor::io::ResultsReader;
using mor::io::ResultsWriter;
namespace h5 = mor::io::h5;

namespace {

// ---------------------------------------------------------------------------------------------
// The file written: every kind of object the writer makes, with values that depend on a seed
// (so that the previous file and the new one differ) and are rebuilt from formulas when read.

struct Content {
  std::int64_t seed;
  /// The width of the wide row stream: 65536 makes chunks of 2 rows (1 MiB), so that its 8 rows
  /// fill 4 row bands and chunks are written while streaming, not only at commit.
  Index wide_width;
};

constexpr Index kWideRows = 8;
constexpr Index kNarrowRows = 20;
constexpr Index kNarrowWidth = 3;

double entry(std::int64_t seed, Index i, Index j) {
  return static_cast<double>(seed) + std::sin(0.37 * static_cast<double>(i) + 1e-3 * j);
}

Matrix rows_of(std::int64_t seed, Index rows, Index width) {
  Matrix m(width, rows);  // column r is row r of the stream
  for (Index r = 0; r < rows; ++r)
    for (Index j = 0; j < width; ++j) m(j, r) = entry(seed, r, j);
  return m;
}

std::vector<std::string> labels(std::int64_t seed) {
  return {"bt_N" + std::to_string(seed), "", "grüße"};
}

/// Writes the whole file through ResultsWriter; stage names the call being made (for tests that
/// check where failures happened).
void write_results(const fs::path& file, const Content& c, const fs::path& source,
                   std::string* stage = nullptr) {
  const auto at = [&](const char* what) {
    if (stage != nullptr) *stage = what;
  };
  at("open");
  ResultsWriter w(file);
  at("attributes");
  w.set_attribute("/", "program", std::string("mor"));
  w.set_attribute("/", "seed", c.seed);
  w.set_attribute("/", "scale", 0.5 * static_cast<double>(c.seed));
  w.set_attribute("/", "orders", std::vector<std::int64_t>{c.seed, 2 * c.seed});
  at("groups");
  w.create_group("/model");
  for (int k = 0; k < 10; ++k)  // more than eight: stored densely
    w.set_attribute("/model", "value_" + std::to_string(k), entry(c.seed, k, 0));
  at("datasets");
  w.write_vector("/deep/v", rows_of(c.seed, 1, 50).col(0));
  w.write_matrix("/deep/A", rows_of(c.seed, 4, 3));
  w.write_integers("/table/N", {c.seed, 100, -1});
  w.write_strings("/table/key", labels(c.seed));
  at("copy");
  w.copy_file_into(source, "/points/p1");
  at("streams");
  mor::io::RowStream& wide = w.open_row_stream("/snapshots/p", c.wide_width, 0);
  mor::io::RowStream& narrow = w.open_row_stream("/outputs/y", kNarrowWidth, 1);
  const Matrix wide_rows = rows_of(c.seed, kWideRows, c.wide_width);
  const Matrix narrow_rows = rows_of(c.seed, kNarrowRows, kNarrowWidth);
  at("append");
  for (Index r = 0; r < kNarrowRows; ++r) {
    if (r < kWideRows) wide.append(wide_rows.col(r));
    narrow.append(narrow_rows.col(r));
  }
  at("commit");
  w.commit();
  at("done");
}

/// The source of the copies: a small results file of its own.
void write_source(const fs::path& file, std::int64_t seed) {
  ResultsWriter w(file);
  w.set_attribute("/", "seed", seed);
  mor::io::RowStream& narrow = w.open_row_stream("/outputs/y", kNarrowWidth, 1);
  const Matrix rows = rows_of(seed, kNarrowRows, kNarrowWidth);
  for (Index r = 0; r < kNarrowRows; ++r) narrow.append(rows.col(r));
  w.commit();
}

/// Passes if file holds exactly what write_results(file, c, source) writes.
::testing::AssertionResult is_complete(const fs::path& file, const Content& c,
                                       const fs::path& source) {
  try {
    const ResultsReader r(file);
    const ResultsReader s(source);
    bool ok = r.attribute_int("/", "seed") == c.seed &&
              r.attribute_double("/", "scale") == 0.5 * static_cast<double>(c.seed) &&
              r.attribute_string("/", "program") == "mor" &&
              r.attribute("/", "orders") ==
                  mor::io::AttributeValue(std::vector<std::int64_t>{c.seed, 2 * c.seed});
    for (int k = 0; k < 10; ++k)
      ok = ok && r.attribute_double("/model", "value_" + std::to_string(k)) == entry(c.seed, k, 0);
    ok = ok && r.read_vector("/deep/v") == rows_of(c.seed, 1, 50).col(0) &&
         r.read_matrix("/deep/A") == rows_of(c.seed, 4, 3) &&
         r.read_vector("/table/N") == Vector((Vector(3) << c.seed, 100, -1).finished()) &&
         r.read_strings("/table/key") == labels(c.seed) &&
         r.read_rows_as_columns("/snapshots/p") == rows_of(c.seed, kWideRows, c.wide_width) &&
         r.read_rows_as_columns("/outputs/y") == rows_of(c.seed, kNarrowRows, kNarrowWidth) &&
         r.read_rows_as_columns("/points/p1/outputs/y") == s.read_rows_as_columns("/outputs/y") &&
         r.attribute_int("/points/p1", "seed") == s.attribute_int("/", "seed");
    if (ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << file << " differs from what was written";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << file << " is not complete: " << e.what();
  }
}

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

/// A message for people: one line, the library's own words, no HDF5 error-stack dump.
::testing::AssertionResult is_plain(const std::string& message) {
  if (message.empty() || message.find('\n') != std::string::npos ||
      message.find("HDF5-DIAG") != std::string::npos ||
      message.find("errno = ") != std::string::npos)
    return ::testing::AssertionFailure() << "not a plain one-line message: \"" << message << "\"";
  return ::testing::AssertionSuccess();
}

/// Disarms fault injection however a test ends.
struct Disarm {
  ~Disarm() {
    h5::fault::fail_call(0);
    h5::fault::fail_write(0, 0);
  }
};

// ---------------------------------------------------------------------------------------------
// Injected failures: every checked HDF5 call, then every file write, in turn.

class ResultsFaults : public mor::testing::TempDirTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    source_ = dir_ / "source.h5";
    final_ = dir_ / "results.h5";
    write_source(source_, 3);
    expected_names_ = {"source.h5"};
    if (with_previous()) {
      write_results(final_, {1, 4}, source_);
      previous_ = bytes_of(final_);
      expected_names_.insert("results.h5");
    }
  }

  bool with_previous() const { return GetParam(); }

  /// After a failure: the previous file unchanged (or none), nothing else left, nothing open.
  void expect_untouched(const std::string& where) {
    EXPECT_EQ(names_in(dir_), expected_names_) << where;
    if (with_previous()) {
      EXPECT_TRUE(bytes_of(final_) == previous_) << where << ": file changed";
    }
    EXPECT_EQ(h5::open_objects(), 0) << where;
  }

  /// After a success: the new file complete; then the previous one put back for the next run.
  void expect_new_and_restore(const Content& c, const std::string& where) {
    EXPECT_TRUE(is_complete(final_, c, source_)) << where;
    auto names = expected_names_;
    names.insert("results.h5");
    EXPECT_EQ(names_in(dir_), names) << where;
    EXPECT_EQ(h5::open_objects(), 0) << where;
    if (with_previous())
      std::ofstream(final_, std::ios::binary) << previous_;
    else
      fs::remove(final_);
  }

  fs::path source_, final_;
  std::string previous_;
  std::set<std::string> expected_names_;
};

TEST_P(ResultsFaults, EveryFailingHdf5CallLeavesThePreviousFileOrTheNewOne) {
  const Disarm disarm;
  // Narrow rows keep the number of calls (and the quadratic cost of this loop) small.
  const Content c{2, 1024};
  h5::fault::fail_call(0);
  write_results(dir_ / "count.h5", c, source_);
  const long calls = h5::fault::calls();
  fs::remove(dir_ / "count.h5");
  ASSERT_GT(calls, 100);
  for (long k = 1; k <= calls + 1; ++k) {
    const std::string where = "failing call " + std::to_string(k) + " of " + std::to_string(calls);
    h5::fault::fail_call(k);
    bool failed = false;
    try {
      write_results(final_, c, source_);
    } catch (const mor::IoError& e) {
      failed = true;
      EXPECT_TRUE(is_plain(e.what())) << where;
      EXPECT_NE(std::string(e.what()).find("injected failure"), std::string::npos)
          << where << ": " << e.what();
      const bool names_a_file = std::string(e.what()).find(final_.string()) != std::string::npos ||
                                std::string(e.what()).find(source_.string()) != std::string::npos;
      EXPECT_TRUE(names_a_file) << where << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": not an IoError: " << e.what();
      failed = true;
    }
    h5::fault::fail_call(0);
    // Every checked call up to the last one must be able to fail the write; one past the last
    // is never made.
    EXPECT_EQ(failed, k <= calls) << where;
    if (failed)
      expect_untouched(where);
    else
      expect_new_and_restore(c, where);
  }
}

TEST_P(ResultsFaults, EveryFailingWriteLeavesThePreviousFileOrTheNewOne) {
  const Disarm disarm;
  const Content c{2, 65536};
  h5::fault::fail_write(0, 0);
  write_results(dir_ / "count.h5", c, source_);
  const long writes = h5::fault::writes();
  fs::remove(dir_ / "count.h5");
  ASSERT_GT(writes, 3);
  std::set<std::string> stages;
  for (long k = 1; k <= writes + 1; ++k) {
    const std::string where =
        "failing write " + std::to_string(k) + " of " + std::to_string(writes);
    h5::fault::fail_write(k, ENOSPC);
    std::string stage;
    bool failed = false;
    try {
      write_results(final_, c, source_, &stage);
    } catch (const mor::IoError& e) {
      failed = true;
      stages.insert(stage);
      EXPECT_TRUE(is_plain(e.what())) << where;
      EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos)
          << where << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(final_.string()), std::string::npos)
          << where << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << where << ": not an IoError: " << e.what();
      failed = true;
    }
    h5::fault::fail_write(0, 0);
    EXPECT_EQ(failed, k <= writes) << where << " (at " << stage << ")";
    if (failed)
      expect_untouched(where + " (at " + stage + ")");
    else
      expect_new_and_restore(c, where);
  }
  // The disk fills up while rows are streamed and while the file is closed at commit.
  EXPECT_TRUE(stages.count("append") == 1 && stages.count("commit") == 1)
      << "failures seen at: " << ::testing::PrintToString(stages);
}

TEST_P(ResultsFaults, NothingIsLeftForHdf5ToCloseAtExit) {
  // HDF5 closes what is still open when the process exits; after a failed close of HDF5 1.10
  // that would be a freed file, and the exit a segmentation fault. The child process fails
  // writes at a few places, streaming and at commit, then exits through exit().
  const Content c{2, 65536};
  h5::fault::fail_write(0, 0);
  write_results(dir_ / "count.h5", c, source_);
  const long writes = h5::fault::writes();
  fs::remove(dir_ / "count.h5");
  const auto child = [&] {
    for (const long k : {long{1}, writes / 2, writes - 1, writes}) {
      h5::fault::fail_write(k, ENOSPC);
      try {
        write_results(final_, c, source_);
      } catch (const mor::IoError&) {
      }
    }
    h5::fault::fail_write(0, 0);
    std::exit(h5::open_objects() == 0 ? 0 : 1);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "");
  expect_untouched("after the child");
}

INSTANTIATE_TEST_SUITE_P(PreviousFile, ResultsFaults, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "present" : "absent";
                         });

// ---------------------------------------------------------------------------------------------
// A real full disk: a 2 MiB tmpfs.

struct ChildOutcome {
  bool exited = false;  ///< ended by exit(), not by a signal
  int code = -1;        ///< exit code, or the signal number
  std::string output;   ///< stdout and stderr
};

/// Runs body in a child process (its return value is the exit code, through std::exit, so that
/// HDF5's exit-time clean-up runs) or, with argv, the program argv[0]; collects its output.
ChildOutcome run_child(const std::function<int()>& body,
                       const std::vector<std::string>& argv = {}) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    if (!argv.empty()) {
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    std::exit(body());
  }
  close(fds[1]);
  ChildOutcome out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) out.output.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.exited = WIFEXITED(status);
  out.code = out.exited ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : -1;
  return out;
}

class DiskFull : public mor::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    disk_ = dir_ / "disk";
    fs::create_directories(disk_);
    if (mount("tmpfs", disk_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0755") != 0)
      GTEST_SKIP() << "cannot mount a 2 MiB tmpfs at " << disk_ << " (" << std::strerror(errno)
                   << "; needs root or CAP_SYS_ADMIN): the disk-full tests are skipped";
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(disk_.c_str(), MNT_DETACH);
    TempDirTest::TearDown();
  }

  /// Fills the disk up to `left` free bytes.
  void fill_leaving(std::uintmax_t left) {
    const std::uintmax_t free = fs::space(disk_).available;
    ASSERT_GT(free, left);
    std::ofstream(disk_ / "filler", std::ios::binary) << std::string(free - left, 'x');
  }

  /// The checks every full-disk case ends with.
  void expect_failed_cleanly(const ChildOutcome& o, const fs::path& file,
                             const std::string& previous) {
    EXPECT_TRUE(o.exited) << "ended by signal " << o.code << "; output:\n" << o.output;
    EXPECT_NE(o.code, 0) << o.output;
    std::string line = o.output;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    EXPECT_TRUE(is_plain(line));
    EXPECT_NE(line.find(std::strerror(ENOSPC)), std::string::npos) << line;
    EXPECT_NE(line.find(file.filename().string()), std::string::npos) << line;
    EXPECT_TRUE(bytes_of(file) == previous) << file << " changed";
    for (const auto& name : names_in(disk_))
      EXPECT_EQ(name.find(".tmp-"), std::string::npos) << "left behind: " << name;
  }

  fs::path disk_;
  bool mounted_ = false;
};

/// A child's body: writes a file of `rows` rows of width `width` through the library; a failure
/// is printed as the program would print it, with exit code 1.
int write_stream(const fs::path& file, Index rows, Index width) {
  try {
    ResultsWriter w(file);
    mor::io::RowStream& s = w.open_row_stream("/snapshots/p", width, 0);
    const Vector row = Vector::LinSpaced(width, 0.0, 1.0);
    for (Index r = 0; r < rows; ++r) s.append(row);
    w.commit();
    return 0;
  } catch (const mor::IoError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

TEST_F(DiskFull, LibraryFailsWithAMessageAndExitsWithoutASignal) {
  const fs::path file = disk_ / "results.h5";
  ASSERT_EQ(run_child([&] { return write_stream(file, 10, 1000); }).code, 0);
  const std::string previous = bytes_of(file);
  // While streaming: 4 MiB of rows in chunks of 1 MiB, written as the stream grows.
  expect_failed_cleanly(run_child([&] { return write_stream(file, 512, 1000); }), file, previous);
  // At commit: 100 kB of rows stay in the chunk cache until commit, with 50 kB free.
  fill_leaving(50'000);
  expect_failed_cleanly(run_child([&] { return write_stream(file, 12, 1000); }), file, previous);
  // Nothing free at all: the file cannot even be created.
  fs::remove(disk_ / "filler");
  fill_leaving(0);
  expect_failed_cleanly(run_child([&] { return write_stream(file, 1, 10); }), file, previous);
}

TEST_F(DiskFull, MorRunFailsWithAMessageAndExitsWithoutASignal) {
  const char* bin = std::getenv("MOR_BINARY_DIR");
  const char* src = std::getenv("MOR_SOURCE_DIR");
  if (bin == nullptr || src == nullptr || !fs::exists(fs::path(bin) / "bin" / "mor"))
    GTEST_SKIP() << "the mor program is not built (MOR_BINARY_DIR, MOR_SOURCE_DIR unset)";
  const std::string mor = (fs::path(bin) / "bin" / "mor").string();
  const std::string experiment = (fs::path(src) / "experiments" / "chain_simulation.toml").string();
  const fs::path file = disk_ / "default.h5";
  // Snapshots of p and v at every step; uncompressed, each is a chunk of 1 MiB from the first row.
  const auto run = [&](const std::string& t_end, const std::string& compression) {
    return run_child({}, {mor, "run", experiment, "-o", file.string(), "--no-plots", "-q", "--set",
                          "simulation.t_end=" + t_end, "--set", "output.compression=" + compression,
                          "--set", "output.snapshot_stride=1"});
  };
  const ChildOutcome first = run("1", "1");
  ASSERT_TRUE(first.exited && first.code == 0) << first.output;
  const std::string previous = bytes_of(file);
  // 2 MiB of snapshots do not fit: the disk fills up while streaming (the second chunk).
  expect_failed_cleanly(run("20", "0"), file, previous);
  // Compressed, the run fits on the empty disk but not in the 100 kB left: fails at commit.
  fill_leaving(100'000);
  expect_failed_cleanly(run("20", "1"), file, previous);
}

// `mor export` on a full disk: every file of the set goes to a temporary first (matio and CHOLMOD
// write into memory, the copy checks every write), so the disk filling up ends with one line
// naming the file and "No space left on device", exit 2, the earlier set byte for byte, no
// temporary and no file of the new set. Before, a .mat export printed "wrote", exited 0 and left
// 0 bytes; a MatrixMarket one said "CHOLMOD status -4 (invalid input)" and left part of the set.
TEST_F(DiskFull, MorExportFailsWithAMessageAndLeavesTheEarlierSet) {
  const char* bin = std::getenv("MOR_BINARY_DIR");
  const char* src = std::getenv("MOR_SOURCE_DIR");
  if (bin == nullptr || src == nullptr || !fs::exists(fs::path(bin) / "bin" / "mor"))
    GTEST_SKIP() << "the mor program is not built (MOR_BINARY_DIR, MOR_SOURCE_DIR unset)";
  const std::string mor = (fs::path(bin) / "bin" / "mor").string();
  const std::string chain = (fs::path(src) / "experiments" / "bt_chain.toml").string();
  const auto do_export = [&](const std::string& source, const std::string& format,
                             const fs::path& out, const std::string& N) {
    std::vector<std::string> argv = {mor,    "export", source,      "--format",
                                     format, "--out",  out.string()};
    if (!N.empty()) argv.insert(argv.end(), {"--set", "model.N=" + N});
    return run_child({}, argv);
  };
  /// The files of the disk whose names start with prefix, with their bytes.
  const auto set_of = [&](const std::string& prefix) {
    std::map<std::string, std::string> files;
    for (const auto& name : names_in(disk_))
      if (name.compare(0, prefix.size(), prefix) == 0) files[name] = bytes_of(disk_ / name);
    return files;
  };
  // A reduced model in a results file (outside the full disk), read in a child process.
  const fs::path results = dir_ / "bt.h5";
  const ChildOutcome run =
      run_child({}, {mor, "run", chain, "-o", results.string(), "--no-plots", "-q", "--set",
                     "model.N=20", "--set", "simulation.t_end=1", "--set", "reduction.order=4"});
  ASSERT_TRUE(run.exited && run.code == 0) << run.output;

  for (const std::string format : {"mat", "mat73", "mtx"}) {
    SCOPED_TRACE(format);
    const fs::path out = disk_ / (format == "mtx" ? "m" : "m.mat");
    const std::string prefix = out.filename().string();
    /// One plain line naming a file of the set and the reason; the earlier set as it was.
    const auto expect_refused = [&](const ChildOutcome& o,
                                    const std::map<std::string, std::string>& earlier) {
      EXPECT_TRUE(o.exited && o.code == 2) << o.code << ": " << o.output;
      std::string line = o.output;
      if (!line.empty() && line.back() == '\n') line.pop_back();
      EXPECT_TRUE(is_plain(line));
      EXPECT_NE(line.find(std::strerror(ENOSPC)), std::string::npos) << line;
      EXPECT_NE(line.find("'" + (disk_ / prefix).string()), std::string::npos) << line;
      EXPECT_EQ(set_of(prefix), earlier);
      for (const auto& name : names_in(disk_))
        EXPECT_EQ(name.find(".tmp-"), std::string::npos) << "left behind: " << name;
    };
    // The earlier set: the chain at N = 20.
    ChildOutcome o = do_export(chain, format, out, "20");
    ASSERT_TRUE(o.exited && o.code == 0) << o.output;
    const auto earlier = set_of(prefix);
    ASSERT_FALSE(earlier.empty());
    // The chain at N = 3 10^5 needs more than the 2 MiB.
    expect_refused(do_export(chain, format, out, "300000"), earlier);
    // Nothing free at all: the reduced model of the results file (the child's path) fails too.
    // There matio's v7.3 writer leaves two HDF5 buffers (about 1 kB each, allocated inside
    // libhdf5, no frame of ours) behind after HDF5's write failed and Mat_Close ran; the export's
    // parent writes, so under LeakSanitizer they were reported at its exit. That one export runs
    // without the leak check; every other case here keeps it.
    fill_leaving(0);
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string asan_before = asan == nullptr ? "" : asan;
    if (mor::testing::kAddressSanitizer && format == "mat73")
      setenv("ASAN_OPTIONS",
             (asan_before + (asan_before.empty() ? "" : ":") + "detect_leaks=0").c_str(), 1);
    const ChildOutcome full = do_export(results.string(), format, out, "");
    if (asan == nullptr)
      unsetenv("ASAN_OPTIONS");
    else
      setenv("ASAN_OPTIONS", asan_before.c_str(), 1);
    expect_refused(full, earlier);
    fs::remove(disk_ / "filler");
    for (const auto& [name, bytes] : earlier) fs::remove(disk_ / name);
  }
}

}  // namespace
