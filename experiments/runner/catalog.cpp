// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/catalog.hpp"

#include <algorithm>
#include <map>
#include <ostream>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/measure.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parameters.hpp"
#include "experiments/runner/sweep.hpp"

namespace mor::experiments {
namespace {

/// The model kinds' own keys of [table] (ModelKindInfo::table_keys), kinds that declare the same
/// keys under one variant: type = "pendulum", "bricard", ... Returns the kinds that have some.
std::vector<std::string> append_kind_table_keys(std::vector<KeyDoc>& rows, std::string_view table) {
  const auto same = [](const std::vector<KeyDoc>& a, const std::vector<KeyDoc>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const KeyDoc& x, const KeyDoc& y) {
      return x.table == y.table && x.name == y.name && x.type == y.type &&
             x.default_value == y.default_value && x.unit == y.unit && x.doc == y.doc;
    });
  };
  std::vector<std::pair<std::vector<std::string>, std::vector<KeyDoc>>> groups;
  std::vector<std::string> kinds;
  for (const auto& kind : model_kinds()) {
    if (kind.table_keys == nullptr) continue;
    std::vector<KeyDoc> mine;
    kind.table_keys(table, mine);
    if (mine.empty()) continue;
    kinds.emplace_back(kind.name);
    const auto g = std::find_if(groups.begin(), groups.end(),
                                [&](const auto& group) { return same(group.second, mine); });
    if (g != groups.end())
      g->first.emplace_back(kind.name);
    else
      groups.push_back({{std::string(kind.name)}, std::move(mine)});
  }
  for (auto& [names, keys] : groups) {
    // The selector is in another table: [model]'s type.
    std::string variant = "model.type = ";
    for (std::size_t i = 0; i < names.size(); ++i) variant += (i ? ", \"" : "\"") + names[i] + "\"";
    for (auto& k : keys) {
      k.variant = variant;
      rows.push_back(std::move(k));
    }
  }
  return kinds;
}

}  // namespace

std::vector<KeyDoc> experiment_key_reference() {
  std::vector<KeyDoc> rows;
  const auto variant_of = [&](std::size_t from, const std::string& variant) {
    for (std::size_t i = from; i < rows.size(); ++i)
      if (rows[i].variant.empty()) rows[i].variant = variant;
  };
  {
    ExperimentTable t;
    KeyDocs docs(rows, "experiment");
    t.visit_keys(docs);
  }
  {
    std::string kinds;
    for (const auto& kind : model_kinds())
      kinds += (kinds.empty() ? "" : ", ") + std::string(kind.name);
    rows.push_back({"model", "type", "one of " + kinds, "\"mass_spring_chain\"", "",
                    "the model kind (`mor list models`)", ""});
  }
  for (const auto& kind : model_kinds()) {
    const std::size_t from = rows.size();
    kind.keys(rows);
    variant_of(from, detail::concat("type = \"", kind.name, "\""));
  }
  std::string signals;
  for (const auto& type : kSignalTypes)
    signals += (signals.empty() ? "" : ", ") + std::string(type.name);
  for (const char* table : {"input", "training"}) {
    rows.push_back({table, "type", "one of " + signals, "\"sine\"", "",
                    std::string(table) == "input"
                        ? "the input signal of the simulated run (`mor list inputs`)"
                        : "a training input of pod and empirical_bt (one [[training]] table each)",
                    ""});
    for (const auto& type : kSignalTypes) {
      InputSpec in;
      in.type = std::string(type.name);
      KeyDocs docs(rows, table, detail::concat("type = \"", type.name, "\""));
      signal_keys(in, docs);
    }
  }
  {
    // The runner's fixed-step schemes (every kind but those that integrate themselves, whose
    // own keys follow).
    SimulationTable t;
    KeyDocs docs(rows, "simulation");
    t.visit_keys(docs);
    append_kind_table_keys(rows, "simulation");
  }
  for (const auto& kind : model_kinds())
    if (!kind.extra_table.empty() && std::none_of(rows.begin(), rows.end(), [&](const KeyDoc& r) {
          return r.table == kind.extra_table;
        }))
      append_kind_table_keys(rows, kind.extra_table);
  {
    OutputTable t;
    KeyDocs docs(rows, "output");
    t.visit_keys(docs);
    append_kind_table_keys(rows, "output");
  }
  {
    std::string methods;
    for (const auto& method : reduction_methods())
      methods += (methods.empty() ? "" : ", ") + std::string(method.name);
    rows.push_back({"reduction", "method", "one of " + methods, "\"none\"", "",
                    "the reduction method (`mor list methods`)", ""});
  }
  for (const auto& method : reduction_methods()) {
    const std::size_t from = rows.size();
    method.keys(rows);
    variant_of(from, detail::concat("method = \"", method.name, "\""));
  }
  for (const MeasureInfo& m : measures()) m.keys(rows);
  parameter_key_rows(rows);
  {
    ValidationTable t;
    KeyDocs docs(rows, "validation");
    t.visit_keys(docs);
  }
  return rows;
}

