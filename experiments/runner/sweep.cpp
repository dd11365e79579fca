// SPDX-License-Identifier: GPL-3.0-or-later
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

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/multibody_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {
namespace {

namespace fs = std::filesystem;
using detail::concat;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The leaves of a (nested) table as ("a.b.c", node): `set.model.N = 5` and
/// `set = { "model.N" = 5 }` both give ("model.N", 5).
void flatten(const toml::table& t, const std::string& prefix,
             std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [k, node] : t) {
    const std::string key =
        prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = node.as_table())
      flatten(*sub, key, out);
    else
      out.emplace_back(key, &node);
  }
}

/// A grid value as it appears in keys and series labels: strings bare, integral numbers without
/// a decimal point, other numbers in %g.
std::string label_text(const toml::node& n) {
  if (auto s = n.value_exact<std::string>()) return *s;
  if (auto i = n.value_exact<std::int64_t>()) return std::to_string(*i);
  if (auto d = n.value_exact<double>()) {
    if (std::isfinite(*d) && *d == std::round(*d) && std::abs(*d) < 1e15)
      return std::to_string(static_cast<long long>(*d));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *d);
    return buf;
  }
  return toml_text(n);
}

/// Characters other than [A-Za-z0-9._+-] become '-', so that a key is a file and group name.
std::string file_safe(const std::string& s) {
  std::string out = s;
  for (char& ch : out)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '+' ||
          ch == '-'))
      ch = '-';
  return out;
}

std::string last_component(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

struct Axis {
  std::string key;                  ///< "model.N"
  std::vector<std::string> values;  ///< TOML text, for the override
  std::vector<std::string> labels;  ///< for keys and series
};

struct Study {
  std::string name;
  fs::path experiment;
  std::vector<std::string> set;  ///< "table.key=value"
  std::vector<Axis> axes;        ///< model.N first (if swept), then the grid's axes by key
  int line = 0;
};

double physical_memory_mib() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / 1048576.0
                               : 0.0;
}

std::vector<Study> read_studies(const toml::table& root, const std::string& source,
                                const fs::path& base_dir, const std::vector<std::string>& sweep_N) {
  const toml::node* node = root.get("study");
  require(node != nullptr, source, ": no [[study]] tables: a sweep needs at least one study");
  const toml::array* array = node->as_array();
  require(array != nullptr && array->is_array_of_tables(), source,
          ": 'study' must be an array of tables ([[study]])");
  require(!array->empty(), source, ": no [[study]] tables: a sweep needs at least one study");
  std::vector<Study> studies;
  std::set<std::string> names;
  for (std::size_t k = 0; k < array->size(); ++k) {
    const toml::table& t = *array->get(k)->as_table();
    const std::string where = concat(source, ":", t.source().begin.line);
    TableReader r(&t, "study", source);
    Study s;
    s.line = static_cast<int>(t.source().begin.line);
    s.name = r.text("name", "");
    require(!s.name.empty(), where, ": study.name is missing");
    require(file_safe(s.name) == s.name, where, ": study.name '", s.name,
            "' may hold only letters, digits and . _ + -");
    require(names.insert(s.name).second, where, ": two studies are named '", s.name, "'");
    const std::string experiment = r.text("experiment", "");
    require(!experiment.empty(), where, ": study '", s.name,
            "' needs experiment = \"<experiment file>\" (relative to the sweep file)");
    s.experiment = resolve(experiment, base_dir);
    std::vector<std::pair<std::string, const toml::node*>> leaves;
    if (const toml::table* set = r.table("set")) flatten(*set, "", leaves);
    for (const auto& [key, value] : leaves) {
      require(key.find('.') != std::string::npos, where, ": study '", s.name, "': set key '", key,
              "' must name its table, e.g. set.model.k_n or set = { \"model.k_n\" = 2.0 }");
      s.set.push_back(key + "=" + toml_text(*value));
    }
    std::vector<std::pair<std::string, const toml::node*>> grid;
    if (const toml::table* g = r.table("grid")) flatten(*g, "", grid);
    r.finish();
    const bool own_N = std::any_of(grid.begin(), grid.end(),
                                   [](const auto& axis) { return axis.first == "model.N"; });
    if (!own_N && !sweep_N.empty()) s.axes.push_back({"model.N", sweep_N, sweep_N});
    std::stable_sort(grid.begin(), grid.end(), [](const auto& a, const auto& b) {
      return (a.first == "model.N") > (b.first == "model.N");
    });
    for (const auto& [key, value] : grid) {
      require(key.find('.') != std::string::npos, where, ": study '", s.name, "': grid key '", key,
              "' must name its table, e.g. grid.reduction.order = [10, 20]");
      const toml::array* values = value->as_array();
      require(values != nullptr, where, ": study '", s.name, "': grid.", key,
              " must be an array of values, got ", toml_text(*value));
      require(!values->empty(), where, ": study '", s.name, "': grid.", key,
              " is empty: an axis needs at least one value");
      Axis axis{key, {}, {}};
      for (const auto& v : *values) {
        axis.values.push_back(toml_text(v));
        axis.labels.push_back(label_text(v));
      }
      s.axes.push_back(std::move(axis));
    }
    studies.push_back(std::move(s));
  }
  return studies;
}

}  // namespace

