// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank balanced truncation of the Rayleigh-damped linear chain (D = 0.2 M + 0.2 K, one input
// and one output at the last mass, n = 2N states) for N = 10^3 .. 10^6 masses:
//
//   BM_adi/<N>   LR-ADI for the controllability Gramian alone (projection shifts, tol 1e-10)
//   BM_bt/<N>    the whole square-root BT to r = 20: both Gramians, SVD, bases, projection
//   BM_dense_bt/<N>  the same through dense Gramians (small N only), the automatic dense solver:
//                    the sign-function iteration from n = 400 states (dgetrf/dgetri), else
//                    Hammarling on one real Schur form (LAPACK dgees) for both Gramians; SVD by
//                    dgesdd
//   BM_dense_bt_vs_ab09ad/<N>/<threads>  the bar of issue 28 in one run: dense BT by the sign
//                    function, by the Schur path and SLICOT AB09AD on the same chain with OpenBLAS
//                    on <threads> threads (openblas_set_num_threads), one after the other in each
//                    iteration, the order rotated between iterations; counters seconds_sign,
//                    seconds_schur, seconds_ab09ad (each the fastest of its runs), speedup_sign and
//                    speedup_schur (AB09AD's time over ours), sign_steps, rank_c, and
//                    load_average (the 1-minute load when the benchmark started: the machine may
//                    be shared)
//   BM_slicot_ab09ad/<N>  the baseline of BM_dense_bt: SLICOT AB09AD (square-root BT, JOB = 'B',
//                    no equilibration) on the same chain in standard form (E^{-1} A, E^{-1} B, C;
//                    the reduction to it is timed too), when the build found libslicot. Debian's
//                    libslicot links libblas.so.3 / liblapack.so.3, which the alternatives point
//                    to OpenBLAS here, as our code is: the ratio compares algorithms on one BLAS
//
// Counters:
//   iterations_c, iterations_o   ADI steps of each Gramian (a complex pair counts two)
//   rank_c, rank_o               columns of the factors Z_c, Z_o
//   factor_MiB                   memory of both factors, 2N * (rank_c + rank_o) * 8 bytes
//   peak_rss_MiB                 the process's peak resident memory after the run (VmHWM; the
//                                benchmarks run in ascending N, so it is that of the largest so
//                                far)
//   residual_c                   final relative Lyapunov residual of Z_c
//   seconds_gramians, seconds_projection, seconds_shifts (BM_bt, BM_dense_bt)  both factors;
//                                SVD, bases and reduced matrices; of the first, computing shifts
// Each benchmark iteration builds its operator (symbolic analysis included) and runs the whole
// computation: what a user of `mor run` waits for, minus model assembly and file output.
//
// The steel-profile rail (Oberwolfach; data/rail_<n>.mat, n = 1357, 20209, 79841 states, 7
// inputs, 6 outputs, E SPD and A symmetric negative definite), read by mor::io::import_model,
// reduced as the peer run of issue 14 (M-M.E.S.S. 3.0, ../shared/peers/rail_bt.m): LR-ADI to
// the relative residual 1e-10 for both Gramians, square-root BT to the error bound
// 2 sum_{i>r} sigma_i <= 1e-4:
//
//   BM_rail_bt/<n>                the defaults (automatic shifts: Penzl's, the pencil is
//                                 symmetric; CHOLMOD for the shifted solves)
//   BM_rail_bt_mess_settings/<n>  the peer's ADI settings on our code: projection shifts from
//                                 Z's newest 25 m columns, 25 per round, Frobenius residual
//
// Counters: r, error_bound, hsv_1, iterations_c/o, rank_c/o, seconds_adi_c/o (shift
// computation included), seconds_shifts (of both), seconds_projection (SVD, bases, reduced
// matrices), peak_rss_MiB (this run's own peak, model included: the mark is reset first). The
// files are looked up in $MOR_RAIL_DIR if set, else in data/ next to this source; a missing one
// (79841 here) is skipped with a message.
//
// Run, JSON and README table (a few minutes, 4.2 GiB at N = 10^6):
//   bash scripts/run_benchmarks.sh balanced_truncation
#include <benchmark/benchmark.h>

