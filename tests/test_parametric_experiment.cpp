// SPDX-License-Identifier: GPL-3.0-or-later
// Parametric experiments end to end ([parameters], [validation], reduction.parameter_samples):
// the validation's full runs are the model at each point (its outputs equal those of a plain run
// of the chain with those keys); the parametric reduced model generalises to unseen points and
// an unseen input; the stored configuration parses back; the greedy runs the full model only
// where it selects, and its estimate follows the true error; every refusal names the key and the
// value, and a refused file writes nothing; the estimates before a run (--dry-run, a sweep's
// schedule) count the training's and the validation's runs.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/SVD>

#include "experiments/runner/estimates.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/export.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/summary.hpp"
#include "src/core/errors.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/results.hpp"
#include "src/systems/nonlinear_network.hpp"
#include "support/compare.hpp"
#include "support/mor_cli.hpp"
#include "support/source_dir.hpp"
#include "support/temp_dir.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using testing::matrices_near;

using ParametricExperiment = testing::TempDirTest;

// POD + Q-DEIM of the chain, N = 200, over k_n in [0.5, 4] x d in [0.2, 2] (log), trained at 6
// points on a chirp and a multisine, validated at 4 unseen points on a sine.
const std::string kModel = R"(
[experiment]
name = "parametric"
[model]
N = 200
)";
const std::string kParameters = R"(
[parameters]
k_n = { min = 0.5, max = 4.0 }
d = { min = 0.2, max = 2.0, scale = "log" }
)";
const std::string kTraining = R"(
[[training]]
type = "chirp"
amplitude = 1.0
f1 = 0.2
t1 = 40.0
[[training]]
type = "multisine"
frequencies = [0.01, 0.05, 0.1, 0.15]
)";
const std::string kRun = R"(
[input]
type = "sine"
amplitude = 0.7
frequency = 0.033
[simulation]
integrator = "implicit_midpoint"
dt = 0.05
t_end = 40.0
[output]
snapshot_stride = 0
plots = false
)";
const std::string kReduction = R"(
[reduction]
method = "pod"
order = 20
parameter_samples = 6
training_stride = 4
[validation]
parameter_samples = 4
)";
const std::string kParametric = kModel + kParameters + kTraining + kRun + kReduction;

// POD of the chain at 6 points to r = 20 on this horizon: the reduced outputs follow the full
// ones to about 1e-5 (observed 4e-6 .. 1.2e-5 at the 4 points); the bar of a useful parametric
// model is 1e-3.
constexpr double kValidationErrorBound = 1e-3;
// The same chain, the same integrator and input, built once by [parameters] and once by [model]
// keys: the same arithmetic.
constexpr double kSameRunTol = 0.0;
// An exported family against the recorded terms summed at a point: the same few products of
// O(1) entries, summed in another order.
constexpr double kExportTol = 1e-13;

std::string message_of_parse(const std::string& text, const fs::path& dir,
                             const std::vector<std::string>& overrides = {}) {
  try {
    (void)parse_experiment(text, "p.toml", dir, overrides);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no exception)";
}

/// x with 17 significant digits: it parses back to the same double.
std::string exact(double x) {
  std::ostringstream os;
  os.precision(17);
  os << x;
  return os.str();
}

TEST_F(ParametricExperiment, ValidatesAtUnseenPointsWhereTheFullRunsAreTheModelThere) {
  ExperimentConfig c = parse_experiment(kParametric, "p.toml", dir_);
  c.output = dir_ / "p.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(s.validation.has_value());
  EXPECT_EQ(s.validation->points, 4);
  EXPECT_EQ(s.validation->training_points, 6);
  const io::ResultsReader r(c.output);
  const Matrix X = r.read_matrix(layout::kValidationParameters);
  const Vector err = r.read_vector(layout::kValidationOutputError);
  ASSERT_EQ(X.rows(), 4);
  ASSERT_EQ(X.cols(), 2);
  EXPECT_EQ(r.read_strings(layout::kValidationParameterNames),
            (std::vector<std::string>{"d", "k_n"}));
  EXPECT_LE(err.maxCoeff(), kValidationErrorBound) << err.transpose();
  // No training point is a validation point.
  const Matrix T = r.read_matrix(layout::kReductionTrainingParameters);
  ASSERT_EQ(T.rows(), 6);
  for (Index i = 0; i < X.rows(); ++i)
    for (Index j = 0; j < T.rows(); ++j) EXPECT_GT((X.row(i) - T.row(j)).norm(), 0.0);

  // The run's own full model is the chain at the center, as a plain run with those keys gives it.
  const Vector center = r.read_vector(layout::kParametersReference);
  EXPECT_NEAR(center[0], std::sqrt(0.2 * 2.0), 1e-15);
  EXPECT_NEAR(center[1], 2.25, 1e-15);
  ExperimentConfig plain =
      parse_experiment(kModel + kRun, "plain.toml", dir_,
                       {"model.d = " + exact(center[0]), "model.k_n = " + exact(center[1])});
  plain.output = dir_ / "plain.h5";
  (void)run_experiment(plain);
  const io::ResultsReader rp(plain.output);
  EXPECT_TRUE(matrices_near(r.read_matrix(layout::kOutputsY), rp.read_matrix(layout::kOutputsY),
                            kSameRunTol));

  // The stored configuration parses back to the same parametric experiment.
  const ExperimentConfig back = parse_experiment(c.toml, "stored", dir_);
  EXPECT_EQ(back.toml, c.toml);
  EXPECT_EQ(back.parameters.names(), c.parameters.names());
}