SweepConfig parse_sweep(const std::string& text, const std::string& source,
                        const fs::path& base_dir, const std::vector<std::string>& overrides) {
  // "sweep.*" overrides change the sweep file; the rest apply to every point.
  std::vector<std::string> sweep_overrides, point_overrides;
  for (const auto& o : overrides)
    (o.rfind("sweep.", 0) == 0 ? sweep_overrides : point_overrides).push_back(o);
  const toml::table root = parse_root(text, source, sweep_overrides, {"sweep", "study"}, {"study"});
  SweepConfig c;
  c.source = source;
  const toml::table* sweep = root["sweep"].as_table();
  require(sweep != nullptr, source, ": no [sweep] table: not a sweep file");
  TableReader r(sweep, "sweep", source);
  c.name = r.text("name", c.name);
  require(!c.name.empty() && file_safe(c.name) == c.name, source, ": sweep.name '", c.name,
          "' must be non-empty and hold only letters, digits and . _ + -");
  c.description = r.text("description", "");
  c.output = r.text("output", "");
  if (c.output.empty()) c.output = fs::path("results") / (c.name + ".h5");
  std::vector<std::string> N_values;
  const auto read_N = [&](const char* key) {
    const std::vector<double> Ns = r.reals(key, {});
    require(!Ns.empty() || !sweep->contains(key), r.where(key), ": sweep.", key,
            " is empty: give at least one chain size");
    for (const double N : Ns) {
      require(std::isfinite(N) && N >= 1 && N == std::round(N) && N < 1e12, r.where(key),
              ": sweep.", key, " holds ", N, ", which is not a positive integer chain size");
      N_values.push_back(std::to_string(static_cast<long long>(N)));
    }
  };
  read_N("N");
  // extended_N: the larger sizes that only `--extended` (sweep.extended = true) adds.
  const std::size_t regular_N = N_values.size();
  read_N("extended_N");
  if (!r.boolean("extended", false)) N_values.resize(regular_N);
  c.tolerances = r.reals("tolerances", c.tolerances);
  for (const double t : c.tolerances)
    require(t > 0 && t < 1, r.where("tolerances"), ": sweep.tolerances holds ", t,
            ", which is not a relative tolerance in (0, 1)");
  c.fit_min_N = r.real("fit_min_N", c.fit_min_N);
  c.memory_budget_mib = r.real("memory_budget_mib", c.memory_budget_mib);
  require(c.memory_budget_mib >= 0, r.where("memory_budget_mib"),
          ": sweep.memory_budget_mib must be >= 0 (0: automatic), got ", c.memory_budget_mib);
  c.plots = r.boolean("plots", c.plots);
  r.finish();
  c.output = resolve(c.output, fs::path());
  c.points_dir = fs::path(c.output).replace_extension("").string() + ".points";

  const std::vector<Study> studies = read_studies(root, source, base_dir, N_values);
  std::map<std::string, std::string> by_configuration;  // configuration -> key
  std::set<std::string> keys;
  for (const Study& s : studies) {
    require(!is_multibody_experiment(s.experiment, {}), source, ":", s.line, ": study '", s.name,
            "': ", s.experiment.string(),
            " is a multibody experiment; sweeps run the chain experiments");
    // Combinations of the axes other than model.N (outer), then N (inner): the rows of one
    // series are adjacent and ordered by N.
    std::vector<const Axis*> outer;
    const Axis* N_axis = nullptr;
    for (const Axis& a : s.axes) {
      if (a.key == "model.N")
        N_axis = &a;
      else
        outer.push_back(&a);
    }
    std::vector<std::size_t> at(outer.size(), 0);
    for (bool more = true; more;) {
      const std::size_t n_count = N_axis ? N_axis->values.size() : 1;
      for (std::size_t iN = 0; iN < n_count; ++iN) {
        SweepPoint p;
        p.index = static_cast<Index>(c.points.size());
        p.study = s.name;
        p.series = s.name;
        std::vector<std::string> point_set = s.set;
        std::string key_tail;
        if (N_axis) {
          p.axes.emplace_back("model.N", N_axis->labels[iN]);
          point_set.push_back("model.N=" + N_axis->values[iN]);
        }
        for (std::size_t k = 0; k < outer.size(); ++k) {
          const Axis& a = *outer[k];
          p.axes.emplace_back(a.key, a.labels[at[k]]);
          point_set.push_back(a.key + "=" + a.values[at[k]]);
          p.series += concat(", ", a.key, "=", a.labels[at[k]]);
          key_tail += "_" + last_component(a.key) + a.labels[at[k]];
        }
        point_set.insert(point_set.end(), point_overrides.begin(), point_overrides.end());
        std::string assignments;
        for (const auto& [k, v] : p.axes)
          assignments += concat(assignments.empty() ? "" : ", ", k, "=", v);
        const std::string what = concat(source, ":", s.line, ": study '", s.name, "', point ",
                                        assignments.empty() ? "(no grid)" : assignments);
        point_set.push_back("experiment.name=\"sweep_point\"");
        point_set.push_back("experiment.output=\"point.h5\"");
        try {
          p.config = load_experiment(s.experiment, point_set);
        } catch (const InvalidArgument& e) {
          throw InvalidArgument(concat(what, ": ", e.what()));
        }
        p.key = file_safe(concat(s.name, "_N", p.config.model_size(), key_tail));
        p.configuration = p.config.toml;
        const auto [it, fresh] = by_configuration.emplace(p.configuration, p.key);
        require(fresh, what, ": the same experiment as point '", it->second,
                "' (a value repeated in an axis, or studies that overlap)");
        require(keys.insert(p.key).second, what, ": two points would share the key '", p.key,
                "'; give the axes values that differ after replacing characters other than "
                "letters, digits and . _ + -");
        p.config.name = c.name + "/" + p.key;
        p.config.output = c.points_dir / (p.key + ".h5");
        p.config.plots = false;
        p.cost_seconds = estimate_run_seconds(p.config);
        p.memory_mib = estimate_run_mib(p.config);
        c.points.push_back(std::move(p));
      }
      // Next combination of the outer axes (odometer, last axis fastest).
      more = false;
      for (std::size_t k = outer.size(); k-- > 0;) {
        if (++at[k] < outer[k]->values.size()) {
          more = true;
          break;
        }
        at[k] = 0;
      }
    }
  }
  require(!c.points.empty(), source, ": the grid is empty");
  std::ostringstream effective;
  effective << root;
  c.toml = effective.str();
  if (!point_overrides.empty()) {
    c.toml += "\n# applied to every point:\n";
    for (const auto& o : point_overrides) c.toml += "# " + o + "\n";
  }
  return c;
}

