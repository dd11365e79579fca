// SPDX-License-Identifier: GPL-3.0-or-later
// Inputs a careless or hostile user gives `mor` (issue 29): files that are not regular files
// (FIFOs, /dev/zero, symlink loops), tiny files declaring huge sizes, runs and exports that
// cannot fit in memory, rk4 beyond its stability limit, step counts beyond the documented
// limit, and the messages of broken models. Each ends at once with exit 2 and one line naming
// the file, the matrix and the value; nothing is written. Commands that blocked or grew for
// ever before run under `timeout` and `ulimit -v`, so a regression fails instead of hanging.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "src/core/errors.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/model_files.hpp"
#include "support/mor_cli.hpp"
#include "support/sanitizers.hpp"
#include "support/source_dir.hpp"

namespace fs = std::filesystem;

namespace {

using mor::testing::expect_contains;
using mor::testing::Outcome;

class InputFaults : public mor::testing::MorCliTest {
 protected:
  /// A small first-order model as MatrixMarket files P.E/A/B/C.mtx (n = 2), E and A given.
  void write_model(const std::string& prefix, const std::string& E_body = "2 2 2\n1 1 1\n2 2 1\n",
                   const std::string& A_body = "2 2 2\n1 1 -1\n2 2 -2\n") const {
    std::ofstream(dir_ / (prefix + ".E.mtx")) << "%%MatrixMarket matrix coordinate real general\n"
                                              << E_body;
    std::ofstream(dir_ / (prefix + ".A.mtx")) << "%%MatrixMarket matrix coordinate real general\n"
                                              << A_body;
    std::ofstream(dir_ / (prefix + ".B.mtx"))
        << "%%MatrixMarket matrix coordinate real general\n2 1 1\n1 1 1\n";
    std::ofstream(dir_ / (prefix + ".C.mtx"))
        << "%%MatrixMarket matrix coordinate real general\n1 2 1\n1 2 1\n";
  }

  /// An experiment file on a file model: model_lines go into [model] (type = "file").
  fs::path file_experiment(const std::string& model_lines,
                           const std::string& input_lines = "type = \"step\"\n") const {
    const fs::path file = dir_ / "exp.toml";
    std::ofstream(file) << "[experiment]\nname = \"t\"\noutput = \"r.h5\"\n[model]\ntype = "
                           "\"file\"\n"
                        << model_lines << "\n[input]\n"
                        << input_lines
                        << "[simulation]\ndt = 0.1\nt_end = 1.0\n[output]\nplots = false\n";
    return file;
  }

  /// The chain (N = 20) with the given extra [model] and [simulation] lines.
  fs::path chain_experiment(const std::string& model_lines, const std::string& sim_lines) const {
    const fs::path file = dir_ / "chain.toml";
    std::ofstream(file) << "[experiment]\nname = \"t\"\noutput = \"r.h5\"\n[model]\nN = 20\n"
                        << model_lines << "\n[input]\ntype = \"sine\"\n[simulation]\n"
                        << sim_lines << "\n[output]\nplots = false\n";
    return file;
  }

  /// `mor args` under `timeout -k 5 30` (exit 124, or 137 after SIGKILL: the blocked open ignored
  /// SIGTERM) and a 4 GiB address-space limit.
  Outcome bounded(const std::string& args) const {
    return shell(address_limit(4194304) + "timeout -k 5 30 '" + mor_.string() + "' " + args);
  }

  /// `ulimit -v kib; `, or nothing under AddressSanitizer (which could not start under it; the
  /// tests that are about the limit itself skip there).
  static std::string address_limit(long kib) {
    return mor::testing::kAddressSanitizer ? "" : "ulimit -v " + std::to_string(kib) + "; ";
  }

  bool nothing_written() const { return !fs::exists(dir_ / "r.h5"); }

