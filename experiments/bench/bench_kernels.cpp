// SPDX-License-Identifier: GPL-3.0-or-later
// The kernels of the chain's time steps against this machine's limits, all measured in the same
// run: how many streaming passes each costs, how many it must cost at least, and how close a
// compute- or latency-bound kernel comes to the peak flop rate or to the FMA latency.
//
// References (measured once per process, before the kernels):
//   BM_peak_flops          double-precision FMAs on registers, as wide as the build's vector
//                          units: the flop-rate limit (counter gflops)
//   BM_fma_latency         one dependent FMA after another: the limit of a recurrence such as a
//                          tridiagonal substitution sweep (counter ns_per_fma)
//   BM_axpy/<N>            y += a x over the 2N doubles of the state (q, v): one streaming pass
// Kernels, N masses (the default chain, cubic springs engaged as in bench_integrators):
//   BM_force/<N>                           F = B u - D v - K q - g(q), the matrix-free stencil
//   BM_force_midpoint_stage/<N>            the same at the midpoint stage q + h/4 (v + x),
//                                          (v + x) / 2 read lazily from q, v, x (Newton's force)
//   BM_factorize/{tridiagonal,lapack}/<N>  S = M + h/2 D + h^2/4 (K + dg/dq) from its diagonals:
//                                          the twisted solver against LAPACK dpttrf
//   BM_solve/{tridiagonal,lapack}/<N>      x = S^{-1} r: the twisted solver against dpttrs
//   BM_factorize_iteration/{tridiagonal,cholmod}/<N>  the chain workspace's assembly plus
//                                          factorization, on each of its two paths
//   BM_step/{implicit_midpoint,generalized_alpha,rk4}/<N>  integrate(), 40 steps per call
//   BM_step/implicit_midpoint_confirmed/<N>  the streamed iteration without the bound on the
//                                          next correction (IntegratorOptions::newton_bound
//                                          off): Newton stops on a computed correction only
//   BM_step/implicit_midpoint_lagged{,_confirmed}/<N>  the same two with the Newton matrix kept
//                                          across steps (reuse_jacobian, as the default
//                                          experiment runs)
//   BM_step/implicit_midpoint_plain/<N>    the same without the chain's streamed Newton
//                                          iteration (factorize_iteration, force and
//                                          solve_iteration as separate passes)
// Counters:
//   ns_per_mass     time per call (per step for BM_step) / N
//   axpy_passes     that time / the time of one axpy pass over 2N doubles, the median of samples
//                   taken between the timed calls (the machine is shared: in-cache throughput
//                   drifts by up to 2x over seconds, so kernel and reference see the same state)
//   traffic_passes  the bytes the kernel's passes over memory move (each vector read and written
//                   once per pass, write-allocate of a vector written before it is read
//                   included), in axpy passes (3 x 2N doubles): the floor of axpy_passes where
//                   the vectors exceed the caches (N = 1e6)
//   peak_fraction   flops / time / peak flop rate, where a flop count is meaningful
//   latency_bound   the time of the kernel's dependent FMA chains alone / its time (recurrences:
//                   1 means the kernel runs at the FMA latency)
//   per_newton_axpy_passes, per_newton_traffic_passes, newton_per_step (BM_step of the implicit
//                   schemes): the step's cost and floor per Newton iteration (the bar's unit)
//
// Run:  build/experiments/bench/bench_kernels [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <exception>
#include <map>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include "experiments/bench/bench_main.hpp"
#include "models/mass_spring_chain.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/sparse_solver.hpp"
#include "src/linalg/tridiagonal_solver.hpp"
#include "src/signals/signal.hpp"

