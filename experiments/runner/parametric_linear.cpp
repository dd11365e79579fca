// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/parametric_linear.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/ordered_tasks.hpp"
#include "experiments/runner/parameters.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/frequency_analysis.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/progress.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {

using detail::concat;

ReducedModel reduced_model_at(const ParametricLtiModel& model, const Vector& mu) {
  ReducedLtiAt at = model.at(mu);
  ReducedModel out;
  out.second_order = std::move(at.second_order);
  out.first_order = std::move(at.first_order);
  out.summary.r = model.r();
  const ComplexVector poles = out.first_order->poles();
  if (poles.size() > 0) out.summary.spectral_abscissa = poles.real().maxCoeff();
  return out;
}

ExperimentConfig at_point(const ExperimentConfig& c, const Vector& mu) {
  ExperimentConfig local = c;
  local.model = c.model->at(c.parameters, mu);
  local.parameters = ParameterDomain();
  return local;
}

namespace {

/// /reduction's records of the parametric model: its training, local models, global basis and
/// reduced affine terms.
void record_parametric_linear(io::RecordSink& out, const ParametricLtiModel& p,
                              const Matrix& training_points, const Vector& local_orders,
                              const Vector& local_bounds, GlobalProjection projection) {
  out.set_attribute(layout::kReduction, "parametric", std::int64_t{1});
  out.set_attribute(layout::kReduction, "training_points",
                    static_cast<std::int64_t>(training_points.rows()));
  out.set_attribute(
      layout::kReduction, "global_projection",
      std::string(projection == GlobalProjection::galerkin ? "galerkin" : "two_sided"));
  out.set_attribute(layout::kReduction, "reduced_form",
                    std::string(p.second_order() ? "second_order" : "first_order"));
  out.write_matrix(layout::kReductionTrainingParameters, training_points);
  out.write_vector(layout::kReductionLocalOrders, local_orders);
  out.write_vector(layout::kReductionLocalErrorBounds, local_bounds);
  out.create_group(layout::kReductionAffine);
  for (const auto& [role, op] : p.terms()) record_affine_terms(out, role, op, p.domain());
  if (!p.second_order()) record_affine_terms(out, "Dff", p.feedthrough(), p.domain());
}

/// The method's local reduction at the training point mu (what the global basis needs of it).
ReducedModel local_reduction(const ExperimentConfig& c, const Vector& mu, Index i, Index k,
                             const std::atomic<bool>* stop) {
  const ReductionMethod& method = *c.reduction;
  throw_if_stop_requested("the parametric reduction", stop);
  const std::string at = c.parameters.describe(mu);
  progress_note(concat(c.name, ": local reduction ", i + 1, "/", k, " (", method.name(), " at ", at,
                       ") ..."));
  const ExperimentConfig here = at_point(c, mu);
  const std::unique_ptr<FullModel> full = here.model->build(c.solver);
  const std::unique_ptr<LtiOperator> lti = full->lti_operator();
  try {
    return method.reduce_linear_in_run(here, *full, *lti, full->second_order_system(), stop);
  } catch (const NumericalError& e) {
    throw NumericalError(concat("the local reduction at the training point ", at, ": ", e.what()));
  }
}

Bytes encode_local(const ReducedModel& m) {
  Bytes b;
  b.put(m.V);
  b.put(m.W);
  b.put(Matrix(m.basis_weights));
  b.put(static_cast<std::int64_t>(m.summary.r));
  b.put(m.summary.error_bound ? *m.summary.error_bound : std::nan(""));
  b.put(static_cast<std::int64_t>(m.summary.error_bound.has_value()));
  b.put(static_cast<std::int64_t>(m.summary.bound_is_complete));
  b.put(static_cast<std::int64_t>(m.bases_of_positions));
  return b;
}

ReducedModel decode_local(Bytes& b) {
  ReducedModel m;
  m.V = b.get_matrix();
  m.W = b.get_matrix();
  const Matrix w = b.get_matrix();
  m.basis_weights = w.size() > 0 ? Vector(w.col(0)) : Vector();
  m.summary.r = b.get_int();
  const double bound = b.get_double();
  if (b.get_int() != 0) m.summary.error_bound = bound;
  m.summary.bound_is_complete = b.get_int() != 0;
  m.bases_of_positions = b.get_int() != 0;
  return m;
}

}  // namespace

