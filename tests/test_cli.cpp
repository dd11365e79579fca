// SPDX-License-Identifier: GPL-3.0-or-later
// The `mor` program as a user meets it: every kind of bad input ends with one plain message
// naming the problem and the value, a non-zero exit, and no results file (final or temporary).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/mor_cli.hpp"

namespace fs = std::filesystem;

namespace {

using mor::testing::expect_contains;
using mor::testing::Outcome;

class Cli : public mor::testing::MorCliTest {
 protected:
  /// A small valid experiment with one line replaced or added.
  fs::path experiment(const std::string& extra_model = "", const std::string& extra_sim = "",
                      const std::string& extra_top = "") const {
    const fs::path file = dir_ / "exp.toml";
    std::ofstream(file) << extra_top << "[experiment]\nname = \"t\"\noutput = \"out/r.h5\"\n"
                        << "[model]\nN = 20\n"
                        << extra_model << "\n[input]\ntype = \"sine\"\n"
                        << "[simulation]\ndt = 0.1\nt_end = 2.0\n"
                        << extra_sim << "\n[output]\nplots = false\n";
    return file;
  }

  /// No final and no temporary results file anywhere below the test folder.
  ::testing::AssertionResult no_results_left() const {
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (name.find(".h5") != std::string::npos && name != "foreign.h5" && name != "not_hdf5.h5")
        return ::testing::AssertionFailure() << "left behind: " << e.path();
    }
    return ::testing::AssertionSuccess();
  }
};

TEST_F(Cli, ValidRunWritesResultsAndInfoReadsThem) {
  const Outcome run = mor("run " + experiment().string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "r.h5"));
  const Outcome info = mor("info out/r.h5");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  expect_contains(info, "mor-results");
  expect_contains(info, "/snapshots/p");
}

TEST_F(Cli, UnknownKeyIsNamedWithASuggestion) {
  const Outcome o = mor("run " + experiment("Nn = 30").string());
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "unknown key 'model.Nn'");
  expect_contains(o, "did you mean 'model.N'");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, MistypedValueAndUnknownTable) {
  Outcome o = mor("run " + experiment("m = \"heavy\"").string());
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "model.m must be a number, got 'heavy'");
  o = mor("run " + experiment("", "", "[simulaton]\ndt = 1\n").string());
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "unknown table [simulaton]; did you mean [simulation]?");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, NonPositiveN) {
  for (const std::string n : {"0", "-3"}) {
    const Outcome o = mor("run " + experiment().string() + " --set model.N=" + n);
    EXPECT_EQ(o.exit_code, 2) << o.output;
    expect_contains(o, "N must be a positive number of masses, got N = " + n);
  }
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, NonPositiveDt) {
  const Outcome o = mor("run " + experiment().string() + " --set simulation.dt=-0.5");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "dt must be a finite number > 0, got -0.5");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, NonFiniteParameter) {
  const Outcome o = mor("run " + experiment().string() + " --set model.k_n=nan");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "k_n must be finite, got nan");
  const Outcome inf = mor("run " + experiment().string() + " --set model.d=inf");
  EXPECT_EQ(inf.exit_code, 2);
  expect_contains(inf, "d must be finite, got inf");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, DivergingIntegrationLeavesNoFile) {
  // rk4 far beyond its stability limit on a stiff chain: the state overflows to Inf/NaN.
  const Outcome o = mor("run " + experiment("k_l = 1e4").string() +
                        " --set simulation.integrator=rk4 --set simulation.t_end=50");
  EXPECT_EQ(o.exit_code, 3) << o.output;
  expect_contains(o, "diverged");
  expect_contains(o, "dt = 0.1");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, MissingAndForeignResultsFiles) {
  Outcome o = mor("info nothing_here.h5");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "nothing_here.h5");
  std::ofstream(dir_ / "not_hdf5.h5") << "plain text, not HDF5\n";
  o = mor("info not_hdf5.h5");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "not_hdf5.h5");
  // A valid HDF5 file that is not ours, made by h5py (a dependency of the plots).
  ASSERT_EQ(std::system(("cd '" + dir_.string() +
                         "' && /usr/bin/python3 -c \"import h5py; h5py.File('foreign.h5', 'w')"
                         "['x'] = [1.0, 2.0]\"")
                            .c_str()),
            0);
  o = mor("info foreign.h5");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "foreign.h5");
  expect_contains(o, "not a mor results file");
  o = mor("info");
  EXPECT_EQ(o.exit_code, 2);
}

TEST_F(Cli, MissingExperimentFileAndBadOverride) {
  Outcome o = mor("run no_such.toml");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "no_such.toml");
  o = mor("run " + experiment().string() + " --set N=5");
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "the key must name its table");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, InterruptedRunLeavesNoFile) {
  // A run of many seconds, stopped by SIGTERM once it has started writing.
  const std::string run = "'" + mor_.string() + "' run " + experiment().string() +
                          " --set model.N=100000 --set simulation.t_end=1e4 -q";
  const Outcome o =
      shell("(" + run + " & pid=$!; while [ ! -e out/r.h5.tmp-$pid ]; do sleep 0.05; done;" +
            " sleep 0.3; kill -TERM $pid; wait $pid; echo exit=$?)");
  expect_contains(o, "interrupted at t = ");
  expect_contains(o, "no results written");
  expect_contains(o, "exit=130");
  EXPECT_TRUE(no_results_left());
}

TEST_F(Cli, InvalidTomlNamesTheLine) {
  const fs::path file = dir_ / "broken.toml";
  std::ofstream(file) << "[model]\nN = = 3\n";
  const Outcome o = mor("run " + file.string());
  EXPECT_EQ(o.exit_code, 2);
  expect_contains(o, "broken.toml:2");
  EXPECT_TRUE(no_results_left());
}

}  // namespace
