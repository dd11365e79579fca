// SPDX-License-Identifier: GPL-3.0-or-later
// Experiment files and results files end to end: what the runner streams to HDF5 is read back
// and compared with an independent in-memory integration of the same model; the stored
// configuration parses back to the same experiment.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/mass_spring_chain.hpp"
#include "reduction/lti_operator.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"
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
  ChainParameters small;  // kSmall's [model]
  small.N = 30;
  small.k_n = 2.0;
  const MassSpringChain chain(small);
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

// The energy is a registered measure of the snapshots (analysis.energy): off, the snapshots are
// written as before and no energy is.
TEST_F(Experiment, TheSnapshotEnergyIsAMeasureThatCanBeTurnedOff) {
  ExperimentConfig c = parse_experiment(kSmall, "small.toml", dir_, {"analysis.energy = false"});
  c.output = dir_ / "no_energy.h5";
  const RunSummary s = run_experiment(c);
  const io::ResultsReader r(c.output);
  EXPECT_TRUE(r.exists("/snapshots/p"));
  EXPECT_FALSE(r.exists("/snapshots/energy"));
  EXPECT_EQ(s.snapshots, 27);
}

TEST_F(Experiment, StoredConfigurationParsesBackToTheSameExperiment) {
  const ExperimentConfig a = parse_experiment(kSmall, "small.toml", dir_);
  const ExperimentConfig b = parse_experiment(a.toml, "stored", dir_);
  EXPECT_EQ(a.toml, b.toml);
  EXPECT_EQ(b.model_size(), 30);
  EXPECT_EQ(b.input.type, "chirp");
  EXPECT_EQ(b.integrator.scheme, Scheme::generalized_alpha);
  EXPECT_EQ(b.snapshot_stride, 4);
}

// The default experiment is a reduction of the nonlinear chain tested on an input its training
// runs have not seen. Here on a smaller chain and horizon (N = 2000, 40 s: seconds, where the
// file's N = 50000 takes about 5 s of work): the reduced model must reproduce the unseen
// output to well below the 1e-3 the README's summary promises in spirit, and be of the order
// the file asks for.
TEST_F(Experiment, DefaultExperimentReducesAndGeneralisesToAnUnseenInput) {
  const char* src = std::getenv("MOR_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const ExperimentConfig file = load_experiment(fs::path(src) / "experiments" / "default.toml");
  EXPECT_FALSE(file.model->is_linear());
  EXPECT_EQ(file.reduction->family(), ReductionMethod::Family::projection);
  ASSERT_FALSE(file.training.empty());
  for (const auto& t : file.training) EXPECT_NE(t.type, file.input.type);
  const ExperimentConfig c = load_experiment(
      fs::path(src) / "experiments" / "default.toml",
      {"model.N=2000", "simulation.t_end=40", "output.plots=false", "reduction.compare_orders=[]",
       "experiment.output=\"" + (dir_ / "default.h5").string() + "\""});
  const RunSummary s = run_experiment(c);
  constexpr double kUnseenOutputTolerance = 1e-4;
  EXPECT_EQ(s.reduced_order, c.reduction->order());
  EXPECT_LT(
      experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity()),
      kUnseenOutputTolerance)
      << "relative output error "
      << experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity())
      << " against " << kUnseenOutputTolerance;
  EXPECT_GT(s.deim_samples, 0);
  EXPECT_TRUE(fs::exists(dir_ / "default.h5"));
}

TEST_F(Experiment, OverridesAndTableInputRelativeToTheFile) {
  std::ofstream(dir_ / "u.csv") << "# t, u\n0, 0\n1, 1\n2, 0\n";
  std::ofstream(dir_ / "e.toml") << "[model]\nN = 4\n[input]\ntype = \"table\"\nfile = \"u.csv\"\n"
                                 << "[output]\nplots = false\n";
  const ExperimentConfig c = load_experiment(
      dir_ / "e.toml", {"model.N=1e2", "simulation.integrator=rk4", "simulation.t_end=2"});
  EXPECT_EQ(c.model_size(), 100);
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
  // Newton held to one iteration that must confirm itself by a computed correction (the bound
  // on the next correction would accept it) fails at the first step.
  ExperimentConfig c = parse_experiment(
      kSmall, "small.toml", dir_,
      {"model.k_l=1e4", "simulation.newton_max_iterations=1", "simulation.newton_bound=false",
       "simulation.dt=0.1", "simulation.t_end=50"});
  c.output = dir_ / "diverged.h5";
  EXPECT_THROW(run_experiment(c), NumericalError);
  EXPECT_TRUE(fs::is_empty(dir_)) << "a diverged run left a file in " << dir_;
}

