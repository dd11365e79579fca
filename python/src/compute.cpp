// SPDX-License-Identifier: GPL-3.0-or-later
// What mor.reduce, mor.simulate, the norms and mor.run compute, through the library's seams:
// the method registry reads the keyword arguments as a [reduction] table and reduces the
// model's LtiOperator (or the chain, for the projection methods) exactly as `mor run` does;
// what the method records (/reduction of a results file, kept in memory as an io::Record)
// becomes the reduced model's hsv, info and records.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>

#include <pybind11/stl.h>

#include "experiments/runner/method.hpp"
#include "experiments/runner/pipeline.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/sweep.hpp"
#include "experiments/runner/sweep_run.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "python/src/bindings.hpp"
#include "python/src/compute.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/memory.hpp"
#include "src/core/timing.hpp"
#include "src/io/contained.hpp"
#include "src/signals/signal.hpp"

namespace mor::python {
namespace fs = std::filesystem;
using namespace experiments;

namespace {

py::object attribute_value(const io::AttributeValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

/// A dataset of a record as Python sees it: a float array (vectors, integers), a 2-D Fortran-order
/// array (matrices), a list of str (strings).
py::object dataset_value(const io::Record::Data& data) {
  if (const auto* v = std::get_if<Vector>(&data)) return vector_copy(*v);
  if (const auto* k = std::get_if<std::vector<std::int64_t>>(&data)) {
    Vector x(static_cast<Index>(k->size()));
    for (std::size_t i = 0; i < k->size(); ++i)
      x[static_cast<Index>(i)] = static_cast<double>((*k)[i]);
    return vector_copy(x);
  }
  if (const auto* X = std::get_if<Matrix>(&data)) {
    py::array_t<double, py::array::f_style> a({X->rows(), X->cols()});
    std::copy(X->data(), X->data() + X->size(), a.mutable_data());
    return a;
  }
  if (const auto* s = std::get_if<std::vector<std::string>>(&data)) return py::cast(*s);
  return py::none();
}

/// What the method recorded under /reduction, in memory: its attributes into info (sorted by
/// name), its datasets into records (keyed by their path below /reduction, in the order of a
/// sorted walk of the groups), the reduced matrices of /reduction/reduced left out.
ReductionRecord reduction_record(const io::Record& record) {
  ReductionRecord rec;
  const io::Record::Node* root = record.find(layout::kReduction);
  require(root != nullptr, "internal: the method recorded no ", layout::kReduction);
  std::vector<std::pair<std::string, const io::AttributeValue*>> attributes;
  for (const auto& [name, value] : root->attributes) attributes.emplace_back(name, &value);
  std::sort(attributes.begin(), attributes.end());
  for (const auto& [name, value] : attributes) {
    rec.info[py::str(name)] = attribute_value(*value);
    if (name == "method") rec.method = std::get<std::string>(*value);
  }
  const std::string prefix = std::string(layout::kReduction) + "/";
  const std::string skip = std::string(layout::kReductionReduced) + "/";
  // A path's parts, so that sorting them walks the groups as a sorted listing does.
  std::vector<std::pair<std::vector<std::string>, const io::Record::Node*>> datasets;
  for (const io::Record::Node& n : record.nodes()) {
    if (n.group || n.path.rfind(prefix, 0) != 0 || n.path.rfind(skip, 0) == 0) continue;
    std::vector<std::string> parts;
    std::stringstream ss(n.path.substr(prefix.size()));
    for (std::string part; std::getline(ss, part, '/');) parts.push_back(part);
    datasets.emplace_back(std::move(parts), &n);
  }
  std::sort(datasets.begin(), datasets.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [parts, node] : datasets)
    rec.records[py::str(node->path.substr(prefix.size()))] = dataset_value(node->data);
  return rec;
}

/// What the worker thread returns from a reduction (Python objects are made afterwards).
struct ReductionOutcome {
  std::optional<ReducedModel> linear;
  std::shared_ptr<ProjectionReduction> projected;
  std::shared_ptr<FullModel> projected_full;
  bool first_order_record = false;
  /// "" unless a linear method reduced a nonlinear model: the state of its linearisation.
  std::string linearisation;
  std::vector<std::pair<std::string, double>> stages;
  double seconds = 0;
  std::vector<MethodStatus> statuses;
};

std::string method_names() {
  std::string s;
  for (const auto& m : reduction_methods()) {
    if (!s.empty()) s += ", ";
    s += m.name;
  }
  return s;
}

/// The experiment a reduction runs in, as `mor run` builds it from a file: the model's own spec
/// (an in-memory system has no TOML form, so none is written and read back), the method, and
/// [[training]] and [simulation] read from `experiment` by the runner's readers of those tables
/// (the other tables keep the program's defaults); the method checked against it.
std::shared_ptr<ExperimentConfig> experiment_of(const Model& model,
                                                std::shared_ptr<const ReductionMethod> method,
                                                const py::dict& experiment,
                                                const std::string& source) {
  auto c = std::make_shared<ExperimentConfig>();
  c->name = source;
  c->source = source;
  c->model = model.spec;
  c->parameters = model.parameters;  // a parametric model: one reduced model for its domain
  c->reduction = std::move(method);
  if (model.spec->first_order()) c->snapshot_fields = {"x"};
  with_clean_messages([&] {
    const toml::table root = checked_root(to_toml(experiment, source), source, {},
                                          {"training", "simulation"}, {"training"});
    const fs::path base_dir = fs::current_path();
    c->training = read_training(root.get("training"), source, base_dir);
    const toml::table* simulation = root["simulation"].as_table();
    if (model.spec->owns_simulation()) {
      // A kind integrated by its own CVODE run (the nonlinear multibody benchmarks): its
      // [simulation] keys are read into the spec, which a Python model holds constant.
      require(simulation == nullptr, source, ": model kind \"", model.spec->kind(),
              "\" integrates with its own [simulation] keys (CVODE), read from an experiment "
              "file: leave out experiment['simulation'], or run the file with mor.run");
      c->integrator = model.spec->integrator_options();
    } else {
      TableReader r(simulation, "simulation", source);
      read_simulation(r, base_dir, *c);
    }
    check_reduction(*c, source, source);
    try {
      validate(c->integrator);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(detail::concat(source, ": simulation: ", e.what()));
    }
  });
  return c;
}

}  // namespace

std::shared_ptr<Model> reduce(const std::shared_ptr<Model>& model, const std::string& method,
                              const py::dict& keys, const py::dict& experiment) {
  const std::string source = "mor.reduce";
  toml::table table = to_toml(keys, source);
  require(!table.contains("method"), source,
          ": the method is the second argument, not a keyword (known: ", method_names(), ")");
  for (const char* t : {"training", "simulation"})
    require(!table.contains(t), source, ": ", t,
            " is a table of the experiment, not a key of the method: pass experiment={\"", t,
            "\": ...}");
  table.insert("method", method);
  const std::shared_ptr<const ReductionMethod> method_obj = with_clean_messages([&] {
    TableReader reader(&table, "reduction", source);
    return read_reduction(reader, source, fs::current_path());
  });
  require(method_obj->family() != ReductionMethod::Family::none, source,
          ": method \"none\" does not reduce (known: ", method_names(), ")");
  require(!model->projected_rom, source, ": a projected model (reduced by \"",
          model->reduction ? model->reduction->method : "", "\") cannot be reduced again by \"",
          method,
          "\": it is a projection that only the library simulates, with no system of its "
          "own; reduce the full model");
  // The runner's decision (pipeline.hpp): pod of an LTI model without a projection seam (an
  // in-memory or file model, a linearised benchmark, a reduced model) is linear.
  const std::shared_ptr<const ExperimentConfig> c =
      experiment_of(*model, method_obj, experiment, source);
  const bool linear = reduction_family(*c) == ReductionMethod::Family::linear;
  // The run's guards (pipeline.hpp), before the model is built: its memory, the method's.
  if (const std::string warning = check_run(*c); !warning.empty())
    PyErr_WarnEx(PyExc_ResourceWarning, warning.c_str(), 1);

  // What the method records goes to memory: the same records `mor run` writes to /reduction.
  io::Record out;
  ReductionOutcome outcome = run_released([&] {
    ReductionOutcome o;
    std::shared_ptr<FullModel> full;
    std::unique_ptr<LtiOperator> op;
    if (linear && !c->parameters.empty()) {
      // A parametric model: its center's (the local reductions build their own points).
      full = c->run_model()->build(c->solver);
      op = full->lti_operator();
    } else if (linear) {
      op = model->lti_operator(full);
      // A dense reduced model has no FullModel behind its operator: the one of its system (pod
      // simulates it).
      if (!full) full = model->spec->build(c->solver);
    } else {
      full = c->model->build(c->solver);
    }
    ReductionStep step;
    try {
      step = reduce_step(*c, *full, op.get(), out, &g_stop_requested);
    } catch (const NumericalError& e) {
      const std::string lin = linear ? full->linearisation() : std::string();
      if (lin.empty()) throw;
      throw NumericalError(detail::concat(source, ": \"", method, "\" of the linearisation about ",
                                          lin, ": ", e.what()));
    }
    o.linearisation = step.linearisation;
    o.stages = step.summary()->stages;
    o.seconds = step.summary()->seconds;
    o.statuses = step.summary()->statuses;
    if (step.linear) o.linear = std::move(step.linear);
    if (step.projection) {
      o.projected = std::make_shared<ProjectionReduction>(std::move(*step.projection));
      o.projected_full = full;
    }
    return o;
  });

  auto rom = std::make_shared<Model>();
  ReductionRecord rec = reduction_record(out);
  py::dict timings;
  for (const auto& [stage, s] : outcome.stages) timings[py::str(stage)] = s;
  timings["total_s"] = outcome.seconds;
  rec.info["timings"] = timings;
  // The summary's statuses, typed: what each iteration or solve ended in, and why.
  py::list statuses;
  for (const MethodStatus& st : outcome.statuses) {
    py::dict d;
    d["name"] = st.name.empty() ? std::string(method) : st.name;
    d["status"] = st.status;
    d["message"] = st.message ? py::object(py::str(*st.message)) : py::object(py::none());
    statuses.append(d);
  }
  rec.info["statuses"] = statuses;
  if (!outcome.linearisation.empty()) rec.info["linearisation"] = outcome.linearisation;
  if (outcome.linear) {
    set_linear_rom(*rom, *outcome.linear,
                   out.exists(layout::child(layout::kReductionReduced, "A")));
    rom->parametric_lti = outcome.linear->parametric;
  } else {
    rom->spec = c->model;
    rom->projected_rom = outcome.projected;
    rom->projected_full = outcome.projected_full;
  }
  rom->reduction = std::move(rec);
  return rom;
}

void set_linear_rom(Model& rom, const ReducedModel& reduced, bool first) {
  if (first) {
    auto d = std::make_shared<DenseFirstOrder>();
    const auto& op = *reduced.first_order;
    d->E = op.E();
    d->A = op.A();
    d->B = op.B();
    d->C = op.C();
    d->D = op.D_ff().size() ? op.D_ff() : Matrix::Zero(op.C().rows(), op.B().cols());
    DescriptorSystem sys{d->E.sparseView(), d->A.sparseView(), d->B.sparseView(), d->C.sparseView(),
                         d->D};
    rom.system = std::make_shared<const LinearSystem>(std::move(sys));
    rom.dense_first = d;
  } else {
    auto s = std::make_shared<DenseSecondOrderSystem>(reduced.second_order);
    SecondOrderSystem sys{s->M.sparseView(), s->D.sparseView(),  s->K.sparseView(),
                          s->B.sparseView(), s->Cp.sparseView(), s->Cv.sparseView()};
    rom.system = std::make_shared<const LinearSystem>(std::move(sys));
    rom.dense_second = s;
  }
  rom.spec = memory_spec(rom.system);
}

// --- norms ---------------------------------------------------------------------------------

namespace {

Matrix dense_of(const LtiOperator& op, bool e) {
  const Matrix I = Matrix::Identity(op.n(), op.n());
  Matrix Y;
  if (e)
    op.apply_E(I, Y);
  else
    op.apply_A(I, Y);
  return Y;
}

/// Up to this many states a dense norm takes well under a second and runs in this process.
constexpr Index kDenseInProcess = 200;

/// Refuses a dense computation on n states whose matrices (`copies` dense n x n arrays) exceed
/// this machine's memory budget, naming dense_limit, which chose the dense path.
void require_dense_fits(Index n, double copies, const char* who) {
  const double mib = copies * 8.0 * static_cast<double>(n) * static_cast<double>(n) / 1048576.0;
  const MemoryLimits limits = memory_limits();
  require(!(limits.hard_mib > 0 && mib > limits.hard_mib), who, ": dense_limit makes the n = ", n,
          " model dense, about ", std::llround(mib), " MiB, above this machine's budget of ",
          std::llround(limits.hard_mib), " MiB (", limits.hard_source,
          "); a dense_limit below n takes the low-rank (sparse) path");
}

/// f() of a dense computation on n states: in a child process (io::run_stoppable) that Ctrl-C
/// kills within 0.1 s when it may run for seconds, since LAPACK's kernels poll no stop flag.
std::vector<double> stoppable_dense(Index n, const std::function<std::vector<double>()>& f) {
  return n <= kDenseInProcess ? f() : io::run_stoppable(f);
}

}  // namespace

double h2_norm(const Model& m, Index dense_limit) {
  return run_released([&] {
    std::shared_ptr<FullModel> full;
    auto op = m.lti_operator(full);
    if (op->n() > dense_limit) return h2_norm_low_rank(*op).norm;
    require_dense_fits(op->n(), 4, "mor.h2_norm");
    return stoppable_dense(op->n(), [&] { return std::vector{h2_norm_dense(*op)}; })[0];
  });
}

double h2_error(const Model& m, const Model& rom, Index dense_limit) {
  return run_released([&] {
    std::shared_ptr<FullModel> f1, f2;
    auto op = m.lti_operator(f1);
    auto opr = rom.lti_operator(f2);
    ErrorLtiOperator err(*op, *opr);
    if (err.n() > dense_limit) return h2_norm_low_rank(err).norm;
    require_dense_fits(err.n(), 4, "mor.h2_error");
    return stoppable_dense(err.n(), [&] { return std::vector{h2_norm_dense(err)}; })[0];
  });
}

std::pair<double, double> hinf_norm(const Model& m, Index dense_limit, double w_min, double w_max,
                                    Index n_grid) {
  return run_released([&] {
    std::shared_ptr<FullModel> full;
    auto op = m.lti_operator(full);
    if (op->n() > dense_limit) {
      const HinfResult h = hinf_norm_sweep(*op, w_min, w_max, n_grid);
      return std::pair{h.norm, h.omega};
    }
    // The level-set method's Hamiltonian pencils are 2n x 2n: four n x n blocks each.
    require_dense_fits(op->n(), 24, "mor.hinf_norm");
    const std::vector<double> h = stoppable_dense(op->n(), [&] {
      const HinfResult r = hinf_norm_level_set(dense_of(*op, true), dense_of(*op, false), op->B(),
                                               op->C(), op->D_ff());
      return std::vector{r.norm, r.omega};
    });
    return std::pair{h[0], h[1]};
  });
}

Vector sigma(const Model& m, const Vector& omega) {
  return run_released([&] {
    std::shared_ptr<FullModel> full;
    auto op = m.lti_operator(full);
    return sigma_max(*op, omega);
  });
}

ComplexMatrix transfer(const Model& m, Complex s) {
  return run_released([&] {
    std::shared_ptr<FullModel> full;
    auto op = m.lti_operator(full);
    return transfer_function(*op, s);
  });
}

// --- simulation ----------------------------------------------------------------------------

namespace {

/// u(t) from Python: a callable (called with the GIL), or samples on a time grid (linear
/// interpolation, the end values held outside), or a constant.
class PythonSignal final : public Signal {
 public:
  PythonSignal(Index m, py::object f) : m_(m), f_(std::move(f)) {}
  PythonSignal(Index m, Vector t, Matrix u) : m_(m), t_(std::move(t)), u_(std::move(u)) {}
  Index size() const override { return m_; }
  void evaluate(double t, Eigen::Ref<Vector> u) const override {
    if (f_) {
      py::gil_scoped_acquire gil;
      const Matrix x = to_dense(f_(t), "u(t)");
      require(x.size() == m_ || x.size() == 1, "mor.simulate: u(", t, ") has ", x.size(),
              " entries, the model ", m_, " input(s)");
      for (Index i = 0; i < m_; ++i) u(i) = x.size() == 1 ? x(0, 0) : x.data()[i];
      return;
    }
    if (t_.size() <= 1 || t <= t_(0)) {
      u = u_.row(0).transpose();
      return;
    }
    if (t >= t_(t_.size() - 1)) {
      u = u_.row(u_.rows() - 1).transpose();
      return;
    }
    const Index k = std::upper_bound(t_.data(), t_.data() + t_.size(), t) - t_.data() - 1;
    const double a = (t - t_(k)) / (t_(k + 1) - t_(k));
    u = ((1 - a) * u_.row(k) + a * u_.row(k + 1)).transpose();
  }
  std::string describe() const override { return f_ ? "python callable" : "python samples"; }

