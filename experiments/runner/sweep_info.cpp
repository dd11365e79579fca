// SPDX-License-Identifier: GPL-3.0-or-later
// `mor info` of a sweep's merged results file: the table and the fits as text.
#include "experiments/runner/sweep.hpp"

#include "experiments/runner/estimates.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using detail::concat;

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

}  // namespace

// mor info

bool is_sweep_results(const io::ResultsReader& r) {
  // By name, not by listing: HDF5 1.10.8 can crash listing a damaged file's attributes.
  return r.has_attribute("/", "kind") && r.attribute_string("/", "kind") == "sweep";
}

namespace {

std::string seconds_text(double s) {
  char buf[32];
  if (!std::isfinite(s)) return "-";
  if (s >= 1.0)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f ms", 1e3 * s);
  else
    std::snprintf(buf, sizeof buf, "%.2f us", 1e6 * s);
  return buf;
}

std::string number_text(double v, const char* format) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

void print_sweep_info(const io::ResultsReader& r, std::ostream& os) {
  if (!is_sweep_results(r))
    throw IoError(concat("results file '", r.path().string(), "' is not a sweep results file"));
  const std::int64_t total = r.attribute_int("/", "points_total");
  const std::int64_t done = r.attribute_int("/", "points_done");
  const std::int64_t failed = r.attribute_int("/", "points_failed");
  os << r.path().string() << ": sweep '" << r.attribute_string("/", "experiment_name") << "', "
     << done << "/" << total << " points done";
  if (failed > 0) os << ", " << failed << " failed";
  if (done + failed < total) os << ", " << (total - done - failed) << " pending (rerun to finish)";
  os << "\n  created " << r.attribute_string("/", "created") << " by "
     << r.attribute_string("/", "command_line") << "\n";

  const auto texts = [&](const std::string& name) {
    return r.read_strings(layout::child(layout::kTable, name));
  };
  const auto values = [&](const std::string& name) {
    const Vector v = r.read_vector(layout::child(layout::kTable, name));
    return std::vector<double>(v.begin(), v.end());
  };
  const auto series = texts("series"), status = texts("status"), keys = texts("key");
  const auto N = values("N");
  // The columns shown: the sizes, each registered measure's figure that has an info title and a
  // value at some point (experiments/runner/measure.hpp: the output error, ...), the costs.
  struct Field {
    std::string title;
    int width;
    std::vector<double> values;
    std::function<std::string(double)> text;
  };
  const auto number = [](const char* format) {
    return [format](double v) { return number_text(v, format); };
  };
  const auto positive = [](double v) { return v > 0 ? number_text(v, "%.0f") : std::string("-"); };
  std::vector<Field> fields = {{"N", 8, N, number("%.0f")},
                               {"r", 4, values("r"), positive},
                               {"m", 4, values("m"), positive}};
  for (const FigureInfo& f : measure_figures()) {
    const std::string path = layout::child(layout::kTable, f.name);
    if (f.info_title.empty() || !r.exists(path)) continue;
    std::vector<double> v = values(std::string(f.name));
    if (std::none_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); })) continue;
    fields.push_back({std::string(f.info_title), std::max(9, static_cast<int>(f.info_title.size())),
                      std::move(v), number(f.info_format.data())});
  }
  const auto more = std::vector<Field>{{"offline", 10, values("offline_s"), seconds_text},
                                       {"full step", 10, values("full_step_s"), seconds_text},
                                       {"red. step", 10, values("reduced_step_s"), seconds_text},
                                       {"point", 9, values("point_s"), seconds_text}};
  fields.insert(fields.end(), more.begin(), more.end());
  std::size_t series_width = 6;
  for (const auto& s : series) series_width = std::max(series_width, s.size());
  os << "\n  " << std::left << std::setw(static_cast<int>(series_width)) << "series" << std::right;
  for (const Field& f : fields) os << " " << std::setw(f.width) << f.title;
  os << "  status\n";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    os << "  " << std::left << std::setw(static_cast<int>(series_width)) << series[i] << std::right;
    for (const Field& f : fields) os << " " << std::setw(f.width) << f.text(f.values[i]);
    os << "  " << status[i] << "\n";
  }

  // Multibody points: the benchmark run's cost and accuracy (columns only those sweeps have).
  if (r.exists(layout::child(layout::kTable, "cvode_steps"))) {
    const auto cpu = values("cvode_cpu_s"), steps = values("cvode_steps"),
               exact = values("exact_error"), ref = values("reference_difference"),
               energy = values("energy_balance_error"), constraint = values("constraint_residual");
    os << "\n  multibody benchmark runs (CVODE):\n  " << std::left
       << std::setw(static_cast<int>(series_width)) << "series" << std::right << " "
       << std::setw(10) << "CPU"
       << " " << std::setw(7) << "steps"
       << " " << std::setw(10) << "exact err"
       << " " << std::setw(10) << "ref. diff"
       << " " << std::setw(10) << "energy err"
       << " " << std::setw(10) << "constraint"
       << "\n";
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!std::isfinite(steps[i])) continue;
      os << "  " << std::left << std::setw(static_cast<int>(series_width)) << series[i]
         << std::right << " " << std::setw(10) << seconds_text(cpu[i]) << " " << std::setw(7)
         << number_text(steps[i], "%.0f") << " " << std::setw(10) << number_text(exact[i], "%.2e")
         << " " << std::setw(10) << number_text(ref[i], "%.2e") << " " << std::setw(10)
         << number_text(energy[i], "%.2e") << " " << std::setw(10)
         << number_text(constraint[i], "%.2e") << "\n";
    }
  }

  const auto fs_series = r.read_strings(layout::child(layout::kFits, "series")),
             fs_column = r.read_strings(layout::child(layout::kFits, "column"));
  if (!fs_series.empty()) {
    const Vector e = r.read_vector(layout::child(layout::kFits, "exponent")),
                 lo = r.read_vector(layout::child(layout::kFits, "N_min")),
                 hi = r.read_vector(layout::child(layout::kFits, "N_max")),
                 n = r.read_vector(layout::child(layout::kFits, "points"));
    os << "\n  cost ~ N^p, least squares in log-log over N >= "
       << r.attribute_double("/", "fit_min_N") << ":\n";
    std::string last;
    for (std::size_t k = 0; k < fs_series.size(); ++k) {
      if (fs_series[k] != last) os << "  " << fs_series[k] << ":\n";
      last = fs_series[k];
      const Index i = static_cast<Index>(k);
      os << "    " << std::left << std::setw(28) << fs_column[k] << std::right
         << " p = " << number_text(e(i), "%5.2f") << "   (N = " << number_text(lo(i), "%.0f")
         << " .. " << number_text(hi(i), "%.0f") << ", " << number_text(n(i), "%.0f")
         << " points)\n";
    }
  }
  const std::vector<double> tolerances =
      std::get<std::vector<double>>(r.attribute("/", "tolerances"));
  if (!tolerances.empty()) {
    os << "\n  r needed for a relative tolerance (BT: 2 sum_{i>r} sigma_i <= tol sigma_1; POD: "
          "snapshot tail energy^(1/2) <= tol):\n";
    os << "  " << std::left << std::setw(static_cast<int>(series_width)) << "series" << std::right
       << " " << std::setw(8) << "N";
    for (const double t : tolerances) os << " " << std::setw(8) << number_text(t, "%.0e");
    os << "\n";
    std::vector<std::vector<double>> r_tol;
    for (std::size_t k = 0; k < tolerances.size(); ++k)
      r_tol.push_back(values(concat("r_for_tol_", k)));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (status[i] != "done") continue;
      os << "  " << std::left << std::setw(static_cast<int>(series_width)) << series[i]
         << std::right << " " << std::setw(8) << number_text(N[i], "%.0f");
      for (const auto& col : r_tol) os << " " << std::setw(8) << number_text(col[i], "%.0f");
      os << "\n";
    }
  }
}

}  // namespace mor::experiments