TEST_F(ParametricExperiment, ExportWritesTheReducedFamilyTheDomainAndTheDeimData) {
  // mor export of a parametric POD + Q-DEIM run: per role the family X + sum mu_name X_<name>
  // equals sum_i theta_i(mu) X_i of /reduction/affine (theta_i read from the attributes here),
  // the domain is /parameters', the force's coefficient is k_n, and the DEIM points and basis and
  // V are /reduction's.
  ExperimentConfig c =
      parse_experiment(kParametric, "p.toml", dir_,
                       {"model.N = 60", "reduction.order = 8", "reduction.parameter_samples = 2",
                        "reduction.store_bases = true", "validation.parameter_samples = 1",
                        "simulation.t_end = 10.0"});
  c.output = dir_ / "p.h5";
  (void)run_experiment(c);
  const fs::path out = dir_ / "rom.mat";
  (void)export_results(c.output, ExportFormat::mat, out, std::chrono::seconds(60));
  const io::ResultsReader r(c.output);
  const auto var = [&](const std::string& name) {
    return Matrix(io::read_mat_variable(out, name).value);
  };
  const std::vector<std::string> names = r.read_strings(layout::kParametersNames);
  ASSERT_EQ(names, (std::vector<std::string>{"d", "k_n"}));
  const Vector lo = r.read_vector(layout::kParametersMin),
               hi = r.read_vector(layout::kParametersMax),
               log = r.read_vector(layout::kParametersLog),
               ref = r.read_vector(layout::kParametersReference);
  for (Index j = 0; j < 2; ++j)
    EXPECT_EQ(var("parameter_" + names[std::size_t(j)]),
              (Matrix(1, 4) << lo[j], hi[j], log[j], ref[j]).finished());
  // theta_i(mu) of a term from its attributes: scale times the named parameters.
  const auto theta = [&](const std::string& path, const Vector& mu) {
    double t = r.attribute_double(path, "scale");
    const std::string f = r.attribute_string(path, "factors");
    for (Index j = 0; j < 2; ++j)
      if (!f.empty() && f.find(names[std::size_t(j)]) != std::string::npos) t *= mu[j];
    return t;
  };
  for (const Vector& mu : {ref, Vector((Vector(2) << 0.3, 3.5).finished())}) {
    for (const std::string role : {"M", "D", "K", "B", "Cp", "Cv"}) {
      Matrix expected;
      for (int i = 0;; ++i) {
        const std::string path = layout::kReductionAffine + "/" + role + "_" + std::to_string(i);
        if (!r.exists(path)) break;
        const Matrix term = theta(path, mu) * r.read_matrix(path);
        expected = i == 0 ? term : Matrix(expected + term);
      }
      ASSERT_GT(expected.size(), 0) << role;
      Matrix family = var(role);
      for (Index j = 0; j < 2; ++j) {
        const std::string name = role + "_" + names[std::size_t(j)];
        try {
          family += mu[j] * var(name);
        } catch (const std::exception&) {  // no term in this parameter
        }
      }
      EXPECT_TRUE(matrices_near(family, expected, kExportTol, testing::Compare::relative))
          << role << " at " << mu.transpose();
    }
  }
  EXPECT_EQ(var("force_k_n"), Matrix::Constant(1, 1, 1.0));
  EXPECT_EQ(var("deim_points"), Matrix(r.read_vector(layout::kReductionDeimMasses)));
  EXPECT_EQ(var("deim_basis"), r.read_matrix(layout::kReductionDeimBasis));
  EXPECT_EQ(var("V"), r.read_matrix(layout::kReductionV));
}

TEST_F(ParametricExperiment, TheGreedyRunsTheFullModelOnlyAtThePointsItSelects) {
  ExperimentConfig c =
      parse_experiment(kParametric, "p.toml", dir_,
                       {"reduction.sampling = \"greedy\"", "reduction.parameter_samples = 12",
                        "reduction.greedy_max_points = 5", "reduction.greedy_batch = 2",
                        "reduction.greedy_tolerance = 0.0"});
  c.output = dir_ / "g.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(s.validation.has_value());
  const io::ResultsReader r(c.output);
  const Vector points = r.read_vector(layout::child(layout::kReductionGreedy, "point"));
  const Vector indicator = r.read_vector(layout::child(layout::kReductionGreedy, "indicator"));
  const Vector error = r.read_vector(layout::child(layout::kReductionGreedy, "true_error"));
  // The first point and then batches of two up to the cap of five.
  ASSERT_EQ(points.size(), 5);
  EXPECT_EQ(s.validation->selected_points, 5);
  for (Index i = 0; i < 5; ++i)
    for (Index j = 0; j < i; ++j) EXPECT_NE(points[i], points[j]) << "selected twice";
  EXPECT_TRUE(std::isnan(indicator[0]) && std::isnan(error[0]));  // the first: the center's
  for (Index i = 1; i < 5; ++i) EXPECT_TRUE(std::isfinite(indicator[i]) && indicator[i] > 0);
  for (Index i = 1; i < 5; ++i) EXPECT_TRUE(std::isfinite(error[i]) && error[i] > 0);
  // The snapshots are of the five selected points only: 2 training inputs, t_end / dt = 800
  // steps observed every training_stride = 4 steps and at step 0: 201 each.
  EXPECT_EQ(std::get<std::int64_t>(r.attribute(layout::kReduction, "training_snapshots")),
            5 * 2 * 201);
  EXPECT_LE(r.read_vector(layout::kValidationOutputError).maxCoeff(), kValidationErrorBound);
}

