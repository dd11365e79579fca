// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/parametric_linear.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/ordered_tasks.hpp"
#include "experiments/runner/results_layout.hpp"
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

ReducedModel reduce_linear_parametric(const ExperimentConfig& c, const std::atomic<bool>* stop) {
  const auto t_start = Clock::now();
  const ReductionMethod& method = *c.reduction;
  const ParametricLinearKeys* keys = method.parametric_linear();
  require(keys != nullptr, "reduction.method = \"", method.name(),
          "\" has no parametric form for this model");
  const ParameterDomain& d = c.parameters;
  const Matrix X =
      d.sample(keys->parameter_samples, static_cast<std::uint64_t>(keys->parameter_seed));
  const Index k = X.rows();

  // 1. The method's local reduction at each training point: its bases.
  std::vector<Matrix> Vs, Ws;
  std::vector<Vector> weights;  // per local basis; dropped unless every one has them
  bool positions = false, two_sided_bases = false;
  Vector local_orders(k), local_bounds = Vector::Constant(k, std::nan(""));
  // The local reductions are independent: c.training_jobs at once, consumed in the order of the
  // points (the global basis does not depend on the number of threads).
  const int jobs = std::max(1, c.training_jobs);
  std::function<ReducedModel(Index)> task = [&](Index i) {
    return local_reduction(c, X.row(i).transpose(), i, k, stop);
  };
  std::function<void(Index, ReducedModel &&)> keep = [&](Index i, ReducedModel&& local) {
    require(local.V.size() > 0, "internal: reduction.method = \"", method.name(),
            "\" returned no projection bases");
    require(i == 0 || positions == local.bases_of_positions,
            "internal: local bases in different coordinates");
    positions = local.bases_of_positions;
    local_orders[i] = static_cast<double>(local.summary.r);
    if (local.summary.error_bound && local.summary.bound_is_complete)
      local_bounds[i] = *local.summary.error_bound;
    two_sided_bases = two_sided_bases || local.W.size() > 0;
    weights.push_back(local.basis_weights.size() == local.V.cols() ? local.basis_weights
                                                                   : Vector::Ones(local.V.cols()));
    Vs.push_back(std::move(local.V));
    Ws.push_back(local.W.size() > 0 ? std::move(local.W) : Vs.back());
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
  const double local_seconds = seconds_since(t_start);

  // 2. The global basis: the leading singular vectors of the local bases side by side.
  const auto tb = Clock::now();
  const Index r =
      keys->max_order > 0 ? keys->max_order : static_cast<Index>(local_orders.maxCoeff());
  const bool galerkin = keys->global_projection == GlobalProjection::galerkin || !two_sided_bases;
  GlobalBasis V, W;
  if (galerkin) {
    std::vector<Matrix> all = Vs;
    std::vector<Vector> all_weights = weights;
    if (two_sided_bases) {
      all.insert(all.end(), Ws.begin(), Ws.end());
      all_weights.insert(all_weights.end(), weights.begin(), weights.end());
    }
    V = global_basis(all, r, all_weights);
  } else {
    V = global_basis(Vs, r, weights);
    W = global_basis(Ws, r, weights);
  }
  Vs.clear();
  Ws.clear();
  const double basis_seconds = seconds_since(tb);

  // 3. Every affine term projected once.
  const auto tp = Clock::now();
  const ParametricLinearSystem sys = c.model->parametric_linear_system(d);
  std::shared_ptr<const ParametricLtiModel> model;
  if (positions) {
    const auto* so = std::get_if<ParametricSecondOrderSystem>(&sys);
    require(so != nullptr, "internal: position bases of a first-order system");
    model = std::make_shared<const ParametricLtiModel>(d, *so, V.U, W.U);
  } else if (const auto* so = std::get_if<ParametricSecondOrderSystem>(&sys); so && galerkin) {
    // W = V in the energy inner product: stable at every mu for M, D, K definite.
    model = std::make_shared<const ParametricLtiModel>(d, to_descriptor_energy(*so), V.U, W.U);
  } else {
    model = std::make_shared<const ParametricLtiModel>(d, first_order_form(sys), V.U, W.U);
  }
  const double projection_seconds = seconds_since(tp);

  ReducedModel out = reduced_model_at(*model, d.center());
  const std::optional<double> abscissa = out.summary.spectral_abscissa;
  ReductionSummary& s = out.summary = ReductionSummary(std::string(method.name()));
  s.r = model->r();
  s.spectral_abscissa = abscissa;
  s.stages = {{"local_reductions_s", local_seconds},
              {"global_basis_s", basis_seconds},
              {"projection_s", projection_seconds}};
  s.spectra.emplace_back(layout::kReductionGlobalSv, V.sv);
  s.seconds = seconds_since(t_start);
  if (model->second_order())
    record_reduced_second_order(s.details, out.second_order);
  else
    record_reduced_first_order(s.details, out.first_order->E(), out.first_order->A(),
                               out.first_order->B(), out.first_order->C(), out.first_order->D_ff());
  record_parametric_linear(s.details, *model, X, local_orders, local_bounds,
                           galerkin ? GlobalProjection::galerkin : GlobalProjection::two_sided);
  out.parametric = std::move(model);
  out.training_points = X;
  progress_note(concat(c.name, ": parametric model of order ", s.r, " from ", k,
                       " local reductions (", galerkin ? "galerkin" : "two-sided", ")"));
  return out;
}

}  // namespace mor::experiments