SweepConfig load_sweep(const fs::path& file, const std::vector<std::string>& overrides) {
  return parse_sweep(read_text_file(file), file.string(), file.parent_path(), overrides);
}

double point_memory_budget_mib(const SweepConfig& c, int concurrent_points) {
  if (c.memory_budget_mib > 0) return c.memory_budget_mib;
  return 0.9 * physical_memory_mib() / std::max(1, concurrent_points);
}

void check_memory_budget(const SweepConfig& c, int concurrent_points) {
  const double budget = point_memory_budget_mib(c, concurrent_points);
  if (budget <= 0) return;  // physical memory unknown
  for (const SweepPoint& p : c.points) {
    if (p.memory_mib <= budget) continue;
    throw InvalidArgument(concat(
        c.source, ": point '", p.key, "' needs about ", std::llround(p.memory_mib),
        " MiB (estimate for N = ", p.config.model_size(), ", method ",
        std::string(p.config.reduction->name()), "), above the memory budget of ",
        std::llround(budget), " MiB per point",
        c.memory_budget_mib > 0 ? std::string(" (sweep.memory_budget_mib)")
                                : concat(" (90% of ", std::llround(physical_memory_mib()),
                                         " MiB over ", concurrent_points, " points at once)"),
        "; run fewer points at once (--jobs), raise sweep.memory_budget_mib, or drop the point"));
  }
}

