// SPDX-License-Identifier: GPL-3.0-or-later
// The two registries end to end: every registered reduction method on one small model of every
// registered model kind. A method of the linear family must reduce every LTI model kind (the
// second-order methods every second-order one), and every nonlinear kind through its
// linearisation about its rest state (the summary names the state, the error compares with the
// nonlinear model), to a reduced model better than no model at all; a method that does not fit a
// model must refuse it up front with a message naming the method and its mathematical reason, and
// write nothing; refusing an LTI model, the message gives the mathematical reason, never the
// model's kind. POD, trained on the [[training]] runs, must run on every LTI kind (first order:
// E, A, B, C projected; second order: M, D, K, B, Cp, Cv). A new method or kind is covered here
// without editing this file; a kind without a small model below fails the test, so it gets one.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/pipeline.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "models/mass_spring_chain.hpp"
#include "src/core/errors.hpp"
#include "src/io/model_files.hpp"
#include "support/source_dir.hpp"
#include "support/temp_dir.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using Registry = testing::TempDirTest;

using testing::source_dir;

/// One small model of a kind: its [model] table, a [simulation] table that resolves its
/// dynamics (and the kind's own tables), and the order r asked of every method.
struct SmallModel {
  std::string label, model, simulation;
  Index order;
};

/// [simulation] of the kinds the runner's fixed-step schemes integrate.
std::string fixed_step(const std::string& keys) {
  return "integrator = \"implicit_midpoint\"\n" + keys;
}

/// [simulation] and [linear] of a multibody benchmark: a short benchmark run without the
/// tighter reference run, and the driven run over t_end.
std::string multibody(const std::string& t_end) {
  return "rtol = 1e-8\natol = 1e-10\nt_end = 0.5\nreference_factor = 0.0\n[linear]\nt_end = " +
         t_end + "\n";
}

/// The small nonlinear chain written as a network file in dir (G and phi beside its matrices).
fs::path small_network_file(const fs::path& dir) {
  ChainParameters p;
  p.N = 12;
  const NonlinearNetwork net = MassSpringChain(p).network();
  const fs::path file = dir / "network.mat";
  io::export_model(file, net.linear_system(), io::ModelFileFormat::mat_v5,
                   {{"G", net.G()}, {"phi", net.compact_coefficients()}});
  return file;
}

/// The small linear chain written as a second-order model file (M, D, K, B, Cp, Cv).
fs::path small_second_order_file(const fs::path& dir) {
  ChainParameters p;
  p.N = 12;
  p.k_n = 0.0;
  const fs::path file = dir / "second_order.mat";
  io::export_model(file, MassSpringChain(p).linear_system(), io::ModelFileFormat::mat_v5);
  return file;
}

/// The small models; every registered kind must have at least one.
std::vector<SmallModel> small_models(const fs::path& dir) {
  const std::string rail = (source_dir() / "data/rail_371.mat").string();
  const std::string network = small_network_file(dir).string();
  const std::string second_order = small_second_order_file(dir).string();
  return {
      {"linear chain", "type = \"mass_spring_chain\"\nN = 12\nk_n = 0.0\n",
       fixed_step("dt = 0.05\nt_end = 20.0\n"), 6},
      {"nonlinear chain", "type = \"mass_spring_chain\"\nN = 12\nk_n = 2.0\n",
       fixed_step("dt = 0.05\nt_end = 20.0\n"), 6},
      {"rail 371 (file, first order)", "type = \"file\"\npath = \"" + rail + "\"\n",
       fixed_step("dt = 0.5\nt_end = 50.0\n"), 10},
      {"linear chain (file, second order)", "type = \"file\"\npath = \"" + second_order + "\"\n",
       fixed_step("dt = 0.05\nt_end = 20.0\n"), 6},
      {"linearised A05 flyball", "type = \"linearised_multibody\"\nbenchmark = \"flyball\"\n",
       fixed_step("dt = 0.01\nt_end = 2.0\n"), 2},
      {"A01 pendulum (nonlinear)", "type = \"pendulum\"\n", multibody("5.0"), 1},
      {"A04 Bricard (nonlinear)", "type = \"bricard\"\n", multibody("5.0"), 1},
      {"A05 flyball (nonlinear)", "type = \"flyball\"\n", multibody("2.0"), 2},
      {"Schiehlen robot (nonlinear)", "type = \"robot\"\n", multibody("1.0"), 5},
      {"nonlinear chain as a network file", "type = \"network\"\npath = \"" + network + "\"\n",
       fixed_step("dt = 0.05\nt_end = 20.0\n"), 6},
      {"nonlinear lattice 4 x 3", "type = \"lattice\"\nnx = 4\nny = 3\nk_n = 2.0\n",
       fixed_step("dt = 0.05\nt_end = 20.0\n"), 6},
  };
}

