// SPDX-License-Identifier: GPL-3.0-or-later
// Experiment files and results files end to end: what the runner streams to HDF5 is read back
// and compared with an independent in-memory integration of the same model; the stored
// configuration parses back to the same experiment.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "experiments/runner/experiment.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"
#include "support/compare.hpp"
#include "support/temp_dir.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using testing::matrices_near;

using Experiment = testing::TempDirTest;

const char* kSmall = R"(
[experiment]
name = "small"
[model]
N = 30
k_n = 2.0
[input]
type = "chirp"
amplitude = 2.0
f0 = 0.0
f1 = 0.5
t1 = 5.0
[simulation]
integrator = "generalized_alpha"
dt = 0.05
t_end = 5.05
[output]
output_stride = 2
snapshot_stride = 4
plots = false
)";

TEST_F(Experiment, StreamedResultsMatchAnIndependentRun) {
  ExperimentConfig c = parse_experiment(kSmall, "small.toml", dir_);
  c.output = dir_ / "small.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(fs::exists(c.output));

  // The same model integrated in memory, keeping every step.
  const MassSpringChain chain(c.model);
  MassSpringChain::Workspace ws(chain);
  const auto input = make_chirp_signal(1, 2.0, 0.0, 0.5, 5.0);
  std::vector<Vector> P, V;
  std::vector<double> T;
  Vector q = Vector::Zero(30), v = Vector::Zero(30);
  IntegratorOptions every_step = c.integrator;
  every_step.observe_stride = 1;
  integrate(chain, ws, *input, every_step, q, v,
            [&](Index, double t, const Vector& qk, const Vector& vk, const Vector&) {
              T.push_back(t);
              P.push_back(qk);
              V.push_back(vk);
            });
  const Index steps = 101;  // 5.05 / 0.05
  ASSERT_EQ(static_cast<Index>(T.size()), steps + 1);

  const io::ResultsReader r(c.output);
  EXPECT_EQ(r.attribute_int("/model", "N"), 30);
  EXPECT_EQ(r.attribute_string("/simulation", "integrator"), "generalized_alpha");
  EXPECT_EQ(r.attribute_int("/simulation", "steps"), steps);
  const Vector t_out = r.read_vector("/outputs/t");
  const Matrix u_out = r.read_matrix("/outputs/u");
  const Matrix y_out = r.read_matrix("/outputs/y");
  // Output every 2nd step and the last one (101 is odd): 0, 2, ..., 100, 101.
  ASSERT_EQ(t_out.size(), 52);
  ASSERT_EQ(y_out.rows(), 52);
  Vector u(1);
  for (Index i = 0; i < t_out.size(); ++i) {
    const Index k = i < 51 ? 2 * i : steps;
    EXPECT_DOUBLE_EQ(t_out(i), T[k]);
    input->evaluate(T[k], u);
    EXPECT_EQ(u_out(i, 0), u(0));
    EXPECT_EQ(y_out(i, 0), P[k](29)) << "output at step " << k;
  }
  // Snapshots every 4th step and the last: 0, 4, ..., 100, 101, one column per time.
  const Matrix Ps = r.read_rows_as_columns("/snapshots/p");
  const Matrix Vs = r.read_rows_as_columns("/snapshots/v");
  const Vector E = r.read_vector("/snapshots/energy");
  ASSERT_EQ(Ps.cols(), 27);
  ASSERT_EQ(Ps.rows(), 30);
  for (Index j = 0; j < Ps.cols(); ++j) {
    const Index k = j < 26 ? 4 * j : steps;
    EXPECT_TRUE(matrices_near(Ps.col(j), P[k], 0.0)) << "snapshot of step " << k;
    EXPECT_TRUE(matrices_near(Vs.col(j), V[k], 0.0)) << "snapshot of step " << k;
    EXPECT_EQ(E(j), chain.kinetic_energy(V[k]) + chain.potential_energy(P[k]));
  }
  EXPECT_EQ(s.snapshots, 27);
  EXPECT_EQ(s.outputs, 52);
  EXPECT_GT(r.attribute_double("/timings", "integration_s"), 0.0);
  EXPECT_FALSE(r.attribute_string("/", "git_commit").empty());
}

TEST_F(Experiment, StoredConfigurationParsesBackToTheSameExperiment) {
  const ExperimentConfig a = parse_experiment(kSmall, "small.toml", dir_);
  const ExperimentConfig b = parse_experiment(a.toml, "stored", dir_);
  EXPECT_EQ(a.toml, b.toml);
  EXPECT_EQ(b.model.N, 30);
  EXPECT_EQ(b.input.type, "chirp");
  EXPECT_EQ(b.integrator.scheme, Scheme::generalized_alpha);
  EXPECT_EQ(b.snapshot_stride, 4);
}

TEST_F(Experiment, DefaultExperimentFileIsValid) {
  const char* src = std::getenv("MOR_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const ExperimentConfig c = load_experiment(fs::path(src) / "experiments" / "default.toml");
  EXPECT_EQ(c.model.N, 1000);
  EXPECT_EQ(c.model.k_n, 2.0);
  EXPECT_EQ(c.input.type, "sine");
}

TEST_F(Experiment, OverridesAndTableInputRelativeToTheFile) {
  std::ofstream(dir_ / "u.csv") << "# t, u\n0, 0\n1, 1\n2, 0\n";
  std::ofstream(dir_ / "e.toml") << "[model]\nN = 4\n[input]\ntype = \"table\"\nfile = \"u.csv\"\n"
                                 << "[output]\nplots = false\n";
  const ExperimentConfig c = load_experiment(
      dir_ / "e.toml", {"model.N=1e2", "simulation.integrator=rk4", "simulation.t_end=2"});
  EXPECT_EQ(c.model.N, 100);
  EXPECT_EQ(c.integrator.scheme, Scheme::rk4);
  EXPECT_EQ(c.input.file, dir_ / "u.csv");
  EXPECT_EQ(c.output, fs::path("results") / "experiment.h5");
}

TEST_F(Experiment, ChainOnlyKeysNeedTheirOption) {
  try {
    parse_experiment("[model]\nalpha = 0.1\n", "x.toml", dir_);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("alpha and beta need damping = \"rayleigh\""),
              std::string::npos)
        << e.what();
  }
  try {
    parse_experiment("[input]\ntype = \"sine\"\nf0 = 1\n", "x.toml", dir_);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'input.f0' for input type 'sine'"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Experiment, FailedRunLeavesNoFile) {
  ExperimentConfig c = parse_experiment(
      kSmall, "small.toml", dir_,
      {"model.k_l=1e4", "simulation.integrator=rk4", "simulation.dt=0.1", "simulation.t_end=50"});
  c.output = dir_ / "diverged.h5";
  EXPECT_THROW(run_experiment(c), NumericalError);
  EXPECT_TRUE(fs::is_empty(dir_)) << "a diverged run left a file in " << dir_;
}

}  // namespace
}  // namespace mor::experiments
