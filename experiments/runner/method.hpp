// SPDX-License-Identifier: GPL-3.0-or-later
// Reduction methods: the seam between an experiment file's [reduction] table and the runner. A
// method is one file (experiments/runner/methods/<method>.cpp) that declares its options once
// (experiments/runner/keys.hpp), reads and validates them, and reduces; plus one X() entry in
// the registry (methods.cpp). The runner never branches on method names: it asks the method's
// family what a reduced model is (a linear reduced model it simulates and analyses, or a
// projected nonlinear chain it simulates and compares state by state).
#pragma once

#include <atomic>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/keys.hpp"
#include "experiments/runner/parameters.hpp"
#include "experiments/runner/reduction_run.hpp"

namespace mor::experiments {

/// The projected nonlinear models of the projection family (projection_run.hpp).
struct ProjectionReduction;
class FullModel;
class ModelSpec;

/// The training of a parametric reduction ([parameters]), estimated before it runs: what
/// `mor run --dry-run` prints and what ReductionMethod::estimate_seconds and estimate_bytes
/// count of it. Upper bounds for sampling = "greedy", which may stop early.
struct ParametricTrainingEstimate {
  bool greedy = false;     ///< reduction.sampling = "greedy"
  bool local = false;      ///< a linear method: a local reduction at each point, no snapshots
  Index points = 0;        ///< training points (reduction.parameter_samples)
  Index full_runs = 0;     ///< full training runs: points (or the greedy's most) x [[training]]
  Index reduced_runs = 0;  ///< the greedy's reduced runs: its indicators and true errors
  double seconds = 0;      ///< their wall time, with the snapshots' compression (one core)
  /// Columns the incremental SVD keeps of the state and of the force snapshots (0: none; for
  /// ECSW, whose position snapshots stay whole, force_columns is 0 and bytes counts them all).
  Index state_columns = 0, force_columns = 0;
  int jobs = 1;      ///< runs at once (mor run --jobs)
  double bytes = 0;  ///< peak memory of the training besides the run's own model
};

class ReductionMethod {
 public:
  enum class Family {
    none,  ///< the full model only
    /// an LTI reduced model of the model's linear system, or of a nonlinear model's
    /// linearisation about its rest state (BT, SOBT, modal, IRKA)
    linear,
    projection,  ///< a projected (hyper-reduced) second-order model (POD, empirical BT)
  };
  virtual ~ReductionMethod() = default;
  /// The name [reduction] method spells.
  virtual std::string_view name() const = 0;
  virtual Family family() const = 0;
  /// The family of a run of this method on `model`: family(), unless the method reduces some
  /// models differently (pod of an LTI model without a projection seam, a model file or a
  /// linearised benchmark, gives an LTI reduced model: Family::linear).
  virtual Family family_for(const ModelSpec& model) const {
    (void)model;
    return family();
  }
  /// The effective [reduction] keys after method = "...", as TOML lines.
  virtual void write_toml(std::ostream& os) const = 0;
  /// The requested order r (0: chosen by a tolerance or an energy).
  virtual Index order() const { return 0; }
  /// Whether the method builds a parametric reduced model of `model` over [parameters]
  /// (src/systems/parametric.hpp, reduction/parametric_model.hpp).
  /// By default: a method with a parametric linear form (parametric_linear()) of a model it
  /// reduces to an LTI model.
  virtual bool parametric_for(const ModelSpec& model) const;
  /// Family linear with [parameters]: the training keys of its parametric reduction (local
  /// reductions at the training points, one global basis: experiments/runner/
  /// parametric_linear.hpp); nullptr if the method has no parametric form. Its reduced model
  /// must then fill ReducedModel::V (and W).
  virtual const ParametricLinearKeys* parametric_linear() const { return nullptr; }
  /// Checks against the rest of the experiment (model, training runs), after it is read.
  /// @throws InvalidArgument naming `where` (file and line), the key and the value.
  virtual void check(const ExperimentConfig& c, const std::string& where) const {
    (void)c, (void)where;
  }
  /// Rough offline wall time (seconds, one core) and extra peak memory (bytes), for sweeps;
  /// full_seconds is the estimated full simulation.
  virtual double estimate_seconds(const ExperimentConfig& c, double full_seconds) const {
    (void)c, (void)full_seconds;
    return 0.0;
  }
  virtual double estimate_bytes(const ExperimentConfig& c) const {
    (void)c;
    return 0.0;
  }
  /// With [parameters] (and parametric_for(*c.model)): the training's runs, time and memory,
  /// which estimate_seconds and estimate_bytes include; nullopt for a run at one point.
  virtual std::optional<ParametricTrainingEstimate> estimate_parametric_training(
      const ExperimentConfig& c, double full_seconds) const {
    (void)c, (void)full_seconds;
    return std::nullopt;
  }
  /// How the analysis computes the norms of the full and the error system.
  virtual NormOptions norm_options() const { return {}; }
  /// Family linear: reduces `full`; the reduced model's summary holds what /reduction records
  /// (write_reduction). second_order is the same system in second-order form (nullptr for a
  /// first-order model).
  /// @throws InvalidArgument if the model does not fit (e.g. SOBT of a first-order model),
  ///         NumericalError as the algorithms.
  virtual ReducedModel reduce_linear(LtiOperator& full,
                                     const SecondOrderSystem* second_order) const;
  /// Family linear, as the runner calls it: reduce_linear, except for the methods that learn
  /// from simulations of the full model `model` (pod: the training runs of c).
  /// @throws as reduce_linear; NumericalError if a training run diverges; Interrupted.
  virtual ReducedModel reduce_linear_in_run(const ExperimentConfig& c, const FullModel& model,
                                            LtiOperator& full,
                                            const SecondOrderSystem* second_order,
                                            const std::atomic<bool>* stop) const {
    (void)c, (void)model, (void)stop;
    return reduce_linear(full, second_order);
  }
  /// Family projection: projects the full model (through its snapshot-method seam,
  /// experiments/runner/model_kind.hpp; training runs from c); the reduction's summary holds
  /// what /reduction records.
  virtual ProjectionReduction reduce_projection(const ExperimentConfig& c, const FullModel& model,
                                                const std::atomic<bool>* stop) const;
};

/// One registered method: its name, one line of doc, how to read its table and list its keys.
struct MethodInfo {
  std::string_view name;
  std::string_view doc;
  /// Reads the [reduction] keys (method already read). @throws InvalidArgument naming the key.
  std::unique_ptr<ReductionMethod> (*read)(TableReader& r, const std::string& source,
                                           const std::filesystem::path& base_dir);
  void (*keys)(std::vector<KeyDoc>& rows);
  /// The smallest order r the method's stored spectrum says a relative tolerance tol needs
  /// (for a sweep's r_for_tol_* columns), -1 if it never gets there; nullptr if the method has
  /// no such rule.
  std::int64_t (*order_for_tolerance)(const io::ResultsReader& r, double tol) = nullptr;
};

/// Every registered method, in registration order (experiments/runner/methods.cpp).
const std::vector<MethodInfo>& reduction_methods();
const MethodInfo* find_reduction_method(std::string_view name);

/// Reads a [reduction] table through the registry (method "none" when absent); `allowed`, if not
/// empty, restricts the methods.
/// @throws InvalidArgument naming an unknown or disallowed method and the known ones.
std::shared_ptr<const ReductionMethod> read_reduction(TableReader& r, const std::string& source,
                                                      const std::filesystem::path& base_dir,
                                                      const std::vector<std::string>& allowed = {});

/// The context of TableReader::finish for a method's table: " for reduction.method = \"m\"",
/// and, when a key the method does not take belongs to another method, which one.
std::string method_keys_context(const TableReader& r, std::string_view method);

/// @throws InvalidArgument naming `where` unless the experiment's model is linear or has a
///         linearisation about its rest state (which the linear methods then reduce).
void require_linear_model(const ExperimentConfig& c, const std::string& where,
                          std::string_view method);

/// Balanced truncation's rule over singular values s (descending): the smallest r with
/// 2 sum_{i>r} s_i <= tol s_1 (the a priori H-infinity bound relative to s_1 <= ||G||_Hinf);
/// -1 if none (or s is empty or s_1 is not positive).
std::int64_t order_for_bound(const Vector& s, double tol);
/// POD's rule: the smallest r with (sum_{i>r} s_i^2 / sum s_i^2)^(1/2) <= tol (the relative
/// snapshot projection error); -1 if none.
std::int64_t order_for_energy(const Vector& s, double tol);
/// A MethodInfo::order_for_tolerance: `rule` over the spectrum the method stored at `path` (a
/// layout:: constant), -1 if the file has none.
template <const std::string& path, std::int64_t (*rule)(const Vector&, double)>
std::int64_t order_from_stored(const io::ResultsReader& r, double tol) {
  return r.exists(path) ? rule(r.read_vector(path), tol) : -1;
}

/// The keys of `keys` given in r (to refuse them later without [parameters]).
template <std::size_t K>
std::vector<std::string> keys_given(const TableReader& r, const char* const (&keys)[K]) {
  std::vector<std::string> given;
  for (const char* key : keys)
    if (r.given(key)) given.emplace_back(key);
  return given;
}
/// @throws InvalidArgument naming `where` and the first key of `given` if c has no
///         [parameters].
void refuse_parametric_keys(const ExperimentConfig& c, const std::string& where,
                            const std::vector<std::string>& given);
/// @throws InvalidArgument naming `where`, the point and the value if a point of
///         reduction.training_points lies outside c's domain or has the wrong count.
void check_training_points(const ExperimentConfig& c, const std::string& where,
                           const std::vector<std::vector<double>>& points);
/// @throws InvalidArgument naming the key and the value if parameter_samples or max_order is
///         out of range.
void check_parametric_linear_keys(const TableReader& r, const ParametricLinearKeys& k);

/// sqrt(sigma_i / sigma_1), i < r, of Hankel singular values (ReducedModel::basis_weights); empty
/// if there are fewer than r or sigma_1 is not positive.
Vector hankel_weights(const Vector& hsv, Index r);

/// The exactly-one-of rule of r and a tolerance, shared by the methods that choose r either way.
/// @throws InvalidArgument naming both values.
void require_order_or_tolerance(const TableReader& r, const std::string& source, Index order,
                                double tolerance, const char* tolerance_key = "tolerance");

}  // namespace mor::experiments
