// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/sweep.hpp"

#include "experiments/runner/estimates.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parametric_store.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "src/core/errors.hpp"
#include "src/core/memory.hpp"
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
  std::string text;  ///< the experiment file, read once: each point parses it with its overrides
  toml::table file;  ///< the same parsed, for what the study needs to know of its model kind
};

/// True if the model kind the file names (the chain without model.type) declares table.key
/// (e.g. model.N, the axis sweep.N feeds); `unknown` for a kind that is not registered (the
/// point's reader names it).
bool kind_declares(const toml::table& file, std::string_view table, std::string_view key,
                   bool unknown) {
  const toml::node* type = file["model"]["type"].node();
  const std::string name = type && type->value_exact<std::string>()
                               ? *type->value_exact<std::string>()
                               : std::string("mass_spring_chain");
  const ModelKindInfo* kind = find_model_kind(name);
  if (kind == nullptr) return unknown;
  std::vector<KeyDoc> rows;
  if (table == "model")
    kind->keys(rows);
  else if (kind->table_keys != nullptr)
    kind->table_keys(table, rows);
  return std::any_of(rows.begin(), rows.end(),
                     [&](const KeyDoc& k) { return k.table == table && k.name == key; });
}

/// [sweep]: the sweep's name, files, sizes and what the merge computes.
struct SweepTable {
  std::string name = SweepConfig{}.name;
  std::string description;
  std::string output;
  std::vector<double> N;
  std::vector<double> extended_N;
  bool extended = false;
  std::vector<double> tolerances = SweepConfig{}.tolerances;
  double fit_min_N = SweepConfig{}.fit_min_N;
  double memory_budget_mib = SweepConfig{}.memory_budget_mib;
  bool plots = SweepConfig{}.plots;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"name", "", "the sweep's name (letters, digits, . _ + -); results/<name>.h5 by default"},
      name);
    v(Key{"description", "", "one line on what the sweep is, stored in the results"}, description);
    v(Key{"output", "",
          "the merged results file, relative to the working directory; \"\": results/<name>.h5 "
          "(the points go to <output without .h5>.points/)"},
      output);
    v(Key{"N", "", "chain sizes every study runs at (unless its grid has model.N)"}, N);
    v(Key{"extended_N", "", "larger sizes added by --extended (sweep.extended = true)"},
      extended_N);
    v(Key{"extended", "", "add extended_N to N (what --extended sets)"}, extended);
    v(Key{"tolerances", "", "relative tolerances whose r each point's spectrum needs (columns)"},
      tolerances);
    v(Key{"fit_min_N", "", "power laws of the costs are fitted over the points with N >= this"},
      fit_min_N);
    v(Key{"memory_budget_mib", "MiB",
          "per point; 0: 90% of the physical memory over the points run at once"},
      memory_budget_mib);
    v(Key{"plots", "", "make the PNG figures after the sweep"}, plots);
  }
};

/// [[study]]: one experiment file crossed with its grid.
struct StudyTable {
  std::string name;
  std::string experiment;
  FreeTable set, grid;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"name", "", "the study's name (letters, digits, . _ + -), unique in the sweep"}, name);
    v(Key{"experiment", "", "its experiment file, relative to the sweep file (required)"},
      experiment);
    v(Key{"set", "",
          "overrides of the experiment's keys for every point, e.g. set.model.k_n = 0 or "
          "set = { \"model.k_n\" = 0 }"},
      set);
    v(Key{"grid", "",
          "axes crossed into points, each an array, e.g. grid.reduction.order = [10, 20]; "
          "grid.model.N replaces sweep.N; grid.parameters.<name> = [values] sweeps a parameter "
          "of the experiment's [parameters] with its parametric model built once "
          "(docs/sweeps.md, Parametric studies)"},
      grid);
  }
};

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
    StudyTable st;
    KeyReader reader(r, "study", base_dir);
    st.visit_keys(reader);
    r.finish();
    Study s;
    s.line = static_cast<int>(t.source().begin.line);
    s.name = st.name;
    require(!s.name.empty(), where, ": study.name is missing");
    require(file_safe(s.name) == s.name, where, ": study.name '", s.name,
            "' may hold only letters, digits and . _ + -");
    require(names.insert(s.name).second, where, ": two studies are named '", s.name, "'");
    const std::string& experiment = st.experiment;
    require(!experiment.empty(), where, ": study '", s.name,
            "' needs experiment = \"<experiment file>\" (relative to the sweep file)");
    s.experiment = resolve(experiment, base_dir);
    std::vector<std::pair<std::string, const toml::node*>> leaves;
    if (st.set.table != nullptr) flatten(*st.set.table, "", leaves);
    for (const auto& [key, value] : leaves) {
      require(key.find('.') != std::string::npos, where, ": study '", s.name, "': set key '", key,
              "' must name its table, e.g. set.model.k_n or set = { \"model.k_n\" = 2.0 }");
      s.set.push_back(key + "=" + toml_text(*value));
    }
    std::vector<std::pair<std::string, const toml::node*>> grid;
    if (st.grid.table != nullptr) flatten(*st.grid.table, "", grid);
    const bool own_N = std::any_of(grid.begin(), grid.end(),
                                   [](const auto& axis) { return axis.first == "model.N"; });
    s.text = read_text_file(s.experiment);
    s.file = parse_toml(s.text, s.experiment.string());
    // sweep.N is the chain's size axis; a kind without model.N has its own fixed size.
    if (!own_N && !sweep_N.empty() && kind_declares(s.file, "model", "N", true))
      s.axes.push_back({"model.N", sweep_N, sweep_N});
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

