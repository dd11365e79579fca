// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/ordered_tasks.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/training_ranks.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>

#include "reduction/deim.hpp"
#include "reduction/ecsw.hpp"
#include "reduction/galerkin.hpp"
#include "reduction/incremental_svd.hpp"
#include "reduction/pod.hpp"
#include "src/core/errors.hpp"
#include "src/core/progress.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

/// Snapshot columns appended into spare capacity (geometric growth); or, with max_rank > 0,
/// compressed as they come by an incremental SVD (reduction/incremental_svd.hpp) to at most
/// max_rank columns U S whose POD is that of all the snapshots (a parametric training's many
/// runs: memory n max_rank, not n times the snapshots).
class SnapshotBuffer {
 public:
  explicit SnapshotBuffer(Index n, Index max_rank = 0) : X_(n, 0) {
    if (n > 0 && max_rank > 0) svd_.emplace(n, max_rank);
  }
  void append(const Vector& x) {
    ++count_;
    if (svd_) return svd_->append(x);
    if (used_ == X_.cols())
      X_.conservativeResize(Eigen::NoChange, std::max<Index>(64, X_.cols() + X_.cols() / 2));
    X_.col(used_++) = x;
  }
  /// Appends what another buffer took (its snapshots, or their compression U S), counting
  /// `snapshots` snapshots: the merge of a run's own buffer (IncrementalSvd::append_block).
  void append_taken(Matrix B, Index snapshots) {
    count_ += snapshots;
    if (B.cols() == 0) return;
    if (svd_) return svd_->append_block(std::move(B));
    if (used_ + B.cols() > X_.cols())
      X_.conservativeResize(Eigen::NoChange, std::max(used_ + B.cols(), X_.cols() + X_.cols() / 2));
    X_.middleCols(used_, B.cols()) = B;
    used_ += B.cols();
  }
  /// The snapshots appended.
  Index count() const { return count_; }
  /// A copy of the snapshots so far (or of their compression U S).
  Matrix peek() {
    if (svd_) return svd_->compressed();
    return X_.leftCols(used_);
  }
  /// The snapshots (or their compression U S).
  Matrix take() {
    if (svd_) return svd_->take();
    X_.conservativeResize(Eigen::NoChange, used_);
    return std::move(X_);
  }

 private:
  Matrix X_;
  Index used_ = 0, count_ = 0;
  std::optional<IncrementalSvd> svd_;
};

/// What the second snapshot matrix G holds, of the positions of the training runs: the nodal
/// force g(q) (DEIM on nodes), the element forces phi(G q) (DEIM on elements), the positions q
/// themselves (ECSW, which trains on them reduced), or nothing.
enum class ForceSnapshots { none, nodal, elements, positions };

/// Snapshots Q for the POD basis (if wanted: positions, and velocities side by side with them
/// if reduction.pod_snapshots has "v") and the snapshots G of the hyper-reduction (nonlinear
/// models only; see ForceSnapshots), of the [[training]] runs and the training files.
struct TrainingData {
  Matrix Q, G;
  Index snapshots = 0;  ///< snapshots taken (Q and G may hold their compression)
  double seconds = 0;
};

/// Columns the incremental SVD keeps of the state (q_rank) and force (g_rank) snapshots: 0 for
/// none (every snapshot kept), as without [parameters].
struct SnapshotCompression {
  Index q_rank = 0, g_rank = 0;
};

/// Which snapshots of the state Q holds (keep_positions: any).
struct StateSnapshots {
  bool keep_positions = false;
  bool with_p = true;   ///< positions (a second-order model)
  bool with_v = false;  ///< velocities, side by side with the positions
};

/// What every training run records and how: the same on every thread and rank.
struct TrainingRunSpec {
  StateSnapshots fields;
  SnapshotCompression compression;
  bool nonlinear = false, elements = false, positions = false, first_order = false;
  Index n = 0, force_rows = 0, stride = 1;
};

/// Where one run's snapshots go: the collection's buffers (no [parameters], the training files)
/// or a run's own; the force scratch vector and the network of the run's model.
struct RunSnapshots {
  SnapshotBuffer& Q;
  SnapshotBuffer& G;
  Vector& g;
  const NetworkOperators* net;
  Matrix Y;  ///< the run's outputs, if wanted
};

void add_position(const TrainingRunSpec& s, const Vector& q, RunSnapshots& to) {
  // A first-order model's state x is v (q is its time integral): its snapshots are x alone.
  if (s.fields.keep_positions && s.fields.with_p && !s.first_order) to.Q.append(q);
  if (s.nonlinear) {
    if (s.positions)
      to.g = q;
    else if (s.elements)
      to.net->element_forces(q, to.g);
    else
      to.net->nonlinear_force(q, to.g);
    to.G.append(to.g);
  }
}

template <class V>
void add_velocity(const TrainingRunSpec& s, const V& v, RunSnapshots& to) {
  if (s.fields.keep_positions && (s.first_order || s.fields.with_v)) to.Q.append(v);
}

/// The full model `full` (at mu; empty without [parameters]) on [[training]] input i, its
/// snapshots into `to` (and its outputs, one row per observed step, if wanted).
void simulate_training_run(const ExperimentConfig& c, const TrainingRunSpec& s, FullModel& full,
                           const Vector& mu, std::size_t i, RunSnapshots& to, bool want_outputs,
                           Index number, bool progress_line, const std::atomic<bool>* stop) {
  const std::string at = c.parameters.empty() ? "" : concat(" at ", c.parameters.describe(mu));
  IntegratorOptions run = c.integrator;
  run.observe_stride = s.stride;
  run.stop_requested = stop;
  const auto input = make_signal(c.training[i], full.n_inputs());
  Vector q = Vector::Zero(s.n), v = Vector::Zero(s.n), y(full.n_outputs());
  std::vector<double> ys;
  ProgressReporter progress(concat(c.name, ": training run ", number, at), progress_line);
  try {
    full.simulate(
        *input, run, q, v,
        [&](Index, double, const Vector& qk, const Vector& vk, const Vector& u) {
          add_position(s, qk, to);
          add_velocity(s, vk, to);
          if (want_outputs) {
            full.output(qk, vk, u, y);
            ys.insert(ys.end(), y.begin(), y.end());
          }
        },
        &progress);
  } catch (const NumericalError& e) {
    throw NumericalError(
        concat("training run ", i, " (", input->describe(), ")", at, ": ", e.what()));
  }
  if (want_outputs)
    to.Y = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        ys.data(), static_cast<Index>(ys.size()) / full.n_outputs(), full.n_outputs());
}

