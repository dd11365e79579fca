// SPDX-License-Identifier: GPL-3.0-or-later
// Import and export of LTI models (see model_files.hpp). Files are read through
// src/io/matrix_files.hpp; this file knows roles, defaults, checks and reports, no file format.
#include "src/io/model_files.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "src/core/errors.hpp"
#include "src/core/memory.hpp"
#include "src/linalg/sparse_solver.hpp"

namespace mor::io {

namespace fs = std::filesystem;
using detail::concat;

namespace {

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string size_text(const SparseMatrix& X) {
  return concat(X.rows(), "x", X.cols());
}

// ---------------------------------------------------------------------------------------------
// Where the matrices come from

/// Named matrices of one model: a MAT file, or MatrixMarket files (prefix and/or listed).
class MatrixSource {
 public:
  virtual ~MatrixSource() = default;
  /// Every name available (for messages).
  virtual std::vector<std::string> names() const = 0;
  virtual bool has(const std::string& name) const = 0;
  virtual MatrixVariable read(const std::string& name) const = 0;
  /// The size name's header declares, before its data is read; nullopt if it cannot tell.
  virtual std::optional<DeclaredShape> shape(const std::string& name) const = 0;
  /// The file that holds name (for messages and the report).
  virtual fs::path where(const std::string& name) const = 0;
  /// The file or prefix, for messages.
  virtual std::string label() const = 0;
  /// How a missing name was looked for.
  virtual std::string looked_for(const std::string& name) const = 0;
};

class MatSource final : public MatrixSource {
 public:
  explicit MatSource(fs::path file) : file_(std::move(file)), names_(mat_variable_names(file_)) {
    std::sort(names_.begin(), names_.end());
  }
  std::vector<std::string> names() const override { return names_; }
  bool has(const std::string& name) const override {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }
  MatrixVariable read(const std::string& name) const override {
    return read_mat_variable(file_, name);
  }
  std::optional<DeclaredShape> shape(const std::string& name) const override {
    return mat_variable_shape(file_, name);
  }
  fs::path where(const std::string&) const override { return file_; }
  std::string label() const override { return file_.string(); }
  std::string looked_for(const std::string& name) const override {
    return concat("variable '", name, "'");
  }

 private:
  fs::path file_;
  std::vector<std::string> names_;
};

class MarketSource final : public MatrixSource {
 public:
  MarketSource(fs::path prefix, std::map<std::string, fs::path> files)
      : prefix_(std::move(prefix)), files_(std::move(files)) {
    std::error_code error;
    if (names().empty() && fs::is_directory(prefix_, error))
      throw IoError(concat("the model path ", quoted(prefix_),
                           " is a directory; name a .mat file, or the prefix of the model's "
                           "MatrixMarket files (",
                           (prefix_ / "rail").string(), " for ", (prefix_ / "rail").string(),
                           ".A.mtx, ", (prefix_ / "rail").string(), ".B.mtx, ...)"));
    if (names().empty())
      throw IoError(concat("no MatrixMarket files for the model prefix ", quoted(prefix_),
                           " (looked for ", prefix_.string(), ".<X>.mtx, ", prefix_.string(),
                           "_<X>.mtx and ", prefix_.string(), ".<X>)"));
  }

  std::vector<std::string> names() const override {
    std::set<std::string> out;
    for (const auto& [name, file] : files_) out.insert(name);
    if (!prefix_.empty()) {
      const fs::path dir = prefix_.has_parent_path() ? prefix_.parent_path() : fs::path(".");
      const std::string stem = prefix_.filename().string();
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string f = it->path().filename().string();
        if (f.size() <= stem.size() + 1 || f.compare(0, stem.size(), stem) != 0) continue;
        if (f[stem.size()] != '.' && f[stem.size()] != '_') continue;
        std::string name = f.substr(stem.size() + 1);
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".mtx") == 0)
          name.resize(name.size() - 4);
        if (!name.empty() && name.find('.') == std::string::npos && has(name)) out.insert(name);
      }
    }
    return {out.begin(), out.end()};
  }
  bool has(const std::string& name) const override { return !where(name).empty(); }
  MatrixVariable read(const std::string& name) const override {
    return read_matrix_market_variable(where(name));
  }
  std::optional<DeclaredShape> shape(const std::string& name) const override {
    return matrix_market_shape(where(name));
  }
  fs::path where(const std::string& name) const override {
    if (const auto it = files_.find(name); it != files_.end()) return it->second;
    // Any entry of the name counts (a FIFO, a dangling link, a link loop): the reader then
    // refuses it by name rather than the model silently going without it.
    for (const auto& candidate : candidates(name)) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(candidate, ec))) return candidate;
    }
    return {};
  }
  std::string label() const override {
    if (!prefix_.empty()) return prefix_.string();
    return files_.empty() ? std::string() : files_.begin()->second.string();
  }
  std::string looked_for(const std::string& name) const override {
    if (prefix_.empty()) return concat("matrix '", name, "' (not listed)");
    std::vector<std::string> c;
    for (const auto& p : candidates(name)) c.push_back(p.string());
    return concat("matrix '", name, "' (", join(c), ")");
  }

 private:
  std::vector<fs::path> candidates(const std::string& name) const {
    if (prefix_.empty()) return {};
    const std::string p = prefix_.string();
    return {p + "." + name + ".mtx", p + "_" + name + ".mtx", p + "." + name};
  }

  fs::path prefix_;
  std::map<std::string, fs::path> files_;
};