/// The point of a parametric study: ec's run_point, the grid's grid.parameters.<name> values
/// (the others at the domain's center), each checked inside its range, and a line naming the
/// point appended to ec.toml (two points differ in their configurations). Its reduced model is
/// the study's stored parametric model evaluated there (parametric_store.hpp).
/// @throws InvalidArgument naming the parameter, the value and the range.
void set_parametric_point(ExperimentConfig& ec,
                          const std::vector<std::pair<std::string, std::string>>& values) {
  const ParameterDomain& d = ec.parameters;
  require(!d.empty(), "grid.parameters.", values.front().first,
          " needs an experiment with [parameters] (the domain the values lie in)");
  require(ec.reduction->parametric_for(*ec.model), "grid.parameters.", values.front().first,
          ": a parametric study evaluates a stored linear method's parametric model (bt, irka, "
          "sobt, pod of an LTI model); reduction.method = \"",
          ec.reduction->name(), "\" of model.type = \"", ec.model->kind(),
          "\" is not stored and reused yet");
  Vector mu = d.center();
  for (const auto& [name, text] : values) {
    const Index j = d.index_of(name);
    std::string known;
    for (const std::string& n : d.names()) known += (known.empty() ? "" : ", ") + n;
    require(j >= 0, "grid.parameters.", name, ": '", name,
            "' is not a parameter of the experiment's [parameters] (", known, ")");
    std::optional<double> value;
    try {
      value = toml::parse("v = " + text)["v"].value<double>();
    } catch (const toml::parse_error&) {
    }
    require(value.has_value() && std::isfinite(*value), "grid.parameters.", name, " holds ", text,
            ", which is not a number");
    const Parameter& q = d.parameters()[static_cast<std::size_t>(j)];
    require(*value >= q.min && *value <= q.max, "grid.parameters.", name, " = ", text,
            " is outside the parameter's range [", q.min, ", ", q.max, "] ([parameters] ", name,
            ")");
    mu[j] = *value;
  }
  ec.run_point = mu;
  ec.toml += concat("\n# a parametric sweep point: ", d.describe(mu), "\n");
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
  SweepTable t;
  {
    KeyReader reader(r, "sweep", base_dir);
    t.visit_keys(reader);
  }
  r.finish();
  c.name = t.name;
  require(!c.name.empty() && file_safe(c.name) == c.name, source, ": sweep.name '", c.name,
          "' must be non-empty and hold only letters, digits and . _ + -");
  c.description = t.description;
  c.output = t.output;
  if (c.output.empty()) c.output = fs::path("results") / (c.name + ".h5");
  std::vector<std::string> N_values;
  const auto read_N = [&](const char* key) {
    const std::vector<double>& Ns = std::string(key) == "N" ? t.N : t.extended_N;
    require(!Ns.empty() || !sweep->contains(key), r.where(key), ": sweep.", key,
            " is empty: give at least one chain size");
    for (const double N : Ns) {
      require(std::isfinite(N) && N >= 1 && N == std::round(N), r.where(key), ": sweep.", key,
              " holds ", N, ", which is not a positive integer chain size");
      // The chain's own limit (its sparse matrices index with int), named up front.
      constexpr double kLargestN = (std::numeric_limits<int>::max() - 2) / 3;
      require(N <= kLargestN, r.where(key), ": sweep.", key, " holds ", N,
              ", above the largest chain size ", kLargestN);
      N_values.push_back(std::to_string(static_cast<long long>(N)));
    }
  };
  read_N("N");
  // extended_N: the larger sizes that only `--extended` (sweep.extended = true) adds.
  const std::size_t regular_N = N_values.size();
  read_N("extended_N");
  if (!t.extended) N_values.resize(regular_N);
  c.tolerances = t.tolerances;
  for (const double t : c.tolerances)
    require(t > 0 && t < 1, r.where("tolerances"), ": sweep.tolerances holds ", t,
            ", which is not a relative tolerance in (0, 1)");
  c.fit_min_N = t.fit_min_N;
  c.memory_budget_mib = t.memory_budget_mib;
  require(c.memory_budget_mib >= 0, r.where("memory_budget_mib"),
          ": sweep.memory_budget_mib must be >= 0 (0: automatic), got ", c.memory_budget_mib);
  c.plots = t.plots;
  c.output = resolve(c.output, fs::path());
  c.points_dir = fs::path(c.output).replace_extension("").string() + ".points";

  const std::vector<Study> studies = read_studies(root, source, base_dir, N_values);
  std::map<std::string, std::string> by_configuration;  // configuration -> key
  std::set<std::string> keys;
  for (const Study& s : studies) {
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
        // grid.parameters.<name>: the point of a parametric study (set_parametric_point).
        std::vector<std::pair<std::string, std::string>> parameter_values;
        std::string key_tail;
        if (N_axis) {
          p.axes.emplace_back("model.N", N_axis->labels[iN]);
          point_set.push_back("model.N=" + N_axis->values[iN]);
        }
        for (std::size_t k = 0; k < outer.size(); ++k) {
          const Axis& a = *outer[k];
          p.axes.emplace_back(a.key, a.labels[at[k]]);
          p.series += concat(", ", a.key, "=", a.labels[at[k]]);
          if (a.key.rfind("parameters.", 0) == 0)
            parameter_values.emplace_back(a.key.substr(11), a.values[at[k]]);
          else
            point_set.push_back(a.key + "=" + a.values[at[k]]);
          // Appended piecewise: "_" + std::string trips GCC 12's false -Wrestrict (PR 105329).
          key_tail += '_';
          key_tail += last_component(a.key);
          key_tail += a.labels[at[k]];
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
          if (kind_declares(s.file, "output", "animation", false))
            point_set.push_back("output.animation=\"none\"");
          ExperimentConfig ec = parse_experiment(s.text, s.experiment.string(),
                                                 s.experiment.parent_path(), point_set);
          if (!parameter_values.empty()) set_parametric_point(ec, parameter_values);
          p.size = ec.model_size();
          p.method = std::string(ec.reduction->name());
          p.configuration = ec.toml;
          ec.name = c.name + "/";  // the key is appended below
          ec.plots = false;
          p.config = std::move(ec);
        } catch (const InvalidArgument& e) {
          throw InvalidArgument(concat(what, ": ", e.what()));
        }
        p.key = file_safe(concat(s.name, "_N", p.size, key_tail));
        const auto [it, fresh] = by_configuration.emplace(p.configuration, p.key);
        require(fresh, what, ": the same experiment as point '", it->second,
                "' (a value repeated in an axis, or studies that overlap)");
        require(keys.insert(p.key).second, what, ": two points would share the key '", p.key,
                "'; give the axes values that differ after replacing characters other than "
                "letters, digits and . _ + -");
        p.config.name += p.key;
        p.config.output = c.points_dir / (p.key + ".h5");
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

std::vector<KeyDoc> sweep_key_reference() {
  std::vector<KeyDoc> rows;
  {
    SweepTable t;
    KeyDocs docs(rows, "sweep");
    t.visit_keys(docs);
  }
  {
    StudyTable t;
    KeyDocs docs(rows, "study");
    t.visit_keys(docs);
  }
  return rows;
}

SweepConfig load_sweep(const fs::path& file, const std::vector<std::string>& overrides) {
  return parse_sweep(read_text_file(file), file.string(), file.parent_path(), overrides);
}

double point_memory_budget_mib(const SweepConfig& c, int concurrent_points) {
  if (c.memory_budget_mib > 0) return c.memory_budget_mib;
  // The smallest hard limit: 90% of the memory, RLIMIT_AS or the cgroup's (src/core/memory.hpp).
  return memory_limits().hard_mib / std::max(1, concurrent_points);
}

void check_memory_budget(const SweepConfig& c, int concurrent_points) {
  const double budget = point_memory_budget_mib(c, concurrent_points);
  if (budget <= 0) return;  // physical memory unknown
  for (const SweepPoint& p : c.points) {
    if (p.memory_mib <= budget) continue;
    throw InvalidArgument(concat(
        c.source, ": point '", p.key, "' needs about ", std::llround(p.memory_mib),
        " MiB (estimate for N = ", p.size, ", method ", p.method, "), above the memory budget of ",
        std::llround(budget), " MiB per point",
        c.memory_budget_mib > 0 ? std::string(" (sweep.memory_budget_mib)")
                                : concat(" (", memory_limits().hard_source, ", ",
                                         std::llround(memory_limits().hard_mib), " MiB, over ",
                                         concurrent_points, " points at once)"),
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

std::string set_aside_unreadable_point_file(const SweepConfig& c, const SweepPoint& p) {
  const fs::path file = c.points_dir / (p.key + ".h5");
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return "";
  io::require_not_held_for_writing(file, "results file");
  try {
    io::require_replaceable_by_results(file);  // what would stop the point's writer
    return "";
  } catch (const IoError&) {
  }
  const auto bytes = fs::file_size(file, error);
  fs::path aside = file.string() + ".unreadable";
  for (int k = 2; fs::exists(aside, error) && k < 1000; ++k)
    aside = file.string() + ".unreadable-" + std::to_string(k);
  fs::rename(file, aside);
  return detail::concat("point file '", file.string(), "' (", error ? 0 : bytes,
                        " bytes) is not a results file: kept aside as '", aside.string(),
                        "', and the point runs again");
}

void run_sweep_point(const SweepConfig& c, const SweepPoint& p, const RunOptions& options) {
  // Normally done by the sweep's first rank before it starts any point; here for points whose
  // folder is on another host (mpirun without a shared folder). The notice goes to the log.
  if (const std::string notice = set_aside_unreadable_point_file(c, p); !notice.empty())
    std::fprintf(stderr, "mor: warning: %s\n", notice.c_str());
  // The columns every point has; NaN where they do not apply.
  auto begin_record = [&](io::ResultsWriter& out) {
    const std::string g = layout::kSweepPoint;
    out.create_group(g);
    out.set_attribute(g, "key", p.key);
    out.set_attribute(g, "study", p.study);
    out.set_attribute(g, "series", p.series);
    out.set_attribute(g, "sweep", c.name);
    out.set_attribute(g, "configuration", p.configuration);
    out.set_attribute(g, "method", p.method);
    out.set_attribute(g, "N", static_cast<std::int64_t>(p.size));
    for (const auto& [axis, value] : p.axes) out.set_attribute(g, "grid." + axis, value);
  };
  auto or_nan = [](double v) { return v >= 0 ? v : kNaN; };
  // A parametric study's point: the stored model (built by the sweep before any point ran, or
  // here if this rank's folder has none: mpirun without a shared folder) evaluated at the point.
  ExperimentConfig config = p.config;
  if (config.run_point.size() > 0) {
    bool built = false;
    config.stored_parametric = stored_parametric_model(config, c.points_dir, p.study, true, &built);
    std::fprintf(stderr, "mor: %s the parametric model %s\n",
                 built ? "built (none stored)" : "reusing", config.stored_parametric->file.c_str());
  }
  RunOptions o = options;
  o.before_commit = [&](io::ResultsWriter& out, const RunSummary& s) {
    const std::string g = layout::kSweepPoint;
    const bool reduced = s.reduced_order > 0;
    const double steps = static_cast<double>(std::max<Index>(1, s.stats.steps));
    const double stepping = s.stats.seconds - s.write_seconds;
    begin_record(out);
    out.set_attribute(g, "r", static_cast<std::int64_t>(s.reduced_order));
    out.set_attribute(g, "m", static_cast<std::int64_t>(s.deim_samples));
    // Every measure's figures (NaN where the run has none): the merge makes a column of each.
    for (const FigureInfo& f : measure_figures())
      out.set_attribute(g, std::string(f.name), or_nan(figure_or(s.figures, f.name, -1.0)));
    out.set_attribute(g, "build_s", s.build_seconds);
    out.set_attribute(g, "offline_s", reduced ? s.reduction_seconds : kNaN);
    for (const auto& [stage, seconds] : s.offline_stages)
      out.set_attribute(g, "offline_" + stage, seconds);
    out.set_attribute(g, "full_simulation_s", stepping);
    out.set_attribute(g, "full_step_s", stepping / steps);
    out.set_attribute(g, "reduced_step_s", reduced ? s.reduced_stats.seconds / steps : kNaN);
    out.set_attribute(g, "point_s", s.total_seconds);
    // The model's own figures (e.g. the multibody benchmarks' cvode_steps, exact_error), named
    // in model_figures so that the merge makes a column of each.
    std::string names;
    for (const auto& [name, value] : s.model_figures) {
      out.set_attribute(g, name, value);
      names += (names.empty() ? "" : ",") + name;
    }
    out.set_attribute(g, "model_figures", names);
    if (config.stored_parametric)
      out.set_attribute(g, "parametric_model", config.stored_parametric->file.filename().string());
  };
  run_experiment(config, o);
}

}  // namespace mor::experiments
