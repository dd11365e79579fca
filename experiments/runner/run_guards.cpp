// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/run_guards.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "experiments/runner/estimates.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parametric_store.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/sweep.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "src/core/errors.hpp"
#include "src/core/memory.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

namespace fs = std::filesystem;
using detail::concat;

void require_regular_file(const fs::path& file, std::string_view what) {
  std::error_code error;
  const fs::file_status status = fs::status(file, error);
  if (!fs::exists(status) || fs::is_regular_file(status)) return;
  const auto kind = [&]() -> std::string_view {
    switch (status.type()) {
      case fs::file_type::directory:
        return "a directory";
      case fs::file_type::fifo:
        return "a FIFO (named pipe)";
      case fs::file_type::socket:
        return "a socket";
      case fs::file_type::block:
        return "a block device";
      case fs::file_type::character:
        return "a character device";
      default:
        return "a special file";
    }
  };
  throw InvalidArgument(concat(what, " '", file.string(), "' is ", kind(),
                               ", not a regular file (mor reads it more than once: the model "
                               "type first, then every table)"));
}

void require_known_model_type(const fs::path& file, const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    const std::string text = read_text_file(file);
    require_toml_nesting_within(text, file.string());  // toml++ would overflow the stack
    root = toml::parse(text, file.string());
    for (const auto& o : overrides) apply_override(root, o);
  } catch (const std::exception&) {
    return;  // the loader reports it, with its line
  }
  const toml::node* node = root["model"]["type"].node();
  if (node == nullptr) return;
  const auto type = node->value_exact<std::string>();
  if (!type) return;
  std::vector<std::string> known;
  for (const auto& kind : model_kinds()) known.emplace_back(kind.name);
  if (std::find(known.begin(), known.end(), *type) != known.end()) return;
  const std::string near = suggestion(*type, known);
  throw InvalidArgument(concat(located(file.string(), *node), ": unknown model.type '", *type, "'",
                               near.empty() ? std::string() : "; did you mean '" + near + "'?",
                               " (known: ", join(known), ")"));
}

void require_nonempty_output(bool given, const std::string& output, std::string_view option) {
  if (given && output.empty())
    throw InvalidArgument(concat(option, ": empty file name; name the results file (.h5)"));
}

double run_memory_budget_mib() {
  return memory_limits().hard_mib;
}

namespace {

/// Refuses need_mib above the hard limit, returns a warning above MemAvailable.
std::string check_memory(const ExperimentConfig& c, double need_mib, std::string_view what,
                         std::string_view remedy) {
  const MemoryLimits limits = memory_limits();
  const std::string estimate =
      concat("about ", std::llround(need_mib), " MiB (estimate for n = ", c.model_size(),
             c.reduction ? concat(", method ", std::string(c.reduction->name())) : "", ")");
  if (limits.hard_mib > 0 && need_mib > limits.hard_mib)
    throw InvalidArgument(concat(c.source, ": ", what, " needs ", estimate,
                                 ", above this machine's budget of ", std::llround(limits.hard_mib),
                                 " MiB (", limits.hard_source, "); ", remedy));
  if (limits.available_mib > 0 && need_mib > limits.available_mib)
    return concat(c.source, ": ", what, " needs ", estimate, ", more than the ",
                  std::llround(limits.available_mib),
                  " MiB available now (MemAvailable); it may swap or be stopped by the kernel");
  return {};
}

}  // namespace

std::string check_run_memory(const ExperimentConfig& c, double kept_mib) {
  return check_memory(c, estimate_run_mib(c) + kept_mib, "the run",
                      concat("make the model (", c.model->size_keys(),
                             ") or what the run keeps (horizon, "
                             "snapshots, training) smaller"));
}

std::string check_model_memory(const ExperimentConfig& c) {
  return check_memory(c, estimate_model_mib(c), "building the model",
                      concat("make the model (", c.model->size_keys(), ") smaller"));
}

namespace {

/// The checks of one results file, each naming the object it finds missing or wrong.
class Layout {
 public:
  explicit Layout(const io::ResultsReader& r) : r_(r) {}

  [[noreturn]] void damaged(const std::string& what) const {
    throw IoError(concat("results file '", r_.path().string(), "' is damaged: ", what));
  }

  /// A group at path (or nothing, unless required).
  void group(const std::string& path, bool required = true) const {
    switch (r_.type(path)) {
      case io::ObjectType::group:
        return;
      case io::ObjectType::missing:
        if (required) damaged(concat("the group ", path, " is missing"));
        return;
      case io::ObjectType::dataset:
        damaged(concat(path, " is a dataset, expected a group"));
      default:
        damaged(concat(path, " is not a group"));
    }
  }

  /// The dims of the dataset at path, which must exist and be numeric (or strings).
  std::vector<Index> dataset(const std::string& path, bool strings = false) const {
    switch (r_.type(path)) {
      case io::ObjectType::dataset:
        break;
      case io::ObjectType::missing:
        damaged(concat("the dataset ", path, " is missing"));
      case io::ObjectType::group:
        damaged(concat(path, " is a group, expected a dataset"));
      default:
        damaged(concat(path, " is not a dataset"));
    }
    if (strings ? !r_.is_string_dataset(path) : !r_.is_numeric_dataset(path))
      damaged(concat("the dataset ", path, strings ? " does not hold strings" : " is not numeric"));
    return r_.dims(path);
  }

  /// A numeric 2-D dataset (rows, width); returns rows.
  Index rows(const std::string& path) const {
    const auto d = dataset(path);
    if (d.size() != 2) damaged(concat("the dataset ", path, " is not 2-D (rows x width)"));
    return d[0];
  }

