// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/toml_reader.hpp"

#include "experiments/runner/experiment_keys.hpp"
#include "src/io/input_file.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>

namespace mor::experiments {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(a[i - 1]) == std::tolower(b[j - 1]);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// Skips the string starting at text[i] (one of ", ', """, '''), counting its newlines into
/// line; returns the index after it (text.size() if it is not closed).
std::size_t skip_string(std::string_view text, std::size_t i, std::size_t& line) {
  const char quote = text[i];
  const bool triple = text.compare(i, 3, std::string(3, quote)) == 0;
  i += triple ? 3 : 1;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\' && quote == '"') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++line;
      i += 2;
      continue;
    }
    if (c == '\n') {
      if (!triple) return i;  // not closed on its line: the parser says so
      ++line;
    }
    if (c == quote && (!triple || text.compare(i, 3, std::string(3, quote)) == 0))
      return i + (triple ? 3 : 1);
    ++i;
  }
  return i;
}

}  // namespace

TomlNesting toml_nesting(std::string_view text) {
  // One pass over the text, as the parser will read it: keys (bare or quoted) before '=', values
  // after it; a header [a.b] sets the depth of the keys below it; an inline array or table adds
  // a level to what is inside it. Dots count in keys only (1.5 is a number, "a.b" one key).
  struct Open {
    char bracket;
    std::size_t depth;  // an array's elements' depth, or an inline table's own
  };
  std::vector<Open> open;
  TomlNesting deepest;
  std::size_t line = 1, header = 0, dots = 0, value = 0;  // value: the depth of the value read
  bool in_key = true;
  const auto reach = [&](std::size_t depth) {
    if (depth > deepest.depth) deepest = {depth, line};
  };
  const auto key_base = [&] { return open.empty() ? header : open.back().depth; };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      if (open.empty()) {
        in_key = true;
        dots = 0;
      }
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      i = skip_string(text, i, line);
    } else if (in_key && open.empty() && c == '[' && dots == 0) {
      // A table header: [a.b.c] or [[a.b.c]].
      std::size_t parts = 1;
      const bool array = text.compare(i, 2, "[[") == 0;
      for (i += array ? 2 : 1; i < text.size() && text[i] != ']' && text[i] != '\n';) {
        if (text[i] == '"' || text[i] == '\'') {
          i = skip_string(text, i, line);
          continue;
        }
        if (text[i] == '.') ++parts;
        ++i;
      }
      header = parts + (array ? 1 : 0);
      reach(header);
      while (i < text.size() && text[i] == ']') ++i;
    } else if (in_key && c == '.') {
      ++dots;
      reach(key_base() + dots + 1);
      ++i;
    } else if (in_key && c == '=') {
      in_key = false;
      value = key_base() + dots + 1;
      reach(value);
      ++i;
    } else if (c == '[' || c == '{') {
      if (in_key) value = key_base() + dots + 1;  // not valid TOML; counted all the same
      // An array's elements are one deeper than it; an inline table's keys count their parts
      // from the table's own depth, as a header's keys do.
      if (c == '[') ++value;
      open.push_back({c, value});
      reach(value);
      in_key = c == '{';
      dots = 0;
      ++i;
    } else if (c == ']' || c == '}') {
      if (!open.empty()) open.pop_back();
      value = key_base();
      in_key = false;
      ++i;
    } else if (c == ',' && !open.empty()) {
      in_key = open.back().bracket == '{';
      value = open.back().depth;
      dots = 0;
      ++i;
    } else {
      ++i;
    }
  }
  return deepest;
}

void require_toml_nesting_within(std::string_view text, const std::string& source) {
  const TomlNesting n = toml_nesting(text);
  if (n.depth <= kMaxTomlNesting) return;
  throw InvalidArgument(detail::concat(
      source, ":", n.line, ": keys and values nested ", n.depth,
      " deep (dotted key parts, [table] header parts, arrays and inline tables inside each "
      "other) exceed the limit of ",
      kMaxTomlNesting, "; experiment and sweep files need a few levels"));
}

