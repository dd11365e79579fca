// SPDX-License-Identifier: GPL-3.0-or-later
// Parametric reduction of linear models (issue 43): affine systems and their first-order form,
// the global basis of local bases, the reduced affine terms, model files with affine terms
// X_<name>, and parametric balanced truncation end to end against the local models.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/export.hpp"
#include "experiments/runner/keys.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parametric_linear.hpp"
#include "experiments/runner/parametric_store.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/parametric_lti.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/errors.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/results.hpp"
#include "support/compare.hpp"
#include "support/source_dir.hpp"
#include "support/temp_dir.hpp"

namespace mor {
namespace {

namespace fs = std::filesystem;

// Sums of a few products of O(1) entries: equal up to rounding.
constexpr double kProjectionTol = 1e-12;
// The same transfer function from two bases of the same subspaces (a 2n = 80-state model of
// order 8, evaluated through dense LU): rounding amplified by the condition of s E_r - A_r.
constexpr double kSameSubspaceTol = 1e-8;
// Issue 43's bar: the parametric model's Hinf error at unseen points within 10x of a local BT's
// a priori bound at the same order.
constexpr double kBarFactor = 10.0;
// The linear greedy's sampled error against the true H-infinity error at the points it selects:
// the correlation of their logarithms.
constexpr double kIndicatorCorrelation = 0.9;
// ... and the two at each selected point within this factor of each other (40 frequencies over
// the local model's pole range resolve the error's peak of this family to about 15%).
constexpr double kIndicatorFactor = 2.0;

SparseMatrix tridiagonal(Index n, double diag, double off) {
  std::vector<Eigen::Triplet<double, Index>> t;
  for (Index i = 0; i < n; ++i) {
    t.emplace_back(i, i, diag);
    if (i + 1 < n) {
      t.emplace_back(i, i + 1, off);
      t.emplace_back(i + 1, i, off);
    }
  }
  SparseMatrix X(n, n);
  X.setFromTriplets(t.begin(), t.end());
  return X;
}

SparseMatrix unit_column(Index n, Index i) {
  SparseMatrix X(n, 1);
  X.insert(i, 0) = 1.0;
  return X;
}

/// A chain of n masses with fixed ends: M = I, K(k) = K_1 + k K_1, D(d) = 0.05 I + d D_1.
struct AffineChain {
  Index n = 40;
  SparseMatrix M, K, K_k, D, D_d, B, Cp;
  explicit AffineChain(Index size) : n(size) {
    M = tridiagonal(n, 1.0, 0.0);
    K = tridiagonal(n, 2.0, -1.0);
    K_k = K;
    D = tridiagonal(n, 0.05, 0.0);
    D_d = tridiagonal(n, 2.0, -1.0);
    B = unit_column(n, 0);
    Cp = SparseMatrix(unit_column(n, n - 1).transpose());
  }
  /// Writes P.M.mtx, P.K.mtx, P.K_k.mtx, ... (extra: further files, e.g. a broken term).
  void write(const fs::path& prefix) const {
    const std::pair<const char*, const SparseMatrix*> files[] = {
        {"M", &M}, {"K", &K}, {"K_k", &K_k}, {"D", &D}, {"D_d", &D_d}, {"B", &B}, {"Cp", &Cp}};
    for (const auto& [name, X] : files)
      io::write_matrix_market(prefix.string() + "." + name + ".mtx", *X);
  }
  ParametricSecondOrderSystem parametric(Index k_index, Index d_index) const {
    auto constant = [](const SparseMatrix& X) {
      AffineOperator<SparseMatrix> op;
      op.terms.push_back({AffineCoefficient{}, X});
      return op;
    };
    ParametricSecondOrderSystem p;
    p.M = constant(M);
    p.K = constant(K);
    p.K.terms.push_back({AffineCoefficient{1.0, {k_index}}, K_k});
    p.D = constant(D);
    p.D.terms.push_back({AffineCoefficient{1.0, {d_index}}, D_d});
    p.B = constant(B);
    p.Cp = constant(Cp);
    p.Cv = constant(SparseMatrix(1, n));
    return p;
  }
};

double max_abs(const SparseMatrix& X) {
  double m = 0;
  for (Index j = 0; j < X.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(X, j); it; ++it) m = std::max(m, std::abs(it.value()));
  return m;
}

TEST(ParametricLinearSystem, TheFirstOrderFormOfTheTermsIsTheFirstOrderFormAtEveryPoint) {
  const AffineChain chain(7);
  const ParametricSecondOrderSystem p = chain.parametric(1, 0);
  const ParametricDescriptorSystem f = to_descriptor(p);
  for (const Vector& mu :
       {Vector(Vector::Constant(2, 0.3)), Vector(Vector::LinSpaced(2, 1.5, 0.7))}) {
    const DescriptorSystem direct = to_descriptor(p.at(mu));
    const DescriptorSystem terms = f.at(mu);
    EXPECT_EQ(max_abs(direct.E - terms.E), 0.0);
    EXPECT_EQ(max_abs(direct.A - terms.A), 0.0);
    EXPECT_EQ(max_abs(direct.B - terms.B), 0.0);
    EXPECT_EQ(max_abs(direct.C - terms.C), 0.0);
  }
}

TEST(GlobalBasis, SpansEachLocalSubspaceItIsGivenWholeAndRefusesMoreThanTheySpan) {
  std::srand(3);
  const Matrix X1 = Matrix::Random(30, 3), X2 = Matrix::Random(30, 2);
  // X2 scaled and mixed into span(X1): the stack spans 3 directions, not 5.
  const Matrix X3 = 1e4 * X1 * Matrix::Random(3, 2);
  const GlobalBasis g = global_basis({X1, X3}, 3);
  EXPECT_NEAR((g.U.transpose() * g.U - Matrix::Identity(3, 3)).norm(), 0.0, 1e-14);
  EXPECT_LE((X1 - g.U * (g.U.transpose() * X1)).norm(), 1e-12 * X1.norm());
  EXPECT_THROW((void)global_basis({X1, X3}, 4), InvalidArgument);
  const GlobalBasis h = global_basis({X1, X2}, 5);
  EXPECT_LE((X2 - h.U * (h.U.transpose() * X2)).norm(), 1e-12 * X2.norm());
  // Each local subspace weighs its dimension: the squares sum to 3 + 2.
  EXPECT_NEAR(h.sv.squaredNorm(), 5.0, 1e-12);
}

TEST(ParametricLtiModel, AtEachPointItIsTheProjectionOfTheFullSystemThere) {
  const AffineChain chain(12);
  const ParametricSecondOrderSystem p = chain.parametric(1, 0);
  const ParameterDomain domain({{"d", 0.1, 1.0, true}, {"k", 0.5, 2.0, false}});
  std::srand(5);
  const Matrix V = Matrix::Random(12, 4), W = Matrix::Random(12, 4);
  const ParametricLtiModel second(domain, p, V, W);
  const ParametricLtiModel first(domain, to_descriptor(p), Matrix::Random(24, 5),
                                 Matrix::Random(24, 5));
  const Vector mu = Vector::LinSpaced(2, 0.3, 1.1);
  const SecondOrderSystem s = p.at(mu);
  const ReducedLtiAt r = second.at(mu);
  EXPECT_LE((r.second_order.K - W.transpose() * (s.K * V)).norm(), kProjectionTol);
  EXPECT_LE((r.second_order.D - W.transpose() * (s.D * V)).norm(), kProjectionTol);
  EXPECT_LE((r.second_order.M - W.transpose() * (s.M * V)).norm(), kProjectionTol);
  EXPECT_EQ(first.r(), 5);
  EXPECT_THROW((void)second.at(Vector::Constant(2, 5.0)), InvalidArgument);  // outside
}

}  // namespace

namespace experiments {
namespace {

using ParametricLinear = testing::TempDirTest;

std::string experiment(const fs::path& prefix) {
  return R"(
[experiment]
name = "parametric_bt"
[model]
type = "file"
path = ")" +
         prefix.string() + R"("
[input]
type = "chirp"
amplitude = 1.0
f1 = 0.3
t1 = 30.0
[simulation]
integrator = "implicit_midpoint"
dt = 0.05
t_end = 30.0
[output]
snapshot_stride = 0
plots = false
[reduction]
method = "bt"
order = 8
gramians = "dense"
parameter_samples = 4
[parameters]
k = { min = 0.5, max = 2.0 }
d = { min = 0.1, max = 1.0, scale = "log" }
[validation]
parameter_samples = 4
compare_local = true
)";
}

std::string message_of_parse(const std::string& text, const fs::path& dir,
                             const std::vector<std::string>& overrides = {}) {
  try {
    (void)parse_experiment(text, "p.toml", dir, overrides);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST_F(ParametricLinear, OneTrainingPointGivesTheLocalModelThereWhateverItsBasis) {
  const AffineChain chain(40);
  chain.write(dir_ / "chain");
  ExperimentConfig c = parse_experiment(
      experiment(dir_ / "chain"), "p.toml", dir_,
      {"reduction.parameter_samples = 1", "reduction.global_projection = \"two_sided\""});
  const ReducedModel parametric = reduce_linear_parametric(c, nullptr);
  ASSERT_TRUE(parametric.parametric);
  const Vector mu = parametric.training_points.row(0).transpose();
  // The method's own model at that point.
  const std::unique_ptr<FullModel> full = c.model->at(c.parameters, mu)->build(c.solver);
  const std::unique_ptr<LtiOperator> lti = full->lti_operator();
  ReducedModel local = c.reduction->reduce_linear(*lti, full->second_order_system());
  ReducedModel at = reduced_model_at(*parametric.parametric, mu);
  for (double w : {0.0, 0.05, 0.3, 1.0, 2.5}) {
    const ComplexMatrix g = transfer_function(*local.first_order, Complex(0.0, w));
    const ComplexMatrix h = transfer_function(*at.first_order, Complex(0.0, w));
    EXPECT_LE((g - h).norm(), kSameSubspaceTol * g.norm()) << "w = " << w;
  }
}

TEST_F(ParametricLinear, ParametricBtIsWithinTenTimesTheLocalBoundAtUnseenPoints) {
  const AffineChain chain(40);
  chain.write(dir_ / "chain");
  ExperimentConfig c = parse_experiment(experiment(dir_ / "chain"), "p.toml", dir_);
  c.output = dir_ / "p.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(s.validation.has_value());
  const io::ResultsReader r(c.output);
  const std::string fig = layout::kValidationFigures;
  const Vector hinf = r.read_vector(layout::child(fig, "hinf_error"));
  const Vector bound = r.read_vector(layout::child(fig, "local_error_bound"));
  const Vector local_r = r.read_vector(layout::child(fig, "local_r"));
  ASSERT_EQ(hinf.size(), 4);
  // Galerkin in the energy inner product: stable at every point.
  EXPECT_LT(r.read_vector(layout::child(fig, "spectral_abscissa")).maxCoeff(), 0.0);
  for (Index i = 0; i < hinf.size(); ++i) {
    EXPECT_EQ(local_r[i], 8.0);
    EXPECT_LE(hinf[i], kBarFactor * bound[i]) << "point " << i;
  }
  EXPECT_EQ(r.read_matrix(layout::kReductionTrainingParameters).rows(), 4);
  EXPECT_EQ(r.read_vector(layout::kReductionLocalOrders), Vector::Constant(4, 8.0));
  // The file's terms, named in /model.
  const auto terms = std::get<std::string>(r.attribute(layout::kModel, "affine_terms"));
  EXPECT_NE(terms.find("K_k (K, k)"), std::string::npos) << terms;
  EXPECT_NE(terms.find("D_d (D, d)"), std::string::npos) << terms;
}

// The local reductions at once (mor run --jobs) are consumed in the order of the points: the
// global basis's singular values agree with one after the other to BLAS's rounding.
constexpr double kJobsGlobalSvTol = 1e-12;

TEST_F(ParametricLinear, LocalReductionsAtOnceGiveTheGlobalBasisOfOneAfterTheOther) {
  const AffineChain chain(40);
  chain.write(dir_ / "chain");
  ExperimentConfig c = parse_experiment(experiment(dir_ / "chain"), "p.toml", dir_);
  auto global_sv = [&](int jobs) {
    c.training_jobs = jobs;
    const ReducedModel m = reduce_linear_parametric(c, nullptr);
    for (const auto& [name, values] : m.summary.spectra)
      if (name == layout::kReductionGlobalSv) return values;
    return Vector();
  };
  const Vector one = global_sv(1), two = global_sv(2);
  ASSERT_GT(one.size(), 0);
  EXPECT_TRUE(testing::matrices_near(two, one, kJobsGlobalSvTol, testing::Compare::relative));
}

TEST_F(ParametricLinear, EveryLinearMethodBuildsAStableFamilyModelCloseToItsLocalOnes) {
  // sobt and pod (positions, Galerkin) and irka (its bases with the energy Galerkin) over the
  // same family: stable at the unseen points, and their H2 error there within 10x of the method's
  // own local model of the same order.
  const AffineChain chain(40);
  chain.write(dir_ / "chain");
  const std::string base = experiment(dir_ / "chain");
  const std::string head = base.substr(0, base.find("[reduction]"));
  const std::string tail = base.substr(base.find("[parameters]"));
  const std::vector<std::string> methods = {
      "method = \"sobt\"\norder = 6\ngramians = \"dense\"\n",
      "method = \"irka\"\norder = 6\nallow_unconverged = true\n",
      "method = \"pod\"\norder = 6\n[[training]]\ntype = \"chirp\"\namplitude = 1.0\nf1 = "
      "0.3\nt1 = 30.0\n[reduction]\n"};
  for (const std::string& m : methods) {
    std::string reduction = "[reduction]\n" + m + "parameter_samples = 3\n";
    // pod's [[training]] splits its table: the keys after it go to a second [reduction]
    // header, which TOML refuses; put them before.
    if (m.find("[[training]]") != std::string::npos)
      reduction =
          "[reduction]\nmethod = \"pod\"\norder = 6\nparameter_samples = 3\n"
          "[[training]]\ntype = \"chirp\"\namplitude = 1.0\nf1 = 0.3\nt1 = 30.0\n";
    ExperimentConfig c = parse_experiment(head + reduction + tail, "p.toml", dir_,
                                          {"validation.parameter_samples = 3"});
    c.output = dir_ / "m.h5";
    (void)run_experiment(c);
    const io::ResultsReader r(c.output);
    const std::string fig = layout::kValidationFigures;
    EXPECT_LT(r.read_vector(layout::child(fig, "spectral_abscissa")).maxCoeff(), 0.0) << m;
    const Vector h2 = r.read_vector(layout::child(fig, "h2_error"));
    const Vector local = r.read_vector(layout::child(fig, "local_h2_error"));
    for (Index i = 0; i < h2.size(); ++i) EXPECT_LE(h2[i], kBarFactor * local[i]) << m;
    fs::remove(c.output);
  }
}

TEST_F(ParametricLinear, ExportedAffineTermsReadBackAsTheFamily) {
  // The chain over k_l and d, exported as X and X_<name>, read back as a model file: the same
  // system at every point (sums of the same products: equal up to rounding).
  const std::string chain = R"(
[model]
type = "mass_spring_chain"
N = 12
k_n = 0.0
m = 1.3
[reduction]
method = "bt"
order = 4
[parameters]
k_l = { min = 0.5, max = 2.0 }
d = { min = 0.2, max = 2.0, scale = "log" }
)";
  {
    std::ofstream f(dir_ / "chain.toml");
    f << chain;
  }
  (void)export_experiment_model(dir_ / "chain.toml", {}, ExportFormat::mtx, dir_ / "fam");
  const std::string file = "[model]\ntype = \"file\"\npath = \"" + (dir_ / "fam").string() +
                           "\"\n" + chain.substr(chain.find("[reduction]"));
  const ExperimentConfig a = parse_experiment(chain, "a.toml", dir_);
  const ExperimentConfig b = parse_experiment(file, "b.toml", dir_);
  EXPECT_EQ(b.parameters.names(), a.parameters.names());
  for (const Vector& mu : {Vector(Vector::LinSpaced(2, 0.3, 1.7)), a.parameters.center()}) {
    const auto sa = std::get<SecondOrderSystem>(a.model->at(a.parameters, mu)->linear_system());
    const auto sb = std::get<SecondOrderSystem>(b.model->at(b.parameters, mu)->linear_system());
    EXPECT_LE(max_abs(sa.M - sb.M), kProjectionTol);
    EXPECT_LE(max_abs(sa.D - sb.D), kProjectionTol);
    EXPECT_LE(max_abs(sa.K - sb.K), kProjectionTol);
    EXPECT_GT(max_abs(sa.D), 0.0);
  }
  // Rayleigh damping at a parametric k_l has the term beta k_l K_1: a product, refused.
  {
    std::ofstream f(dir_ / "rayleigh.toml");
    f << R"(
[model]
type = "mass_spring_chain"
N = 12
k_n = 0.0
damping = "rayleigh"
[reduction]
method = "bt"
order = 4
[parameters]
k_l = { min = 0.5, max = 2.0 }
beta = { min = 0.1, max = 0.2 }
)";
  }
  try {
    (void)export_experiment_model(dir_ / "rayleigh.toml", {}, ExportFormat::mtx, dir_ / "r");
    ADD_FAILURE() << "a product of parameters was exported";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("beta*k_l is a product of parameters"), std::string::npos)
        << e.what();
  }
}

TEST_F(ParametricLinear, ExportedReducedFamilyIsTheParametricModelAtEveryPoint) {
  // `mor export` of a parametric run's results (MAT and MatrixMarket), read back with the
  // project's readers: X_r + sum_name mu_name X_r_<name> is the parametric model's reduced model
  // at mu (rom.at(mu), rebuilt here by the same reduction), at the center, two corners and an
  // inside point; bt's first-order (energy) form and sobt's second-order one.
  const AffineChain chain(30);
  chain.write(dir_ / "chain");
  const std::string base = experiment(dir_ / "chain");
  const std::string head = base.substr(0, base.find("[reduction]"));
  const std::string tail = base.substr(base.find("[parameters]"));
  for (const std::string method : {"bt", "sobt"}) {
    ExperimentConfig c = parse_experiment(
        head + "[reduction]\nmethod = \"" + method +
            "\"\norder = 6\ngramians = \"dense\"\nparameter_samples = 3\n" + tail,
        "p.toml", dir_, {"validation.parameter_samples = 1", "validation.compare_local = false"});
    c.output = dir_ / (method + ".h5");
    (void)run_experiment(c);
    const ReducedModel reference = reduce_linear_parametric(c, nullptr);
    ASSERT_TRUE(reference.parametric);
    const ParametricLtiModel& rom = *reference.parametric;
    for (const ExportFormat format : {ExportFormat::mat, ExportFormat::mtx}) {
      const fs::path out = dir_ / (method + (format == ExportFormat::mtx ? "_rom" : "_rom.mat"));
      const std::vector<fs::path> files =
          export_results(c.output, format, out, std::chrono::seconds(60));
      // The exported variables by name.
      std::map<std::string, Matrix> vars;
      if (format == ExportFormat::mtx) {
        for (const fs::path& f : files) {
          const std::string name = f.filename().string();
          const std::string prefix = out.filename().string() + ".";
          vars[name.substr(prefix.size(), name.size() - prefix.size() - 4)] =
              Matrix(io::read_matrix_market(f));
        }
      } else {
        for (const std::string name :
             {"E",   "E_k", "E_d", "A",   "A_k", "A_d",         "B",
              "C",   "D",   "M",   "M_k", "M_d", "K",           "K_k",
              "K_d", "D_k", "D_d", "Cp",  "Cv",  "parameter_k", "parameter_d"})
          try {
            vars[name] = Matrix(io::read_mat_variable(out, name).value);
          } catch (const std::exception&) {
          }
      }
      const std::string what = method + (format == ExportFormat::mtx ? " mtx" : " mat");
      // The domain: [min, max, log, reference] per parameter.
      ASSERT_EQ(vars.count("parameter_d"), 1u) << what;
      EXPECT_EQ(vars["parameter_d"], (Matrix(1, 4) << 0.1, 1.0, 1.0, std::sqrt(0.1)).finished());
      EXPECT_EQ(vars["parameter_k"], (Matrix(1, 4) << 0.5, 2.0, 0.0, 1.25).finished());
      const auto family = [&](const std::string& role, const Vector& mu) {
        Matrix X = vars.at(role);  // (d, k): the sorted names
        if (vars.count(role + "_d")) X += mu[0] * vars.at(role + "_d");
        if (vars.count(role + "_k")) X += mu[1] * vars.at(role + "_k");
        return X;
      };
      for (const Vector& mu : {rom.domain().center(), Vector((Vector(2) << 0.1, 2.0).finished()),
                               Vector((Vector(2) << 1.0, 0.5).finished()),
                               Vector((Vector(2) << 0.3, 1.1).finished())}) {
        const ReducedModel at = reduced_model_at(rom, mu);
        const auto near = [&](const std::string& role, const Matrix& expected) {
          EXPECT_TRUE(testing::matrices_near(family(role, mu), expected, kProjectionTol,
                                             testing::Compare::relative))
              << what << ": " << role << " at " << mu.transpose();
        };
        if (method == "sobt") {
          const DenseSecondOrderSystem& s = at.second_order;
          near("M", s.M), near("D", s.D), near("K", s.K), near("B", s.B), near("Cp", s.Cp);
          near("Cv", s.Cv);
        } else {
          const DenseLtiOperator& f = *at.first_order;
          near("E", f.E()), near("A", f.A()), near("B", f.B()), near("C", f.C());
          near("D", f.D_ff());
        }
      }
    }
  }
}

TEST_F(ParametricLinear, TheExampleFilesExportAndRunTheFamily) {
  // experiments/parametric_bt_chain.toml exported, experiments/parametric_bt_file.toml run on
  // the export (small: the examples' keys are what is checked).
  const fs::path src = testing::source_dir() / "experiments";
  (void)export_experiment_model(src / "parametric_bt_chain.toml", {"model.N = 30"},
                                ExportFormat::mtx, dir_ / "pchain");
  ExperimentConfig c =
      load_experiment(src / "parametric_bt_file.toml",
                      {"model.path = \"" + (dir_ / "pchain").string() + "\"", "reduction.order = 6",
                       "reduction.parameter_samples = 3", "validation.parameter_samples = 2",
                       "simulation.t_end = 10.0", "input.t1 = 10.0"});
  c.output = dir_ / "file.h5";
  const RunSummary s = run_experiment(c);
  ASSERT_TRUE(s.validation.has_value());
  EXPECT_EQ(c.parameters.names(), (std::vector<std::string>{"d", "k_l"}));
  const io::ResultsReader r(c.output);
  const Vector abscissa =
      r.read_vector(layout::child(layout::kValidationFigures, "spectral_abscissa"));
  EXPECT_LT(abscissa.maxCoeff(), 0.0);  // Galerkin in the energy inner product
}

TEST_F(ParametricLinear, ValidationPointsMayBeGivenInTheSortedNamesOrder) {
  const AffineChain chain(20);
  chain.write(dir_ / "chain");
  const std::string text = experiment(dir_ / "chain");
  ExperimentConfig c =
      parse_experiment(text, "p.toml", dir_,
                       {"validation.points = [[0.2, 1.5], [0.9, 0.6], [0.1, 2.0]]",
                        "validation.compare_local = false", "reduction.parameter_samples = 2"});
  c.output = dir_ / "v.h5";
  (void)run_experiment(c);
  const io::ResultsReader r(c.output);
  Matrix expected(3, 2);
  expected << 0.2, 1.5, 0.9, 0.6, 0.1, 2.0;  // (d, k): the sorted names
  EXPECT_EQ(r.read_matrix(layout::kValidationParameters), expected);
  // The stored configuration keeps them and parses back.
  EXPECT_EQ(parse_experiment(c.toml, "stored", dir_).validation_points, expected);
  const std::string wrong = message_of_parse(text, dir_, {"validation.points = [[0.2]]"});
  EXPECT_NE(wrong.find("validation.points[1] has 1 values; [parameters] names 2 (d, k"),
            std::string::npos)
      << wrong;
  const std::string outside = message_of_parse(text, dir_, {"validation.points = [[0.2, 3.0]]"});
  EXPECT_NE(outside.find("k = 3"), std::string::npos) << outside;
}

TEST_F(ParametricLinear, TrainingPointsMayBeGivenAndAreCheckedBeforeAnythingRuns) {
  const AffineChain chain(20);
  chain.write(dir_ / "chain");
  const std::string text = experiment(dir_ / "chain");
  ExperimentConfig c = parse_experiment(
      text, "p.toml", dir_, {"reduction.training_points = [[0.2, 1.5], [0.9, 0.6], [0.1, 2.0]]"});
  const ReducedModel m = reduce_linear_parametric(c, nullptr);
  Matrix expected(3, 2);
  expected << 0.2, 1.5, 0.9, 0.6, 0.1, 2.0;  // (d, k): the sorted names
  EXPECT_EQ(m.training_points, expected);
  EXPECT_EQ(parse_experiment(c.toml, "stored", dir_).reduction->parametric_linear()->points(), 3);
  const std::string outside =
      message_of_parse(text, dir_, {"reduction.training_points = [[0.2, 1.5], [0.2, 3.0]]"});
  EXPECT_NE(outside.find("reduction.training_points[2]"), std::string::npos) << outside;
  EXPECT_NE(outside.find("k = 3"), std::string::npos) << outside;
  const std::string count = message_of_parse(text, dir_, {"reduction.training_points = [[1.0]]"});
  EXPECT_NE(count.find("reduction.training_points[1] has 1 values"), std::string::npos) << count;
}

TEST_F(ParametricLinear, TheGreedySelectingEveryPointBuildsTheModelOfAllOfThem) {
  // greedy_tolerance = 0: the greedy reduces at every training point, each once, the first the
  // nearest to the center; its global basis spans what the local bases of all points span, so
  // its model has the transfer function of sampling = "all" (the SVD of the same columns in
  // another order).
  const AffineChain chain(30);
  chain.write(dir_ / "chain");
  const std::string text = experiment(dir_ / "chain");
  ExperimentConfig all = parse_experiment(text, "p.toml", dir_);
  ExperimentConfig greedy = parse_experiment(
      text, "p.toml", dir_, {"reduction.sampling = \"greedy\"", "reduction.greedy_tolerance = 0"});
  const ReducedModel a = reduce_linear_parametric(all, nullptr);
  const ReducedModel g = reduce_linear_parametric(greedy, nullptr);
  ASSERT_EQ(g.selected_points, 4);
  EXPECT_NE(g.greedy_note.find("every training point selected"), std::string::npos)
      << g.greedy_note;
  EXPECT_EQ(a.training_points, g.training_points);
  const Vector mu = (Vector(2) << 0.33, 1.7).finished();  // (d, k), not a training point
  ReducedModel at_a = reduced_model_at(*a.parametric, mu);
  ReducedModel at_g = reduced_model_at(*g.parametric, mu);
  for (double w : {0.0, 0.05, 0.3, 1.0, 2.5}) {
    const ComplexMatrix ga = transfer_function(*at_a.first_order, Complex(0.0, w));
    const ComplexMatrix gg = transfer_function(*at_g.first_order, Complex(0.0, w));
    EXPECT_LE((ga - gg).norm(), kSameSubspaceTol * ga.norm()) << "w = " << w;
  }
}

TEST_F(ParametricLinear, TheGreedyStopsAtItsCapAndItsIndicatorFollowsTheHinfError) {
  // Over 10 candidate points with a cap of 6 local reductions: each point selected once, the
  // first the nearest to the center, every later one where the indicator was largest; the
  // indicator (the sampled relative error) against the true relative H-infinity error of the
  // model before it at the selected points: log-correlated (the grid resolves the error's peak
  // up to a factor, the same at every point).
  const AffineChain chain(30);
  chain.write(dir_ / "chain");
  ExperimentConfig c =
      parse_experiment(experiment(dir_ / "chain"), "p.toml", dir_,
                       {"reduction.sampling = \"greedy\"", "reduction.greedy_tolerance = 0",
                        "reduction.parameter_samples = 10", "reduction.greedy_max_points = 6",
                        "reduction.max_order = 24", "validation.parameter_samples = 2",
                        "validation.compare_local = false"});
  c.output = dir_ / "g.h5";
  const RunSummary s = run_experiment(c);
  const io::ResultsReader r(c.output);
  const std::string grp = layout::kReductionGreedy;
  const Vector point = r.read_vector(layout::child(grp, "point"));
  const Vector indicator = r.read_vector(layout::child(grp, "indicator"));
  const Vector true_error = r.read_vector(layout::child(grp, "true_error"));
  ASSERT_EQ(point.size(), 6);
  EXPECT_NE(std::get<std::string>(r.attribute(layout::kReduction, "greedy_stop"))
                .find("greedy_max_points = 6 reached"),
            std::string::npos);
  // Each once; the first the nearest to the center in each parameter's scale.
  std::vector<double> sorted(point.begin(), point.end());
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const Matrix X = r.read_matrix(layout::kReductionTrainingParameters);
  auto distance = [&](Index i) {  // (d log in [0.1, 1], k in [0.5, 2])
    const double a = std::log(X(i, 0) / std::sqrt(0.1)) / std::log(10.0);
    const double b = (X(i, 1) - 1.25) / 1.5;
    return a * a + b * b;
  };
  for (Index i = 0; i < X.rows(); ++i)
    EXPECT_LE(distance(static_cast<Index>(point[0])), distance(i)) << "point " << i;
  EXPECT_TRUE(std::isnan(indicator[0]));
  // Local orders only at the selected points.
  const Vector orders = r.read_vector(layout::kReductionLocalOrders);
  for (Index i = 0; i < X.rows(); ++i)
    EXPECT_EQ(std::isnan(orders[i]), std::find(point.begin(), point.end(), i) == point.end());
  for (Index i = 1; i < point.size(); ++i) {
    ASSERT_TRUE(std::isfinite(true_error[i])) << "step " << i;
    EXPECT_LE(indicator[i], kIndicatorFactor * true_error[i]) << "step " << i;
    EXPECT_GE(indicator[i], true_error[i] / kIndicatorFactor) << "step " << i;
  }
  const double correlation =
      std::get<double>(r.attribute(layout::kReduction, "greedy_indicator_error_correlation"));
  EXPECT_GE(correlation, kIndicatorCorrelation)
      << "indicators " << indicator.transpose() << "\ntrue errors " << true_error.transpose();
  ASSERT_TRUE(s.validation.has_value());
}

TEST_F(ParametricLinear, EveryDocumentedParametricKeyOfTheLinearMethodsIsRead) {
  // bt's, irka's and sobt's rows share one declaration (parametric_linear_keys): each default,
  // as the reference prints it, parses in bt's file experiment.
  const AffineChain chain(10);
  chain.write(dir_ / "chain");
  const std::string text = experiment(dir_ / "chain");
  const char* const keys[] = {"parameter_samples", "parameter_seed",    "training_points",
                              "max_order",         "global_projection", "sampling",
                              "greedy_tolerance",  "greedy_batch",      "greedy_max_points",
                              "greedy_frequencies"};
  int checked = 0;
  for (const KeyDoc& r : experiment_key_reference()) {
    if (r.table != "reduction" || r.variant.find("\"bt\"") == std::string::npos ||
        std::find(std::begin(keys), std::end(keys), r.name) == std::end(keys))
      continue;
    ++checked;
    const std::string override = "reduction." + r.name + " = " + r.default_value;
    EXPECT_NO_THROW((void)parse_experiment(text, "p.toml", dir_, {override})) << override;
  }
  EXPECT_EQ(checked, 10);
}

TEST_F(ParametricLinear, RefusalsNameTheParameterTheTermAndTheReason) {
  const AffineChain chain(10);
  chain.write(dir_ / "chain");
  const std::string text = experiment(dir_ / "chain");
  struct Case {
    std::vector<std::string> overrides;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"parameters.x = { min = 1.0, max = 2.0 }"},
       "has no affine term X_x; its parameters are d, k"},
      {{"reduction.max_order = -1"}, "max_order must be >= 0"},
      {{"reduction.global_projection = \"oblique\""}, "oblique"},
  };
  for (const Case& k : cases) {
    const std::string msg = message_of_parse(text, dir_, k.overrides);
    EXPECT_NE(msg.find(k.expected), std::string::npos) << k.overrides.front() << ": " << msg;
  }
  // A method without a parametric form.
  std::string modal = text;
  modal.replace(modal.find("method = \"bt\""),
                modal.find("[parameters]") - modal.find("method = \"bt\""),
                "method = \"modal\"\norder = 4\n");
  EXPECT_NE(message_of_parse(modal, dir_).find("\"modal\" does not build"), std::string::npos)
      << message_of_parse(modal, dir_);
  // A term without a range.
  const std::string no_d = text.substr(0, text.find("d = { min")) + "[validation]\n";
  EXPECT_NE(message_of_parse(no_d, dir_).find("gives it no range: add d = "), std::string::npos)
      << message_of_parse(no_d, dir_);
  // A mass term that makes M indefinite at a corner (M(-2) = -I: nonsingular, not definite).
  io::write_matrix_market(dir_ / "chain.M_m.mtx", tridiagonal(10, 1.0, 0.0));
  const std::string indefinite =
      message_of_parse(text, dir_, {"parameters.m = { min = -2.0, max = 1.0 }"});
  EXPECT_NE(indefinite.find("not positive definite"), std::string::npos) << indefinite;
  EXPECT_NE(indefinite.find("corner"), std::string::npos) << indefinite;
  EXPECT_EQ(message_of_parse(text, dir_, {"parameters.m = { min = 0.0, max = 1.0 }"}),
            "(no exception)");
  fs::remove(dir_ / "chain.M_m.mtx");
  // A term of the wrong shape: named with both sizes.
  io::write_matrix_market(dir_ / "chain.K_k.mtx", tridiagonal(9, 2.0, -1.0));
  const std::string msg = message_of_parse(text, dir_);
  EXPECT_NE(msg.find("the affine term 'K_k' of K (parameter k) is 9x9, K ('K') is 10x10"),
            std::string::npos)
      << msg;
  // The chain's k_n with a linear method: the linearisation about rest does not contain it.
  const std::string chain_bt = R"(
[model]
type = "mass_spring_chain"
N = 20
[reduction]
method = "bt"
order = 4
[parameters]
k_n = { min = 0.5, max = 4.0 }
)";
  EXPECT_NE(message_of_parse(chain_bt, dir_).find("k_n has no effect"), std::string::npos)
      << message_of_parse(chain_bt, dir_);
  // Without [parameters], the parametric keys are refused.
  const std::string plain = text.substr(0, text.find("[parameters]"));
  EXPECT_NE(message_of_parse(plain, dir_)
                .find("reduction.parameter_samples belongs to a "
                      "parametric reduced model"),
            std::string::npos)
      << message_of_parse(plain, dir_);
}

}  // namespace
}  // namespace experiments
}  // namespace mor
