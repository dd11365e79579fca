// SPDX-License-Identifier: GPL-3.0-or-later
// The multibody benchmarks as model kinds (experiments/runner/models/multibody.cpp), end to end
// through the one runner on A01: what it writes is read back and checked against independent
// references (the exact elliptic solution, the energy integral, the pendulum's known
// eigenvalues, the drawn points against the outputs), the stored configuration parses back to
// itself, and mistakes are named and leave no file behind.
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "models/pendulum.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"
#include "support/compare.hpp"
#include "support/source_dir.hpp"
#include "support/temp_dir.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using MultibodyRun = testing::TempDirTest;

using testing::source_dir;

fs::path a01_file() {
  return source_dir() / "experiments" / "a01_pendulum.toml";
}

/// The figure `name` of the model's own analysis; -1 if it has none.
double figure(const RunSummary& s, const std::string& name) {
  for (const auto& [n, v] : s.model_figures)
    if (n == name) return v;
  return -1.0;
}

TEST_F(MultibodyRun, A01FileRunsAndMeetsTheBenchmarkBar) {
  const fs::path out = dir_ / "a01.h5";
  const auto c = load_experiment(
      a01_file(), {"experiment.output=\"" + out.string() + "\"", "output.plots=false"});
  ASSERT_EQ(c.model->kind(), "pendulum");
  ASSERT_TRUE(c.model->owns_simulation());
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(fs::exists(out));
  const io::ResultsReader r(out);

  // P1 against the exact solution, evaluated here from the stored times (not the stored
  // y_exact): the benchmark's high-precision bar is 1e-3; at rtol 1e-10 it is ~2e-9.
  const Pendulum pendulum;
  const Vector t = r.read_vector("/benchmark/t");
  const Matrix y = r.read_matrix("/benchmark/y");
  ASSERT_EQ(t.size(), 1001);
  EXPECT_DOUBLE_EQ(t(t.size() - 1), 10.0);
  double worst = 0.0;
  for (Index k = 0; k < t.size(); ++k) {
    const Eigen::Vector2d exact = pendulum.point(pendulum.exact_angle(-M_PI / 2, t(k)));
    worst = std::max(worst, (y.row(k).transpose() - exact).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-7);
  EXPECT_NEAR(figure(s, "exact_error"), worst, 1e-15);
  // Energy: conservative, so the balance is E - E0, recomputed here from the stored states.
  const Matrix x = r.read_matrix("/benchmark/x");
  double drift = 0.0;
  for (Index k = 0; k < t.size(); ++k)
    drift = std::max(drift,
                     std::abs(pendulum.energy(x.row(k).transpose()) - figure(s, "energy_initial")));
  EXPECT_LT(drift, 1e-7);  // J, of m g L = 9.81 J; measured 2.6e-8
  EXPECT_NEAR(figure(s, "energy_balance_error"), drift, 1e-12);
  // The animation's second point is P1.
  const Matrix P = r.read_matrix("/animation/points");
  ASSERT_EQ(P.cols(), 6);
  EXPECT_TRUE(testing::matrices_near(Matrix(P.middleCols(3, 2)), y, 1e-15));

  // The linearisation: poles +-i sqrt(g / L), and the nonlinear-linear difference falls at least
  // like the amplitude (relative), here like its square (sin is odd: the error is cubic).
  const Vector im = r.read_vector("/linear/poles_imag").cwiseAbs();
  EXPECT_NEAR(im.maxCoeff(), std::sqrt(9.81), 1e-12);
  EXPECT_NEAR(r.read_vector("/linear/poles_real").cwiseAbs().maxCoeff(), 0.0, 1e-12);
  EXPECT_GT(figure(s, "linear_ratio"), 3.6);
  EXPECT_LT(figure(s, "linear_ratio"), 4.4);
  // 0.06 rad of swing: sin's cubic term is ~6e-4 of it
  EXPECT_LT(figure(s, "linear_difference"), 1e-2);
  // Modal truncation at r = n reproduces the linear model (both by CVODE at the file's
  // tolerances), recomputed here from the stored responses.
  EXPECT_EQ(s.reduced_order, 1);
  EXPECT_EQ(s.linearisation, "the hanging equilibrium");
  const Matrix y_lin = r.read_matrix("/linear/response/y");
  const Matrix y_red = r.read_matrix("/reduced/outputs/y");
  ASSERT_EQ(y_red.rows(), y_lin.rows());
  EXPECT_LT((y_red - y_lin).norm() / y_lin.norm(), 1e-12);
  EXPECT_NEAR(figure(s, "reduced_linear_error"), (y_red - y_lin).norm() / y_lin.norm(), 1e-14);
  // The run's comparison is with the nonlinear pendulum driven the same way: the reduced
  // (= linear) model is off by the linearisation's own error, recomputed from the stored runs.
  const Matrix y_nl = r.read_matrix("/outputs/y");
  const Matrix y_nl_linear = r.read_matrix("/linear/nonlinear_response/y");
  ASSERT_EQ(y_nl.rows(), y_nl_linear.rows());
  EXPECT_LT((y_nl - y_nl_linear).cwiseAbs().maxCoeff(), 1e-12)
      << "the full run is the nonlinear pendulum under [input] from its rest state";
  EXPECT_NEAR(
      experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity()),
      (y_nl - y_red).norm() / y_nl.norm(), 1e-12);
  // The timing and the accuracy are recorded.
  EXPECT_GT(r.attribute_double("/benchmark", "cpu_seconds"), 0.0);
  EXPECT_GT(r.attribute_int("/benchmark", "steps"), 100);
  EXPECT_LT(r.attribute_double("/benchmark", "reference_difference"), 1e-7);
}

