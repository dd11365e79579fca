// SPDX-License-Identifier: GPL-3.0-or-later
// Experiment-file keys declared once. An options struct lists its keys in one member template
//
//     template <class V> void visit_keys(V& v) {
//       v(Key{"N", "", "number of masses, >= 1"}, N);
//       v.choice(Key{"damping", "", "dampers along the chain, or Rayleigh"}, damping, kDampings);
//     }
//
// and every use of the list is a visitor over it (the pattern of Drake's Serialize/Archive):
// KeyReader reads a TOML table with the types checked (the current field values are the
// defaults), KeyWriter writes the effective values back as TOML, KeyRecorder stores them as
// HDF5 attributes, KeyDocs lists name, type, default, unit and doc for `mor keys`. Checks that
// relate keys to each other stay in the struct's own validation. Internal to experiments/runner.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/runner/toml_reader.hpp"
#include "src/core/errors.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

/// One key's documentation: its name in the table, its unit ("" if none) and one line of doc.
struct Key {
  const char* name;
  const char* unit;
  const char* doc;
};

/// A key whose value is a TOML table of free-form keys (e.g. a sweep study's set and grid),
/// read as the node for the caller to walk; nullptr when absent.
struct FreeTable {
  const toml::table* table = nullptr;
};

/// A name of an enumerator as files spell it.
template <class E>
struct Choice {
  std::string_view name;
  E value;
};

/// The names of a choice list, "a, b, c".
template <class E>
std::string choice_names(std::span<const Choice<E>> choices) {
  std::string s;
  for (const auto& c : choices) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}
template <class E>
std::string_view choice_name(std::span<const Choice<E>> choices, E value) {
  for (const auto& c : choices)
    if (c.value == value) return c.name;
  throw InvalidArgument("internal: an enumerator without a name in its choice list");
}
/// The names of a list of enumerators, as files spell them.
template <class E, std::size_t N>
std::vector<std::string> choice_names_of(const std::vector<E>& values,
                                         const Choice<E> (&choices)[N]) {
  std::vector<std::string> names;
  for (E e : values) names.emplace_back(choice_name(std::span<const Choice<E>>(choices), e));
  return names;
}

/// Reads the declared keys of one table; absent keys keep the field's value (the default).
/// Relative paths are resolved against base_dir. Call reader.finish() afterwards.
class KeyReader {
 public:
  KeyReader(TableReader& reader, std::string table, std::filesystem::path base_dir)
      : r_(reader), table_(std::move(table)), base_dir_(std::move(base_dir)) {}

