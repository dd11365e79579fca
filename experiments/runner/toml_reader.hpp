// SPDX-License-Identifier: GPL-3.0-or-later
// Strict reading of experiment files (toml++): every table's keys typed and checked, unknown
// keys rejected with the nearest known key suggested, "table.key=value" overrides. Shared by
// experiment and sweep files; internal to experiments/runner.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "experiments/runner/config.hpp"
#include "src/core/errors.hpp"

namespace mor::experiments {

/// The known key nearest to key (at most 2 edits, case-insensitive), or "".
std::string suggestion(const std::string& key, const std::vector<std::string>& known);
/// "a, b, c".
std::string join(const std::vector<std::string>& items);
/// Applies "a.b=value" to the table (value in TOML syntax, or a bare string).
/// @throws InvalidArgument for an assignment of another shape.
void apply_override(toml::table& root, const std::string& assignment);
/// The whole text of an experiment (or sweep) file. @throws IoError naming it if unreadable.
std::string read_text_file(const std::filesystem::path& file);
/// A TOML node as TOML text (strings quoted), as an override's value takes it.
std::string toml_text(const toml::node& n);
/// p relative to base (unless absolute or empty).
std::filesystem::path resolve(const std::filesystem::path& p, const std::filesystem::path& base);
/// s as a quoted TOML string.
std::string toml_string(const std::string& s);
/// "file:line" of a node of the file, or "file (--set)" for a node an override put there (line
/// 0: it has no line in the file).
std::string located(const std::string& source, const toml::node& n);
/// Parses TOML text, applies the overrides, and checks that every top-level key is one of
/// `tables` (a table, or an array of tables for those in `arrays`).
/// @throws InvalidArgument naming the line and the unknown table or the parse error.
toml::table parse_root(const std::string& text, const std::string& source,
                       const std::vector<std::string>& overrides,
                       const std::vector<std::string>& tables,
                       const std::vector<std::string>& arrays = {});
/// The deepest nesting that experiment and sweep files may have: keys, [table] headers, arrays
/// and inline tables inside each other. The files need a few levels; toml++ recurses once per
/// level (a key of 40 000 dotted parts overflowed the stack), so deeper text is refused unparsed.
inline constexpr std::size_t kMaxTomlNesting = 64;
/// The deepest nesting of TOML text and the line where it is first reached.
struct TomlNesting {
  std::size_t depth = 0;
  std::size_t line = 0;
};
/// Measures text as the parser would nest it (a dotted key of k parts is k deep, [a.b] makes the
/// keys below it 2 deeper, each inline array or table one more), without parsing it: linear in
/// the text, no recursion. Meant for valid TOML; on invalid text it errs towards deeper.
TomlNesting toml_nesting(std::string_view text);
/// @throws InvalidArgument "<source>:<line>: keys and values nested <depth> deep ... exceed the
///         limit of 64 ..." if toml_nesting(text) is deeper than kMaxTomlNesting.
void require_toml_nesting_within(std::string_view text, const std::string& source);
/// The parse alone, after require_toml_nesting_within.
/// @throws InvalidArgument naming the line of the parse error.
toml::table parse_toml(const std::string& text, const std::string& source);
/// The rest of parse_root on an already parsed file (a copy: overrides change it).
toml::table checked_root(toml::table root, const std::string& source,
                         const std::vector<std::string>& overrides,
                         const std::vector<std::string>& tables,
                         const std::vector<std::string>& arrays = {});

/// Reads the keys of one TOML table with types checked; finish() rejects every key not read.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string name, std::string source)
      : table_(table), name_(std::move(name)), source_(std::move(source)) {}

