// SPDX-License-Identifier: GPL-3.0-or-later
// The registry of measures: one X(...) entry per measure, defined in experiments/runner/measures/.
// The order is that of the [analysis] keys, of the summary's figures and of the sweep columns.
#include <algorithm>
#include <cmath>
#include <ostream>

#include "experiments/runner/measure.hpp"
#include "src/core/errors.hpp"

// clang-format off: one registration line per measure.
#define MOR_MEASURES(X)   \
  X(kOutputErrorMeasure)  \
  X(kStateErrorMeasure)   \
  X(kH2ErrorMeasure)      \
  X(kHinfErrorMeasure)    \
  X(kBodeMeasure)         \
  X(kHinfFullMeasure)     \
  X(kHinfRelativeMeasure) \
  X(kSpeedupMeasure)      \
  X(kMemoryMeasure)       \
  X(kEnergyMeasure)
// clang-format on

namespace mor::experiments {

#define MOR_DECLARE_MEASURE(measure) extern const MeasureInfo measure;
MOR_MEASURES(MOR_DECLARE_MEASURE)
#undef MOR_DECLARE_MEASURE

const std::vector<MeasureInfo>& measures() {
#define MOR_LIST_MEASURE(measure) measure,
  static const std::vector<MeasureInfo> all = {MOR_MEASURES(MOR_LIST_MEASURE)};
#undef MOR_LIST_MEASURE
  return all;
}

const MeasureInfo* find_measure(std::string_view name) {
  const auto& all = measures();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const MeasureInfo& m) { return m.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::vector<FigureInfo> measure_figures() {
  std::vector<FigureInfo> out;
  for (const MeasureInfo& m : measures()) out.insert(out.end(), m.figures.begin(), m.figures.end());
  return out;
}

double figure_or(const std::vector<std::pair<std::string, double>>& figures, std::string_view name,
                 double fallback) {
  for (const auto& [n, v] : figures)
    if (n == name) return v;
  return fallback;
}

Analysis::Analysis() {
  for (const MeasureInfo& m : measures()) {
    TableReader empty(nullptr, "analysis", "defaults");
    measures_.push_back(m.read(empty));
  }
}

std::shared_ptr<const Analysis> Analysis::read(TableReader& r) {
  auto a = std::make_shared<Analysis>();
  a->measures_.clear();
  for (const MeasureInfo& m : measures()) a->measures_.push_back(m.read(r));
  r.finish();
  return a;
}

void Analysis::write_toml(std::ostream& os) const {
  for (const auto& m : measures_) m->write_toml(os);
}

std::vector<const Measure*> Analysis::to_run(AppliesTo applies) const {
  std::vector<const Measure*> order;
  const auto by_name = [&](std::string_view name) -> const Measure* {
    for (const auto& m : measures_)
      if (m->info().name == name) return m.get();
    throw InvalidArgument(
        detail::concat("internal: a measure needs '", name, "', which is not registered"));
  };
  // Depth-first over the needs; `visiting` catches a cycle in the declarations.
  std::vector<const Measure*> visiting;
  const auto add = [&](const Measure* m, const auto& self) -> void {
    if (std::find(order.begin(), order.end(), m) != order.end()) return;
    require(std::find(visiting.begin(), visiting.end(), m) == visiting.end(),
            "internal: the measures' needs form a cycle through '", m->info().name, "'");
    visiting.push_back(m);
    for (const std::string_view need : m->info().needs) self(by_name(need), self);
    visiting.pop_back();
    order.push_back(m);
  };
  for (const auto& m : measures_)
    if (m->info().applies_to == applies && m->requested()) add(m.get(), add);
  return order;
}

double Analysis::estimate_seconds(AppliesTo applies, double n) const {
  double s = 0.0;
  for (const Measure* m : to_run(applies)) s += m->estimate_seconds(n);
  return s;
}

void Analysis::run(AppliesTo applies, MeasureContext& m) const {
  for (const Measure* measure : to_run(applies)) measure->run(m);
}

}  // namespace mor::experiments