const char* kReduction = R"(
[experiment]
name = "reduce"
[model]
N = 40
k_n = 0.0
damping = "rayleigh"
alpha = 0.2
beta = 0.2
[input]
type = "chirp"
f0 = 0.0
f1 = 0.5
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
order = 8
gramians = "dense"
[analysis]
bode_points = 20
)";

// The stored reduced matrices, integrated by an independent hand-written implicit midpoint
// recurrence, reproduce the stored reduced outputs; the stored error is y - y_r.
TEST_F(Experiment, ReductionRunStoresAReducedModelThatReproducesItsOutputs) {
  ExperimentConfig c = parse_experiment(kReduction, "reduce.toml", dir_);
  c.output = dir_ / "reduce.h5";
  const RunSummary s = run_experiment(c);
  EXPECT_EQ(s.reduced_order, 8);
  const io::ResultsReader r(c.output);
  const Matrix E = r.read_matrix("/reduction/reduced/E"), A = r.read_matrix("/reduction/reduced/A"),
               B = r.read_matrix("/reduction/reduced/B"), C = r.read_matrix("/reduction/reduced/C");
  const Matrix u = r.read_rows_as_columns("/outputs/u"), y = r.read_rows_as_columns("/outputs/y");
  const Matrix yr = r.read_rows_as_columns("/reduced/outputs/y");
  const Matrix e = r.read_rows_as_columns("/error/y");
  ASSERT_EQ(yr.cols(), y.cols());
  EXPECT_TRUE(matrices_near(e, Matrix(y - yr), 0.0));
  // (E - h/2 A) x+ = (E + h/2 A) x + h B u(t + h/2); the chirp is re-evaluated exactly.
  const double h = 0.05;
  Eigen::PartialPivLU<Matrix> lhs(E - 0.5 * h * A);
  const Matrix rhs = E + 0.5 * h * A;
  const auto chirp = make_chirp_signal(1, 1.0, 0.0, 0.5, 20.0);
  Vector x = Vector::Zero(8), uk(1);
  Matrix yref(1, y.cols());
  yref.col(0) = C * x;
  for (Index k = 0; k + 1 < y.cols(); ++k) {
    chirp->evaluate((static_cast<double>(k) + 0.5) * h, uk);
    x = lhs.solve(rhs * x + h * B * uk);
    yref.col(k + 1) = C * x;
  }
  EXPECT_TRUE(matrices_near(yr, yref, 1e-10, testing::Compare::relative));
  // The output error is bounded by the BT bound times the input's L2 norm (||y - y_r||_L2 <=
  // ||G - G_r||_Hinf ||u||_L2 for zero initial states), up to the time discretisation.
  const double bound = r.attribute_double("/reduction", "error_bound");
  const double e_l2 = std::sqrt(h) * e.norm(), u_l2 = std::sqrt(h) * u.norm();
  EXPECT_LE(e_l2, 1.01 * bound * u_l2);
  const Vector hsv = r.read_vector("/reduction/hsv");
  for (Index i = 1; i < hsv.size(); ++i) EXPECT_LE(hsv(i), hsv(i - 1));
  const double hinf = r.attribute_double("/analysis", "hinf_error");
  EXPECT_GE(hinf, hsv(8) * (1 - 1e-8));
  EXPECT_LE(hinf, bound * (1 + 1e-8));
  EXPECT_EQ(r.dims("/analysis/omega"), (std::vector<Index>{20}));
}