/// One run of a parametric training (the model at mu on input i) into buffers of its own,
/// compressed by their own incremental SVDs, taken: what the collection merges.
struct TakenRun {
  Matrix Q, G, Y;
  Index q_count = 0, g_count = 0;
};

TakenRun parametric_training_run(const ExperimentConfig& c, const TrainingRunSpec& s,
                                 const Vector& mu, std::size_t i, bool want_outputs, Index number,
                                 bool progress_line, const std::atomic<bool>* stop) {
  // Its own model (constant data, its workspace and counts), the model at mu.
  const std::unique_ptr<FullModel> full = c.model->at(c.parameters, mu)->build(c.solver);
  SnapshotBuffer q(s.fields.keep_positions ? s.n : 0, s.compression.q_rank);
  SnapshotBuffer g(s.nonlinear ? s.force_rows : 0, s.positions ? 0 : s.compression.g_rank);
  Vector gv(s.force_rows);
  RunSnapshots own{q, g, gv, s.nonlinear ? full->network_operators() : nullptr, Matrix()};
  simulate_training_run(c, s, *full, mu, i, own, want_outputs, number, progress_line, stop);
  TakenRun out;
  out.q_count = q.count();
  out.g_count = g.count();
  out.Q = q.take();
  out.G = g.take();
  out.Y = std::move(own.Y);
  return out;
}

/// A training run as another rank receives it: the run's spec, its point and input.
Bytes encode_training_run(const TrainingRunSpec& s, const Vector& mu, Index input,
                          bool want_outputs, Index number) {
  Bytes b;
  for (bool f : {s.fields.keep_positions, s.fields.with_p, s.fields.with_v, s.nonlinear, s.elements,
                 s.positions, s.first_order, want_outputs})
    b.put(static_cast<std::int64_t>(f));
  for (Index x :
       {s.compression.q_rank, s.compression.g_rank, s.n, s.force_rows, s.stride, input, number})
    b.put(static_cast<std::int64_t>(x));
  b.put(Matrix(mu));
  return b;
}

Bytes encode_taken_run(const TakenRun& r) {
  Bytes b;
  b.put(static_cast<std::int64_t>(r.q_count));
  b.put(static_cast<std::int64_t>(r.g_count));
  b.put(r.Q);
  b.put(r.G);
  b.put(r.Y);
  return b;
}

TakenRun decode_taken_run(Bytes& b) {
  TakenRun r;
  r.q_count = b.get_int();
  r.g_count = b.get_int();
  r.Q = b.get_matrix();
  r.G = b.get_matrix();
  r.Y = b.get_matrix();
  return r;
}

/// The training's runs on the other ranks under mpirun (nullopt without them).
std::optional<RemoteCodec<TakenRun>> remote_training_codec(const TrainingRunSpec& s,
                                                           const Matrix& points, Index inputs,
                                                           bool want_outputs, Index first_run) {
  if (remote_ranks() == 0) return std::nullopt;
  return RemoteCodec<TakenRun>{RemoteTask::training_run,
                               [&s, &points, inputs, want_outputs, first_run](Index t) {
                                 return encode_training_run(s, points.row(t / inputs).transpose(),
                                                            t % inputs, want_outputs,
                                                            first_run + t + 1);
                               },
                               decode_taken_run};
}

/// The training data of a projection, gathered run by run: the state snapshots Q and the force
/// snapshots G (see ForceSnapshots) of the full model's [[training]] runs (at each point of a
/// parametric domain it is run at) and of the training files.
class TrainingCollector {
 public:
  TrainingCollector(const ExperimentConfig& c, const ProjectionTrainingOptions& red,
                    const FullModel& model, StateSnapshots fields, ForceSnapshots kind,
                    SnapshotCompression compression, const std::atomic<bool>* stop)
      : c_(c), red_(red), net_(model.network_operators()), stop_(stop), t0_(Clock::now()) {
    TrainingRunSpec& s = spec_;
    s.fields = fields;
    s.compression = compression;
    s.nonlinear = !model.is_linear() && kind != ForceSnapshots::none;
    s.elements = kind == ForceSnapshots::elements;
    s.positions = kind == ForceSnapshots::positions;
    s.first_order = model.first_order();
    s.n = model.n();
    s.stride = red.training_stride;
    require(!s.nonlinear || net_ != nullptr,
            "internal: force snapshots of a model without the network structure");
    s.force_rows = s.nonlinear && s.elements ? net_->n_elements() : s.n;
    // ECSW trains on the positions themselves (its force is nonlinear in them): never
    // compressed.
    Q_.emplace(fields.keep_positions ? s.n : 0, compression.q_rank);
    G_.emplace(s.nonlinear ? s.force_rows : 0, s.positions ? 0 : compression.g_rank);
    g_.resize(s.force_rows);
  }

  /// The [[training]] runs of the model at each row of `points` (no rows and no [parameters]:
  /// the model as the experiment file describes it). outputs(j, i, Y), if given, receives the
  /// outputs of run i at point j, one row per observed step, in that order.
  ///
  /// With [parameters] the runs (point j, input i) are independent: c.training_jobs of them run
  /// at once (experiments/runner/ordered_tasks.hpp; and on the other ranks under mpirun), each
  /// into snapshot buffers of its own (compressed by its own incremental SVDs), which are merged
  /// into the collection's in the order of (j, i) whatever the number of threads and ranks: the
  /// result does not depend on them.
  void run(const Matrix& points,
           const std::function<void(Index, std::size_t, const Matrix&)>& outputs = {}) {
    const ExperimentConfig& c = c_;
    const auto inputs = static_cast<Index>(c.training.size());
    if (inputs == 0) return;
    if (c.parameters.empty()) {
      const std::unique_ptr<FullModel> full = c.model->build(c.solver);
      for (Index i = 0; i < inputs; ++i) {
        RunSnapshots own{*Q_, *G_, g_, net_, Matrix()};
        simulate_training_run(c, spec_, *full, Vector(), static_cast<std::size_t>(i), own,
                              static_cast<bool>(outputs), ++runs_, g_progress_enabled.load(),
                              stop_);
        if (outputs) outputs(0, static_cast<std::size_t>(i), own.Y);
      }
      return;
    }
    const Index count = points.rows();
    const int jobs = std::max(1, c.training_jobs);
    const Index first_run = runs_;
    const bool want_outputs = static_cast<bool>(outputs);
    std::function<TakenRun(Index)> task = [&](Index t) {
      return parametric_training_run(
          c, spec_, points.row(t / inputs).transpose(), static_cast<std::size_t>(t % inputs),
          want_outputs, first_run + t + 1, jobs == 1 && g_progress_enabled.load(), stop_);
    };
    std::function<void(Index, TakenRun &&)> merge = [&](Index t, TakenRun&& r) {
      Q_->append_taken(std::move(r.Q), r.q_count);
      G_->append_taken(std::move(r.G), r.g_count);
      if (outputs) outputs(t / inputs, static_cast<std::size_t>(t % inputs), r.Y);
      if (jobs > 1 || remote_ranks() > 0)
        progress_note(concat(c.name, ": training run ", first_run + t + 1, " merged (", t + 1,
                             " of ", count * inputs, ")"));
    };
    run_tasks_in_order<TakenRun>(
        count * inputs, jobs, task, merge,
        remote_training_codec(spec_, points, inputs, want_outputs, first_run));
    runs_ += count * inputs;
  }