#include <Eigen/LU>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "models/mass_spring_chain.hpp"
#include "reduction/balanced_truncation.hpp"
#include "src/core/timing.hpp"
#include "src/io/model_files.hpp"
#include "src/linalg/blas.hpp"

#ifdef MOR_BENCH_HAVE_SLICOT
extern "C" {
// SLICOT AB09AD (Fortran 77; gfortran appends the CHARACTER lengths), see tests/support/slicot.hpp.
void ab09ad_(const char* dico, const char* job, const char* equil, const char* ordsel, const int* n,
             const int* m, const int* p, int* nr, double* a, const int* lda, double* b,
             const int* ldb, double* c, const int* ldc, double* hsv, const double* tol, int* iwork,
             double* dwork, const int* ldwork, int* iwarn, int* info, std::size_t dico_len,
             std::size_t job_len, std::size_t equil_len, std::size_t ordsel_len);
}
#endif

namespace mor {
namespace {

constexpr Index kOrder = 20;
constexpr double kAdiTolerance = 1e-10;

SecondOrderSystem rayleigh_chain(Index N) {
  ChainParameters p;
  p.N = N;
  p.k_n = 0.0;
  p.damping = SpringDamping::rayleigh;
  p.alpha = 0.2;
  p.beta = 0.2;
  return MassSpringChain(p).linear_system();
}

void BM_adi(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  AdiOptions o;
  o.tolerance = kAdiTolerance;
  AdiResult last;
  for (auto _ : state) {
    SecondOrderLtiOperator op(sys);
    last = low_rank_adi(op, GramianKind::controllability, o);
    benchmark::DoNotOptimize(last.Z.data());
  }
  state.counters["iterations_c"] = static_cast<double>(last.iterations);
  state.counters["rank_c"] = static_cast<double>(last.Z.cols());
  state.counters["residual_c"] = last.residual_history.empty() ? -1 : last.residual_history.back();
  state.counters["factor_MiB"] = static_cast<double>(last.Z.size()) * 8.0 / (1 << 20);
  state.counters["peak_rss_MiB"] = experiments::peak_rss_mib();
  if (last.status != AdiStatus::converged) state.SkipWithError(last.message.c_str());
}

void run_bt(benchmark::State& state, GramianMethod method) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  BtOptions o;
  o.selection.order = kOrder;
  o.gramians.method = method;
  o.gramians.adi.tolerance = kAdiTolerance;
  BtResult last;
  for (auto _ : state) {
    SecondOrderLtiOperator op(sys);
    last = balanced_truncation(op, o);
    benchmark::DoNotOptimize(last.Ar.data());
  }
  const auto& g = last.gramians;
  if (g.low_rank_c) state.counters["iterations_c"] = static_cast<double>(g.low_rank_c->iterations);
  if (g.low_rank_o) state.counters["iterations_o"] = static_cast<double>(g.low_rank_o->iterations);
  state.counters["rank_c"] = static_cast<double>(g.rank_c);
  state.counters["rank_o"] = static_cast<double>(g.rank_o);
  state.counters["factor_MiB"] = 2.0 * static_cast<double>(state.range(0)) *
                                 static_cast<double>(g.rank_c + g.rank_o) * 8.0 / (1 << 20);
  state.counters["residual_c"] = g.residual_c;
  state.counters["hsv_1"] = last.hsv.size() > 0 ? last.hsv(0) : 0.0;
  state.counters["seconds_gramians"] = g.seconds;
  state.counters["seconds_projection"] = last.seconds_projection;
  if (g.low_rank_c && g.low_rank_o)
    state.counters["seconds_shifts"] = g.low_rank_c->shift_seconds + g.low_rank_o->shift_seconds;
  state.counters["peak_rss_MiB"] = experiments::peak_rss_mib();
}

void BM_bt(benchmark::State& state) {
  run_bt(state, GramianMethod::low_rank);
}
void BM_dense_bt(benchmark::State& state) {
  run_bt(state, GramianMethod::dense);
}

#ifdef MOR_BENCH_HAVE_SLICOT
/// SLICOT AB09AD on the dense chain (E, A, B, C) (reduced to standard form first, timed by the
/// callers): square-root BT to r = kOrder; returns INFO, hsv receives all n HSVs.
int run_ab09ad(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C, Vector& hsv,
               int& nr) {
  const int n = static_cast<int>(A.rows()), m = static_cast<int>(B.cols()),
            p = static_cast<int>(C.rows());
  const int ldwork = n * (2 * n + std::max({n, m, p}) + 5) + n * (n + 1) / 2 + 64 * n;
  std::vector<double> dwork(static_cast<std::size_t>(ldwork));
  std::vector<int> iwork(1);
  hsv.resize(n);
  const Eigen::PartialPivLU<Matrix> lu(E);
  Matrix a = lu.solve(A), b = lu.solve(B), c = C;
  nr = static_cast<int>(kOrder);
  int iwarn = 0, info = 0;
  const double tol = 0.0;
  ab09ad_("C", "B", "N", "F", &n, &m, &p, &nr, a.data(), &n, b.data(), &n, c.data(), &p, hsv.data(),
          &tol, iwork.data(), dwork.data(), &ldwork, &iwarn, &info, 1, 1, 1, 1);
  benchmark::DoNotOptimize(a.data());
  return info;
}

/// SLICOT AB09AD on the chain of BM_dense_bt: square-root BT to r = kOrder, all n HSVs.
void BM_slicot_ab09ad(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  const SecondOrderLtiOperator op(sys);
  const Matrix E = dense_E(op), A = dense_A(op);
  Vector hsv;
  int nr = 0, info = 0;
  for (auto _ : state) info = run_ab09ad(E, A, op.B(), op.C(), hsv, nr);
  if (info != 0) state.SkipWithError(("AB09AD INFO = " + std::to_string(info)).c_str());
  state.counters["r"] = nr;
  state.counters["hsv_1"] = hsv(0);
}

/// The 1-minute load average (/proc/loadavg), -1 if unreadable.
double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1.0;
  f >> load;
  return f ? load : -1.0;
}