TEST_F(ParametricExperiment, GivenTrainingPointsAreTheOnesTrainedAt) {
  ExperimentConfig c = parse_experiment(
      kParametric, "p.toml", dir_,
      {"reduction.training_points = [[0.3, 1.0], [1.5, 3.5]]", "validation.parameter_samples = 1"});
  c.output = dir_ / "t.h5";
  (void)run_experiment(c);
  const io::ResultsReader r(c.output);
  Matrix expected(2, 2);
  expected << 0.3, 1.0, 1.5, 3.5;  // (d, k_n): the sorted names
  EXPECT_EQ(r.read_matrix(layout::kReductionTrainingParameters), expected);
  // The snapshots are of those two points: 2 training inputs, 201 observed steps each.
  EXPECT_EQ(std::get<std::int64_t>(r.attribute(layout::kReduction, "training_snapshots")),
            2 * 2 * 201);
  const std::string outside = [&] {
    try {
      (void)parse_experiment(kParametric, "p.toml", dir_,
                             {"reduction.training_points = [[0.3, 9.0]]"});
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no exception)");
  }();
  EXPECT_NE(outside.find("reduction.training_points[1]"), std::string::npos) << outside;
  EXPECT_NE(outside.find("k_n = 9"), std::string::npos) << outside;
}

TEST_F(ParametricExperiment, EmpiricalBalancingOfTheFamilyIsStableAndAccurateAtUnseenPoints) {
  // empirical_bt: the balancing bases at 3 training points, one Galerkin basis of order 20,
  // Q-DEIM trained on the forces of all of them; at 4 unseen points on the unseen sine within
  // the same bound as POD's family.
  std::string text = kParametric;
  text.replace(text.find("method = \"pod\""), 14, "method = \"empirical_bt\"");
  ExperimentConfig c = parse_experiment(text, "p.toml", dir_, {"reduction.parameter_samples = 3"});
  c.output = dir_ / "e.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(s.validation.has_value());
  const io::ResultsReader r(c.output);
  EXPECT_EQ(r.read_vector(layout::kReductionLocalOrders).size(), 3);
  EXPECT_EQ(std::get<std::string>(r.attribute(layout::kReduction, "global_projection")),
            "galerkin");
  EXPECT_FALSE(r.exists(layout::kReductionW));  // W = V
  const Vector error = r.read_vector(layout::kValidationOutputError);
  ASSERT_EQ(error.size(), 4);
  EXPECT_LE(error.maxCoeff(), kValidationErrorBound) << error.transpose();
  // Its keys need [parameters].
  std::string plain = kModel + kTraining + kRun +
                      "[reduction]\nmethod = \"empirical_bt\"\norder = 4\nparameter_samples = 3\n";
  const std::string message = [&] {
    try {
      (void)parse_experiment(plain, "p.toml", dir_);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no exception)");
  }();
  EXPECT_NE(message.find("reduction.parameter_samples"), std::string::npos) << message;
  EXPECT_NE(message.find("needs [parameters]"), std::string::npos) << message;
}

// A network file's M, D, K with affine terms: sums of the same O(1) products as the chain's.
constexpr double kSameNetworkTol = 1e-13;