std::optional<fs::path> completed_point_file(const SweepConfig& c, const SweepPoint& p) {
  const fs::path file = c.points_dir / (p.key + ".h5");
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return std::nullopt;
  try {
    const io::ResultsReader r(file);
    if (!r.exists(layout::kSweepPoint)) return std::nullopt;
    if (r.attribute_string(layout::kSweepPoint, "configuration") != p.configuration)
      return std::nullopt;
    return file;
  } catch (const IoError&) {
    return std::nullopt;  // unreadable or foreign: the point runs again and replaces it
  }
}

RunSummary run_sweep_point(const SweepConfig& c, const SweepPoint& p, const RunOptions& options) {
  RunOptions o = options;
  o.before_commit = [&](io::ResultsWriter& out, const RunSummary& s) {
    const std::string g = layout::kSweepPoint;
    const bool reduced = s.reduced_order > 0;
    auto or_nan = [](double v) { return v >= 0 ? v : kNaN; };
    const double steps = static_cast<double>(std::max<Index>(1, s.stats.steps));
    const double stepping = s.stats.seconds - s.write_seconds;
    out.create_group(g);
    out.set_attribute(g, "key", p.key);
    out.set_attribute(g, "study", p.study);
    out.set_attribute(g, "series", p.series);
    out.set_attribute(g, "sweep", c.name);
    out.set_attribute(g, "configuration", p.configuration);
    out.set_attribute(g, "method", std::string(p.config.reduction->name()));
    out.set_attribute(g, "N", static_cast<std::int64_t>(p.config.model_size()));
    out.set_attribute(g, "r", static_cast<std::int64_t>(s.reduced_order));
    out.set_attribute(g, "m", static_cast<std::int64_t>(s.deim_samples));
    out.set_attribute(g, "output_error", reduced ? s.output_error_relative : kNaN);
    out.set_attribute(g, "state_error", or_nan(s.state_error_relative));
    out.set_attribute(g, "h2_error", or_nan(s.h2_error_relative));
    out.set_attribute(g, "hinf_error", or_nan(s.hinf_error));
    out.set_attribute(g, "build_s", s.build_seconds);
    out.set_attribute(g, "offline_s", reduced ? s.reduction_seconds : kNaN);
    for (const auto& [stage, seconds] : s.offline_stages)
      out.set_attribute(g, "offline_" + stage, seconds);
    out.set_attribute(g, "full_simulation_s", stepping);
    out.set_attribute(g, "full_step_s", stepping / steps);
    out.set_attribute(g, "reduced_step_s", reduced ? s.reduced_stats.seconds / steps : kNaN);
    out.set_attribute(g, "speedup", reduced && s.speedup_per_step > 0 ? s.speedup_per_step : kNaN);
    out.set_attribute(g, "point_s", s.total_seconds);
    out.set_attribute(g, "peak_rss_mib", s.peak_rss_mb);
    for (const auto& [axis, value] : p.axes) out.set_attribute(g, "grid." + axis, value);
  };
  return run_experiment(p.config, o);
}

