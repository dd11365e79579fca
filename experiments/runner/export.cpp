// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/export.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <utility>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/parametric_store.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/run_guards.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/version.hpp"
#include "src/io/contained.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/matrix_stream.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

namespace fs = std::filesystem;

/// What marks a file as written by mor export: the text of a MAT file's header, the comment line
/// after a MatrixMarket file's banner.
constexpr const char* kMarker = "written by mor export";

std::string quoted(const fs::path& p) {
  return concat("'", p.string(), "'");
}

/// Whether file is a MatrixMarket file an export wrote: the banner, then the marker comment.
bool is_marked_matrix_market(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string banner, comment;
  const auto line = [&](std::string& to) {
    to.clear();
    for (char c; to.size() < 256 && in.get(c) && c != '\n';) to += c;
  };
  line(banner);
  line(comment);
  return banner.rfind("%%MatrixMarket", 0) == 0 && comment.rfind("%", 0) == 0 &&
         comment.find(kMarker) != std::string::npos;
}

/// The files of the export to out: the .mat file, or out.<name>.mtx for each name.
std::vector<fs::path> targets(const std::vector<io::NamedMatrix>& vars, ExportFormat format,
                              const fs::path& out) {
  if (format != ExportFormat::mtx) return {out};
  std::vector<fs::path> files;
  for (const auto& v : vars) files.push_back(out.string() + "." + v.name + ".mtx");
  return files;
}

std::vector<fs::path> write(const std::vector<io::NamedMatrix>& vars, ExportFormat format,
                            const fs::path& out) {
  io::StagedFiles staged = stage_export(vars, format, out);
  return commit_export(staged, format, out);
}

std::vector<io::NamedMatrix> named(const LinearSystem& sys) {
  if (const auto* d = std::get_if<DescriptorSystem>(&sys))
    return {{"E", d->E}, {"A", d->A}, {"B", d->B}, {"C", d->C}, {"D", d->D_ff}};
  const auto& s = std::get<SecondOrderSystem>(sys);
  return {{"M", s.M}, {"D", s.D}, {"K", s.K}, {"B", s.B}, {"Cp", s.Cp}, {"Cv", s.Cv}};
}

/// X = the constant terms and X_<name> = the terms in the parameter <name> alone, as model files
/// hold them (experiments/runner/models/file.cpp reads them back).
template <class T>
void add_affine(std::vector<io::NamedMatrix>& vars, const std::string& role,
                const AffineOperator<T>& op, const ParameterDomain& d) {
  const T& first = op.terms.at(0).value;
  T base = first;
  base.setZero();
  std::vector<std::optional<T>> by_parameter(static_cast<std::size_t>(d.size()));
  for (const auto& t : op.terms) {
    require(t.theta.factors.size() <= 1, "mor export: the term of ", role, " in ",
            d.factor_names(t.theta.factors),
            " is a product of parameters; a model file holds X + sum_name mu_name X_<name> (one "
            "parameter a term): leave one of them out of [parameters]");
    if (t.theta.factors.empty()) {
      base += t.theta.scale * t.value;
    } else {
      auto& slot = by_parameter[static_cast<std::size_t>(t.theta.factors[0])];
      if (!slot)
        slot = T(t.theta.scale * t.value);
      else
        *slot += t.theta.scale * t.value;
    }
  }
  vars.push_back({role, base});
  for (Index j = 0; j < d.size(); ++j)
    if (const auto& slot = by_parameter[static_cast<std::size_t>(j)])
      vars.push_back({role + "_" + d.parameters()[static_cast<std::size_t>(j)].name, *slot});
}

std::vector<io::NamedMatrix> named_affine(const ParametricLinearSystem& sys,
                                          const ParameterDomain& d) {
  std::vector<io::NamedMatrix> vars;
  if (const auto* f = std::get_if<ParametricDescriptorSystem>(&sys)) {
    add_affine(vars, "E", f->E, d);
    add_affine(vars, "A", f->A, d);
    add_affine(vars, "B", f->B, d);
    add_affine(vars, "C", f->C, d);
    add_affine(vars, "D", f->D_ff, d);
    return vars;
  }
  const auto& s = std::get<ParametricSecondOrderSystem>(sys);
  add_affine(vars, "M", s.M, d);
  add_affine(vars, "D", s.D, d);
  add_affine(vars, "K", s.K, d);
  add_affine(vars, "B", s.B, d);
  add_affine(vars, "Cp", s.Cp, d);
  add_affine(vars, "Cv", s.Cv, d);
  return vars;
}

}  // namespace