TEST_F(ParametricExperiment, ANetworkFilesAffineTermsMakeItAFamily) {
  // The nonlinear chain exported as a network file set, with K_kl = K and D_c = D beside it: the
  // network at (c, kl) is the chain at k_l = 1 + kl, d = 0.5 (1 + c); its parametric POD holds
  // the validation bound.
  {
    std::ofstream f(dir_ / "chain.toml");
    f << "[model]\nN = 30\nk_n = 1.0\nd = 0.5\n";
  }
  (void)export_experiment_model(dir_ / "chain.toml", {}, ExportFormat::mtx, dir_ / "net");
  fs::copy_file(dir_ / "net.K.mtx", dir_ / "net.K_kl.mtx");
  fs::copy_file(dir_ / "net.D.mtx", dir_ / "net.D_c.mtx");
  const std::string network =
      "[experiment]\nname = \"net\"\n[model]\ntype = \"network\"\npath = \"" +
      (dir_ / "net").string() +
      "\"\n[parameters]\nkl = { min = 0.0, max = 1.0 }\nc = { min = 0.0, "
      "max = 1.0 }\n" +
      kTraining + kRun +
      "[reduction]\nmethod = \"pod\"\norder = 10\nparameter_samples = "
      "3\n[validation]\nparameter_samples = 2\n";
  ExperimentConfig c = parse_experiment(network, "n.toml", dir_);
  const Vector mu = (Vector(2) << 0.5, 0.25).finished();  // (c, kl): the sorted names
  const NonlinearNetwork a = c.model->at(c.parameters, mu)->network();
  const ExperimentConfig chain =
      parse_experiment("[model]\nN = 30\nk_n = 1.0\nd = 0.75\nk_l = 1.25\n", "c.toml", dir_);
  const NonlinearNetwork b = chain.model->network();
  EXPECT_TRUE(
      matrices_near(Matrix(a.linear_system().M), Matrix(b.linear_system().M), kSameNetworkTol));
  EXPECT_TRUE(
      matrices_near(Matrix(a.linear_system().D), Matrix(b.linear_system().D), kSameNetworkTol));
  EXPECT_TRUE(
      matrices_near(Matrix(a.linear_system().K), Matrix(b.linear_system().K), kSameNetworkTol));
  EXPECT_TRUE(matrices_near(a.coefficients(), b.coefficients(), kSameNetworkTol));
  c.output = dir_ / "n.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(s.validation.has_value());
  const io::ResultsReader r(c.output);
  EXPECT_LE(r.read_vector(layout::kValidationOutputError).maxCoeff(), kValidationErrorBound);
  EXPECT_NE(r.attribute_string(layout::kModel, "affine_terms").find("K_kl (K, kl)"),
            std::string::npos);
  // A term of the force's G is refused, naming it.
  fs::copy_file(dir_ / "net.G.mtx", dir_ / "net.G_kl.mtx");
  const std::string message = [&] {
    try {
      (void)parse_experiment(network, "n.toml", dir_);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no exception)");
  }();
  EXPECT_NE(message.find("G_kl is an affine term of G; a network's parameters enter M, D and K"),
            std::string::npos)
      << message;
}

// The greedy's estimate ||y_r - y_r'|| / ||y_r'|| against the true error e = ||y - y_r|| / ||y||,
// with e' = ||y - y_r'|| / ||y|| the enriched model's: the triangle inequality puts it in
// [(e - e') / (1 + e'), (e + e') / (1 - e')] (up to rounding, this slack).
constexpr double kEstimateBracketSlack = 1e-12;
// On this chain (N = 200, r = 20) the enriched model (order 2 r = 40, twice the DEIM points) is
// far more accurate than the order-r one at every selected point (observed e' / e = 1e-6 to
// 4e-6), so the estimate is the true error to about that, and their log-correlation at the
// selected points was 1 to 12 digits. The bars leave room, yet exclude the residual indicator
// this estimate replaced (4 to 10^5 times the true error at N = 10^4, correlation 0.20).
constexpr double kSaturationRatio = 1e-1;
constexpr double kMinLogCorrelation = 0.95;

TEST_F(ParametricExperiment, TheGreedysEstimateFollowsTheTrueError) {
  ExperimentConfig c =
      parse_experiment(kParametric, "p.toml", dir_,
                       {"reduction.sampling = \"greedy\"", "reduction.parameter_samples = 12",
                        "reduction.greedy_max_points = 7", "reduction.greedy_tolerance = 0.0"});
  c.output = dir_ / "g.h5";
  (void)run_experiment(c);
  const io::ResultsReader r(c.output);
  const Vector est = r.read_vector(layout::child(layout::kReductionGreedy, "indicator"));
  const Vector e = r.read_vector(layout::child(layout::kReductionGreedy, "true_error"));
  const Vector e_wide = r.read_vector(layout::child(layout::kReductionGreedy, "enriched_error"));
  ASSERT_EQ(est.size(), 7);
  for (Index i = 1; i < est.size(); ++i) {
    ASSERT_TRUE(std::isfinite(est[i]) && std::isfinite(e[i]) && std::isfinite(e_wide[i])) << i;
    ASSERT_LT(e_wide[i], 1.0) << i;
    EXPECT_GE(est[i], (e[i] - e_wide[i]) / (1 + e_wide[i]) - kEstimateBracketSlack) << i;
    EXPECT_LE(est[i], (e[i] + e_wide[i]) / (1 - e_wide[i]) + kEstimateBracketSlack) << i;
    EXPECT_LE(e_wide[i], kSaturationRatio * e[i])
        << "point " << i << ": enriched error " << e_wide[i] << ", true error " << e[i];
  }
  EXPECT_GE(r.attribute_double(layout::kReduction, "greedy_indicator_error_correlation"),
            kMinLogCorrelation);
}