/// What the trained methods need beside [reduction]: the training runs, on the chain only.
const char* kTraining = R"(
[[training]]
type = "chirp"
amplitude = 1.0
f0 = 0.0
f1 = 0.2
t1 = 20.0
)";

/// Keys a method needs on these small models beyond its defaults (a new method runs on its
/// defaults): the differential Gramians exist on a region ||G q|| <= rho that must be small
/// enough for the cubic springs' stiffening, on the chain, the chain as a network file and the
/// lattice alike (docs/methods/differential_balancing.md).
/// POD trains on every step of the short training run, so that the snapshots' rank exceeds the
/// order.
const std::map<std::string, std::string> kMethodKeys = {{"differential_balancing", "rho = 0.5\n"},
                                                        {"pod", "training_stride = 1\n"}};

std::string experiment_text(const SmallModel& m, const MethodInfo& method, bool training) {
  std::string text = "[experiment]\nname = \"registry\"\n[model]\n" + m.model +
                     "[input]\ntype = \"sine\"\namplitude = 0.01\nfrequency = 0.05\n"
                     "[simulation]\n" +
                     m.simulation + "[output]\nplots = false\nsnapshot_stride = 0\n";
  if (training) text += kTraining;
  text += "[reduction]\nmethod = \"" + std::string(method.name) + "\"\n";
  if (method.name != "none") text += "order = " + std::to_string(m.order) + "\n";
  if (const auto it = kMethodKeys.find(std::string(method.name)); it != kMethodKeys.end())
    text += it->second;
  return text;
}

// The zero model has relative error 1: a reduced model must do better, whatever the method (each
// method's accuracy against its own references is tested in its own test; here modal truncation
// of the rail at r = 10 is the weakest, 0.91 in output and 0.83 in H2, while BT and IRKA are at
// 0.06-0.33).
constexpr double kUsefulError = 1.0;

/// A model's kind, as its [model] table names it.
std::string kind_of(const SmallModel& m) {
  const auto at = m.model.find('"') + 1;
  return m.model.substr(at, m.model.find('"', at) - at);
}

/// A method refused on an LTI model says why in mathematics (first order, exact Gramians, ...),
/// never by the model's kind.
void expect_reason_not_name(const SmallModel& m, const std::string& refusal) {
  if (m.label.find("nonlinear") != std::string::npos) return;
  EXPECT_EQ(refusal.find("model.type = \"" + kind_of(m) + "\""), std::string::npos)
      << "the refusal names the kind, not the reason: " << refusal;
}

/// The snapshot method every LTI kind must run (trained on [[training]] runs of the full model):
/// POD, first order on E, A, B, C and second order on M, D, K, B, Cp, Cv.
bool must_run(const SmallModel& m, std::string_view method) {
  return method == "pod" && m.label.find("nonlinear") == std::string::npos;
}

