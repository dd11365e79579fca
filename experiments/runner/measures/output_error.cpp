// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "output_error": the time-domain error y - y_r of the reduced model's run against the
// full run at the output times (/error/y), its relative 2-norm over all samples and outputs and
// its largest entry; with reduction.compare_orders the same for every order of the nested bases
// (/error_vs_r, with each run's cost per step).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "experiments/runner/config.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct OutputErrorKeys {
  // No keys: every run with a reduced model has it (its file says nothing of it).
  template <class V>
  void visit_keys(V&) {}
  void check(const TableReader&) const {}
  bool requested() const { return true; }
  double estimate_seconds(double) const { return 0.0; }
  std::string progress_text() const { return "output errors"; }
};

/// ||y - y_r||_2 / ||y||_2 over all samples and outputs (or ||y - y_r||_2 if y = 0), and
/// max |y - y_r|.
struct OutputError {
  double relative_l2 = 0, max_abs = 0;
};

OutputError output_error(const std::vector<double>& y_full, const std::vector<double>& y_reduced) {
  require(y_reduced.size() == y_full.size(), "internal: ", y_reduced.size(),
          " reduced output samples against ", y_full.size(), " full ones");
  double err2 = 0.0, ref2 = 0.0;
  OutputError e;
  for (std::size_t i = 0; i < y_full.size(); ++i) {
    const double d = y_full[i] - y_reduced[i];
    err2 += d * d;
    ref2 += y_full[i] * y_full[i];
    e.max_abs = std::max(e.max_abs, std::abs(d));
  }
  e.relative_l2 = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return e;
}

/// /error_vs_r: the output error and the reduced cost per step of every order, ascending in r.
void record_error_against_order(const SimulatedComparison& s, io::RecordSink& out) {
  struct Row {
    Index r, m;
    OutputError e;
    double step_s;
  };
  const double per_step = 1.0 / static_cast<double>(std::max<Index>(1, s.steps));
  std::vector<Row> rows;
  for (const ReducedOutputs& run : s.orders)
    rows.push_back({run.r, run.m, output_error(s.y_full, *run.y), run.seconds * per_step});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.r < b.r; });
  const auto n = static_cast<Index>(rows.size());
  Vector r(n), m(n), rel(n), max_abs(n), step(n);
  for (Index i = 0; i < n; ++i) {
    const Row& row = rows[static_cast<std::size_t>(i)];
    r[i] = static_cast<double>(row.r);
    m[i] = static_cast<double>(row.m);
    rel[i] = row.e.relative_l2;
    max_abs[i] = row.e.max_abs;
    step[i] = row.step_s;
  }
  out.create_group(layout::kErrorVsR);
  out.write_vector(layout::child(layout::kErrorVsR, "r"), r);
  out.write_vector(layout::child(layout::kErrorVsR, "m"), m);
  out.write_vector(layout::child(layout::kErrorVsR, "relative_l2"), rel);
  out.write_vector(layout::child(layout::kErrorVsR, "max_abs"), max_abs);
  out.write_vector(layout::child(layout::kErrorVsR, "reduced_step_s"), step);
  out.set_attribute(layout::kErrorVsR, "method", std::string(s.method));
  out.set_attribute(layout::kErrorVsR, "definition",
                    std::string("output error of the reduced model of order r (bases nested: "
                                "the leading r columns of the widest), m DEIM samples (0: none); "
                                "relative_l2 and max_abs as in /error; reduced_step_s its "
                                "integration time per step"));
}

void run_output_error(const OutputErrorKeys&, MeasureContext& m) {
  const SimulatedComparison& s = *m.simulated;
  const ReducedOutputs& main = s.orders.front();
  const OutputError err = output_error(s.y_full, *main.y);
  // y - y_r, a row per output time.
  const auto rows = static_cast<Index>(s.y_full.size()) / std::max<Index>(1, s.p);
  Matrix e(rows, s.p);
  for (Index row = 0; row < rows; ++row)
    for (Index j = 0; j < s.p; ++j) {
      const auto at = static_cast<std::size_t>(row * s.p + j);
      e(row, j) = s.y_full[at] - (*main.y)[at];
    }
  m.out.create_group(layout::kError);
  m.out.write_matrix(layout::kErrorY, e);
  m.out.set_attribute(layout::kError, "max_abs", err.max_abs);
  m.out.set_attribute(layout::kError, "relative_l2", err.relative_l2);
  m.out.set_attribute(layout::kError, "definition",
                      std::string("y - y_r at /outputs/t; relative_l2 = ||y - y_r||_2 / ||y||_2 "
                                  "over all samples and outputs"));
  m.set_figure("output_error", err.relative_l2);
  if (s.orders.size() > 1) record_error_against_order(s, m.out);
}

/// The summary's words after the figure: whether the test input is one of the training inputs
/// (then the error is a training error), and what the reduced model of a linearisation is
/// compared with.
std::string output_error_note(const ExperimentConfig& c, const RunSummary& s) {
  const bool trained_on_input =
      std::any_of(c.training.begin(), c.training.end(), [&](const InputSpec& t) {
        const InputSpec& i = c.input;
        return t.type == i.type && t.amplitude == i.amplitude && t.frequency == i.frequency &&
               t.phase == i.phase && t.offset == i.offset && t.t_on == i.t_on && t.f0 == i.f0 &&
               t.f1 == i.f1 && t.t1 == i.t1 && t.frequencies == i.frequencies && t.seed == i.seed &&
               t.file == i.file;
      });
  std::string note = c.training.empty() ? ""
                     : trained_on_input ? " (on an input of the training)"
                                        : " (input not seen in training)";
  if (!s.linearisation.empty()) note += " (against the nonlinear model)";
  return note;
}

}  // namespace

extern const MeasureInfo kOutputErrorMeasure;
using OutputErrorMeasure = KeyedMeasure<OutputErrorKeys, kOutputErrorMeasure, &run_output_error>;
extern const MeasureInfo kOutputErrorMeasure{
    "output_error",
    "||y - y_r||_2 / ||y||_2 over all output samples, max |y - y_r| (/error), and against r "
    "with reduction.compare_orders (/error_vs_r)",
    AppliesTo::simulated,
    {},
    {{"output_error", "relative output error %.3g", "output err",
      "||y - y_r||_2 / ||y||_2 over all samples and outputs", &output_error_note}},
    &OutputErrorMeasure::read,
    &OutputErrorMeasure::keys};

}  // namespace mor::experiments
