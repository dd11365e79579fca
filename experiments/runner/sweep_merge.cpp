// SPDX-License-Identifier: GPL-3.0-or-later
// The merged results file of a sweep: the table of every point, the power-law fits of the costs
// against N, the CSV copy, and each point's results file under /points/<key>.
#include "experiments/runner/sweep.hpp"

#include "experiments/runner/estimates.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
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

constexpr double kMissingValue = std::numeric_limits<double>::quiet_NaN();

}  // namespace

namespace {

/// The order r a point's method needs for relative tolerance tol, by the method's own rule over
/// its stored spectrum (MethodInfo::order_for_tolerance); -1 if it has none or never gets there.
std::int64_t order_for_tolerance(const io::ResultsReader& r, const std::string& method,
                                 double tol) {
  const MethodInfo* m = find_reduction_method(method);
  return m != nullptr && m->order_for_tolerance != nullptr ? m->order_for_tolerance(r, tol) : -1;
}

struct Column {
  std::vector<double> numbers;
  std::vector<std::string> texts;
  bool is_text = false;
};

const char* const kIntegerColumns[] = {"N", "r", "m"};
/// The numeric columns every table has: every registered measure's figures
/// (experiments/runner/measure.hpp: the time-domain errors, the norms), then the costs.
const std::vector<std::string>& number_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c;
    for (const FigureInfo& f : measure_figures()) c.emplace_back(f.name);
    for (const char* name :
         {"build_s", "offline_s", "full_simulation_s", "full_step_s", "reduced_step_s", "point_s"})
      c.emplace_back(name);
    return c;
  }();
  return columns;
}