TEST_F(ParametricExperiment, WithoutRankBeyondTheOrderTheGreedyTakesTheFarthestPoint) {
  // Every 100th of 800 steps: 9 snapshots per input, rank <= 18 < r = 20 after the first
  // point: no enriched model, no estimate; the next point is the farthest from the first.
  ExperimentConfig c =
      parse_experiment(kParametric, "p.toml", dir_,
                       {"reduction.sampling = \"greedy\"", "reduction.parameter_samples = 12",
                        "reduction.training_stride = 100", "reduction.greedy_max_points = 4",
                        "reduction.greedy_tolerance = 0.0"});
  c.output = dir_ / "g.h5";
  (void)run_experiment(c);
  const io::ResultsReader r(c.output);
  const Vector points = r.read_vector(layout::child(layout::kReductionGreedy, "point"));
  const Vector est = r.read_vector(layout::child(layout::kReductionGreedy, "indicator"));
  const Vector e = r.read_vector(layout::child(layout::kReductionGreedy, "true_error"));
  ASSERT_EQ(points.size(), 4);
  EXPECT_TRUE(std::isnan(est[1])) << est[1];
  EXPECT_TRUE(std::isfinite(e[1])) << e[1];
  for (Index i = 2; i < 4; ++i) EXPECT_TRUE(std::isfinite(est[i]) && est[i] > 0) << est[i];
  // The farthest point in the unit box (d on its log scale: column 0, names sorted).
  const Matrix T = r.read_matrix(layout::kReductionTrainingParameters);
  auto unit = [&](Index i) {
    return Vector{{std::log(T(i, 0) / 0.2) / std::log(2.0 / 0.2), (T(i, 1) - 0.5) / 3.5}};
  };
  const auto first = static_cast<Index>(points[0]);
  Index farthest = first == 0 ? 1 : 0;
  for (Index j = 0; j < T.rows(); ++j)
    if ((unit(j) - unit(first)).norm() > (unit(farthest) - unit(first)).norm()) farthest = j;
  EXPECT_EQ(static_cast<Index>(points[1]), farthest);
}

// The training's runs at once (mor run --jobs) are merged in the order of the runs, each
// compressed by its own incremental SVD: the same arithmetic whatever the number of threads, up
// to BLAS's rounding (one thread per run while several run): the singular values agree to 1e-12
// of the largest and the bases to 1e-10 in the sine of their largest principal angle (both far
// below the 1e-6 the incremental SVD's truncation allows, test_incremental_svd.cpp). How many
// values stay above the SVD's floor of 1e-12 s_1 is rounding: the ones only one side has are
// at most 1e-10 s_1 (observed: 54 against 67 values, the extra ones below 1e-11 s_1).
constexpr double kJobsSvTol = 1e-12;
constexpr double kJobsSvTail = 1e-10;

/// The singular values a and b agree to kJobsSvTol s_1 where both have them, and what only one
/// has is below kJobsSvTail s_1.
::testing::AssertionResult same_spectrum(const Vector& a, const Vector& b) {
  if (a.size() == 0 || b.size() == 0) return ::testing::AssertionFailure() << "no values";
  const double s1 = std::max(a[0], b[0]);
  const Index common = std::min(a.size(), b.size());
  const double gap = (a.head(common) - b.head(common)).cwiseAbs().maxCoeff();
  if (gap > kJobsSvTol * s1)
    return ::testing::AssertionFailure() << "differ by " << gap << " against s_1 = " << s1;
  const Vector& longer = a.size() > b.size() ? a : b;
  if (longer.size() > common && longer[common] > kJobsSvTail * s1)
    return ::testing::AssertionFailure()
           << a.size() << " against " << b.size() << " values, the first extra " << longer[common]
           << " against s_1 = " << s1;
  return ::testing::AssertionSuccess();
}
constexpr double kJobsSubspaceTol = 1e-10;
// The validation errors (about 1e-5) of models that agree to rounding, after 800 steps.
constexpr double kJobsErrorTol = 1e-6;

/// sin of the largest principal angle between range(A) and range(B) (orthonormal columns).
double largest_angle_sine(const Matrix& A, const Matrix& B) {
  return (A - B * (B.transpose() * A)).norm() > 0
             ? Eigen::JacobiSVD<Matrix>(A - B * (B.transpose() * A)).singularValues()[0]
             : 0.0;
}

TEST_F(ParametricExperiment, TrainingRunsAtOnceGiveTheModelOfOneAfterTheOther) {
  struct Trained {
    Vector sv, force_sv, deim, greedy_points, errors;
    Matrix V;
    std::int64_t snapshots = 0;
  };
  auto train = [&](int jobs, const std::vector<std::string>& extra) {
    std::vector<std::string> o = {"reduction.store_bases = true"};
    o.insert(o.end(), extra.begin(), extra.end());
    ExperimentConfig c = parse_experiment(kParametric, "p.toml", dir_, o);
    c.training_jobs = jobs;
    c.output = dir_ / ("jobs" + std::to_string(jobs) + ".h5");
    (void)run_experiment(c);
    const io::ResultsReader r(c.output);
    Trained t;
    t.sv = r.read_vector(layout::kReductionPodSv);
    t.force_sv = r.read_vector(layout::kReductionForceSv);
    t.deim = r.read_vector(layout::kReductionDeimMasses);
    t.V = r.read_matrix(layout::kReductionV);
    t.errors = r.read_vector(layout::kValidationOutputError);
    t.snapshots = std::get<std::int64_t>(r.attribute(layout::kReduction, "training_snapshots"));
    if (r.exists(layout::kReductionGreedy))
      t.greedy_points = r.read_vector(layout::child(layout::kReductionGreedy, "point"));
    return t;
  };
  for (const std::vector<std::string>& sampling :
       {std::vector<std::string>{},
        std::vector<std::string>{"reduction.sampling = \"greedy\"",
                                 "reduction.parameter_samples = 12", "reduction.greedy_batch = 3",
                                 "reduction.greedy_max_points = 7",
                                 "reduction.greedy_tolerance = 0.0"}}) {
    const Trained one = train(1, sampling), two = train(2, sampling), three = train(3, sampling);
    for (const Trained* t : {&two, &three}) {
      SCOPED_TRACE(sampling.empty() ? "sampling = all" : "sampling = greedy");
      EXPECT_EQ(t->snapshots, one.snapshots);
      EXPECT_TRUE(same_spectrum(t->sv, one.sv));
      EXPECT_TRUE(same_spectrum(t->force_sv, one.force_sv));
      EXPECT_LE(largest_angle_sine(t->V, one.V), kJobsSubspaceTol);
      EXPECT_EQ(t->deim, one.deim);
      EXPECT_EQ(t->greedy_points, one.greedy_points);
      EXPECT_TRUE(matrices_near(t->errors, one.errors, kJobsErrorTol, testing::Compare::relative));
    }
  }
}