/// Dense BT by the sign function, by the Schur path, and AB09AD on the same chain, OpenBLAS on
/// state.range(1) threads; the order of the three rotates from one iteration to the next.
void BM_dense_bt_vs_ab09ad(benchmark::State& state) {
  const SecondOrderSystem sys = rayleigh_chain(state.range(0));
  const int threads_before = blas::threads();
  blas::set_threads(static_cast<int>(state.range(1)));
  state.counters["load_average"] = load_average();
  double best[3] = {1e300, 1e300, 1e300};  // sign, schur, ab09ad
  BtResult sign_result;
  Vector hsv;
  int nr = 0, info = 0;
  Index rotation = 0;
  for (auto _ : state) {
    for (Index k = 0; k < 3; ++k) {
      const Index which = (k + rotation) % 3;
      const auto t0 = Clock::now();
      if (which < 2) {
        BtOptions o;
        o.selection.order = kOrder;
        o.gramians.method = GramianMethod::dense;
        o.gramians.dense_solver =
            which == 0 ? DenseLyapunovSolver::sign_function : DenseLyapunovSolver::schur;
        SecondOrderLtiOperator op(sys);
        BtResult res = balanced_truncation(op, o);
        benchmark::DoNotOptimize(res.Ar.data());
        if (which == 0) sign_result = std::move(res);
      } else {
        const SecondOrderLtiOperator op(sys);
        info = run_ab09ad(dense_E(op), dense_A(op), op.B(), op.C(), hsv, nr);
      }
      best[which] = std::min(best[which], seconds_since(t0));
    }
    ++rotation;
    state.SetIterationTime(best[0]);
  }
  blas::set_threads(threads_before);
  if (info != 0) state.SkipWithError(("AB09AD INFO = " + std::to_string(info)).c_str());
  state.counters["seconds_sign"] = best[0];
  state.counters["seconds_schur"] = best[1];
  state.counters["seconds_ab09ad"] = best[2];
  state.counters["speedup_sign"] = best[2] / best[0];
  state.counters["speedup_schur"] = best[2] / best[1];
  state.counters["sign_steps"] = static_cast<double>(sign_result.gramians.sign_steps);
  state.counters["rank_c"] = static_cast<double>(sign_result.gramians.rank_c);
  state.counters["hsv_1"] = sign_result.hsv(0);
  state.counters["hsv_1_ab09ad"] = hsv(0);
}
#endif

