// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "reduction/frequency_analysis.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

using detail::concat;
}  // namespace

void record_reduced_first_order(io::RecordSink& out, const Matrix& E, const Matrix& A,
                                const Matrix& B, const Matrix& C, const Matrix& D) {
  for (const auto& [name, X] :
       {std::pair<const char*, const Matrix*>{"E", &E}, {"A", &A}, {"B", &B}, {"C", &C}, {"D", &D}})
    out.write_matrix(layout::child(layout::kReductionReduced, name), *X);
}

void record_bases(io::RecordSink& out, bool store, const Matrix& V, const Matrix& W) {
  if (!store) return;
  out.write_matrix(layout::kReductionV, V);
  out.write_matrix(layout::kReductionW, W);
}

void record_gramians(io::RecordSink& out, const GramianDiagnostics& g) {
  const std::string& grp = layout::kReduction;
  out.set_attribute(grp, "gramian_method", std::string(to_string(g.method)));
  out.set_attribute(grp, "rank_c", static_cast<std::int64_t>(g.rank_c));
  out.set_attribute(grp, "rank_o", static_cast<std::int64_t>(g.rank_o));
  out.set_attribute(grp, "residual_c", g.residual_c);
  out.set_attribute(grp, "residual_o", g.residual_o);
  out.set_attribute(grp, "gramians_converged", static_cast<std::int64_t>(g.converged));
  out.set_attribute(grp, "gramians_s", g.seconds);
  if (g.method == GramianMethod::low_rank)
    out.set_attribute(grp, "low_rank_solver", std::string(to_string(g.solver)));
  if (g.method == GramianMethod::dense) {
    out.set_attribute(grp, "dense_solver", std::string(to_string(g.dense_solver)));
    out.set_attribute(grp, "sign_steps", static_cast<std::int64_t>(g.sign_steps));
  }
  const std::pair<const char*, const std::optional<AdiResult>*> runs[] = {
      {"controllability", &g.low_rank_c}, {"observability", &g.low_rank_o}};
  for (const auto& [name, run] : runs) {
    if (!run->has_value()) continue;
    const AdiResult& a = **run;
    const std::string path = layout::child(grp, std::string(to_string(g.solver)) + "_" + name);
    out.create_group(path);
    out.set_attribute(path, "status", std::string(to_string(a.status)));
    out.set_attribute(path, "message", a.message);
    out.set_attribute(path, "iterations", static_cast<std::int64_t>(a.iterations));
    out.set_attribute(path, "seconds", a.seconds);
    out.set_attribute(path, "shift_seconds", a.shift_seconds);
    out.write_vector(layout::child(path, "residuals"),
                     Eigen::Map<const Vector>(a.residual_history.data(),
                                              static_cast<Index>(a.residual_history.size())));
    Matrix shifts(static_cast<Index>(a.shifts.size()), 2);
    for (std::size_t i = 0; i < a.shifts.size(); ++i)
      shifts.row(static_cast<Index>(i)) << a.shifts[i].real(), a.shifts[i].imag();
    if (shifts.rows() > 0) out.write_matrix(layout::child(path, "shifts"), shifts);
  }
}

AnalysisOutcome analyse_and_record(const AnalysisSpec& a, const NormOptions& norms,
                                   LtiOperator& full, ReducedModel& reduced, io::RecordSink& out) {
  AnalysisOutcome outcome;
  const std::string& grp = layout::kAnalysis;
  out.create_group(grp);
  const bool stable = reduced.spectral_abscissa < 0.0;
  out.set_attribute(grp, "reduced_stable", static_cast<std::int64_t>(stable));

  FrequencyAnalysisOptions o;
  o.bode_points = a.bode_points;
  o.omega_min = a.omega_min;
  o.omega_max = a.omega_max;
  o.h2 = a.h2;
  o.hinf = a.hinf;
  o.hinf_full = a.hinf_full;
  o.dense_limit = norms.dense_limit;
  o.adi = norms.adi;
  o.error_bound = reduced.error_bound;
  o.h2_full = reduced.h2_full;
  o.reference = reduced.reference.get();
  o.reference_bound = reduced.reference_bound;
  o.CZc = reduced.CZc;
  o.adi_shifts = reduced.adi_shifts;
  o.adi_residual = reduced.adi_residual;
  const FrequencyAnalysis f = analyse_frequency_response(full, *reduced.first_order, o);

  if (a.bode_points >= 2) {
    out.write_vector(layout::kAnalysisOmega, f.omega);
    out.write_vector(layout::kAnalysisSigmaFull, f.sigma_full);
    out.write_vector(layout::kAnalysisSigmaReduced, f.sigma_reduced);
    out.write_vector(layout::kAnalysisSigmaError, f.sigma_error);
    out.write_vector(layout::kAnalysisOmegaReduced, f.omega_reduced);
    out.write_vector(layout::kAnalysisSigmaReducedDense, f.sigma_reduced_dense);
    out.set_attribute(grp, "bode_method", f.bode_method);
    out.set_attribute(grp, "bode_solves", static_cast<std::int64_t>(f.bode_solves));
    out.set_attribute(grp, "bode_s", f.bode_seconds);
  }
  if (a.h2) {
    if (f.h2_error.computed) {
      outcome.h2_error_relative = f.h2_error.value / f.h2_full.value;
      out.set_attribute(grp, "h2_full", f.h2_full.value);
      out.set_attribute(grp, "h2_error", f.h2_error.value);
      out.set_attribute(grp, "h2_error_relative", outcome.h2_error_relative);
      out.set_attribute(grp, "h2_method", f.h2_error.method);
      out.set_attribute(grp, "h2_full_method", f.h2_full.method);
    }
    out.set_attribute(grp, "h2_status", f.h2_error.status);
    out.set_attribute(grp, "h2_s", f.h2_error.seconds);
  }
  // One norm's attributes: prefix (hinf_error's are hinf_*, for history) and the report.
  auto record_hinf = [&](const std::string& prefix, const std::string& value_key,
                         const NormReport& h) {
    if (h.computed) {
      out.set_attribute(grp, value_key, h.value);
      out.set_attribute(grp, prefix + "_omega", h.omega);
      out.set_attribute(grp, prefix + "_method", h.method);
      out.set_attribute(grp, prefix + "_relative_accuracy", h.relative_accuracy);
      out.set_attribute(grp, prefix + "_evaluation_error", h.evaluation_error);
      if (h.data_sensitivity >= 0.0)
        out.set_attribute(grp, prefix + "_data_sensitivity", h.data_sensitivity);
      out.set_attribute(grp, prefix + "_evaluations", static_cast<std::int64_t>(h.evaluations));
    }
    out.set_attribute(grp, prefix + "_status", h.status);
    out.set_attribute(grp, prefix + "_s", h.seconds);
  };
  if (a.hinf) {
    record_hinf("hinf", "hinf_error", f.hinf_error);
    if (f.hinf_error.computed) outcome.hinf_error = f.hinf_error.value;
  }
  if (a.hinf_full) record_hinf("hinf_full", "hinf_full", f.hinf_full);
  return outcome;
}

}  // namespace mor::experiments
