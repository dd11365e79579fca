// SPDX-License-Identifier: GPL-3.0-or-later
// Frequency-domain comparison of full and reduced models: curves on both cores, norms by the
// level set (small), the subspace method (large) or LR-ADI (H2), each checked by an accurate
// evaluation and reported with its estimated accuracy and a status in words.
#include "reduction/frequency_analysis.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <thread>
#include <utility>

#include "src/core/errors.hpp"
#include "src/core/timing.hpp"
#include "src/io/contained.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

/// Up to this many states a dense norm takes well under a second and runs in this process; above,
/// in a child process that SIGINT / SIGTERM stop within 0.1 s (io::run_stoppable), since
/// LAPACK's kernels poll no stop flag (the H2 norm at n = 1480 took 2 to 4 s to answer SIGINT).
/// The figures come back exactly: the results do not depend on where they were computed.
constexpr Index kDenseInProcess = 200;

double h2_norm_dense_stoppable(const LtiOperator& sys) {
  if (sys.n() <= kDenseInProcess) return h2_norm_dense(sys);
  return io::run_stoppable([&] { return std::vector{h2_norm_dense(sys)}; })[0];
}

HinfResult level_set_stoppable(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                               const Matrix& D) {
  if (A.rows() <= kDenseInProcess) return hinf_norm_level_set(E, A, B, C, D);
  HinfResult h;
  const std::vector<double> v = io::run_stoppable([&] {
    h = hinf_norm_level_set(E, A, B, C, D);
    return std::vector{h.norm,
                       h.omega,
                       h.relative_accuracy,
                       static_cast<double>(h.evaluations),
                       h.converged ? 1.0 : 0.0,
                       static_cast<double>(h.subspace_dimension),
                       h.evaluation_error};
  });
  h.norm = v.at(0);
  h.omega = v.at(1);
  h.relative_accuracy = v.at(2);
  h.evaluations = static_cast<Index>(v.at(3));
  h.converged = v.at(4) != 0.0;
  h.subspace_dimension = static_cast<Index>(v.at(5));
  h.evaluation_error = v.at(6);
  h.method = "level-set";
  return h;
}

using detail::concat;

/// Frequencies of the least damped poles of a dense model (Im > 0), least damped first.
std::vector<std::pair<double, double>> damped_poles(const DenseLtiOperator& sys, std::size_t k) {
  std::vector<std::pair<double, double>> poles;  // (damping ratio, frequency)
  for (const Complex& l : sys.poles())
    if (l.imag() > 0.0) poles.emplace_back(-l.real() / std::abs(l), l.imag());
  std::sort(poles.begin(), poles.end());
  if (poles.size() > k) poles.resize(k);
  return poles;
}

