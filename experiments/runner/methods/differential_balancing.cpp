// SPDX-License-Identifier: GPL-3.0-or-later
// Method "differential_balancing": generalized differential balancing of a nonlinear
// second-order network, the chain included (Kawano & Scherpen 2015;
// reduction/differential_balancing.hpp). The Gramians P, Q are the trace-minimal solutions (DSDP)
// of the differential Lyapunov inequalities over the region ||G q||_2 <= rho, written as one
// vertex LMI per nonlinear element plus the linear one (N + 2 for the chain). The runner
// simulates second-order models, so the reduced model given to it is the structure-preserving
// projection with the position balancing of P_qq and Q_qq (V_q, W_q: N x r, Petrov-Galerkin),
// its nonlinear force exact (the chain's tensor, or every element through G V: full). The
// first-order GD truncation and its a priori bound 2 sum_{i>r} sigma_i are
// recorded (/reduction/hankel_singular_values, /reduction/error_bound); see
// docs/methods/differential_balancing.md for which model the bound covers.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/differential_balancing.hpp"
#include "reduction/projected_model.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

/// How the projected model evaluates its nonlinear force: exactly, since differential balancing
/// trains no DEIM or ECSW (it runs no training simulations).
enum class ExactForce {
  exact,   ///< tensor where the model has it (the chain), else full
  tensor,  ///< the chain's reduced cubic, O(r^4)
  full,    ///< every element through G V, O(m r)
};
constexpr Choice<ExactForce> kExactForces[] = {
    {"exact", ExactForce::exact}, {"tensor", ExactForce::tensor}, {"full", ExactForce::full}};

struct DifferentialBalancingOptions {
  Index order = 0;
  double tolerance = 0.0;
  double rho = 1.0;
  double epsilon = 1e-9;
  double gap_tolerance = 1e-7;
  Index max_iterations = 300;
  double feasibility_tolerance = 1e-8;
  Index max_masses = 40;
  ExactForce nonlinear = ExactForce::exact;
  std::vector<Index> compare_orders;
  bool store_bases = false;
};

template <class O, class V>
void dbal_keys(O& o, V& v) {
  v(Key{"order", "", "r, the reduced number of positions (set this or tolerance)"}, o.order);
  v(Key{"tolerance", "",
        "the smallest r with 2 sum_{i>r} sigma_i <= tolerance over the position-balanced values "
        "(or order)"},
    o.tolerance);
  v(Key{"rho", "m",
        "the region ||G q||_2 <= rho (the chain: ||Delta q||_2) where the differential "
        "Lyapunov inequalities hold (inf: every state, infeasible for cubic springs)"},
    o.rho);
  v(Key{"epsilon", "", "the Gramians' lower bound P, Q >= epsilon ||B B^T|| I (relative)"},
    o.epsilon);
  v(Key{"gap_tolerance", "", "DSDP's relative duality gap at which each SDP stops"},
    o.gap_tolerance);
  v(Key{"max_iterations", "", "DSDP iterations per Gramian"}, o.max_iterations);
  v(Key{"feasibility_tolerance", "",
        "largest eigenvalue of an inequality accepted, relative to 2 ||A_k|| ||P|| + ||B B^T||"},
    o.feasibility_tolerance);
  v(Key{"max_masses", "",
        "refuse models with more coordinates N (the SDP has N (2 N + 1) unknowns; N = 40 takes "
        "minutes)"},
    o.max_masses);
  v.choice(
      Key{"nonlinear", "",
          "the projected nonlinear force, exact: tensor (the chain's reduced cubic, O(r^4)), full "
          "(every element through G V, O(m r)) or exact (tensor where the model has it, else "
          "full); no deim or ecsw, which need training runs"},
      o.nonlinear, kExactForces);
  v(Key{"compare_orders", "", "further orders from the same bases, for /error_vs_r"},
    o.compare_orders);
  v(Key{"store_bases", "", "write P, Q, V_q and W_q to the results file"}, o.store_bases);
}