/// max over omega of sigma_max(G(i w) - G_r(i w)) for dense descriptor models, by a long-double
/// LU of each (i w E - A): 11 more bits than double, an evaluation independent of the runner's.
double long_double_error(const std::array<Matrix, 4>& f, const std::array<Matrix, 4>& r,
                         const std::vector<double>& omega, double* at) {
  using LC = std::complex<long double>;
  using LM = Eigen::Matrix<LC, Eigen::Dynamic, Eigen::Dynamic>;
  auto cast = [](const Matrix& X) {
    LM Y(X.rows(), X.cols());
    for (Index i = 0; i < X.rows(); ++i)
      for (Index j = 0; j < X.cols(); ++j) Y(i, j) = static_cast<long double>(X(i, j));
    return Y;
  };
  auto response = [&](const std::array<Matrix, 4>& s, double w) {  // E, A, B, C
    const LM M = LC(0.0L, static_cast<long double>(w)) * cast(s[0]) - cast(s[1]);
    return LM(cast(s[3]) * Eigen::PartialPivLU<LM>(M).solve(cast(s[2])));
  };
  double best = 0.0;
  for (const double w : omega) {
    const LM e = response(f, w) - response(r, w);
    Eigen::MatrixXcd d(e.rows(), e.cols());
    for (Index i = 0; i < e.rows(); ++i)
      for (Index j = 0; j < e.cols(); ++j)
        d(i, j) = Complex(static_cast<double>(e(i, j).real()), static_cast<double>(e(i, j).imag()));
    const double s = Eigen::JacobiSVD<Eigen::MatrixXcd>(d).singularValues()(0);
    if (s > best) {
      best = s;
      *at = w;
    }
  }
  return best;
}

