// SPDX-License-Identifier: GPL-3.0-or-later
// Sweeps: the grid a sweep file describes (and the grids it must refuse), the power-law fit, and
// `mor sweep` end to end: the merged table against standalone runs of the same points, resume
// after the sweep was killed, the same table from `mpirun -np 2`, a failing point.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "experiments/runner/method.hpp"
#include "experiments/runner/sweep.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"
#include "support/compare.hpp"
#include "support/mor_cli.hpp"
#include "support/source_dir.hpp"

extern char** environ;

namespace fs = std::filesystem;
using mor::Index;
using mor::InvalidArgument;
using mor::experiments::load_sweep;
using mor::experiments::SweepConfig;
using mor::testing::expect_contains;
using mor::testing::Outcome;

namespace {

std::string source_dir() {
  return mor::testing::source_dir().string();
}

/// A sweep over the repository's BT and POD experiment files, made small: a short horizon and no
/// frequency analysis beyond H2. `grid_N` and `extra` are pasted into [sweep] and after it.
std::string sweep_text(const std::string& grid_N = "[40, 80, 160]", const std::string& extra = "",
                       const std::string& name = "s") {
  const std::string experiments = source_dir() + "/experiments/";
  return "[sweep]\nname = \"" + name + "\"\noutput = \"out/" + name + ".h5\"\nN = " + grid_N +
         "\nfit_min_N = 1\nplots = false\n\n"
         "[[study]]\nname = \"bt\"\nexperiment = \"" +
         experiments +
         "bt_chain.toml\"\n"
         "set = { \"analysis.hinf\" = false, \"analysis.bode_points\" = 0, "
         "\"simulation.t_end\" = 10.0 }\n"
         "grid.reduction.order = [6, 10]\n\n"
         "[[study]]\nname = \"pod\"\nexperiment = \"" +
         experiments +
         "pod_deim_chain.toml\"\n"
         "set.simulation.t_end = 20.0\nset.reduction.order = 12\n"
         "set.reduction.compare_orders = [8]\n" +
         extra;
}

/// The configuration of a point.
const mor::experiments::ExperimentConfig& chain(const mor::experiments::SweepPoint& p) {
  return p.config;
}

/// The message of the InvalidArgument that parsing `text` throws ("" if none).
std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    mor::experiments::parse_sweep(text, "sweep.toml", fs::current_path(), overrides);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_MESSAGE(message, needle)                \
  EXPECT_NE((message).find(needle), std::string::npos) \
      << "expected '" << (needle) << "' in: " << (message)

}  // namespace

// ---------------------------------------------------------------------------------------------
// The grid

TEST(SweepGrid, PointsAreTheProductOfTheAxesInSeriesThenNOrder) {
  const SweepConfig c = mor::experiments::parse_sweep(sweep_text(), "sweep.toml", ".");
  // bt: 2 orders x 3 N; pod: 3 N.
  ASSERT_EQ(c.points.size(), 9u);
  const std::vector<std::string> keys = {"bt_N40_order6",  "bt_N80_order6",  "bt_N160_order6",
                                         "bt_N40_order10", "bt_N80_order10", "bt_N160_order10",
                                         "pod_N40",        "pod_N80",        "pod_N160"};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(c.points[i].key, keys[i]);
    EXPECT_EQ(c.points[i].index, static_cast<Index>(i));
  }
  EXPECT_EQ(c.points[4].series, "bt, reduction.order=10");
  EXPECT_EQ(c.points[4].size, 80);
  EXPECT_EQ(chain(c.points[4]).reduction->order(), 10);
  EXPECT_EQ(chain(c.points[4]).integrator.t_end, 10.0);  // the study's set
  EXPECT_EQ(c.points[8].method, "pod");
  EXPECT_NE(chain(c.points[8]).toml.find("compare_orders = [8]"), std::string::npos);
  EXPECT_EQ(chain(c.points[8]).output, fs::path("out/s.points/pod_N160.h5"));
  EXPECT_EQ(c.points_dir, fs::path("out/s.points"));
  // Every point is a different experiment.
  std::set<std::string> configurations;
  for (const auto& p : c.points) configurations.insert(p.configuration);
  EXPECT_EQ(configurations.size(), c.points.size());
}