TEST_F(Registry, EveryMethodOnEveryModelKindRunsOrRefusesByName) {
  const auto models = small_models(dir_);
  for (const ModelKindInfo& kind : model_kinds()) {
    bool covered = false;
    for (const auto& m : models)
      covered = covered || m.model.find('"' + std::string(kind.name) + '"') != std::string::npos;
    EXPECT_TRUE(covered) << "model kind '" << kind.name << "' has no small model in this test";
  }
  std::map<std::string, Index> runs;
  Index refusals = 0;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const SmallModel& m = models[i];
    for (const MethodInfo& method : reduction_methods()) {
      SCOPED_TRACE(m.label + ", method " + std::string(method.name));
      const fs::path out = dir_ / (std::string(method.name) + std::to_string(i) + ".h5");
      const std::vector<std::string> set = {"experiment.output=\"" + out.string() + "\""};
      // The trained methods take [[training]] runs; the others refuse them.
      std::optional<ExperimentConfig> config;
      std::string refusal;
      for (const bool training : {false, true}) {
        try {
          config =
              parse_experiment(experiment_text(m, method, training), "registry.toml", dir_, set);
          break;
        } catch (const InvalidArgument& e) {
          refusal = e.what();
        }
      }
      if (!config) {
        // Refused: the message names the method and why, and nothing was written. A linear
        // method is never refused a model for being nonlinear: it reduces the linearisation.
        EXPECT_NE(refusal.find(std::string(method.name)), std::string::npos) << refusal;
        EXPECT_EQ(refusal.find("is nonlinear"), std::string::npos) << refusal;
        expect_reason_not_name(m, refusal);
        EXPECT_FALSE(must_run(m, method.name)) << "refused: " << refusal;
        EXPECT_FALSE(fs::exists(out));
        ++refusals;
        continue;
      }
      const auto family = config->reduction->family_for(*config->model);
      const bool linear_model = config->model->is_linear();
      // A linear method on a nonlinear model reduces its linearisation about its rest state.
      const bool linearised = family == ReductionMethod::Family::linear && !linear_model;
      if (linearised) {
        ASSERT_TRUE(config->model->has_linearisation());
      }
      RunSummary s;
      try {
        s = run_experiment(*config);
      } catch (const NumericalError& e) {
        // A linear method meeting a linearisation it cannot reduce (no Gramians of an undamped
        // or rigid system: poles on the imaginary axis): the method and the reason are named.
        const std::string what = e.what();
        EXPECT_TRUE(family == ReductionMethod::Family::linear && !linear_model) << what;
        EXPECT_NE(what.find(std::string(method.name)), std::string::npos) << what;
        EXPECT_NE(what.find("not stable"), std::string::npos) << what;
        EXPECT_FALSE(must_run(m, method.name)) << "refused: " << what;
        EXPECT_FALSE(fs::exists(out));
        std::printf("%-30s %-24s refused: %s\n", m.label.c_str(), std::string(method.name).c_str(),
                    what.c_str());
        ++refusals;
        continue;
      } catch (const InvalidArgument& e) {
        // Refused when the run meets the model (e.g. SOBT of a first-order system): by name.
        const std::string what = e.what();
        EXPECT_NE(what.find(std::string(method.name)), std::string::npos) << what;
        expect_reason_not_name(m, what);
        EXPECT_FALSE(must_run(m, method.name)) << "refused: " << what;
        EXPECT_FALSE(fs::exists(out));
        EXPECT_FALSE(family == ReductionMethod::Family::linear && !config->model->first_order())
            << "a linear method refused a second-order LTI model: " << what;
        ++refusals;
        continue;
      }
      ++runs[std::string(method.name)];
      ASSERT_TRUE(fs::exists(out));
      EXPECT_EQ(!s.linearisation.empty(), linearised)
          << "the summary says when a linearisation was reduced: '" << s.linearisation << "'";
      std::printf("%-30s %-24s r = %2lld  output error %.2e  H2 error %.2e\n", m.label.c_str(),
                  std::string(method.name).c_str(), static_cast<long long>(s.reduced_order),
                  experiments::figure_or(s.figures, "output_error",
                                         std::numeric_limits<double>::infinity()),
                  figure_or(s.figures, "h2_error", -1.0));
      if (family == ReductionMethod::Family::none) continue;
      EXPECT_EQ(s.reduced_order, m.order);
      EXPECT_LT(experiments::figure_or(s.figures, "output_error",
                                       std::numeric_limits<double>::infinity()),
                kUsefulError)
          << "relative output error "
          << experiments::figure_or(s.figures, "output_error",
                                    std::numeric_limits<double>::infinity())
          << " vs " << kUsefulError;
      if (family == ReductionMethod::Family::linear) {
        // A figure where the H2 norm exists; where it does not (an undamped model's modes), the
        // file says why instead of a number.
        const double h2 = figure_or(s.figures, "h2_error", -1.0);
        if (h2 >= 0) {
          EXPECT_LT(h2, kUsefulError) << "relative H2 error " << h2 << " vs " << kUsefulError;
        } else {
          const std::string status =
              io::ResultsReader(out).attribute_string("/analysis", "h2_status");
          EXPECT_EQ(status.rfind("not computed: ", 0), 0u) << status;
        }
      }
    }
  }
  // Every method ran on some model, and the mismatches were refused.
  for (const MethodInfo& method : reduction_methods())
    EXPECT_GT(runs[std::string(method.name)], 0) << "method " << method.name << " never ran";
  EXPECT_GT(refusals, 0);
}