Bytes run_remote_local_reduction(const ExperimentConfig& c, Bytes& task,
                                 const std::atomic<bool>* stop) {
  const Index i = task.get_int(), k = task.get_int();
  const Vector mu = task.get_matrix().col(0);
  return encode_local(local_reduction(c, mu, i, k, stop));
}

namespace {

/// One local reduction's contribution to the global basis.
struct LocalBasis {
  Matrix V, W;  ///< W empty: none of its own (W = V)
  Vector weights;
  double order = 0, bound = std::nan("");
  ComplexVector poles;  ///< of the local reduced model (the greedy's frequency range)
};

struct LocalReductions {
  std::vector<LocalBasis> bases;  ///< in the order reduced
  bool positions = false;         ///< bases of the positions of a second-order system
  bool two_sided = false;         ///< some local reduction has a W of its own
  double seconds = 0;
};

/// A local reduction (local_reduction's) appended to `local`.
void keep_local(const ReductionMethod& method, LocalReductions& local, ReducedModel&& r) {
  require(r.V.size() > 0, "internal: reduction.method = \"", method.name(),
          "\" returned no projection bases");
  require(local.bases.empty() || local.positions == r.bases_of_positions,
          "internal: local bases in different coordinates");
  local.positions = r.bases_of_positions;
  LocalBasis b;
  b.order = static_cast<double>(r.summary.r);
  if (r.summary.error_bound && r.summary.bound_is_complete) b.bound = *r.summary.error_bound;
  local.two_sided = local.two_sided || r.W.size() > 0;
  b.weights = r.basis_weights.size() == r.V.cols() ? r.basis_weights : Vector::Ones(r.V.cols());
  if (r.first_order) b.poles = r.first_order->poles();
  b.V = std::move(r.V);
  b.W = std::move(r.W);
  local.bases.push_back(std::move(b));
}

/// The parametric model of the local bases: the global basis of order r (capped at the columns
/// there are) and every affine term projected once.
struct GlobalModel {
  std::shared_ptr<const ParametricLtiModel> model;
  Vector sv;
  bool galerkin = true;
  double basis_seconds = 0, projection_seconds = 0;
};

GlobalModel global_model(const ExperimentConfig& c, const ParametricLinearKeys& keys,
                         const LocalReductions& local, Index r) {
  GlobalModel g;
  const auto tb = Clock::now();
  g.galerkin = keys.global_projection == GlobalProjection::galerkin || !local.two_sided;
  std::vector<Matrix> Vs, Ws;
  std::vector<Vector> weights;
  for (const LocalBasis& b : local.bases) {
    Vs.push_back(b.V);
    Ws.push_back(b.W.size() > 0 ? b.W : b.V);
    weights.push_back(b.weights);
  }
  GlobalBasis V, W;
  if (g.galerkin) {
    std::vector<Matrix> all = Vs;
    std::vector<Vector> all_weights = weights;
    if (local.two_sided) {
      all.insert(all.end(), Ws.begin(), Ws.end());
      all_weights.insert(all_weights.end(), weights.begin(), weights.end());
    }
    V = global_basis(all, r, all_weights);
  } else {
    V = global_basis(Vs, r, weights);
    W = global_basis(Ws, r, weights);
  }
  g.sv = V.sv;
  g.basis_seconds = seconds_since(tb);

  const auto tp = Clock::now();
  const ParameterDomain& d = c.parameters;
  const ParametricLinearSystem sys = c.model->parametric_linear_system(d);
  if (local.positions) {
    const auto* so = std::get_if<ParametricSecondOrderSystem>(&sys);
    require(so != nullptr, "internal: position bases of a first-order system");
    g.model = std::make_shared<const ParametricLtiModel>(d, *so, V.U, W.U);
  } else if (const auto* so = std::get_if<ParametricSecondOrderSystem>(&sys); so && g.galerkin) {
    // W = V in the energy inner product: stable at every mu for M, D, K definite.
    g.model = std::make_shared<const ParametricLtiModel>(d, to_descriptor_energy(*so), V.U, W.U);
  } else {
    g.model = std::make_shared<const ParametricLtiModel>(d, first_order_form(sys), V.U, W.U);
  }
  g.projection_seconds = seconds_since(tp);
  return g;
}

/// The greedy's frequencies: 0 and a logarithmic grid from a tenth of the smallest to ten times
/// the largest pole magnitude of a local reduced model (its dominant dynamics).
Vector greedy_frequencies(const ComplexVector& poles, Index count) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const Complex& p : poles)
    if (std::isfinite(std::abs(p)) && std::abs(p) > 0) {
      lo = std::min(lo, std::abs(p));
      hi = std::max(hi, std::abs(p));
    }
  if (!(hi > 0)) lo = 1e-4, hi = 1e2;  // no usable pole: a wide default range
  if (!(hi > lo)) hi = 10 * lo;
  Vector omega(count);
  omega[0] = 0.0;
  omega.tail(count - 1) =
      log_frequencies(lo / 10, hi * 10, std::max<Index>(count - 1, 2)).head(count - 1);
  return omega;
}

