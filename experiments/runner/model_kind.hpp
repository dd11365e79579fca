// SPDX-License-Identifier: GPL-3.0-or-later
// Model kinds: the seam between an experiment file's [model] table and the runner. A kind is one
// file (experiments/runner/models/<kind>.cpp) that declares its keys once (experiments/runner/
// keys.hpp), reads and validates them into a ModelSpec, and builds a FullModel from it; plus one
// line in the registry (model_kinds.cpp). The runner, the reduction methods and the analysis see
// only FullModel.
//
// Every full model runs through the second-order integrators of src/integrators on a pair of
// state vectors (q, v):
//  - second-order models (M q'' + D q' + K q + g(q) = B u): q positions, v velocities;
//  - first-order descriptor models (E x' = A x + B u) embedded exactly as M = E, D = -A, K = 0
//    with x = v (q is its time integral, unused): the implicit schemes then solve with
//    E - h/2 A (implicit midpoint) in the descriptor form, never with E^{-1} A. The reduced
//    models of balanced truncation are embedded the same way (src/systems/dense_model.hpp), so
//    full and reduced models share one integrator.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "experiments/runner/keys.hpp"
#include "reduction/lti_operator.hpp"
#include "reduction/network_operators.hpp"
#include "src/core/progress.hpp"
#include "src/integrators/integrate.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/parametric.hpp"

namespace mor::experiments {

/// A linear full-order system in the form its kind defines it.
using LinearSystem = std::variant<DescriptorSystem, SecondOrderSystem>;

/// observe(step, t, q, v, u), as src/integrators/integrate.hpp calls it.
using StepObserver =
    std::function<void(Index, double, const Vector&, const Vector&, const Vector&)>;
/// observe(step, t, y): a reduced linear model's outputs at the output steps.
using OutputObserver = std::function<void(Index, double, const Vector&)>;

/// What a model's own analysis (FullModel::analyse) sees of the run it belongs to.
struct ModelAnalysisContext {
  const Signal& input;
  const IntegratorOptions& integrator;
  /// The reduced model's outputs at /outputs/t (rows of n_outputs values); nullptr without one.
  const std::vector<double>* reduced_outputs = nullptr;
  /// Polled by long loops: when it turns true they throw Interrupted.
  const std::atomic<bool>* stop_requested = nullptr;
};

/// Named figures of a model's own analysis (e.g. "energy_balance_error"): the run's summary
/// prints them and a sweep's table has a column for each.
using ModelFigures = std::vector<std::pair<std::string, double>>;

/// A full-order model built for one run: constant data, plus the integrator workspace.
class FullModel {
 public:
  virtual ~FullModel() = default;
  FullModel(const FullModel&) = delete;
  FullModel& operator=(const FullModel&) = delete;