// The measure registry (experiments/runner/measures.cpp) holds together: names and figures
// unique (a figure is a sweep column, so none may shadow another's), every need a registered
// measure of the same kind of run, no cycle among the needs, and a measure that is needed runs
// before the one that needs it whatever the keys ask for.
TEST(Measures, RegistryIsConsistent) {
  std::set<std::string> names, figures;
  for (const MeasureInfo& m : measures()) {
    EXPECT_TRUE(names.insert(std::string(m.name)).second) << "measure " << m.name << " twice";
    EXPECT_FALSE(m.doc.empty()) << m.name;
    for (const FigureInfo& f : m.figures)
      EXPECT_TRUE(figures.insert(std::string(f.name)).second)
          << "figure " << f.name << " of " << m.name << " is another measure's too";
  }
  for (const MeasureInfo& m : measures())
    for (const std::string_view need : m.needs) {
      const MeasureInfo* n = find_measure(need);
      ASSERT_NE(n, nullptr) << m.name << " needs " << need << ", which is not registered";
      EXPECT_EQ(n->applies_to, m.applies_to) << m.name << " needs " << need;
    }
  // Every measure asked for: each need before its user, each measure once.
  const std::string everything = "[analysis]\nhinf_full = true\nhinf_relative = true\n";
  for (const AppliesTo kind : {AppliesTo::every_run, AppliesTo::simulated,
                               AppliesTo::linear_reduced, AppliesTo::snapshots}) {
    const auto toml = toml::parse(everything);
    TableReader r(toml["analysis"].as_table(), "analysis", "test");
    const auto analysis = Analysis::read(r);
    const std::vector<const Measure*> order = analysis->to_run(kind);
    std::vector<std::string> ran;
    for (const Measure* m : order) {
      for (const std::string_view need : m->info().needs)
        EXPECT_NE(std::find(ran.begin(), ran.end(), need), ran.end())
            << m->info().name << " runs before " << need << ", which it needs";
      EXPECT_EQ(std::find(ran.begin(), ran.end(), m->info().name), ran.end());
      ran.emplace_back(m->info().name);
    }
    for (const MeasureInfo& m : measures())
      if (m.applies_to == kind)
        EXPECT_NE(std::find(ran.begin(), ran.end(), m.name), ran.end())
            << m.name << " does not run though every key asks for it";
  }
  // A need runs although its own key says no.
  {
    const auto toml = toml::parse("[analysis]\nhinf = false\nhinf_relative = true\n");
    TableReader r(toml["analysis"].as_table(), "analysis", "test");
    const auto analysis = Analysis::read(r);  // owns the measures to_run points to
    std::vector<std::string> ran;
    for (const Measure* m : analysis->to_run(AppliesTo::linear_reduced))
      ran.emplace_back(m->info().name);
    EXPECT_NE(std::find(ran.begin(), ran.end(), "hinf_error"), ran.end());
    EXPECT_NE(std::find(ran.begin(), ran.end(), "hinf_full"), ran.end());
  }
}