TEST_F(ParametricExperiment, TheMemoryEstimateCountsEveryRunAtOnce) {
  // Each run at once compresses its own snapshots: N (c + b) doubles per snapshot set more, and
  // one more model.
  ExperimentConfig c = parse_experiment(kParametric, "p.toml", dir_);
  const auto one = estimate_parametric(c);
  c.training_jobs = 2;
  const auto two = estimate_parametric(c);
  ASSERT_TRUE(one && two);
  const double N = 200, cols = 100, block = 256;
  EXPECT_GE(two->training.bytes - one->training.bytes, 2 * 8.0 * N * (cols + block));
  EXPECT_EQ(two->training.jobs, 2);
}

using ParametricCli = testing::MorCliTest;

// `mor run --jobs 2` and `mpirun -np 2 mor run` against `mor run`: rank 1 runs training runs
// (their compressions travel to rank 0, and for the greedy their outputs), rank 0 alone writes
// the results and prints the summary, and the bases are the serial ones to BLAS's rounding.
TEST_F(ParametricCli, JobsAndMpiRanksGiveTheSerialBases) {
  std::ofstream(dir_ / "p.toml") << kParametric;
  for (const std::string sampling :
       {" --set reduction.store_bases=true",
        " --set reduction.store_bases=true --set reduction.sampling=greedy --set "
        "reduction.parameter_samples=8 --set "
        "reduction.greedy_batch=2 --set reduction.greedy_max_points=5 --set "
        "reduction.greedy_tolerance=0.0"}) {
    SCOPED_TRACE(sampling);
    const testing::Outcome a = mor("run p.toml --no-plots -o serial.h5" + sampling);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    const testing::Outcome b = mor("run p.toml --no-plots --jobs 2 -o jobs.h5" + sampling);
    ASSERT_EQ(b.exit_code, 0) << b.output;
    // --oversubscribe: the test must not depend on how many cores Open MPI counts here.
    const testing::Outcome c =
        shell("mpirun --allow-run-as-root --oversubscribe -np 2 '" + mor_.string() +
              "' run p.toml --no-plots -o mpi.h5" + sampling);
    ASSERT_EQ(c.exit_code, 0) << c.output;
    // One summary: rank 1 prints nothing.
    const std::string head = "mor: parametric";
    EXPECT_EQ(c.output.find(head), c.output.rfind(head)) << c.output;
    const io::ResultsReader ra(dir_ / "serial.h5");
    for (const char* other : {"jobs.h5", "mpi.h5"}) {
      SCOPED_TRACE(other);
      const io::ResultsReader rb(dir_ / other);
      EXPECT_TRUE(same_spectrum(rb.read_vector(layout::kReductionPodSv),
                                ra.read_vector(layout::kReductionPodSv)));
      EXPECT_TRUE(same_spectrum(rb.read_vector(layout::kReductionForceSv),
                                ra.read_vector(layout::kReductionForceSv)));
      EXPECT_LE(largest_angle_sine(rb.read_matrix(layout::kReductionV),
                                   ra.read_matrix(layout::kReductionV)),
                kJobsSubspaceTol);
      EXPECT_EQ(rb.read_vector(layout::kReductionDeimMasses),
                ra.read_vector(layout::kReductionDeimMasses));
      if (ra.exists(layout::kReductionGreedy))
        EXPECT_EQ(rb.read_vector(layout::child(layout::kReductionGreedy, "point")),
                  ra.read_vector(layout::child(layout::kReductionGreedy, "point")));
    }
  }
  const testing::Outcome bad = mor("run p.toml --no-plots --jobs -1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  testing::expect_contains(bad, "-1");
}

TEST_F(ParametricExperiment, RefusalsNameTheKeyAndTheValue) {
  struct Case {
    std::vector<std::string> overrides;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"parameters.N = { min = 100, max = 200 }"}, "size of the state"},
      {{"parameters.alpha = { min = 0.1, max = 0.2 }"}, "rayleigh"},
      {{"model.k_n = 1.0"}, "given both in [model]"},
      {{"parameters.k_n = { min = 4.0, max = 0.5 }"}, "inverted"},
      {{"parameters.k_n = { min = 1.0, max = 1.0 }"}, "empty or inverted"},
      {{"parameters.d = { min = 0.0, max = 2.0, scale = \"log\" }"}, "log scale"},
      {{"parameters.d = { min = 0.2, max = 2.0, scale = \"cubic\" }"}, "\"cubic\""},
      {{"parameters.d = { min = 0.2 }"}, "needs both min and max"},
      {{"parameters.d = { min = 0.2, max = inf }"}, "finite"},
      {{"parameters.m = { min = -1.0, max = 2.0 }"}, "corner"},
      {{"parameters.d = 0.5"}, "must be a table"},
      {{"reduction.parameter_samples = 0"}, "parameter_samples must be >= 1"},
      {{"validation.parameter_samples = -1"}, "validation.parameter_samples must be >= 0"},
      {{"reduction.greedy_batch = 0"}, "greedy_batch must be >= 1"},
      {{"reduction.greedy_tolerance = -1.0"}, "greedy_tolerance must be >= 0"},
      {{"reduction.sampling = \"best\""}, "best"},
  };
  for (const Case& k : cases) {
    const std::string msg = message_of_parse(kParametric, dir_, k.overrides);
    EXPECT_NE(msg.find(k.expected), std::string::npos) << k.overrides.front() << ": " << msg;
  }
  // A linear method reduces the linearisation about rest, which k_n does not enter.
  const std::string bt = kModel + kParameters + kRun + "[reduction]\nmethod = \"bt\"\norder = 4\n";
  EXPECT_NE(message_of_parse(bt, dir_).find("k_n has no effect"), std::string::npos)
      << message_of_parse(bt, dir_);
  // A method without a parametric form.
  const std::string modal =
      kModel + kParameters + kRun + "[reduction]\nmethod = \"modal\"\norder = 4\n";
  EXPECT_NE(message_of_parse(modal, dir_).find("\"modal\" does not build"), std::string::npos)
      << message_of_parse(modal, dir_);
  // The parametric keys and [validation] without [parameters].
  const std::string plain =
      kModel + kTraining + kRun + "[reduction]\nmethod = \"pod\"\norder = 2\n";
  EXPECT_NE(
      message_of_parse(plain, dir_, {"reduction.parameter_samples = 4"}).find("needs [parameters]"),
      std::string::npos);
  EXPECT_NE(message_of_parse(plain, dir_, {"validation.parameter_samples = 4"})
                .find("needs [parameters]"),
            std::string::npos);
}

