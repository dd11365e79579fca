// SPDX-License-Identifier: GPL-3.0-or-later
// The configuration of one experiment, as an experiment file describes it: the model (a
// registered kind, experiments/runner/model_kind.hpp), the input, the simulation, the reduction
// (a registered method, experiments/runner/method.hpp), the analysis and what to store, read
// strictly (an unknown or mistyped key is an error naming it). Data only: running it is
// experiment.hpp's. The format is documented in docs/experiment-files.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/errors.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/systems/parametric.hpp"

namespace mor {
class ParametricLtiModel;
}

namespace mor::experiments {

class ModelSpec;

/// A parametric reduced model built once and stored (a sweep's parametric study:
/// experiments/runner/parametric_store.hpp), as a run at one point of its domain uses it.
struct StoredParametricModel {
  std::shared_ptr<const ParametricLtiModel> model;
  std::filesystem::path file;  ///< the stored results file it was read from
  std::string hash;            ///< of its offline configuration (16 hex digits)
  double offline_seconds = 0;  ///< the offline wall time when it was built
};

struct InputSpec {
  std::string type = "sine";  ///< zero, step, sine, chirp, multisine, table
  double amplitude = 1.0;
  double frequency = 0.05;                                         ///< sine, Hz
  double phase = 0.0;                                              ///< sine, rad
  double offset = 0.0;                                             ///< sine
  double t_on = 0.0;                                               ///< step
  double f0 = 0.0, f1 = 0.5, t1 = 100.0;                           ///< chirp
  std::vector<double> frequencies = {0.01, 0.02, 0.05, 0.1, 0.2};  ///< multisine, Hz
  std::int64_t seed = 1;                                           ///< multisine
  std::filesystem::path file;  ///< table (relative to the experiment file)
};

/// empirical_bt without subspace_order or subspace_energy: the position subspace keeps this
/// fraction of the impulse responses' energy (singular values down to about 1e-4 s_1).
inline constexpr double kDefaultSubspaceEnergy = 1.0 - 1e-8;

class ReductionMethod;
/// [analysis]: the registered measures as configured (experiments/runner/measure.hpp).
class Analysis;

/// The signal an input table describes, with m channels (the same signal on each).
std::unique_ptr<Signal> make_signal(const InputSpec& in, Index m);

/// simulation.max_steps's default: the most steps (t_end - t0) / dt a run may take unless its file
/// says more. The multibody kinds, whose [simulation] has no such key, hold the output counts of
/// their runs to it.
inline constexpr Index kDefaultMaxSteps = 100'000'000;

struct ExperimentConfig {
  std::string name = "experiment";
  std::string description;
  std::filesystem::path output;  ///< results file; default results/<name>.h5
  /// [model]: a registered kind (experiments/runner/model_kind.hpp), read and validated.
  std::shared_ptr<const ModelSpec> model;
  InputSpec input;
  /// [[training]]: the inputs of the training runs of a POD reduction (same integrator and
  /// horizon as the test run, which uses [input]).
  std::vector<InputSpec> training;
  IntegratorOptions integrator;
  SparseBackend solver = SparseBackend::cholmod;
  /// The most steps (t_end - t0) / dt a run may take (simulation.max_steps).
  Index max_steps = kDefaultMaxSteps;
  /// [reduction]: a registered method (experiments/runner/method.hpp), read and validated.
  std::shared_ptr<const ReductionMethod> reduction;
  /// [analysis]: the measures (experiments/runner/measure.hpp), read and validated; null: none.
  std::shared_ptr<const Analysis> analysis;
  /// [parameters]: the domain of a parametric experiment (experiments/runner/parameters.hpp);
  /// empty: the model at one point. The run's own model is then the model at the domain's
  /// center (model_at_center), and the parametric reduced model is validated at
  /// validation_samples unseen points ([validation]).
  ParameterDomain parameters;
  Index validation_samples = 20;
  Index validation_seed = 2;
  bool validation_compare_local = false;
  /// [validation] points (k x p), used instead of validation_samples seeded ones; empty: none.
  Matrix validation_points;
  /// With [parameters]: the point (p entries, parameters' order) of the run's own full and
  /// reduced models; empty: the domain's center. A sweep's parametric study sets it per point.
  Vector run_point;
  /// With run_point: the stored parametric model the reduction step evaluates at run_point in
  /// place of reducing (no offline work, no validation); null: the run reduces.
  std::optional<StoredParametricModel> stored_parametric;
  Index snapshot_stride = 10;  ///< 0: no snapshots
  std::vector<std::string> snapshot_fields = {"p", "v"};
  int compression = 1;  ///< deflate level 0..9 of the snapshots
  bool plots = true;
  /// Not a key: how many of a parametric training's full runs (and of the linear methods'
  /// local reductions) run at once, from `mor run --jobs` (resolved: >= 1).
  int training_jobs = 1;
  std::string source;  ///< where the configuration came from (file name)
  std::string toml;    ///< the effective configuration, overrides applied, as TOML

  /// Length of the integrator state of the model (N for the chain, n for a model file).
  Index model_size() const;
  /// The model a run simulates: `model`, or for a parametric experiment the model at run_point
  /// (the center of its domain unless set).
  std::shared_ptr<const ModelSpec> run_model() const;
};

/// Reads and validates an experiment file; overrides are "table.key=value" (value in TOML
/// syntax, a bare word is taken as a string), applied before validation.
/// @throws InvalidArgument naming the file, the key and the value for any mistake;
///         IoError if the file cannot be read.
ExperimentConfig load_experiment(const std::filesystem::path& file,
                                 const std::vector<std::string>& overrides = {});
/// The same from TOML text; `source` names it in messages, `base_dir` resolves relative paths.
ExperimentConfig parse_experiment(const std::string& text, const std::string& source,
                                  const std::filesystem::path& base_dir,
                                  const std::vector<std::string>& overrides = {});

}  // namespace mor::experiments
