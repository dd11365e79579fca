// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/export.hpp"

#include <iostream>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/run_guards.hpp"
#include "src/core/errors.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

std::vector<std::filesystem::path> write(const std::vector<io::NamedMatrix>& vars,
                                         ExportFormat format, const std::filesystem::path& out) {
  require(!out.empty(), "mor export: --out must name a file (or, for mtx, a prefix)");
  if (format != ExportFormat::mtx) {
    io::write_mat(out, vars,
                  format == ExportFormat::mat ? io::MatVersion::v5 : io::MatVersion::v73);
    return {out};
  }
  std::vector<std::filesystem::path> files;
  for (const auto& v : vars) {
    const std::filesystem::path file = out.string() + "." + v.name + ".mtx";
    std::visit([&](const auto& m) { io::write_matrix_market(file, m); }, v.value);
    files.push_back(file);
  }
  return files;
}

std::vector<io::NamedMatrix> named(const LinearSystem& sys) {
  if (const auto* d = std::get_if<DescriptorSystem>(&sys))
    return {{"E", d->E}, {"A", d->A}, {"B", d->B}, {"C", d->C}, {"D", d->D_ff}};
  const auto& s = std::get<SecondOrderSystem>(sys);
  return {{"M", s.M}, {"D", s.D}, {"K", s.K}, {"B", s.B}, {"Cp", s.Cp}, {"Cv", s.Cv}};
}

}  // namespace

ExportFormat parse_export_format(const std::string& name) {
  if (name == "mat") return ExportFormat::mat;
  if (name == "mat73") return ExportFormat::mat73;
  if (name == "mtx") return ExportFormat::mtx;
  throw InvalidArgument(concat("mor export: --format '", name,
                               "' is not one of mat (MATLAB v5, scipy.io.loadmat reads it), "
                               "mat73 (MATLAB v7.3, HDF5), mtx (MatrixMarket, one file a matrix)"));
}

std::vector<std::filesystem::path> export_results(const std::filesystem::path& results,
                                                  ExportFormat format,
                                                  const std::filesystem::path& out) {
  const io::ResultsReader r(results);
  const std::string& grp = layout::kReductionReduced;
  require(r.exists(grp), results.string(), " holds no reduced linear model (no ", grp,
          "): export needs a run with reduction.method = \"bt\" or \"sobt\"");
  std::vector<io::NamedMatrix> vars;
  // The reduced matrices in the order their form lists them, then the bases and the values.
  for (const char* name : {"E", "A", "M", "D", "K", "B", "C", "Cp", "Cv"})
    if (r.exists(layout::child(grp, name)))
      vars.push_back({name, r.read_matrix(layout::child(grp, name))});
  for (const char* name : {"V", "W"})
    if (r.exists(layout::child(layout::kReduction, name)))
      vars.push_back({name, r.read_matrix(layout::child(layout::kReduction, name))});
  for (const char* name : {"hsv", "sv"})
    if (r.exists(layout::child(layout::kReduction, name)))
      vars.push_back({name, Matrix(r.read_vector(layout::child(layout::kReduction, name)))});
  return write(vars, format, out);
}

std::vector<std::filesystem::path> export_experiment_model(
    const std::filesystem::path& experiment, const std::vector<std::string>& overrides,
    ExportFormat format, const std::filesystem::path& out) {
  const ExperimentConfig c = load_experiment(experiment, overrides);
  // Refused up front when the model cannot fit (run_guards); a warning above MemAvailable.
  if (const auto warning = check_model_memory(c); !warning.empty())
    std::cerr << "mor: warning: " << warning << "\n";
  return write(named(c.model->linear_system()), format, out);
}

}  // namespace mor::experiments