// The flyball governor's BT model (issue 28): its error peaks at the lightly damped swing mode
// (Re lambda ~ -1e-5, |G| ~ 3e3), where plain double evaluations of G - G_r are rounding noise,
// and the a priori bound lies below what double precision resolves. The runner must report the
// error within 2x of an independent long-double evaluation, or say that the bound lies below
// the achievable accuracy; never "ok" with an accuracy it does not have.
TEST_F(Experiment, FlyballHinfErrorIsResolvedOrSaysWhyNot) {
  const char* src = std::getenv("MOR_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const fs::path out = dir_ / "flyball.h5";
  const ExperimentConfig c =
      load_experiment(fs::path(src) / "experiments" / "flyball_linear_bt.toml",
                      {"experiment.output=\"" + out.string() + "\"", "simulation.t_end=0.5",
                       "analysis.bode_points=0"});
  run_experiment(c);
  const io::ResultsReader r(out);
  const double value = r.attribute_double("/analysis", "hinf_error");
  const double omega = r.attribute_double("/analysis", "hinf_omega");
  const double accuracy = r.attribute_double("/analysis", "hinf_relative_accuracy");
  const std::string status = r.attribute_string("/analysis", "hinf_status");
  const double bound = r.attribute_double("/reduction", "error_bound");

  const SecondOrderSystem sys = std::get<SecondOrderSystem>(c.model->linear_system());
  SecondOrderLtiOperator op(sys);
  const std::array<Matrix, 4> full{dense_E(op), dense_A(op), op.B(), op.C()};
  const std::array<Matrix, 4> red{
      r.read_matrix("/reduction/reduced/E"), r.read_matrix("/reduction/reduced/A"),
      r.read_matrix("/reduction/reduced/B"), r.read_matrix("/reduction/reduced/C")};
  // The reference: a log grid over 1e-2..1e5 rad/s and fine grids of +-2e-5 around the
  // reported frequency and around every lightly damped pole of the full model (the resonance
  // is ~1e-6 wide).
  std::vector<double> grid;
  for (int k = 0; k <= 2000; ++k) grid.push_back(1e-2 * std::pow(1e7, k / 2000.0));
  std::vector<double> centres{omega};
  const Eigen::EigenSolver<Matrix> poles(full[0].partialPivLu().solve(full[1]), false);
  for (const Complex& l : poles.eigenvalues())
    if (l.imag() > 0.0 && -l.real() < 1e-3 * std::abs(l)) centres.push_back(l.imag());
  for (const double w0 : centres)
    for (int k = -400; k <= 400; ++k) grid.push_back(w0 * (1.0 + 5e-8 * k));
  double at = 0.0;
  const double truth = long_double_error(full, red, grid, &at);
  RecordProperty("hinf_error", ::testing::PrintToString(value));
  RecordProperty("long_double_error", ::testing::PrintToString(truth));
  RecordProperty("hinf_status", status);
  ASSERT_GT(truth, 0.0);
  const bool within_2x = value <= 2.0 * truth && value >= 0.5 * truth;
  const bool says_bound_unresolvable =
      status.find("lies below the accuracy achievable") != std::string::npos;
  EXPECT_TRUE(within_2x || says_bound_unresolvable)
      << "value " << value << " at " << omega << ", long double " << truth << " at " << at
      << ", status: " << status;
  // The claimed accuracy holds (the reference's own error, kappa 2^-64 |G| with kappa up to
  // ~1e9 and |G| ~ 3e3, is below 1% of the error here).
  EXPECT_LE(std::abs(value - truth), accuracy * value + 1e-2 * truth)
      << "value " << value << ", long double " << truth << ", claimed relative accuracy "
      << accuracy;
  if (truth > 2.0 * bound) {
    EXPECT_NE(status, "ok") << "the true error exceeds the bound " << bound;
  }
}

TEST_F(Experiment, ReductionMistakesAreNamed) {
  auto message = [&](std::vector<std::string> overrides) -> std::string {
    try {
      parse_experiment(kReduction, "reduce.toml", dir_, overrides);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  // BT of the nonlinear chain reduces its linearisation about rest (test_registry runs it).
  EXPECT_EQ(message({"model.k_n=2"}), "no error");
  EXPECT_NE(message({"reduction.tolerance=1e-3"}).find("exactly one of"), std::string::npos);
  EXPECT_NE(message({"reduction.variant=pv"}).find("variant needs method = \"sobt\""),
            std::string::npos)
      << message({"reduction.variant=pv"});
  EXPECT_NE(message({"reduction.projection=balanced"}).find("balanced"), std::string::npos);
  EXPECT_NE(message({"reduction.gramians=lowrank"}).find("lowrank"), std::string::npos);
  EXPECT_NE(message({"analysis.omega_min=0"}).find("omega_min"), std::string::npos);
  EXPECT_NE(message({"reduction.ordr=3"}).find("did you mean 'reduction.order'"),
            std::string::npos);
}

TEST_F(Experiment, ReductionToAnImpossibleOrderLeavesNoFile) {
  ExperimentConfig c = parse_experiment(kReduction, "reduce.toml", dir_, {"reduction.order=81"});
  c.output = dir_ / "too_big.h5";
  try {
    run_experiment(c);
    FAIL() << "r = 81 > n = 80 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("r = 81 exceeds the system order n = 80"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(Experiment, ReductionExperimentFilesAreValidAndRoundTrip) {
  const char* src = std::getenv("MOR_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  for (const char* name : {"bt_chain.toml", "sobt_chain.toml", "bt_chain_light.toml"}) {
    const ExperimentConfig a = load_experiment(fs::path(src) / "experiments" / name);
    EXPECT_NE(a.reduction->name(), "none") << name;
    EXPECT_TRUE(a.model->is_linear()) << name;
    const ExperimentConfig b = parse_experiment(a.toml, "stored", dir_);
    EXPECT_EQ(a.toml, b.toml) << name;
  }
  for (const char* name : {"pod_deim_chain.toml", "empirical_bt_chain.toml"}) {
    const ExperimentConfig a = load_experiment(fs::path(src) / "experiments" / name);
    EXPECT_TRUE(a.reduction->name() == "pod" || a.reduction->name() == "empirical_bt") << name;
    EXPECT_FALSE(a.model->is_linear()) << name;
    EXPECT_FALSE(a.training.empty()) << name;
    EXPECT_EQ(a.toml.find("compare_orders = []"), std::string::npos) << name;
    const ExperimentConfig b = parse_experiment(a.toml, "stored", dir_);
    EXPECT_EQ(a.toml, b.toml) << name;
  }
}

/// d = r = N empirical balancing against the full model: measured 3e-16 (output) and 8e-16
/// (state) relative; the reduced matrices W^T M V, ... are formed as products, so W^T V = I
/// holding only to eps sigma_1 / sigma_N does not enter.
constexpr double kFullOrderEmpiricalTol = 1e-12;

const char* kPod = R"(
[experiment]
name = "pod"
[model]
N = 12
k_n = 2.0
[[training]]
type = "chirp"
amplitude = 2.0
f0 = 0.0
f1 = 0.4
t1 = 10.0
[[training]]
type = "multisine"
amplitude = 2.0
frequencies = [0.03, 0.1, 0.3]
[input]
type = "sine"
amplitude = 1.5
frequency = 0.07
[simulation]
integrator = "implicit_midpoint"
dt = 0.05
t_end = 10.0
newton_rtol = 1e-13
[output]
snapshot_stride = 5
plots = false
[reduction]
method = "pod"
order = 12
nonlinear = "tensor"
training_stride = 1
)";

TEST_F(Experiment, PodOfFullRankReproducesTheFullTrajectory) {
  // r = N with the exact reduced cubic: V is an orthonormal basis of R^N, so the reduced model
  // is the full one in other coordinates and both runs (same integrator, Newton to 1e-13) agree
  // to the Newton tolerance times the number of steps.
  for (const char* nonlinear : {"\"tensor\"", "\"full\""}) {
    ExperimentConfig c =
        parse_experiment(kPod, "pod.toml", dir_, {std::string("reduction.nonlinear=") + nonlinear});
    c.output = dir_ / "pod.h5";
    fs::remove(c.output);
    const RunSummary s = run_experiment(c);
    EXPECT_EQ(s.reduced_order, 12);
    EXPECT_LT(
        experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity()),
        1e-9)
        << nonlinear;
    EXPECT_LT(
        experiments::figure_or(s.figures, "state_error", std::numeric_limits<double>::infinity()),
        1e-9)
        << nonlinear;
    const io::ResultsReader r(c.output);
    EXPECT_EQ(r.attribute_int("/reduction", "training_snapshots"), 2 * 201);
    EXPECT_NEAR(r.attribute_double("/reduction", "captured_energy"), 1.0, 1e-12);
  }
}

TEST_F(Experiment, PodOfPositionsAndVelocitiesKeepsBothSnapshotSets) {
  // pod_snapshots = ["p", "v"]: the basis is the POD of the position and the velocity snapshots
  // side by side (twice the columns); at r = N it still reproduces the full trajectory.
  ExperimentConfig c =
      parse_experiment(kPod, "pod.toml", dir_, {"reduction.pod_snapshots=[\"p\", \"v\"]"});
  c.output = dir_ / "pod_pv.h5";
  const RunSummary s = run_experiment(c);
  EXPECT_LT(
      experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity()),
      1e-9);
  const io::ResultsReader r(c.output);
  EXPECT_EQ(r.attribute_int("/reduction", "training_snapshots"), 2 * 2 * 201);
  EXPECT_EQ(r.attribute_string("/reduction", "pod_snapshots"), "p,v");
  EXPECT_THROW(parse_experiment(kPod, "pod.toml", dir_, {"reduction.pod_snapshots=[\"w\"]"}),
               InvalidArgument);
}

TEST_F(Experiment, PodDeimOnAnUnseenInputIsAccurateAndRecordsItsStages) {
  // N = 60, r = 10 from the chirp and multisine training runs, Q-DEIM with 2 r samples, tested
  // on a sine the training never saw. The bound here is loose (the point is the pipeline; the
  // accuracy study is in the README): 1e-2 relative output error, against ~1 for a basis that
  // missed the response.
  ExperimentConfig c =
      parse_experiment(kPod, "pod.toml", dir_,
                       {"model.N=60", "reduction.order=10", "reduction.nonlinear=\"deim\"",
                        "reduction.training_stride=2", "reduction.store_bases=true"});
  c.output = dir_ / "pod_deim.h5";
  const RunSummary s = run_experiment(c);
  EXPECT_LT(
      experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity()),
      1e-2);
  const io::ResultsReader r(c.output);
  // m = 2 r unless the force snapshots have a lower numerical rank (then that rank).
  const std::int64_t m = r.attribute_int("/reduction", "m");
  EXPECT_LE(m, 20);
  EXPECT_GE(m, 10);
  EXPECT_EQ(r.dims("/reduction/deim_masses"), (std::vector<Index>{m}));
  const Vector masses = r.read_vector("/reduction/deim_masses");
  for (Index i = 0; i < masses.size(); ++i) {
    EXPECT_GE(masses[i], 1.0);
    EXPECT_LE(masses[i], 60.0);
  }
  const Matrix V = r.read_matrix("/reduction/V");
  EXPECT_TRUE(matrices_near(Matrix(V.transpose() * V), Matrix::Identity(10, 10), 1e-12));
  for (const char* stage : {"snapshots_s", "pod_s", "deim_s", "projection_s"})
    EXPECT_GE(r.attribute_double("/reduction", stage), 0.0) << stage;
  EXPECT_GT(r.attribute_double("/timings", "speedup_per_step"), 0.0);
}

