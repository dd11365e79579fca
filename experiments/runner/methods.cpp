// SPDX-License-Identifier: GPL-3.0-or-later
// The registry of reduction methods: one X(...) entry per method, defined in
// experiments/runner/methods/.
#include <algorithm>
#include <cmath>

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/results_layout.hpp"

// clang-format off: one registration line per method (clang-format reflows the macro anew
// on every run).
#define MOR_REDUCTION_METHODS(X) \
  X(kNoReduction)                \
  X(kBtMethod)                   \
  X(kSobtMethod)                 \
  X(kModalMethod)                \
  X(kPodMethod)                  \
  X(kEmpiricalBtMethod)          \
  X(kIrkaMethod)                 \
  X(kDifferentialBalancingMethod)
// clang-format on

namespace mor::experiments {

#define MOR_DECLARE_METHOD(method) extern const MethodInfo method;
MOR_REDUCTION_METHODS(MOR_DECLARE_METHOD)
#undef MOR_DECLARE_METHOD

const std::vector<MethodInfo>& reduction_methods() {
#define MOR_LIST_METHOD(method) method,
  static const std::vector<MethodInfo> methods = {MOR_REDUCTION_METHODS(MOR_LIST_METHOD)};
#undef MOR_LIST_METHOD
  return methods;
}

const MethodInfo* find_reduction_method(std::string_view name) {
  const auto& methods = reduction_methods();
  const auto it = std::find_if(methods.begin(), methods.end(),
                               [&](const MethodInfo& m) { return m.name == name; });
  return it == methods.end() ? nullptr : &*it;
}

std::shared_ptr<const ReductionMethod> read_reduction(TableReader& r, const std::string& source,
                                                      const std::filesystem::path& base_dir,
                                                      const std::vector<std::string>& allowed) {
  const std::string name = r.text("method", "none");
  std::vector<std::string> known;
  for (const auto& m : reduction_methods())
    if (allowed.empty() || std::find(allowed.begin(), allowed.end(), m.name) != allowed.end())
      known.emplace_back(m.name);
  const MethodInfo* method = std::find(known.begin(), known.end(), name) != known.end()
                                 ? find_reduction_method(name)
                                 : nullptr;
  if (method == nullptr) {
    const std::string near = suggestion(name, known);
    throw InvalidArgument(detail::concat(r.where("method"), ": reduction.method '", name,
                                         "' is not known", allowed.empty() ? "" : " here",
                                         " (known: ", join(known), ")",
                                         near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  return method->read(r, source, base_dir);
}

namespace {

/// The smallest k such that every tail sum_{i >= k} passes (the tails grow as k falls: walk
/// down until one fails).
template <class Passes>
std::int64_t smallest_order(const Vector& s, Passes passes) {
  std::int64_t r_needed = -1;
  double tail = 0.0;
  for (Index k = s.size(); k-- > 0;) {
    tail += s(k);
    if (!passes(tail)) break;
    r_needed = k;
  }
  return r_needed;
}

}  // namespace

std::int64_t order_for_bound(const Vector& s, double tol) {
  if (s.size() == 0 || !(s(0) > 0)) return -1;
  return smallest_order(s, [&](double tail) { return 2.0 * tail <= tol * s(0); });
}

std::int64_t order_for_energy(const Vector& s, double tol) {
  const Vector s2 = s.array().square().matrix();
  const double total = s2.sum();
  if (!(total > 0)) return -1;
  return smallest_order(s2, [&](double tail) { return std::sqrt(tail / total) <= tol; });
}

void require_order_or_tolerance(const TableReader& r, const std::string& source, Index order,
                                double tolerance, const char* tolerance_key) {
  require((order > 0) != (tolerance > 0.0), source,
          ": reduction: set exactly one of reduction.order (r >= 1) and reduction.", tolerance_key,
          " (> 0); got order = ", order, ", ", tolerance_key, " = ", tolerance);
  require(order >= 0, r.where("order"), ": reduction.order must be >= 1, got ", order);
}

std::string method_keys_context(const TableReader& r, std::string_view method) {
  for (const auto& key : r.unread_keys())
    for (const auto& m : reduction_methods()) {
      if (m.name == method) continue;
      std::vector<KeyDoc> rows;
      m.keys(rows);
      for (const auto& row : rows)
        if (row.name == key)
          return detail::concat(" for reduction.method = \"", method, "\" (", key,
                                " needs method = \"", m.name, "\")");
    }
  return detail::concat(" for reduction.method = \"", method, "\"");
}

void require_linear_model(const ExperimentConfig& c, const std::string& where,
                          std::string_view method) {
  if (c.model->has_linearisation()) return;
  throw InvalidArgument(
      detail::concat(where, ": reduction.method = \"", method,
                     "\" reduces a linear system, and this nonlinear model (model.type = \"",
                     c.model->kind(), "\") has no linearisation about a rest state to reduce"));
}

Vector hankel_weights(const Vector& hsv, Index r) {
  if (hsv.size() < r || r < 1 || !(hsv[0] > 0.0)) return {};
  return (hsv.head(r) / hsv[0]).cwiseMax(0.0).cwiseSqrt();
}

bool ReductionMethod::parametric_for(const ModelSpec& model) const {
  return family_for(model) == Family::linear && parametric_linear() != nullptr &&
         model.has_linearisation();
}

void refuse_parametric_keys(const ExperimentConfig& c, const std::string& where,
                            const std::vector<std::string>& given) {
  if (given.empty() || !c.parameters.empty()) return;
  throw InvalidArgument(detail::concat(where, ": reduction.", given.front(),
                                       " belongs to a parametric reduced model: it needs "
                                       "[parameters]"));
}

void check_training_points(const ExperimentConfig& c, const std::string& where,
                           const std::vector<std::vector<double>>& points) {
  if (!c.parameters.empty() && !points.empty())
    points_in_domain(c.parameters, points, where, "reduction.training_points");
}

void check_parametric_linear_keys(const TableReader& r, const ParametricLinearKeys& k) {
  require(k.parameter_samples >= 1, r.where("parameter_samples"),
          ": reduction.parameter_samples must be >= 1, got ", k.parameter_samples);
  require(k.max_order >= 0, r.where("max_order"),
          ": reduction.max_order must be >= 0 (0: the largest local order), got ", k.max_order);
  require(k.greedy_batch >= 1, r.where("greedy_batch"),
          ": reduction.greedy_batch must be >= 1, got ", k.greedy_batch);
  require(k.greedy_max_points >= 0, r.where("greedy_max_points"),
          ": reduction.greedy_max_points must be >= 0 (0: no limit), got ", k.greedy_max_points);
  require(k.greedy_frequencies >= 2, r.where("greedy_frequencies"),
          ": reduction.greedy_frequencies must be >= 2, got ", k.greedy_frequencies);
  require(k.greedy_tolerance >= 0.0 && std::isfinite(k.greedy_tolerance),
          r.where("greedy_tolerance"), ": reduction.greedy_tolerance must be >= 0 and finite, got ",
          k.greedy_tolerance);
}

ReducedModel ReductionMethod::reduce_linear(LtiOperator&, const SecondOrderSystem*) const {
  throw InvalidArgument(
      detail::concat("reduction.method = \"", name(), "\" does not give a linear reduced model"));
}

ProjectionReduction ReductionMethod::reduce_projection(const ExperimentConfig&, const FullModel&,
                                                       const std::atomic<bool>*) const {
  throw InvalidArgument(
      detail::concat("reduction.method = \"", name(), "\" does not project a nonlinear model"));
}

}  // namespace mor::experiments