  /// The snapshots of reduction.training_files.
  void read_files() {
    const Index N = spec_.n;
    const bool first_order = spec_.first_order;
    for (const auto& file : red_.training_files) {
      const io::ResultsReader reader(file);
      if (first_order) {
        require(reader.exists(layout::kSnapshotsX), "training file '", file.string(),
                "' has no state snapshots /snapshots/x (run it with snapshot_fields = [\"x\"] "
                "and snapshot_stride >= 1)");
        const Matrix X = reader.read_rows_as_columns(layout::kSnapshotsX);
        require(X.rows() == N, "training file '", file.string(),
                "' holds snapshots of n = ", X.rows(), " states, the model has n = ", N);
        for (Index j = 0; j < X.cols(); ++j) add_velocity(X.col(j));
        continue;
      }
      require(reader.exists(layout::kSnapshotsP), "training file '", file.string(),
              "' has no position snapshots /snapshots/p (run it with snapshot_fields "
              "containing \"p\")");
      const Matrix P = reader.read_rows_as_columns(layout::kSnapshotsP);
      require(P.rows() == N, "training file '", file.string(),
              "' holds snapshots of N = ", P.rows(), " coordinates, the model has N = ", N);
      for (Index j = 0; j < P.cols(); ++j) add(Vector(P.col(j)));
      if (spec_.fields.keep_positions && spec_.fields.with_v) {
        require(reader.exists(layout::kSnapshotsV), "training file '", file.string(),
                "' has no velocity snapshots /snapshots/v, which reduction.pod_snapshots asks "
                "for");
        const Matrix Vs = reader.read_rows_as_columns(layout::kSnapshotsV);
        for (Index j = 0; j < Vs.cols(); ++j) add_velocity(Vector(Vs.col(j)));
      }
    }
  }

  /// The state and force snapshots so far (their compression), copied: the collection goes on.
  Matrix state_snapshots() { return Q_->peek(); }
  Matrix force_snapshots() { return G_->peek(); }

  TrainingData take() {
    TrainingData data;
    data.snapshots = std::max(Q_->count(), G_->count());
    data.Q = Q_->take();
    data.G = G_->take();
    data.seconds = seconds_since(t0_);
    return data;
  }

 private:
  void add(const Vector& q) {
    RunSnapshots to{*Q_, *G_, g_, net_, Matrix()};
    add_position(spec_, q, to);
  }
  template <class V>
  void add_velocity(const V& v) {
    RunSnapshots to{*Q_, *G_, g_, net_, Matrix()};
    mor::experiments::add_velocity(spec_, v, to);
  }

  const ExperimentConfig& c_;
  const ProjectionTrainingOptions& red_;
  TrainingRunSpec spec_;
  const NetworkOperators* net_;
  const std::atomic<bool>* stop_;
  Clock::time_point t0_;
  std::optional<SnapshotBuffer> Q_, G_;
  Vector g_;
  Index runs_ = 0;
};

TrainingData collect_training(const ExperimentConfig& c, const ProjectionTrainingOptions& red,
                              const FullModel& model, const Matrix& training_points,
                              StateSnapshots fields, ForceSnapshots kind,
                              SnapshotCompression compression, const std::atomic<bool>* stop) {
  TrainingCollector collector(c, red, model, fields, kind, compression, stop);
  collector.run(training_points);
  collector.read_files();
  return collector.take();
}

/// The outputs of `rom` on the training inputs, every training_stride-th step (per input, a row
/// per observed step); nullopt if a reduced run diverges.
std::optional<std::vector<Matrix>> reduced_training_outputs(const ExperimentConfig& c,
                                                            const ProjectionTrainingOptions& red,
                                                            const ProjectedModel& rom,
                                                            const std::atomic<bool>* stop) {
  IntegratorOptions o = c.integrator;
  o.observe_stride = red.training_stride;
  o.stop_requested = stop;
  std::vector<Matrix> Y;
  for (const InputSpec& spec : c.training) {
    const auto input = make_signal(spec, rom.n_inputs());
    ProjectedModel::Workspace ws(rom);
    Vector q = Vector::Zero(rom.n()), v = Vector::Zero(rom.n()), y;
    std::vector<double> ys;
    try {
      integrate(rom, ws, *input, o, q, v,
                [&](Index, double, const Vector& qk, const Vector& vk, const Vector&) {
                  rom.output(qk, vk, y);
                  ys.insert(ys.end(), y.begin(), y.end());
                });
    } catch (const NumericalError&) {
      return std::nullopt;
    }
    const Index m = rom.n_outputs();
    Y.push_back(
        Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            ys.data(), static_cast<Index>(ys.size()) / m, m));
  }
  return Y;
}

/// ||Y - Y_ref||_2 / ||Y_ref||_2 over every input and observed step (rows beyond the shorter of
/// the two ignored); infinity if Y or Y_ref is missing (a diverged reduced run).
double relative_output_difference(const std::optional<std::vector<Matrix>>& Y,
                                  const std::optional<std::vector<Matrix>>& Y_ref) {
  if (!Y || !Y_ref) return std::numeric_limits<double>::infinity();
  double e2 = 0, y2 = 0;
  for (std::size_t i = 0; i < Y_ref->size(); ++i) {
    const Matrix& A = (*Y)[i];
    const Matrix& B = (*Y_ref)[i];
    const Index rows = std::min(A.rows(), B.rows());
    e2 += (A.topRows(rows) - B.topRows(rows)).squaredNorm();
    y2 += B.squaredNorm();
  }
  return y2 > 0 ? std::sqrt(e2 / y2) : std::sqrt(e2);
}