TEST_F(Experiment, PodEcswIsAsAccurateAsTheFullForceAndRecordsItsWeights) {
  // The same pipeline with ECSW (default tau = 1e-6) on the chain's 61 springs: its output error
  // is of the order of the exact (full) treatment's, i.e. the POD error, and /reduction holds the
  // elements and weights it evaluates with what the NNLS reached.
  auto run = [&](const char* nonlinear, const char* file) {
    ExperimentConfig c = parse_experiment(
        kPod, "pod.toml", dir_,
        {"model.N=60", "reduction.order=10",
         std::string("reduction.nonlinear=\"") + nonlinear + "\"", "reduction.training_stride=2"});
    c.output = dir_ / file;
    return run_experiment(c);
  };
  const RunSummary full = run("full", "pod_full.h5");
  const RunSummary deim = run("deim", "pod_deim.h5");
  const RunSummary ecsw = run("ecsw", "pod_ecsw.h5");
  std::printf(
      "output error: full %.3g, deim %.3g, ecsw %.3g (%lld of %lld springs)\n",
      experiments::figure_or(full.figures, "output_error", std::numeric_limits<double>::infinity()),
      experiments::figure_or(deim.figures, "output_error", std::numeric_limits<double>::infinity()),
      experiments::figure_or(ecsw.figures, "output_error", std::numeric_limits<double>::infinity()),
      static_cast<long long>(ecsw.ecsw_elements), static_cast<long long>(ecsw.n_elements));
  // Measured: full 4.06e-09, deim 4.06e-09, ecsw 1.02e-08 with 17 springs.
  EXPECT_LT(
      experiments::figure_or(ecsw.figures, "output_error", std::numeric_limits<double>::infinity()),
      10.0 * experiments::figure_or(full.figures, "output_error",
                                    std::numeric_limits<double>::infinity()));
  EXPECT_EQ(ecsw.n_elements, 61);
  EXPECT_GE(ecsw.ecsw_elements, 1);
  EXPECT_LT(ecsw.ecsw_elements, 61);
  const io::ResultsReader r(dir_ / "pod_ecsw.h5");
  EXPECT_EQ(r.attribute_int("/reduction", "ecsw_elements"), ecsw.ecsw_elements);
  EXPECT_LE(r.attribute_double("/reduction", "ecsw_relative_residual"),
            r.attribute_double("/reduction", "ecsw_tolerance"));
  EXPECT_FALSE(r.exists("/reduction/deim_masses"));
  const Vector elements = r.read_vector("/reduction/ecsw_elements");
  const Vector weights = r.read_vector("/reduction/ecsw_weights");
  ASSERT_EQ(elements.size(), ecsw.ecsw_elements);
  ASSERT_EQ(weights.size(), ecsw.ecsw_elements);
  for (Index i = 0; i < elements.size(); ++i) {
    EXPECT_GE(elements[i], 1.0);
    EXPECT_LE(elements[i], 61.0);
    EXPECT_GT(weights[i], 0.0);
  }
  EXPECT_GE(r.attribute_double("/reduction", "ecsw_s"), 0.0);
}