void check_reduced_model_shapes(const io::ResultsReader& r) {
  // Dims only, no data: `mor info` runs it on files of any size. A damaged file can claim any
  // shape (fuzz_results found a C of 0 x 1684957547 beside a 2 x 2 A).
  const std::string& grp = layout::kReductionReduced;
  auto dims = [&](const char* name) -> std::optional<std::pair<Index, Index>> {
    const std::string path = layout::child(grp, name);
    if (r.type(path) != io::ObjectType::dataset) return std::nullopt;
    const std::vector<Index> d = r.dims(path);
    if (d.size() == 2) return std::pair<Index, Index>(d[0], d[1]);
    return std::pair<Index, Index>(d.empty() ? 1 : d[0], 1);  // a vector is a column
  };
  if (r.type(grp) != io::ObjectType::group) return;
  const bool second_order = dims("K").has_value();
  const auto square = dims(second_order ? "K" : "A");
  if (!square) return;
  const Index order = square->first;
  auto check = [&](const char* name, bool rows_are_r, bool cols_are_r) {
    const auto shape = dims(name);
    if (!shape) return;
    const auto [rows, cols] = *shape;
    if ((rows_are_r && rows != order) || (cols_are_r && cols != order))
      throw IoError(concat("results file ", quoted(r.path()),
                           " is damaged: ", layout::child(grp, name), " is ", rows, " x ", cols,
                           ", which does not fit a reduced model of order ", order));
  };
  // (Not one loop over `second_order ? {...} : {...}`: an initializer_list copied out of a
  // conditional outlives its array.)
  check(second_order ? "K" : "A", true, true);  // the order's own matrix first: A of 3 x 5
  if (second_order)
    for (const char* name : {"M", "D"}) check(name, true, true);
  else
    check("E", true, true);
  check("B", true, false);
  for (const char* name : {"C", "Cp", "Cv"}) check(name, false, true);
}

ExportFormat parse_export_format(const std::string& name) {
  if (name == "mat") return ExportFormat::mat;
  if (name == "mat73") return ExportFormat::mat73;
  if (name == "mtx") return ExportFormat::mtx;
  throw InvalidArgument(concat("mor export: --format '", name,
                               "' is not one of mat (MATLAB v5, scipy.io.loadmat reads it), "
                               "mat73 (MATLAB v7.3, HDF5), mtx (MatrixMarket, one file a matrix)"));
}

std::vector<io::NamedMatrix> read_results_export(const std::filesystem::path& results) {
  const io::ResultsReader r(results);
  if (r.type(layout::kReductionAffine) == io::ObjectType::group) {
    // A parametric run: its reduced family X_r(mu) = X_r + sum mu_name X_r_<name> (the model at
    // the center in /reduction/reduced is that family at parameter_<name>'s reference), then what
    // the hyper-reduction and the bases need, as stored.
    std::vector<io::NamedMatrix> vars = recorded_parametric_export(read_recorded_parametric(r));
    const std::pair<const char*, const std::string*> extra[] = {
        {"deim_points", &layout::kReductionDeimMasses},
        {"deim_basis", &layout::kReductionDeimBasis},
        {"ecsw_elements", &layout::kReductionEcswElements},
        {"ecsw_weights", &layout::kReductionEcswWeights},
        {"V", &layout::kReductionV},
        {"W", &layout::kReductionW}};
    for (const auto& [name, path] : extra)
      if (r.type(*path) == io::ObjectType::dataset)
        vars.push_back({name, r.dims(*path).size() == 1 ? Matrix(r.read_finite_vector(*path))
                                                        : r.read_finite_matrix(*path)});
    return vars;
  }
  const std::string& grp = layout::kReductionReduced;
  require(r.exists(grp), results.string(), " holds no reduced linear model (no ", grp,
          "): export needs a run whose reduced model is linear: reduction.method = \"bt\", "
          "\"sobt\", \"modal\", \"irka\", or \"pod\" of an LTI model");
  std::vector<io::NamedMatrix> vars;
  // The reduced matrices in the order their form lists them, then the bases and the values.
  for (const char* name : {"E", "A", "M", "D", "K", "B", "C", "Cp", "Cv"})
    if (r.exists(layout::child(grp, name)))
      vars.push_back({name, r.read_finite_matrix(layout::child(grp, name))});
  for (const char* name : {"V", "W"})
    if (r.exists(layout::child(layout::kReduction, name)))
      vars.push_back({name, r.read_finite_matrix(layout::child(layout::kReduction, name))});
  for (const char* name : {"hsv", "sv"})
    if (r.exists(layout::child(layout::kReduction, name)))
      vars.push_back({name, Matrix(r.read_finite_vector(layout::child(layout::kReduction, name)))});
  // After the reads, which name a dataset claiming more than the file holds as such.
  check_reduced_model_shapes(r);
  return vars;
}

