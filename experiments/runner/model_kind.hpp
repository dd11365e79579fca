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
#include "reduction/differential_balancing.hpp"
#include "reduction/empirical_gramians.hpp"
#include "reduction/lti_operator.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/progress.hpp"
#include "src/integrators/integrate.hpp"
#include "src/io/results.hpp"
#include "src/signals/signal.hpp"
#include "src/systems/dense_model.hpp"

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
  virtual Index n() const = 0;
  virtual Index n_inputs() const = 0;
  virtual Index n_outputs() const = 0;
  /// True for a first-order model (v is the state x; q its integral, meaningless).
  virtual bool first_order() const { return false; }
  virtual bool is_linear() const = 0;
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
  /// The second-order form of lti_operator()'s system, for the structure-preserving methods;
  /// nullptr if it has none.
  virtual const SecondOrderSystem* second_order_system() const { return nullptr; }
  /// "" for a linear model; for a nonlinear one, the state lti_operator() linearises about, as
  /// a phrase ("the hanging equilibrium"): linear methods reduce that linearisation, and the run
  /// compares the reduced model with the nonlinear model.
  virtual std::string linearisation() const { return ""; }
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
  // --- The snapshot methods' seam (pod, DEIM, empirical_bt, differential_balancing) -----------
  // A kind offers what its structure allows (ModelSpec::projectable, simulation_balancing say
  // which); the defaults throw InvalidArgument.
  /// g(q), the nodal nonlinear force DEIM's nodes interpolate (size n; zero if linear).
  virtual void nonlinear_force(const Vector& q, Vector& g) const;
  /// m_e, the nonlinear elements (rows of phi(G q)); 0 if the model has none.
  virtual Index n_elements() const { return 0; }
  /// phi(G q), the element forces DEIM's element sampling interpolates (size n_elements()).
  virtual void element_forces(const Vector& q, Vector& f) const;
  /// ECSW's elements and weights (reduction/ecsw.hpp) for the projection on V (W), trained on
  /// the reduced snapshots Qr (r x ns); a network's, the chain's through its network form.
  virtual EcswResult ecsw(const Matrix& V, const Matrix& W, const Matrix& Qr,
                          const EcswOptions& o) const;
  /// The model projected on q = V q_r with the residual orthogonal to range(W) (W empty:
  /// Galerkin), its nonlinear force treated as o says.
  virtual ProjectedModel project(const Matrix& V, const Matrix& W,
                                 const ProjectionOptions& o) const;
  /// Position balancing by empirical Gramians of simulated responses.
  virtual EmpiricalBalancingResult empirical_balancing(const EmpiricalBalancingOptions& o) const;
  /// Balancing by generalized differential Gramians (SDPs).
  virtual DifferentialBalancing differential_balancing(const DifferentialGramianOptions& o) const;
  /// Integrates from (q, v) over o's horizon (see integrate()); returns its statistics.
  virtual IntegrationStats simulate(const Signal& input, const IntegratorOptions& o, Vector& q,
                                    Vector& v, const StepObserver& observe,
                                    ProgressReporter* progress) = 0;
  /// Factorizations of iteration matrices so far (the integrator workspace's count).
  virtual Index factorizations() const = 0;
  /// The sparse solver the integrator uses (may differ from the one asked for, e.g. an LU for a
  /// nonsymmetric model when CHOLMOD was asked for), as its name.
  virtual std::string solver_used() const = 0;

 protected:
  FullModel() = default;
};

/// The [model] table of one kind, read and validated: constant data from which runs build
/// their FullModel.
class ModelSpec {
 public:
  virtual ~ModelSpec() = default;
  /// The kind's name, as [model] type spells it.
  virtual std::string_view kind() const = 0;
  /// The effective [model] keys (defaults filled in), as TOML lines after "type = ...".
  virtual void write_toml(std::ostream& os) const = 0;
  /// /model attributes: the keys, the sizes and what is known of the structure.
  virtual void record(io::ResultsWriter& out) const = 0;
  /// Length of the integrator state (for memory and time estimates, and results keys).
  virtual Index size() const = 0;
  virtual bool is_linear() const = 0;
  /// True for a first-order model (its snapshots are of the state x, not of q and v).
  virtual bool first_order() const { return false; }
  /// The linear system (for export), in the kind's own form.
  /// @throws InvalidArgument naming the model if it is not linear.
  virtual LinearSystem linear_system() const = 0;
  /// True if the model has a linear system for the linear methods: it is linear, or has a
  /// linearisation about its rest state (FullModel::lti_operator).
  virtual bool has_linearisation() const { return is_linear(); }
  /// The linear system the linear methods reduce (the model, or its linearisation): its size
  /// (coordinates of a second-order form, states of a first-order one) and its form.
  virtual Index linear_size() const { return size(); }
  virtual bool linear_first_order() const { return first_order(); }
  /// The nonlinear model as a network (linear part, G and phi), what `mor export` writes.
  /// @throws InvalidArgument naming the kind if it has no such form.
  virtual NonlinearNetwork network() const;
  /// Seconds of one implicit step (Newton with the lagged Jacobian, amortised) and MiB of its
  /// sparse factor, for the estimates of --dry-run, `sweep --list` and the memory guard. The
  /// default suits banded models (the chain: O(n) per step, no fill); kinds whose factor fills
  /// in (the lattice: nested dissection, O(n log n)) say so.
  virtual double implicit_step_seconds() const {
    return static_cast<double>(size()) * (is_linear() ? 1.5e-8 : 4e-8);
  }
  virtual double factor_mib() const { return 0.0; }
  /// MiB the kind's own runs keep (owns_simulation(): the CVODE runs' outputs and states).
  virtual double own_runs_mib() const { return 0.0; }
  /// The keys that set the model's size ("model.N"), for the advice of a memory refusal.
  virtual std::string size_keys() const { return "its size"; }
  /// What the summary calls one coordinate ("mass", "node"); empty: n coordinates or states.
  virtual std::string_view coordinate() const { return {}; }
  /// How to make the model linear, for the refusal of the linear methods.
  virtual std::string linear_hint() const { return "the model is nonlinear"; }
  /// Its full models implement FullModel::nonlinear_force and project (pod, DEIM): a
  /// second-order model.
  virtual bool projectable() const { return false; }
  /// Its projection offers NonlinearTreatment::tensor (the exact reduced cubic of the chain).
  virtual bool reduced_tensor() const { return false; }
  /// Its full models implement FullModel::empirical_balancing and differential_balancing: a
  /// second-order network (the chain, network files, the lattice).
  virtual bool simulation_balancing() const { return false; }
  /// m, the nonlinear elements of its network form (0 if it is linear or has none), known
  /// without building the model (for the estimates and refusals of differential_balancing).
  virtual Index nonlinear_elements() const { return 0; }
  /// Its full models implement FullModel::empirical_balancing (second-order models simulated
  /// from impulses and initial positions: the chain and every network).
  virtual bool empirical_gramians() const { return simulation_balancing(); }
  /// @param solver the sparse solver asked for in [simulation].
  /// @throws InvalidArgument, IoError as the kind's construction.
  virtual std::unique_ptr<FullModel> build(SparseBackend solver) const = 0;

  // Kinds that integrate themselves (CVODE: the multibody benchmarks) own [simulation]: they
  // read its keys (and their own keys of [output] and of their extra table) once, before the
  // spec is shared, and the runner's fixed-step keys do not apply.
  /// True if the kind reads [simulation] itself.
  virtual bool owns_simulation() const { return false; }
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
