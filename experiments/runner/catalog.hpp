// SPDX-License-Identifier: GPL-3.0-or-later
// What `mor` can do, told from the registries and the key declarations themselves: `mor list`
// (model kinds, reduction methods, integrators, input signals) and `mor keys` (every key of
// an experiment file with its type, default, unit and doc; docs/keys.md is its Markdown form,
// and a test keeps the two equal).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace mor::experiments {

/// The lists `mor list` knows: "models", "methods", "measures", "integrators", "inputs".
const std::vector<std::string>& list_topics();

/// Prints one list (or all, topic ""), one entry a line with its doc.
/// @throws InvalidArgument naming an unknown topic and the known ones.
void print_list(const std::string& topic, std::ostream& out);

/// Prints the key reference of one kind of file ("experiment", "multibody", "sweep"; "" for all,
/// or experiment files alone as text without a table) and one of its tables (e.g.
/// "simulation"; "" for all), as aligned text or as the Markdown of docs/keys.md.
/// @throws InvalidArgument naming an unknown kind or table and the known ones.
void print_keys(const std::string& file, const std::string& table, bool markdown,
                std::ostream& out);

}  // namespace mor::experiments