void require_export_out(const std::filesystem::path& out, ExportFormat format) {
  require(!out.empty(), "mor export: --out must name a file (or, for mtx, a prefix)");
  if (format != ExportFormat::mtx) return;  // a folder is refused as the .mat file it would be
  // The prefix P makes the files P.A.mtx, ...: a P ending in a separator (or naming "." or "..")
  // has no name of its own, and would make the hidden files "folder/.A.mtx".
  const std::string name = out.filename().string();
  require(!name.empty() && name != "." && name != "..", "mor export: --out '", out.string(),
          "' names a folder; for --format mtx it is the prefix P of the files P.<matrix>.mtx, "
          "e.g. --out ",
          (out / "rom").lexically_normal().string(), " for ",
          (out / "rom").lexically_normal().string(), ".A.mtx, ...");
}

io::StagedFiles stage_export(const std::vector<io::NamedMatrix>& vars, ExportFormat format,
                             const std::filesystem::path& out) {
  require_export_out(out, format);
  const auto files = targets(vars, format, out);
  for (const auto& f : files) require_replaceable_by_export(f, format);
  const std::string marker = concat(kMarker, " (mor ", program_version(), ")");
  if (format != ExportFormat::mtx) {
    const bool v5 = format == ExportFormat::mat;
    return io::stage_mat(out, vars, v5 ? io::MatVersion::v5 : io::MatVersion::v73,
                         concat(v5 ? "MATLAB 5.0 MAT-file, " : "MATLAB 7.3 MAT-file, ", marker));
  }
  std::vector<std::pair<fs::path, io::MatrixValue>> set;
  for (std::size_t k = 0; k < vars.size(); ++k) set.emplace_back(files[k], vars[k].value);
  return io::stage_matrix_market_files(set, " " + marker);
}

std::vector<std::filesystem::path> export_results(const std::filesystem::path& results,
                                                  ExportFormat format,
                                                  const std::filesystem::path& out,
                                                  std::chrono::milliseconds read_time_limit) {
  std::vector<io::NamedMatrix> vars;
  {
    // The child reads and checks; it hands over the matrices as a stream of bytes (freed once
    // decoded: the data is held twice only meanwhile).
    const std::string stream = io::read_contained(
        results, "results file",
        [&](std::ostream& to) { io::encode_matrices(to, read_results_export(results)); },
        read_time_limit);
    try {
      vars = io::decode_matrices(stream);
    } catch (const IoError& e) {
      throw IoError(concat("damaged results file: ", quoted(results),
                           " (what its reader handed over is unusable: ", e.what(), ")"));
    }
  }
  io::StagedFiles staged = stage_export(vars, format, out);
  return commit_export(staged, format, out);
}