/// CPU seconds of both SDPs for N coordinates and m elements: measured 15 s for the chain at
/// N = 20 (820 unknowns, m = 21) and 22 s for the 4 x 4 lattice (N = 16, 528 unknowns, m = 40;
/// docs/methods/differential_balancing.md). The Schur matrix's Cholesky factor grows like the
/// unknowns cubed, N (2 N + 1) cubed; its assembly, which dominates for the lattice, like the
/// square of the elements per coordinate (more blocks, each with denser data matrices). Both
/// exponents are fitted to those two runs (the square reproduces both), plus a second of setup.
double sdp_seconds(Index N_, Index m_) {
  const auto N = static_cast<double>(N_);
  const double u = N * (2 * N + 1) / 820.0;
  const double density = std::max(static_cast<double>(m_) / N, 1.0) / (21.0 / 20.0);
  return 1.0 + 14.0 * u * u * u * density * density;
}

/// x to two significant digits, for messages.
std::string rounded(double x) {
  std::ostringstream s;
  s << std::setprecision(2) << x;
  return s.str();
}

DifferentialGramianOptions gramian_options(const DifferentialBalancingOptions& o) {
  DifferentialGramianOptions g;
  g.rho = o.rho;
  g.epsilon = o.epsilon;
  g.gap_tolerance = o.gap_tolerance;
  g.max_iterations = static_cast<int>(o.max_iterations);
  g.feasibility_tolerance = o.feasibility_tolerance;
  return g;
}

class DifferentialBalancingMethod final : public ReductionMethod {
 public:
  explicit DifferentialBalancingMethod(DifferentialBalancingOptions o) : o_(std::move(o)) {}
  std::string_view name() const override { return "differential_balancing"; }
  Family family() const override { return Family::projection; }
  Index order() const override { return o_.order; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    dbal_keys(o_, w);
  }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    if (c.model->is_linear())
      require(c.model->simulation_balancing(), where,
              ": reduction.method = \"differential_balancing\": the differential Gramians of a "
              "linear model are its generalized Gramians (solutions of the Lyapunov "
              "inequalities), the smallest of which are the Lyapunov Gramians that \"bt\" (or "
              "\"sobt\" for a second-order model) balances "
              "directly, without the SDPs: use it");
    require(c.model->simulation_balancing(), where,
            ": reduction.method = \"differential_balancing\" solves the differential Lyapunov "
            "inequalities of a second-order network M q'' + D q' + K q + G^T phi(G q) = B u, "
            "whose Jacobians form an affine family in the element stiffnesses phi'(G q); this "
            "model's equations are nonlinear and first order, x' = f(t, x, u), with no such "
            "family: use \"bt\", \"modal\" or \"irka\" (they reduce its linearisation about "
            "its rest state)");
    const Index N = c.model_size();
    const Index m = c.model->nonlinear_elements();
    require(N <= o_.max_masses, where, ": reduction.method = \"differential_balancing\" solves ",
            "two SDPs with n (n + 1) / 2 = ", N * (2 * N + 1),
            " unknowns (n = 2 N) and m + 2 = ", m + 2, " blocks of size n for N = ", N,
            " coordinates and m = ", m, " nonlinear elements, about ", rounded(sdp_seconds(N, m)),
            " s (", rounded(sdp_seconds(N, m) / 3600.0),
            " h) of CPU by the estimate; that is above reduction.max_masses = ", o_.max_masses,
            " (raise it knowingly: the cost grows like N^6)");
    if (!c.model->is_linear()) {
      try {
        require_region_laws(c.model->network().coefficients(), o_.rho);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(
            concat(where, ": reduction.method = \"differential_balancing\": ", e.what()));
      }
    }
    if (o_.nonlinear == ExactForce::tensor)
      require(c.model->reduced_tensor() || c.model->is_linear(), where,
              ": reduction.nonlinear = \"tensor\" is the chain's exact reduced cubic; this "
              "model's element laws take \"full\" (or \"exact\")");
    require(o_.order <= N, where, ": reduction.order must be <= N = ", N, ", got ", o_.order);
    for (Index order : o_.compare_orders)
      require(order >= 1 && order <= N, where,
              ": reduction.compare_orders entries must be in [1, N = ", N, "], got ", order);
  }
  double estimate_seconds(const ExperimentConfig& c, double) const override {
    return sdp_seconds(c.model_size(), c.model->nonlinear_elements());
  }
  double estimate_bytes(const ExperimentConfig& c) const override {
    const double N = static_cast<double>(c.model_size());
    const double u = N * (2 * N + 1);
    const double blocks = static_cast<double>(c.model->nonlinear_elements()) + 2.0;
    return 8.0 * u * u * 1.5 + 8.0 * u * 20.0 * blocks;
  }
  ProjectionReduction reduce_projection(const ExperimentConfig& c, const FullModel& model,
                                        const std::atomic<bool>*) const override;

 private:
  DifferentialBalancingOptions o_;
};