/// Parsing and running kPod with the overrides fails with a message containing `needle` and
/// leaves no results file in `dir`.
void expect_pod_error(const fs::path& dir, const std::vector<std::string>& overrides,
                      const std::string& needle) {
  try {
    ExperimentConfig c = parse_experiment(kPod, "pod.toml", dir, overrides);
    c.output = dir / "bad.h5";
    run_experiment(c);
    ADD_FAILURE() << "expected an error containing " << needle;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "bad.h5"));
}

TEST_F(Experiment, PodMistakesAreNamedAndLeaveNoFile) {
  auto expect_error = [&](const std::vector<std::string>& overrides, const std::string& needle) {
    expect_pod_error(dir_, overrides, needle);
  };
  expect_error({"reduction.order=13"}, "r = 13");  // above the rank N = 12
  expect_error({"reduction.nonlinear=\"cubic\""}, "cubic");
  expect_error({"reduction.order=0", "reduction.energy=1.5"}, "1.5");
  expect_error({"reduction.training_files=[\"missing.h5\"]"}, "missing.h5");
  // Snapshots of another N: a results file of a 20-mass chain.
  ExperimentConfig other = parse_experiment(kSmall, "small.toml", dir_, {"model.N=20"});
  other.output = dir_ / "other.h5";
  run_experiment(other);
  expect_error({"reduction.training_files=[\"other.h5\"]"}, "N = 20");
}