/// "the model has: A, B, C", or that it has nothing (an empty list would read as a cut line).
std::string contents(const MatrixSource& source) {
  const std::vector<std::string> names = source.names();
  return names.empty() ? "it has no variables or matrices at all (an empty or damaged file?)"
                       : "the model has: " + join(names);
}

bool has_mat_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".mat";
}

std::unique_ptr<MatrixSource> open_source(const ModelFileSpec& spec) {
  if (spec.path.empty() && spec.files.empty())
    throw InvalidArgument("model file: neither a path nor MatrixMarket files are given");
  if (has_mat_extension(spec.path)) {
    require(spec.files.empty(), "model file ", quoted(spec.path),
            " is a MAT file; MatrixMarket files cannot be listed with it (got ", spec.files.size(),
            ")");
    return std::make_unique<MatSource>(spec.path);
  }
  return std::make_unique<MarketSource>(spec.path, spec.files);
}

// ---------------------------------------------------------------------------------------------
// Roles

struct Role {
  const char* role;
  std::vector<std::string> names;  // default names, in order of preference
  bool required;
};

const std::vector<Role>& first_order_roles() {
  static const std::vector<Role> roles = {{"E", {"E"}, false},
                                          {"A", {"A"}, true},
                                          {"B", {"B"}, true},
                                          {"C", {"C"}, true},
                                          {"D", {"D"}, false}};
  return roles;
}

const std::vector<Role>& second_order_roles() {
  // Names are tried in order: damping D falls back to E, Cp to C; Cp is required unless Cv is
  // given (checked in read_second_order).
  static const std::vector<Role> roles = {{"M", {"M"}, true},         {"D", {"D", "E"}, false},
                                          {"K", {"K"}, true},         {"B", {"B"}, true},
                                          {"Cp", {"Cp", "C"}, false}, {"Cv", {"Cv"}, false}};
  return roles;
}

std::string role_list(const std::vector<Role>& roles) {
  std::vector<std::string> r;
  for (const auto& role : roles) r.emplace_back(role.role);
  return join(r);
}

/// A matrix read for a role (or its absence).
struct Found {
  bool present = false;
  std::string name;
  fs::path source;
  MatrixVariable var;
};

/// First non-finite entry of X as "X(i, j) = v" (1-based), or "" if all are finite.
std::string first_non_finite(const SparseMatrix& X, const std::string& label) {
  for (Index j = 0; j < X.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(X, j); it; ++it)
      if (!std::isfinite(it.value()))
        return concat(label, "(", it.row() + 1, ", ", it.col() + 1, ") = ", it.value());
  return {};
}

class Reader {
 public:
  Reader(const MatrixSource& source, const ModelFileSpec& spec, ModelReport& report)
      : source_(source), spec_(spec), report_(report) {}

  /// Where role is, without reading it: the name given in spec.variables (which must exist) or
  /// the first default name that exists, and its file; name empty if it is absent.
  Found locate(const Role& role) {
    Found f;
    const auto given = spec_.variables.find(role.role);
    if (given != spec_.variables.end()) {
      if (!source_.has(given->second))
        throw InvalidArgument(concat(quoted(source_.label()), ": ",
                                     source_.looked_for(given->second), " given for ", role.role,
                                     " does not exist; ", contents(source_)));
      f.name = given->second;
    } else {
      for (const auto& name : role.names)
        if (source_.has(name)) {
          f.name = name;
          break;
        }
      if (f.name.empty()) {
        if (role.required)
          throw InvalidArgument(concat(quoted(source_.label()), ": ",
                                       source_.looked_for(role.names[0]), " for ", role.role,
                                       " not found; ", contents(source_)));
        return f;
      }
    }
    f.source = source_.where(f.name);
    return f;
  }

  /// The size role's header declares (after locate); nullopt if absent or it cannot tell.
  std::optional<DeclaredShape> shape(const Found& f) const {
    if (f.name.empty()) return std::nullopt;
    return source_.shape(f.name);
  }

  /// Reads a located role (absent: returned as is). An empty 0x0 variable counts as absent.
  Found read(const Role& role, Found f) {
    if (f.name.empty()) return f;
    f.var = source_.read(f.name);
    if (f.var.duplicates_summed > 0)
      report_.warnings.push_back(concat(quoted(f.source), ": ", role.role, " (matrix '", f.name,
                                        "') gives ", f.var.duplicates_summed,
                                        " entries more than once (first ", f.var.first_duplicate,
                                        "); they were summed, as CHOLMOD and scipy do"));
    const SparseMatrix& X = f.var.value;
    if (X.rows() == 0 && X.cols() == 0 && !role.required) {
      report_.defaults.push_back(
          concat(role.role, ": variable '", f.name, "' is empty (0x0), taken as absent"));
      return Found{};
    }
    const std::string bad = first_non_finite(X, f.name);
    if (!bad.empty())
      throw InvalidArgument(concat(quoted(f.source), ": variable '", f.name, "' (", role.role, ", ",
                                   size_text(X), ") has a non-finite entry ", bad,
                                   " (1-based indices)"));
    f.present = true;
    return f;
  }

  std::string label() const { return source_.label(); }

  /// "<file>: B (variable 'B', 371x0)" for messages.
  static std::string what(const Found& f, const char* role) {
    return concat(quoted(f.source), ": ", role, " (variable '", f.name, "', ",
                  size_text(f.var.value), ")");
  }

