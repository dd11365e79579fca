// SPDX-License-Identifier: GPL-3.0-or-later
// POD's large kernels on OpenBLAS (reduction/pod.cpp: dgemm, dsyrk, dgeqrf/dorgqr through
// src/linalg) against the same algorithms with Eigen's own products (the code before issue 28),
// in the same binary and run, alternating:
//
//   BM_pod_randomized/<n>/<k>/<l>   randomized SVD (HMT 2011, 2 power iterations) of an n x k
//                                   snapshot matrix with a sketch of l columns (r + 10: l = 30
//                                   for r = 20, 70 for the 60 columns of compare_orders)
//   BM_pod_snapshots/<n>/<k>        the method of snapshots' correlation X^T X (k x k) and the
//                                   product X Y (Y k x 20) around the eigensolver, which both
//                                   variants share
// Counters: seconds_blas, seconds_eigen (each the fastest of its runs; the order alternates
// between iterations), speedup (Eigen's time over BLAS's), gflops_blas, gflops_eigen (the
// kernels' flop count over their time), threads (OpenBLAS's), load_average (1 minute, at the
// start). The snapshots are synthetic (a rank-60 matrix with geometrically decaying singular
// values plus noise of 1e-8 relative): the products' speed does not depend on their values as
// long as none is subnormal (chain snapshots driven at one end can be; see
// reduction/low_rank_adi.hpp). Eigen's products run on this thread, OpenBLAS's on its threads:
// set OPENBLAS_NUM_THREADS=1 for one core each.
//
// Run: build/experiments/bench/bench_pod --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <fstream>
#include <random>

#include "reduction/pod.hpp"
#include "src/core/timing.hpp"
#include "src/linalg/blas.hpp"

namespace mor {
namespace {

constexpr Index kPowerIterations = 2;

/// n x k snapshots: G1 diag(0.8^i) G2 (rank 60, normalized) + 1e-8 noise.
Matrix synthetic_snapshots(Index n, Index k) {
  std::mt19937 gen(42);
  std::normal_distribution<double> normal(0.0, 1.0);
  constexpr Index rank = 60;
  Matrix G1(n, rank), G2(rank, k), X(n, k);
  for (Index j = 0; j < rank; ++j)
    for (Index i = 0; i < n; ++i) G1(i, j) = normal(gen) / std::sqrt(double(n));
  for (Index j = 0; j < k; ++j)
    for (Index i = 0; i < rank; ++i) G2(i, j) = normal(gen) * std::pow(0.8, double(i));
  X.noalias() = G1 * G2;
  for (Index j = 0; j < k; ++j)
    for (Index i = 0; i < n; ++i) X(i, j) += 1e-8 * normal(gen);
  return X;
}

double load_average() {
  std::ifstream f("/proc/loadavg");
  double load = -1.0;
  f >> load;
  return f ? load : -1.0;
}

Matrix eigen_orthonormal_columns(const Matrix& Y) {
  Eigen::HouseholderQR<Matrix> qr(Y);
  return qr.householderQ() * Matrix::Identity(Y.rows(), Y.cols());
}

/// The randomized range finder and SVD of reduction/pod.cpp as it was, on Eigen's products.
Matrix eigen_randomized_basis(const Matrix& A, Index l, Index r) {
  std::mt19937 gen(1);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix Omega(A.cols(), l);
  for (Index j = 0; j < l; ++j)
    for (Index i = 0; i < A.cols(); ++i) Omega(i, j) = normal(gen);
  Matrix Q = eigen_orthonormal_columns(A * Omega);
  for (Index pass = 0; pass < kPowerIterations; ++pass) {
    const Matrix Qt = eigen_orthonormal_columns(A.transpose() * Q);
    Q = eigen_orthonormal_columns(A * Qt);
  }
  const Matrix B = Q.transpose() * A;
  Eigen::BDCSVD<Matrix> svd(B, Eigen::ComputeThinU);
  return Q * svd.matrixU().leftCols(r);
}

void BM_pod_randomized(benchmark::State& state) {
  const Index n = state.range(0), k = state.range(1), l = state.range(2), r = l - 10;
  const Matrix X = synthetic_snapshots(n, k);
  state.counters["load_average"] = load_average();
  state.counters["threads"] = blas::threads();
  PodOptions o;
  o.method = PodMethod::randomized;
  o.order = r;
  o.power_iterations = kPowerIterations;
  double best[2] = {1e300, 1e300};  // blas, eigen
  Index rotation = 0;
  for (auto _ : state) {
    for (Index step = 0; step < 2; ++step) {
      const Index which = (step + rotation) % 2;
      const auto t0 = Clock::now();
      if (which == 0) {
        const PodResult res = pod(X, o);
        benchmark::DoNotOptimize(res.V.data());
      } else {
        const Matrix V = eigen_randomized_basis(X, l, r);
        benchmark::DoNotOptimize(V.data());
      }
      best[which] = std::min(best[which], seconds_since(t0));
    }
    ++rotation;
    state.SetIterationTime(best[0]);
  }
  // Six tall products of 2 n k l flops each (A Omega, two passes of A^T Q and A Q_t, Q^T A).
  const double flops = 12.0 * double(n) * double(k) * double(l);
  state.counters["seconds_blas"] = best[0];
  state.counters["seconds_eigen"] = best[1];
  state.counters["speedup"] = best[1] / best[0];
  state.counters["gflops_blas"] = flops / best[0] * 1e-9;
  state.counters["gflops_eigen"] = flops / best[1] * 1e-9;
}

void BM_pod_snapshots(benchmark::State& state) {
  const Index n = state.range(0), k = state.range(1);
  constexpr Index r = 20;
  const Matrix X = synthetic_snapshots(n, k);
  std::mt19937 gen(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  Matrix Y(k, r);
  for (Index j = 0; j < r; ++j)
    for (Index i = 0; i < k; ++i) Y(i, j) = normal(gen);
  state.counters["load_average"] = load_average();
  state.counters["threads"] = blas::threads();
  double best[2] = {1e300, 1e300};
  Index rotation = 0;
  for (auto _ : state) {
    for (Index step = 0; step < 2; ++step) {
      const Index which = (step + rotation) % 2;
      const auto t0 = Clock::now();
      if (which == 0) {
        const Matrix C = blas::gram(X, 1.0);
        const Matrix XY = blas::product(X, Y);
        benchmark::DoNotOptimize(C.data());
        benchmark::DoNotOptimize(XY.data());
      } else {
        Matrix C = Matrix::Zero(k, k);
        C.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose(), 1.0);
        const Matrix XY = X * Y;
        benchmark::DoNotOptimize(C.data());
        benchmark::DoNotOptimize(XY.data());
      }
      best[which] = std::min(best[which], seconds_since(t0));
    }
    ++rotation;
    state.SetIterationTime(best[0]);
  }
  const double flops = double(n) * double(k) * double(k) + 2.0 * double(n) * double(k) * r;
  state.counters["seconds_blas"] = best[0];
  state.counters["seconds_eigen"] = best[1];
  state.counters["speedup"] = best[1] / best[0];
  state.counters["gflops_blas"] = flops / best[0] * 1e-9;
  state.counters["gflops_eigen"] = flops / best[1] * 1e-9;
}

BENCHMARK(BM_pod_randomized)
    ->Args({100000, 1400, 30})
    ->Args({100000, 1400, 70})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2)
    ->UseManualTime();
BENCHMARK(BM_pod_snapshots)
    ->Args({100000, 400})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2)
    ->UseManualTime();

}  // namespace
}  // namespace mor

BENCHMARK_MAIN();