TEST_F(Experiment, OrderComparisonUsesNestedBasesUpToFullRank) {
  // compare_orders builds the other orders from the leading columns of one POD basis: the
  // order r = N must then reproduce the full trajectory (as a separate POD of order N does),
  // the main order appears once, and the rows come sorted by r.
  ExperimentConfig c = parse_experiment(
      kPod, "pod.toml", dir_, {"reduction.order=4", "reduction.compare_orders=[12, 2, 8, 4]"});
  c.output = dir_ / "compare.h5";
  const RunSummary s = run_experiment(c);
  const io::ResultsReader r(c.output);
  const Vector orders = r.read_vector("/error_vs_r/r");
  ASSERT_EQ(orders.size(), 4);
  EXPECT_EQ(orders, (Vector(4) << 2, 4, 8, 12).finished());
  const Vector err = r.read_vector("/error_vs_r/relative_l2");
  EXPECT_LT(err[3], 1e-9) << "r = N";
  for (Index i = 0; i < 3; ++i) EXPECT_GT(err[i], 1e3 * err[3]) << "r = " << orders[i];
  EXPECT_EQ(err[1], experiments::figure_or(
                        s.figures, "output_error",
                        std::numeric_limits<double>::infinity()));  // the main run, r = 4
  const Vector step = r.read_vector("/error_vs_r/reduced_step_s");
  for (Index i = 0; i < 4; ++i) EXPECT_GT(step[i], 0.0);
}

TEST_F(Experiment, EmpiricalBalancingOfFullOrderReproducesTheFullTrajectory) {
  // d = r = N: V and W are square with W^T V = I, so the Petrov-Galerkin model is the full one
  // in other coordinates (exact cubic by the tensor). The agreement is limited by the
  // conditioning of V (sigma_N / sigma_1 small), hence a looser bound than POD's.
  ExperimentConfig c = parse_experiment(
      kPod, "pod.toml", dir_,
      {"reduction.method=\"empirical_bt\"", "reduction.order=12", "reduction.subspace_order=12",
       "reduction.amplitudes=[0.5, 1.0]", "reduction.gramian_horizon=20.0",
       "reduction.compare_orders=[3, 6]", "reduction.store_bases=true"});
  c.output = dir_ / "ebt.h5";
  const RunSummary s = run_experiment(c);
  EXPECT_EQ(s.reduced_order, 12);
  EXPECT_LT(
      experiments::figure_or(s.figures, "output_error", std::numeric_limits<double>::infinity()),
      kFullOrderEmpiricalTol);
  EXPECT_LT(
      experiments::figure_or(s.figures, "state_error", std::numeric_limits<double>::infinity()),
      kFullOrderEmpiricalTol);
  const io::ResultsReader r(c.output);
  const Matrix V = r.read_matrix("/reduction/V"), W = r.read_matrix("/reduction/W");
  // Biorthogonal to rounding amplified by the conditioning sigma_1 / sigma_N (~1e10 here).
  const Vector sigma = r.read_vector("/reduction/empirical_singular_values");
  EXPECT_TRUE(matrices_near(Matrix(W.transpose() * V), Matrix::Identity(12, 12),
                            10 * testing::kEps * sigma[0] / sigma[11]));
  EXPECT_EQ(r.attribute_int("/reduction", "simulations"), 2 * 2 * (1 + 12));
  for (const char* stage :
       {"controllability_s", "subspace_pod_s", "observability_s", "balancing_s", "projection_s"})
    EXPECT_GE(r.attribute_double("/reduction", stage), 0.0) << stage;
  const Vector err = r.read_vector("/error_vs_r/relative_l2");
  ASSERT_EQ(err.size(), 3);
  EXPECT_GT(err[0], err[1]);
  EXPECT_GT(err[1], err[2]);
}