/// data/rail_<n>.mat in $MOR_RAIL_DIR, else in the data folder next to this source.
std::filesystem::path rail_file(Index n) {
  const std::string name = "rail_" + std::to_string(n) + ".mat";
  if (const char* dir = std::getenv("MOR_RAIL_DIR")) return std::filesystem::path(dir) / name;
  return std::filesystem::path(__FILE__).parent_path() / "../../data" / name;
}

/// Clears the process's peak resident memory (Linux >= 4.0: "5" to /proc/self/clear_refs), so
/// that peak_rss_mib() afterwards is this benchmark's own peak; false if not possible.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

void run_rail(benchmark::State& state, const AdiOptions& adi) {
  const std::filesystem::path file = rail_file(state.range(0));
  if (!std::filesystem::exists(file)) {
    state.SkipWithError(("rail model not found: " + file.string()).c_str());
    return;
  }
  io::ModelFileSpec spec;
  spec.path = file;
  const io::ImportedModel model = io::import_model(spec);
  const auto& sys = std::get<DescriptorSystem>(model.system);
  BtOptions o;
  o.selection.tolerance = 1e-4;
  o.gramians.method = GramianMethod::low_rank;
  o.gramians.adi = adi;
  const bool own_peak = reset_peak_rss();
  BtResult last;
  for (auto _ : state) {
    SparseLtiOperator op(sys);
    last = balanced_truncation(op, o);
    benchmark::DoNotOptimize(last.Ar.data());
  }
  const auto& g = last.gramians;
  state.counters["r"] = static_cast<double>(last.r);
  state.counters["error_bound"] = last.error_bound;
  state.counters["rank_c"] = static_cast<double>(g.rank_c);
  state.counters["rank_o"] = static_cast<double>(g.rank_o);
  if (g.low_rank_c && g.low_rank_o) {
    state.counters["iterations_c"] = static_cast<double>(g.low_rank_c->iterations);
    state.counters["iterations_o"] = static_cast<double>(g.low_rank_o->iterations);
    state.counters["seconds_adi_c"] = g.low_rank_c->seconds;
    state.counters["seconds_adi_o"] = g.low_rank_o->seconds;
    state.counters["seconds_shifts"] = g.low_rank_c->shift_seconds + g.low_rank_o->shift_seconds;
  }
  state.counters["seconds_projection"] = last.seconds_projection;
  state.counters["hsv_1"] = last.hsv.size() > 0 ? last.hsv(0) : 0.0;
  // With the high-water mark reset this is the run's own peak (model and operator included).
  state.counters["peak_rss_MiB"] = own_peak ? experiments::peak_rss_mib() : -1.0;
}

/// The default: automatic shifts (Penzl's for the rail's symmetric pencil), 2-norm residual.
void BM_rail_bt(benchmark::State& state) {
  AdiOptions adi;
  adi.tolerance = kAdiTolerance;
  run_rail(state, adi);
}

/// The peer's settings on our code: projection shifts from the newest 25 m columns of Z alone,
/// 25 shifts per round by min-max selection, the residual test in the Frobenius norm.
void BM_rail_bt_mess_settings(benchmark::State& state) {
  AdiOptions adi;
  adi.tolerance = kAdiTolerance;
  adi.residual_norm = ResidualNorm::frobenius;
  adi.strategy = ShiftStrategy::projection;
  adi.projection_with_residual = false;
  adi.projection_shifts = 25;
  adi.projection_columns = 25 * 7;  // 25 steps of the rail's 7 inputs (of 6 outputs: 29 steps)
  run_rail(state, adi);
}

BENCHMARK(BM_dense_bt)
    ->Arg(250)
    ->Arg(500)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
#ifdef MOR_BENCH_HAVE_SLICOT
BENCHMARK(BM_slicot_ab09ad)
    ->Arg(250)
    ->Arg(500)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK(BM_dense_bt_vs_ab09ad)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2)
    ->UseManualTime();
#endif
BENCHMARK(BM_adi)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_bt)
    ->RangeMultiplier(10)
    ->Range(1000, 1000000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
// Last: the rail runs reset the peak-memory mark, which the chain rows above read cumulatively.
BENCHMARK(BM_rail_bt)
    ->Arg(1357)
    ->Arg(20209)
    ->Arg(79841)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK(BM_rail_bt_mess_settings)
    ->Arg(20209)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
}  // namespace mor

BENCHMARK_MAIN();
