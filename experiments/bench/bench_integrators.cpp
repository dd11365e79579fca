// SPDX-License-Identifier: GPL-3.0-or-later
// Full-order time-step cost of the mass-spring chain for N = 10^3 .. 10^6 masses, per integrator,
// per degree of freedom (one mass) and in units of a streaming pass y += a x over the state
// (2N doubles: q and v), the axpy time measured in the same process for the same N.
//
//   BM_axpy/<N>                         the reference pass, bytes_per_second = 3 * 2N * 8 / time
//   BM_step/rk4/<N>                     explicit, four matrix-free force evaluations per step
//   BM_step/implicit_midpoint/<s>/<N>   Newton with the tridiagonal iteration matrix factorized by
//                                       s: "tridiagonal" (the chain's own solver, the default) or
//                                       a SuiteSparse backend through the generic sparse path
//   BM_step/generalized_alpha/<s>/<N>
//
// Counters of BM_step (dof = one mass; the state has 2N entries):
//   ns_per_step_per_dof   stepping wall time / (steps * N)
//   axpy_passes           step time / time of one axpy pass over the 2N-entry state
//   axpy_ns_per_dof       that axpy time / N: the median of samples taken between the timed
//                         iterations of the same benchmark run (at least 15), since on this
//                         shared virtual machine in-cache throughput drifts by up to 2x over
//                         seconds; step and reference then see the same conditions
//   force_evals_per_step, newton_per_step   work done, to tell cost per evaluation from count
//   page_faults_per_call  minor page faults during one integrate() call (its scratch vectors;
//                         glibc hands large blocks back to the kernel, so at large N they are
//                         faulted in again by every call: a per-call cost, not a per-step one)
//
// What is timed: one benchmark iteration integrates kStepsPerIteration = 40 steps from the same
// warm state. The state is restored before each iteration outside the timed region (manual timing
// with std::chrono around integrate() only), so no copy is charged to the step. What a call of
// integrate() does besides stepping is charged, amortized over the steps: validating options,
// allocating its scratch vectors, the finite checks of the state at t0, step 32 and the last
// step (one read pass over q and v each), and for generalized-alpha the consistent initial
// acceleration (one extra force evaluation per call). 40 steps keep that to a few per cent even
// at N = 10^6, where the page faults of the scratch vectors cost up to about one step per call.
// The Time column is that stepping time per iteration (40 steps); the CPU column also holds the
// untimed state restore and the interleaved axpy samples, so it is larger by design.
//
// Run, JSON and README table:   bash scripts/run_benchmarks.sh integrators
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "experiments/bench/bench_main.hpp"
#include "models/mass_spring_chain.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/signals/signal.hpp"