 private:
  const MatrixSource& source_;
  const ModelFileSpec& spec_;
  ModelReport& report_;
};

void check_variable_keys(const ModelFileSpec& spec, const std::vector<Role>& roles,
                         ModelForm form) {
  for (const auto& variable : spec.variables) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda.
    const std::string& role = variable.first;
    const std::string& name = variable.second;
    const bool known =
        std::any_of(roles.begin(), roles.end(), [&](const Role& r) { return role == r.role; });
    require(known, "model file ", quoted(spec.path), ": unknown role '", role, "' for a ",
            to_string(form), " model (variables = {", role, " = '", name,
            "'}); roles: ", role_list(roles));
  }
}

// ---------------------------------------------------------------------------------------------
// Structure

bool is_identity(const SparseMatrix& X) {
  if (X.rows() != X.cols()) return false;
  for (Index j = 0; j < X.outerSize(); ++j) {
    bool diagonal = false;
    for (SparseMatrix::InnerIterator it(X, j); it; ++it) {
      if (it.row() == j) {
        if (it.value() != 1.0) return false;
        diagonal = true;
      } else if (it.value() != 0.0) {
        return false;
      }
    }
    if (!diagonal) return false;
  }
  return true;
}

SparseMatrix identity(Index n) {
  SparseMatrix I(n, n);
  I.setIdentity();
  return I;
}

/// Fills the report of one role from what was read (or the default X stands for).
MatrixReport report_matrix(const char* role, const Found& f, const SparseMatrix& X,
                           bool check_definite) {
  MatrixReport r;
  r.role = role;
  r.present = f.present;
  r.name = f.name;
  r.source = f.source;
  r.rows = X.rows();
  r.cols = X.cols();
  r.nnz = X.nonZeros();
  r.stored_sparse = f.present ? f.var.stored_sparse : true;
  r.stored_class = f.present ? f.var.stored_class : std::string();
  if (X.rows() == X.cols()) {
    if (X.nonZeros() == 0) {
      r.symmetric = r.symmetric_to_tolerance = true;
    } else {
      const SparseMatrix T = X.transpose();
      const SparseMatrix diff = X - T;
      const double scale =
          Eigen::Map<const Vector>(X.valuePtr(), X.nonZeros()).cwiseAbs().maxCoeff();
      const double asym =
          diff.nonZeros() == 0
              ? 0.0
              : Eigen::Map<const Vector>(diff.valuePtr(), diff.nonZeros()).cwiseAbs().maxCoeff();
      r.symmetric = asym == 0.0;
      r.symmetric_to_tolerance = asym <= 1e-14 * scale;
    }
    if (check_definite && r.symmetric_to_tolerance && X.rows() > 0) {
      if (is_identity(X)) {
        r.positive_definite = Verdict::yes;
      } else {
        SparseMatrix A = X;
        A.makeCompressed();
        auto solver = make_sparse_solver(SparseBackend::cholmod);
        try {
          solver->analyze_pattern(A);
          solver->factorize(A);
          r.positive_definite = Verdict::yes;
        } catch (const NumericalError&) {
          r.positive_definite = Verdict::no;
        }
      }
    }
  }
  return r;
}

/// A located matrix and which of its dimensions must equal n.
struct Want {
  const Found* found;
  const char* role;
  bool rows_n, cols_n;
};

/// The MiB this process may use for reading (0: unknown), the smaller of the hard limit and
/// MemAvailable, and which it is.
std::pair<double, std::string> reading_budget_mib() {
  const MemoryLimits limits = memory_limits();
  if (limits.available_mib > 0 && (limits.hard_mib <= 0 || limits.available_mib < limits.hard_mib))
    return {limits.available_mib, "the memory available now, MemAvailable"};
  return {limits.hard_mib, limits.hard_source};
}

/// Before any matrix is read: the sizes the files' headers declare, each against n (the size
/// the defining matrix, A or M, declares) and their total against the memory this process may
/// use. A 3-line MatrixMarket file declaring 10^9 x 10^9 is refused here by name instead of
/// being allocated (the checks after reading remain for what headers cannot tell).
void check_declared(const Reader& reader, const Found& defining, const char* defining_role,
                    const std::vector<Want>& wants) {
  const auto text = [](const DeclaredShape& s) { return concat(s.rows, "x", s.cols); };
  const auto shape = reader.shape(defining);
  double bytes = shape ? read_bytes(*shape) : 0.0;
  std::string largest = defining.name.empty() ? "" : defining_role;
  double largest_bytes = bytes;
  const bool have_n = shape && shape->rows == shape->cols;
  const Index n = have_n ? shape->rows : 0;
  for (const Want& w : wants) {
    const auto s = reader.shape(*w.found);
    if (!s || (s->rows == 0 && s->cols == 0)) continue;  // absent, or empty: taken as absent
    const std::string what = concat(quoted(w.found->source), ": ", w.role, " (variable '",
                                    w.found->name, "', declared ", text(*s), ")");
    if (have_n && ((w.rows_n && s->rows != n) || (w.cols_n && s->cols != n)))
      throw InvalidArgument(concat(
          what,
          w.rows_n && w.cols_n ? concat(" must be n x n = ", n, "x", n)
                               : concat(" must have n = ", n, w.rows_n ? " rows" : " columns"),
          " (", defining_role, " '", defining.name, "' is ", text(*shape), "); nothing was read"));
    const double b = read_bytes(*s);
    bytes += b;
    if (b > largest_bytes) {
      largest_bytes = b;
      largest = w.role;
    }
  }
  const auto [budget, source] = reading_budget_mib();
  const double mib = bytes / (1024.0 * 1024.0);
  if (budget > 0 && mib > budget)
    throw IoError(concat(quoted(reader.label()),
                         ": the model's matrices as their files declare "
                         "them need about ",
                         std::llround(mib), " MiB to read (", largest, " the most), more than the ",
                         std::llround(budget), " MiB this process may use (", source,
                         "); nothing was read"));
}