/// The greedy's indicator at mu, a hierarchical estimate of the relative output error of the
/// order-r model `rom` on the training inputs:
///   ||y_r - y_r'||_2 / ||y_r'||_2,
/// y_r' the outputs of `enriched` (order r' > r, from the same snapshots, twice the DEIM
/// points). Both models are reduced: O(r'^2 + m' r') per step, nothing of size N. It estimates
/// ||y - y_r|| / ||y|| as far as the enriched model is the more accurate one (the saturation
/// assumption), and is no bound; infinity if either reduced run diverges.
double greedy_estimate(const ExperimentConfig& c, const ProjectionTrainingOptions& red,
                       const ParametricProjectedModel& rom,
                       const ParametricProjectedModel& enriched, const Vector& mu,
                       const std::atomic<bool>* stop) {
  return relative_output_difference(reduced_training_outputs(c, red, rom.at(mu), stop),
                                    reduced_training_outputs(c, red, enriched.at(mu), stop));
}

/// reduction.sampling = "greedy": the POD-greedy (Haasdonk & Ohlberger 2008) over the training
/// set Xi. The first point is the one nearest the domain's center; then, each iteration, the
/// parametric reduced model of the snapshots so far (order r) and its enriched model (order
/// r' = min(2 r, rank), twice the DEIM points) run at every unselected point of Xi, and the
/// greedy_batch points of the largest estimate (greedy_estimate) are selected, until the
/// largest is at most greedy_tolerance or every point is selected. Where the snapshots have no
/// rank beyond r (r' = r) there is no estimate: the points farthest from the selected ones are
/// selected. The full model runs only at the selected points, each once: its snapshots join the
/// training data and its outputs give the true errors of the two models before them.
/// collector gathers the snapshots; `reference` is the model at the center (the projections'
/// model).
GreedyRun greedy_training(const ExperimentConfig& c, const ProjectionTrainingOptions& red,
                          const Matrix& Xi, TrainingCollector& collector,
                          const FullModel& reference, Index r_target, ProjectionOptions ro,
                          const std::atomic<bool>* stop) {
  const ParameterDomain& d = c.parameters;
  const Index k = Xi.rows(), p = d.size();
  const ParametricNetwork pn = c.model->parametric_network(d);
  const Vector center = d.center();
  // Coordinates in the unit box (log coordinates for log parameters), for distances.
  Matrix unit(k, p);
  for (Index i = 0; i < k; ++i)
    for (Index j = 0; j < p; ++j) {
      const Parameter& q = d.parameters()[static_cast<std::size_t>(j)];
      unit(i, j) = q.log ? std::log(Xi(i, j) / q.min) / std::log(q.max / q.min)
                         : (Xi(i, j) - q.min) / (q.max - q.min);
    }
  Vector unit_center(p);
  for (Index j = 0; j < p; ++j) {
    const Parameter& q = d.parameters()[static_cast<std::size_t>(j)];
    unit_center[j] = q.log ? std::log(center[j] / q.min) / std::log(q.max / q.min)
                           : (center[j] - q.min) / (q.max - q.min);
  }
  Index first = 0;
  for (Index j = 1; j < k; ++j)
    if ((unit.row(j).transpose() - unit_center).norm() <
        (unit.row(first).transpose() - unit_center).norm())
      first = j;
  std::vector<char> chosen(static_cast<std::size_t>(k), 0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> indicator(static_cast<std::size_t>(k), nan);
  std::vector<Index> batch = {first};
  std::optional<ParametricProjectedModel> rom, enriched;
  GreedyRun g;
  const bool deim = ro.nonlinear == NonlinearTreatment::deim;
  for (Index it = 0;; ++it) {
    // The full model at the batch: snapshots, and outputs for the true errors of `rom` and
    // `enriched`.
    Matrix points(static_cast<Index>(batch.size()), p);
    for (std::size_t b = 0; b < batch.size(); ++b)
      points.row(static_cast<Index>(b)) = Xi.row(batch[b]);
    std::vector<std::optional<std::vector<Matrix>>> Y(batch.size());
    collector.run(points, [&](Index j, std::size_t, const Matrix& Ym) {
      auto& y = Y[static_cast<std::size_t>(j)];
      if (!y) y.emplace();
      y->push_back(Ym);
    });
    for (std::size_t b = 0; b < batch.size(); ++b) {
      chosen[static_cast<std::size_t>(batch[b])] = 1;
      const Vector mu = points.row(static_cast<Index>(b)).transpose();
      auto error = [&](const std::optional<ParametricProjectedModel>& m) {
        return m ? relative_output_difference(reduced_training_outputs(c, red, m->at(mu), stop),
                                              Y[b])
                 : nan;
      };
      g.steps.push_back({it, batch[b], indicator[static_cast<std::size_t>(batch[b])], error(rom),
                         error(enriched)});
    }
    if (std::all_of(chosen.begin(), chosen.end(), [](char x) { return x != 0; })) {
      g.stop = "every training point selected";
      break;
    }
    const Index cap = red.parametric.greedy_max_points;
    if (cap > 0 && static_cast<Index>(g.steps.size()) >= cap) {
      g.stop = concat("greedy_max_points = ", cap, " selected");
      break;
    }
    // The reduced model of the points so far (order r) and the enriched one (order r' > r and
    // twice the DEIM points, if the snapshots have the rank), both from one POD of each
    // snapshot set: their leading columns are shared.
    PodOptions po;  // of compressed snapshots U S: the dense SVD (see PodMethod::bases)
    po.method = PodMethod::svd;
    po.order = 2 * r_target;
    po.order_up_to_rank = true;
    const PodResult pq = pod(collector.state_snapshots(), po);
    const Index r = std::min(r_target, pq.r), r_wide = pq.r;
    std::optional<DeimResult> dr, dw;
    ProjectionOptions ro_wide = ro;
    if (deim) {
      const Index m = red.deim_order > 0 ? red.deim_order : 2 * r;
      PodOptions pg;
      pg.method = PodMethod::svd;
      pg.order = 2 * m;
      pg.order_up_to_rank = true;
      const Matrix U = pod(collector.force_snapshots(), pg).V;
      dr = mor::deim(U.leftCols(std::min(m, U.cols())), red.deim_method);
      dw = mor::deim(U, red.deim_method);
      ro.deim = &*dr;
      ro_wide.deim = &*dw;
    }
    rom.emplace(d, network_of(reference).project(pq.V.leftCols(r), Matrix(), ro), center, pn);
    if (r_wide > r)
      enriched.emplace(d, network_of(reference).project(pq.V, Matrix(), ro_wide), center, pn);
    else
      enriched.reset();
    // The estimate at every unselected point; without an enriched model, the distance in the
    // unit box to the nearest selected point ranks them instead.
    std::vector<Index> order;
    std::vector<double> rank_by(static_cast<std::size_t>(k), 0.0);
    for (Index j = 0; j < k; ++j) {
      if (chosen[static_cast<std::size_t>(j)]) continue;
      order.push_back(j);
      if (enriched) {
        indicator[static_cast<std::size_t>(j)] =
            greedy_estimate(c, red, *rom, *enriched, Xi.row(j).transpose(), stop);
        rank_by[static_cast<std::size_t>(j)] = indicator[static_cast<std::size_t>(j)];
      } else {
        double nearest = std::numeric_limits<double>::infinity();
        for (Index i = 0; i < k; ++i)
          if (chosen[static_cast<std::size_t>(i)])
            nearest = std::min(nearest, (unit.row(j) - unit.row(i)).norm());
        rank_by[static_cast<std::size_t>(j)] = nearest;
      }
    }
    std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) {
      return rank_by[static_cast<std::size_t>(a)] > rank_by[static_cast<std::size_t>(b)];
    });
    const std::string at = d.describe(Xi.row(order.front()).transpose());
    if (!enriched) {
      progress_note(concat(c.name, ": greedy iteration ", it + 1, ": the snapshots' rank is ", r,
                           ", no estimate; the farthest point ", at));
    } else {
      const double largest = indicator[static_cast<std::size_t>(order.front())];
      progress_note(concat(c.name, ": greedy iteration ", it + 1, ": largest estimate ", largest,
                           " (orders ", r, " and ", r_wide, ") at ", at));
      if (largest <= red.parametric.greedy_tolerance) {
        g.stop = concat("largest estimate ", largest, " <= greedy_tolerance");
        break;
      }
    }
    Index room = red.parametric.greedy_batch;
    if (cap > 0) room = std::min(room, cap - static_cast<Index>(g.steps.size()));
    order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(room)));
    batch = order;
  }
  g.correlation = log_correlation(g.steps);
  return g;
}