namespace mor {
namespace {

constexpr double kDt = 0.05;        // s; RK4 is stable here: dt |lambda|_max ~ 0.3 < 2.78
constexpr Index kWarmUpSteps = 20;  // to a state on a trajectory, cubic springs engaged
constexpr Index kStepsPerIteration = 40;
constexpr std::size_t kMinAxpySamples = 15;
constexpr double kSineAmplitude = 1.0;
constexpr double kSineFrequencyHz = 0.05;
const std::vector<Index> kSizes = {1'000, 10'000, 100'000, 1'000'000};

/// Minor page faults of this process so far.
long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/// One pass y += a x over n doubles, kept by the optimizer.
void axpy_pass(double a, const Vector& x, Vector& y) {
  y += a * x;
  benchmark::DoNotOptimize(y.data());
  benchmark::ClobberMemory();
}

/// The streaming reference: y += a x over n doubles, timed in samples of back-to-back passes
/// (about 2^21 entries per sample: ~0.3 ms in L1, one pass at N = 10^6).
class AxpyReference {
 public:
  explicit AxpyReference(Index n)
      : x_(Vector::Constant(n, 1.0)),
        y_(Vector::Zero(n)),
        passes_(std::max<Index>(1, (Index{1} << 21) / n)) {
    axpy_pass(1e-9, x_, y_);  // first touch of the pages, not timed
  }
  /// Wall time of one pass, from one sample.
  double sample_seconds() {
    const auto start = Clock::now();
    for (Index p = 0; p < passes_; ++p) axpy_pass(1e-9, x_, y_);
    return seconds_since(start) / static_cast<double>(passes_);
  }

 private:
  Vector x_, y_;
  Index passes_;
};

double median(std::vector<double> samples) {
  const auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

/// Everything a step benchmark for one N needs, built once per N and shared by all schemes
/// (google-benchmark runs a benchmark function several times while it sizes the iteration count,
/// so the set-up lives in a cache, not in the function).
class ChainFixture {
 public:
  explicit ChainFixture(Index N) {
    ChainParameters p;  // m = k_l = d = 1, k_n = 2, input and output at mass N
    p.N = N;
    chain_ = std::make_unique<MassSpringChain>(p);
    input_ = make_sine_signal(chain_->n_inputs(), kSineAmplitude, kSineFrequencyHz);
    // A wave of 16 masses per period: neighbour elongations up to 2 sin(pi/16) ~ 0.39, so the
    // cubic springs (k_n e^2 ~ 0.3 k_l) matter everywhere along the chain, for every N alike.
    q0_.resize(N);
    v0_.resize(N);
    for (Index i = 0; i < N; ++i) {
      const double phase = 2.0 * std::numbers::pi * static_cast<double>(i) / 16.0;
      q0_[i] = std::sin(phase);
      v0_[i] = 0.5 * std::cos(phase);
    }
    IntegratorOptions opt;
    opt.scheme = Scheme::rk4;
    opt.t0 = 0.0;
    opt.dt = kDt;
    opt.t_end = static_cast<double>(kWarmUpSteps) * kDt;
    opt.observe_stride = kWarmUpSteps;
    integrate(*chain_, workspace(ChainSolver::tridiagonal, SparseBackend::cholmod), *input_, opt,
              q0_, v0_, [](Index, double, const Vector&, const Vector&, const Vector&) {});
    t0_ = opt.t_end;
    axpy_ = std::make_unique<AxpyReference>(2 * N);
  }
  ChainFixture(const ChainFixture&) = delete;
  ChainFixture& operator=(const ChainFixture&) = delete;

  /// The fixture for N, built at the first request.
  static ChainFixture& get(Index N) {
    static std::map<Index, std::unique_ptr<ChainFixture>> cache;
    auto& slot = cache[N];
    if (!slot) slot = std::make_unique<ChainFixture>(N);
    return *slot;
  }

  const MassSpringChain& chain() const { return *chain_; }
  const Signal& input() const { return *input_; }
  /// Warm state at time t0().
  const Vector& q0() const { return q0_; }
  const Vector& v0() const { return v0_; }
  double t0() const { return t0_; }
  /// The axpy over 2N doubles (the size of the state q, v).
  AxpyReference& axpy() { return *axpy_; }

  /// backend is used only by ChainSolver::sparse.
  MassSpringChain::Workspace& workspace(ChainSolver solver, SparseBackend backend) {
    auto& slot = workspaces_[{solver, backend}];
    if (!slot) slot = std::make_unique<MassSpringChain::Workspace>(*chain_, backend, solver);
    return *slot;
  }

 private:
  std::unique_ptr<MassSpringChain> chain_;  // the workspaces keep a reference: fixed address
  std::unique_ptr<Signal> input_;
  Vector q0_, v0_;
  double t0_ = 0.0;
  std::unique_ptr<AxpyReference> axpy_;
  std::map<std::pair<ChainSolver, SparseBackend>, std::unique_ptr<MassSpringChain::Workspace>>
      workspaces_;
};

void BM_axpy(benchmark::State& state) {
  const Index n = 2 * state.range(0);
  Vector x = Vector::Constant(n, 1.0), y = Vector::Zero(n);
  axpy_pass(1e-9, x, y);
  for (auto _ : state) axpy_pass(1e-9, x, y);
  // Read x, read y, write y (y is in cache when written: no extra write-allocate read).
  state.SetBytesProcessed(state.iterations() * 3 * n * static_cast<std::int64_t>(sizeof(double)));
}

void BM_step(benchmark::State& state, Scheme scheme, ChainSolver solver, SparseBackend backend) {
  const Index N = state.range(0);
  try {
    ChainFixture& fx = ChainFixture::get(N);
    MassSpringChain::Workspace& ws = fx.workspace(solver, backend);
    IntegratorOptions opt;
    opt.scheme = scheme;
    opt.t0 = fx.t0();
    opt.dt = kDt;
    opt.t_end = fx.t0() + static_cast<double>(kStepsPerIteration) * kDt;
    opt.observe_stride = kStepsPerIteration;  // the observer at t0 and the last step only
    Vector q = fx.q0(), v = fx.v0();
    double stepping = 0.0;
    Index force_evaluations = 0, newton_iterations = 0;
    long page_faults = 0;
    std::vector<double> axpy_samples;
    for (auto _ : state) {
      q = fx.q0();
      v = fx.v0();
      const long faults_before = minor_page_faults();
      const auto start = Clock::now();
      const IntegrationStats stats =
          integrate(fx.chain(), ws, fx.input(), opt, q, v,
                    [](Index, double, const Vector&, const Vector&, const Vector&) {});
      const double elapsed = seconds_since(start);
      page_faults += minor_page_faults() - faults_before;
      state.SetIterationTime(elapsed);
      stepping += elapsed;
      force_evaluations += stats.force_evaluations;
      newton_iterations += stats.newton_iterations;
      benchmark::DoNotOptimize(q.data());
      benchmark::DoNotOptimize(v.data());
      axpy_samples.push_back(fx.axpy().sample_seconds());
    }
    while (axpy_samples.size() < kMinAxpySamples)
      axpy_samples.push_back(fx.axpy().sample_seconds());
    const double axpy_seconds = median(axpy_samples);
    const double steps = static_cast<double>(state.iterations() * kStepsPerIteration);
    const double step_seconds = stepping / steps;
    state.counters["ns_per_step_per_dof"] = 1e9 * step_seconds / static_cast<double>(N);
    state.counters["axpy_passes"] = step_seconds / axpy_seconds;
    state.counters["axpy_ns_per_dof"] = 1e9 * axpy_seconds / static_cast<double>(N);
    state.counters["force_evals_per_step"] = static_cast<double>(force_evaluations) / steps;
    state.counters["newton_per_step"] = static_cast<double>(newton_iterations) / steps;
    state.counters["page_faults_per_call"] =
        static_cast<double>(page_faults) / static_cast<double>(state.iterations());
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_benchmarks() {
  auto* axpy = benchmark::RegisterBenchmark("BM_axpy", BM_axpy);
  axpy->Unit(benchmark::kMicrosecond)->UseRealTime();
  for (Index N : kSizes) axpy->Arg(N);

  struct Case {
    std::string name;
    Scheme scheme;
    ChainSolver solver;
    SparseBackend backend;  // ChainSolver::sparse only
  };
  constexpr auto tridiagonal = ChainSolver::tridiagonal, sparse = ChainSolver::sparse;
  constexpr auto cholmod = SparseBackend::cholmod, klu = SparseBackend::klu;
  const std::vector<Case> cases = {
      {"BM_step/rk4", Scheme::rk4, tridiagonal, cholmod},  // no iteration matrix
      {"BM_step/implicit_midpoint/tridiagonal", Scheme::implicit_midpoint, tridiagonal, cholmod},
      {"BM_step/implicit_midpoint/cholmod", Scheme::implicit_midpoint, sparse, cholmod},
      {"BM_step/implicit_midpoint/klu", Scheme::implicit_midpoint, sparse, klu},
      {"BM_step/generalized_alpha/tridiagonal", Scheme::generalized_alpha, tridiagonal, cholmod},
      {"BM_step/generalized_alpha/cholmod", Scheme::generalized_alpha, sparse, cholmod},
  };
  for (const Case& c : cases) {
    auto* b = benchmark::RegisterBenchmark(c.name.c_str(), BM_step, c.scheme, c.solver, c.backend);
    b->Unit(benchmark::kMicrosecond)->UseManualTime()->MinTime(0.5);
    for (Index N : kSizes) b->Arg(N);
  }
}

}  // namespace
}  // namespace mor

int main(int argc, char** argv) {
  return mor::run_benchmarks(argc, argv, mor::register_benchmarks);
}