// ---------------------------------------------------------------------------------------------
// The merged file

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
const char* const kNumberColumns[] = {
    "output_error",      "state_error", "h2_error",       "hinf_error", "build_s", "offline_s",
    "full_simulation_s", "full_step_s", "reduced_step_s", "speedup",    "point_s", "peak_rss_mib"};

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
      it->second.numbers.assign(P, kNaN);
      it->second.texts.assign(P, "");
    }
    return it->second;
  };
  for (const char* name : kIntegerColumns) column(name);
  for (const char* name : kNumberColumns) column(name);
  std::vector<std::optional<fs::path>> files(P);
  Index done = 0, failed = 0;
  for (std::size_t i = 0; i < P; ++i) {
    const SweepPoint& p = c.points[i];
    keys[i] = p.key;
    studies[i] = p.study;
    series[i] = p.series;
    methods[i] = std::string(p.config.reduction->name());
    column("N").numbers[i] = static_cast<double>(p.config.model_size());
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
    for (const std::string& name : r.attribute_names(layout::kSweepPoint)) {
      const bool known = std::find(std::begin(kIntegerColumns), std::end(kIntegerColumns), name) !=
                             std::end(kIntegerColumns) ||
                         std::find(std::begin(kNumberColumns), std::end(kNumberColumns), name) !=
                             std::end(kNumberColumns);
      if (known || name.rfind("offline_", 0) == 0)
        column(name).numbers[i] = r.attribute_double(layout::kSweepPoint, name);
    }
    for (std::size_t k = 0; k < c.tolerances.size(); ++k) {
      const std::int64_t r_tol = order_for_tolerance(r, methods[i], c.tolerances[k]);
      column(concat("r_for_tol_", k)).numbers[i] = r_tol >= 0 ? static_cast<double>(r_tol) : kNaN;
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
        double v = kNaN;
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

// ---------------------------------------------------------------------------------------------
// mor info

bool is_sweep_results(const io::ResultsReader& r) {
  const auto names = r.attribute_names("/");
  return std::find(names.begin(), names.end(), "kind") != names.end() &&
         r.attribute_string("/", "kind") == "sweep";
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
  const auto N = values("N"), rr = values("r"), m = values("m"), err = values("output_error"),
             h2 = values("h2_error"), offline = values("offline_s"), full = values("full_step_s"),
             red = values("reduced_step_s"), speedup = values("speedup"),
             memory = values("peak_rss_mib"), wall = values("point_s");
  struct Field {
    const char* title;
    int width;
  };
  const Field fields[] = {{"series", 0},      {"N", 8},        {"r", 4},        {"m", 4},
                          {"output err", 10}, {"H2 err", 9},   {"offline", 10}, {"full step", 10},
                          {"red. step", 10},  {"speed-up", 9}, {"peak MiB", 9}, {"point", 9}};
  std::size_t series_width = 6;
  for (const auto& s : series) series_width = std::max(series_width, s.size());
  os << "\n  " << std::left << std::setw(static_cast<int>(series_width)) << "series" << std::right;
  for (std::size_t k = 1; k < std::size(fields); ++k)
    os << " " << std::setw(fields[k].width) << fields[k].title;
  os << "  status\n";
  for (std::size_t i = 0; i < keys.size(); ++i) {
    os << "  " << std::left << std::setw(static_cast<int>(series_width)) << series[i] << std::right;
    const std::string cells[] = {number_text(N[i], "%.0f"),
                                 rr[i] > 0 ? number_text(rr[i], "%.0f") : "-",
                                 m[i] > 0 ? number_text(m[i], "%.0f") : "-",
                                 number_text(err[i], "%.2e"),
                                 number_text(h2[i], "%.2e"),
                                 seconds_text(offline[i]),
                                 seconds_text(full[i]),
                                 seconds_text(red[i]),
                                 number_text(speedup[i], "%.0fx"),
                                 number_text(memory[i], "%.0f"),
                                 seconds_text(wall[i])};
    for (std::size_t k = 0; k < std::size(cells); ++k)
      os << " " << std::setw(fields[k + 1].width) << cells[k];
    os << "  " << status[i] << "\n";
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