/// What `mor run --dry-run` prints for c.
std::string dry_run_text(const ExperimentConfig& c) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  print_dry_run(c, out);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

/// The number after `lead` in text (NaN if lead is absent).
double number_after(const std::string& text, const std::string& lead) {
  const auto at = text.find(lead);
  return at == std::string::npos ? std::nan("") : std::atof(text.c_str() + at + lead.size());
}

TEST_F(ParametricExperiment, EstimatesGrowByOneFullAndOneReducedRunPerValidationPoint) {
  // estimate_run_seconds is what a sweep schedules by: each validation point adds the same
  // cost, at least a full run of [input]; without the validation the estimate was flat in it.
  auto seconds = [&](int k) {
    return estimate_run_seconds(parse_experiment(
        kParametric, "p.toml", dir_, {"validation.parameter_samples = " + std::to_string(k)}));
  };
  const double e0 = seconds(0), e10 = seconds(10), e20 = seconds(20);
  const double full = estimate_full_seconds(parse_experiment(kParametric, "p.toml", dir_));
  EXPECT_NEAR(e20 - e10, e10 - e0, 1e-12 * e20) << e0 << " " << e10 << " " << e20;
  EXPECT_GE(e10 - e0, 10 * full) << "each point runs the full model once on [input]";
  EXPECT_LE(e10 - e0, 20 * full) << "and the reduced model, which is cheaper";
}

TEST_F(ParametricExperiment, EstimatesCountTheTrainingRunsOfEachSampling) {
  // sampling = "all": every one of the 6 training points on each of the 2 [[training]] inputs.
  const ExperimentConfig all = parse_experiment(kParametric, "p.toml", dir_);
  const auto a = estimate_parametric(all);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->training.full_runs, 6 * 2);
  EXPECT_EQ(a->training.reduced_runs, 0);
  EXPECT_EQ(a->validation_points, 4);
  EXPECT_GE(a->training.seconds, 12 * estimate_full_seconds(all));
  // The greedy of TheGreedyRunsTheFullModelOnlyAtThePointsItSelects: 12 candidates, batches of
  // 2 up to 5 points. Full runs at 5 points; reduced runs at the 11 unselected after the first
  // point, the 9 after three, and at each of the 4 points after the first (its true error):
  // 24 per input.
  const ExperimentConfig greedy =
      parse_experiment(kParametric, "p.toml", dir_,
                       {"reduction.sampling = \"greedy\"", "reduction.parameter_samples = 12",
                        "reduction.greedy_max_points = 5", "reduction.greedy_batch = 2"});
  const auto g = estimate_parametric(greedy);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->training.full_runs, 5 * 2);
  EXPECT_EQ(g->training.reduced_runs, 24 * 2);
  // Without a cap, one point a time over k candidates: k - 1 full runs of the unselected at
  // each of k - 1 iterations (k (k - 1) / 2 reduced runs) and k - 1 true errors.
  for (const int k : {1, 2, 7}) {
    const auto u = estimate_parametric(parse_experiment(
        kParametric, "p.toml", dir_,
        {"reduction.sampling = \"greedy\"", "reduction.parameter_samples = " + std::to_string(k)}));
    EXPECT_EQ(u->training.full_runs, 2 * k) << k;
    EXPECT_EQ(u->training.reduced_runs, 2 * (k * (k - 1) / 2 + k - 1)) << k;
  }
  // Without [parameters], no parametric estimate.
  const std::string plain =
      kModel + kTraining + kRun + "[reduction]\nmethod = \"pod\"\norder = 2\n";
  EXPECT_FALSE(estimate_parametric(parse_experiment(plain, "plain.toml", dir_)).has_value());
}