TEST(SweepGrid, OverridesChangeTheSweepOrEveryPoint) {
  const SweepConfig c = mor::experiments::parse_sweep(sweep_text(), "sweep.toml", ".",
                                                      {"sweep.N=[50]", "simulation.dt=0.1"});
  ASSERT_EQ(c.points.size(), 3u);
  for (const auto& p : c.points) {
    EXPECT_EQ(p.size, 50);
    EXPECT_EQ(chain(p).integrator.dt, 0.1);
  }
}

TEST(SweepGrid, BadGridsAreRefusedWithTheirReason) {
  EXPECT_MESSAGE(parse_error(sweep_text("[]")), "sweep.N is empty");
  EXPECT_MESSAGE(parse_error(sweep_text("[40, 0]")), "not a positive integer chain size");
  EXPECT_MESSAGE(parse_error(sweep_text("[40, 1e12]")), "above the largest chain size");
  EXPECT_MESSAGE(parse_error(sweep_text("[40, 80, 40]")),
                 "the same experiment as point 'bt_N40_order6'");
  // An empty axis, an unknown method (named with its point), a study key of another shape.
  EXPECT_MESSAGE(parse_error(sweep_text("[40]", "grid.reduction.energy = []\n")),
                 "grid.reduction.energy is empty");
  const std::string unknown =
      parse_error(sweep_text("[40]", "grid.reduction.method = [\"pod\", \"magic\"]\n"));
  EXPECT_MESSAGE(unknown, "study 'pod', point model.N=40, reduction.method=magic");
  EXPECT_MESSAGE(unknown, "magic");
  EXPECT_MESSAGE(parse_error("[sweep]\nN = [10]\n"), "no [[study]] tables");
  EXPECT_MESSAGE(
      parse_error(sweep_text("[40]", "\n[[study]]\nname = \"bt\"\nexperiment = \"x\"\n")),
      "two studies are named 'bt'");
  EXPECT_MESSAGE(parse_error(sweep_text("[40]") + "\n[sweep.extra]\n"),
                 "unknown key 'sweep.extra'");
  EXPECT_MESSAGE(parse_error(sweep_text("[40]", "colour = 3\n")), "unknown key 'study.colour'");
  // Two studies that overlap: the second repeats a point of the first.
  const std::string overlap =
      sweep_text("[40]") + "\n[[study]]\nname = \"again\"\nexperiment = \"" + source_dir() +
      "/experiments/pod_deim_chain.toml\"\nset.simulation.t_end = 20.0\nset.reduction.order = "
      "12\nset.reduction.compare_orders = [8]\n";
  EXPECT_MESSAGE(parse_error(overlap), "the same experiment as point 'pod_N40'");
  // A multibody benchmark has no size to sweep: its own model.N axis is an unknown key there.
  EXPECT_MESSAGE(parse_error("[sweep]\n[[study]]\nname = \"a\"\nexperiment = \"" + source_dir() +
                             "/experiments/a01_pendulum.toml\"\ngrid.model.N = [10, 20]\n"),
                 "model.N");
}

TEST(SweepGrid, PointsAboveTheMemoryBudgetAreRefusedUpFront) {
  const SweepConfig c = mor::experiments::parse_sweep(
      sweep_text("[40, 1000000]", "", "big"), "sweep.toml", ".", {"sweep.memory_budget_mib=200"});
  try {
    mor::experiments::check_memory_budget(c, 1);
    FAIL() << "a BT point at N = 1e6 (about 6 GiB) passed a 200 MiB budget";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_MESSAGE(m, "point 'bt_N1000000_order6' needs about");
    EXPECT_MESSAGE(m, "above the memory budget of 200 MiB");
  }
  EXPECT_NO_THROW(mor::experiments::check_memory_budget(
      mor::experiments::parse_sweep(sweep_text("[40]"), "sweep.toml", ".",
                                    {"sweep.memory_budget_mib=200"}),
      1));
}

// ---------------------------------------------------------------------------------------------
// The power law

TEST(SweepFit, RecoversAnExactPowerLawAndIgnoresWhatItShould) {
  std::vector<double> N = {10, 100, 1000, 1e4, 1e5}, cost;
  for (const double n : N) cost.push_back(3e-6 * std::pow(n, 1.5));
  cost[0] = 1.0;  // below N_min: must not count
  N.push_back(1e6);
  cost.push_back(std::nan(""));  // not done: must not count
  const auto fit = mor::experiments::fit_power_law(N, cost, 100);
  ASSERT_TRUE(fit.has_value());
  EXPECT_TRUE(mor::testing::scalars_near(fit->exponent, 1.5, 1e-12));
  EXPECT_TRUE(mor::testing::scalars_near(fit->coefficient, 3e-6, 1e-10));
  EXPECT_EQ(fit->points, 4);
  EXPECT_EQ(fit->N_min, 100);
  EXPECT_EQ(fit->N_max, 1e5);
  EXPECT_FALSE(mor::experiments::fit_power_law({100, 100}, {1, 2}, 1).has_value());
}

