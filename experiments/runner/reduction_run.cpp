// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

using detail::concat;
}  // namespace

ReductionSummary::ReductionSummary(std::string method_name) : method(std::move(method_name)) {
  details.create_group(layout::kReduction);
  details.set_attribute(layout::kReduction, "method", method);
}

const Vector* ReductionSummary::spectrum(const std::string& path) const {
  for (const auto& [p, values] : spectra)
    if (p == path) return &values;
  return nullptr;
}

void write_reduction(io::RecordSink& out, const ReductionSummary& s) {
  const std::string& grp = layout::kReduction;
  io::write_record(out, s.details);
  out.create_group(grp);
  out.set_attribute(grp, "method", s.method);
  out.set_attribute(grp, "r", static_cast<std::int64_t>(s.r));
  if (s.spectral_abscissa) out.set_attribute(grp, "spectral_abscissa", *s.spectral_abscissa);
  if (s.error_bound) {
    out.set_attribute(grp, "error_bound", *s.error_bound);
    out.set_attribute(grp, "bound_is_complete", static_cast<std::int64_t>(s.bound_is_complete));
  }
  for (const MethodStatus& st : s.statuses) {
    const std::string prefix = st.name.empty() ? "" : st.name + "_";
    out.set_attribute(grp, prefix + "status", st.status);
    if (st.message) out.set_attribute(grp, prefix + "message", *st.message);
  }
  for (const auto& [path, values] : s.spectra) out.write_vector(path, values);
  for (const auto& [stage, seconds] : s.stages) out.set_attribute(grp, stage, seconds);
  out.set_attribute(grp, "seconds", s.seconds);
}

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

double log_correlation(const std::vector<GreedyStep>& steps) {
  std::vector<std::pair<double, double>> xy;
  for (const GreedyStep& s : steps)
    if (std::isfinite(s.indicator) && std::isfinite(s.true_error) && s.indicator > 0 &&
        s.true_error > 0)
      xy.emplace_back(std::log10(s.indicator), std::log10(s.true_error));
  if (xy.size() < 3) return std::numeric_limits<double>::quiet_NaN();
  double mx = 0, my = 0;
  for (auto [x, y] : xy)
    mx += x / static_cast<double>(xy.size()), my += y / static_cast<double>(xy.size());
  double sxy = 0, sxx = 0, syy = 0;
  for (auto [x, y] : xy) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
    syy += (y - my) * (y - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : std::numeric_limits<double>::quiet_NaN();
}

void record_greedy(io::RecordSink& out, const GreedyRun& g, const std::string& description) {
  const std::string& grp = layout::kReductionGreedy;
  out.create_group(grp);
  out.set_attribute(grp, "description", description);
  const auto n = static_cast<Index>(g.steps.size());
  Vector it(n), pt(n), ind(n), err(n), wide(n);
  for (Index i = 0; i < n; ++i) {
    const GreedyStep& s = g.steps[static_cast<std::size_t>(i)];
    it[i] = static_cast<double>(s.iteration);
    pt[i] = static_cast<double>(s.point);
    ind[i] = s.indicator;
    err[i] = s.true_error;
    wide[i] = s.enriched_error;
  }
  out.write_vector(layout::child(grp, "iteration"), it);
  out.write_vector(layout::child(grp, "point"), pt);
  out.write_vector(layout::child(grp, "indicator"), ind);
  out.write_vector(layout::child(grp, "true_error"), err);
  if (g.enriched) out.write_vector(layout::child(grp, "enriched_error"), wide);
  out.set_attribute(layout::kReduction, "greedy_selected", static_cast<std::int64_t>(n));
  out.set_attribute(layout::kReduction, "greedy_stop", g.stop);
  out.set_attribute(layout::kReduction, "greedy_indicator_error_correlation", g.correlation);
}

void record_affine_terms(io::RecordSink& out, const std::string& role,
                         const AffineOperator<Matrix>& op, const ParameterDomain& domain) {
  for (std::size_t i = 0; i < op.terms.size(); ++i) {
    const std::string path = detail::concat(layout::kReductionAffine, "/", role, "_", i);
    out.write_matrix(path, op.terms[i].value);
    out.set_attribute(path, "scale", op.terms[i].theta.scale);
    out.set_attribute(path, "factors", domain.factor_names(op.terms[i].theta.factors));
  }
}

}  // namespace mor::experiments