  double real(const std::string& key, double fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    if (auto v = n->value_exact<double>()) return *v;
    if (auto v = n->value_exact<std::int64_t>()) return static_cast<double>(*v);
    fail(key, *n, "a number");
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    if (auto v = n->value_exact<std::int64_t>()) return *v;
    if (auto v = n->value_exact<double>();
        v && std::isfinite(*v) && *v == std::round(*v) && std::abs(*v) < 9e15)
      return static_cast<std::int64_t>(*v);  // 1e6 is a fine way to write a million masses
    fail(key, *n, "an integer");
  }
  std::string text(const std::string& key, const std::string& fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    if (auto v = n->value_exact<std::string>()) return *v;
    fail(key, *n, "a string");
  }
  bool boolean(const std::string& key, bool fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    if (auto v = n->value_exact<bool>()) return *v;
    fail(key, *n, "true or false");
  }
  std::vector<double> reals(const std::string& key, std::vector<double> fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    const toml::array* a = n->as_array();
    if (!a) fail(key, *n, "an array of numbers");
    std::vector<double> out;
    for (const auto& e : *a) {
      if (auto v = e.value_exact<double>())
        out.push_back(*v);
      else if (auto w = e.value_exact<std::int64_t>())
        out.push_back(static_cast<double>(*w));
      else
        fail(key, *n, "an array of numbers");
    }
    return out;
  }
  std::vector<std::int64_t> integers(const std::string& key, std::vector<std::int64_t> fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    const toml::array* a = n->as_array();
    if (!a) fail(key, *n, "an array of integers");
    std::vector<std::int64_t> out;
    for (const auto& e : *a) {
      if (auto v = e.value_exact<std::int64_t>())
        out.push_back(*v);
      else
        fail(key, *n, "an array of integers");
    }
    return out;
  }
  /// An array of integer pairs, e.g. [[1, 2], [3, 4]] (lattice nodes).
  std::vector<std::array<std::int64_t, 2>> integer_pairs(
      const std::string& key, std::vector<std::array<std::int64_t, 2>> fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    const toml::array* a = n->as_array();
    if (!a) fail(key, *n, "an array of [i, j] pairs of integers");
    std::vector<std::array<std::int64_t, 2>> out;
    for (const auto& e : *a) {
      const toml::array* pair = e.as_array();
      if (!pair || pair->size() != 2) fail(key, *n, "an array of [i, j] pairs of integers");
      const auto i = (*pair)[0].value_exact<std::int64_t>();
      const auto j = (*pair)[1].value_exact<std::int64_t>();
      if (!i || !j) fail(key, *n, "an array of [i, j] pairs of integers");
      out.push_back({*i, *j});
    }
    return out;
  }
  /// An array of points, each an array of numbers, e.g. [[0.5, 1.0], [2.0, 0.3]].
  std::vector<std::vector<double>> points(const std::string& key,
                                          std::vector<std::vector<double>> fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    const toml::array* a = n->as_array();
    if (!a) fail(key, *n, "an array of points, each an array of numbers");
    std::vector<std::vector<double>> out;
    for (const auto& e : *a) {
      const toml::array* p = e.as_array();
      if (!p) fail(key, *n, "an array of points, each an array of numbers");
      std::vector<double>& row = out.emplace_back();
      for (const auto& x : *p) {
        if (auto v = x.value_exact<double>())
          row.push_back(*v);
        else if (auto w = x.value_exact<std::int64_t>())
          row.push_back(static_cast<double>(*w));
        else
          fail(key, *n, "an array of points, each an array of numbers");
      }
    }
    return out;
  }
  std::vector<std::string> strings(const std::string& key, std::vector<std::string> fallback) {
    const toml::node* n = find(key);
    if (!n) return fallback;
    const toml::array* a = n->as_array();
    if (!a) fail(key, *n, "an array of strings");
    std::vector<std::string> out;
    for (const auto& e : *a) {
      if (auto v = e.value_exact<std::string>())
        out.push_back(*v);
      else
        fail(key, *n, "an array of strings");
    }
    return out;
  }
  /// The sub-table at key, or nullptr if absent. @throws InvalidArgument if it is not a table.
  const toml::table* table(const std::string& key) {
    const toml::node* n = find(key);
    if (!n) return nullptr;
    if (const toml::table* t = n->as_table()) return t;
    fail(key, *n, "a table");
  }
  /// Every key of the table must have been asked for; `context` explains what decided the set.
  void finish(const std::string& context = "") const {
    if (!table_) return;
    for (const auto& [k, node] : *table_) {
      const std::string key(k.str());
      if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
      const std::string near = suggestion(key, known_);
      throw InvalidArgument(
          detail::concat(located(source_, node), ": unknown key '", name_, ".", key, "'", context,
                         near.empty() ? "" : "; did you mean '" + name_ + "." + near + "'?",
                         " (known keys: ", join(known_), ")"));
    }
  }
  /// The table's keys that were not read (yet), in the table's order.
  std::vector<std::string> unread_keys() const {
    std::vector<std::string> out;
    if (!table_) return out;
    for (const auto& [k, node] : *table_)
      if (std::find(known_.begin(), known_.end(), std::string(k.str())) == known_.end())
        out.emplace_back(k.str());
    return out;
  }
  /// True if the table has the key (whether or not it was read).
  bool given(const std::string& key) const { return table_ && table_->contains(key); }
  std::string where(const std::string& key) const {
    const toml::node* n = table_ ? table_->get(key) : nullptr;
    return n ? located(source_, *n) : source_;
  }

 private:
  const toml::node* find(const std::string& key) {
    known_.push_back(key);
    return table_ ? table_->get(key) : nullptr;
  }
  [[noreturn]] void fail(const std::string& key, const toml::node& n, const char* expected) const {
    std::ostringstream value;
    n.visit([&](const auto& x) { value << x; });
    throw InvalidArgument(detail::concat(located(source_, n), ": ", name_, ".", key, " must be ",
                                         expected, ", got ", value.str()));
  }

  const toml::table* table_;
  std::string name_, source_;
  std::vector<std::string> known_;
};

/// The keys of an input table ([input], [[training]]): the signal type and its parameters;
/// a table file is resolved against base_dir. @throws InvalidArgument naming the key.
InputSpec read_input(TableReader& r, const std::string& name, const std::string& source,
                     const std::filesystem::path& base_dir);
/// [experiment]: name (default: the value passed in), description, output (default
/// results/<name>.h5). @throws InvalidArgument for an empty name or an unknown key.
void read_experiment_table(TableReader& r, const std::string& source, std::string& name,
                           std::string& description, std::filesystem::path& output);
/// The keys of an input table after its type, as TOML lines (for the stored configuration).
void write_input(std::ostream& os, const InputSpec& in);
/// [[training]]: `training` (nullptr: no training runs) as an array of input tables.
/// @throws InvalidArgument naming the run and the key.
std::vector<InputSpec> read_training(const toml::node* training, const std::string& source,
                                     const std::filesystem::path& base_dir);
/// [simulation] of a model that does not own it (the runner's fixed-step schemes): the
/// integrator's options (t0 = 0), the sparse solver and max_steps into c; finishes r.
/// @throws InvalidArgument naming the key, or a t_end / dt above max_steps.
void read_simulation(TableReader& r, const std::filesystem::path& base_dir, ExperimentConfig& c);
/// c.reduction against the rest of c (model, training runs): the method's own check, and
/// [[training]] only for the methods that train. @throws InvalidArgument naming `where`.
void check_reduction(const ExperimentConfig& c, const std::string& where,
                     const std::string& source);

}  // namespace mor::experiments