  void operator()(const Key& k, double& x) { x = r_.real(k.name, x); }
  void operator()(const Key& k, Index& x) { x = r_.integer(k.name, x); }
  void operator()(const Key& k, bool& x) { x = r_.boolean(k.name, x); }
  void operator()(const Key& k, std::string& x) { x = r_.text(k.name, x); }
  void operator()(const Key& k, std::filesystem::path& x) {
    const std::string s = r_.text(k.name, x.string());
    x = s.empty() ? std::filesystem::path() : resolve(s, base_dir_);
  }
  void operator()(const Key& k, std::vector<double>& x) { x = r_.reals(k.name, x); }
  void operator()(const Key& k, std::vector<Index>& x) {
    const auto v = r_.integers(k.name, std::vector<std::int64_t>(x.begin(), x.end()));
    x.assign(v.begin(), v.end());
  }
  void operator()(const Key& k, std::vector<std::string>& x) { x = r_.strings(k.name, x); }
  void operator()(const Key& k, std::vector<std::vector<double>>& x) { x = r_.points(k.name, x); }
  void operator()(const Key& k, std::vector<std::array<Index, 2>>& x) {
    std::vector<std::array<std::int64_t, 2>> given;
    for (const auto& p : x) given.push_back({p[0], p[1]});
    x.clear();
    for (const auto& p : r_.integer_pairs(k.name, given)) x.push_back({p[0], p[1]});
  }
  void operator()(const Key& k, std::vector<std::filesystem::path>& x) {
    std::vector<std::string> given;
    for (const auto& p : x) given.push_back(p.string());
    x.clear();
    for (const auto& p : r_.strings(k.name, given)) x.push_back(resolve(p, base_dir_));
  }
  void operator()(const Key& k, FreeTable& x) { x.table = r_.table(k.name); }
  /// An inline table of strings, e.g. variables = { A = "A_rail" }.
  void operator()(const Key& k, std::map<std::string, std::string>& x) {
    const toml::table* t = r_.table(k.name);
    if (!t) return;
    x.clear();
    for (const auto& [name, node] : *t) {
      const auto v = node.value_exact<std::string>();
      require(v.has_value(), r_.where(k.name), ": ", table_, ".", k.name, ".", name.str(),
              " must be a string");
      x[std::string(name.str())] = *v;
    }
  }
  template <class E, std::size_t N>
  void choice(const Key& k, E& x, const Choice<E> (&choices)[N]) {
    const std::span<const Choice<E>> list(choices);
    const std::string name = r_.text(k.name, std::string(choice_name(list, x)));
    for (const auto& c : list)
      if (c.name == name) {
        x = c.value;
        return;
      }
    std::vector<std::string> known;
    for (const auto& c : list) known.emplace_back(c.name);
    const std::string near = suggestion(name, known);
    throw InvalidArgument(detail::concat(r_.where(k.name), ": ", table_, ".", k.name, " '", name,
                                         "' is not one of ", choice_names(list),
                                         near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  /// An array of choices; an unknown entry is an error saying it `must be` what `entries`
  /// describes (e.g. "\"p\" (positions) or \"v\" (velocities)").
  template <class E, std::size_t N>
  void choices(const Key& k, std::vector<E>& x, const Choice<E> (&choices)[N],
               const char* entries) {
    const std::vector<std::string> names = r_.strings(k.name, choice_names_of(x, choices));
    x.clear();
    for (const auto& name : names) {
      const Choice<E>* found = nullptr;
      for (const auto& c : choices)
        if (c.name == name) found = &c;
      require(found != nullptr, r_.where(k.name), ": ", table_, ".", k.name, " entry '", name,
              "' must be ", entries);
      x.push_back(found->value);
    }
  }

 private:
  TableReader& r_;
  std::string table_;
  std::filesystem::path base_dir_;
};

/// Writes "name = value" lines of the effective values (full precision).
class KeyWriter {
 public:
  explicit KeyWriter(std::ostream& os) : os_(os) {}
  void operator()(const Key& k, double x) { line(k) << detail::concat(x) << "\n"; }
  void operator()(const Key& k, Index x) { line(k) << x << "\n"; }
  void operator()(const Key& k, bool x) { line(k) << (x ? "true" : "false") << "\n"; }
  void operator()(const Key& k, const std::string& x) { line(k) << toml_string(x) << "\n"; }
  void operator()(const Key& k, const std::filesystem::path& x) { (*this)(k, x.string()); }
  template <class T>
  void operator()(const Key& k, const std::vector<T>& x) {
    line(k) << "[";
    for (std::size_t i = 0; i < x.size(); ++i) {
      os_ << (i ? ", " : "");
      if constexpr (std::is_same_v<T, std::string>)
        os_ << toml_string(x[i]);
      else if constexpr (std::is_same_v<T, std::array<Index, 2>>)
        os_ << "[" << x[i][0] << ", " << x[i][1] << "]";
      else if constexpr (std::is_same_v<T, std::vector<double>>) {
        os_ << "[";
        for (std::size_t j = 0; j < x[i].size(); ++j)
          os_ << (j ? ", " : "") << detail::concat(x[i][j]);
        os_ << "]";
      } else
        os_ << detail::concat(x[i]);
    }
    os_ << "]\n";
  }
  void operator()(const Key& k, const std::vector<std::filesystem::path>& x) {
    std::vector<std::string> s;
    for (const auto& p : x) s.push_back(p.string());
    (*this)(k, s);
  }
  void operator()(const Key& k, const std::map<std::string, std::string>& x) {
    line(k) << inline_table(x) << "\n";
  }
  template <class E, std::size_t N>
  void choice(const Key& k, E x, const Choice<E> (&choices)[N]) {
    (*this)(k, std::string(choice_name(std::span<const Choice<E>>(choices), x)));
  }
  template <class E, std::size_t N>
  void choices(const Key& k, const std::vector<E>& x, const Choice<E> (&choices)[N], const char*) {
    (*this)(k, choice_names_of(x, choices));
  }
  /// { a = "x", b = "y" }.
  static std::string inline_table(const std::map<std::string, std::string>& x) {
    std::string s = "{";
    for (const auto& [name, value] : x)
      s += (s.size() > 1 ? ", " : " ") + name + " = " + toml_string(value);
    return s + (x.empty() ? "}" : " }");
  }

 private:
  std::ostream& line(const Key& k) { return os_ << k.name << " = "; }
  std::ostream& os_;
};

/// Stores every key as an attribute of one group of a results file.
class KeyRecorder {
 public:
  KeyRecorder(io::RecordSink& out, std::string group) : out_(out), group_(std::move(group)) {}
  void operator()(const Key& k, double x) { out_.set_attribute(group_, k.name, x); }
  void operator()(const Key& k, Index x) {
    out_.set_attribute(group_, k.name, static_cast<std::int64_t>(x));
  }
  void operator()(const Key& k, bool x) {
    out_.set_attribute(group_, k.name, static_cast<std::int64_t>(x));
  }
  void operator()(const Key& k, const std::string& x) { out_.set_attribute(group_, k.name, x); }
  void operator()(const Key& k, const std::filesystem::path& x) { (*this)(k, x.string()); }
  void operator()(const Key& k, const std::vector<double>& x) {
    if (!x.empty()) out_.set_attribute(group_, k.name, x);
  }
  void operator()(const Key& k, const std::vector<Index>& x) {
    if (!x.empty())
      out_.set_attribute(group_, k.name, std::vector<std::int64_t>(x.begin(), x.end()));
  }
  /// Points as a flat list, point after point.
  void operator()(const Key& k, const std::vector<std::vector<double>>& x) {
    std::vector<double> flat;
    for (const auto& p : x) flat.insert(flat.end(), p.begin(), p.end());
    if (!flat.empty()) out_.set_attribute(group_, k.name, flat);
  }
  /// Pairs as a flat list i1, j1, i2, j2, ...
  void operator()(const Key& k, const std::vector<std::array<Index, 2>>& x) {
    std::vector<std::int64_t> flat;
    for (const auto& p : x) flat.insert(flat.end(), {p[0], p[1]});
    if (!flat.empty()) out_.set_attribute(group_, k.name, flat);
  }
  void operator()(const Key& k, const std::vector<std::string>& x) {
    std::string s;
    for (const auto& e : x) s += (s.empty() ? "" : ", ") + e;
    out_.set_attribute(group_, k.name, s);
  }
  void operator()(const Key& k, const std::vector<std::filesystem::path>& x) {
    std::vector<std::string> s;
    for (const auto& p : x) s.push_back(p.string());
    (*this)(k, s);
  }
  void operator()(const Key& k, const std::map<std::string, std::string>& x) {
    if (!x.empty()) out_.set_attribute(group_, k.name, KeyWriter::inline_table(x));
  }
  template <class E, std::size_t N>
  void choice(const Key& k, E x, const Choice<E> (&choices)[N]) {
    (*this)(k, std::string(choice_name(std::span<const Choice<E>>(choices), x)));
  }
  template <class E, std::size_t N>
  void choices(const Key& k, const std::vector<E>& x, const Choice<E> (&choices)[N], const char*) {
    (*this)(k, choice_names_of(x, choices));
  }

 private:
  io::RecordSink& out_;
  std::string group_;
};

/// One row of the key reference.
struct KeyDoc {
  std::string table, name, type, default_value, unit, doc;
  /// The key exists only in this variant of the table, e.g. type = "sine"; "" for always.
  std::string variant;
};

/// Collects the key reference of one table (the defaults are the visited struct's values).
class KeyDocs {
 public:
  KeyDocs(std::vector<KeyDoc>& rows, std::string table, std::string variant = "")
      : rows_(rows), table_(std::move(table)), variant_(std::move(variant)) {}
  void operator()(const Key& k, double x) { add(k, "number", detail::concat(x)); }
  void operator()(const Key& k, Index x) { add(k, "integer", detail::concat(x)); }
  void operator()(const Key& k, bool x) { add(k, "boolean", x ? "true" : "false"); }
  void operator()(const Key& k, const std::string& x) { add(k, "string", toml_string(x)); }
  void operator()(const Key& k, const std::filesystem::path& x) {
    add(k, "path", toml_string(x.string()));
  }
  template <class T>
  void operator()(const Key& k, const std::vector<T>& x) {
    std::ostringstream os;
    KeyWriter writer(os);
    writer(k, x);
    std::string v = os.str();
    v = v.substr(v.find('=') + 2);
    v.pop_back();
    add(k,
        std::is_same_v<T, std::string>            ? "array of strings"
        : std::is_same_v<T, double>               ? "array of numbers"
        : std::is_same_v<T, std::array<Index, 2>> ? "array of [i, j]"
        : std::is_same_v<T, std::vector<double>>  ? "array of points"
                                                  : "array of integers",
        v);
  }
  void operator()(const Key& k, const std::vector<std::filesystem::path>& x) {
    std::vector<std::string> s;
    for (const auto& p : x) s.push_back(p.string());
    (*this)(k, s);
    rows_.back().type = "array of paths";
  }
  void operator()(const Key& k, const std::map<std::string, std::string>& x) {
    add(k, "table of strings", KeyWriter::inline_table(x));
  }
  void operator()(const Key& k, const FreeTable&) { add(k, "table", "{}"); }
  template <class E, std::size_t N>
  void choice(const Key& k, E x, const Choice<E> (&choices)[N]) {
    const std::span<const Choice<E>> list(choices);
    add(k, "one of " + choice_names(list), toml_string(std::string(choice_name(list, x))));
  }
  template <class E, std::size_t N>
  void choices(const Key& k, const std::vector<E>& x, const Choice<E> (&choices)[N], const char*) {
    (*this)(k, choice_names_of(x, choices));
  }

 private:
  void add(const Key& k, std::string type, std::string value) {
    rows_.push_back({table_, k.name, std::move(type), std::move(value), k.unit, k.doc, variant_});
  }
  std::vector<KeyDoc>& rows_;
  std::string table_, variant_;
};

}  // namespace mor::experiments