namespace mor {
namespace {

constexpr double kDt = 0.05;  // as bench_integrators: RK4 stable, cubic springs engaged
constexpr Index kWarmUpSteps = 20;
constexpr Index kStepsPerCall = 40;
constexpr std::size_t kMinAxpySamples = 15;
const std::vector<Index> kSizes = {1'000, 10'000, 100'000, 1'000'000};
constexpr double kBytes = sizeof(double);

double median(std::vector<double> samples) {
  const auto mid = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), mid, samples.end());
  return *mid;
}

// ---------------------------------------------------------------------------------------------
// Machine references

/// Peak double-precision flop rate (flop/s): independent FMA accumulators on registers, as many
/// as hide the FMA latency on two ports, as wide as the build allows. Best of a few runs.
double measure_peak_flops() {
  constexpr long kIterations = 4'000'000;
  double best = 0.0;
  for (int run = 0; run < 5; ++run) {
    const auto start = Clock::now();
    double sink = 0.0;
#if defined(__AVX512F__)
    constexpr int kLanes = 8;
    __m512d acc[12];
    for (auto& a : acc) a = _mm512_set1_pd(1.0);
    const __m512d m = _mm512_set1_pd(0.999999), c = _mm512_set1_pd(1e-7);
    for (long i = 0; i < kIterations; ++i)
      for (auto& a : acc) a = _mm512_fmadd_pd(a, m, c);
    for (auto& a : acc) sink += _mm512_reduce_add_pd(a);
#elif defined(__FMA__)
    constexpr int kLanes = 4;
    __m256d acc[12];
    for (auto& a : acc) a = _mm256_set1_pd(1.0);
    const __m256d m = _mm256_set1_pd(0.999999), c = _mm256_set1_pd(1e-7);
    for (long i = 0; i < kIterations; ++i)
      for (auto& a : acc) a = _mm256_fmadd_pd(a, m, c);
    double lanes[4];
    for (auto& a : acc) {
      _mm256_storeu_pd(lanes, a);
      sink += lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
#else
    constexpr int kLanes = 1;
    double acc[12];
    for (auto& a : acc) a = 1.0;
    for (long i = 0; i < kIterations; ++i)
      for (auto& a : acc) a = a * 0.999999 + 1e-7;
    for (double a : acc) sink += a;
#endif
    benchmark::DoNotOptimize(sink);
    const double seconds = seconds_since(start);
    best = std::max(best, 2.0 * 12 * kLanes * static_cast<double>(kIterations) / seconds);
  }
  return best;
}

/// Seconds per FMA in a dependent chain (best of a few runs).
double measure_fma_latency() {
  constexpr long kIterations = 20'000'000;
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    double x = 1.0;
    const double m = 0.999999, c = 1e-7;
    asm volatile("" : "+x"(x));
    const auto start = Clock::now();
    for (long i = 0; i < kIterations; ++i) {
#ifdef __FMA__
      x = std::fma(x, m, c);
#else
      x = x * m + c;
#endif
      asm volatile("" : "+x"(x));  // opaque to the optimizer, kept in a vector register
    }
    const double seconds = seconds_since(start);
    benchmark::DoNotOptimize(x);
    best = std::min(best, seconds / static_cast<double>(kIterations));
  }
  return best;
}

struct MachineLimits {
  double peak_flops, fma_latency;
  static const MachineLimits& get() {
    static const MachineLimits limits{measure_peak_flops(), measure_fma_latency()};
    return limits;
  }
};

/// y += a x over n doubles, kept by the optimizer.
void axpy_pass(double a, const Vector& x, Vector& y) {
  y += a * x;
  benchmark::DoNotOptimize(y.data());
  benchmark::ClobberMemory();
}

/// The streaming reference over 2N doubles, sampled in batches of about 2^21 entries.
class AxpyReference {
 public:
  explicit AxpyReference(Index n)
      : x_(Vector::Constant(n, 1.0)),
        y_(Vector::Zero(n)),
        passes_(std::max<Index>(1, (Index{1} << 21) / n)) {
    axpy_pass(1e-9, x_, y_);
  }
  double sample_seconds() {
    const auto start = Clock::now();
    for (Index p = 0; p < passes_; ++p) axpy_pass(1e-9, x_, y_);
    return seconds_since(start) / static_cast<double>(passes_);
  }