 private:
  Index m_;
  py::object f_;
  Vector t_;
  Matrix u_;  ///< one row per time
};

/// One signal per input (mor.simulate with u a list or a dict): each part has one channel.
class PerInputSignal final : public Signal {
 public:
  explicit PerInputSignal(std::vector<std::unique_ptr<Signal>> parts) : parts_(std::move(parts)) {}
  Index size() const override { return static_cast<Index>(parts_.size()); }
  void evaluate(double t, Eigen::Ref<Vector> u) const override {
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      double x = 0.0;
      Eigen::Map<Vector> one(&x, 1);
      parts_[i]->evaluate(t, one);
      u(static_cast<Index>(i)) = x;
    }
  }
  std::string describe() const override {
    std::string s = "per input: ";
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      if (i > 0) s += "; ";
      s += parts_[i]->describe();
    }
    return s;
  }
  std::vector<double> discontinuities() const override {
    std::vector<double> all;
    for (const auto& p : parts_) {
      const std::vector<double> d = p->discontinuities();
      all.insert(all.end(), d.begin(), d.end());
    }
    std::sort(all.begin(), all.end());
    return all;
  }

 private:
  std::vector<std::unique_ptr<Signal>> parts_;
};

bool is_signal_entry(py::handle e) {
  return py::isinstance<SignalObject>(e) || PyCallable_Check(e.ptr()) || e.is_none();
}

/// The signal of one input: a mor.Signal of one channel, a callable, a number, or None (zero).
std::unique_ptr<Signal> one_input(py::handle e, const std::string& where) {
  if (e.is_none()) return make_zero_signal(1);
  if (py::isinstance<SignalObject>(e)) {
    const auto& s = e.cast<const SignalObject&>();
    require(s.values->size() == 1, "mor.simulate: ", where, " is a table of ", s.values->size(),
            " columns; an entry of u drives one input (pass the table itself to drive all)");
    return signal_for_inputs(e, 1);
  }
  if (PyCallable_Check(e.ptr()))
    return std::make_unique<PythonSignal>(1, py::reinterpret_borrow<py::object>(e));
  const Matrix x = to_dense(e, "mor.simulate: " + where);
  require(x.size() == 1, "mor.simulate: ", where, " = ", std::string(py::repr(e)),
          " is not a mor.Signal, a callable, a number or None");
  return std::make_unique<PythonSignal>(1, Vector(), Matrix::Constant(1, 1, x(0, 0)));
}

/// u as one signal per input, if it is a list or tuple of m entries one of which is a
/// mor.Signal, a callable or None, or a dict {input: entry} (0-based inputs, the others zero);
/// nullptr otherwise (then u is a constant or samples).
std::unique_ptr<Signal> per_input(py::handle u, Index m) {
  std::vector<std::unique_ptr<Signal>> parts;
  if (py::isinstance<py::dict>(u)) {
    std::vector<py::handle> entries(static_cast<std::size_t>(m), py::none());
    for (auto [k, v] : u.cast<py::dict>()) {
      require(py::isinstance<py::int_>(k), "mor.simulate: u has the key ", std::string(py::repr(k)),
              "; the keys of a dict u are 0-based input numbers");
      const auto i = k.cast<long long>();
      require(i >= 0 && i < m, "mor.simulate: u[", i, "]: the model has ", m,
              " input(s), numbered 0 to ", m - 1);
      entries[static_cast<std::size_t>(i)] = v;
    }
    for (Index i = 0; i < m; ++i)
      parts.push_back(
          one_input(entries[static_cast<std::size_t>(i)], detail::concat("u[", i, "]")));
    return std::make_unique<PerInputSignal>(std::move(parts));
  }
  if (!py::isinstance<py::list>(u) && !py::isinstance<py::tuple>(u)) return nullptr;
  const auto seq = py::reinterpret_borrow<py::sequence>(u);
  bool any = false;
  for (py::handle e : seq) any = any || is_signal_entry(e);
  if (!any) return nullptr;
  require(static_cast<Index>(seq.size()) == m, "mor.simulate: u has ", seq.size(),
          " entries, one per input; the model has ", m, " input(s)");
  for (Index i = 0; i < m; ++i)
    parts.push_back(one_input(seq[static_cast<std::size_t>(i)], detail::concat("u[", i, "]")));
  return std::make_unique<PerInputSignal>(std::move(parts));
}

}  // namespace

