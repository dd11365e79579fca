// SPDX-License-Identifier: GPL-3.0-or-later
// The in-memory record (record.hpp): a list of nodes under normalised paths, with the rules of
// the results file's writer.
#include "src/io/record.hpp"

#include <utility>

#include "src/core/errors.hpp"

namespace mor::io {

namespace {

/// "/a/b" for "a/b", "/a/b/", "//a//b"; "/" for the root.
std::string normalised(const std::string& path, const char* what) {
  require(!path.empty(), what, ": empty path");
  std::string out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const std::size_t j = path.find('/', i);
    const std::string part = path.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (!part.empty()) out += "/" + part;
    i = j == std::string::npos ? path.size() : j;
  }
  return out.empty() ? "/" : out;
}

std::string parent_of(const std::string& path) {
  const std::size_t k = path.rfind('/');
  return k == 0 ? "/" : path.substr(0, k);
}

}  // namespace

Record::Record() {
  nodes_.push_back(Node{"/", true, {}, {}});
}

const Record::Node* Record::find(const std::string& path) const {
  const std::string p = normalised(path, "Record::find");
  for (const Node& n : nodes_)
    if (n.path == p) return &n;
  return nullptr;
}

Record::Node* Record::find_mutable(const std::string& path) {
  for (Node& n : nodes_)
    if (n.path == path) return &n;
  return nullptr;
}

void Record::create_group(const std::string& path) {
  const std::string p = normalised(path, "Record::create_group");
  if (const Node* n = find_mutable(p)) {
    if (n->group) return;
    throw IoError(detail::concat("cannot create group '", p, "': a dataset is in the way"));
  }
  create_group(parent_of(p));
  nodes_.push_back(Node{p, true, {}, {}});
}

void Record::set_attribute(const std::string& object_path, const std::string& name,
                           const AttributeValue& value) {
  const std::string p = normalised(object_path, "Record::set_attribute");
  require(!name.empty(), "Record::set_attribute on '", p, "': empty attribute name");
  Node* n = find_mutable(p);
  if (n == nullptr)
    throw IoError(detail::concat("cannot set attribute '", name, "': no object '", p, "'"));
  for (auto& [key, v] : n->attributes)
    if (key == name) {
      v = value;
      return;
    }
  n->attributes.emplace_back(name, value);
}

void Record::add_dataset(const std::string& path, Data data) {
  const std::string p = normalised(path, "Record: dataset");
  require(p != "/", "Record: a dataset cannot be the root");
  if (find_mutable(p) != nullptr)
    throw IoError(detail::concat("cannot write dataset '", p, "': the path exists"));
  create_group(parent_of(p));
  nodes_.push_back(Node{p, false, std::move(data), {}});
}

void Record::write_vector(const std::string& path, const Vector& v) {
  add_dataset(path, v);
}
void Record::write_matrix(const std::string& path, const Matrix& A) {
  add_dataset(path, A);
}
void Record::write_integers(const std::string& path, const std::vector<std::int64_t>& v) {
  add_dataset(path, v);
}
void Record::write_strings(const std::string& path, const std::vector<std::string>& v) {
  add_dataset(path, v);
}

void write_record(RecordSink& out, const Record& r) {
  for (const Record::Node& n : r.nodes()) {
    if (n.group) {
      if (n.path != "/") out.create_group(n.path);
    } else if (const auto* v = std::get_if<Vector>(&n.data)) {
      out.write_vector(n.path, *v);
    } else if (const auto* A = std::get_if<Matrix>(&n.data)) {
      out.write_matrix(n.path, *A);
    } else if (const auto* k = std::get_if<std::vector<std::int64_t>>(&n.data)) {
      out.write_integers(n.path, *k);
    } else if (const auto* s = std::get_if<std::vector<std::string>>(&n.data)) {
      out.write_strings(n.path, *s);
    }
    for (const auto& [name, value] : n.attributes) out.set_attribute(n.path, name, value);
  }
}

}  // namespace mor::io