  /// Length of the integrator state vectors q and v (states of a first-order model).
  Index n() const noexcept { return facts_.n; }
  Index n_inputs() const noexcept { return facts_.n_inputs; }
  Index n_outputs() const noexcept { return facts_.n_outputs; }
  /// True for a first-order model (v is the state x; q its integral, meaningless).
  bool first_order() const noexcept { return facts_.first_order; }
  bool is_linear() const noexcept { return facts_.linear; }
  /// The second-order form of lti_operator()'s system, for the structure-preserving methods;
  /// nullptr if it has none.
  const SecondOrderSystem* second_order_system() const noexcept { return facts_.second_order; }
  /// "" for a linear model; for a nonlinear one, the state lti_operator() linearises about, as
  /// a phrase ("the hanging equilibrium"): linear methods reduce that linearisation, and the run
  /// compares the reduced model with the nonlinear model.
  const std::string& linearisation() const noexcept { return facts_.linearisation; }
  /// y = C x + D u (first order) or Cp q + Cv v (second order), size n_outputs().
  virtual void output(const Vector& q, const Vector& v, const Vector& u, Vector& y) const = 0;
  /// The stored energy at (q, v), if the model defines one (snapshots record it).
  virtual std::optional<double> energy(const Vector& q, const Vector& v) const {
    (void)q, (void)v;
    return std::nullopt;
  }
  /// The linear system as the Gramian solvers, balanced truncation and the norms see it: the
  /// model itself if it is linear, else its linearisation about its rest state (linearisation()
  /// says which). The operator refers to this model's data: the model must outlive it.
  /// @throws InvalidArgument naming the mathematical reason if the model has no linearisation.
  virtual std::unique_ptr<LtiOperator> lti_operator() const = 0;
  /// Kinds that integrate themselves (CVODE) integrate the reduced linear models of the linear
  /// methods the same way, so that the comparison measures the reduction and not two
  /// integrators: observe(k, t, y) at every output step of o (feed-through included). Returns
  /// false if the runner's fixed-step schemes are to do it (the default).
  virtual bool simulate_reduced_linear(const DenseSecondOrderSystem& reduced, const Signal& input,
                                       const IntegratorOptions& o, const OutputObserver& observe,
                                       IntegrationStats& stats) const {
    (void)reduced, (void)input, (void)o, (void)observe, (void)stats;
    return false;
  }
  /// The kind's own checks after the full run, written into `out` (the multibody benchmarks:
  /// their benchmark run against its references, the energy balance, the constraint residual,
  /// the linearisation against the nonlinear model); returns its figures. None by default.
  /// @throws NumericalError, Interrupted as the runs it makes.
  virtual ModelFigures analyse(const ModelAnalysisContext& context, io::ResultsWriter& out) {
    (void)context, (void)out;
    return {};
  }
  /// The operators of the network structure (ModelStructure::Form::network: the chain, network
  /// files, the lattice) that the snapshot methods apply (pod with DEIM or ECSW, empirical and
  /// differential balancing: reduction/network_operators.hpp); nullptr for another structure,
  /// which those methods refuse from ModelSpec::structure() before anything runs.
  virtual const NetworkOperators* network_operators() const { return nullptr; }
  /// Integrates from (q, v) over o's horizon (see integrate()); returns its statistics.
  virtual IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q,
                                    Vector& v, const StepObserver& observe,
                                    ProgressReporter* progress) = 0;
  /// Factorizations of iteration matrices so far (the integrator workspace's count).
  virtual Index factorizations() const = 0;
  /// The sparse solver the integrator uses (may differ from the one asked for, e.g. an LU for a
  /// nonsymmetric model when CHOLMOD was asked for), as its name.
  const std::string& solver_used() const noexcept { return facts_.solver; }

 protected:
  /// What a full model states once, in its constructor (set_facts): its sizes, form and
  /// linearity, the second-order form of its linear system (data of the model, or nullptr) and
  /// the state of its linearisation ("" if it is linear), and the solver its integrator uses.
  struct Facts {
    Index n = 0, n_inputs = 0, n_outputs = 0;
    bool first_order = false;
    bool linear = true;
    const SecondOrderSystem* second_order = nullptr;
    std::string linearisation;
    std::string solver;
  };
  FullModel() = default;
  void set_facts(Facts f) { facts_ = std::move(f); }

 private:
  Facts facts_;
};

/// What a model is, in the terms the methods, the measures and the guards ask about: its
/// mathematical form and the operators that form has, its sizes, and the estimates and words the
/// runner needs before anything is built. A kind describes its model once (ModelSpec's
/// constructor argument); nothing downstream asks the kind itself.
struct ModelStructure {
  enum class Form {
    first_order_lti,   ///< E x' = A x + B u, y = C x + D u (a model file, Python's lti_model)
    second_order_lti,  ///< M q'' + D q' + K q = B u, y = Cp q + Cv q' (a file, a linearisation)
    /// M q'' + D q' + K q + G^T phi(G q) = B u (the chain, a network file, the lattice); linear
    /// when phi = 0. The snapshot methods (pod, DEIM, ECSW, empirical and differential
    /// balancing) take exactly this form.
    network,
    /// x' = f(t, x, u), integrated by the kind's own CVODE run (the multibody benchmarks): it
    /// reads [simulation] itself (ModelSpec::read_table).
    first_order_ode,
  };
  Form form = Form::first_order_lti;
  Index size = 0;  ///< length of the integrator state (states, or coordinates q)
  bool linear = true;
  /// Whether the linear methods have a system to reduce: the model, or its linearisation about
  /// its rest state (FullModel::lti_operator); its size and form (coordinates of a second-order
  /// form, states of a first-order one). linear_size 0: size.
  bool has_linearisation = true;
  Index linear_size = 0;
  bool linear_first_order = true;
  /// m, the nonlinear elements of the network form (0 if linear), known before building.
  Index nonlinear_elements = 0;
  /// The network's force has an exact reduced tensor (NonlinearTreatment::tensor: a cubic
  /// stencil's).
  bool reduced_tensor = false;
  /// Seconds of one implicit step (Newton with the lagged Jacobian, amortised) if the default
  /// (banded, O(n): the chain) does not fit, and MiB of the sparse factor; MiB the kind's own
  /// runs keep (first_order_ode: the CVODE runs' outputs and states).
  std::optional<double> implicit_step_seconds;
  double factor_mib = 0.0;
  double own_runs_mib = 0.0;
  /// The keys that set the size ("model.N"), for the advice of a memory refusal; what the
  /// summary calls one coordinate ("mass", "node"; empty: n coordinates or states); how to make
  /// the model linear, for the refusal of the linear methods.
  std::string size_keys = "its size";
  std::string coordinate;
  std::string linear_hint = "the model is nonlinear";
};