/// sigma_max of a small complex matrix.
double sigma_max_of(const ComplexMatrix& G) {
  if (G.size() == 0) return 0.0;
  return Eigen::JacobiSVD<ComplexMatrix>(G).singularValues()[0];
}

/// The greedy's indicator at mu: max_k ||G(i w_k) - G_r(i w_k)||_2 / max_k ||G(i w_k)||_2 with
/// G the full model's values there (computed once) and G_r the parametric model's; +inf if the
/// reduced model has a pole on the grid.
double sampled_error(const ParametricLtiModel& model, const Vector& mu, const Vector& omega,
                     const std::vector<ComplexMatrix>& G, double G_max) {
  const ReducedLtiAt r = model.at(mu);
  double err = 0;
  for (Index k = 0; k < omega.size(); ++k) {
    try {
      const ComplexMatrix Gr = transfer_function(*r.first_order, Complex(0.0, omega[k]));
      err = std::max(err, sigma_max_of(G[static_cast<std::size_t>(k)] - Gr));
    } catch (const NumericalError&) {
      return std::numeric_limits<double>::infinity();
    }
  }
  return G_max > 0 ? err / G_max : err;
}

/// The relative H-infinity error ||G - G_r||_Hinf / ||G||_Hinf of the parametric model at mu
/// against the full model there (the subspace method or the level set, started from the reduced
/// model's poles); NaN if it cannot be computed (an unstable reduced model).
double hinf_relative_error(const ExperimentConfig& c, const ParametricLtiModel& model,
                           const Vector& mu) {
  const ExperimentConfig here = at_point(c, mu);
  const std::unique_ptr<FullModel> full = here.model->build(c.solver);
  const std::unique_ptr<LtiOperator> lti = full->lti_operator();
  ReducedLtiAt r = model.at(mu);
  FrequencyAnalysisOptions o;
  o.bode_points = 0;
  const BodeCurves none;
  const NormReport e = hinf_error_report(*lti, *r.first_order, none, o);
  const NormReport f = hinf_full_report(*lti, *r.first_order, none, o);
  if (!e.computed || !f.computed || !(f.value > 0)) return std::nan("");
  return e.value / f.value;
}

}  // namespace

