// SPDX-License-Identifier: GPL-3.0-or-later
// Measures: the seam between an experiment file's [analysis] table and what a run computes about
// its full and reduced models after simulating them (H2 and H-infinity errors, the Bode curves,
// ...). A measure is one file (experiments/runner/measures/<measure>.cpp) that declares its keys
// once (experiments/runner/keys.hpp), which runs it applies to, which measures it needs, what it
// records under /analysis and the figures it yields (the run summary's words, the sweep table's
// columns); plus one X() entry in the registry (measures.cpp). The runner, the summary printer,
// the sweep's point record, merge and `mor info` table, the layout check of sweep files and
// `mor keys` / `mor list measures` walk the registry; none names a measure.
#pragma once

#include <any>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/runner/keys.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "src/io/record.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

struct ExperimentConfig;
struct RunSummary;
class FullModel;

/// The line of the run summary a figure is printed in.
enum class SummaryLine {
  reduced,  ///< the reduced run's line ("reduced   pod, r = 20: 0.001 s, 675x faster per step")
  error,    ///< the error line ("error     relative output error 4.45e-06, ...")
  total,    ///< the last line ("total     5.4 s (setup 4.6 s, writing 0.05 s), peak memory ...")
};

/// A number a measure yields, by name: the run summary prints it, a sweep point records it and
/// the merged table has a column of it (NaN where a point has none).
struct FigureInfo {
  std::string_view name;  ///< the sweep table's column, RunSummary::figures' key
  /// The run summary's printf format of the value (one double), e.g. "relative H2 error %.3g";
  /// "": not printed.
  std::string_view summary;
  /// The column title in `mor info`'s sweep table; "": not shown there (the column is still in
  /// the table and the CSV). Shown when at least one point has a value.
  std::string_view info_title;
  std::string_view doc;  ///< what it is, in the papers' symbols
  /// What the summary adds after the value about the run (e.g. "(input not seen in training)");
  /// nullptr: nothing.
  std::string (*note)(const ExperimentConfig& c, const RunSummary& s) = nullptr;
  SummaryLine line = SummaryLine::error;
  std::string_view info_format = "%.2e";  ///< printf format (a literal) in `mor info`'s table
};

/// The runs a measure applies to.
enum class AppliesTo {
  /// Every run, reduced or not, at its end (its costs).
  every_run,
  /// Every run with a reduced model, after the full and the reduced runs: their outputs (and, for
  /// a projection, the states compared during the full run).
  simulated,
  /// A linear reduced model G_r of the full model's transfer function G (the linear family:
  /// bt, sobt, modal, irka, pod of an LTI model; of a nonlinear model its linearisation).
  linear_reduced,
  /// The full run's snapshots as they are taken (output.snapshot_stride): run before the full
  /// run starts, the measure registers what it does at each snapshot (SnapshotHooks).
  snapshots,
};

/// AppliesTo::snapshots: the full model about to run, the results file's row streams, and what
/// the measures do at each snapshot (t, q, v) of the run, in registration order.
struct SnapshotHooks {
  const FullModel& model;
  io::ResultsWriter& writer;
  std::vector<std::function<void(double t, const Vector& q, const Vector& v)>> observers;
};

/// AppliesTo::linear_reduced: G and G_r.
struct LinearComparison {
  LtiOperator& full;         ///< G: the full model's LTI operator (or its linearisation)
  ReducedModel& reduced;     ///< G_r with what the reduction offers the analysis
  const NormOptions& norms;  ///< the method's norm settings (dense limit, ADI)
};

/// One reduced model's run: its order, DEIM samples (0: none), outputs and integration time.
struct ReducedOutputs {
  Index r = 0, m = 0;
  const std::vector<double>* y = nullptr;  ///< rows of p values at the full run's output times
  double seconds = 0;
};

/// ||q - V q_r|| and ||q|| summed over every stride-th step of the full run (a projection's
/// reduced coordinates lifted, compared while the full model runs: its states are not kept).
struct StateComparison {
  double err2 = 0, ref2 = 0;
  double max_relative = 0;  ///< max over those steps of ||q - V q_r|| / ||q||
  Index stride = 0;
};

/// AppliesTo::simulated: the outputs of the full run and of every reduced run.
struct SimulatedComparison {
  std::string_view method;                  ///< reduction.method
  double full_stepping_seconds = 0;         ///< the full run's integration time less its writing
  const std::vector<double>& y_full;        ///< rows of p values
  Index p = 0;                              ///< outputs
  Index steps = 0;                          ///< integration steps of each run
  std::vector<ReducedOutputs> orders;       ///< the main reduced model first, then compare_orders
  const StateComparison* states = nullptr;  ///< projections only
};

/// What the measures of one run see and share: the models or runs they apply to, the results
/// file, the figures and products of the measures run before.
class MeasureContext {
 public:
  explicit MeasureContext(io::RecordSink& out) : out(out) {}

  io::RecordSink& out;                             ///< the results file (or a record in memory)
  LinearComparison* linear = nullptr;              ///< set for AppliesTo::linear_reduced
  const SimulatedComparison* simulated = nullptr;  ///< set for AppliesTo::simulated
  SnapshotHooks* snapshots = nullptr;              ///< set for AppliesTo::snapshots