void require_square(const Found& f, const char* role) {
  require(f.var.value.rows() == f.var.value.cols(), Reader::what(f, role), " must be square");
}

// ---------------------------------------------------------------------------------------------
// The two forms

DescriptorSystem read_first_order(const MatrixSource& source, const ModelFileSpec& spec,
                                  ModelReport& report) {
  check_variable_keys(spec, first_order_roles(), ModelForm::first_order);
  Reader reader(source, spec, report);
  const auto& roles = first_order_roles();
  Found E = reader.locate(roles[0]), A = reader.locate(roles[1]), B = reader.locate(roles[2]),
        C = reader.locate(roles[3]), D = reader.locate(roles[4]);
  check_declared(reader, A, "A",
                 {{&E, "E", true, true},
                  {&B, "B", true, false},
                  {&C, "C", false, true},
                  {&D, "D", false, false}});
  A = reader.read(roles[1], std::move(A));
  E = reader.read(roles[0], std::move(E));
  B = reader.read(roles[2], std::move(B));
  C = reader.read(roles[3], std::move(C));
  D = reader.read(roles[4], std::move(D));

  require_square(A, "A");
  const Index n = A.var.value.rows();
  require(n >= 1, Reader::what(A, "A"), ": the model has no states (n = 0)");
  if (E.present)
    require(E.var.value.rows() == n && E.var.value.cols() == n, Reader::what(E, "E"),
            " must be n x n = ", n, "x", n, " (the size of A)");
  require(B.var.value.rows() == n, Reader::what(B, "B"), " must have n = ", n, " rows (A is ", n,
          "x", n, ")");
  require(B.var.value.cols() >= 1, Reader::what(B, "B"), ": the model has no inputs");
  require(C.var.value.cols() == n, Reader::what(C, "C"), " must have n = ", n, " columns (A is ", n,
          "x", n, ")");
  require(C.var.value.rows() >= 1, Reader::what(C, "C"), ": the model has no outputs");
  const Index m = B.var.value.cols(), p = C.var.value.rows();
  if (D.present)
    require(D.var.value.rows() == p && D.var.value.cols() == m, Reader::what(D, "D"),
            " must be p x m = ", p, "x", m, " (C has ", p, " rows, B has ", m, " columns)");

  DescriptorSystem sys;
  sys.E = E.present ? std::move(E.var.value) : identity(n);
  sys.A = std::move(A.var.value);
  sys.B = std::move(B.var.value);
  sys.C = std::move(C.var.value);
  sys.D_ff = D.present ? Matrix(D.var.value) : Matrix::Zero(p, m);
  for (SparseMatrix* X : {&sys.E, &sys.A, &sys.B, &sys.C}) X->makeCompressed();

  report.form = ModelForm::first_order;
  report.n = n;
  report.m = m;
  report.p = p;
  report.E_is_identity = !E.present || is_identity(sys.E);
  if (!E.present) report.defaults.emplace_back("E: absent, the identity is used");
  if (!D.present) report.defaults.emplace_back("D: absent, zero feed-through is used");
  report.matrices.push_back(report_matrix("E", E, sys.E, true));
  report.matrices.push_back(report_matrix("A", A, sys.A, false));
  report.matrices.push_back(report_matrix("B", B, sys.B, false));
  report.matrices.push_back(report_matrix("C", C, sys.C, false));
  report.matrices.push_back(report_matrix("D", D, SparseMatrix(sys.D_ff.sparseView()), false));
  return sys;
}