TEST_F(MultibodyRun, EveryBenchmarkFileRunsWithItsBookkeepingClosed) {
  // The other three files on a shortened horizon: the energy balance (with the robot's actuator
  // work and the governor's dampers) closes, the constraints hold, the linearisation agrees with
  // the nonlinear model to second order (the difference halves, or better, with the input), and
  // the stored configuration reparses to itself.
  for (const char* file : {"a04_bricard.toml", "a05_flyball.toml", "robot.toml"}) {
    SCOPED_TRACE(file);
    const fs::path out = dir_ / (std::string(file) + ".h5");
    const auto c =
        load_experiment(source_dir() / "experiments" / file,
                        {"experiment.output=\"" + out.string() + "\"", "output.plots=false",
                         "simulation.t_end=1.0", "linear.t_end=2.0"});
    EXPECT_EQ(parse_experiment(c.toml, "stored", dir_).toml, c.toml);
    const RunSummary s = run_experiment(c);
    ASSERT_TRUE(fs::exists(out));
    // J; E(0) is 29 J (A04), 239 J (A05), 1.1e4 J (robot); measured 4e-9 .. 8e-6
    EXPECT_LT(figure(s, "energy_balance_error"),
              1e-6 * std::max(1.0, std::abs(figure(s, "energy_initial"))));
    // m; 0 without constraints, ~1e-15 for A04
    EXPECT_LT(figure(s, "constraint_residual"), 1e-13);
    EXPECT_GT(figure(s, "linear_ratio"), 1.8);
    EXPECT_LT(figure(s, "linear_ratio"), 4.4);
    if (s.reduced_order > 0) {
      EXPECT_LT(figure(s, "reduced_linear_error"), 1e-3);
    }
  }
}

TEST_F(MultibodyRun, StoredConfigurationParsesBackToItself) {
  const auto a = load_experiment(a01_file());
  const auto b = parse_experiment(a.toml, "stored", dir_);
  EXPECT_EQ(a.toml, b.toml);
  EXPECT_EQ(b.model->kind(), "pendulum");
  EXPECT_EQ(b.reduction->name(), "modal");
  EXPECT_NE(b.toml.find("adams"), std::string::npos) << b.toml;
}

std::string error_of(const std::vector<std::string>& overrides) {
  try {
    load_experiment(a01_file(), overrides);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(MultibodyRun, MistakesAreNamed) {
  EXPECT_NE(error_of({"model.N=10"}).find("unknown key 'model.N'"), std::string::npos);
  EXPECT_NE(error_of({"simulation.rtl=1e-8"}).find("did you mean 'simulation.rtol'"),
            std::string::npos);
  EXPECT_NE(error_of({"reduction.order=0"}).find("needs order >= 1"), std::string::npos);
  EXPECT_NE(error_of({"simulation.rtol=-1"}).find("rtol = -1"), std::string::npos);
  EXPECT_NE(error_of({"simulation.atol=inf"}).find("must be finite numbers > 0"),
            std::string::npos);
  EXPECT_NE(error_of({"simulation.method=\"rk4\""}).find("rk4"), std::string::npos);
  EXPECT_NE(error_of({"output.animation=\"avi\""}).find("avi"), std::string::npos);
  EXPECT_NE(error_of({"simulation.dt=0.01"}).find("for model.type = \"pendulum\""),
            std::string::npos)
      << "the fixed-step keys do not apply to a kind that integrates itself";
  EXPECT_NE(error_of({"linear.output_dt=0.03"}).find("whole number"), std::string::npos);
  EXPECT_NE(error_of({"model.type=\"flyballs\""}).find("did you mean 'flyball'"),
            std::string::npos);
  // [linear] belongs to the multibody kinds only.
  EXPECT_NE(error_of({"model.type=\"linearised_multibody\""}).find("[linear] belongs to"),
            std::string::npos);
}

TEST_F(MultibodyRun, FailedRunLeavesNoFile) {
  const fs::path out = dir_ / "failed.h5";
  const auto c = load_experiment(
      a01_file(), {"experiment.output=\"" + out.string() + "\"", "simulation.max_steps=3"});
  EXPECT_THROW(run_experiment(c), NumericalError);
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir_)) ADD_FAILURE() << "left behind: " << e.path();
}

}  // namespace
}  // namespace mor::experiments
