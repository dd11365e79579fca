// SPDX-License-Identifier: GPL-3.0-or-later
// The parametric reduced model a results file records (/parameters, /reduction/affine: the
// reduced affine terms with their coefficients), read back: by `mor export` (the family
// X_r(mu) = X_r + sum_name mu_name X_r_<name> for MATLAB and SciPy) and by the points of a
// sweep's parametric study, which build the linear methods' parametric model once, store it in
// the sweep's folder under the hash of its offline configuration, and evaluate it at each point
// (docs/sweeps.md, "Parametric studies").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/reduction_run.hpp"
#include "src/io/matrix_files.hpp"
#include "src/io/results.hpp"
#include "src/systems/parametric.hpp"

namespace mor::experiments {

/// What a results file records of a parametric reduced model.
struct RecordedParametric {
  ParameterDomain domain;
  Vector reference;  ///< /parameters/reference: the run's own point
  /// The reduced terms by role in the order written (E, A, B, C, Dff: first order; M, D, K, B,
  /// Cp, Cv: second order; M, D, K only for the projection family), theta_i resolved to domain.
  std::vector<std::pair<std::string, AffineOperator<Matrix>>> terms;
  /// The projection family's force coefficient theta_f (g_r(mu) = theta_f(mu) / theta_f(ref)
  /// g_r(ref)); none for the linear methods.
  std::optional<AffineCoefficient> force;
};

/// Reads /parameters and /reduction/affine.
/// @throws InvalidArgument if the file records no parametric model (no /reduction/affine);
///         IoError for a damaged record (a term without its coefficient, a factor that names no
///         parameter, a non-finite entry), naming the dataset.
RecordedParametric read_recorded_parametric(const io::ResultsReader& r);

/// The recorded model as `mor export` writes it, in the naming of a model file's affine terms
/// (experiments/runner/models/file.cpp): per role X (Dff as D) the constant part X and per
/// parameter the term X_<name>, so that X(mu) = X + sum_name mu_name X_<name>; a term in a
/// product of parameters is X_<a>__<b> (times mu_a mu_b); then parameter_<name> = [min, max,
/// log (0/1), reference] per parameter, and for the projection family force_<factors> (or force)
/// = theta_f's scale.
std::vector<io::NamedMatrix> recorded_parametric_export(const RecordedParametric& p);

/// The linear methods' parametric model a results file records, ready to evaluate.
/// @throws InvalidArgument if the file holds none (no record, or the projection family's);
///         IoError as read_recorded_parametric.
std::shared_ptr<const ParametricLtiModel> read_parametric_lti(const io::ResultsReader& r);

/// The root attribute `kind` of a stored parametric model (a results file with /model,
/// /parameters and /reduction only: check_results_layout knows it).
inline constexpr const char* kParametricModelKind = "parametric_model";

/// The effective TOML of c without what cannot change its parametric reduced model: [experiment]
/// (name, output), [input] (the test input; training runs use [[training]]), [validation],
/// [analysis]. Everything else (the model, [parameters], [simulation], [output], [reduction],
/// [[training]]) is kept, so two experiments with the same text build the same model.
std::string offline_configuration(const ExperimentConfig& c);
/// 16 hex digits of the 64-bit FNV-1a hash of text (stable across platforms and builds).
std::string configuration_hash(const std::string& text);

/// The stored parametric model of c (a linear method's family) in `folder`:
/// "parametric-<study>-<hash>.h5". If it is there and records the same offline configuration it
/// is read back (built = false); otherwise, when `build`, the parametric reduction runs, its
/// /reduction and /parameters are written to the file (temporary, then renamed) and read back.
/// @throws InvalidArgument for a study that is not a linear method's family, or a missing file
///         when !build; what the reduction throws; IoError.
StoredParametricModel stored_parametric_model(const ExperimentConfig& c,
                                              const std::filesystem::path& folder,
                                              const std::string& study, bool build,
                                              bool* built = nullptr);

/// The reduction step of a run with c.stored_parametric: the stored model evaluated at
/// c.run_point, with a summary (r, spectral abscissa, the evaluation's seconds; the stored file,
/// its hash and its offline seconds as attributes of /reduction).
ReducedModel stored_model_at(const ExperimentConfig& c);

}  // namespace mor::experiments
