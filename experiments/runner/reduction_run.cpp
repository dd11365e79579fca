// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/reduction_run.hpp"
#include "experiments/runner/results_layout.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "reduction/system_norms.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

using detail::concat;
}  // namespace

void record_reduced_first_order(io::ResultsWriter& out, const Matrix& E, const Matrix& A,
                                const Matrix& B, const Matrix& C, const Matrix& D) {
  for (const auto& [name, X] :
       {std::pair<const char*, const Matrix*>{"E", &E}, {"A", &A}, {"B", &B}, {"C", &C}, {"D", &D}})
    out.write_matrix(layout::child(layout::kReductionReduced, name), *X);
}

void record_bases(io::ResultsWriter& out, bool store, const Matrix& V, const Matrix& W) {
  if (!store) return;
  out.write_matrix(layout::kReductionV, V);
  out.write_matrix(layout::kReductionW, W);
}

void record_gramians(io::ResultsWriter& out, const GramianDiagnostics& g) {
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

namespace {

/// Frequencies of the least damped poles of the reduced model (up to kHints, Im > 0): peaks of
/// the error narrower than the sweep's grid sit near them.
Vector pole_hints(const DenseLtiOperator& red) {
  constexpr std::size_t kHints = 12;
  std::vector<std::pair<double, double>> poles;  // (damping ratio, frequency)
  for (const Complex& l : red.poles())
    if (l.imag() > 0.0) poles.emplace_back(-l.real() / std::abs(l), l.imag());
  std::sort(poles.begin(), poles.end());
  poles.resize(std::min(poles.size(), kHints));
  Vector hints(static_cast<Index>(poles.size()));
  for (std::size_t i = 0; i < poles.size(); ++i) hints(static_cast<Index>(i)) = poles[i].second;
  return hints;
}

}  // namespace

AnalysisOutcome analyse_and_record(const AnalysisSpec& a, const NormOptions& norms,
                                   LtiOperator& full, ReducedModel& reduced,
                                   io::ResultsWriter& out) {
  AnalysisOutcome outcome;
  const std::string& grp = layout::kAnalysis;
  out.create_group(grp);
  DenseLtiOperator& red = *reduced.first_order;
  const bool dense = full.n() <= norms.dense_limit;
  // The level set eigen-solves a Hamiltonian of twice the error system's order per iteration:
  // worth it only while that is cheap.
  constexpr Index kLevelSetLimit = 400;
  const bool level_set = full.n() <= kLevelSetLimit;
  const bool stable = reduced.spectral_abscissa < 0.0;
  out.set_attribute(grp, "reduced_stable", static_cast<std::int64_t>(stable));

  if (a.bode_points >= 2) {
    const auto t0 = Clock::now();
    const Vector omega = log_frequencies(a.omega_min, a.omega_max, a.bode_points);
    Vector s_full(omega.size()), s_red(omega.size()), s_err(omega.size());
    for (Index k = 0; k < omega.size(); ++k) {
      const ComplexMatrix g = transfer_function(full, Complex(0.0, omega(k)));
      const ComplexMatrix gr = transfer_function(red, Complex(0.0, omega(k)));
      auto smax = [](const ComplexMatrix& X) {
        return Eigen::JacobiSVD<ComplexMatrix>(X).singularValues()(0);
      };
      s_full(k) = smax(g);
      s_red(k) = smax(gr);
      s_err(k) = smax(g - gr);
    }
    out.write_vector(layout::kAnalysisOmega, omega);
    out.write_vector(layout::kAnalysisSigmaFull, s_full);
    out.write_vector(layout::kAnalysisSigmaReduced, s_red);
    out.write_vector(layout::kAnalysisSigmaError, s_err);
    out.set_attribute(grp, "bode_s", seconds_since(t0));
  }

  ErrorLtiOperator err(full, red);
  if (a.h2) {
    const auto t0 = Clock::now();
    if (!stable) {
      out.set_attribute(grp, "h2_status",
                        std::string("not computed: the reduced model is unstable"));
    } else {
      try {
        double h2_full, h2_err;
        if (dense) {
          h2_full = h2_norm_dense(full);
          h2_err = h2_norm_dense(err);
        } else {
          h2_full = h2_norm_low_rank(full, norms.adi).norm;
          h2_err = h2_norm_low_rank(err, norms.adi).norm;
        }
        outcome.h2_error_relative = h2_err / h2_full;
        out.set_attribute(grp, "h2_full", h2_full);
        out.set_attribute(grp, "h2_error", h2_err);
        out.set_attribute(grp, "h2_error_relative", outcome.h2_error_relative);
        out.set_attribute(grp, "h2_method", std::string(dense ? "dense" : "low_rank"));
        out.set_attribute(grp, "h2_status", std::string("ok"));
      } catch (const NumericalError& e) {
        out.set_attribute(grp, "h2_status", concat("not computed: ", e.what()));
      }
    }
    out.set_attribute(grp, "h2_s", seconds_since(t0));
  }
  if (a.hinf) {
    const auto t0 = Clock::now();
    if (!stable) {
      out.set_attribute(grp, "hinf_status",
                        std::string("not computed: the reduced model is unstable"));
    } else {
      const HinfResult h =
          level_set ? hinf_norm_level_set(dense_E(err), dense_A(err), err.B(), err.C(), err.D_ff())
                    : hinf_norm_sweep(err, a.omega_min, a.omega_max, pole_hints(red), a.hinf_grid);
      outcome.hinf_error = h.norm;
      out.set_attribute(grp, "hinf_error", h.norm);
      out.set_attribute(grp, "hinf_omega", h.omega);
      out.set_attribute(grp, "hinf_method", h.method);
      out.set_attribute(grp, "hinf_relative_accuracy", h.relative_accuracy);
      out.set_attribute(grp, "hinf_evaluations", static_cast<std::int64_t>(h.evaluations));
      out.set_attribute(grp, "hinf_status",
                        std::string(level_set ? "ok"
                                              : "ok (sweep: a lower bound of the supremum "
                                                "over [omega_min, omega_max])"));
    }
    out.set_attribute(grp, "hinf_s", seconds_since(t0));
  }
  if (a.hinf_full) {
    const auto t0 = Clock::now();
    try {
      const HinfResult h =
          level_set
              ? hinf_norm_level_set(dense_E(full), dense_A(full), full.B(), full.C(), full.D_ff())
              : hinf_norm_sweep(full, a.omega_min, a.omega_max, pole_hints(red), a.hinf_grid);
      out.set_attribute(grp, "hinf_full", h.norm);
      out.set_attribute(grp, "hinf_full_omega", h.omega);
      out.set_attribute(grp, "hinf_full_method", h.method);
      out.set_attribute(grp, "hinf_full_status",
                        std::string(level_set ? "ok"
                                              : "ok (sweep: a lower bound of the supremum "
                                                "over 0 and [omega_min, omega_max])"));
    } catch (const NumericalError& e) {
      out.set_attribute(grp, "hinf_full_status", concat("not computed: ", e.what()));
    }
    out.set_attribute(grp, "hinf_full_s", seconds_since(t0));
  }
  return outcome;
}

}  // namespace mor::experiments