ProjectionReduction DifferentialBalancingMethod::reduce_projection(const ExperimentConfig& c,
                                                                   const FullModel& model,
                                                                   const std::atomic<bool>*) const {
  const auto t_start = Clock::now();
  const NetworkOperators& net = network_of(model);
  const DifferentialBalancing bal = net.differential_balancing(gramian_options(o_));
  const std::string& grp = layout::kReduction;
  ProjectionReduction result;
  ReductionSummary& summary = result.summary = ReductionSummary(std::string(name()));
  io::RecordSink& out = summary.details;
  auto record_solve = [&](const std::string& which, const GramianSolve& s) {
    summary.statuses.push_back({which, std::string(to_string(s.status)), s.message});
    out.set_attribute(grp, which + "_iterations", static_cast<std::int64_t>(s.iterations));
    out.set_attribute(grp, which + "_max_relative_residual", s.max_relative_residual);
    if (s.residuals.size() > 0)
      out.write_vector(layout::child(grp, std::string(which) + "_residuals"), s.residuals);
  };
  record_solve("controllability", bal.controllability);
  record_solve("observability", bal.observability);
  out.set_attribute(grp, "rho", o_.rho);
  out.set_attribute(grp, "epsilon", o_.epsilon);
  out.set_attribute(grp, "gap_tolerance", o_.gap_tolerance);
  out.set_attribute(grp, "sdp_unknowns", static_cast<std::int64_t>(bal.controllability.unknowns));
  out.set_attribute(grp, "sdp_blocks",
                    static_cast<std::int64_t>(bal.controllability.residuals.size() + 1));
  if (!bal.solved()) {
    const GramianSolve& bad =
        bal.controllability.status != LmiStatus::solved ? bal.controllability : bal.observability;
    throw NumericalError(concat("reduction.method = \"differential_balancing\": the ",
                                &bad == &bal.controllability ? "controllability" : "observability",
                                " Gramian is ", to_string(bad.status), " for rho = ", o_.rho, ": ",
                                bad.message));
  }
  const Index N = model.n();
  Index r = o_.order;
  if (r == 0) {  // the smallest r with 2 sum_{i>r} sigma_i^q <= tolerance
    r = N;
    double tail = 0.0;
    for (Index k = N; k >= 1; --k) {
      tail += 2.0 * bal.position_sigma[k - 1];
      if (tail > o_.tolerance) break;
      r = k - 1;
    }
    r = std::max<Index>(r, 1);
  }
  summary.stages.emplace_back("controllability_sdp_s", bal.controllability.seconds);
  summary.stages.emplace_back("observability_sdp_s", bal.observability.seconds);
  summary.stages.emplace_back("balancing_s", bal.seconds_balancing);
  ProjectionOptions ro;
  if (model.is_linear())
    ro.nonlinear = NonlinearTreatment::full;
  else if (o_.nonlinear == ExactForce::exact)
    ro.nonlinear =
        c.model->reduced_tensor() ? NonlinearTreatment::tensor : NonlinearTreatment::full;
  else
    ro.nonlinear =
        o_.nonlinear == ExactForce::tensor ? NonlinearTreatment::tensor : NonlinearTreatment::full;
  const auto t = Clock::now();
  std::vector<Index> orders{r};
  for (Index k : o_.compare_orders)
    if (k != r) orders.push_back(k);
  std::sort(orders.begin() + 1, orders.end());
  orders.erase(std::unique(orders.begin() + 1, orders.end()), orders.end());
  for (std::size_t i = 0; i < orders.size(); ++i) {
    ProjectedVariant v;
    v.r = orders[i];
    v.model = std::make_unique<ProjectedModel>(
        net.project(Matrix(bal.V_q.leftCols(v.r)), Matrix(bal.W_q.leftCols(v.r)), ro));
    (i == 0 ? result.main : result.others.emplace_back()) = std::move(v);
  }
  summary.stages.emplace_back("projection_s", seconds_since(t));
  summary.seconds = seconds_since(t_start);

  Vector bound(bal.sigma.size() + 1);
  for (Index k = 0; k <= bal.sigma.size(); ++k) bound[k] = bal.error_bound(k);
  summary.r = r;
  if (o_.order > 0)
    out.set_attribute(grp, "order_requested", static_cast<std::int64_t>(o_.order));
  else
    out.set_attribute(grp, "tolerance", o_.tolerance);
  out.set_attribute(grp, "nonlinear", std::string(to_string(ro.nonlinear)));
  out.set_attribute(grp, "first_order_bound_at_2r", bal.error_bound(std::min(2 * r, 2 * N)));
  summary.spectra.emplace_back(layout::kReductionGdHsv, bal.sigma);
  out.write_vector(layout::kReductionErrorBound, bound);
  summary.spectra.emplace_back(layout::kReductionPositionSv, bal.position_sigma);
  if (o_.store_bases) {
    out.write_matrix(layout::kReductionP, bal.controllability.X);
    out.write_matrix(layout::kReductionQ, bal.observability.X);
    out.write_matrix(layout::kReductionV, Matrix(bal.V_q.leftCols(r)));
    out.write_matrix(layout::kReductionW, Matrix(bal.W_q.leftCols(r)));
  }
  return result;
}