TEST_F(Experiment, EmpiricalBalancingMistakesAreNamed) {
  const std::string ebt = "reduction.method=\"empirical_bt\"";
  auto expect_error = [&](std::vector<std::string> overrides, const std::string& needle) {
    overrides.insert(overrides.begin(), ebt);
    expect_pod_error(dir_, overrides, needle);
  };
  expect_error({"reduction.energy=0.9"}, "unknown key 'reduction.energy'");
  expect_error({"reduction.amplitudes=[1.0, -2.0]"}, "-2");
  expect_error({"reduction.subspace_order=4", "reduction.subspace_energy=0.9"}, "at most one");
  expect_error({"reduction.order=3", "reduction.subspace_order=2"}, "r = 3");
  expect_error({"reduction.order=2", "reduction.subspace_order=4", "reduction.compare_orders=[5]"},
               "subspace dimension d = 4");
  expect_error({"reduction.compare_orders=[0]"}, "compare_orders");
  expect_error({"reduction.compare_orders=[13]"}, "13");
}

TEST_F(Experiment, PodNeedsTrainingData) {
  std::string text = kPod;
  const auto cut = text.find("[[training]]");
  const auto end = text.find("[input]");
  text.erase(cut, end - cut);
  EXPECT_THROW(parse_experiment(text, "pod.toml", dir_), InvalidArgument);
  try {
    parse_experiment(text, "pod.toml", dir_);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("training"), std::string::npos) << e.what();
  }
  // Empirical balancing needs training runs only for the DEIM force snapshots.
  const std::vector<std::string> ebt = {"reduction.method=\"empirical_bt\"",
                                        "reduction.nonlinear=\"deim\""};
  EXPECT_THROW(parse_experiment(text, "pod.toml", dir_, ebt), InvalidArgument);
  EXPECT_NO_THROW(
      parse_experiment(text, "pod.toml", dir_, {ebt[0], "reduction.nonlinear=\"tensor\""}));
}

// The nesting measured before toml++ parses (issue 44: a key of 40 000 parts overflowed its
// stack): keys, headers, arrays and inline tables count as the parser nests them; numbers,
// strings and comments do not.
TEST(TomlNesting, CountsLevelsAsTheParserNestsThem) {
  const std::vector<std::pair<std::string, std::size_t>> cases = {
      {"a = 1", 1},
      {"a.b.c = 1", 3},
      {"[a.b]\nc = 1", 3},
      {"[[s]]\nx = 1", 3},
      {"x = 1.5\ny = 1979-05-27T07:32:00Z", 1},
      {"x = \"a.b.c [[[ {{{\"", 1},
      {"'a.b' = 'c.d [['", 1},
      {"x = \"\"\"\n[[[[\n\"\"\"\ny = 2", 1},
      {"# a.b.c.d = [[[[\nx = 1", 1},
      {"a = [[1], [2]]", 3},
      {"a = [\n  [1,\n   2],\n]\nb.c = 1", 3},
      {"a = {b.c = [1]}", 4},
      {"a = {b = 1, c = {d = 2}}", 3},
      {"\"a.b\".c = 1", 2},
  };
  for (const auto& [text, depth] : cases) EXPECT_EQ(toml_nesting(text).depth, depth) << text;
  const TomlNesting deep = toml_nesting("x = 1\n\ny = " + std::string(100, '[') + "]");
  EXPECT_EQ(deep.depth, 101u);
  EXPECT_EQ(deep.line, 3u);
  // Every experiment and sweep file of the repository is far within the limit.
  for (const auto& e :
       fs::directory_iterator(fs::path(std::getenv("MOR_SOURCE_DIR")) / "experiments"))
    if (e.path().extension() == ".toml") {
      std::ifstream in(e.path());
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      EXPECT_LE(toml_nesting(text).depth, 6u) << e.path();
    }
}

}  // namespace
}  // namespace mor::experiments
