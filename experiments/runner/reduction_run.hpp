// SPDX-License-Identifier: GPL-3.0-or-later
// The reduction half of an experiment run: the linear reduced model and its records in the
// results file (the analysis of it is the registered measures', experiments/runner/measure.hpp).
// Used by run_experiment (experiment.cpp); the layout is documented in README.md.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/balanced_truncation.hpp"
#include "src/io/results.hpp"

namespace mor::experiments {

/// A reduced model ready to simulate (second-order form, see src/systems/dense_model.hpp) and
/// to analyse (first-order dense operator of the same transfer function).
struct ReducedModel {
  DenseSecondOrderSystem second_order;
  std::unique_ptr<DenseLtiOperator> first_order;
  Index r = 0;
  double seconds = 0;  ///< Gramians and projection
  /// The same per stage: ("gramians_s", ..), ("projection_s", ..).
  std::vector<std::pair<std::string, double>> stages;
  double spectral_abscissa = 0;  ///< max Re lambda (< 0: stable)
  /// The method's a priori bound on ||G - G_r||_Hinf (BT: 2 sum_{i>r} sigma_i); < 0: none.
  double error_bound = -1;
  /// ||G||_H2 of the full model if the reduction computed it (BT: ||C Z_c||_F); < 0: not known.
  double h2_full = -1;
  /// Reduced models of further orders from the same nested basis (pod's
  /// reduction.compare_orders), ascending in r, main's order not repeated: simulated too, for
  /// the output error against r (/error_vs_r).
  std::vector<std::pair<Index, DenseSecondOrderSystem>> others;
  /// What the analysis reuses from the reduction (BT): a more accurate model of G with its Hinf
  /// bound, and the controllability LR-ADI's C Z_c with the shifts of its steps (see
  /// FrequencyAnalysisOptions); null / empty when the method has none.
  std::unique_ptr<DenseLtiOperator> reference;
  double reference_bound = -1;
  Matrix CZc;
  std::vector<Complex> adi_shifts;
  double adi_residual = -1;
};

/// Writes the Gramian diagnostics of a balanced truncation into /reduction (method, ranks,
/// residuals, and the low-rank runs' histories and shifts).
void record_gramians(io::RecordSink& out, const GramianDiagnostics& g);

/// /reduction/reduced of a first-order reduced model E_r x' = A_r x + B_r u, y = C_r x + D_r u.
void record_reduced_first_order(io::RecordSink& out, const Matrix& E, const Matrix& A,
                                const Matrix& B, const Matrix& C, const Matrix& D);
/// /reduction/reduced of a second-order reduced model (its M, D, K, B, Cp, Cv).
template <class S>
void record_reduced_second_order(io::RecordSink& out, const S& s) {
  for (const auto& [name, X] : {std::pair<const char*, const Matrix*>{"M", &s.M},
                                {"D", &s.D},
                                {"K", &s.K},
                                {"B", &s.B},
                                {"Cp", &s.Cp},
                                {"Cv", &s.Cv}})
    out.write_matrix(layout::child(layout::kReductionReduced, name), *X);
}
/// /reduction/V and /reduction/W, if `store` (the store_bases key).
void record_bases(io::RecordSink& out, bool store, const Matrix& V, const Matrix& W);

/// How the analysis computes norms: dense up to dense_limit states, LR-ADI beyond.
struct NormOptions {
  Index dense_limit = 1500;
  AdiOptions adi;
};

}  // namespace mor::experiments