std::unique_ptr<ReductionMethod> read_differential_balancing(TableReader& r,
                                                             const std::string& source,
                                                             const std::filesystem::path& base) {
  DifferentialBalancingOptions o;
  KeyReader reader(r, "reduction", base);
  dbal_keys(o, reader);
  r.finish(method_keys_context(r, "differential_balancing"));
  require_order_or_tolerance(r, source, o.order, o.tolerance);
  require(o.rho > 0.0, r.where("rho"), ": reduction.rho must be > 0 (or inf), got ", o.rho);
  require(o.epsilon > 0.0 && o.epsilon < 1.0, r.where("epsilon"),
          ": reduction.epsilon must be in (0, 1), got ", o.epsilon);
  require(o.gap_tolerance > 0.0 && o.gap_tolerance < 1.0, r.where("gap_tolerance"),
          ": reduction.gap_tolerance must be in (0, 1), got ", o.gap_tolerance);
  require(o.max_iterations >= 1 && o.max_iterations <= 100000, r.where("max_iterations"),
          ": reduction.max_iterations must be in [1, 100000], got ", o.max_iterations);
  require(o.feasibility_tolerance > 0.0, r.where("feasibility_tolerance"),
          ": reduction.feasibility_tolerance must be > 0, got ", o.feasibility_tolerance);
  require(o.max_masses >= 1, r.where("max_masses"), ": reduction.max_masses must be >= 1, got ",
          o.max_masses);
  return std::make_unique<DifferentialBalancingMethod>(std::move(o));
}

void differential_balancing_method_keys(std::vector<KeyDoc>& rows) {
  DifferentialBalancingOptions o;
  KeyDocs docs(rows, "reduction");
  dbal_keys(o, docs);
}

}  // namespace

extern const MethodInfo kDifferentialBalancingMethod{
    "differential_balancing",
    "generalized differential balancing of a nonlinear second-order network (SDP Gramians over "
    "a region of element elongations), position-balanced projection",
    &read_differential_balancing, &differential_balancing_method_keys,
    &order_from_stored<layout::kReductionGdHsv, order_for_bound>};

}  // namespace mor::experiments