/// The orders to build: the main one first, then the other compare_orders ascending.
std::vector<Index> orders_to_build(Index r_main, const std::vector<Index>& compare) {
  std::vector<Index> others;
  for (Index r : compare)
    if (r != r_main) others.push_back(r);
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  others.insert(others.begin(), r_main);
  return others;
}

/// POD of the force snapshots wide enough for every order's m (2 r or reduction.deim_order),
/// and per order the DEIM / Q-DEIM selection on its leading m columns (the POD basis is nested).
struct HyperReduction {
  PodResult pod_g;
  std::vector<DeimResult> deim;  ///< per order of orders_to_build
  double seconds = 0;
};

HyperReduction hyper_reduce(const ProjectionTrainingOptions& red, Matrix F,
                            const std::vector<Index>& orders, PodMethod method) {
  const auto t0 = Clock::now();
  require(F.cols() > 0,
          "reduction: nonlinear = \"deim\" needs force snapshots from training "
          "runs ([[training]] inputs or reduction.training_files); there are none");
  auto wanted = [&](Index r) { return red.deim_order > 0 ? red.deim_order : 2 * r; };
  Index m_max = 0;
  for (Index r : orders) m_max = std::max(m_max, wanted(r));
  HyperReduction h;
  PodOptions pg;
  pg.method = method;
  pg.order = std::min(m_max, F.cols());
  // The default m = 2 r may exceed the numerical rank of the force snapshots: it is then
  // lowered to that rank. An explicit deim_order above it stays an error.
  pg.order_up_to_rank = red.deim_order == 0;
  try {
    h.pod_g = pod(F, pg);
  } catch (const InvalidArgument& e) {
    if (red.deim_order == 0) throw;
    throw InvalidArgument(concat("reduction.deim_order = ", red.deim_order,
                                 " is more than the force snapshots support (", e.what(),
                                 "); a smaller deim_order, or leave it out (2 r, lowered to the "
                                 "snapshots' rank)"));
  }
  const DeimMethod dm = red.deim_method;
  for (Index r : orders) {
    const Index m = std::min(wanted(r), h.pod_g.V.cols());
    h.deim.push_back(deim(h.pod_g.V.leftCols(m), dm));
  }
  h.seconds = seconds_since(t0);
  return h;
}

void write_deim(io::RecordSink& out, const std::string& grp, const HyperReduction& h) {
  const DeimResult& d = h.deim.front();
  const auto m = static_cast<Index>(d.indices.size());
  out.set_attribute(grp, "m", static_cast<std::int64_t>(m));
  out.set_attribute(grp, "deim_method", std::string(to_string(d.method)));
  out.set_attribute(grp, "deim_error_constant", d.error_constant);
  out.write_vector(layout::kReductionForceSv, h.pod_g.singular_values);
  Vector idx(m);
  for (Index i = 0; i < m; ++i)
    idx[i] = static_cast<double>(d.indices[static_cast<std::size_t>(i)]) + 1.0;
  // 1-based indices, as in [model]: masses (nodes) or elements (rows of G).
  out.write_vector(layout::kReductionDeimMasses, idx);
}

/// ECSW per order: the positions Qs (n x ns) reduced, q_r = (W^T V)^{-1} W^T q (V^T q for
/// POD's orthonormal V), and the weights trained on them.
std::vector<EcswResult> train_ecsw(const ProjectionTrainingOptions& red, const FullModel& model,
                                   const Matrix& V, const Matrix& W, const Matrix& Qs,
                                   const std::vector<Index>& orders) {
  EcswOptions eo;
  eo.tolerance = red.ecsw_tolerance;
  std::vector<EcswResult> out;
  for (Index r : orders) {
    const Matrix Vr = V.leftCols(r);
    const Matrix Wr = W.size() > 0 ? Matrix(W.leftCols(r)) : Matrix();
    const Matrix& L = W.size() > 0 ? Wr : Vr;
    const Matrix LtV = L.transpose() * Vr;
    const Matrix LtQ = L.transpose() * Qs;
    const Matrix Qr = LtV.partialPivLu().solve(LtQ);
    try {
      out.push_back(network_of(model).ecsw(Vr, Wr, Qr, eo));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(concat("reduction.nonlinear = \"ecsw\" at r = ", r, ": ", e.what()));
    }
  }
  return out;
}