// A method returns its summary and records nothing while it runs (issue 42 item 1): on the LTI
// models and the nonlinear chain, every method's summary agrees with what write_reduction makes
// of it and with its reduced model (the order is the reduced model's dimension, every stage lies
// within the total time, BT's bound is 2 sum_{i>r} sigma_i of its own spectrum), and a method
// that fails leaves no /reduction behind.
TEST_F(Registry, EveryMethodReturnsASummaryThatMatchesItsRecordAndItsModel) {
  const auto models = small_models(dir_);
  Index checked = 0;
  for (const SmallModel& m : models) {
    if (m.label != "linear chain" && m.label.rfind("rail", 0) != 0 && m.label != "nonlinear chain")
      continue;
    for (const MethodInfo& method : reduction_methods()) {
      if (method.name == "none") continue;
      SCOPED_TRACE(m.label + ", method " + std::string(method.name));
      std::optional<ExperimentConfig> c;
      for (const bool training : {false, true}) {
        try {
          c = parse_experiment(experiment_text(m, method, training), "summary.toml", dir_, {});
          break;
        } catch (const InvalidArgument&) {
        }
      }
      if (!c) continue;  // refused up front: the test above checks the refusal
      const std::unique_ptr<FullModel> model = c->model->build(c->solver);
      std::unique_ptr<LtiOperator> op;
      if (reduction_family(*c) == ReductionMethod::Family::linear) op = model->lti_operator();
      io::Record out;
      ReductionStep step;
      try {
        step = reduce_step(*c, *model, op.get(), out, nullptr);
      } catch (const NumericalError& e) {
        EXPECT_FALSE(out.exists(layout::kReduction)) << "a failed reduction recorded: " << e.what();
        continue;
      }
      const ReductionSummary* s = step.summary();
      ASSERT_NE(s, nullptr);
      ++checked;
      EXPECT_EQ(s->method, method.name);
      EXPECT_EQ(s->r, m.order);
      const Index dim =
          step.linear ? step.linear->second_order.M.rows() : step.projection->main.model->n();
      EXPECT_EQ(dim, s->r) << "the summary's order is not the reduced model's dimension";
      double staged = 0;
      for (const auto& [stage, seconds] : s->stages) {
        EXPECT_GE(seconds, 0.0) << stage;
        staged += seconds;
      }
      EXPECT_LE(staged, s->seconds * 1.01 + 1e-3) << "the stages exceed the total";
      // What write_reduction wrote is the summary.
      const io::Record::Node* root = out.find(layout::kReduction);
      ASSERT_NE(root, nullptr);
      auto attribute = [&](const std::string& name) -> const io::AttributeValue* {
        for (const auto& [n, v] : root->attributes)
          if (n == name) return &v;
        return nullptr;
      };
      ASSERT_NE(attribute("r"), nullptr);
      EXPECT_EQ(std::get<std::int64_t>(*attribute("r")), s->r);
      EXPECT_EQ(std::get<double>(*attribute("seconds")), s->seconds);
      EXPECT_EQ(std::get<std::string>(*attribute("method")), s->method);
      for (const auto& [path, values] : s->spectra) {
        const io::Record::Node* node = out.find(path);
        ASSERT_NE(node, nullptr) << path;
        EXPECT_EQ(std::get<Vector>(node->data), values) << path;
      }
      for (const MethodStatus& st : s->statuses) {
        const std::string prefix = st.name.empty() ? "" : st.name + "_";
        ASSERT_NE(attribute(prefix + "status"), nullptr) << prefix;
        EXPECT_EQ(std::get<std::string>(*attribute(prefix + "status")), st.status);
      }
      if (method.name == "bt") {
        const Vector* hsv = s->spectrum(layout::kReductionHsv);
        ASSERT_NE(hsv, nullptr);
        ASSERT_TRUE(s->error_bound.has_value());
        ASSERT_TRUE(s->bound_is_complete);
        const double tail = 2.0 * hsv->tail(hsv->size() - s->r).sum();
        EXPECT_NEAR(*s->error_bound, tail, 1e-12 * (*hsv)[0])
            << "bound " << *s->error_bound << " vs 2 sum_{i>r} sigma_i = " << tail;
      }
    }
  }
  EXPECT_GE(checked, 10) << "too few methods ran to check their summaries";
  // A method that fails midway (IRKA stopped after one iteration, the unconverged model
  // refused) leaves nothing behind.
  const SmallModel& rail = models[2];
  ASSERT_EQ(rail.label.rfind("rail", 0), 0u);
  ExperimentConfig c =
      parse_experiment(experiment_text(rail, *find_reduction_method("irka"), false) +
                           "max_iterations = 1\ntolerance = 1e-15\n",
                       "summary.toml", dir_, {});
  const std::unique_ptr<FullModel> model = c.model->build(c.solver);
  const std::unique_ptr<LtiOperator> op = model->lti_operator();
  io::Record out;
  EXPECT_THROW(reduce_step(c, *model, op.get(), out, nullptr), NumericalError);
  EXPECT_FALSE(out.exists(layout::kReduction));
}

}  // namespace
}  // namespace mor::experiments