TEST_F(ParametricExperiment, TheMemoryEstimateIsTheCompressionsNotEverySnapshot) {
  // The incremental SVD keeps N x c whatever the number of training points: 600 points need
  // the memory of 6. Every snapshot kept, they would need 100 times the snapshots' share.
  auto mib = [&](const std::string& points) {
    return estimate_run_mib(
        parse_experiment(kParametric, "p.toml", dir_, {"reduction.parameter_samples = " + points}));
  };
  EXPECT_EQ(mib("6"), mib("600"));
  // Against the peaks measured by parametric_chain.toml (docs/methods/parametric.md,
  // "Measured", Brand's update with each run compressed first; 98 MiB at N = 10^4 and 616 MiB
  // at N = 10^5, r = 30, one run at once): the estimates are rough, within a factor of two.
  const fs::path file = testing::source_dir() / "experiments" / "parametric_chain.toml";
  const double at_1e4 = estimate_run_mib(load_experiment(file, {"model.N = 10000"}));
  const double at_1e5 = estimate_run_mib(load_experiment(file, {"model.N = 100000"}));
  EXPECT_GT(at_1e4, 98.0 / 2) << at_1e4;
  EXPECT_LT(at_1e4, 98.0 * 2) << at_1e4;
  EXPECT_GT(at_1e5, 616.0 / 2) << at_1e5;
  EXPECT_LT(at_1e5, 616.0 * 2) << at_1e5;
}

TEST_F(ParametricExperiment, TheDryRunPrintsTheTrainingAndTheValidationOnlyWithParameters) {
  // 100 validation points: their runs cost more than the run's own full run and the constant.
  const std::string text = dry_run_text(
      parse_experiment(kParametric, "p.toml", dir_, {"validation.parameter_samples = 100"}));
  const std::string training =
      "# Training (sampling = \"all\"): 12 full runs (6 points x 2 [[training]] inputs), about ";
  const std::string validation =
      "# Validation: 100 full and 100 reduced runs on [input] (validation.parameter_samples = "
      "100), about ";
  EXPECT_NE(text.find(training), std::string::npos) << text;
  EXPECT_NE(text.find("# Training memory: the incremental SVDs keep 100 columns of the state "
                      "snapshots (4 r, at least 100) and 100 of the force snapshots"),
            std::string::npos)
      << text;  // r = 20: 4 r = 80 and 2 m = 80 (m = 2 r), both raised to 100
  EXPECT_NE(text.find(validation), std::string::npos) << text;
  // The run's estimate above them includes both.
  const double total = number_after(text, "one core): about ");
  EXPECT_GE(total, number_after(text, training) + number_after(text, validation)) << text;
  const std::string plain =
      kModel + kTraining + kRun + "[reduction]\nmethod = \"pod\"\norder = 2\n";
  const std::string plain_text = dry_run_text(parse_experiment(plain, "plain.toml", dir_));
  EXPECT_NE(plain_text.find("# Estimates"), std::string::npos) << plain_text;
  EXPECT_EQ(plain_text.find("# Training"), std::string::npos) << plain_text;
  EXPECT_EQ(plain_text.find("# Validation"), std::string::npos) << plain_text;
}

TEST_F(ParametricExperiment, EveryDocumentedParametricKeyIsRead) {
  int checked = 0;
  for (const KeyDoc& r : experiment_key_reference()) {
    std::string override;
    const bool parametric_key =
        r.name.rfind("parameter_", 0) == 0 || r.name.rfind("greedy_", 0) == 0;
    // This file's method is pod; the linear methods' keys: ParametricLinear.EveryDocumented...
    const bool other_method =
        r.table == "reduction" && r.variant.find("\"pod\"") == std::string::npos;
    if (other_method) continue;
    if (r.table == "validation" || (r.table == "reduction" && parametric_key) ||
        r.name == "sampling" || r.name == "training_points")
      override = r.table + "." + r.name + " = " + r.default_value;
    else if (r.table == "parameters" && r.name == "<name>.scale")
      override = "parameters.k_n = { min = 0.5, max = 4.0, scale = " + r.default_value + " }";
    else
      continue;
    ++checked;
    EXPECT_NO_THROW((void)parse_experiment(kParametric, "p.toml", dir_, {override})) << override;
  }
  EXPECT_EQ(checked, 12);  // validation: 4; pod's parameter_samples, parameter_seed,
                           // training_points, sampling, greedy_*: 3; parameters: <name>.scale
}

}  // namespace
}  // namespace mor::experiments