 private:
  Vector x_, y_;
  Index passes_;
};

// ---------------------------------------------------------------------------------------------
// The chain at a warm state, its iteration matrix, and the reference pass, per N

class Fixture {
 public:
  explicit Fixture(Index N) : N_(N) {
    ChainParameters p;  // m = k_l = d = 1, k_n = 2, input and output at mass N
    p.N = N;
    chain_ = std::make_unique<MassSpringChain>(p);
    input_ = make_sine_signal(chain_->n_inputs(), 1.0, 0.05);
    q0_.resize(N);
    v0_.resize(N);
    for (Index i = 0; i < N; ++i) {  // 16 masses per wave: elongations up to 0.39
      const double phase = 2.0 * std::numbers::pi * static_cast<double>(i) / 16.0;
      q0_[i] = std::sin(phase);
      v0_[i] = 0.5 * std::cos(phase);
    }
    IntegratorOptions opt;
    opt.scheme = Scheme::rk4;
    opt.dt = kDt;
    opt.t_end = static_cast<double>(kWarmUpSteps) * kDt;
    opt.observe_stride = kWarmUpSteps;
    ws_ = std::make_unique<MassSpringChain::Workspace>(*chain_);
    integrate(*chain_, *ws_, *input_, opt, q0_, v0_,
              [](Index, double, const Vector&, const Vector&, const Vector&) {});
    t0_ = opt.t_end;
    // The midpoint Newton matrix at the warm state, as diagonals, from the exported matrices.
    const double h = kDt;
    const SecondOrderSystem s = chain_->linear_system();
    const SparseMatrix S =
        s.M + (0.5 * h) * s.D + (0.25 * h * h) * (s.K + chain_->nonlinear_jacobian(q0_));
    diag_ = S.diagonal();
    off_.resize(N - 1);
    for (Index i = 0; i + 1 < N; ++i) off_[i] = S.coeff(i + 1, i);
    rhs_ = v0_;
    axpy_ = std::make_unique<AxpyReference>(2 * N);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  static Fixture& get(Index N) {
    static std::map<Index, std::unique_ptr<Fixture>> cache;
    auto& slot = cache[N];
    if (!slot) slot = std::make_unique<Fixture>(N);
    return *slot;
  }

  Index N() const { return N_; }
  const MassSpringChain& chain() const { return *chain_; }
  const Signal& input() const { return *input_; }
  const Vector& q0() const { return q0_; }
  const Vector& v0() const { return v0_; }
  double t0() const { return t0_; }
  const Vector& diag() const { return diag_; }
  const Vector& off() const { return off_; }
  const Vector& rhs() const { return rhs_; }
  AxpyReference& axpy() { return *axpy_; }

 private:
  Index N_;
  std::unique_ptr<MassSpringChain> chain_;
  std::unique_ptr<MassSpringChain::Workspace> ws_;
  std::unique_ptr<Signal> input_;
  Vector q0_, v0_, diag_, off_, rhs_;
  double t0_ = 0.0;
  std::unique_ptr<AxpyReference> axpy_;
};

/// What a kernel costs at least: flops, bytes moved, and the length of its dependent FMA chains
/// (0 where none limits it).
struct Floor {
  double flops = 0.0, bytes = 0.0, chained_fmas = 0.0;
};

/// Times call() (reps calls per sample, after one untimed call), interleaved with axpy samples,
/// and sets the counters. units: what one call is divided into (steps for BM_step).
template <class Call>
void measure(benchmark::State& state, Fixture& fx, Index reps, double units, const Floor& floor,
             Call&& call) {
  const MachineLimits& limits = MachineLimits::get();
  call();
  double seconds = 0.0;
  std::vector<double> axpy_samples;
  for (auto _ : state) {
    const auto start = Clock::now();
    for (Index r = 0; r < reps; ++r) call();
    const double elapsed = seconds_since(start);
    state.SetIterationTime(elapsed);
    seconds += elapsed;
    axpy_samples.push_back(fx.axpy().sample_seconds());
  }
  while (axpy_samples.size() < kMinAxpySamples) axpy_samples.push_back(fx.axpy().sample_seconds());
  const double axpy = median(axpy_samples);
  const double per_unit =
      seconds / (static_cast<double>(state.iterations() * reps) * units);  // one step or call
  const double N = static_cast<double>(fx.N());
  state.counters["ns_per_mass"] = 1e9 * per_unit / N;
  state.counters["axpy_passes"] = per_unit / axpy;
  state.counters["axpy_ns_per_mass"] = 1e9 * axpy / N;
  if (floor.bytes > 0.0) state.counters["traffic_passes"] = floor.bytes / (3.0 * 2.0 * N * kBytes);
  if (floor.flops > 0.0)
    state.counters["peak_fraction"] = floor.flops / per_unit / limits.peak_flops;
  if (floor.chained_fmas > 0.0)
    state.counters["latency_bound"] = floor.chained_fmas * limits.fma_latency / per_unit;
}

Index reps_for(Index N) {
  return std::max<Index>(1, Index{1 << 20} / N);
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

void BM_peak_flops(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(MachineLimits::get().peak_flops);
  state.counters["gflops"] = MachineLimits::get().peak_flops * 1e-9;
}

void BM_fma_latency(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(MachineLimits::get().fma_latency);
  state.counters["ns_per_fma"] = MachineLimits::get().fma_latency * 1e9;
}

void BM_axpy(benchmark::State& state) {
  Fixture& fx = Fixture::get(state.range(0));
  const double n = 2.0 * static_cast<double>(fx.N());
  // 2 flops per entry; reads x and y, writes y.
  measure(state, fx, reps_for(fx.N()), 1.0, {2.0 * n, 3.0 * n * kBytes, 0.0},
          [&, x = Vector(Vector::Constant(2 * fx.N(), 1.0)),
           y = Vector(Vector::Zero(2 * fx.N()))]() mutable { axpy_pass(1e-9, x, y); });
}

// Flops of one stencil row of the force (see MassSpringChain::force): elongations 2, cubes 4,
// K q 4, D v 4, sums and scaling 5.
constexpr double kForceFlops = 19.0;

void BM_force(benchmark::State& state) {
  Fixture& fx = Fixture::get(state.range(0));
  const double N = static_cast<double>(fx.N());
  Vector F(fx.N()), u = Vector::Constant(1, 0.3);
  measure(state, fx, reps_for(fx.N()), 1.0, {kForceFlops * N, 4.0 * N * kBytes, 0.0}, [&] {
    fx.chain().force(fx.q0(), fx.v0(), u, F);
    benchmark::DoNotOptimize(F.data());
  });
}

void BM_force_midpoint_stage(benchmark::State& state) {
  Fixture& fx = Fixture::get(state.range(0));
  const double N = static_cast<double>(fx.N());
  const double h = kDt;
  Vector F(fx.N()), u = Vector::Constant(1, 0.3), x = fx.v0();
  const Vector &q = fx.q0(), &v = fx.v0();
  // 3 flops per stage coefficient, 3 q and 3 v coefficients per row (recomputed per row).
  measure(state, fx, reps_for(fx.N()), 1.0, {(kForceFlops + 15.0) * N, 5.0 * N * kBytes, 0.0}, [&] {
    const auto v_stage = 0.5 * (v + x);
    fx.chain().force(q + (0.5 * h) * v_stage, v_stage, u, F);
    benchmark::DoNotOptimize(F.data());
  });
}

enum class Path { tridiagonal, lapack, cholmod };

void BM_factorize(benchmark::State& state, Path path) {
  Fixture& fx = Fixture::get(state.range(0));
  const double N = static_cast<double>(fx.N());
  TridiagonalSpdSolver solver;
  Vector d(fx.N()), e(fx.N() - 1);
  try {
    if (path == Path::tridiagonal) {
      // Two chains of N/2 FMAs each; reads d, e, writes the two factors (+ write-allocate).
      measure(state, fx, reps_for(fx.N()), 1.0, {5.0 * N, 6.0 * N * kBytes, 0.5 * N}, [&] {
        solver.factorize(fx.diag(), fx.off());
        if (solver.used_lapack()) throw NumericalError("unexpected LAPACK fallback");
      });
    } else {
      // One chain of N divisions (not FMAs: no latency_bound). LAPACK factorizes in place: the
      // copy of d, e (6 vectors' traffic) and dpttrf's pass (4).
      measure(state, fx, reps_for(fx.N()), 1.0, {4.0 * N, 10.0 * N * kBytes, 0.0}, [&] {
        d = fx.diag();
        e = fx.off();
        lapack_dpttrf(d, e);
        benchmark::DoNotOptimize(d.data());
      });
    }
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

void BM_solve(benchmark::State& state, Path path) {
  Fixture& fx = Fixture::get(state.range(0));
  const double N = static_cast<double>(fx.N());
  // Forward and back sweeps: 2 N chained FMAs (two chains at a time in the twisted solver), 4 N
  // flops. Traffic: r, L in, y out (+ write-allocate); y, D, L in, x out over y: 8 vectors;
  // LAPACK solves in place after copying r (3 more).
  const bool twisted = path == Path::tridiagonal;
  const Floor floor{4.0 * N, (twisted ? 8.0 : 11.0) * N * kBytes, twisted ? N : 2.0 * N};
  Vector x(fx.N());
  if (path == Path::tridiagonal) {
    TridiagonalSpdSolver solver;
    solver.factorize(fx.diag(), fx.off());
    measure(state, fx, reps_for(fx.N()), 1.0, floor, [&] {
      solver.solve(fx.rhs(), x);
      benchmark::DoNotOptimize(x.data());
    });
  } else {
    Vector d = fx.diag(), e = fx.off();
    lapack_dpttrf(d, e);
    measure(state, fx, reps_for(fx.N()), 1.0, floor, [&] {
      x = fx.rhs();
      lapack_dpttrs(d, e, x);
      benchmark::DoNotOptimize(x.data());
    });
  }
}

void BM_factorize_iteration(benchmark::State& state, Path path) {
  Fixture& fx = Fixture::get(state.range(0));
  const double N = static_cast<double>(fx.N());
  try {
    MassSpringChain::Workspace ws(
        fx.chain(), SparseBackend::cholmod,
        path == Path::cholmod ? ChainSolver::sparse : ChainSolver::tridiagonal);
    const double h = kDt;
    // Assembly reads q and writes the diagonals (+ write-allocate), then the factorization
    // (BM_factorize): 11 vectors on the tridiagonal path; CHOLMOD's own traffic is not counted.
    const Floor floor =
        path == Path::cholmod ? Floor{} : Floor{15.0 * N, 11.0 * N * kBytes, 0.5 * N};
    measure(state, fx, reps_for(fx.N()), 1.0, floor,
            [&] { ws.factorize_iteration(1.0, 0.5 * h, 0.25 * h * h, fx.q0()); });
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

void BM_step(benchmark::State& state, Scheme scheme, bool streamed, bool bound, bool lagged) {
  Fixture& fx = Fixture::get(state.range(0));
  const double N = static_cast<double>(fx.N());
  try {
    MassSpringChain::Workspace ws(fx.chain());
    ws.use_streamed(streamed);
    IntegratorOptions opt;
    opt.scheme = scheme;
    opt.newton_bound = bound;
    opt.reuse_jacobian = lagged;
    opt.t0 = fx.t0();
    opt.dt = kDt;
    opt.t_end = fx.t0() + static_cast<double>(kStepsPerCall) * kDt;
    opt.observe_stride = kStepsPerCall;
    Vector q, v;
    Index newton = 0, factorizations = 0, calls = 0;
    // Traffic per step. RK4: three force evaluations reading q, v and the previous stages
    // (2, 3, 4 vectors) and writing one each (+ write-allocate), then the last stage fused with
    // the update (q, v, F1, F2, F3 in, the new q over F1 and the new v into F4's storage +
    // write-allocate): 23 vectors. Implicit, per Newton iteration: the force (q, v, x in, F out
    // + write-allocate: 5), the residual in place (x, v, F in, F out: 4), the solve (8) and
    // x -= delta with its norms (3): 20; per step: the stage for the factorization (5), the
    // assembly (5), the factorization (6) and the accepting update (q, v, x in and out: 6): 22.
    // Generalized-alpha reads its previous acceleration in the force, the stage and the update
    // too, and writes it in the update: 21 and 24.
    // The streamed midpoint iteration (the default; MassSpringChain::Workspace::midpoint_newton):
    // per Newton iteration the first pass (q, v, x and L in, y out + write-allocate: 6) and
    // the back sweep with the update (y, D, L, x in, x out: 5): 11; per step the
    // factorization in the first pass of the step (D and L written + write-allocate, L not
    // read: 3) and the accepting update (6): 9. With the bound on the next correction
    // (IntegratorOptions::newton_bound, the default), the back sweep also reads q and v for the
    // residual at the new x: 13 per Newton iteration.
    const bool alpha = scheme == Scheme::generalized_alpha;
    const bool fused = streamed && scheme == Scheme::implicit_midpoint;
    const double newton_vectors = fused ? (bound ? 13.0 : 11.0) : alpha ? 21.0 : 20.0;
    // The accepting update (6 vectors) every step, the rest with each factorization.
    const double factorization_vectors = (fused ? 9.0 : alpha ? 24.0 : 22.0) - 6.0;
    const Floor floor = scheme == Scheme::rk4
                            ? Floor{4.0 * kForceFlops * N + 20.0 * N, 23.0 * N * kBytes, 0.0}
                            : Floor{};
    measure(state, fx, 1, static_cast<double>(kStepsPerCall), floor, [&] {
      q = fx.q0();  // a copy per call of 40 steps: under 1/40 of a step's traffic each
      v = fx.v0();
      const IntegrationStats stats =
          integrate(fx.chain(), ws, fx.input(), opt, q, v,
                    [](Index, double, const Vector&, const Vector&, const Vector&) {});
      newton += stats.newton_iterations;
      factorizations += stats.factorizations;
      ++calls;
      benchmark::DoNotOptimize(q.data());
    });
    if (scheme != Scheme::rk4) {
      const double per_step =
          static_cast<double>(newton) / (static_cast<double>(calls * kStepsPerCall));
      state.counters["newton_per_step"] = per_step;
      state.counters["per_newton_axpy_passes"] =
          static_cast<double>(state.counters["axpy_passes"]) / per_step;
      const double factorized =
          static_cast<double>(factorizations) / (static_cast<double>(calls * kStepsPerCall));
      state.counters["factorizations_per_step"] = factorized;
      state.counters["per_newton_traffic_passes"] =
          (newton_vectors + (6.0 + factorization_vectors * factorized) / per_step) /
          6.0;  // 6 N-vectors make an axpy pass
    }
  } catch (const std::exception& ex) {
    state.SkipWithError(ex.what());
  }
}

void register_benchmarks() {
  benchmark::RegisterBenchmark("BM_peak_flops", BM_peak_flops)->Iterations(1);
  benchmark::RegisterBenchmark("BM_fma_latency", BM_fma_latency)->Iterations(1);
  auto sized = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMicrosecond)->UseManualTime()->MinTime(0.3);
    for (Index N : kSizes) b->Arg(N);
  };
  sized(benchmark::RegisterBenchmark("BM_axpy", BM_axpy));
  sized(benchmark::RegisterBenchmark("BM_force", BM_force));
  sized(benchmark::RegisterBenchmark("BM_force_midpoint_stage", BM_force_midpoint_stage));
  sized(benchmark::RegisterBenchmark("BM_factorize/tridiagonal", BM_factorize, Path::tridiagonal));
  sized(benchmark::RegisterBenchmark("BM_factorize/lapack", BM_factorize, Path::lapack));
  sized(benchmark::RegisterBenchmark("BM_solve/tridiagonal", BM_solve, Path::tridiagonal));
  sized(benchmark::RegisterBenchmark("BM_solve/lapack", BM_solve, Path::lapack));
  sized(benchmark::RegisterBenchmark("BM_factorize_iteration/tridiagonal", BM_factorize_iteration,
                                     Path::tridiagonal));
  sized(benchmark::RegisterBenchmark("BM_factorize_iteration/cholmod", BM_factorize_iteration,
                                     Path::cholmod));
  sized(benchmark::RegisterBenchmark("BM_step/implicit_midpoint", BM_step,
                                     Scheme::implicit_midpoint, true, true, false));
  sized(benchmark::RegisterBenchmark("BM_step/implicit_midpoint_confirmed", BM_step,
                                     Scheme::implicit_midpoint, true, false, false));
  sized(benchmark::RegisterBenchmark("BM_step/implicit_midpoint_lagged", BM_step,
                                     Scheme::implicit_midpoint, true, true, true));
  sized(benchmark::RegisterBenchmark("BM_step/implicit_midpoint_lagged_confirmed", BM_step,
                                     Scheme::implicit_midpoint, true, false, true));
  sized(benchmark::RegisterBenchmark("BM_step/implicit_midpoint_plain", BM_step,
                                     Scheme::implicit_midpoint, false, true, false));
  sized(benchmark::RegisterBenchmark("BM_step/generalized_alpha", BM_step,
                                     Scheme::generalized_alpha, true, true, false));
  sized(benchmark::RegisterBenchmark("BM_step/rk4", BM_step, Scheme::rk4, true, true, false));
}

}  // namespace
}  // namespace mor

int main(int argc, char** argv) {
  return mor::run_benchmarks(argc, argv, mor::register_benchmarks);
}