void write_ecsw(ReductionSummary& summary, const std::string& grp, const EcswResult& e,
                Index n_elements) {
  io::RecordSink& out = summary.details;
  const auto k = static_cast<Index>(e.elements.size());
  out.set_attribute(grp, "ecsw_elements", static_cast<std::int64_t>(k));
  out.set_attribute(grp, "ecsw_candidates", static_cast<std::int64_t>(n_elements));
  out.set_attribute(grp, "ecsw_tolerance", e.tolerance);
  out.set_attribute(grp, "ecsw_relative_residual", e.relative_residual);
  out.set_attribute(grp, "ecsw_iterations", static_cast<std::int64_t>(e.iterations));
  summary.statuses.push_back({"ecsw", std::string(to_string(e.status)), std::nullopt});
  out.set_attribute(grp, "ecsw_snapshots_used", static_cast<std::int64_t>(e.snapshots_used));
  out.set_attribute(grp, "ecsw_snapshot_stride", static_cast<std::int64_t>(e.snapshot_stride));
  Vector idx(k);
  for (Index i = 0; i < k; ++i)
    idx[i] = static_cast<double>(e.elements[static_cast<std::size_t>(i)]) + 1.0;
  // 1-based rows of G, as deim_masses.
  out.write_vector(layout::kReductionEcswElements, idx);
  out.write_vector(layout::kReductionEcswWeights, e.weights);
}

/// /reduction/training_parameters and /reduction/affine: the parametric model's terms.
void record_parametric(io::RecordSink& out, const ParametricProjectedModel& p,
                       const Matrix& training_points) {
  out.set_attribute(layout::kReduction, "parametric", std::int64_t{1});
  out.set_attribute(layout::kReduction, "training_points",
                    static_cast<std::int64_t>(training_points.rows()));
  out.write_matrix(layout::kReductionTrainingParameters, training_points);
  out.create_group(layout::kReductionAffine);
  // theta_i = scale * the product of the named parameters ("" for a constant term).
  record_affine_terms(out, "M", p.M_r(), p.domain());
  record_affine_terms(out, "D", p.D_r(), p.domain());
  record_affine_terms(out, "K", p.K_r(), p.domain());
  // B_r, Cp_r, Cv_r do not depend on mu: one constant term each, so that /reduction/affine is
  // the whole reduced model but its force (what mor export writes).
  const ProjectedModel& ref = p.reference();
  for (const auto& [role, X] : {std::pair<const char*, const Matrix*>{"B", &ref.B_r()},
                                {"Cp", &ref.Cp_r()},
                                {"Cv", &ref.Cv_r()}}) {
    AffineOperator<Matrix> op;
    op.terms.push_back({AffineCoefficient{}, *X});
    record_affine_terms(out, role, op, p.domain());
  }
  out.set_attribute(layout::kReductionAffine, "force_scale", p.force_coefficient().scale);
  out.set_attribute(layout::kReductionAffine, "force_factors",
                    p.domain().factor_names(p.force_coefficient().factors));
}

/// /reduction/greedy of the POD-greedy.
void record_pod_greedy(io::RecordSink& out, const GreedyRun& g) {
  record_greedy(out, g,
                "row i: a selected training point (0-based row of training_parameters), the "
                "iteration that selected it, its indicator (the estimate ||y_r - y_r'|| / ||y_r'|| "
                "of the reduced model before it, order r, against its enriched model, order "
                "r' > r; NaN for the first point, the nearest to the center), and the true "
                "relative output errors ||y - y_r|| / ||y|| of the two models there on the "
                "training inputs (true_error: order r; enriched_error: order r')");
}

StateSnapshots snapshot_fields(const std::vector<PodSnapshotField>& fields) {
  auto has = [&](PodSnapshotField f) {
    return std::find(fields.begin(), fields.end(), f) != fields.end();
  };
  return {!fields.empty(), has(PodSnapshotField::p), has(PodSnapshotField::v)};
}

}  // namespace

Bytes run_remote_training_run(const ExperimentConfig& c, Bytes& task,
                              const std::atomic<bool>* stop) {
  TrainingRunSpec s;
  bool* flags[] = {&s.fields.keep_positions,
                   &s.fields.with_p,
                   &s.fields.with_v,
                   &s.nonlinear,
                   &s.elements,
                   &s.positions,
                   &s.first_order};
  for (bool* f : flags) *f = task.get_int() != 0;
  const bool want_outputs = task.get_int() != 0;
  for (Index* x : {&s.compression.q_rank, &s.compression.g_rank, &s.n, &s.force_rows, &s.stride})
    *x = task.get_int();
  const Index input = task.get_int(), number = task.get_int();
  const Vector mu = task.get_matrix().col(0);
  return encode_taken_run(parametric_training_run(c, s, mu, static_cast<std::size_t>(input),
                                                  want_outputs, number, false, stop));
}

Index ProjectionTrainingOptions::compare_max() const {
  return compare_orders.empty() ? 0
                                : *std::max_element(compare_orders.begin(), compare_orders.end());
}