py::tuple simulate(const std::shared_ptr<Model>& model, py::object u, double t_end, double dt,
                   const std::string& integrator, double t0, Index stride, bool snapshots,
                   Index max_steps) {
  const std::string source = "mor.simulate";
  IntegratorOptions o;
  o.scheme = parse_scheme(integrator);
  o.t0 = t0;
  o.t_end = t_end;
  o.dt = dt;
  o.observe_stride = stride;
  o.stop_requested = &g_stop_requested;  // set by run_released on Ctrl-C
  validate(o);
  require(max_steps >= 1, source, ": max_steps must be >= 1, got ", max_steps);
  // The guards of every run (pipeline.hpp: the step limit, the model's memory and what this call
  // keeps: t, y and the states of every observed step), before anything is built.
  ExperimentConfig c;
  c.source = source;
  c.model = model->spec;
  c.integrator = o;
  c.max_steps = max_steps;
  // A first-order model runs in its second-order embedding with x = v (src/systems/lti.hpp).
  const bool first_order = model->first_order();
  const Index n_states =
      model->projected_rom ? model->projected_rom->main.model->n() : model->spec->size();
  const Index nx = first_order ? n_states : 2 * n_states;
  const auto kept = [&](Index p) {
    const double steps = (t_end - t0) / dt;
    return KeptSamples{static_cast<Index>(std::min(steps / static_cast<double>(stride) + 2, 1e15)),
                       1 + p + (snapshots ? nx : 0)};
  };
  check_run(c, kept(0));
  const Index steps = step_count(o);
  std::shared_ptr<FullModel> full;
  require(model->parameters.empty(), source,
          ": this model is a family over its parameters; simulate the model at a point (the "
          "same keys with values, e.g. mor.Chain(N=..., k_n=1.7)) or a parametric reduced "
          "model's rom.at(...)");
  if (!model->projected_rom) full = model->spec->build(SparseBackend::cholmod);
  const ProjectedModel* rom =
      model->projected_rom ? model->projected_rom->main.model.get() : nullptr;
  const Index m = full ? full->n_inputs() : rom->n_inputs();
  const Index p = full ? full->n_outputs() : rom->n_outputs();
  if (const std::string warning = check_run(c, kept(p)); !warning.empty())
    PyErr_WarnEx(PyExc_ResourceWarning, warning.c_str(), 1);
  std::unique_ptr<Signal> input = signal_for_inputs(u, m);  // a mor.Signal, as [input] drives it
  if (!input) input = per_input(u, m);
  if (input) {
    // a mor.Signal, or one signal per input
  } else if (PyCallable_Check(u.ptr())) {
    input = std::make_unique<PythonSignal>(m, u);
  } else {
    Matrix samples = to_dense(u, "u", m == 1 ? 'c' : 'r');
    if (samples.rows() == 1 && samples.cols() == 1) samples = Matrix::Constant(1, m, samples(0, 0));
    Vector t;
    if (samples.rows() > 1) {
      require(samples.rows() == steps + 1, "mor.simulate: u has ", samples.rows(),
              " samples; the time grid t0:dt:t_end has ", steps + 1);
      t = Vector::LinSpaced(steps + 1, t0, t_end);
    }
    if (samples.cols() == 1 && m > 1) samples = samples.replicate(1, m).eval();
    require(samples.cols() == m, "mor.simulate: u has ", samples.cols(), " column(s), the model ",
            m, " input(s)");
    input = std::make_unique<PythonSignal>(m, std::move(t), std::move(samples));
  }
  std::vector<double> ts, ys, xs;
  Vector y(p);
  Index nx_seen = 0;
  // The run's steps (pipeline.hpp), as `mor run` takes them: the full model's, or the projected
  // model's; each observed step keeps t, y and with snapshots the state.
  const auto keep = [&](double t, const Vector& q, const Vector& v) {
    ts.push_back(t);
    ys.insert(ys.end(), y.data(), y.data() + y.size());
    if (!snapshots) return;
    if (!first_order) xs.insert(xs.end(), q.data(), q.data() + q.size());
    xs.insert(xs.end(), v.data(), v.data() + v.size());
    nx_seen = first_order ? v.size() : q.size() + v.size();
  };
  run_released([&] {
    if (full) {
      simulate_full_step(*full, *input, o,
                         [&](Index, double t, const Vector& q, const Vector& v, const Vector& uu) {
                           full->output(q, v, uu, y);
                           keep(t, q, v);
                         });
    } else {
      simulate_reduced_step(
          *rom, *input, o,
          [&](Index, double t, const Vector& q, const Vector& v, const Vector&) {
            rom->output(q, v, y);
            keep(t, q, v);
          },
          detail::concat(model->reduction ? model->reduction->method : "projected",
                         ", r = ", rom->n()));
    }
  });
  py::array_t<double> t(static_cast<py::ssize_t>(ts.size()));
  std::copy(ts.begin(), ts.end(), t.mutable_data());
  py::array_t<double> yy({static_cast<py::ssize_t>(ts.size()), static_cast<py::ssize_t>(p)});
  std::copy(ys.begin(), ys.end(), yy.mutable_data());
  if (!snapshots) return py::make_tuple(t, yy);
  py::array_t<double> x({static_cast<py::ssize_t>(ts.size()), static_cast<py::ssize_t>(nx_seen)});
  std::copy(xs.begin(), xs.end(), x.mutable_data());
  return py::make_tuple(t, yy, x);
}