// ---------------------------------------------------------------------------------------------
// mor sweep end to end

namespace {

class Sweep : public mor::testing::MorCliTest {
 protected:
  fs::path write_sweep(const std::string& text, const std::string& file = "sweep.toml") const {
    std::ofstream(dir_ / file) << text;
    return dir_ / file;
  }

  struct Table {
    std::vector<std::string> key, status;
    std::map<std::string, mor::Vector> numbers;
  };
  static Table read_table(const fs::path& file) {
    const mor::io::ResultsReader r(file);
    Table t;
    t.key = r.read_strings("/table/key");
    t.status = r.read_strings("/table/status");
    for (const char* c :
         {"N", "r", "m", "output_error", "h2_error", "state_error", "speedup", "full_step_s",
          "reduced_step_s", "r_for_tol_0", "cvode_steps", "exact_error"})
      if (r.exists(std::string("/table/") + c))
        t.numbers[c] = r.read_vector(std::string("/table/") + c);
    return t;
  }

  /// Starts `mor sweep` in the background; returns its pid.
  pid_t spawn_sweep(const fs::path& sweep, const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {mor_.string(), "sweep", sweep.string(), "-q", "--no-plots"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addchdir_np(&actions, dir_.c_str());  // as mor() runs it
    EXPECT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
  }
};

}  // namespace

TEST_F(Sweep, MergedTableMatchesStandaloneRunsOfThePoints) {
  const fs::path file = write_sweep(sweep_text());
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const fs::path results = dir_ / "out" / "s.h5";
  const Table t = read_table(results);
  const SweepConfig c = load_sweep(file);
  ASSERT_EQ(t.key.size(), c.points.size());
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    EXPECT_EQ(t.key[i], c.points[i].key);
    EXPECT_EQ(t.status[i], "done") << t.key[i];
    EXPECT_EQ(t.numbers.at("N")(static_cast<Index>(i)), c.points[i].size);
  }
  // Two points run on their own with `mor run` and the same settings: the sweep's table holds
  // the same order and errors (the runs are deterministic).
  for (const std::size_t i : {4u, 7u}) {
    const auto& p = c.points[i];
    std::string args = "run " + source_dir() + "/experiments/" +
                       (p.study == "bt" ? "bt_chain.toml" : "pod_deim_chain.toml") +
                       " --no-plots -q -o alone.h5 --set model.N=" + std::to_string(p.size);
    for (const std::string& s :
         p.study == "bt" ? std::vector<std::string>{"analysis.hinf=false", "analysis.bode_points=0",
                                                    "simulation.t_end=10.0", "reduction.order=10"}
                         : std::vector<std::string>{"simulation.t_end=20.0", "reduction.order=12",
                                                    "reduction.compare_orders=[8]"})
      args += " --set " + s;
    const Outcome alone = mor(args);
    ASSERT_EQ(alone.exit_code, 0) << alone.output;
    const mor::io::ResultsReader r(dir_ / "alone.h5");
    const Index row = static_cast<Index>(i);
    EXPECT_EQ(t.numbers.at("r")(row), r.attribute_int("/reduction", "r")) << p.key;
    EXPECT_TRUE(mor::testing::scalars_near(t.numbers.at("output_error")(row),
                                           r.attribute_double("/error", "relative_l2"), 1e-12))
        << p.key;
    // The point's group in the merged file is its whole results file.
    const mor::io::ResultsReader merged(results);
    EXPECT_TRUE(mor::testing::matrices_near(merged.read_matrix("/points/" + p.key + "/outputs/y"),
                                            r.read_matrix("/outputs/y"), 0.0))
        << p.key;
    EXPECT_EQ(merged.attribute_string("/points/" + p.key + "/model", "type"), "mass_spring_chain");
  }
  // A tighter tolerance (1e-6) needs at least the order of a looser one (1e-4).
  const mor::io::ResultsReader r(results);
  const mor::Vector loose = r.read_vector("/table/r_for_tol_0"),
                    tight = r.read_vector("/table/r_for_tol_1");
  for (Index i = 0; i < loose.size(); ++i) EXPECT_LE(loose(i), tight(i)) << t.key[i];
  // mor info prints the table.
  const Outcome info = mor("info " + results.string());
  ASSERT_EQ(info.exit_code, 0) << info.output;
  expect_contains(info, "9/9 points done");
  expect_contains(info, "bt, reduction.order=10");
  expect_contains(info, "cost ~ N^p");
}

