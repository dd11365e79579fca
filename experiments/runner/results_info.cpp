// SPDX-License-Identifier: GPL-3.0-or-later
// `mor info` of a run's results file: provenance, configuration, groups and datasets, timings.
#include "experiments/runner/experiment.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/export.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/run_guards.hpp"
#include "experiments/runner/sweep.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/errors.hpp"
#include "src/core/version.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"

namespace mor::experiments {

void print_results_info(const std::filesystem::path& file, std::ostream& os) {
  const io::ResultsReader r(file);
  auto show_attrs = [&](const std::string& obj) {
    for (const auto& name : r.attribute_names(obj)) {
      if (name == "configuration") continue;
      const io::AttributeValue value = r.attribute(obj, name);
      os << "  " << std::left << std::setw(24) << name << " ";
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::vector<double>> ||
                          std::is_same_v<T, std::vector<std::int64_t>>) {
              os << "[";
              for (std::size_t i = 0; i < x.size() && i < 16; ++i) os << (i ? ", " : "") << x[i];
              os << (x.size() > 16 ? ", ...]" : "]");
            } else {
              os << x;
            }
          },
          value);
      os << "\n";
    }
  };
  os << file.string() << "\n";
  show_attrs("/");
  for (const std::string& group :
       {layout::kModel, layout::kSimulation, layout::kInput, layout::kReduction, layout::kReduced,
        layout::kError, layout::kAnalysis, layout::kTimings, layout::kBenchmark, layout::kLinear,
        layout::kParameters, layout::kValidation}) {
    if (!r.exists(group)) continue;
    os << group << "\n";
    show_attrs(group);
  }
  os << "datasets\n";
  // Every dataset below the data groups, depth first; a member without dims is a group.
  std::function<void(const std::string&)> walk = [&](const std::string& group) {
    for (const auto& name : r.list(group)) {
      const std::string path = group + "/" + name;
      std::vector<Index> d;
      try {
        d = r.dims(path);
      } catch (const IoError&) {
        walk(path);
        continue;
      }
      os << "  " << std::left << std::setw(32) << path << " ";
      for (std::size_t i = 0; i < d.size(); ++i) os << (i ? " x " : "") << d[i];
      os << "\n";
    }
  };
  for (const std::string& group :
       {layout::kOutputs, layout::kSnapshots, layout::kReduction, layout::kReduced, layout::kError,
        layout::kAnalysis, layout::kParameters, layout::kValidation})
    if (r.exists(group)) walk(group);
}

namespace {

/// The reduced model and the singular values a reduction stored are finite: NaN or Inf there is
/// damage (a run that produced one stops with exit 3 and stores nothing), and `mor export` would
/// hand it on. Small (r x r, r values); the bases V, W (n x r) are checked when exported.
void check_finite_reduction(const io::ResultsReader& r) {
  const std::string& grp = layout::kReductionReduced;
  if (r.type(grp) == io::ObjectType::group)
    for (const auto& name : r.list(grp)) {
      const std::string path = layout::child(grp, name);
      if (r.type(path) == io::ObjectType::dataset && r.is_numeric_dataset(path))
        r.dims(path).size() == 2 ? void(r.read_finite_matrix(path))
                                 : void(r.read_finite_vector(path));
    }
  for (const char* name : {"hsv", "sv"}) {
    const std::string path = layout::child(layout::kReduction, name);
    if (r.type(path) == io::ObjectType::dataset) r.read_finite_vector(path);
  }
}

}  // namespace

void print_info(const std::filesystem::path& file, std::ostream& os) {
  const io::ResultsReader reader(file);
  check_results_layout(reader);
  if (is_sweep_results(reader)) {
    print_sweep_info(reader, os);
  } else {
    check_finite_reduction(reader);
    check_reduced_model_shapes(reader);  // as `mor export` checks it
    print_results_info(file, os);
  }
}

}  // namespace mor::experiments