std::string suggestion(const std::string& key, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_d = 3;  // suggest only near misses
  for (const auto& k : known) {
    const std::size_t d = edit_distance(key, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

/// Applies "a.b=value" to the table (value in TOML syntax, or a bare string).
void apply_override(toml::table& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  require(eq != std::string::npos && eq > 0, "override '", assignment,
          "' must look like table.key=value, e.g. model.N=100000");
  std::string path = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
  };
  trim(path);
  trim(value);
  const auto dot = path.find('.');
  require(dot != std::string::npos && dot > 0 && dot + 1 < path.size(), "override '", assignment,
          "': the key must name its table, e.g. model.N");
  const std::string table = path.substr(0, dot), key = path.substr(dot + 1);
  toml::table parsed;
  require_toml_nesting_within("v = " + value, "override '" + assignment.substr(0, 80) + "'");
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    parsed = toml::table{};
    parsed.insert("v", value);  // a bare word such as rk4
  }
  if (!root.contains(table)) root.insert(table, toml::table{});
  toml::table* t = root[table].as_table();
  require(t != nullptr, "override '", assignment, "': '", table, "' is not a table");
  t->insert_or_assign(key, *parsed.get("v"));
}

std::string read_text_file(const std::filesystem::path& file) {
  const io::InputFile input(file, "experiment file");  // a regular file, opened without blocking
  std::ifstream in(input.descriptor_path());
  if (!in) throw IoError(detail::concat("cannot read experiment file '", file.string(), "'"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string toml_text(const toml::node& n) {
  std::ostringstream os;
  n.visit([&](const auto& x) { os << x; });
  return os.str();
}

std::filesystem::path resolve(const std::filesystem::path& p, const std::filesystem::path& base) {
  return p.is_absolute() || p.empty() ? p : base / p;
}

std::string toml_string(const std::string& s) {
  std::ostringstream os;
  os << toml::value<std::string>(s);
  return os.str();
}

std::string located(const std::string& source, const toml::node& n) {
  const auto line = n.source().begin.line;
  return line > 0 ? detail::concat(source, ":", line) : source + " (--set)";
}

void read_experiment_table(TableReader& r, const std::string& source, std::string& name,
                           std::string& description, std::filesystem::path& output) {
  ExperimentTable t;
  t.name = name;
  KeyReader reader(r, "experiment", {});
  t.visit_keys(reader);
  r.finish();
  name = t.name;
  description = t.description;
  output = t.output;
  require(!name.empty(), source, ": experiment.name must not be empty");
  // The name becomes the file results/<name>.h5 and a folder results/<name>_plots: a separator
  // would write outside results/ ("../../x") or make folders ("a/b/c").
  require(name.find_first_of("/\\") == std::string::npos && name != "." && name != "..", source,
          ": experiment.name '", name,
          "' must not contain '/' or '\\' (it names the results file results/<name>.h5); set "
          "experiment.output to write elsewhere");
  require(name.find('\0') == std::string::npos, source,
          ": experiment.name must not contain a NUL character");
  if (output.empty()) output = std::filesystem::path("results") / (name + ".h5");
}

toml::table parse_toml(const std::string& text, const std::string& source) {
  // Before toml++, which recurses once per level and overflows the stack on deep nesting.
  require_toml_nesting_within(text, source);
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw InvalidArgument(
        detail::concat(source, ":", e.source().begin.line, ": not valid TOML: ", e.description()));
  }
}

toml::table parse_root(const std::string& text, const std::string& source,
                       const std::vector<std::string>& overrides,
                       const std::vector<std::string>& tables,
                       const std::vector<std::string>& arrays) {
  return checked_root(parse_toml(text, source), source, overrides, tables, arrays);
}

toml::table checked_root(toml::table root, const std::string& source,
                         const std::vector<std::string>& overrides,
                         const std::vector<std::string>& tables,
                         const std::vector<std::string>& arrays) {
  for (const auto& o : overrides) apply_override(root, o);
  auto listed = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (listed(tables, key) && (node.is_table() || (listed(arrays, key) && node.is_array())))
      continue;
    const std::string near = suggestion(key, tables);
    throw InvalidArgument(
        detail::concat(located(source, node), ": unknown ",
                       node.is_table() ? "table [" + key + "]" : "top-level key '" + key + "'",
                       near.empty() ? "" : "; did you mean [" + near + "]?",
                       " (known tables: ", join(tables), ")"));
  }
  return root;
}

}  // namespace mor::experiments