SecondOrderSystem read_second_order(const MatrixSource& source, const ModelFileSpec& spec,
                                    ModelReport& report) {
  check_variable_keys(spec, second_order_roles(), ModelForm::second_order);
  Reader reader(source, spec, report);
  const auto& roles = second_order_roles();
  Found M = reader.locate(roles[0]), D = reader.locate(roles[1]), K = reader.locate(roles[2]),
        B = reader.locate(roles[3]), Cp = reader.locate(roles[4]), Cv = reader.locate(roles[5]);
  check_declared(reader, M, "M",
                 {{&D, "D", true, true},
                  {&K, "K", true, true},
                  {&B, "B", true, false},
                  {&Cp, "Cp", false, true},
                  {&Cv, "Cv", false, true}});
  M = reader.read(roles[0], std::move(M));
  D = reader.read(roles[1], std::move(D));
  K = reader.read(roles[2], std::move(K));
  B = reader.read(roles[3], std::move(B));
  Cp = reader.read(roles[4], std::move(Cp));
  Cv = reader.read(roles[5], std::move(Cv));

  require_square(M, "M");
  const Index n = M.var.value.rows();
  require(n >= 1, Reader::what(M, "M"), ": the model has no coordinates (n = 0)");
  for (const auto& [f, role] : {std::pair{&D, "D"}, std::pair{&K, "K"}})
    if (f->present)
      require(f->var.value.rows() == n && f->var.value.cols() == n, Reader::what(*f, role),
              " must be n x n = ", n, "x", n, " (the size of M)");
  require(B.var.value.rows() == n, Reader::what(B, "B"), " must have n = ", n, " rows (M is ", n,
          "x", n, ")");
  require(B.var.value.cols() >= 1, Reader::what(B, "B"), ": the model has no inputs");
  require(Cp.present || Cv.present, quoted(source.label()),
          ": no output matrix (looked for Cp, C and Cv); ", contents(source));
  for (const auto& [f, role] : {std::pair{&Cp, "Cp"}, std::pair{&Cv, "Cv"}})
    if (f->present) {
      require(f->var.value.cols() == n, Reader::what(*f, role), " must have n = ", n,
              " columns (M is ", n, "x", n, ")");
      require(f->var.value.rows() >= 1, Reader::what(*f, role), ": the model has no outputs");
    }
  if (Cp.present && Cv.present)
    require(Cp.var.value.rows() == Cv.var.value.rows(), Reader::what(Cv, "Cv"),
            " must have as many rows as Cp (", Cp.var.value.rows(), ", variable '", Cp.name, "')");
  const Index m = B.var.value.cols(), p = Cp.present ? Cp.var.value.rows() : Cv.var.value.rows();

  if (D.present && D.name == "E" && spec.variables.count("D") == 0)
    report.warnings.emplace_back(
        "damping D taken from the variable 'E' (the MORwiki/Oberwolfach second-order files name "
        "damping E; there is no variable 'D')");
  if (!D.present) report.warnings.emplace_back("no damping matrix (D or E): D = 0, undamped");
  if (Cp.present && Cp.name == "C" && spec.variables.count("Cp") == 0)
    report.defaults.emplace_back("Cp: taken from the variable 'C'");
  if (!Cp.present) report.defaults.emplace_back("Cp: absent, zero (velocity output only)");
  if (!Cv.present) report.defaults.emplace_back("Cv: absent, zero (position output only)");

  SecondOrderSystem sys;
  sys.M = std::move(M.var.value);
  if (D.present) {
    sys.D = std::move(D.var.value);
  } else {
    sys.D.resize(n, n);
  }
  sys.K = std::move(K.var.value);
  sys.B = std::move(B.var.value);
  if (Cp.present) {
    sys.Cp = std::move(Cp.var.value);
  } else {
    sys.Cp.resize(p, n);
  }
  if (Cv.present) {
    sys.Cv = std::move(Cv.var.value);
  } else {
    sys.Cv.resize(p, n);
  }
  for (SparseMatrix* X : {&sys.M, &sys.D, &sys.K, &sys.B, &sys.Cp, &sys.Cv}) X->makeCompressed();

  report.form = ModelForm::second_order;
  report.n = n;
  report.m = m;
  report.p = p;
  report.matrices.push_back(report_matrix("M", M, sys.M, true));
  report.matrices.push_back(report_matrix("D", D, sys.D, false));
  report.matrices.push_back(report_matrix("K", K, sys.K, false));
  report.matrices.push_back(report_matrix("B", B, sys.B, false));
  report.matrices.push_back(report_matrix("Cp", Cp, sys.Cp, false));
  report.matrices.push_back(report_matrix("Cv", Cv, sys.Cv, false));
  return sys;
}

// ---------------------------------------------------------------------------------------------
// Nonsingularity

void check_nonsingular_matrix(const SparseMatrix& X, const char* role, const std::string& file) {
  const Index n = X.rows();
  require(n >= 1 && X.cols() == n, quoted(file), ": ", role, " is ", size_text(X),
          ", expected a nonempty square matrix");
  if (is_identity(X)) return;
  const auto singular = [&](const std::string& why) {
    return InvalidArgument(concat(quoted(file), ": ", role,
                                  " is singular (a differential-algebraic system, e.g. an index-3 "
                                  "constrained model): methods for ODE systems cannot use it (",
                                  role, " is ", n, "x", n, "; ", why, ")"));
  };
  SparseMatrix A = X;
  A.prune(0.0);
  A.makeCompressed();
  // A column without a nonzero entry (E all zeros among them) is singular by its structure;
  // KLU would only say "klu_analyze failed" for an empty matrix.
  for (Index j = 0; j < n; ++j)
    if (A.outerIndexPtr()[j + 1] == A.outerIndexPtr()[j])
      throw singular(concat("its column ", j + 1, " (1-based) has no nonzero entry",
                            A.nonZeros() == 0 ? "; it is all zeros" : ""));
  auto lu = make_sparse_solver(SparseBackend::klu);
  try {
    lu->analyze_pattern(A);
    lu->factorize(A);
  } catch (const NumericalError& e) {
    // The solver names its matrix "A" and counts columns from 0: say which matrix it is.
    std::string why = e.what();
    for (std::size_t at = why.find(" of A "); at != std::string::npos; at = why.find(" of A "))
      why.replace(at, 6, concat(" of ", role, " (counting from 0) "));
    throw singular(concat("an exactly zero pivot in its sparse LU factorization; ", why));
  }
  // ||A^{-1} b||_1 / ||b||_1 <= ||A^{-1}||_1, so this underestimates cond_1(A); a random sign
  // vector excites the smallest singular directions well enough to catch rounding-level pivots.
  std::mt19937 gen(20240601u);
  std::bernoulli_distribution coin(0.5);
  Vector b(n), x;
  for (Index i = 0; i < n; ++i) b(i) = coin(gen) ? 1.0 : -1.0;
  lu->solve(b, x);
  double norm1 = 0.0;
  for (Index j = 0; j < A.outerSize(); ++j) {
    double column = 0.0;
    for (SparseMatrix::InnerIterator it(A, j); it; ++it) column += std::abs(it.value());
    norm1 = std::max(norm1, column);
  }
  const double estimate = norm1 * x.lpNorm<1>() / b.lpNorm<1>();
  if (!std::isfinite(estimate) || estimate > 1e14)
    throw singular(concat("numerically: the estimate of its 1-norm condition number is ", estimate,
                          " > 1e14"));
}