/// The structure of an LTI model given as `system` (first or second order).
ModelStructure lti_structure(const LinearSystem& system);

/// The network operators of `model` (FullModel::network_operators).
/// @throws InvalidArgument if the model is not a network (a method that skipped its check).
const NetworkOperators& network_of(const FullModel& model);

/// The [model] table of one kind, read and validated: constant data from which runs build
/// their FullModel, and its structure.
class ModelSpec {
 public:
  virtual ~ModelSpec() = default;
  /// The kind's name, as [model] type spells it.
  virtual std::string_view kind() const = 0;
  /// The effective [model] keys (defaults filled in), as TOML lines after "type = ...".
  virtual void write_toml(std::ostream& os) const = 0;
  /// /model attributes: the keys, the sizes and what is known of the structure.
  virtual void record(io::ResultsWriter& out) const = 0;
  /// The linear system (for export), in the kind's own form.
  /// @throws InvalidArgument naming the model if it is not linear.
  virtual LinearSystem linear_system() const = 0;
  /// The nonlinear model as a network (linear part, G and phi), what `mor export` writes.
  /// @throws InvalidArgument naming the kind if it has no such form.
  virtual NonlinearNetwork network() const;
  /// @param solver the sparse solver asked for in [simulation].
  /// @throws InvalidArgument, IoError as the kind's construction.
  virtual std::unique_ptr<FullModel> build(SparseBackend solver) const = 0;

  // --- Parameters ([parameters]: src/systems/parametric.hpp) ----------------------------------
  /// Why the [model] key `name` cannot be a parameter of this model ("" if it can): a size key,
  /// a key the model's equations do not contain. By default the kind has no parameters.
  virtual std::string parameter_refusal(const std::string& name) const;
  /// This model with the parameters of `domain` set to mu (domain's order); every name passed
  /// parameter_refusal. @throws InvalidArgument as the kind's validation of its keys.
  virtual std::shared_ptr<const ModelSpec> at(const ParameterDomain& domain,
                                              const Vector& mu) const;
  /// The model's operators as affine functions of the parameters of `domain` (the network
  /// form). @throws InvalidArgument if the kind has no parameters.
  virtual ParametricNetwork parametric_network(const ParameterDomain& domain) const;
  /// The linear system the linear methods reduce (the model, or its linearisation about rest)
  /// as affine functions of the parameters of `domain`. By default the linear part of
  /// parametric_network (a network's force vanishes at rest).
  /// @throws InvalidArgument if the kind has no parameters.
  virtual ParametricLinearSystem parametric_linear_system(const ParameterDomain& domain) const;
  /// The parameters [parameters] must give a range for (a file's affine terms X_<name>); none
  /// by default.
  virtual std::vector<std::string> required_parameters() const;

