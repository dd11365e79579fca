// SPDX-License-Identifier: GPL-3.0-or-later
// Cost per time step of the POD-Galerkin + Q-DEIM reduced nonlinear chain against the full
// chain, for N = 10^3 .. 10^6 masses and r = 20 .. 100 reduced coordinates (issue 4: the reduced
// step should cost the same for every N, and at N = 10^5 at least 1000x less than the full one).
//
//   BM_full_step/<N>         the full chain (k_n = 2, chain dampers), CHOLMOD for the
//                            tridiagonal Newton matrix
//   BM_reduced_step/<N>/<r>  the reduced model, Galerkin on the POD basis V (N x r) of position
//                            snapshots, the cubic force hyper-reduced by Q-DEIM with m = 2 r
//                            samples from the POD basis of force snapshots g(q)
// Both on implicit midpoint, dt = 0.05, reuse_jacobian = true (experiments/pod_deim_chain.toml),
// driven by the test input 0.7 sin(2 pi 0.033 t), which the training never saw.
//
// Training, per N, once, not timed: the full chain from rest under a chirp (amplitude 1, 0 ->
// 0.2 Hz over 200 s) and under a multisine (amplitude 1, 0.005 .. 0.15 Hz, seed 3), 200 s each,
// a snapshot of q and of g(q) every 20 steps (2 x 201 columns). One POD of the positions to
// r = 100 and one of the forces to 200 columns; smaller r and m take the leading columns (POD
// bases are nested). Randomized POD from N = 10^5 on, the automatic choice (SVD) below. An
// r above the numerical rank of the position snapshots is skipped with an error naming both; an
// m = 2 r above that of the force snapshots is lowered to it (as `mor` does for its default m).
// The horizon is 200 s, not the 100 s of the experiment, because the chain moves only near its
// driven end (about one mass per second): over 100 s the position snapshots have numerical
// rank 76 (N = 10^3) down to 64 (N = 10^6; the cut-off max(N, k) eps s_1 grows with N), below
// r = 100. At N = 10^6 the two snapshot matrices hold 3.2 GB each (freed once the bases are
// built), and the training runs 8000 full steps: about ten minutes.
//
// What is timed: one benchmark iteration integrates a fixed number of steps (40 full, 200
// reduced) from the same warm state, reached by kWarmUpSteps steps of the test input from rest
// and restored before each iteration outside the timed region (manual timing with std::chrono
// around integrate() only). Each integrate() call factorizes its Newton matrix at its first
// step (reuse_jacobian keeps it across the steps of one call only), validates its options and
// allocates its scratch vectors: amortized over the steps of the call. No model, basis or
// workspace is built inside the timed region. The Time column is that stepping time per
// iteration; the CPU column also holds the untimed state restore.
//
// Counters:
//   us_per_step              stepping wall time / steps
//   newton_per_step, factorizations_per_step   the work behind it
//   r, m                     reduced coordinates and DEIM samples (m < 2 r: force rank reached)
//   speedup                  full us_per_step / reduced us_per_step at the same N, when
//                            BM_full_step/<N> ran earlier in the same process (the benchmarks
//                            run N by N, the full one first)
//   warmup_output_error      ||y_r - y||_2 / ||y||_2 over the kWarmUpSteps + 1 outputs of the
//                            warm-up (the unseen input): the model timed is the right one
//   training_s, pod_s        per N: the two training runs with their snapshots; both PODs
//   deim_s, model_s          per r: Q-DEIM on the leading m force modes; the projection
//   peak_rss_MiB             the process's peak resident memory so far (VmHWM)
//
// The default experiment's reduced model (experiments/default.toml, model.N overridden), built by
// the runner's own reduction (reduce_projection: the same training runs, POD, Q-DEIM and
// projection as `mor run`, so r = 20 with its m = 38 Q-DEIM points), integrated as `mor run`
// integrates it (ProjectedModel and its workspace, the experiment's integrator options, from
// rest over the test horizon, an output every step):
//   BM_default_reduced_step/<N>   integrate() over the 2000 steps of the test run
//   BM_default_fused_floor/<N>    the same steps as fused dense kernels on the model's matrices
//                                 and nothing else: per Newton iteration one product for the
//                                 DEIM elongations [EL; ER], one for [D_r K_r G], one with the
//                                 explicit inverse of the Newton matrix; the same lagged-Jacobian
//                                 rule and Newton tolerance. No checks, no observer: the floor a
//                                 general step can approach. Counter floor_ratio: the model's
//                                 cpu_us_per_step over the floor's, when both ran in this
//                                 process (alternated: model, floor, folded floor per N, twice).
//   BM_default_folded_floor/<N>   the same with S^{-1} folded in as the model's workspace does
//                                 (reduction/reduced_workspace.hpp): per Newton iteration one
//                                 product with [EL; ER], one with [S^{-1} S0, h S^{-1} G], and
//                                 one per step for the rest, all three on the same SmallMatrix
//                                 kernel (src/linalg/small_gemv.hpp); the model's counter
//                                 folded_floor_ratio is its time over this one's.
//   Counters us_per_step (wall) and cpu_us_per_step (the thread's CPU time: on a shared machine
//   the wall time also counts the waits for a core).
//   Counter state_difference (floor): ||q_floor - q_model||_inf / ||q_model||_inf at the end.
//
// Quick run at small N (about 15 s; JSON in results/bench/filtered/, README left alone):
//   MOR_BENCH_FILTER='/(1000|10000)(/|$)' bash scripts/run_benchmarks.sh reduced_chain
// Whole suite, JSON and README tables (about 14 min, 10.8 GB at N = 10^6):
//   bash scripts/run_benchmarks.sh reduced_chain
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/bench/bench_main.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "models/mass_spring_chain.hpp"
#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/small_gemv.hpp"
#include "src/signals/signal.hpp"

