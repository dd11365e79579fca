// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "memory": the run's peak resident memory (VmHWM of the process: the model, its factor,
// the reduction, the runs and what they keep), at the end of every run, reduced or not.
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct MemoryKeys {
  // No keys: every run has it (its file says nothing of it).
  template <class V>
  void visit_keys(V&) {}
  void check(const TableReader&) const {}
  bool requested() const { return true; }
  double estimate_seconds(double) const { return 0.0; }
  std::string progress_text() const { return "memory peak"; }
};

void run_memory(const MemoryKeys&, MeasureContext& m) {
  const double mib = peak_rss_mib();
  m.out.create_group(layout::kTimings);
  m.out.set_attribute(layout::kTimings, "peak_rss_mib", mib);
  m.set_figure("peak_rss_mib", mib);
}

}  // namespace

extern const MeasureInfo kMemoryMeasure;
using MemoryMeasure = KeyedMeasure<MemoryKeys, kMemoryMeasure, &run_memory>;
extern const MeasureInfo kMemoryMeasure{
    "memory",
    "the run's peak resident memory in MiB (/timings peak_rss_mib; VmHWM of the process)",
    AppliesTo::every_run,
    {},
    {{"peak_rss_mib", "peak memory %.0f MiB", "peak MiB", "peak resident memory of the run (MiB)",
      nullptr, SummaryLine::total, "%.0f"}},
    &MemoryMeasure::read,
    &MemoryMeasure::keys};

}  // namespace mor::experiments