namespace {

struct Entry {
  std::string name, doc;
};

std::vector<Entry> list_entries(const std::string& topic) {
  std::vector<Entry> e;
  if (topic == "models") {
    for (const auto& k : model_kinds()) e.push_back({std::string(k.name), std::string(k.doc)});
  } else if (topic == "methods") {
    for (const auto& m : reduction_methods())
      e.push_back({std::string(m.name), std::string(m.doc)});
  } else if (topic == "measures") {
    for (const auto& m : measures()) {
      std::string doc(m.doc);
      if (!m.needs.empty()) {
        doc += "; needs";
        for (std::size_t i = 0; i < m.needs.size(); ++i)
          doc += (i ? ", " : " ") + std::string(m.needs[i]);
      }
      e.push_back({std::string(m.name), doc});
    }
  } else if (topic == "integrators") {
    e.push_back({"implicit_midpoint",
                 "implicit midpoint rule: A-stable, second order, no numerical damping (default)"});
    e.push_back({"generalized_alpha",
                 "generalized-alpha (Chung and Hulbert 1993): second order, numerical damping of "
                 "high frequencies set by simulation.rho_infinity"});
    e.push_back({"rk4", "classical explicit Runge-Kutta, fourth order (stability limit on dt)"});
  } else if (topic == "inputs") {
    for (const auto& t : kSignalTypes) e.push_back({std::string(t.name), std::string(t.doc)});
  }
  return e;
}

std::string unit_text(const KeyDoc& k) {
  return k.unit.empty() ? "" : " [" + k.unit + "]";
}

std::string markdown_cell(std::string s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

const std::vector<std::string>& list_topics() {
  static const std::vector<std::string> topics = {"models", "methods", "measures", "integrators",
                                                  "inputs"};
  return topics;
}

void print_list(const std::string& topic, std::ostream& out) {
  const auto& topics = list_topics();
  if (!topic.empty() && std::find(topics.begin(), topics.end(), topic) == topics.end())
    throw InvalidArgument(
        detail::concat("mor list: '", topic, "' is not a list (known: ", join(topics), ")"));
  for (const auto& t : topics) {
    if (!topic.empty() && t != topic) continue;
    const auto entries = list_entries(t);
    std::size_t width = 0;
    for (const auto& e : entries) width = std::max(width, e.name.size());
    out << t << ":\n";
    for (const auto& e : entries)
      out << "  " << e.name << std::string(width + 2 - e.name.size(), ' ') << e.doc << "\n";
    if (topic.empty() && t != topics.back()) out << "\n";
  }
}

namespace {

struct FileKind {
  const char* name;
  const char* title;
  const char* intro;
  std::vector<KeyDoc> (*rows)();
};

const FileKind kFileKinds[] = {
    {"experiment", "Experiment files",
     "One run (`mor run FILE`): a model, an input, an integrator, a reduction, what to store.",
     &experiment_key_reference},
    {"sweep", "Sweep files",
     "A grid of experiments (`mor sweep FILE`): studies, each an experiment file with overrides "
     "crossed with grid axes.",
     &sweep_key_reference},
};

void print_file_keys(const FileKind& kind, const std::string& table, bool markdown,
                     std::ostream& out) {
  const auto rows = kind.rows();
  std::vector<std::string> tables;
  for (const auto& r : rows)
    if (std::find(tables.begin(), tables.end(), r.table) == tables.end()) tables.push_back(r.table);
  if (!table.empty() && std::find(tables.begin(), tables.end(), table) == tables.end())
    throw InvalidArgument(detail::concat("mor keys: '", table, "' is not a table of ", kind.name,
                                         " files (known: ", join(tables), ")"));
  if (markdown) out << "\n## " << kind.title << "\n\n" << kind.intro << "\n";
  for (const auto& t : tables) {
    if (!table.empty() && t != table) continue;
    const bool array = t == "training" || t == "study";
    std::string variant = "\x01";
    const std::string heading = (array ? "[[" : "[") + t + (array ? "]]" : "]");
    if (markdown)
      out << "\n### " << kind.name << ": " << heading << "\n";
    else
      out << heading << "\n";
    std::size_t width = 0;
    for (const auto& r : rows)
      if (r.table == t) width = std::max(width, r.name.size());
    for (const auto& r : rows) {
      if (r.table != t) continue;
      if (r.variant != variant) {
        variant = r.variant;
        if (markdown) {
          out << "\n"
              << (variant.empty() ? "Always" : "With `" + variant + "`") << ":\n\n"
              << "| key | type | default | unit | meaning |\n|---|---|---|---|---|\n";
        } else if (!variant.empty()) {
          out << "  # " << variant << "\n";
        }
      }
      if (markdown)
        out << "| `" << r.name << "` | " << markdown_cell(r.type) << " | `"
            << markdown_cell(r.default_value) << "` | " << markdown_cell(r.unit) << " | "
            << markdown_cell(r.doc) << " |\n";
      else
        out << "  " << r.name << std::string(width + 2 - r.name.size(), ' ') << "= "
            << r.default_value << "  (" << r.type << unit_text(r) << ") " << r.doc << "\n";
    }
    if (!markdown && table.empty()) out << "\n";
  }
}

}  // namespace

void print_keys(const std::string& file, const std::string& table, bool markdown,
                std::ostream& out) {
  std::vector<std::string> known;
  for (const auto& k : kFileKinds) known.emplace_back(k.name);
  if (!file.empty() && std::find(known.begin(), known.end(), file) == known.end())
    throw InvalidArgument(
        detail::concat("mor keys: --file '", file, "' is not a kind of file (", join(known), ")"));
  if (markdown)
    out << "# Keys of experiment and sweep files\n\n"
           "Generated by `mor keys --markdown` from the declarations the readers use; a test\n"
           "(`docs_keys`) fails when this page is stale. Every key is optional unless it says\n"
           "otherwise: the default applies when it is absent. A key listed under a variant (e.g.\n"
           "`type = \"sine\"`) exists only in that variant of its table. How the files work:\n"
           "[experiment-files.md](experiment-files.md), [multibody.md](multibody.md),\n"
           "[sweeps.md](sweeps.md).\n";
  // Without --file: experiment files (the Markdown page holds every kind).
  const std::string which = file.empty() && !markdown ? "experiment" : file;
  for (const auto& k : kFileKinds)
    if (which.empty() || which == k.name) print_file_keys(k, table, markdown, out);
}

}  // namespace mor::experiments