PodResult pod_basis_and_record(const PodReductionOptions& red, const Matrix& Q, Index compare_max,
                               bool first_order, ReductionSummary& summary) {
  const auto t = Clock::now();
  io::RecordSink& out = summary.details;
  const std::string& grp = layout::kReduction;
  PodOptions po;
  po.method = red.training.pod_method;
  if (red.order > 0)
    po.order = red.order;
  else
    po.energy = red.energy;
  PodResult pod_q = pod(Q, po);
  if (compare_max > pod_q.V.cols()) {  // wider, nested: the leading r columns are the same
    PodOptions wide = po;
    wide.energy.reset();
    wide.order = compare_max;
    try {
      pod_q.V = pod(Q, wide).V;
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(concat("reduction.compare_orders: ", e.what()));
    }
  }
  if (red.order > 0)
    out.set_attribute(grp, "order_requested", static_cast<std::int64_t>(red.order));
  else
    out.set_attribute(grp, "energy_requested", red.energy);
  out.set_attribute(grp, "pod_method", std::string(to_string(pod_q.method_used)));
  std::string fields = first_order ? "x" : "";
  if (!first_order)
    for (PodSnapshotField f : red.pod_snapshots)
      fields += std::string(fields.empty() ? "" : ",") + (f == PodSnapshotField::p   ? "p"
                                                          : f == PodSnapshotField::v ? "v"
                                                                                     : "x");
  out.set_attribute(grp, "pod_snapshots", fields);
  out.set_attribute(grp, "captured_energy", pod_q.captured_energy);
  out.set_attribute(grp, "discarded_energy", pod_q.discarded_energy);
  summary.spectra.emplace_back(layout::kReductionPodSv, pod_q.singular_values);
  pod_q.seconds = seconds_since(t);
  return pod_q;
}

ProjectionReduction reduce_by_projection(const ExperimentConfig& c,
                                         const ProjectionTrainingOptions& red,
                                         const ProjectionBasisMethod& basis_method,
                                         const FullModel& given, const std::atomic<bool>* stop) {
  // With [parameters] the projections are of the model at the domain's center, the parametric
  // model's reference (whatever point the caller's model is at).
  std::unique_ptr<FullModel> center;
  if (!c.parameters.empty()) center = c.run_model()->build(c.solver);
  const FullModel& model = center ? *center : given;
  const std::string method(basis_method.name());
  const StateSnapshots fields = snapshot_fields(basis_method.state_snapshots());
  const bool positions = fields.keep_positions;
  const bool nonlinear = !model.is_linear();
  const auto t_start = Clock::now();
  ProjectionReduction result;
  ReductionSummary& summary = result.summary = ReductionSummary(method);
  io::RecordSink& out = summary.details;
  ProjectionOptions ro;
  ro.nonlinear = red.nonlinear;
  ro.sampling = red.deim_sampling;
  if (!nonlinear) ro.nonlinear = NonlinearTreatment::full;  // g = 0: nothing to evaluate
  const bool use_deim = ro.nonlinear == NonlinearTreatment::deim;
  const bool use_ecsw = ro.nonlinear == NonlinearTreatment::ecsw;
  const ForceSnapshots force_kind =
      use_deim ? (ro.sampling == DeimSampling::elements ? ForceSnapshots::elements
                                                        : ForceSnapshots::nodal)
               : (use_ecsw ? ForceSnapshots::positions : ForceSnapshots::none);
  // With [parameters] the force snapshots are compressed (U S): see PodMethod::bases.
  const PodMethod pm = !c.parameters.empty() && red.pod_method == PodMethod::automatic
                           ? PodMethod::svd
                           : red.pod_method;
  const Index compare_max = red.compare_max();

  // 1. Training snapshots: the positions for the bases if the method asks, the forces for DEIM,
  // the positions for ECSW; with [parameters], of the runs at every training point.
  if (!c.parameters.empty())
    result.training_points =
        training_set(c.parameters, red.parametric.training_points, red.parametric.parameter_samples,
                     red.parametric.parameter_seed, c.name, "reduction.training_points");
  TrainingData training;
  std::optional<GreedyRun> greedy;
  if (positions || use_deim || use_ecsw) {
    SnapshotCompression compression;
    if (!c.parameters.empty()) {
      // Enough columns that the leading r (and m) singular vectors of all the snapshots are
      // resolved: four times the order (twice the DEIM points), at least 100.
      const Index r_hint =
          std::max(c.reduction->order() > 0 ? c.reduction->order() : Index{100}, compare_max);
      const Index m_hint = red.deim_order > 0 ? red.deim_order : 2 * r_hint;
      compression = {std::max<Index>(4 * r_hint, 100), std::max<Index>(2 * m_hint, 100)};
    }
    if (!c.parameters.empty() && red.parametric.sampling == ParametricSampling::greedy) {
      require(!use_ecsw,
              "reduction.sampling = \"greedy\" trains DEIM or nothing between its "
              "iterations; nonlinear = \"ecsw\" takes sampling = \"all\"");
      TrainingCollector collector(c, red, model, fields, force_kind, compression, stop);
      const Index r_target =
          std::max<Index>(1, c.reduction->order() > 0 ? c.reduction->order() : 20);
      greedy =
          greedy_training(c, red, result.training_points, collector, model, r_target, ro, stop);
      training = collector.take();
    } else {
      training = collect_training(c, red, model, result.training_points, fields, force_kind,
                                  compression, stop);
    }
    result.training_snapshots = training.snapshots;
    require(result.training_snapshots > 0, "reduction.method = \"", method,
            "\": the training data hold no snapshots");
    summary.stages.emplace_back("snapshots_s", training.seconds);
  }

  const std::string& grp = layout::kReduction;

  // 2. The method's bases V (N x R) and W (empty: Galerkin), R >= every order wanted.
  ProjectionBases bases =
      basis_method.bases(c, model, std::move(training.Q), compare_max, summary, stop);
  training.Q.resize(0, 0);
  const Index r_main = bases.r;
  const Matrix V = std::move(bases.V), W = std::move(bases.W);

  // 3. DEIM for every order, and the projections.
  const std::vector<Index> orders = orders_to_build(r_main, red.compare_orders);
  std::optional<HyperReduction> hyper;
  if (use_deim) {
    hyper = hyper_reduce(red, std::move(training.G), orders, pm);
    summary.stages.emplace_back("deim_s", hyper->seconds);
  }
  std::vector<EcswResult> ecsw;  // per order of orders_to_build
  if (use_ecsw) {
    require(training.G.cols() > 0,
            "reduction: nonlinear = \"ecsw\" needs position snapshots from training runs "
            "([[training]] inputs or reduction.training_files); there are none");
    ecsw = train_ecsw(red, model, V, W, training.G, orders);
    double s = 0;
    for (const auto& e : ecsw) s += e.seconds;
    summary.stages.emplace_back("ecsw_s", s);
  }
  training.G.resize(0, 0);
  const auto t = Clock::now();
  for (std::size_t i = 0; i < orders.size(); ++i) {
    ProjectedVariant variant;
    variant.r = orders[i];
    ProjectionOptions opt = ro;
    if (hyper) {
      opt.deim = &hyper->deim[i];
      variant.m = static_cast<Index>(hyper->deim[i].indices.size());
    }
    if (!ecsw.empty()) {
      opt.ecsw = &ecsw[i];
      variant.ecsw_elements = static_cast<Index>(ecsw[i].elements.size());
      variant.n_elements = network_of(model).n_elements();
      variant.ecsw_snapshot_stride = ecsw[i].snapshot_stride;
    }
    const Matrix Vr = V.leftCols(variant.r);
    const Matrix Wr = W.size() > 0 ? Matrix(W.leftCols(variant.r)) : Matrix();
    variant.model = std::make_unique<ProjectedModel>(network_of(model).project(Vr, Wr, opt));
    (i == 0 ? result.main : result.others.emplace_back()) = std::move(variant);
  }
  if (!c.parameters.empty()) {
    // One reduced model for the domain: the affine terms projected once, the model at the
    // center (the run's own) its reference.
    const Vector center = c.parameters.center();
    result.parametric = std::make_shared<const ParametricProjectedModel>(
        c.parameters, std::move(*result.main.model), center,
        c.model->parametric_network(c.parameters));
    result.main.model = std::make_unique<ProjectedModel>(result.parametric->at(center));
    record_parametric(out, *result.parametric, result.training_points);
    if (greedy) {
      record_pod_greedy(out, *greedy);
      result.selected_points = static_cast<Index>(greedy->steps.size());
      result.greedy_note =
          concat(greedy->stop, "; log indicator / log error correlation ", greedy->correlation);
    }
  }
  summary.stages.emplace_back("projection_s", seconds_since(t));
  summary.seconds = seconds_since(t_start);

  summary.r = r_main;
  out.set_attribute(grp, "nonlinear", std::string(to_string(ro.nonlinear)));
  out.set_attribute(grp, "training_runs", static_cast<std::int64_t>(c.training.size()));
  out.set_attribute(grp, "training_files", static_cast<std::int64_t>(red.training_files.size()));
  out.set_attribute(grp, "training_snapshots",
                    static_cast<std::int64_t>(result.training_snapshots));
  out.set_attribute(grp, "training_stride", static_cast<std::int64_t>(red.training_stride));
  if (hyper) {
    write_deim(out, grp, *hyper);
    out.set_attribute(grp, "deim_sampling", std::string(to_string(ro.sampling)));
  }
  if (!ecsw.empty()) write_ecsw(summary, grp, ecsw.front(), network_of(model).n_elements());
  if (red.store_bases) {
    if (hyper) out.write_matrix(layout::kReductionDeimBasis, hyper->deim.front().U);
    out.write_matrix(layout::kReductionV, Matrix(V.leftCols(r_main)));
    if (W.size() > 0) out.write_matrix(layout::kReductionW, Matrix(W.leftCols(r_main)));
  }
  return result;
}

}  // namespace mor::experiments