  /// A 1-D (or n x 1) column of length n.
  void column(const std::string& path, Index n, const char* n_source, bool strings = false) const {
    const auto d = dataset(path, strings);
    const bool ok = (d.size() == 1 && d[0] == n) || (d.size() == 2 && d[0] == n && d[1] == 1);
    if (!ok) {
      std::string shape;
      for (std::size_t k = 0; k < d.size(); ++k) shape += (k ? " x " : "") + std::to_string(d[k]);
      damaged(concat("the column ", path, " has shape ", shape.empty() ? "()" : shape,
                     ", expected ", n, " rows (", n_source, ")"));
    }
  }

  /// Every member of group is a numeric 2-D dataset with the rows of group/t.
  void stream_group(const std::string& group) const {
    this->group(group);
    const Index n = rows(group + "/t");
    for (const auto& name : r_.list(group)) {
      const std::string path = group + "/" + name;
      if (rows(path) != n)
        damaged(concat("the dataset ", path, " has ", rows(path), " rows, ", group, "/t has ", n));
    }
  }

  template <class T>
  T attribute(const std::string& name) const {
    if (!r_.has_attribute("/", name)) damaged(concat("the root attribute '", name, "' is missing"));
    const io::AttributeValue value = r_.attribute("/", name);
    if (const T* v = std::get_if<T>(&value)) return *v;
    damaged(concat("the root attribute '", name, "' is of another type"));
  }

  const io::ResultsReader& r_;
};

}  // namespace

void check_results_layout(const io::ResultsReader& r) {
  const Layout l(r);
  if (is_sweep_results(r)) {
    const auto total = l.attribute<std::int64_t>("points_total");
    for (const char* name : {"points_done", "points_failed"}) {
      const auto k = l.attribute<std::int64_t>(name);
      if (k < 0 || k > total)
        l.damaged(concat("the root attribute '", name, "' is ", k,
                         ", outside 0 .. points_total = ", total));
    }
    for (const char* name : {"experiment_name", "created", "command_line"})
      l.attribute<std::string>(name);
    l.attribute<double>("fit_min_N");
    const auto tolerances = l.attribute<std::vector<double>>("tolerances");
    if (total < 0) l.damaged(concat("the root attribute 'points_total' is ", total));
    l.group("/table");
    for (const char* name : {"series", "status", "key"})
      l.column(concat("/table/", name), total, "points_total", true);
    for (const char* name :
         {"N", "r", "m", "offline_s", "full_step_s", "reduced_step_s", "point_s"})
      l.column(concat("/table/", name), total, "points_total");
    // The measures' columns (experiments/runner/measure.hpp) where the table has them: a file
    // written before a measure was registered lacks its column.
    for (const FigureInfo& f : measure_figures())
      if (r.exists(concat("/table/", f.name)))
        l.column(concat("/table/", f.name), total, "points_total");
    for (std::size_t k = 0; k < tolerances.size(); ++k)
      l.column(concat("/table/r_for_tol_", k), total, "points_total");
    l.group("/fits");
    const auto fits = l.dataset("/fits/series", true);
    if (fits.size() != 1) l.damaged("the column /fits/series is not 1-D");
    l.column("/fits/column", fits[0], "/fits/series", true);
    for (const char* name : {"exponent", "N_min", "N_max", "points"})
      l.column(concat("/fits/", name), fits[0], "/fits/series");
    return;
  }
  l.group("/model");
  if (r.has_attribute("/", "kind") && r.attribute_string("/", "kind") == kParametricModelKind) {
    // A sweep's stored parametric model: the model, the domain and the reduction, no runs.
    for (const std::string& path :
         {layout::kParameters, layout::kReduction, layout::kReductionAffine})
      l.group(path);
    return;
  }
  const bool multibody = r.type("/benchmark") != io::ObjectType::missing;
  // A multibody benchmark's file has its benchmark run beside the driven run (older files have
  // only the benchmark run).
  if (multibody) l.stream_group("/benchmark");
  if (!multibody || r.type("/outputs") != io::ObjectType::missing) {
    for (const char* name : {"/simulation", "/input", "/timings"}) l.group(name);
    l.stream_group("/outputs");
    l.rows("/outputs/y");
    if (r.type("/snapshots") != io::ObjectType::missing) l.stream_group("/snapshots");
  }
  for (const char* name : {"/reduction", "/reduced", "/error", "/analysis"}) l.group(name, false);
}

void remove_point_leftovers(const SweepConfig& c) noexcept {
  try {
    for (const SweepPoint& p : c.points) {
      const fs::path log = c.points_dir / (p.key + ".log");
      std::error_code error;
      if (!fs::exists(log, error)) continue;
      if (fs::file_size(log, error) == 0 || completed_point_file(c, p)) fs::remove(log, error);
    }
  } catch (...) {
  }
}

std::string describe(const fs::filesystem_error& e) {
  // what() is "filesystem error: <operation>: <reason> [path1] [path2]".
  std::string operation = e.what();
  const std::string prefix = "filesystem error: ";
  if (operation.compare(0, prefix.size(), prefix) == 0) operation.erase(0, prefix.size());
  operation = operation.substr(0, operation.find(": "));
  std::string line = operation;
  if (!e.path1().empty()) line += " '" + e.path1().string() + "'";
  if (!e.path2().empty()) line += " to '" + e.path2().string() + "'";
  return line + ": " + e.code().message();
}

}  // namespace mor::experiments
