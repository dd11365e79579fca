// SPDX-License-Identifier: GPL-3.0-or-later
// The keys that the balanced-truncation methods (bt.cpp, sobt.cpp) share: how the Gramian factors
// are computed (reduction/balanced_truncation.hpp, GramianOptions), declared once.
#pragma once

#include "experiments/runner/config.hpp"
#include "experiments/runner/keys.hpp"
#include "experiments/runner/model_kind.hpp"
#include "reduction/balanced_truncation.hpp"

namespace mor::experiments {

inline constexpr Choice<GramianMethod> kGramianMethods[] = {{"automatic", GramianMethod::automatic},
                                                            {"dense", GramianMethod::dense},
                                                            {"low_rank", GramianMethod::low_rank}};
inline constexpr Choice<DenseLyapunovSolver> kDenseLyapunovSolvers[] = {
    {"automatic", DenseLyapunovSolver::automatic},
    {"sign_function", DenseLyapunovSolver::sign_function},
    {"schur", DenseLyapunovSolver::schur}};
inline constexpr Choice<ShiftStrategy> kShiftStrategies[] = {
    {"automatic", ShiftStrategy::automatic},
    {"projection", ShiftStrategy::projection},
    {"penzl", ShiftStrategy::penzl}};
inline constexpr Choice<LowRankSolver> kLowRankSolvers[] = {{"adi", LowRankSolver::adi},
                                                            {"rksm", LowRankSolver::rksm}};

/// The Gramian keys, with the file's defaults.
struct GramianKeys {
  GramianMethod gramians = GramianMethod::automatic;
  Index dense_limit = 1500;
  DenseLyapunovSolver dense_solver = DenseLyapunovSolver::automatic;
  double adi_tolerance = 1e-10;
  Index adi_max_iterations = 500;
  ShiftStrategy shifts = ShiftStrategy::automatic;
  LowRankSolver low_rank_solver = LowRankSolver::adi;
  double rksm_tolerance = 1e-10;
  Index rksm_max_dimension = 1000;
  bool allow_unconverged = false;

  AdiOptions adi() const {
    AdiOptions a;
    a.tolerance = adi_tolerance;
    a.max_iterations = adi_max_iterations;
    a.strategy = shifts;
    return a;
  }
  GramianOptions options() const {
    GramianOptions g;
    g.method = gramians;
    g.dense_limit = dense_limit;
    g.dense_solver = dense_solver;
    g.solver = low_rank_solver;
    g.adi = adi();
    g.rksm.tolerance = rksm_tolerance;
    g.rksm.max_dimension = rksm_max_dimension;
    g.allow_unconverged = allow_unconverged;
    return g;
  }
  /// @throws InvalidArgument naming the key and the value.
  void validate(const TableReader& r) const {
    require(dense_limit >= 1, r.where("dense_limit"), ": reduction.dense_limit must be >= 1, got ",
            dense_limit);
    require(adi_tolerance > 0.0, r.where("adi_tolerance"),
            ": reduction.adi_tolerance must be > 0, got ", adi_tolerance);
    require(adi_max_iterations >= 1, r.where("adi_max_iterations"),
            ": reduction.adi_max_iterations must be >= 1, got ", adi_max_iterations);
    require(rksm_tolerance > 0.0, r.where("rksm_tolerance"),
            ": reduction.rksm_tolerance must be > 0, got ", rksm_tolerance);
    require(rksm_max_dimension >= 1, r.where("rksm_max_dimension"),
            ": reduction.rksm_max_dimension must be >= 1, got ", rksm_max_dimension);
  }
};

template <class G, class V>
void gramian_keys(G& g, V& v) {
  v.choice(
      Key{"gramians", "",
          "dense (O(n^3), see dense_solver), low_rank (LR-ADI or RKSM), or automatic: dense up "
          "to dense_limit states"},
      g.gramians, kGramianMethods);
  v(Key{"dense_limit", "", "automatic: dense Gramians (and norms) up to this many states"},
    g.dense_limit);
  v.choice(Key{"dense_solver", "",
               "dense Gramians: sign_function (level-3 Newton iteration, factors of the numerical "
               "rank), schur (Hammarling on one Schur form; ill-conditioned A, all n HSVs), or "
               "automatic: the sign function from 400 states up unless rcond(E^-1 A) < 1e-9 or it "
               "fails to converge"},
           g.dense_solver, kDenseLyapunovSolvers);
  v(Key{"adi_tolerance", "", "LR-ADI: relative residual ||W^T W|| / ||B^T B|| to stop at"},
    g.adi_tolerance);
  v(Key{"adi_max_iterations", "", "LR-ADI: step limit"}, g.adi_max_iterations);
  v.choice(Key{"shifts", "",
               "LR-ADI shifts: automatic (Penzl's cycle for a symmetric pencil, projection shifts "
               "otherwise), projection (self-generating) or penzl"},
           g.shifts, kShiftStrategies);
  v.choice(Key{"low_rank_solver", "", "adi, or rksm (rational Krylov; lightly damped systems)"},
           g.low_rank_solver, kLowRankSolvers);
  v(Key{"rksm_tolerance", "", "RKSM: relative residual to stop at"}, g.rksm_tolerance);
  v(Key{"rksm_max_dimension", "", "RKSM: basis size limit"}, g.rksm_max_dimension);
  v(Key{"allow_unconverged", "",
        "reduce with low-rank Gramians that did not converge (else an error)"},
    g.allow_unconverged);
}

/// States of the first-order form the Gramians are computed for.
inline double first_order_states(const ExperimentConfig& c) {
  const double N = static_cast<double>(c.model->linear_size());
  return c.model->linear_first_order() ? N : 2.0 * N;
}

inline bool dense_gramians(const ExperimentConfig& c, const GramianKeys& g) {
  return g.gramians == GramianMethod::dense ||
         (g.gramians == GramianMethod::automatic &&
          first_order_states(c) <= static_cast<double>(g.dense_limit));
}

/// Offline seconds of BT on one core of this machine: dense about 5e-9 n^3, low-rank about 15 us
/// per state (measured on the chain, README "Balanced truncation").
inline double linear_estimate_seconds(const ExperimentConfig& c, const GramianKeys& g) {
  const double n = first_order_states(c);
  return dense_gramians(c, g) ? 5e-9 * n * n * n : 1.5e-5 * n;
}

/// Extra peak bytes: a dozen n x n matrices dense; about 3 KiB per state low-rank.
inline double linear_estimate_bytes(const ExperimentConfig& c, const GramianKeys& g) {
  const double n = first_order_states(c);
  return dense_gramians(c, g) ? 12.0 * 8.0 * n * n : 3072.0 * n;
}

}  // namespace mor::experiments