  void make_fifo(const std::string& name) const {
    ASSERT_EQ(::mkfifo((dir_ / name).c_str(), 0600), 0) << name;
  }
};

// Item 4: a FIFO blocks the open (and the read) for ever; /dev/zero never ends.
TEST_F(InputFaults, FifoAsModelPathIsRefusedByName) {
  make_fifo("fifo.mat");
  const Outcome o = bounded("run " + file_experiment("path = \"fifo.mat\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "fifo.mat' is a FIFO (named pipe), not a regular file");
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, FifoAmongModelFilesIsRefusedByName) {
  write_model("m");
  make_fifo("a.fifo");
  const Outcome o = bounded(
      "run " + file_experiment("files = { E = \"m.E.mtx\", A = \"a.fifo\", B = \"m.B.mtx\", "
                               "C = \"m.C.mtx\" }")
                   .string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "a.fifo' is a FIFO (named pipe), not a regular file");
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, FifoNamedLikeAMatrixIsNotSkipped) {
  write_model("m");
  fs::remove(dir_ / "m.A.mtx");
  make_fifo("m.A.mtx");
  const Outcome o = bounded("run " + file_experiment("path = \"m\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "m.A.mtx' is a FIFO (named pipe), not a regular file");
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, FifoAndDevZeroAsInputTableAreRefused) {
  write_model("m");
  make_fifo("u.fifo");
  for (const std::string table : {"u.fifo", "/dev/zero"}) {
    const auto start = std::chrono::steady_clock::now();
    const Outcome o = bounded(
        "run " +
        file_experiment("path = \"m\"", "type = \"table\"\nfile = \"" + table + "\"\n").string());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(o.exit_code, 2) << table << ": " << o.output;
    expect_contains(o, table + "' is a");
    expect_contains(o, "not a regular file");
    EXPECT_LT(seconds, 10.0) << table;
  }
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, DevZeroAsMatrixMarketFileIsRefusedAtOnce) {
  write_model("m");
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = bounded(
      "run " + file_experiment("files = { E = \"m.E.mtx\", A = \"/dev/zero\", B = \"m.B.mtx\", "
                               "C = \"m.C.mtx\" }")
                   .string());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "'/dev/zero' is a character device, not a regular file");
  EXPECT_LT(seconds, 10.0);
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, SymlinkLoopIsNamedAsSuch) {
  fs::create_symlink("loop.mat", dir_ / "loop.mat");
  const Outcome o = bounded("run " + file_experiment("path = \"loop.mat\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "loop.mat' cannot be opened: too many levels of symbolic links");
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, ReadersRefuseNonRegularFilesDirectly) {
  make_fifo("x.mtx");
  EXPECT_THROW(mor::io::read_matrix_market(dir_ / "x.mtx"), mor::IoError);
  EXPECT_THROW(mor::io::read_matrix_market("/dev/zero"), mor::IoError);
  EXPECT_THROW(mor::io::mat_variable_names(dir_ / "x.mtx"), mor::IoError);
  EXPECT_THROW(mor::io::mat_variable_names("/dev/zero"), mor::IoError);
}

// Item 5: a 3-line file declaring 10^9 x 10^9 made CHOLMOD allocate 15.6 GB before the size
// of B was judged.
TEST_F(InputFaults, DeclaredSizeIsCheckedBeforeAnythingIsAllocated) {
  write_model("m");
  std::ofstream(dir_ / "m.B.mtx") << "%%MatrixMarket matrix coordinate real general\n"
                                  << "1000000000 1000000000 1\n1 1 1\n";
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = bounded("run " + file_experiment("path = \"m\"").string());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o,
                  "m.B.mtx': B (variable 'B', declared 1000000000x1000000000) must have n = 2 "
                  "rows (A 'A' is 2x2); nothing was read");
  EXPECT_LT(seconds, 10.0);
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, DeclaredSizeBeyondMemoryIsRefusedByTheReader) {
  if (mor::testing::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS here";
  // Alone, with nothing to compare against: against the memory this process may use.
  std::ofstream(dir_ / "big.mtx") << "%%MatrixMarket matrix coordinate real general\n"
                                  << "2000000000 2000000000 1\n1 1 1\n";
  const Outcome o = shell(address_limit(1048576) + "timeout -k 5 30 '" + mor_.string() + "' run " +
                          file_experiment("files = { A = \"big.mtx\", B = \"big.mtx\", "
                                          "C = \"big.mtx\" }")
                              .string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "MiB to read");
  expect_contains(o, "RLIMIT_AS");
  EXPECT_TRUE(nothing_written());
}

// Item 6: compare the estimate with the hard limits before starting.
TEST_F(InputFaults, RunAboveTheAddressSpaceLimitIsRefusedUpFront) {
  if (mor::testing::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS here";
  const Outcome o = shell(address_limit(2097152) + "timeout -k 5 60 '" + mor_.string() + "' run '" +
                          (mor::testing::source_dir() / "experiments/bt_chain.toml").string() +
                          "' -o r.h5 --set model.N=3000000 --no-plots");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "the run needs about");
  expect_contains(o, "MiB (the address-space limit RLIMIT_AS (ulimit -v 2097152 kB)");
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, ExportAboveTheMemoryLimitIsRefusedUpFront) {
  const Outcome o =
      shell(address_limit(2097152) + "timeout -k 5 60 '" + mor_.string() + "' export '" +
            chain_experiment("k_n = 0", "dt = 0.1\nt_end = 1.0").string() +
            "' --set model.N=200000000 --format mat --out x.mat");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "building the model needs about");
  expect_contains(o, "estimate for n = 200000000");
  EXPECT_FALSE(fs::exists(dir_ / "x.mat"));
}

// A lattice is a matrix-built model: reading its file must not build it, so that --dry-run, the
// memory guard and mor export refuse a lattice of 2.25e8 nodes before allocating (it was
// killed by the OOM killer while the file was read).
TEST_F(InputFaults, HugeLatticeIsRefusedBeforeItIsBuilt) {
  const std::string file =
      (mor::testing::source_dir() / "experiments/pod_deim_lattice.toml").string();
  const Outcome dry = shell(address_limit(2097152) + "timeout -k 5 60 '" + mor_.string() +
                            "' run '" + file + "' --dry-run --set model.nx=15000");
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  expect_contains(dry, "Model lattice of size 225000000");
  const Outcome run = shell(address_limit(2097152) + "timeout -k 5 60 '" + mor_.string() +
                            "' run '" + file + "' -o r.h5 --set model.nx=15000 --no-plots");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  expect_contains(run, "the run needs about");
  EXPECT_TRUE(nothing_written());
  const Outcome exported =
      shell(address_limit(2097152) + "timeout -k 5 60 '" + mor_.string() + "' export '" + file +
            "' --set model.nx=15000 --format mat --out x.mat");
  EXPECT_EQ(exported.exit_code, 2) << exported.output;
  expect_contains(exported, "building the model needs about");
  EXPECT_FALSE(fs::exists(dir_ / "x.mat"));
}

// Item 8: the undamped linear chain has omega_max ~ 2 (k = m = 1): rk4 is stable for
// dt <= 2 sqrt(2) / omega_max ~ 1.418 (N = 20); dt = 1.5 stored |y| = 4.3e29 before. The
// nonlinear chain (hardening cubic springs) has that limit in its linearisation about rest, which
// rk4 meets as soon as rounding excites the top mode: refused up front too (before, it ran into
// "the state is not finite" at exit 3 after part of the run). Below the limit each run is
// accepted (and bounded): just below it for the linear chain, at dt = 0.5 for the nonlinear one,
// whose springs stiffen as the input drives them.
TEST_F(InputFaults, Rk4BeyondItsStabilityLimitIsRefusedBeforeTheRun) {
  struct Case {
    const char* model;
    const char* accepted;  // [simulation] lines of a run below the limit
  };
  for (const Case& k : {Case{"k_n = 0\nd = 0", "dt = 1.4\nt_end = 140.0"},
                        Case{"k_n = 1\nd = 0", "dt = 0.5\nt_end = 50.0"}}) {
    SCOPED_TRACE(k.model);
    const Outcome o = bounded(
        "run " +
        chain_experiment(k.model, "integrator = \"rk4\"\ndt = 1.5\nt_end = 150.0").string());
    EXPECT_EQ(o.exit_code, 2) << o.output;
    expect_contains(
        o, "rk4 with dt = 1.5 is unstable on this model: its stability limit is dt <= 1.41");
    EXPECT_TRUE(nothing_written());
    const Outcome ok = bounded(
        "run " +
        chain_experiment(k.model, std::string("integrator = \"rk4\"\n") + k.accepted).string() +
        " -q");
    EXPECT_EQ(ok.exit_code, 0) << ok.output;
    fs::remove(dir_ / "r.h5");  // the accepted run's results, before the next refusal
  }
}

// Item 7: dt = 1e-12 over t_end = 1 is 10^12 steps.
TEST_F(InputFaults, StepCountAboveTheLimitIsRefusedUnlessTheFileSaysSo) {
  const Outcome o =
      bounded("run " + chain_experiment("", "dt = 1e-12\nt_end = 1.0").string() + " --dry-run");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "steps, above simulation.max_steps = 100000000");
  const Outcome meant = bounded(
      "run " + chain_experiment("", "dt = 1e-12\nt_end = 1.0\nmax_steps = 1000000000000").string() +
      " --dry-run");
  EXPECT_EQ(meant.exit_code, 0) << meant.output;
}

// Item 10: messages that named the wrong matrix, no file or an empty list.
TEST_F(InputFaults, BrokenModelMessagesNameTheFileTheMatrixAndTheValue) {
  write_model("zero", "2 2 0\n");
  Outcome o = bounded("run " + file_experiment("path = \"zero\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "zero\": E is singular");
  expect_contains(o, "its column 1 (1-based) has no nonzero entry; it is all zeros");

  // A structurally full but singular E: the LU names a column of E, not "of A".
  write_model("sing", "2 2 4\n1 1 1\n1 2 1\n2 1 1\n2 2 1\n");
  o = bounded("run " + file_experiment("path = \"sing\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "sing\": E is singular");
  EXPECT_EQ(o.output.find(" of A "), std::string::npos) << o.output;

  // M = -I in a second-order model.
  for (const auto& [name, body] :
       {std::pair<std::string, std::string>{"M", "2 2 2\n1 1 -1\n2 2 -1\n"},
        {"K", "2 2 2\n1 1 1\n2 2 1\n"},
        {"B", "2 1 1\n1 1 1\n"},
        {"Cp", "1 2 1\n1 2 1\n"}})
    std::ofstream(dir_ / ("so." + name + ".mtx"))
        << "%%MatrixMarket matrix coordinate real general\n"
        << body;
  o = bounded("run " + file_experiment("path = \"so\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "so\": the mass matrix M (2x2) is symmetric but not positive definite");
  expect_contains(o, "M(1, 1) = -1");

  // A MAT v5 file with a valid header and no variables.
  {
    std::ofstream f(dir_ / "empty.mat", std::ios::binary);
    std::string header(116, ' ');
    header.replace(0, 10, "MATLAB 5.0");
    f << header << std::string(8, '\0') << '\x00' << '\x01' << 'I' << 'M';
  }
  o = bounded("run " + file_experiment("path = \"empty.mat\"").string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "empty.mat");
  expect_contains(o, "it has no variables or matrices at all");
  EXPECT_TRUE(nothing_written());
}

TEST_F(InputFaults, JobsZeroIsNamedPlainly) {
  const Outcome o =
      mor("sweep '" + (mor::testing::source_dir() / "experiments/default_sweep.toml").string() +
          "' --list --jobs 0");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "--jobs");
  EXPECT_LT(o.output.size(), 300u) << o.output;
}

// Item 12: duplicate MatrixMarket entries and duplicate MAT variable names.
TEST_F(InputFaults, DuplicateEntriesAreRefusedInSymmetricFilesAndReportedInGeneralOnes) {
  std::ofstream(dir_ / "sym.mtx") << "%%MatrixMarket matrix coordinate real symmetric\n"
                                  << "2 2 3\n1 1 1\n2 1 0.5\n2 1 0.5\n";
  try {
    mor::io::read_matrix_market(dir_ / "sym.mtx");
    FAIL() << "a symmetric file with a repeated entry was read";
  } catch (const mor::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("gives entry (2, 1) more than once"), std::string::npos)
        << e.what();
  }
  write_model("dup", "2 2 3\n1 1 1\n2 2 0.5\n2 2 0.5\n");
  mor::io::ModelFileSpec spec;
  spec.path = dir_ / "dup";
  const auto model = mor::io::import_model(spec);
  // Summed, as CHOLMOD and scipy do: E(2, 2) = 1; and said in the report.
  const auto& E = std::get<mor::DescriptorSystem>(model.system).E;
  EXPECT_EQ(E.coeff(1, 1), 1.0);
  bool said = false;
  for (const auto& w : model.report.warnings)
    said = said || w.find("E (matrix 'E') gives 1 entries more than once (first (2, 2))") !=
                       std::string::npos;
  EXPECT_TRUE(said) << mor::io::describe(model.report);
}

/// A MAT v4 variable: a 1x1 double named name with value x (little endian).
void append_v4_scalar(std::ofstream& f, const std::string& name, double x) {
  const std::int32_t header[5] = {0, 1, 1, 0, static_cast<std::int32_t>(name.size() + 1)};
  f.write(reinterpret_cast<const char*>(header), sizeof header);
  f.write(name.c_str(), static_cast<std::streamsize>(name.size() + 1));
  f.write(reinterpret_cast<const char*>(&x), sizeof x);
}

TEST_F(InputFaults, DuplicateMatVariableNamesAreRefused) {
  {
    std::ofstream f(dir_ / "twice.mat", std::ios::binary);
    append_v4_scalar(f, "A", 1.0);
    append_v4_scalar(f, "B", 2.0);
    append_v4_scalar(f, "A", 3.0);
  }
  try {
    mor::io::mat_variable_names(dir_ / "twice.mat");
    FAIL() << "two variables named A were taken";
  } catch (const mor::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 2 variables named 'A'"), std::string::npos)
        << e.what();
  }
}

/// The memory estimate `mor run --dry-run` printed (MiB), -1 if none.
double estimate_mib(const Outcome& o) {
  const auto at = o.output.find(" s, about ");
  return at == std::string::npos ? -1.0 : std::atof(o.output.c_str() + at + 10);
}

// Issue 44 s.4. A 2.9 KB network .mat whose sparse G declared 2e8 rows (elements acting on
// nothing) took 17 s and 7.8 GB to --dry-run, then "valid ... about 48 MiB", and `mor run` ended
// "out of memory"; a MatrixMarket G declaring 1e9 rows got "CHOLMOD status -2". The declared
// elements are held to the memory budget before G is read, and the estimate counts them.
class NetworkClaims : public InputFaults {
 protected:
  /// A network of n = 4 masses in files P.* (MatrixMarket) or P.mat whose G declares m rows,
  /// with `entries` of them one entry each (an element on one mass); its experiment file.
  fs::path network(const std::string& prefix, mor::Index m, bool mat,
                   mor::Index entries = 4) const {
    const mor::Index n = 4;
    mor::SparseMatrix I(n, n), G(m, n);
    I.setIdentity();
    // Column by column, never per row (setFromTriplets would be: 2e8 rows).
    G.reserve(Eigen::VectorXi::Constant(n, static_cast<int>(entries / n + 1)));
    for (mor::Index k = 0; k < entries; ++k) G.insert(k, k % n) = 1.0;
    G.makeCompressed();
    mor::Matrix B = mor::Matrix::Zero(n, 1), Cp = mor::Matrix::Zero(1, n), phi(1, 4);
    B(n - 1, 0) = 1.0;
    Cp(0, 0) = 1.0;
    phi << 0.0, 1.0, 0.0, 0.0;
    const std::vector<mor::io::NamedMatrix> vars = {{"M", I},
                                                    {"D", mor::SparseMatrix(0.1 * I)},
                                                    {"K", mor::SparseMatrix(2.0 * I)},
                                                    {"B", B},
                                                    {"Cp", Cp},
                                                    {"Cv", mor::Matrix(mor::Matrix::Zero(1, n))},
                                                    {"G", G},
                                                    {"phi", phi}};
    if (mat) {
      mor::io::write_mat(dir_ / (prefix + ".mat"), vars);
    } else {
      for (const auto& v : vars)
        if (v.name != "G")
          std::visit(
              [&](const auto& x) {
                mor::io::write_matrix_market(dir_ / (prefix + "." + v.name + ".mtx"), x);
              },
              v.value);
      std::ofstream(dir_ / (prefix + ".G.mtx"))
          << "%%MatrixMarket matrix coordinate real general\n"
          << m << " " << n << " " << n << "\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n";
    }
    const fs::path file = dir_ / (prefix + ".toml");
    std::ofstream(file) << "[experiment]\nname = \"t\"\noutput = \"r.h5\"\n[model]\ntype = "
                           "\"network\"\npath = \""
                        << prefix << (mat ? ".mat" : "")
                        << "\"\n[input]\ntype = \"step\"\n[simulation]\ndt = 0.1\nt_end = 1.0\n"
                           "[output]\nplots = false\n";
    return file;
  }
};

TEST_F(NetworkClaims, GDeclaringMoreElementsThanMemoryIsRefusedBeforeItIsRead) {
  if (mor::testing::kAddressSanitizer)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS here";
  // Under the 4 GiB of bounded(): 2e8 elements need about 9 GiB to build.
  for (const bool mat : {true, false}) {
    SCOPED_TRACE(mat ? "MAT" : "MatrixMarket");
    const mor::Index m = mat ? 200'000'000 : 1'000'000'000;
    const fs::path file = network(mat ? "big" : "huge", m, mat);
    if (mat) EXPECT_LT(fs::file_size(dir_ / "big.mat"), 4096u) << "a tiny file";
    for (const char* how : {" --dry-run", " -o r.h5 --no-plots"}) {
      const auto start = std::chrono::steady_clock::now();
      const Outcome o = bounded("run " + file.string() + how);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_EQ(o.exit_code, 2) << o.output;
      expect_contains(o, "G (variable 'G', declared " + std::to_string(m) + "x4) declares m = " +
                             std::to_string(m) + " elements; building the network needs about ");
      expect_contains(o, "this process may use");
      EXPECT_LT(seconds, 10.0);
      EXPECT_TRUE(nothing_written());
    }
  }
}

// What the file holds, once G is read: every row an element acting on some coordinate. The
// issue's file (2e8 rows over 20 entries) meets this where the memory would allow building it.
TEST_F(NetworkClaims, EmptyRowsOfGAreRefused) {
  const Outcome claimed =
      bounded("run " + network("claimed", 1'000'000, true).string() + " --dry-run");
  EXPECT_EQ(claimed.exit_code, 2) << claimed.output;
  expect_contains(claimed,
                  "G (variable 'G', 1000000x4) declares m = 1000000 elements (rows) but stores 4 "
                  "entries: at least 999996 of its rows are empty");
  const fs::path file = network("gap", 4, false);  // G replaced: 5 rows, the last empty
  std::ofstream(dir_ / "gap.G.mtx") << "%%MatrixMarket matrix coordinate real general\n"
                                    << "5 4 5\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n4 1 -1\n";
  const Outcome gap = bounded("run " + file.string() + " --dry-run");
  EXPECT_EQ(gap.exit_code, 2) << gap.output;
  expect_contains(gap, ": row 5 (1-based) is empty, an element that acts on no coordinate");
}

TEST_F(NetworkClaims, ElementsThatFitAreInTheEstimate) {
  // 10^6 elements: about 76 MiB at 80 bytes each; the 4 masses alone are 48 MiB.
  const Outcome few = bounded("run " + network("few", 4, true).string() + " --dry-run");
  const Outcome many =
      bounded("run " + network("many", 1'000'000, true, 1'000'000).string() + " --dry-run");
  ASSERT_EQ(few.exit_code, 0) << few.output;
  ASSERT_EQ(many.exit_code, 0) << many.output;
  EXPECT_LT(estimate_mib(few), 60.0) << few.output;
  EXPECT_GT(estimate_mib(many), estimate_mib(few) + 70.0) << many.output;
}

// Issue 44 s.4: the multibody runs keep every output. simulation.output_dt = 1e-9 grew 12 MB/s
// for ever; linear.t_end = 1e9, linear.output_dt = 1e-9 and analysis.bode_points = 2e9 ended in
// "out of memory". Held to the step limit of the other kinds when the file is read (exit 2),
// and the estimate of --dry-run counts the outputs below it.
TEST_F(InputFaults, MultibodyOutputCountsAreHeldToTheStepLimit) {
  const std::string a01 = (mor::testing::source_dir() / "experiments/a01_pendulum.toml").string();
  struct Case {
    const char* set;
    const char* message;
  };
  for (const Case& k :
       {Case{"simulation.output_dt=1e-9",
             "simulation.t_end / output_dt = 10 / 1e-09 = 10000000000 "
             "outputs, above the limit of 100000000"},
        Case{"linear.output_dt=1e-9",
             "linear.t_end / output_dt = 10 / 1e-09 = 10000000000 outputs"},
        Case{"linear.t_end=1e9",
             "linear.t_end / output_dt = 1000000000 / 0.01 = 100000000000 outputs"},
        Case{"analysis.bode_points=2000000000",
             "analysis.bode_points must be 0 (none) or in 2..1000000, got 2000000000"}}) {
    SCOPED_TRACE(k.set);
    for (const char* how : {" --dry-run", " -o r.h5 --no-plots"}) {
      const Outcome o = bounded("run '" + a01 + "' --set " + k.set + how);
      EXPECT_EQ(o.exit_code, 2) << o.output;
      expect_contains(o, k.message);
      EXPECT_TRUE(nothing_written());
    }
  }
  // 10^6 outputs of the benchmark run: about 80 bytes for each of its 5 values (A01 measured 69).
  const Outcome dense = bounded("run '" + a01 + "' --dry-run --set simulation.output_dt=1e-5");
  const Outcome plain = bounded("run '" + a01 + "' --dry-run");
  ASSERT_EQ(dense.exit_code, 0) << dense.output;
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_GT(estimate_mib(dense), estimate_mib(plain) + 300.0) << dense.output;
}

}  // namespace