// ---------------------------------------------------------------------------------------------
// Export

MatrixValue as_stored(const SparseMatrix& X) {
  if (2 * X.nonZeros() >= X.rows() * X.cols() && X.size() > 0) return Matrix(X);
  return X;
}

void write_all(const fs::path& out, std::vector<NamedMatrix> vars,
               const std::vector<NamedMatrix>& extras, ModelFileFormat format) {
  std::set<std::string> names;
  for (const auto& v : vars) names.insert(v.name);
  for (const auto& e : extras) {
    require(names.insert(e.name).second, "cannot export to ", quoted(out), ": the extra matrix '",
            e.name, "' has the name of another variable");
    vars.push_back(e);
  }
  switch (format) {
    case ModelFileFormat::mat_v5:
      write_mat(out, vars, MatVersion::v5);
      return;
    case ModelFileFormat::mat_v73:
      write_mat(out, vars, MatVersion::v73);
      return;
    case ModelFileFormat::matrix_market: {
      require(!out.empty() && !out.filename().empty(),
              "cannot export MatrixMarket files: the prefix ", quoted(out),
              " has no file name part");
      std::vector<std::pair<fs::path, MatrixValue>> files;
      for (auto& v : vars) {
        // The same names as a MAT file (checked by write_mat there), so both formats agree.
        const bool valid = !v.name.empty() && std::isalpha(static_cast<unsigned char>(v.name[0])) &&
                           std::all_of(v.name.begin(), v.name.end(),
                                       [](unsigned char c) { return std::isalnum(c) || c == '_'; });
        require(valid, "cannot export to ", quoted(out), ": '", v.name,
                "' is not a valid matrix name (a letter, then letters, digits or '_')");
        files.emplace_back(out.string() + "." + v.name + ".mtx", std::move(v.value));
      }
      write_matrix_market_files(files);
      return;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string_view to_string(ModelForm form) {
  switch (form) {
    case ModelForm::automatic:
      return "automatic";
    case ModelForm::first_order:
      return "first_order";
    case ModelForm::second_order:
      return "second_order";
  }
  return "unknown";
}

ModelForm parse_model_form(std::string_view name) {
  for (const auto f : {ModelForm::automatic, ModelForm::first_order, ModelForm::second_order})
    if (name == to_string(f)) return f;
  throw InvalidArgument(
      concat("unknown model form '", name, "'; accepted: automatic, first_order, second_order"));
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::yes:
      return "yes";
    case Verdict::no:
      return "no";
    case Verdict::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view to_string(ModelFileFormat format) {
  switch (format) {
    case ModelFileFormat::mat_v5:
      return "mat";
    case ModelFileFormat::mat_v73:
      return "mat73";
    case ModelFileFormat::matrix_market:
      return "mtx";
  }
  return "unknown";
}

ModelFileFormat parse_model_file_format(std::string_view name) {
  for (const auto f :
       {ModelFileFormat::mat_v5, ModelFileFormat::mat_v73, ModelFileFormat::matrix_market})
    if (name == to_string(f)) return f;
  throw InvalidArgument(
      concat("unknown model file format '", name, "'; accepted: mat, mat73, mtx"));
}

const MatrixReport* ModelReport::find(std::string_view role) const {
  for (const auto& m : matrices)
    if (m.role == role) return &m;
  return nullptr;
}

ImportedModel import_model(const ModelFileSpec& spec) {
  const std::unique_ptr<MatrixSource> source = open_source(spec);
  ModelReport report;
  report.file = source->label();
  ModelForm form = spec.form;
  if (form == ModelForm::automatic) {
    const auto name = [&](const char* role) {
      const auto it = spec.variables.find(role);
      return it != spec.variables.end() ? it->second : std::string(role);
    };
    const bool has_a = source->has(name("A")), has_m = source->has(name("M")),
               has_k = source->has(name("K"));
    if (has_a) {
      form = ModelForm::first_order;
      if (has_m && has_k)
        report.warnings.emplace_back(
            "the file has A and also M and K: read as first order (set form = second_order for "
            "M, D, K)");
    } else if (has_m && has_k) {
      form = ModelForm::second_order;
    } else {
      throw InvalidArgument(concat(quoted(source->label()),
                                   ": neither a first-order model (no A) nor a second-order one "
                                   "(needs M and K); ",
                                   contents(*source)));
    }
  }
  ImportedModel model;
  if (form == ModelForm::first_order)
    model.system = read_first_order(*source, spec, report);
  else
    model.system = read_second_order(*source, spec, report);
  model.report = std::move(report);
  return model;
}

namespace {

bool is_parameter_name(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

}  // namespace

std::vector<AffineTerm> find_affine_terms(const ModelFileSpec& spec, const ModelReport& report) {
  const std::unique_ptr<MatrixSource> source = open_source(spec);
  const std::vector<std::string> names = source->names();
  std::vector<AffineTerm> out;
  for (const MatrixReport& m : report.matrices) {
    if (!m.present || m.name.empty()) continue;
    const std::string prefix = m.name + "_";
    for (const std::string& name : names)
      if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
          is_parameter_name(name.substr(prefix.size())))
        out.push_back({m.role, name.substr(prefix.size()), name, {}});
  }
  std::sort(out.begin(), out.end(), [](const AffineTerm& a, const AffineTerm& b) {
    return std::tie(a.role, a.parameter) < std::tie(b.role, b.parameter);
  });
  return out;
}

void read_affine_terms(const ModelFileSpec& spec, const ModelReport& report,
                       std::vector<AffineTerm>& terms) {
  const std::unique_ptr<MatrixSource> source = open_source(spec);
  for (AffineTerm& t : terms) {
    const MatrixReport* role = report.find(t.role);
    require(role != nullptr, "internal: affine term ", t.variable, " of a role (", t.role,
            ") the model does not have");
    const fs::path where = source->where(t.variable);
    MatrixVariable var = source->read(t.variable);
    const SparseMatrix& X = var.value;
    require(X.rows() == role->rows && X.cols() == role->cols, quoted(where), ": the affine term '",
            t.variable, "' of ", t.role, " (parameter ", t.parameter, ") is ", size_text(X), ", ",
            t.role, " ('", role->name, "') is ", role->rows, "x", role->cols);
    const std::string bad = first_non_finite(X, t.variable);
    require(bad.empty(), quoted(where), ": the affine term '", t.variable,
            "' has a non-finite entry ", bad, " (1-based indices)");
    t.value = std::move(var.value);
  }
}

ImportedNetwork import_network(const ModelFileSpec& spec) {
  // The linear part through import_model, the element roles G and phi read here.
  ModelFileSpec linear = spec;
  linear.form = ModelForm::second_order;
  linear.variables.erase("G");
  linear.variables.erase("phi");
  ImportedModel imported = import_model(linear);
  ImportedNetwork net;
  net.system = std::move(std::get<SecondOrderSystem>(imported.system));
  net.report = std::move(imported.report);
  const Index n = net.system.n();
  const std::unique_ptr<MatrixSource> source = open_source(spec);
  ModelReport scratch;
  Reader reader(*source, spec, scratch);
  const Role g_role{"G", {"G"}, false}, phi_role{"phi", {"phi"}, false};
  Found g = reader.locate(g_role), phi = reader.locate(phi_role);
  // The declared sizes first, as for the linear roles: a tiny file claiming a huge G or phi is
  // refused before anything is allocated.
  const auto declared_g = reader.shape(g), declared_phi = reader.shape(phi);
  if (declared_g && (declared_g->rows != 0 || declared_g->cols != 0))
    require(declared_g->cols == n, quoted(g.source), ": G (variable '", g.name, "', declared ",
            declared_g->rows, "x", declared_g->cols, ") must have n = ", n,
            " columns (the size of M); nothing was read");
  if (declared_phi && (declared_phi->rows != 0 || declared_phi->cols != 0)) {
    require(declared_phi->cols == 4, quoted(phi.source), ": phi (variable '", phi.name,
            "', declared ", declared_phi->rows, "x", declared_phi->cols,
            ") must have 4 columns (the coefficients of s^2, s^3, s^4, s^5); nothing was read");
    if (declared_g)
      require(declared_phi->rows == 1 || declared_phi->rows == declared_g->rows, quoted(phi.source),
              ": phi (variable '", phi.name, "', declared ", declared_phi->rows,
              "x4) must have 1 or m = ", declared_g->rows,
              " rows (the rows of G); nothing was read");
  }
  // What the elements G declares need to build (a MatrixMarket G declaring 10^9 rows got
  // "CHOLMOD status -2"), against the memory, before G is read.
  if (declared_g && declared_g->rows > 0) {
    const double mib = (kNetworkBuildBytesPerElement * static_cast<double>(declared_g->rows) +
                        read_bytes(*declared_g)) /
                       (1024.0 * 1024.0);
    const auto [budget, budget_source] = reading_budget_mib();
    if (budget > 0 && mib > budget)
      throw IoError(concat(quoted(g.source), ": G (variable '", g.name, "', declared ",
                           declared_g->rows, "x", declared_g->cols, ") declares m = ",
                           declared_g->rows, " elements; building the network needs about ",
                           std::llround(mib), " MiB, more than the ", std::llround(budget),
                           " MiB this process may use (", budget_source, "); nothing was read"));
  }
  g = reader.read(g_role, std::move(g));
  phi = reader.read(phi_role, std::move(phi));
  require(g.present == phi.present, quoted(source->label()), ": a network needs both G and phi (",
          g.present ? "phi" : "G", " is missing); neither for a linear model");
  if (!g.present) {
    net.G.resize(0, n);
    net.phi.resize(0, 4);
    return net;
  }
  net.G = g.var.value;
  net.phi = Matrix(phi.var.value);
  const Index m = net.G.rows();
  require(net.G.cols() == n, Reader::what(g, "G"), " has ", net.G.cols(),
          " columns, expected n = ", n, " (the size of M)");
  // Every element acts on some coordinate: an empty row of G is an element that never acts
  // (s_e = 0), and a file that claims many costs what the claim says (a 2.9 KB .mat whose G
  // declared 2e8 rows over 20 entries took 7.8 GB to build). Judged by what the file holds.
  const Index stored = net.G.nonZeros();
  require(stored >= m, Reader::what(g, "G"), " declares m = ", m, " elements (rows) but stores ",
          stored, " entries: at least ", m - stored,
          " of its rows are empty, elements that act on no coordinate; every row of G needs an "
          "entry");
  std::vector<bool> acts(static_cast<std::size_t>(m), false);
  for (Index k = 0; k < net.G.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(net.G, k); it; ++it)
      acts[static_cast<std::size_t>(it.row())] = true;
  const auto idle = std::find(acts.begin(), acts.end(), false);
  require(idle == acts.end(), Reader::what(g, "G"), ": row ", idle - acts.begin() + 1,
          " (1-based) is empty, an element that acts on no coordinate; every row of G needs an "
          "entry");
  require(net.phi.cols() == 4, Reader::what(phi, "phi"), " has ", net.phi.cols(),
          " columns, expected 4 (the coefficients of s^2, s^3, s^4, s^5)");
  require(net.phi.rows() == m || net.phi.rows() == 1, Reader::what(phi, "phi"), " has ",
          net.phi.rows(), " rows, expected 1 or m = ", m, " (the rows of G)");
  net.report.matrices.push_back(report_matrix("G", g, net.G, false));
  net.report.matrices.push_back(report_matrix("phi", phi, phi.var.value, false));
  return net;
}

std::string describe(const ModelReport& r) {
  std::ostringstream os;
  os << (r.form == ModelForm::second_order ? "second-order" : "first-order") << " model from '"
     << r.file << "': n = " << r.n << ", m = " << r.m << ", p = " << r.p << "\n";
  for (const auto& x : r.matrices) {
    os << "  " << x.role << std::string(x.role.size() < 3 ? 3 - x.role.size() : 0, ' ');
    if (!x.present) {
      os << (x.role == "E" && r.form == ModelForm::first_order ? "absent: identity"
                                                               : "absent: zero")
         << " (" << x.rows << "x" << x.cols << ")\n";
      continue;
    }
    os << x.rows << "x" << x.cols << " " << (x.stored_sparse ? "sparse" : "dense") << " "
       << x.stored_class << ", nnz " << x.nnz;
    if (x.name != x.role) os << ", variable '" << x.name << "'";
    if (x.rows == x.cols) {
      os << (x.symmetric                ? ", symmetric"
             : x.symmetric_to_tolerance ? ", symmetric to 1e-14"
                                        : ", not symmetric");
      if (x.positive_definite != Verdict::unknown)
        os << (x.positive_definite == Verdict::yes ? ", positive definite"
                                                   : ", not positive definite");
      if (x.role == "E" && r.E_is_identity) os << ", identity";
    }
    os << "\n";
  }
  for (const auto& d : r.defaults) os << "  default: " << d << "\n";
  for (const auto& w : r.warnings) os << "  warning: " << w << "\n";
  return os.str();
}

void check_nonsingular(const DescriptorSystem& sys, const std::string& file) {
  check_nonsingular_matrix(sys.E, "E", file);
}

void check_nonsingular(const SecondOrderSystem& sys, const std::string& file) {
  check_nonsingular_matrix(sys.M, "M", file);
  // A symmetric M is factorized by Cholesky for the integrators and the methods: a mass
  // matrix that is not positive definite (M = -I, a sign error) is named here, with the file,
  // rather than as "nonpositive pivot at column 0 of A" when the run starts.
  const SparseMatrix T = sys.M.transpose();
  if ((sys.M - T).norm() != 0.0 || is_identity(sys.M)) return;
  SparseMatrix M = sys.M;
  M.makeCompressed();
  auto cholesky = make_sparse_solver(SparseBackend::cholmod);
  try {
    cholesky->analyze_pattern(M);
    cholesky->factorize(M);
  } catch (const NumericalError& e) {
    // The solver's message names the failing column of "A", counting from 0.
    const std::string why = e.what();
    const auto at = why.find("at column ");
    const Index j = std::clamp<Index>(
        at == std::string::npos ? 0 : std::atol(why.c_str() + at + 10), 0, sys.M.rows() - 1);
    throw InvalidArgument(concat(quoted(file), ": the mass matrix M (", size_text(sys.M),
                                 ") is symmetric but not positive definite, as a mass matrix "
                                 "must be: its Cholesky factorization fails at column ",
                                 j + 1, " (1-based), where M(", j + 1, ", ", j + 1,
                                 ") = ", sys.M.coeff(j, j)));
  }
}

void export_model(const fs::path& out, const DescriptorSystem& sys, ModelFileFormat format,
                  const std::vector<NamedMatrix>& extras) {
  validate(sys);
  write_all(out,
            {{"E", sys.E},
             {"A", sys.A},
             {"B", as_stored(sys.B)},
             {"C", as_stored(sys.C)},
             {"D", sys.D_ff}},
            extras, format);
}

void export_model(const fs::path& out, const SecondOrderSystem& sys, ModelFileFormat format,
                  const std::vector<NamedMatrix>& extras) {
  validate(sys);
  write_all(out,
            {{"M", sys.M},
             {"D", sys.D},
             {"K", sys.K},
             {"B", as_stored(sys.B)},
             {"Cp", as_stored(sys.Cp)},
             {"Cv", as_stored(sys.Cv)}},
            extras, format);
}

void export_matrices(const fs::path& out, const std::vector<NamedMatrix>& matrices,
                     ModelFileFormat format) {
  write_all(out, {}, matrices, format);
}

}  // namespace mor::io