  // Kinds that integrate themselves (Form::first_order_ode: the multibody benchmarks) own
  // [simulation]: they read its keys (and their own keys of [output] and of their extra table)
  // once, before the spec is shared, and the runner's fixed-step keys do not apply.
  /// Reads the kind's own keys of [table] ("simulation" if owns_simulation(), "output", and the
  /// kind's ModelKindInfo::extra_table); the caller finishes r.
  /// @throws InvalidArgument naming file, line, key and value.
  virtual void read_table(std::string_view table, TableReader& r,
                          const std::filesystem::path& base_dir) {
    (void)table, (void)r, (void)base_dir;
  }
  /// Writes the keys read_table read, as TOML lines (the effective configuration).
  virtual void write_table(std::string_view table, std::ostream& os) const {
    (void)table, (void)os;
  }
  /// owns_simulation(): the full run's output grid as the runner's stepping sees it (dt the
  /// output interval, t_end the horizon, observe_stride 1).
  virtual IntegratorOptions integrator_options() const { return {}; }

  // --- The structure, as the methods, measures and guards ask for it ---------------------------
  const ModelStructure& structure() const noexcept { return s_; }
  ModelStructure::Form form() const noexcept { return s_.form; }
  Index size() const noexcept { return s_.size; }
  bool is_linear() const noexcept { return s_.linear; }
  /// A first-order model (its snapshots are of the state x, not of q and v).
  bool first_order() const noexcept {
    return s_.form == ModelStructure::Form::first_order_lti ||
           s_.form == ModelStructure::Form::first_order_ode;
  }
  bool has_linearisation() const noexcept { return s_.has_linearisation; }
  Index linear_size() const noexcept { return s_.linear_size > 0 ? s_.linear_size : s_.size; }
  bool linear_first_order() const noexcept { return s_.linear_first_order; }
  /// The snapshot methods' form: its full models offer FullModel's network seam (pod with
  /// DEIM or ECSW, empirical and differential balancing).
  bool projectable() const noexcept { return s_.form == ModelStructure::Form::network; }
  bool simulation_balancing() const noexcept { return projectable(); }
  bool empirical_gramians() const noexcept { return projectable(); }
  bool reduced_tensor() const noexcept { return s_.reduced_tensor; }
  Index nonlinear_elements() const noexcept { return s_.nonlinear_elements; }
  bool owns_simulation() const noexcept { return s_.form == ModelStructure::Form::first_order_ode; }
  double implicit_step_seconds() const noexcept {
    return s_.implicit_step_seconds ? *s_.implicit_step_seconds
                                    : static_cast<double>(s_.size) * (s_.linear ? 1.5e-8 : 4e-8);
  }
  double factor_mib() const noexcept { return s_.factor_mib; }
  double own_runs_mib() const noexcept { return s_.own_runs_mib; }
  const std::string& size_keys() const noexcept { return s_.size_keys; }
  std::string_view coordinate() const noexcept { return s_.coordinate; }
  const std::string& linear_hint() const noexcept { return s_.linear_hint; }

 protected:
  explicit ModelSpec(ModelStructure s) : s_(std::move(s)) {}
  /// For a kind whose estimates change with the keys of its own tables (read_table).
  ModelStructure& structure_to_update() noexcept { return s_; }

 private:
  ModelStructure s_;
};

/// One registered kind: its name, one line of doc, how to read its table and list its keys.
struct ModelKindInfo {
  std::string_view name;
  std::string_view doc;
  /// Reads the [model] table (type already read) and validates it. base_dir resolves paths.
  /// @throws InvalidArgument naming file, line, key and value; IoError for unreadable files.
  std::unique_ptr<ModelSpec> (*read)(TableReader& r, const std::string& source,
                                     const std::filesystem::path& base_dir);
  /// Appends the kind's [model] keys (with their defaults) to the reference.
  void (*keys)(std::vector<KeyDoc>& rows);
  /// A table of the kind's own beside the common ones (e.g. "linear"), or empty.
  std::string_view extra_table = {};
  /// Appends the kind's own keys of [table] (see ModelSpec::read_table); nullptr if none.
  void (*table_keys)(std::string_view table, std::vector<KeyDoc>& rows) = nullptr;
};

/// Every registered kind, in registration order (experiments/runner/model_kinds.cpp).
const std::vector<ModelKindInfo>& model_kinds();
/// The kind named name, or nullptr.
const ModelKindInfo* find_model_kind(std::string_view name);

}  // namespace mor::experiments