/// Indices of the local maxima of v (ends included), largest first, at most k.
std::vector<Index> local_maxima(const Vector& v, std::size_t k) {
  std::vector<Index> peaks;
  const Index n = v.size();
  for (Index i = 0; i < n; ++i) {
    const bool left = i == 0 || v[i] > v[i - 1];
    const bool right = i == n - 1 || v[i] >= v[i + 1];
    if (left && right) peaks.push_back(i);
  }
  std::stable_sort(peaks.begin(), peaks.end(), [&](Index a, Index b) { return v[a] > v[b]; });
  if (peaks.size() > k) peaks.resize(k);
  return peaks;
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

/// The largest accurately evaluated sigma_max(G - G_r) near w0: a grid of 2 half + 1 points on
/// w0 (1 +- width), then the best point's neighbours bisected a few times. For small dense
/// systems only (each point refactorizes).
ResponseValue accurate_local_peak(LtiOperator& sys, LtiOperator* reduced, double w0, double width,
                                  Index half = 10) {
  ResponseValue best = accurate_response(sys, w0, reduced);
  double lo = std::max(0.0, w0 * (1.0 - width)), hi = w0 * (1.0 + width);
  for (int round = 0; round < 4; ++round) {
    const double step = (hi - lo) / static_cast<double>(2 * half);
    double centre = best.omega;
    for (Index k = 0; k <= 2 * half; ++k) {
      const double w = lo + step * static_cast<double>(k);
      if (w == centre) continue;
      ResponseValue v = accurate_response(sys, w, reduced);
      if (v.sigma > best.sigma) best = std::move(v);
    }
    centre = best.omega;
    lo = std::max(0.0, centre - step);
    hi = centre + step;
  }
  return best;
}

/// The status of an Hinf error in words (see analyse_frequency_response).
std::string hinf_status(const NormReport& h, double bound, bool converged, bool is_error) {
  std::vector<std::string> notes;
  if (!converged)
    notes.push_back(
        "the subspace iteration did not settle (its interpolating model still "
        "overestimates the peak by a relative " +
        sci(h.relative_accuracy) + "): the value is the largest of " +
        std::to_string(h.evaluations) +
        " evaluations on the full model, a lower bound of unknown accuracy");
  if (h.evaluation_error >= 0.5 * h.value)
    notes.push_back("the value is not resolved: the estimated rounding error of its evaluation (" +
                    sci(h.evaluation_error) + ") exceeds half of it");
  if (is_error && bound >= 0.0) {
    if (h.value - h.evaluation_error > bound * (1.0 + 1e-8))
      notes.push_back("the computed error exceeds the a priori bound " + sci(bound) +
                      " by a factor " + sci(h.value / bound));
    if (h.data_sensitivity > bound)
      notes.push_back("the a priori bound " + sci(bound) +
                      " lies below the accuracy achievable in double precision for this reduced "
                      "model: rounding its matrices alone may change G_r by " +
                      sci(h.data_sensitivity) + " at w = " + sci(h.omega));
  }
  if (notes.empty()) return "ok";
  std::string s = "warning: ";
  for (std::size_t i = 0; i < notes.size(); ++i) s += (i ? "; " : "") + notes[i];
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::vector<ComplexMatrix> transfer_functions(LtiOperator& sys, const Vector& omega, int threads) {
  for (Index k = 0; k < omega.size(); ++k)
    require(omega[k] >= 0.0 && std::isfinite(omega[k]), "transfer functions: frequency ", k, " is ",
            omega[k], ", expected finite and >= 0");
  std::vector<ComplexMatrix> G(static_cast<std::size_t>(omega.size()));
  std::unique_ptr<LtiOperator> copy;
  if (threads > 1 && omega.size() > 1) copy = sys.solver_copy();
  for_each_point(sys, copy.get(), omega.size(), [&](LtiOperator& op, Index k) {
    G[static_cast<std::size_t>(k)] = transfer_function(op, Complex(0.0, omega[k]));
  });
  return G;
}

SampledResponse adaptive_response(LtiOperator& sys, double w_min, double w_max, Index budget,
                                  const Vector& seeds, int threads) {
  require(budget >= 5, "adaptive response: budget ", budget, ", expected at least 5");
  const Index initial = std::max<Index>(5, budget / 3);
  std::vector<double> w;
  {
    const Vector grid = log_frequencies(w_min, w_max, initial);  // checks the range
    w.assign(grid.data(), grid.data() + grid.size());
    for (Index k = 0; k < seeds.size(); ++k) {
      const double s = std::abs(seeds[k]);
      if (s > w_min && s < w_max && static_cast<Index>(w.size()) < budget) w.push_back(s);
    }
  }
  std::vector<std::pair<double, ComplexMatrix>> points;
  auto evaluate = [&](const std::vector<double>& batch) {
    const Vector omega = Eigen::Map<const Vector>(batch.data(), static_cast<Index>(batch.size()));
    std::vector<ComplexMatrix> G = transfer_functions(sys, omega, threads);
    for (std::size_t i = 0; i < batch.size(); ++i) points.emplace_back(batch[i], std::move(G[i]));
    std::sort(points.begin(), points.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  };
  evaluate(w);
  const double floor = std::numeric_limits<double>::min();
  while (static_cast<Index>(points.size()) < budget) {
    const std::size_t n = points.size();
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = std::log(points[i].first);
      y[i] = std::log(std::max(lapack::spectral_norm(points[i].second), floor));
    }
    // Score of interval i (between points i and i + 1): its jump in log sigma plus the turn of
    // the log-log slope at either end, weighted by the interval's width.
    std::vector<std::pair<double, std::size_t>> score;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const double h = x[i + 1] - x[i];
      if (!(h > 1e-9)) continue;
      const double slope = (y[i + 1] - y[i]) / h;
      double turn = 0.0;
      if (i > 0) turn = std::max(turn, std::abs(slope - (y[i] - y[i - 1]) / (x[i] - x[i - 1])));
      if (i + 2 < n)
        turn = std::max(turn, std::abs((y[i + 2] - y[i + 1]) / (x[i + 2] - x[i + 1]) - slope));
      score.emplace_back(std::abs(y[i + 1] - y[i]) + turn * h, i);
    }
    std::sort(score.begin(), score.end(), std::greater<>());
    const std::size_t batch_size =
        std::min<std::size_t>(static_cast<std::size_t>(budget) - n,
                              std::max<std::size_t>(2, static_cast<std::size_t>(budget / 6)));
    std::vector<double> batch;
    for (std::size_t j = 0; j < score.size() && batch.size() < batch_size; ++j) {
      if (score[j].first < 0.02) break;
      const std::size_t i = score[j].second;
      batch.push_back(std::exp(0.5 * (x[i] + x[i + 1])));
    }
    if (batch.empty()) break;
    evaluate(batch);
  }
  SampledResponse out;
  const Index n = static_cast<Index>(points.size());
  out.omega.resize(n);
  out.sigma.resize(n);
  for (Index k = 0; k < n; ++k) {
    out.omega[k] = points[static_cast<std::size_t>(k)].first;
    out.sigma[k] = lapack::spectral_norm(points[static_cast<std::size_t>(k)].second);
    out.G.push_back(std::move(points[static_cast<std::size_t>(k)].second));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

namespace {

/// ||G||_Hinf or ||G - G_r||_Hinf with its accuracy (hinf_error when reduced is set).
NormReport hinf_report(LtiOperator& full, DenseLtiOperator* reduced, const Vector& starts,
                       const FrequencyAnalysisOptions& o) {
  const auto t0 = Clock::now();
  NormReport rep;
  bool converged = true;
  const bool small = full.n() <= o.level_set_limit;
  if (small) {
    // Level set on the dense (error) system, then the accurate evaluation at its peak.
    std::unique_ptr<ErrorLtiOperator> err;
    LtiOperator* sys = &full;
    if (reduced != nullptr) {
      err = std::make_unique<ErrorLtiOperator>(full, *reduced);
      sys = err.get();
    }
    const HinfResult h =
        level_set_stoppable(dense_E(*sys), dense_A(*sys), sys->B(), sys->C(), sys->D_ff());
    rep.method = "level-set";
    rep.evaluations = h.evaluations;
    rep.value = h.norm;
    rep.omega = h.omega;
    rep.relative_accuracy = h.relative_accuracy;
    if (std::isfinite(h.omega)) {
      // The operator may solve in working precision only (second-order structure): a dense copy
      // of the full model computes residuals in extended precision.
      DenseLtiOperator dense_full(dense_E(full), dense_A(full), full.B(), full.C(), full.D_ff());
      ResponseValue check = accurate_response(dense_full, h.omega, reduced);
      if (std::abs(check.sigma - h.norm) > std::max(check.error_estimate, 1e-8 * h.norm)) {
        // The level set's value was rounding noise of the Hessenberg evaluation near a lightly
        // damped pole: search the accurate maximum near it and near the least damped poles of
        // both models, where such noise and the true peaks of the error sit.
        std::vector<std::pair<double, double>> candidates{{1e-4, h.omega}};
        for (auto pr : damped_poles(dense_full, 4)) candidates.push_back(pr);
        if (reduced != nullptr)
          for (auto pr : damped_poles(*reduced, 4)) candidates.push_back(pr);
        for (const auto& [zeta, w] : candidates) {
          ResponseValue v =
              accurate_local_peak(dense_full, reduced, w, std::clamp(20.0 * zeta, 1e-7, 1e-2));
          if (v.sigma > check.sigma) check = std::move(v);
        }
        rep.method = "level-set, accurate local search";
      }
      rep.value = check.sigma;
      rep.omega = check.omega;
      rep.evaluation_error = check.error_estimate;
      rep.relative_accuracy =
          std::max(h.relative_accuracy, check.sigma > 0 ? check.error_estimate / check.sigma : 0.0);
    }
  } else {
    HinfResult h;
    Index earlier = 0;
    if (reduced != nullptr && o.reference != nullptr && o.reference_bound >= 0.0) {
      // The reference model locates the peak without large solves; its climb on the full
      // system is kept when the full system agrees with the bound, else the subspace method.
      h = hinf_error_with_reference(full, *reduced, *o.reference, o.reference_bound);
      earlier = h.evaluations;
    }
    if (h.method == "reference model" && h.converged) {
      rep.method = concat("reference model (BT of order ", h.subspace_dimension, ", bound ",
                          sci(o.reference_bound), ") and Brent's climb");
    } else {
      h = hinf_norm_subspace(full, starts, reduced);
      h.evaluations += earlier;
      rep.method = earlier > 0 ? "subspace (the reference model's bound did not hold)" : "subspace";
    }
    rep.evaluations = h.evaluations;
    rep.value = h.norm;
    rep.omega = h.omega;
    rep.relative_accuracy = h.relative_accuracy;
    rep.evaluation_error = h.evaluation_error;
    converged = h.converged;
  }
  if (reduced != nullptr && std::isfinite(rep.omega))
    rep.data_sensitivity = data_sensitivity(*reduced, rep.omega);
  rep.computed = true;
  rep.status = hinf_status(rep, o.error_bound, converged, reduced != nullptr);
  rep.seconds = seconds_since(t0);
  return rep;
}

}  // namespace

namespace {

bool is_stable(const DenseLtiOperator& reduced) {
  for (const Complex& l : reduced.poles())
    if (!(l.real() < 0.0)) return false;
  return true;
}

/// Start frequencies of the subspace method: the curve's highest local maxima, the reduced
/// model's peak (full model) and the least damped reduced poles (the dominant poles' proxies).
Vector start_frequencies(DenseLtiOperator& reduced, const Vector& omega, const Vector& curve,
                         bool with_reduced_peak, const FrequencyAnalysisOptions& o) {
  const bool stable = is_stable(reduced);
  const auto poles = damped_poles(reduced, 6);
  std::vector<double> s;
  if (curve.size() > 0)
    for (const Index i : local_maxima(curve, 3)) s.push_back(omega[i]);
  if (with_reduced_peak && stable) {
    try {
      const HinfResult r = hinf_norm_level_set(reduced.E(), reduced.A(), reduced.B(), reduced.C(),
                                               reduced.D_ff(), 1e-8);
      if (std::isfinite(r.omega)) s.push_back(r.omega);
    } catch (const NumericalError&) {
    }
  }
  for (std::size_t i = 0; i < poles.size() && i < 4; ++i) s.push_back(poles[i].second);
  if (curve.size() == 0) {
    // No curve to start from: the static gain and a coarse logarithmic grid.
    s.push_back(0.0);
    const Vector g = log_frequencies(o.omega_min, o.omega_max, 4);
    s.insert(s.end(), g.data(), g.data() + g.size());
  }
  return Vector(Eigen::Map<const Vector>(s.data(), static_cast<Index>(s.size())));
}

}  // namespace

BodeCurves bode_curves(LtiOperator& full, DenseLtiOperator& reduced,
                       const FrequencyAnalysisOptions& o) {
  BodeCurves out;
  if (o.bode_points < 2) return out;
  // The reduced model's curve on the fixed grid; the full model's on the same grid (small) or
  // at adaptive frequencies seeded with the reduced model's least damped poles (large).
  const bool large = full.n() > o.level_set_limit;
  const auto t0 = Clock::now();
  const Vector grid = log_frequencies(o.omega_min, o.omega_max, o.bode_points);
  out.omega_reduced = grid;
  out.sigma_reduced_dense.resize(grid.size());
  for (Index k = 0; k < grid.size(); ++k)
    out.sigma_reduced_dense[k] =
        lapack::spectral_norm(transfer_function(reduced, Complex(0.0, grid[k])));
  std::vector<ComplexMatrix> G;
  if (large) {
    const auto poles = damped_poles(reduced, 6);
    Vector seeds(static_cast<Index>(poles.size()));
    for (std::size_t i = 0; i < poles.size(); ++i) seeds[static_cast<Index>(i)] = poles[i].second;
    SampledResponse s =
        adaptive_response(full, o.omega_min, o.omega_max,
                          std::min(o.adaptive_points, o.bode_points), seeds, o.threads);
    out.omega = s.omega;
    G = std::move(s.G);
    out.method = "adaptive";
  } else {
    out.omega = grid;
    G = transfer_functions(full, grid, o.threads);
    out.method = "fixed";
  }
  out.solves = out.omega.size();
  out.sigma_full.resize(out.omega.size());
  out.sigma_reduced.resize(out.omega.size());
  out.sigma_error.resize(out.omega.size());
  for (Index k = 0; k < out.omega.size(); ++k) {
    const ComplexMatrix gr = transfer_function(reduced, Complex(0.0, out.omega[k]));
    const ComplexMatrix& g = G[static_cast<std::size_t>(k)];
    out.sigma_full[k] = lapack::spectral_norm(g);
    out.sigma_reduced[k] = lapack::spectral_norm(gr);
    out.sigma_error[k] = lapack::spectral_norm(g - gr);
  }
  out.seconds = seconds_since(t0);
  return out;
}

H2Reports h2_reports(LtiOperator& full, DenseLtiOperator& reduced,
                     const FrequencyAnalysisOptions& o) {
  H2Reports out;
  const auto t0 = Clock::now();
  if (!is_stable(reduced)) {
    out.error.status = "not computed: the reduced model is unstable";
  } else {
    try {
      ErrorLtiOperator err(full, reduced);
      const bool dense = full.n() <= o.dense_limit;
      const bool known = !dense && o.h2_full > 0.0;
      out.full.value = dense   ? h2_norm_dense_stoppable(full)
                       : known ? o.h2_full
                               : h2_norm_low_rank(full, o.adi).norm;
      const bool from_factor = !dense && o.CZc.size() != 0 && !o.adi_shifts.empty();
      double residual = -1.0;
      if (from_factor) {
        const ErrorH2 e =
            h2_error_from_adi_factor(o.CZc, o.adi_shifts, o.adi_residual, full.B(), reduced);
        out.error.value = e.norm;
        residual = e.residual;
      } else {
        out.error.value = dense ? h2_norm_dense_stoppable(err) : h2_norm_low_rank(err, o.adi).norm;
      }
      out.full.computed = out.error.computed = true;
      out.error.method = dense         ? "dense"
                         : from_factor ? "reduction's ADI factor, same shifts on G_r"
                                       : "low_rank";
      out.full.method = dense ? "dense" : known ? "reduction's Gramian factor" : "low_rank";
      out.error.status = out.full.status = "ok";
      if (residual > 10.0 * o.adi.tolerance)
        out.error.status = concat("warning: the error system's ADI residual ", sci(residual),
                                  " exceeds 10 times the tolerance ", sci(o.adi.tolerance));
    } catch (const NumericalError& e) {
      out.error.status = concat("not computed: ", e.what());
    }
  }
  out.error.seconds = seconds_since(t0);
  return out;
}

NormReport hinf_error_report(LtiOperator& full, DenseLtiOperator& reduced, const BodeCurves& curves,
                             const FrequencyAnalysisOptions& o) {
  NormReport rep;
  if (!is_stable(reduced)) {
    rep.status = "not computed: the reduced model is unstable";
    return rep;
  }
  try {
    return hinf_report(full, &reduced,
                       start_frequencies(reduced, curves.omega, curves.sigma_error, false, o), o);
  } catch (const NumericalError& e) {
    rep.status = concat("not computed: ", e.what());
  }
  return rep;
}

NormReport hinf_full_report(LtiOperator& full, DenseLtiOperator& reduced, const BodeCurves& curves,
                            const FrequencyAnalysisOptions& o) {
  NormReport rep;
  try {
    return hinf_report(full, nullptr,
                       start_frequencies(reduced, curves.omega, curves.sigma_full, true, o), o);
  } catch (const NumericalError& e) {
    rep.status = concat("not computed: ", e.what());
  }
  return rep;
}

FrequencyAnalysis analyse_frequency_response(LtiOperator& full, DenseLtiOperator& reduced,
                                             const FrequencyAnalysisOptions& o) {
  FrequencyAnalysis out;
  out.curves = bode_curves(full, reduced, o);
  if (o.h2) {
    H2Reports h2 = h2_reports(full, reduced, o);
    out.h2_full = std::move(h2.full);
    out.h2_error = std::move(h2.error);
  }
  if (o.hinf) out.hinf_error = hinf_error_report(full, reduced, out.curves, o);
  if (o.hinf_full) out.hinf_full = hinf_full_report(full, reduced, out.curves, o);
  return out;
}

}  // namespace mor