TEST_F(Sweep, KilledSweepResumesWithEveryPointOnce) {
  // Points of about 0.1 s each, run one at a time, so that the kill lands mid-sweep.
  const fs::path file = write_sweep(sweep_text("[400, 600, 800, 1000, 1200, 1400]"));
  const fs::path points = dir_ / "out" / "s.points";
  const pid_t pid = spawn_sweep(file, {"--jobs", "1"});
  ASSERT_GT(pid, 0);
  // Wait for the first completed point, then kill the sweep without warning.
  const auto t0 = std::chrono::steady_clock::now();
  auto stored = [&] {
    Index n = 0;
    if (fs::exists(points))
      for (const auto& e : fs::directory_iterator(points))
        if (e.path().extension() == ".h5") ++n;
    return n;
  };
  while (stored() == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the worker follows its parent
  const Index before = stored();
  const SweepConfig c = load_sweep(file);
  ASSERT_GE(before, 1);
  ASSERT_LT(before, static_cast<Index>(c.points.size())) << "the sweep ended before the kill";
  EXPECT_FALSE(fs::exists(dir_ / "out" / "s.h5")) << "a merged file from a killed sweep";
  std::map<std::string, fs::file_time_type> kept;
  for (const auto& e : fs::directory_iterator(points))
    if (e.path().extension() == ".h5") kept[e.path().filename().string()] = fs::last_write_time(e);

  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  expect_contains(
      o, std::to_string(before) + " of " + std::to_string(c.points.size()) + " points stored");
  const Table t = read_table(dir_ / "out" / "s.h5");
  ASSERT_EQ(t.key.size(), c.points.size());
  std::set<std::string> unique(t.key.begin(), t.key.end());
  EXPECT_EQ(unique.size(), c.points.size());
  for (std::size_t i = 0; i < t.key.size(); ++i) EXPECT_EQ(t.status[i], "done") << t.key[i];
  // The points stored before the kill were not run again; nothing temporary is left.
  for (const auto& [name, time] : kept)
    EXPECT_EQ(fs::last_write_time(points / name), time) << name << " was run again";
  for (const auto& e : fs::directory_iterator(points))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST_F(Sweep, MpirunWithTwoRanksGivesTheSerialTable) {
  const fs::path serial = write_sweep(sweep_text("[40, 80, 160]", "", "serial"), "serial.toml");
  const fs::path parallel = write_sweep(sweep_text("[40, 80, 160]", "", "mpi"), "mpi.toml");
  const Outcome a = mor("sweep " + serial.string() + " --no-plots --jobs 1");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  // --oversubscribe: the test must not depend on how many cores Open MPI counts here.
  const Outcome b = shell("mpirun --allow-run-as-root --oversubscribe -np 2 '" + mor_.string() +
                          "' sweep " + parallel.string() + " --no-plots");
  ASSERT_EQ(b.exit_code, 0) << b.output;
  expect_contains(b, "(rank 1)");  // rank 1 ran points
  const Table ta = read_table(dir_ / "out" / "serial.h5");
  const Table tb = read_table(dir_ / "out" / "mpi.h5");
  EXPECT_EQ(ta.key, tb.key);
  EXPECT_EQ(ta.status, tb.status);
  for (const char* c : {"N", "r", "m", "output_error", "h2_error", "state_error", "r_for_tol_0"}) {
    const mor::Vector &x = ta.numbers.at(c), &y = tb.numbers.at(c);
    ASSERT_EQ(x.size(), y.size());
    for (Index i = 0; i < x.size(); ++i)
      if (!(std::isnan(x(i)) && std::isnan(y(i)))) {
        EXPECT_TRUE(mor::testing::scalars_near(x(i), y(i), 1e-12)) << c << " of " << ta.key[i];
      }
  }
}

TEST_F(Sweep, FailingPointIsReportedAndTheOthersComplete) {
  // POD to r = 22 cannot work on 16 masses (16 positions): that point fails, the other runs.
  const fs::path file = write_sweep(
      "[sweep]\nname = \"s\"\noutput = \"out/s.h5\"\nN = [16, 80]\nplots = false\n"
      "[[study]]\nname = \"pod\"\nexperiment = \"" +
      source_dir() +
      "/experiments/pod_deim_chain.toml\"\nset.simulation.t_end = 20.0\n"
      "set.reduction.order = 22\nset.reduction.compare_orders = [8]\n");
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  ASSERT_EQ(o.exit_code, 3) << o.output;
  expect_contains(o, "pod_N16 FAILED");
  const Table t = read_table(dir_ / "out" / "s.h5");
  for (std::size_t i = 0; i < t.key.size(); ++i) {
    if (t.key[i] == "pod_N16")
      EXPECT_EQ(t.status[i].rfind("failed: ", 0), 0u) << t.status[i];
    else
      EXPECT_EQ(t.status[i], "done") << t.key[i];
  }
  const mor::io::ResultsReader r(dir_ / "out" / "s.h5");
  EXPECT_EQ(r.attribute_int("/", "complete"), 0);
  EXPECT_EQ(r.attribute_int("/", "points_failed"), 1);
}

// A study may run a multibody experiment file: each point is the whole multibody experiment, its
// row has the CVODE columns, and on A01 (exact solution) a tighter rtol costs more steps and
// lands closer to the exact outputs (CVODE's error is controlled by rtol).
TEST_F(Sweep, MultibodyStudyRecordsWorkAgainstAccuracy) {
  const std::string experiments = source_dir() + "/experiments/";
  const fs::path file = write_sweep(
      "[sweep]\nname = \"mb\"\noutput = \"out/mb.h5\"\nN = [40]\nplots = false\n\n"
      "[[study]]\nname = \"a01\"\nexperiment = \"" +
      experiments +
      "a01_pendulum.toml\"\nset = { \"analysis.bode_points\" = 0, \"simulation.atol\" = "
      "1e-14 }\ngrid.simulation.rtol = [1e-5, 1e-8]\n");
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const Table t = read_table(dir_ / "out" / "mb.h5");
  ASSERT_EQ(t.key.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(t.status[i], "done") << t.key[i];
  const mor::Vector steps = t.numbers.at("cvode_steps"), exact = t.numbers.at("exact_error");
  EXPECT_GT(steps(1), steps(0));
  EXPECT_LT(exact(1), exact(0)) << "rtol 1e-8 against 1e-5";
  EXPECT_LT(exact(1), 1e-5) << "CVODE at rtol 1e-8 on the pendulum's exact solution";
  // The sweep's N (the chain's size) does not apply to a multibody study.
  EXPECT_EQ(t.numbers.at("N")(0), 2.0) << "the pendulum's state (angle, rate)";
}

TEST_F(Sweep, BadSweepFileEndsWithOneMessageAndNoFile) {
  const fs::path file = write_sweep(sweep_text("[40, 40]"));
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "the same experiment as point");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// An empty or foreign file under a point's name in the sweep's own folder (a disk that filled at
// its first bytes, a copy gone wrong) is not a done point: a resume, with or without --restart,
// keeps it aside under a name it prints and runs the point again, instead of refusing to
// replace it (issue 44: "refusing to write results file ... not HDF5", exit 3).
TEST_F(Sweep, UnreadablePointFileIsKeptAsideAndThePointRunsAgain) {
  const fs::path file = write_sweep(sweep_text("[40]"));
  ASSERT_EQ(mor("sweep " + file.string() + " --no-plots -q").exit_code, 0);
  const fs::path points = dir_ / "out" / "s.points";
  const fs::path empty = points / "bt_N40_order6.h5", text = points / "pod_N40.h5";
  std::ofstream(empty, std::ios::trunc).close();
  std::ofstream(text, std::ios::trunc) << "not a results file\n";
  // The claim of a point whose worker was SIGKILLed, of a point the sweep no longer has.
  std::ofstream(points / "gone_N1.h5.lock") << "999999\n";
  for (const std::string restart : {"", " --restart"}) {
    SCOPED_TRACE(restart.empty() ? "resume" : "--restart");
    const Outcome o = mor("sweep " + file.string() + " --no-plots" + restart);
    ASSERT_EQ(o.exit_code, 0) << o.output;
    const Table t = read_table(dir_ / "out" / "s.h5");
    for (std::size_t i = 0; i < t.key.size(); ++i) EXPECT_EQ(t.status[i], "done") << t.key[i];
    if (restart.empty()) {
      // The folder as the sweep names it (out/s.points, relative to where it runs).
      expect_contains(o,
                      "mor: warning: point file 'out/s.points/bt_N40_order6.h5' (0 bytes) is "
                      "not a results file: kept aside as "
                      "'out/s.points/bt_N40_order6.h5.unreadable', and the point runs again");
      expect_contains(o,
                      "'out/s.points/pod_N40.h5' (19 bytes) is not a results file: kept aside "
                      "as 'out/s.points/pod_N40.h5.unreadable'");
      EXPECT_FALSE(fs::exists(points / "gone_N1.h5.lock")) << "a stale lock file stayed";
      // Nothing lost: the files set aside are as they were.
      EXPECT_EQ(fs::file_size(empty.string() + ".unreadable"), 0u);
      EXPECT_EQ(fs::file_size(text.string() + ".unreadable"), 19u);
      // The points now hold results files: the next cut file gets the next free name.
      std::ofstream(empty, std::ios::trunc).close();
    } else {
      expect_contains(o, "kept aside as 'out/s.points/bt_N40_order6.h5.unreadable-2'");
    }
  }
}

// A sweep file with a key of 40 000 dotted parts overflowed toml++'s stack (exit 139): it is
// refused unparsed, naming the depth and the limit.
TEST_F(Sweep, DeeplyNestedSweepFileIsRefusedUnparsed) {
  std::string key = "a";
  for (int i = 1; i < 40000; ++i) key += ".a";
  const fs::path file = write_sweep(key + " = 1\n" + sweep_text());
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "keys and values nested 40000 deep");
  expect_contains(o, "exceed the limit of 64");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// ---------------------------------------------------------------------------------------------
// A parametric study: the linear chain's parametric BT built once, evaluated at every point

namespace {

// The linear chain over k_l and d: BT at 3 training points, one global basis of order 6.
const char* const kParametricExperiment = R"(
[experiment]
name = "pbt"
[model]
type = "mass_spring_chain"
N = 30
k_n = 0.0
damping = "chain"
[input]
type = "chirp"
amplitude = 1.0
f1 = 0.3
t1 = 20.0
[simulation]
integrator = "implicit_midpoint"
dt = 0.05
t_end = 20.0
[output]
snapshot_stride = 0
plots = false
[reduction]
method = "bt"
order = 6
gramians = "dense"
parameter_samples = 3
[analysis]
hinf = false
bode_points = 0
[parameters]
k_l = { min = 0.5, max = 2.0 }
d = { min = 0.2, max = 2.0, scale = "log" }
[validation]
parameter_samples = 2
)";

// A sweep point and a validation point of a plain `mor run` at the same parameter: the same
// parametric model (the same training, the same arithmetic), the same full and reduced runs.
constexpr double kSameModelTol = 1e-10;

std::string parametric_sweep(const std::string& values) {
  return "[sweep]\nname = \"ps\"\noutput = \"out/ps.h5\"\nplots = false\n\n[[study]]\n"
         "name = \"p\"\nexperiment = \"pbt.toml\"\ngrid.parameters.k_l = " +
         values + "\n";
}

/// The stored parametric models in a points folder.
std::vector<fs::path> stored_models(const fs::path& points) {
  std::vector<fs::path> out;
  if (fs::exists(points))
    for (const auto& e : fs::directory_iterator(points))
      if (e.path().filename().string().rfind("parametric-p-", 0) == 0 &&
          e.path().extension() == ".h5")
        out.push_back(e.path());
  return out;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_F(Sweep, ParametricStudyBuildsItsModelOnceAndEveryPointIsAValidationPoint) {
  std::ofstream(dir_ / "pbt.toml") << kParametricExperiment;
  const fs::path file = write_sweep(parametric_sweep("[0.6, 1.0, 1.8]"));
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  // The offline part ran once, before the points, and every point read its file.
  EXPECT_EQ(count_of(o.output, "parametric model built in"), 1u) << o.output;
  const fs::path points = dir_ / "out" / "ps.points";
  const std::vector<fs::path> models = stored_models(points);
  ASSERT_EQ(models.size(), 1u);
  const auto built_at = fs::last_write_time(models[0]);
  // The stored model is a results file mor info reads (its domain and reduction).
  const Outcome info = mor("info " + models[0].string());
  ASSERT_EQ(info.exit_code, 0) << info.output;
  expect_contains(info, "/reduction/affine");
  const SweepConfig c = load_sweep(file);
  ASSERT_EQ(c.points.size(), 3u);
  const fs::path results = dir_ / "out" / "ps.h5";
  const Table t = read_table(results);
  {
    const mor::io::ResultsReader merged(results);
    for (const auto& p : c.points) {
      EXPECT_EQ(merged.attribute_string("/points/" + p.key + "/sweep_point", "parametric_model"),
                models[0].filename().string());
      // The point's own model is the chain at the point: k_l as the grid says, d at the center.
      const mor::Vector mu = merged.read_vector("/points/" + p.key + "/parameters/reference");
      EXPECT_EQ(mu[0], std::sqrt(0.2 * 2.0)) << p.key;
    }
  }
  // A plain `mor run` validated at the same three points: the same errors.
  std::ostringstream d;
  d.precision(17);
  d << std::sqrt(0.2 * 2.0);
  const Outcome alone = mor("run pbt.toml --no-plots -q -o alone.h5 --set 'validation.points=[[" +
                            d.str() + ", 0.6], [" + d.str() + ", 1.0], [" + d.str() + ", 1.8]]'");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  const mor::Vector validation =
      mor::io::ResultsReader(dir_ / "alone.h5").read_vector("/validation/output_error");
  ASSERT_EQ(validation.size(), 3);
  for (Index i = 0; i < 3; ++i) {
    EXPECT_EQ(t.status[static_cast<std::size_t>(i)], "done");
    EXPECT_TRUE(mor::testing::scalars_near(t.numbers.at("output_error")(i), validation(i),
                                           kSameModelTol, mor::testing::Compare::relative))
        << t.key[static_cast<std::size_t>(i)];
  }

  // Resume: a point run again reads the stored model; the model is not built again.
  fs::remove(points / (c.points[1].key + ".h5"));
  const Outcome resumed = mor("sweep " + file.string() + " --no-plots");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(count_of(resumed.output, "parametric model built in"), 0u) << resumed.output;
  expect_contains(resumed, "parametric model stored, reused");
  EXPECT_EQ(stored_models(points).size(), 1u);
  EXPECT_EQ(fs::last_write_time(models[0]), built_at) << "the stored model was written again";
  EXPECT_EQ(read_table(results).numbers.at("output_error")(1), t.numbers.at("output_error")(1));

  // Another offline configuration (more training points) builds another model, once.
  const Outcome changed =
      mor("sweep " + file.string() + " --no-plots --set reduction.parameter_samples=4");
  ASSERT_EQ(changed.exit_code, 0) << changed.output;
  EXPECT_EQ(count_of(changed.output, "parametric model built in"), 1u) << changed.output;
  EXPECT_EQ(stored_models(points).size(), 2u);
}

TEST_F(Sweep, ParametricValueOutsideTheDomainIsRefusedBeforeAnyPointRuns) {
  std::ofstream(dir_ / "pbt.toml") << kParametricExperiment;
  const fs::path file = write_sweep(parametric_sweep("[0.6, 5.0]"));
  const Outcome o = mor("sweep " + file.string() + " --no-plots");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  expect_contains(o, "grid.parameters.k_l = 5.0 is outside the parameter's range [0.5, 2]");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  // A name that is not a parameter, and a parameter axis on an experiment without [parameters].
  const std::string unknown =
      parse_error("[sweep]\nname = \"ps\"\n[[study]]\nname = \"p\"\nexperiment = \"" +
                  (dir_ / "pbt.toml").string() + "\"\ngrid.parameters.k = [1.0]\n");
  EXPECT_MESSAGE(unknown,
                 "grid.parameters.k: 'k' is not a parameter of the experiment's "
                 "[parameters] (d, k_l)");
  const std::string plain =
      parse_error("[sweep]\nname = \"ps\"\n[[study]]\nname = \"p\"\nexperiment = \"" +
                  source_dir() + "/experiments/bt_chain.toml\"\ngrid.parameters.k_l = [1.0]\n");
  EXPECT_MESSAGE(plain, "grid.parameters.k_l needs an experiment with [parameters]");
}