bool is_number(const std::string& s, double& value) {
  if (s.empty()) return false;
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

std::optional<PowerLawFit> fit_power_law(const std::vector<double>& N,
                                         const std::vector<double>& cost, double N_min_fit) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  Index n = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  std::set<double> distinct;
  for (std::size_t k = 0; k < N.size() && k < cost.size(); ++k) {
    if (!(N[k] >= N_min_fit) || !(cost[k] > 0) || !std::isfinite(cost[k])) continue;
    const double x = std::log(N[k]), y = std::log(cost[k]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    ++n;
    lo = std::min(lo, N[k]);
    hi = std::max(hi, N[k]);
    distinct.insert(N[k]);
  }
  if (distinct.size() < 2) return std::nullopt;
  const double dn = static_cast<double>(n);
  PowerLawFit f;
  f.exponent = (dn * sxy - sx * sy) / (dn * sxx - sx * sx);
  f.coefficient = std::exp((sy - f.exponent * sx) / dn);
  f.N_min = lo;
  f.N_max = hi;
  f.points = n;
  return f;
}

void write_sweep_results(const SweepConfig& c, const std::vector<PointOutcome>& outcomes,
                         const std::string& command_line) {
  require(outcomes.size() == c.points.size(), "write_sweep_results: ", outcomes.size(),
          " outcomes for ", c.points.size(), " points");
  const std::size_t P = c.points.size();
  std::vector<std::string> status(P), keys(P), studies(P), series(P), methods(P);
  std::map<std::string, Column> numbers;  // every numeric column, by name
  std::vector<std::string> order;         // numeric column names in the order they appear
  auto column = [&](const std::string& name) -> Column& {
    auto [it, fresh] = numbers.try_emplace(name);
    if (fresh) {
      order.push_back(name);
      it->second.numbers.assign(P, kMissingValue);
      it->second.texts.assign(P, "");
    }
    return it->second;
  };
  for (const char* name : kIntegerColumns) column(name);
  for (const std::string& name : number_columns()) column(name);
  std::vector<std::optional<fs::path>> files(P);
  Index done = 0, failed = 0;
  for (std::size_t i = 0; i < P; ++i) {
    const SweepPoint& p = c.points[i];
    keys[i] = p.key;
    studies[i] = p.study;
    series[i] = p.series;
    methods[i] = p.method;
    column("N").numbers[i] = static_cast<double>(p.size);
    for (const auto& [axis, value] : p.axes) column("grid." + axis).texts[i] = value;
    files[i] = completed_point_file(c, p);
    if (!files[i]) {
      const bool is_failed = outcomes[i].status == PointOutcome::Status::failed;
      status[i] = is_failed ? "failed: " + outcomes[i].message : "pending";
      failed += is_failed ? 1 : 0;
      continue;
    }
    ++done;
    status[i] = "done";
    const io::ResultsReader r(*files[i]);
    // The model's own figures (FullModel::analyse), listed by the point.
    std::vector<std::string> figures;
    if (r.has_attribute(layout::kSweepPoint, "model_figures")) {
      std::stringstream list(r.attribute_string(layout::kSweepPoint, "model_figures"));
      for (std::string name; std::getline(list, name, ',');) figures.push_back(name);
    }
    for (const std::string& name : r.attribute_names(layout::kSweepPoint)) {
      const bool known = std::find(std::begin(kIntegerColumns), std::end(kIntegerColumns), name) !=
                             std::end(kIntegerColumns) ||
                         std::find(number_columns().begin(), number_columns().end(), name) !=
                             number_columns().end();
      const bool figure = std::find(figures.begin(), figures.end(), name) != figures.end();
      if (known || figure || name.rfind("offline_", 0) == 0)
        column(name).numbers[i] = r.attribute_double(layout::kSweepPoint, name);
    }
    for (std::size_t k = 0; k < c.tolerances.size(); ++k) {
      const std::int64_t r_tol = order_for_tolerance(r, methods[i], c.tolerances[k]);
      column(concat("r_for_tol_", k)).numbers[i] =
          r_tol >= 0 ? static_cast<double>(r_tol) : kMissingValue;
    }
  }
  for (std::size_t k = 0; k < c.tolerances.size(); ++k) column(concat("r_for_tol_", k));

  io::ResultsWriter out(c.output);
  record_provenance(out, c.name, c.description, c.source, c.toml, command_line);
  out.set_attribute("/", "kind", std::string("sweep"));
  out.set_attribute("/", "points_total", static_cast<std::int64_t>(P));
  out.set_attribute("/", "points_done", static_cast<std::int64_t>(done));
  out.set_attribute("/", "points_failed", static_cast<std::int64_t>(failed));
  out.set_attribute("/", "complete", static_cast<std::int64_t>(done == static_cast<Index>(P)));
  out.set_attribute("/", "fit_min_N", c.fit_min_N);
  out.set_attribute("/", "tolerances", c.tolerances);
  out.set_attribute("/", "points_dir", c.points_dir.string());
  out.create_group(layout::kTable);
  out.write_strings(layout::child(layout::kTable, "key"), keys);
  out.write_strings(layout::child(layout::kTable, "study"), studies);
  out.write_strings(layout::child(layout::kTable, "series"), series);
  out.write_strings(layout::child(layout::kTable, "method"), methods);
  out.write_strings(layout::child(layout::kTable, "status"), status);
  for (const std::string& name : order) {
    Column& col = numbers[name];
    const std::string path = layout::child(layout::kTable, name);
    if (name.rfind("grid.", 0) == 0) {
      // A numeric axis is stored as numbers, any other as strings.
      bool all_numbers = true;
      for (std::size_t i = 0; i < P; ++i) {
        double v = kMissingValue;
        if (col.texts[i].empty()) continue;
        if (is_number(col.texts[i], v))
          col.numbers[i] = v;
        else
          all_numbers = false;
      }
      col.is_text = !all_numbers;
      if (col.is_text)
        out.write_strings(path, col.texts);
      else
        out.write_vector(path, Eigen::Map<const Vector>(col.numbers.data(), static_cast<Index>(P)));
    } else if (std::find(std::begin(kIntegerColumns), std::end(kIntegerColumns), name) !=
               std::end(kIntegerColumns)) {
      std::vector<std::int64_t> v(P, -1);  // -1: not done
      for (std::size_t i = 0; i < P; ++i)
        if (std::isfinite(col.numbers[i])) v[i] = std::llround(col.numbers[i]);
      out.write_integers(path, v);
    } else {
      out.write_vector(path, Eigen::Map<const Vector>(col.numbers.data(), static_cast<Index>(P)));
    }
  }
  for (std::size_t k = 0; k < c.tolerances.size(); ++k)
    out.set_attribute(concat(layout::child(layout::kTable, "r_for_tol_"), k), "tolerance",
                      c.tolerances[k]);

  // Power laws per series and cost column ("..._s", and the per-step costs).
  std::vector<std::string> fit_series, fit_column;
  std::vector<double> fit_exponent, fit_coefficient, fit_lo, fit_hi;
  std::vector<std::int64_t> fit_points;
  std::vector<std::string> series_order;
  for (const auto& s : series)
    if (std::find(series_order.begin(), series_order.end(), s) == series_order.end())
      series_order.push_back(s);
  // The cost columns in the order of a run: the model, the offline stages and their sum, the
  // full simulation, the steps. (point_s, the wall time of a whole point, is not one cost.)
  std::vector<std::string> costs = {"build_s"};
  for (const std::string& name : order)
    if (name.rfind("offline_", 0) == 0 && name != "offline_s") costs.push_back(name);
  costs.insert(costs.end(), {"offline_s", "full_simulation_s", "full_step_s", "reduced_step_s"});
  for (const std::string& s : series_order) {
    for (const std::string& name : costs) {
      std::vector<double> Ns, costs;
      for (std::size_t i = 0; i < P; ++i)
        if (series[i] == s && status[i] == "done") {
          Ns.push_back(numbers["N"].numbers[i]);
          costs.push_back(numbers[name].numbers[i]);
        }
      const auto fit = fit_power_law(Ns, costs, c.fit_min_N);
      if (!fit) continue;
      fit_series.push_back(s);
      fit_column.push_back(name);
      fit_exponent.push_back(fit->exponent);
      fit_coefficient.push_back(fit->coefficient);
      fit_lo.push_back(fit->N_min);
      fit_hi.push_back(fit->N_max);
      fit_points.push_back(static_cast<std::int64_t>(fit->points));
    }
  }
  out.create_group(layout::kFits);
  out.set_attribute(layout::kFits, "definition",
                    std::string("cost ~ coefficient * N^exponent, least squares in log-log over "
                                "the done points of a series with N >= fit_min_N"));
  out.write_strings(layout::child(layout::kFits, "series"), fit_series);
  out.write_strings(layout::child(layout::kFits, "column"), fit_column);
  const auto as_vector = [](const std::vector<double>& v) {
    return Vector(Eigen::Map<const Vector>(v.data(), static_cast<Index>(v.size())));
  };
  out.write_vector(layout::child(layout::kFits, "exponent"), as_vector(fit_exponent));
  out.write_vector(layout::child(layout::kFits, "coefficient"), as_vector(fit_coefficient));
  out.write_vector(layout::child(layout::kFits, "N_min"), as_vector(fit_lo));
  out.write_vector(layout::child(layout::kFits, "N_max"), as_vector(fit_hi));
  out.write_integers(layout::child(layout::kFits, "points"), fit_points);

  out.create_group(layout::kPoints);
  for (std::size_t i = 0; i < P; ++i)
    if (files[i]) out.copy_file_into(*files[i], layout::child(layout::kPoints, keys[i]));

  out.commit();

  // The same table as CSV beside the results file, for spreadsheets and pandas.
  const fs::path csv = fs::path(c.output).replace_extension(".csv");
  const fs::path csv_tmp = csv.string() + concat(".tmp-", getpid());
  {
    std::ofstream f(csv_tmp);
    if (!f) throw IoError(concat("cannot write '", csv_tmp.string(), "'"));
    f << "key,study,series,method,status";
    for (const std::string& name : order) f << "," << name;
    f << "\n";
    f << std::setprecision(10);
    for (std::size_t i = 0; i < P; ++i) {
      f << csv_field(keys[i]) << "," << csv_field(studies[i]) << "," << csv_field(series[i]) << ","
        << csv_field(methods[i]) << "," << csv_field(status[i]);
      for (const std::string& name : order) {
        const Column& col = numbers[name];
        if (col.is_text)
          f << "," << csv_field(col.texts[i]);
        else if (std::isfinite(col.numbers[i]))
          f << "," << col.numbers[i];
        else
          f << ",";
      }
      f << "\n";
    }
    if (!f) {
      std::error_code ignore;
      fs::remove(csv_tmp, ignore);
      throw IoError(concat("cannot write '", csv_tmp.string(), "'"));
    }
  }
  std::error_code error;
  fs::rename(csv_tmp, csv, error);
  if (error)
    throw IoError(concat("cannot rename '", csv_tmp.string(), "' to '", csv.string(),
                         "': ", error.message()));
}

}  // namespace mor::experiments