namespace mor {
namespace {

using detail::concat;

// Integrator (experiments/pod_deim_chain.toml).
constexpr double kDt = 0.05;  // s
// Training.
constexpr double kTrainingHorizon = 200.0;  // s, each run
constexpr Index kTrainingStride = 20;       // steps between snapshots
constexpr double kChirpAmplitude = 1.0;
constexpr double kChirpF0 = 0.0;               // Hz
constexpr double kChirpF1 = 0.2;               // Hz
constexpr double kChirpT1 = kTrainingHorizon;  // s
constexpr double kMultisineAmplitude = 1.0;
const std::vector<double> kMultisineFrequencies = {0.005, 0.02, 0.05, 0.1, 0.15};  // Hz
constexpr std::uint64_t kMultisineSeed = 3;
// Reduction.
constexpr Index kMaxOrder = 100;       // POD of the positions once to this r
constexpr Index kSamplesPerOrder = 2;  // m = 2 r
constexpr Index kRandomizedPodFrom = 100'000;
// Test input and timing.
constexpr double kTestAmplitude = 0.7;
constexpr double kTestFrequencyHz = 0.033;
constexpr Index kWarmUpSteps = 200;  // 10 s from rest: the cubic springs near the input engaged
constexpr Index kFullStepsPerIteration = 40;
constexpr Index kReducedStepsPerIteration = 200;
constexpr double kMinTime = 0.5;  // s of stepping per benchmark
const std::vector<Index> kSizes = {1'000, 10'000, 100'000, 1'000'000};
const std::vector<Index> kOrders = {20, 40, 60, 100};

void ignore_observation(Index, double, const Vector&, const Vector&, const Vector&) {}

/// Implicit midpoint with the lagged Newton matrix, `steps` steps of kDt from t0.
IntegratorOptions stepping_options(double t0, Index steps, Index observe_stride) {
  IntegratorOptions opt;
  opt.scheme = Scheme::implicit_midpoint;
  opt.reuse_jacobian = true;
  opt.dt = kDt;
  opt.t0 = t0;
  opt.t_end = t0 + static_cast<double>(steps) * kDt;
  opt.observe_stride = observe_stride;
  return opt;
}

/// Observer calls of integrate(): step 0, every stride-th step and the last.
Index observations(Index steps, Index stride) {
  return steps / stride + 1 + (steps % stride != 0 ? 1 : 0);
}

/// The POD basis of X to `order` modes or, if X has a lower numerical rank, to that rank.
PodResult pod_up_to(const Matrix& X, Index order, PodMethod method) {
  PodOptions o;
  o.method = method;
  o.order = order;
  o.order_up_to_rank = true;
  return pod(X, o);
}

/// The nested bases of one N: V (N x r_max), the force basis U (N x m_max).
struct TrainingBases {
  Matrix V, U;
  Index snapshots = 0;
  double training_s = 0, pod_s = 0;
};

/// A reduced model of one (N, r) with its workspace and warm state.
struct ReducedCase {
  std::unique_ptr<ProjectedModel> model;  // the workspace keeps a reference: fixed address
  std::unique_ptr<ProjectedModel::Workspace> ws;
  Vector q0, v0;  // warm state at ChainFixture::t0()
  Index m = 0;
  double deim_s = 0, model_s = 0, warmup_output_error = 0;
};

/// Everything the benchmarks of one N need, built at the first request and kept
/// (google-benchmark runs a benchmark function several times while it sizes the iteration count).
class ChainFixture {
 public:
  explicit ChainFixture(Index N) {
    ChainParameters p;  // m = k_l = d = 1, chain dampers, input and output at mass N
    p.N = N;
    p.k_n = 2.0;
    p.damping = SpringDamping::dampers;
    chain_ = std::make_unique<MassSpringChain>(p);
    ws_ = std::make_unique<MassSpringChain::Workspace>(*chain_, SparseBackend::cholmod);
    input_ = make_sine_signal(chain_->n_inputs(), kTestAmplitude, kTestFrequencyHz);
    q0_ = Vector::Zero(N);
    v0_ = Vector::Zero(N);
    y_warm_.resize(kWarmUpSteps + 1);
    Vector y;
    integrate(*chain_, *ws_, *input_, stepping_options(0.0, kWarmUpSteps, 1), q0_, v0_,
              [&](Index k, double, const Vector& q, const Vector& v, const Vector&) {
                chain_->output(q, v, y);
                y_warm_[k] = y[0];
              });
  }
  ChainFixture(const ChainFixture&) = delete;
  ChainFixture& operator=(const ChainFixture&) = delete;

  static ChainFixture& get(Index N) {
    static std::map<Index, std::unique_ptr<ChainFixture>> cache;
    auto& slot = cache[N];
    if (!slot) slot = std::make_unique<ChainFixture>(N);
    return *slot;
  }

  Index N() const { return chain_->n(); }
  const MassSpringChain& chain() const { return *chain_; }
  MassSpringChain::Workspace& workspace() { return *ws_; }
  const Signal& input() const { return *input_; }
  const Vector& q0() const { return q0_; }
  const Vector& v0() const { return v0_; }
  static constexpr double t0() { return static_cast<double>(kWarmUpSteps) * kDt; }

  /// Seconds per full step, once BM_full_step has measured it for this N.
  std::optional<double> full_step_seconds;

  /// The POD bases, trained at the first request. @throws what training or POD threw (also
  /// on later requests, without training again).
  const TrainingBases& bases() {
    if (training_error_) throw NumericalError(*training_error_);
    if (!bases_) {
      try {
        bases_ = train();
      } catch (const std::exception& e) {
        training_error_ = concat("training at N = ", N(), ": ", e.what());
        throw NumericalError(*training_error_);
      }
    }
    return *bases_;
  }

  /// The reduced model of order r (r <= bases().V.cols()), built at the first request.
  ReducedCase& reduced(Index r) {
    auto& slot = reduced_[r];
    if (!slot) slot = build_reduced(r);
    return *slot;
  }

 private:
  std::unique_ptr<TrainingBases> train() const {
    const Index N = this->N();
    const Index steps = static_cast<Index>(std::lround(kTrainingHorizon / kDt));
    const IntegratorOptions run = stepping_options(0.0, steps, kTrainingStride);
    const Index per_run = observations(steps, kTrainingStride);
    std::vector<std::unique_ptr<Signal>> inputs;
    inputs.push_back(
        make_chirp_signal(chain_->n_inputs(), kChirpAmplitude, kChirpF0, kChirpF1, kChirpT1));
    inputs.push_back(make_multisine_signal(chain_->n_inputs(), kMultisineAmplitude,
                                           kMultisineFrequencies, kMultisineSeed));
    auto result = std::make_unique<TrainingBases>();
    auto start = Clock::now();
    const Index k = per_run * static_cast<Index>(inputs.size());
    Matrix Q(N, k), G(N, k);  // exact size: no growth copies of 3.2 GB at N = 10^6
    Index col = 0;
    Vector g(N);
    for (const auto& input : inputs) {
      Vector q = Vector::Zero(N), v = Vector::Zero(N);
      integrate(*chain_, *ws_, *input, run, q, v,
                [&](Index, double, const Vector& qk, const Vector&, const Vector&) {
                  chain_->nonlinear_force(qk, g);
                  Q.col(col) = qk;
                  G.col(col) = g;
                  ++col;
                });
    }
    require(col == k, "training: ", col, " snapshots, expected ", k);
    result->snapshots = k;
    result->training_s = seconds_since(start);

    start = Clock::now();
    const PodMethod method = N >= kRandomizedPodFrom ? PodMethod::randomized : PodMethod::automatic;
    PodResult pod_q = pod_up_to(Q, kMaxOrder, method);
    Q.resize(0, 0);
    result->V = std::move(pod_q.V);
    PodResult pod_g = pod_up_to(G, kSamplesPerOrder * kMaxOrder, method);
    G.resize(0, 0);
    result->U = std::move(pod_g.V);
    result->pod_s = seconds_since(start);
    std::cerr << "bench_reduced_chain: N = " << N << ": " << k << " snapshots in "
              << result->training_s << " s, POD (" << to_string(pod_q.method_used)
              << ") to r = " << result->V.cols() << " and m = " << result->U.cols() << " in "
              << result->pod_s << " s, peak RSS " << experiments::peak_rss_mib() << " MiB\n";
    return result;
  }

  std::unique_ptr<ReducedCase> build_reduced(Index r) const {
    const TrainingBases& b = *bases_;
    auto c = std::make_unique<ReducedCase>();
    c->m = std::min(kSamplesPerOrder * r, b.U.cols());
    auto start = Clock::now();
    const DeimResult d = deim(b.U.leftCols(c->m), DeimMethod::qdeim);
    c->deim_s = seconds_since(start);
    start = Clock::now();
    ProjectionOptions opt;
    opt.nonlinear = NonlinearTreatment::deim;
    opt.deim = &d;
    c->model = std::make_unique<ProjectedModel>(chain_->linear_system(),
                                                CubicPathStencil{N(), chain_->parameters().k_n},
                                                Matrix(b.V.leftCols(r)), Matrix(), opt);
    c->ws = std::make_unique<ProjectedModel::Workspace>(*c->model);
    c->model_s = seconds_since(start);
    // Warm-up from rest under the test input, its output compared with the full one.
    c->q0 = Vector::Zero(r);
    c->v0 = Vector::Zero(r);
    Vector y_r(kWarmUpSteps + 1), y;
    integrate(*c->model, *c->ws, *input_, stepping_options(0.0, kWarmUpSteps, 1), c->q0, c->v0,
              [&](Index k, double, const Vector& q, const Vector& v, const Vector&) {
                c->model->output(q, v, y);
                y_r[k] = y[0];
              });
    c->warmup_output_error = (y_r - y_warm_).norm() / y_warm_.norm();
    return c;
  }

  std::unique_ptr<MassSpringChain> chain_;  // the workspace keeps a reference: fixed address
  std::unique_ptr<MassSpringChain::Workspace> ws_;
  std::unique_ptr<Signal> input_;
  Vector q0_, v0_;  // warm state at t0()
  Vector y_warm_;   // full output over the warm-up, steps 0 .. kWarmUpSteps
  std::unique_ptr<TrainingBases> bases_;
  std::optional<std::string> training_error_;
  std::map<Index, std::unique_ptr<ReducedCase>> reduced_;
};

/// Stepping statistics of one benchmark, summed over its iterations.
struct SteppingTotals {
  double seconds = 0;
  Index newton_iterations = 0, factorizations = 0;
};

/// Times `steps_per_iteration` steps from (q0, v0) per benchmark iteration, the state restored
/// outside the timed region.
template <class Model>
SteppingTotals time_steps(benchmark::State& state, const Model& model,
                          typename Model::Workspace& ws, const Signal& input, const Vector& q0,
                          const Vector& v0, Index steps_per_iteration) {
  const IntegratorOptions opt =
      stepping_options(ChainFixture::t0(), steps_per_iteration, steps_per_iteration);
  Vector q = q0, v = v0;
  SteppingTotals totals;
  for (auto _ : state) {
    q = q0;
    v = v0;
    const auto start = Clock::now();
    const IntegrationStats stats = integrate(model, ws, input, opt, q, v, ignore_observation);
    const double elapsed = seconds_since(start);
    state.SetIterationTime(elapsed);
    totals.seconds += elapsed;
    totals.newton_iterations += stats.newton_iterations;
    totals.factorizations += stats.factorizations;
    benchmark::DoNotOptimize(q.data());
    benchmark::DoNotOptimize(v.data());
  }
  const double steps = static_cast<double>(state.iterations() * steps_per_iteration);
  state.counters["us_per_step"] = 1e6 * totals.seconds / steps;
  state.counters["newton_per_step"] = static_cast<double>(totals.newton_iterations) / steps;
  state.counters["factorizations_per_step"] = static_cast<double>(totals.factorizations) / steps;
  totals.seconds /= steps;  // per step from here on
  return totals;
}

void BM_full_step(benchmark::State& state) {
  const Index N = state.range(0);
  try {
    ChainFixture& fx = ChainFixture::get(N);
    const SteppingTotals t = time_steps(state, fx.chain(), fx.workspace(), fx.input(), fx.q0(),
                                        fx.v0(), kFullStepsPerIteration);
    fx.full_step_seconds = t.seconds;
    state.counters["peak_rss_MiB"] = experiments::peak_rss_mib();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void BM_reduced_step(benchmark::State& state) {
  const Index N = state.range(0), r = state.range(1);
  try {
    ChainFixture& fx = ChainFixture::get(N);
    const TrainingBases& b = fx.bases();
    if (r > b.V.cols()) {
      const std::string message =
          concat("r = ", r, " exceeds the numerical rank ", b.V.cols(), " of the ", b.snapshots,
                 " position snapshots at N = ", N, " (singular values above max(N, k) eps s_1)");
      state.SkipWithError(message.c_str());
      return;
    }
    ReducedCase& c = fx.reduced(r);
    const SteppingTotals t =
        time_steps(state, *c.model, *c.ws, fx.input(), c.q0, c.v0, kReducedStepsPerIteration);
    state.counters["r"] = static_cast<double>(r);
    state.counters["m"] = static_cast<double>(c.m);
    if (fx.full_step_seconds) state.counters["speedup"] = *fx.full_step_seconds / t.seconds;
    state.counters["warmup_output_error"] = c.warmup_output_error;
    state.counters["training_s"] = b.training_s;
    state.counters["pod_s"] = b.pod_s;
    state.counters["deim_s"] = c.deim_s;
    state.counters["model_s"] = c.model_s;
    state.counters["peak_rss_MiB"] = experiments::peak_rss_mib();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// --- The default experiment's reduced model ---------------------------------------------------

#ifndef MOR_SOURCE_DIR
#define MOR_SOURCE_DIR "."
#endif

/// experiments/default.toml at N masses, reduced by the runner (the reduction's results file is
/// written to a temporary name and discarded), and what its test run needs.
class DefaultExperiment {
 public:
  explicit DefaultExperiment(Index N)
      : config_(
            experiments::load_experiment(std::string(MOR_SOURCE_DIR) + "/experiments/default.toml",
                                         {concat("model.N=", N), "output.plots=false"})) {
    full_ = config_.model->build(config_.solver);
    const auto start = Clock::now();
    reduction_ = config_.reduction->reduce_projection(config_, *full_, nullptr);
    offline_s = seconds_since(start);
    input_ = experiments::make_signal(config_.input, full_->n_inputs());
    ws_ = std::make_unique<ProjectedModel::Workspace>(model());
  }
  static DefaultExperiment& get(Index N) {
    static std::map<Index, std::unique_ptr<DefaultExperiment>> cache;
    auto& slot = cache[N];
    if (!slot) slot = std::make_unique<DefaultExperiment>(N);
    return *slot;
  }
  const ProjectedModel& model() const { return *reduction_.main.model; }
  ProjectedModel::Workspace& workspace() { return *ws_; }
  const Signal& input() const { return *input_; }
  const IntegratorOptions& integrator() const { return config_.integrator; }
  Index m() const { return reduction_.main.m; }
  double offline_s = 0;
  std::optional<double> model_us, floor_us, folded_floor_us;  // per step, once measured
  Vector q_end;                                               // the model's final positions

 private:
  experiments::ExperimentConfig config_;
  std::unique_ptr<experiments::FullModel> full_;
  experiments::ProjectionReduction reduction_;
  std::unique_ptr<Signal> input_;
  std::unique_ptr<ProjectedModel::Workspace> ws_;
};

/// The fused floor of the default reduced model's implicit midpoint step (see the file comment).
/// Requires the chain kind's DEIM model with a uniform mass.
class FusedMidpointFloor {
 public:
  /// folded: the correction as [S^{-1} S0, h S^{-1} G] [x; g_P] + d with d once per step
  /// (reduction/reduced_workspace.hpp), else as force and solve.
  FusedMidpointFloor(const ProjectedModel& model, const CubicStencilForce& stencil,
                     const IntegratorOptions& opt, bool folded)
      : folded_(folded),
        r_(model.n()),
        m_(stencil.deim_samples()),
        k_n_(stencil.cubic_coefficient()),
        h_(opt.dt),
        opt_(opt),
        E_(stencil.deim_elongations()),
        G_(stencil.deim_interpolation()),
        B_(model.B_r()) {
    require(m_ > 0 && model.uniform_mass(),
            "fused floor: needs the cubic stencil's DEIM model with M_r = mu I");
    mu_ = *model.uniform_mass();
    A_.resize(r_, 2 * r_ + m_);
    A_ << model.D_r(), model.K_r(), G_;
    K_ = model.K_r();
    S0_ =
        mu_ * Matrix::Identity(r_, r_) + (0.5 * h_) * model.D_r() + (0.25 * h_ * h_) * model.K_r();
    W1_.resize(r_, r_ + m_);
    Ad_.resize(r_, 2 * r_ + B_.cols());
    Es_.assign(E_);
    z1_.resize(r_ + m_);
    vqu_.resize(2 * r_ + B_.cols());
    d_.resize(SmallMatrix::padded_rows(r_));
    y_.resize(SmallMatrix::padded_rows(r_));
    es_.resize(Es_.padded_rows());
    q0_.resize(r_);
    qs_.resize(r_);
    S_.resize(r_, r_);
    Sinv_.resize(r_, r_);
    JPV_.resize(m_, r_);
    z_.resize(2 * r_ + m_);
    e_.resize(2 * m_);
    F_.resize(r_);
    x_.resize(r_);
    delta_.resize(r_);
    u_.resize(B_.cols());
  }

  /// Integrates steps of dt from (q, v) at t0 with the input; returns the Newton iterations.
  Index run(const Signal& input, double t0, Index steps, Vector& q, Vector& v) {
    detail::SubnormalsFlushed flushed(opt_.flush_subnormals);
    Index newton = 0;
    bool stale = true;
    x_ = v;
    for (Index k = 1; k <= steps; ++k) {
      input.evaluate(t0 + (static_cast<double>(k - 1) + 0.5) * h_, u_);
      if (stale) {
        refresh(q, v);
        stale = false;
      }
      if (folded_) prepare(q, v);
      bool refreshed = false;
      double previous = 0.0;
      int it = 0;
      for (;;) {
        ++it;
        ++newton;
        if (folded_) {
          // q_s = q + h/4 (v + x), e = E q_s, delta = [S^{-1} S0, h S^{-1} G] [x; g_P] + d.
          qs_ = q0_ + (0.25 * h_) * x_;
          Es_.multiply(qs_.data(), es_.data());
          z1_.head(r_) = x_;
          z1_.tail(m_) =
              k_n_ * (es_.head(m_).array().cube() + es_.segment(m_, m_).array().cube()).matrix();
          W1s_.multiply(z1_.data(), y_.data(), d_.data());
          delta_ = y_.head(r_);
        } else {
          // z = [v_s; q_s; g_P], e = E q_s, F = B u - [D K G] z.
          z_.head(r_) = 0.5 * (v + x_);
          z_.segment(r_, r_) = q + (0.5 * h_) * z_.head(r_);
          e_.noalias() = E_ * z_.segment(r_, r_);
          z_.tail(m_) = k_n_ * (e_.head(m_).array().cube() + e_.tail(m_).array().cube()).matrix();
          F_.noalias() = B_ * u_;
          F_.noalias() -= A_ * z_;
          F_ = mu_ * (x_ - v) - h_ * F_;
          delta_.noalias() = Sinv_ * F_;
        }
        const detail::Norms norms = detail::subtract_with_norms(r_, x_.data(), delta_.data());
        if (norms.delta <= opt_.newton_rtol * norms.x + opt_.newton_atol) break;
        require(it < opt_.newton_max_iterations && std::isfinite(norms.delta),
                "fused floor: Newton failed at step ", k);
        if (it >= 2 && norms.delta > 0.5 * previous && !refreshed) {
          if (folded_) {
            qs_ = q0_ + (0.25 * h_) * x_;
            refresh_at(qs_);
            prepare(q, v);
          } else {
            refresh_at(z_.segment(r_, r_));
          }
          refreshed = true;
        }
        previous = norms.delta;
      }
      if (refreshed || it > opt_.reuse_max_iterations) stale = true;
      detail::midpoint_accept(r_, 0.5 * h_, q.data(), v.data(), x_.data());
    }
    return newton;
  }

 private:
  /// The Newton matrix at the stage state of the predictor x.
  void refresh(const Vector& q, const Vector& v) {
    z_.head(r_) = 0.5 * (v + x_);
    z_.segment(r_, r_) = q + (0.5 * h_) * z_.head(r_);
    refresh_at(z_.segment(r_, r_));
  }
  /// S = S0 + h^2/4 G (diag(3 k_n el^2) EL + diag(3 k_n er^2) ER), inverted.
  template <class Q>
  void refresh_at(const Q& qs) {
    e_.noalias() = E_ * qs;
    const double s = 0.75 * h_ * h_ * k_n_;
    JPV_ = (s * e_.head(m_).array().square()).matrix().asDiagonal() * E_.topRows(m_);
    JPV_ += (s * e_.tail(m_).array().square()).matrix().asDiagonal() * E_.bottomRows(m_);
    S_ = S0_;
    S_.noalias() += G_ * JPV_;
    lu_.compute(S_);
    Sinv_ = lu_.inverse();
    if (!folded_) return;
    W1_.leftCols(r_).noalias() = Sinv_ * S0_;
    W1_.rightCols(m_).noalias() = h_ * (Sinv_ * G_);
    Ad_.leftCols(r_) = W1_.leftCols(r_) - (2.0 * mu_) * Sinv_;
    Ad_.middleCols(r_, r_).noalias() = h_ * (Sinv_ * K_);
    Ad_.rightCols(B_.cols()).noalias() = -h_ * (Sinv_ * B_);
    W1s_.assign(W1_);
    Ads_.assign(Ad_);
  }
  /// d = [S^{-1} (S0 - 2 mu I), h S^{-1} K, -h S^{-1} B] [v; q; u] and q + h/4 v, per step.
  void prepare(const Vector& q, const Vector& v) {
    vqu_ << v, q, u_;
    Ads_.multiply(vqu_.data(), d_.data());
    q0_ = q + (0.25 * h_) * v;
  }

  bool folded_;
  Index r_, m_;
  double k_n_, h_, mu_ = 1.0;
  IntegratorOptions opt_;
  Matrix E_, G_, B_, A_, K_, S0_, S_, Sinv_, JPV_, W1_, Ad_;
  SmallMatrix Es_, W1s_, Ads_;  // folded: E, W1, Ad padded to whole packets (src/linalg)
  Vector z_, e_, F_, x_, delta_, u_, z1_, vqu_, d_, y_, es_, q0_, qs_;
  Eigen::PartialPivLU<Matrix> lu_;
};

const std::vector<Index> kDefaultSizes = {1'000, 10'000, 50'000, 100'000};

/// CPU seconds of the calling thread: on a shared machine the wall time also holds the time the
/// thread waited for a core, which this does not.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void BM_default_reduced_step(benchmark::State& state) {
  const Index N = state.range(0);
  try {
    DefaultExperiment& fx = DefaultExperiment::get(N);
    const ProjectedModel& model = fx.model();
    const IntegratorOptions& opt = fx.integrator();
    const Index steps = step_count(opt);
    Vector q(model.n()), v(model.n()), y(model.n_outputs());
    double seconds = 0, cpu = 0;
    Index newton = 0, factorizations = 0;
    for (auto _ : state) {
      q.setZero();
      v.setZero();
      const double cpu_start = thread_cpu_seconds();
      const auto start = Clock::now();
      // As the runner observes a reduced run: the output at every output step.
      const IntegrationStats stats =
          integrate(model, fx.workspace(), fx.input(), opt, q, v,
                    [&](Index, double, const Vector& qk, const Vector& vk, const Vector&) {
                      model.output(qk, vk, y);
                      benchmark::DoNotOptimize(y.data());
                    });
      const double elapsed = seconds_since(start);
      cpu += thread_cpu_seconds() - cpu_start;
      state.SetIterationTime(elapsed);
      seconds += elapsed;
      newton += stats.newton_iterations;
      factorizations += stats.factorizations;
    }
    const double total = static_cast<double>(state.iterations() * steps);
    fx.model_us = 1e6 * cpu / total;
    fx.q_end = q;
    state.counters["us_per_step"] = 1e6 * seconds / total;
    state.counters["cpu_us_per_step"] = *fx.model_us;
    state.counters["newton_per_step"] = static_cast<double>(newton) / total;
    state.counters["factorizations_per_step"] = static_cast<double>(factorizations) / total;
    state.counters["r"] = static_cast<double>(model.n());
    state.counters["m"] = static_cast<double>(fx.m());
    state.counters["offline_s"] = fx.offline_s;
    if (fx.floor_us) state.counters["floor_ratio"] = *fx.model_us / *fx.floor_us;
    if (fx.folded_floor_us)
      state.counters["folded_floor_ratio"] = *fx.model_us / *fx.folded_floor_us;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void BM_default_fused_floor(benchmark::State& state, bool folded) {
  const Index N = state.range(0);
  try {
    DefaultExperiment& fx = DefaultExperiment::get(N);
    const CubicStencilForce* stencil = fx.model().held<CubicStencilForce>();
    require(stencil != nullptr,
            "the default experiment's reduced model has no cubic stencil force (the chain's)");
    const IntegratorOptions& opt = fx.integrator();
    const Index steps = step_count(opt);
    FusedMidpointFloor floor(fx.model(), *stencil, opt, folded);
    Vector q(fx.model().n()), v(fx.model().n());
    double seconds = 0, cpu = 0;
    Index newton = 0;
    for (auto _ : state) {
      q.setZero();
      v.setZero();
      const double cpu_start = thread_cpu_seconds();
      const auto start = Clock::now();
      newton += floor.run(fx.input(), opt.t0, steps, q, v);
      const double elapsed = seconds_since(start);
      cpu += thread_cpu_seconds() - cpu_start;
      state.SetIterationTime(elapsed);
      seconds += elapsed;
      benchmark::DoNotOptimize(q.data());
    }
    const double total = static_cast<double>(state.iterations() * steps);
    std::optional<double>& floor_us = folded ? fx.folded_floor_us : fx.floor_us;
    floor_us = 1e6 * cpu / total;
    state.counters["us_per_step"] = 1e6 * seconds / total;
    state.counters["cpu_us_per_step"] = *floor_us;
    state.counters["newton_per_step"] = static_cast<double>(newton) / total;
    if (fx.model_us) state.counters["floor_ratio"] = *fx.model_us / *floor_us;
    if (fx.q_end.size() == q.size())
      state.counters["state_difference"] =
          (q - fx.q_end).cwiseAbs().maxCoeff() / fx.q_end.cwiseAbs().maxCoeff();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_benchmarks() {
  // The default experiment's model first (quick), alternated with its floor.
  for (Index N : kDefaultSizes)
    for (int round = 0; round < 2; ++round) {
      benchmark::RegisterBenchmark("BM_default_reduced_step", BM_default_reduced_step)
          ->Arg(N)
          ->Unit(benchmark::kMicrosecond)
          ->UseManualTime()
          ->MinTime(kMinTime);
      for (bool folded : {false, true})
        benchmark::RegisterBenchmark(folded ? "BM_default_folded_floor" : "BM_default_fused_floor",
                                     BM_default_fused_floor, folded)
            ->Arg(N)
            ->Unit(benchmark::kMicrosecond)
            ->UseManualTime()
            ->MinTime(kMinTime);
    }
  // N by N, the full step first: its time gives the speed-up counter, and the training data of
  // one N are built once and used by every r.
  for (Index N : kSizes) {
    benchmark::RegisterBenchmark("BM_full_step", BM_full_step)
        ->Arg(N)
        ->Unit(benchmark::kMicrosecond)
        ->UseManualTime()
        ->MinTime(kMinTime);
    auto* reduced = benchmark::RegisterBenchmark("BM_reduced_step", BM_reduced_step);
    reduced->Unit(benchmark::kMicrosecond)->UseManualTime()->MinTime(kMinTime);
    for (Index r : kOrders) reduced->Args({N, r});
  }
}

}  // namespace
}  // namespace mor

int main(int argc, char** argv) {
  return mor::run_benchmarks(argc, argv, mor::register_benchmarks);
}