// --- experiments ---------------------------------------------------------------------------

std::string run_file(const std::string& path, const std::vector<std::string>& overrides,
                     const std::string& output, py::object progress) {
  ExperimentConfig c = load_experiment(path, overrides);
  if (!output.empty()) c.output = output;
  if (const std::string warning = check_run(c); !warning.empty())
    PyErr_WarnEx(PyExc_ResourceWarning, warning.c_str(), 1);
  RunOptions options;
  options.stop_requested = &g_stop_requested;
  options.command_line = "python: mor.run(" + path + ")";
  if (!progress.is_none())
    options.report_stage = [&progress](const std::string& stage, double fraction) {
      py::gil_scoped_acquire gil;
      progress(stage, fraction);
    };
  const RunSummary s = run_released([&] { return run_experiment(c, options); });
  return s.results.string();
}

std::string sweep_file(const std::string& path, const std::vector<std::string>& overrides, int jobs,
                       const std::string& program) {
  const SweepConfig c = load_sweep(path, overrides);
  SweepRunOptions options;
  options.jobs = jobs;
  options.quiet = true;
  options.stop_requested = &g_stop_requested;
  options.command_line = "python: mor.sweep(" + path + ")";
  options.program = program;
  options.worker_arguments = {"sweep", path};
  for (const auto& o : overrides)
    options.worker_arguments.insert(options.worker_arguments.end(), {"--set", o});
  const SweepRunSummary s = run_released([&] { return run_sweep(c, options); });
  require(s.failed == 0, "mor.sweep: ", s.failed, " of ", s.points, " points failed (see ",
          c.points_dir.string(), ")");
  return c.output.string();
}

}  // namespace mor::python