  /// A figure of the run (declared in the measure's FigureInfo list).
  void set_figure(std::string_view name, double value) { figures_.emplace_back(name, value); }
  std::optional<double> figure(std::string_view name) const {
    for (const auto& [n, v] : figures_)
      if (n == name) return v;
    return std::nullopt;
  }
  const std::vector<std::pair<std::string, double>>& figures() const { return figures_; }

  /// What a measure hands to the measures that need it (e.g. the Bode curves), by its name.
  template <class T>
  void put(std::string_view measure, T product) {
    products_[std::string(measure)] = std::move(product);
  }
  /// The product of a measure run before; nullptr if it has none of type T.
  template <class T>
  const T* product(std::string_view measure) const {
    const auto it = products_.find(std::string(measure));
    return it == products_.end() ? nullptr : std::any_cast<T>(&it->second);
  }

 private:
  std::vector<std::pair<std::string, double>> figures_;
  std::map<std::string, std::any> products_;
};

struct MeasureInfo;

/// One measure as an experiment file configured it (its keys read).
class Measure {
 public:
  virtual ~Measure() = default;
  virtual const MeasureInfo& info() const = 0;
  /// Whether the keys ask for it (a measure another one needs runs anyway).
  virtual bool requested() const = 0;
  /// Its keys as TOML lines (the stored configuration).
  virtual void write_toml(std::ostream& os) const = 0;
  /// Rough wall time (seconds, one core) on a model of n states.
  virtual double estimate_seconds(double n) const {
    (void)n;
    return 0.0;
  }
  /// A few words for the progress line ("H2 norms").
  virtual std::string progress_text() const = 0;
  /// Computes, records under /analysis, and sets its figures and products in m.
  /// @throws Interrupted; a norm that cannot be computed is recorded with its reason instead.
  virtual void run(MeasureContext& m) const = 0;
};

/// One registered measure.
struct MeasureInfo {
  std::string_view name;
  std::string_view doc;
  AppliesTo applies_to;
  /// Measures that run before this one whenever it runs, requested or not.
  std::vector<std::string_view> needs;
  /// The figures it may yield, in summary order.
  std::vector<FigureInfo> figures;
  /// Reads its keys of [analysis] (the table is shared: TableReader::finish is the caller's).
  /// @throws InvalidArgument naming the key and the value.
  std::unique_ptr<Measure> (*read)(TableReader& r);
  /// Its rows of the key reference.
  void (*keys)(std::vector<KeyDoc>& rows);
};

/// Every registered measure, in registration order (experiments/runner/measures.cpp).
const std::vector<MeasureInfo>& measures();
const MeasureInfo* find_measure(std::string_view name);
/// Every figure of every registered measure, in registration order.
std::vector<FigureInfo> measure_figures();

/// The [analysis] table as read: one configured Measure per registered measure.
class Analysis {
 public:
  /// Every measure with its defaults.
  Analysis();
  /// Reads [analysis] (every measure its keys, then the table's unknown keys refused).
  /// @throws InvalidArgument naming the key and the value.
  static std::shared_ptr<const Analysis> read(TableReader& r);
  void write_toml(std::ostream& os) const;
  /// The measures that run on a run of this kind, each after what it needs, in registration
  /// order otherwise: the requested ones and what they need.
  std::vector<const Measure*> to_run(AppliesTo applies) const;
  double estimate_seconds(AppliesTo applies, double n) const;
  /// Runs to_run(applies) in m (records into m.out, figures into m).
  void run(AppliesTo applies, MeasureContext& m) const;

 private:
  std::vector<std::shared_ptr<const Measure>> measures_;  ///< registration order
};

/// A measure whose keys are the struct O (O::visit_keys, O::check(TableReader&), O::requested(),
/// O::estimate_seconds(n), O::progress_text()) and whose run is `Run(info, o, m)`: the shape every
/// measure file takes.
template <class O, const MeasureInfo& Info, void (*Run)(const O&, MeasureContext&)>
class KeyedMeasure final : public Measure {
 public:
  explicit KeyedMeasure(O o) : o_(std::move(o)) {}
  const MeasureInfo& info() const override { return Info; }
  bool requested() const override { return o_.requested(); }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    O copy = o_;
    copy.visit_keys(w);
  }
  double estimate_seconds(double n) const override { return o_.estimate_seconds(n); }
  std::string progress_text() const override { return o_.progress_text(); }
  void run(MeasureContext& m) const override { Run(o_, m); }

  static std::unique_ptr<Measure> read(TableReader& r) {
    O o;
    KeyReader reader(r, "analysis", {});
    o.visit_keys(reader);
    o.check(r);
    return std::make_unique<KeyedMeasure>(std::move(o));
  }
  static void keys(std::vector<KeyDoc>& rows) {
    O o;
    KeyDocs docs(rows, "analysis");
    o.visit_keys(docs);
  }

 private:
  O o_;
};

/// The value of a run's figure, or `fallback` if the run has none.
double figure_or(const std::vector<std::pair<std::string, double>>& figures, std::string_view name,
                 double fallback);

}  // namespace mor::experiments