ReducedModel reduce_linear_parametric(const ExperimentConfig& c, const std::atomic<bool>* stop) {
  const auto t_start = Clock::now();
  const ReductionMethod& method = *c.reduction;
  const ParametricLinearKeys* keys = method.parametric_linear();
  require(keys != nullptr, "reduction.method = \"", method.name(),
          "\" has no parametric form for this model");
  const ParameterDomain& d = c.parameters;
  const Matrix X = training_set(d, keys->training_points, keys->parameter_samples,
                                keys->parameter_seed, c.name, "reduction.training_points");
  const Index k = X.rows();
  auto point = [&](Index i) { return Vector(X.row(i).transpose()); };

  // 1. The method's local reduction at each training point (sampling = "all"), or at those the
  // greedy selects: its bases.
  LocalReductions local;
  std::vector<Index> selected;
  std::optional<GreedyRun> greedy;
  GlobalModel g;
  auto order = [&] {
    double largest = 0;
    for (const LocalBasis& b : local.bases) largest = std::max(largest, b.order);
    return keys->max_order > 0 ? keys->max_order : static_cast<Index>(largest);
  };
  // One local reduction, serial (the greedy's, each after the indicators chose it).
  auto reduce_at = [&](Index i, Index count, Index of) {
    const auto t = Clock::now();
    keep_local(method, local, local_reduction(c, point(i), count, of, stop));
    local.seconds += seconds_since(t);
    selected.push_back(i);
  };
  if (keys->sampling == ParametricSampling::all) {
    // The local reductions are independent: c.training_jobs at once (and over the mpirun
    // ranks), consumed in the order of the points, so that the global basis does not depend on
    // the number of jobs.
    const auto t = Clock::now();
    const int jobs = std::max(1, c.training_jobs);
    std::function<ReducedModel(Index)> task = [&](Index i) {
      return local_reduction(c, point(i), i, k, stop);
    };
    std::function<void(Index, ReducedModel &&)> keep = [&](Index i, ReducedModel&& r) {
      keep_local(method, local, std::move(r));
      selected.push_back(i);
    };
    std::optional<RemoteCodec<ReducedModel>> remote;
    if (remote_ranks() > 0)
      remote = RemoteCodec<ReducedModel>{RemoteTask::local_reduction,
                                         [&](Index i) {
                                           Bytes b;
                                           b.put(static_cast<std::int64_t>(i));
                                           b.put(static_cast<std::int64_t>(k));
                                           b.put(Matrix(X.row(i).transpose()));
                                           return b;
                                         },
                                         decode_local};
    run_tasks_in_order<ReducedModel>(k, jobs, task, keep, remote);
    local.seconds = seconds_since(t);
    g = global_model(c, *keys, local, order());
  } else {
    greedy.emplace();
    greedy->enriched = false;
    // The first point: the nearest to the center (in each parameter's scale, as sampled).
    const Vector center = d.center();
    Index first = 0;
    double best = std::numeric_limits<double>::infinity();
    for (Index i = 0; i < k; ++i) {
      double dist = 0;
      for (Index j = 0; j < d.size(); ++j) {
        const Parameter& p = d.parameters()[static_cast<std::size_t>(j)];
        const double a = p.log ? std::log(X(i, j)) : X(i, j);
        const double b = p.log ? std::log(center[j]) : center[j];
        const double w = p.log ? std::log(p.max) - std::log(p.min) : p.max - p.min;
        dist += (a - b) * (a - b) / (w * w);
      }
      if (dist < best) best = dist, first = i;
    }
    const Index most = keys->greedy_max_points > 0 ? std::min(keys->greedy_max_points, k) : k;
    reduce_at(first, 0, most);
    greedy->steps.push_back({0, first, std::nan(""), std::nan(""), std::nan("")});

    // The full model's transfer function at every training point on the grid, once.
    const Vector omega = greedy_frequencies(local.bases.front().poles, keys->greedy_frequencies);
    std::vector<std::vector<ComplexMatrix>> G(static_cast<std::size_t>(k));
    Vector G_max(k);
    for (Index i = 0; i < k; ++i) {
      throw_if_stop_requested("the parametric reduction", stop);
      progress_note(concat(c.name, ": the full transfer function at training point ", i + 1, "/", k,
                           " (", omega.size(), " frequencies) ..."));
      const ExperimentConfig here = at_point(c, point(i));
      const std::unique_ptr<FullModel> full = here.model->build(c.solver);
      const std::unique_ptr<LtiOperator> lti = full->lti_operator();
      G[static_cast<std::size_t>(i)] = transfer_functions(*lti, omega);
      G_max[i] = 0;
      for (const ComplexMatrix& Gk : G[static_cast<std::size_t>(i)])
        G_max[i] = std::max(G_max[i], sigma_max_of(Gk));
    }

    for (Index iteration = 1;; ++iteration) {
      const Index r = std::min<Index>(order(), [&] {
        Index cols = 0;
        for (const LocalBasis& b : local.bases)
          cols += b.V.cols() + (local.two_sided && b.W.size() > 0 ? b.W.cols() : 0);
        return cols;
      }());
      g = global_model(c, *keys, local, r);
      // The indicator at every unselected point; the largest first.
      std::vector<std::pair<double, Index>> candidates;
      for (Index i = 0; i < k; ++i) {
        if (std::find(selected.begin(), selected.end(), i) != selected.end()) continue;
        throw_if_stop_requested("the parametric reduction", stop);
        candidates.emplace_back(
            sampled_error(*g.model, point(i), omega, G[static_cast<std::size_t>(i)], G_max[i]), i);
      }
      std::sort(candidates.begin(), candidates.end(), std::greater<>());
      if (candidates.empty()) {
        greedy->stop = "every training point selected";
        break;
      }
      if (candidates.front().first <= keys->greedy_tolerance) {
        greedy->stop = concat("the largest indicator ", candidates.front().first,
                              " is at most greedy_tolerance = ", keys->greedy_tolerance);
        break;
      }
      if (static_cast<Index>(selected.size()) >= most) {
        greedy->stop = concat("greedy_max_points = ", most, " reached (largest indicator ",
                              candidates.front().first, ")");
        break;
      }
      const Index batch =
          std::min<Index>({keys->greedy_batch, most - static_cast<Index>(selected.size()),
                           static_cast<Index>(candidates.size())});
      for (Index b = 0; b < batch; ++b) {
        const auto [indicator, i] = candidates[static_cast<std::size_t>(b)];
        // The true relative H-infinity error of the model before it there.
        const double true_error = hinf_relative_error(c, *g.model, point(i));
        greedy->steps.push_back({iteration, i, indicator, true_error, std::nan("")});
        reduce_at(i, static_cast<Index>(selected.size()), most);
      }
    }
    greedy->correlation = log_correlation(greedy->steps);
    if (g.model->r() != order())  // the cap above: the final model has the order asked for
      g = global_model(c, *keys, local, order());
  }

  ReducedModel out = reduced_model_at(*g.model, d.center());
  const std::optional<double> abscissa = out.summary.spectral_abscissa;
  ReductionSummary& s = out.summary = ReductionSummary(std::string(method.name()));
  s.r = g.model->r();
  s.spectral_abscissa = abscissa;
  s.stages = {{"local_reductions_s", local.seconds},
              {"global_basis_s", g.basis_seconds},
              {"projection_s", g.projection_seconds}};
  s.spectra.emplace_back(layout::kReductionGlobalSv, g.sv);
  s.seconds = seconds_since(t_start);
  if (g.model->second_order())
    record_reduced_second_order(s.details, out.second_order);
  else
    record_reduced_first_order(s.details, out.first_order->E(), out.first_order->A(),
                               out.first_order->B(), out.first_order->C(), out.first_order->D_ff());
  // Local orders and bounds by training point (NaN where the greedy did not reduce).
  Vector local_orders = Vector::Constant(k, std::nan("")),
         local_bounds = Vector::Constant(k, std::nan(""));
  for (std::size_t j = 0; j < selected.size(); ++j) {
    local_orders[selected[j]] = local.bases[j].order;
    local_bounds[selected[j]] = local.bases[j].bound;
  }
  record_parametric_linear(s.details, *g.model, X, local_orders, local_bounds,
                           g.galerkin ? GlobalProjection::galerkin : GlobalProjection::two_sided);
  if (greedy) {
    record_greedy(s.details, *greedy,
                  "row i: a selected training point (0-based row of training_parameters), the "
                  "iteration that selected it, its indicator (the relative error of the "
                  "parametric model before it on the greedy's frequency grid, max_k ||G(i w_k) "
                  "- G_r(i w_k)||_2 / max_k ||G(i w_k)||_2; NaN for the first point, the nearest "
                  "to the center), and the true relative H-infinity error ||G - G_r||_Hinf / "
                  "||G||_Hinf of that model there (true_error; NaN if not computed)");
    out.selected_points = static_cast<Index>(selected.size());
    out.greedy_note = concat(greedy->stop, "; log indicator / log H-infinity error correlation ",
                             greedy->correlation);
  }
  out.parametric = std::move(g.model);
  out.training_points = X;
  progress_note(concat(c.name, ": parametric model of order ", s.r, " from ", selected.size(),
                       " local reductions (", g.galerkin ? "galerkin" : "two-sided", ")"));
  return out;
}

}  // namespace mor::experiments