std::vector<std::filesystem::path> export_experiment_model(
    const std::filesystem::path& experiment, const std::vector<std::string>& overrides,
    ExportFormat format, const std::filesystem::path& out) {
  const ExperimentConfig c = load_experiment(experiment, overrides);
  // Refused up front when the model cannot fit (run_guards); a warning above MemAvailable.
  if (const auto warning = check_model_memory(c); !warning.empty())
    std::cerr << "mor: warning: " << warning << "\n";
  if (!c.parameters.empty()) {
    // A family: its affine terms, as model.type = "file" reads them back with [parameters].
    require(c.model->is_linear(), "mor export: model.type = \"", c.model->kind(),
            "\" with [parameters] is nonlinear; its affine terms are exported for linear "
            "models (make it linear, e.g. model.k_n = 0)");
    return write(named_affine(c.model->parametric_linear_system(c.parameters), c.parameters),
                 format, out);
  }
  if (c.model->is_linear()) return write(named(c.model->linear_system()), format, out);
  // A nonlinear model as a network: the second-order matrices plus G and phi, which
  // `model.type = "network"` reads back.
  const NonlinearNetwork net = c.model->network();
  std::vector<io::NamedMatrix> vars = named(net.linear_system());
  vars.push_back({"G", net.G()});
  vars.push_back({"phi", net.compact_coefficients()});
  return write(vars, format, out);
}

void require_replaceable_by_export(const std::filesystem::path& file, ExportFormat format) {
  std::error_code error;
  const fs::file_status status = fs::status(file, error);
  if (!fs::exists(status)) return;
  const std::string refusal = concat("refusing to write ", quoted(file), ": it is ");
  const std::string advice = "; name another output (--out)";
  if (fs::is_directory(status)) throw IoError(concat(refusal, "a directory", advice));
  if (!fs::is_regular_file(status)) throw IoError(concat(refusal, "not a regular file", advice));
  if (format != ExportFormat::mtx) {
    if (io::mat_header_text(file).find(kMarker) == std::string::npos)
      throw IoError(
          concat(refusal, "not a MAT file written by mor export (perhaps an input)", advice));
    return;
  }
  if (!is_marked_matrix_market(file))
    throw IoError(concat(
        refusal, "not a MatrixMarket file written by mor export (perhaps an input)", advice));
}

std::vector<std::filesystem::path> commit_export(io::StagedFiles& staged, ExportFormat format,
                                                 const std::filesystem::path& out) {
  throw_if_stop_requested("export");
  const std::vector<fs::path> written = staged.commit();
  if (format != ExportFormat::mtx) return written;
  // The rest of an earlier set under the same prefix (its V and W, say, or a first-order
  // model's E, A, C after a second-order one): files an export wrote, out.<name>.mtx.
  try {
    const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    const std::string prefix = out.filename().string() + ".";
    std::set<std::string> now;
    for (const auto& f : written) now.insert(f.filename().string());
    std::error_code error;
    std::vector<fs::path> stale;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.size() <= prefix.size() + 4 || name.compare(0, prefix.size(), prefix) != 0 ||
          name.compare(name.size() - 4, 4, ".mtx") != 0 || now.count(name) != 0)
        continue;
      const std::string matrix = name.substr(prefix.size(), name.size() - prefix.size() - 4);
      const bool variable_name = std::isalpha(static_cast<unsigned char>(matrix[0])) &&
                                 std::all_of(matrix.begin(), matrix.end(), [](unsigned char c) {
                                   return std::isalnum(c) || c == '_';
                                 });
      if (variable_name && is_marked_matrix_market(it->path())) stale.push_back(it->path());
    }
    for (const auto& f : stale) fs::remove(f, error);
  } catch (const std::exception&) {
    // the new set is complete; a stale file that stays is no error
  }
  return written;
}

void remove_dead_export_temporaries(const std::filesystem::path& out,
                                    ExportFormat format) noexcept {
  if (format != ExportFormat::mtx) {
    io::remove_dead_temporaries(out);
    return;
  }
  try {
    // The set's files out.<name>.mtx: every temporary "<out>.<name>.mtx.tmp-..." in the folder.
    const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
    const std::string prefix = out.filename().string() + ".";
    std::set<fs::path> finals;
    std::error_code error;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      const auto at = name.rfind(".mtx.tmp-");
      if (name.compare(0, prefix.size(), prefix) == 0 && at != std::string::npos)
        finals.insert(it->path().parent_path() / name.substr(0, at + 4));
    }
    for (const auto& f : finals) io::remove_dead_temporaries(f);
  } catch (...) {
  }
}

}  // namespace mor::experiments