namespace mor::experiments {

ReducedModel reduce_linear_by_pod(const ExperimentConfig& c, const PodReductionOptions& red,
                                  const FullModel& model, LtiOperator& full,
                                  const SecondOrderSystem* second_order,
                                  const std::atomic<bool>* stop) {
  const auto t_start = Clock::now();
  ReducedModel reduced;
  ReductionSummary& summary = reduced.summary = ReductionSummary("pod");
  io::RecordSink& out = summary.details;
  // 1. Snapshots of the state x (first order) or of q (and v) (second order).
  TrainingData training =
      collect_training(c, red.training, model, Matrix(), snapshot_fields(red.pod_snapshots),
                       ForceSnapshots::none, {}, stop);
  require(training.Q.cols() > 0, "reduction.method = \"pod\": the training data hold no snapshots");
  summary.stages.emplace_back("snapshots_s", training.seconds);

  const std::string& grp = layout::kReduction;
  // 2. The POD basis, wide enough for every order of compare_orders (nested).
  const Index compare_max = red.training.compare_max();
  const PodResult basis =
      pod_basis_and_record(red, training.Q, compare_max, model.first_order(), summary);
  summary.stages.emplace_back("pod_s", basis.seconds);
  const Index snapshots = training.Q.cols();
  training.Q.resize(0, 0);

  // 3. The Galerkin projection of the system's matrices.
  const auto t = Clock::now();
  summary.r = basis.r;
  const Matrix V = basis.V.leftCols(basis.r);
  if (second_order != nullptr) {
    reduced.second_order = galerkin_second_order(*second_order, V);
    reduced.first_order.reset(new DenseLtiOperator(to_first_order(reduced.second_order)));
    record_reduced_second_order(out, reduced.second_order);
  } else {
    DenseFirstOrderSystem r = galerkin_first_order(full, V);
    reduced.second_order = from_first_order(r.E, r.A, r.B, r.C, r.D);
    record_reduced_first_order(out, r.E, r.A, r.B, r.C, r.D);
    reduced.first_order = std::make_unique<DenseLtiOperator>(
        std::move(r.E), std::move(r.A), std::move(r.B), std::move(r.C), std::move(r.D));
  }
  summary.spectral_abscissa = reduced.first_order->poles().real().maxCoeff();
  const std::vector<Index> orders = orders_to_build(summary.r, red.training.compare_orders);
  for (std::size_t i = 1; i < orders.size(); ++i) {
    const Matrix Vo = basis.V.leftCols(orders[i]);
    if (second_order != nullptr) {
      reduced.others.emplace_back(orders[i], galerkin_second_order(*second_order, Vo));
    } else {
      const DenseFirstOrderSystem r = galerkin_first_order(full, Vo);
      reduced.others.emplace_back(orders[i], from_first_order(r.E, r.A, r.B, r.C, r.D));
    }
  }
  summary.stages.emplace_back("projection_s", seconds_since(t));
  summary.seconds = seconds_since(t_start);

  out.set_attribute(grp, "projection", std::string("galerkin"));
  out.set_attribute(grp, "training_runs", static_cast<std::int64_t>(c.training.size()));
  out.set_attribute(grp, "training_files",
                    static_cast<std::int64_t>(red.training.training_files.size()));
  out.set_attribute(grp, "training_snapshots", static_cast<std::int64_t>(snapshots));
  out.set_attribute(grp, "training_stride",
                    static_cast<std::int64_t>(red.training.training_stride));
  if (red.training.store_bases) out.write_matrix(layout::kReductionV, V);
  reduced.V = V;
  reduced.bases_of_positions = second_order != nullptr;
  return reduced;
}

}  // namespace mor::experiments
