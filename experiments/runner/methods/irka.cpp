// SPDX-License-Identifier: GPL-3.0-or-later
// Method "irka": H2-optimal reduction by IRKA (Gugercin, Antoulas, Beattie 2008) of any stable
// LTI model, tangential for MIMO, first order; or, with structure = "second_order", SOR-IRKA
// (Wyatt 2012) of a second-order model, whose reduced model stays M_r q'' + D_r q' + K_r q = B_r u
// (reduction/irka.hpp). A run that does not converge within max_iterations, or whose reduced
// model is unstable, is an error naming its status unless allow_unconverged is set; then the
// status and message are recorded in /reduction and the run goes on.
#include <cmath>
#include <ostream>

#include "experiments/runner/method.hpp"
#include "experiments/runner/methods/gramian_keys.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/balanced_truncation.hpp"
#include "reduction/irka.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

enum class IrkaStructure { first_order, second_order };

constexpr Choice<IrkaStructure> kStructures[] = {{"first_order", IrkaStructure::first_order},
                                                 {"second_order", IrkaStructure::second_order}};
constexpr Choice<IrkaInitialShifts> kInitial[] = {{"ritz", IrkaInitialShifts::ritz},
                                                  {"given", IrkaInitialShifts::given}};
constexpr Choice<IrkaCriterion> kCriteria[] = {{"shifts", IrkaCriterion::shifts},
                                               {"h2", IrkaCriterion::h2}};
constexpr Choice<SoIrkaProjection> kSoIrkaProjections[] = {
    {"two_sided", SoIrkaProjection::two_sided}, {"galerkin", SoIrkaProjection::galerkin}};

struct IrkaKeys {
  Index order = 0;
  IrkaStructure structure = IrkaStructure::first_order;
  double tolerance = 1e-4;
  IrkaCriterion criterion = IrkaCriterion::shifts;
  Index max_iterations = 100;
  IrkaInitialShifts initial_shifts = IrkaInitialShifts::ritz;
  Index ritz_steps = 0;
  bool surrogate = true;
  std::vector<double> shifts_re, shifts_im;
  SoIrkaProjection projection = SoIrkaProjection::two_sided;
  Index inner_max_iterations = 200;
  bool h2_history = true;
  Index dense_limit = 1500;
  Index bt_comparison_limit = 600;
  bool allow_unconverged = false;
  bool store_bases = false;
  ParametricLinearKeys parametric;
};

template <class O, class V>
void irka_keys(O& o, V& v) {
  v(Key{"order", "", "r, the reduced order (states; coordinates for second_order)"}, o.order);
  v.choice(Key{"structure", "",
               "first_order (IRKA, tangential for MIMO) or second_order (SOR-IRKA: the reduced "
               "model stays M_r, D_r, K_r; needs a second-order model)"},
           o.structure, kStructures);
  v(Key{"tolerance", "", "stop when the criterion's relative change drops below this"},
    o.tolerance);
  v.choice(Key{"criterion", "",
               "shifts (relative change of the shift set) or h2 (relative H2 distance of "
               "consecutive reduced models, as pyMOR's conv_crit = 'h2')"},
           o.criterion, kCriteria);
  v(Key{"max_iterations", "", "iteration limit (not converging is an error unless allowed)"},
    o.max_iterations);
  v.choice(Key{"initial_shifts", "",
               "ritz (mirrored Ritz values of the pencil from inverse Arnoldi, spread over "
               "log |lambda|) or given (shifts_re, shifts_im)"},
           o.initial_shifts, kInitial);
  v(Key{"ritz_steps", "",
        "ritz: inverse Arnoldi steps (0: r + max(5, r / 4) with the surrogate, else "
        "max(2 r, r + 10))"},
    o.ritz_steps);
  v(Key{"surrogate", "",
        "first_order: MF-IRKA, the next shifts from IRKA on the Loewner surrogate of every "
        "iteration's data (fewer full-order iterations; same fixed points); false: plain IRKA"},
    o.surrogate);
  v(Key{"shifts_re", "1/s", "given: real parts of the r initial shifts (Re > 0)"}, o.shifts_re);
  v(Key{"shifts_im", "1/s",
        "given: imaginary parts (empty: all real; the set must be closed under conjugation)"},
    o.shifts_im);
  v.choice(Key{"projection", "",
               "second_order: two_sided (bitangential Hermite interpolation) or galerkin (W = V: "
               "keeps M_r, D_r, K_r symmetric definite, so a passive model stays stable)"},
           o.projection, kSoIrkaProjections);
  v(Key{"inner_max_iterations", "", "second_order: limit of the inner IRKA on the 2r states"},
    o.inner_max_iterations);
  v(Key{"h2_history", "",
        "first_order: compute ||G||_H2 first (dense up to dense_limit, LR-ADI beyond) and record "
        "the H2 error estimate of every iteration"},
    o.h2_history);
  v(Key{"dense_limit", "", "dense norms (and this method's ||G||_H2) up to this many states"},
    o.dense_limit);
  v(Key{"bt_comparison_limit", "",
        "first_order: up to this many states, BT's model of the same order (dense Gramians) is "
        "the comparison: its H2 error is recorded, IRKA restarts from its mirrored poles when "
        "its own error is more than 1.05x BT's (keeping the better), and the message states the "
        "ratio if it stays above; 0: no comparison"},
    o.bt_comparison_limit);
  v(Key{"allow_unconverged", "",
        "keep a model that did not converge or is unstable (its status is recorded); else an "
        "error"},
    o.allow_unconverged);
  v(Key{"store_bases", "", "write V and W to the results file"}, o.store_bases);
  parametric_linear_keys(o.parametric, v);
}

void record_history(io::RecordSink& out, const std::vector<IrkaIteration>& history,
                    const std::vector<Complex>& shifts) {
  const Index k = static_cast<Index>(history.size());
  const Index r = static_cast<Index>(shifts.size());
  Vector change(k), model(k), interp(k), h2(k), secs(k), s_order(k), s_iterations(k);
  Matrix re(k, r), im(k, r);
  for (Index i = 0; i < k; ++i) {
    const IrkaIteration& h = history[static_cast<std::size_t>(i)];
    change(i) = h.shift_change;
    model(i) = h.model_change;
    interp(i) = h.interpolation_residual;
    h2(i) = h.h2_error;
    secs(i) = h.seconds;
    s_order(i) = static_cast<double>(h.surrogate_order);
    s_iterations(i) = static_cast<double>(h.surrogate_iterations);
    for (Index j = 0; j < r; ++j) {
      re(i, j) = h.shifts[static_cast<std::size_t>(j)].real();
      im(i, j) = h.shifts[static_cast<std::size_t>(j)].imag();
    }
  }
  const std::string& hg = layout::kReductionHistory;
  out.create_group(hg);
  out.set_attribute(hg, "description",
                    std::string("row i: iteration i + 1; shifts used to build V and W, the "
                                "relative change to the next shifts, the relative H2 distance "
                                "to the previous model, the previous model's "
                                "interpolation residual and H2 error estimate at these shifts "
                                "(NaN: not available); MF-IRKA: the surrogate's order after "
                                "the iteration and the IRKA iterations on it that gave the next "
                                "shifts (0: the iteration's own mirrored poles gave them)"));
  out.write_vector(layout::child(hg, "shift_change"), change);
  out.write_vector(layout::child(hg, "model_change"), model);
  out.write_vector(layout::child(hg, "interpolation_residual"), interp);
  out.write_vector(layout::child(hg, "h2_error"), h2);
  out.write_vector(layout::child(hg, "seconds"), secs);
  out.write_vector(layout::child(hg, "surrogate_order"), s_order);
  out.write_vector(layout::child(hg, "surrogate_iterations"), s_iterations);
  out.write_matrix(layout::child(hg, "shifts_re"), re);
  out.write_matrix(layout::child(hg, "shifts_im"), im);
  Matrix final_shifts(r, 2);
  for (Index j = 0; j < r; ++j)
    final_shifts.row(j) << shifts[static_cast<std::size_t>(j)].real(),
        shifts[static_cast<std::size_t>(j)].imag();
  out.write_matrix(layout::kReductionShifts, final_shifts);
}

class IrkaMethod final : public ReductionMethod {
 public:
  IrkaMethod(IrkaKeys o, std::vector<std::string> parametric_given)
      : o_(std::move(o)), parametric_given_(std::move(parametric_given)) {}
  const ParametricLinearKeys* parametric_linear() const override { return &o_.parametric; }
  std::string_view name() const override { return "irka"; }
  Family family() const override { return Family::linear; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    irka_keys(o_, w);
  }
  Index order() const override { return o_.order; }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    require_linear_model(c, where, name());
    refuse_parametric_keys(c, where, parametric_given_);
    check_training_points(c, where, o_.parametric.training_points);
    require(o_.structure == IrkaStructure::first_order || !c.model->linear_first_order(), where,
            ": reduction.structure = \"second_order\" needs a second-order model; model.type = \"",
            c.model->kind(), "\" is first order: use structure = \"first_order\"");
    const double n = o_.structure == IrkaStructure::second_order
                         ? static_cast<double>(c.model->linear_size())
                         : first_order_states(c);
    require(static_cast<double>(o_.order) <= n, where, ": reduction.order = ", o_.order,
            " exceeds the model's ", n,
            o_.structure == IrkaStructure::second_order ? " coordinates" : " states");
  }
  /// About 30 iterations of r shifted factorizations (complex for pairs) of size n, measured at
  /// roughly 2e-7 s per state each on the chain, plus the dense ||G||_H2 if asked for.
  double estimate_seconds(const ExperimentConfig& c, double) const override {
    const double n = first_order_states(c);
    const double h2 =
        o_.h2_history ? (n <= static_cast<double>(o_.dense_limit) ? 5e-9 * n * n * n : 1.5e-5 * n)
                      : 0.0;
    return 30.0 * static_cast<double>(o_.order) * 2e-7 * n + h2;
  }
  /// V, W and a few n x r blocks; the factorizations live in the operator's cache.
  double estimate_bytes(const ExperimentConfig& c) const override {
    return 8.0 * 8.0 * first_order_states(c) * static_cast<double>(o_.order);
  }
  NormOptions norm_options() const override { return {o_.dense_limit, AdiOptions{}}; }

  ReducedModel reduce_linear(LtiOperator& full, const SecondOrderSystem* sys) const override {
    std::vector<Complex> shifts;
    for (std::size_t i = 0; i < o_.shifts_re.size(); ++i)
      shifts.emplace_back(o_.shifts_re[i], o_.shifts_im.empty() ? 0.0 : o_.shifts_im[i]);
    return o_.structure == IrkaStructure::first_order ? first_order(full, shifts)
                                                      : second_order(sys, shifts);
  }

 private:
  void refuse_unless_allowed(IrkaStatus status, const std::string& message) const {
    if (status == IrkaStatus::converged || o_.allow_unconverged) return;
    throw NumericalError(detail::concat("reduction.method = \"irka\": ", message,
                                        " (reduction.allow_unconverged = true keeps the model)"));
  }

  ReducedModel first_order(LtiOperator& full, const std::vector<Complex>& shifts) const {
    const auto t0 = Clock::now();
    IrkaOptions io;
    io.order = o_.order;
    io.tolerance = o_.tolerance;
    io.criterion = o_.criterion;
    io.max_iterations = o_.max_iterations;
    io.initial = o_.initial_shifts;
    io.ritz_steps = o_.ritz_steps;
    io.surrogate = o_.surrogate;
    io.shifts = shifts;
    double h2_seconds = 0.0;
    // BT's model of the same order as the comparison (IrkaOptions::comparison_*): dense
    // Gramians, so only up to bt_comparison_limit states; it needs ||G||_H2.
    const bool compare =
        o_.bt_comparison_limit > 0 && full.n() <= o_.bt_comparison_limit && o_.order < full.n();
    if (o_.h2_history || compare) {
      const auto th = Clock::now();
      io.full_h2_norm =
          full.n() <= o_.dense_limit ? h2_norm_dense(full) : h2_norm_low_rank(full).norm;
      h2_seconds = seconds_since(th);
    }
    double comparison_seconds = 0.0;
    std::string comparison = "none";
    if (compare) {
      const auto tc = Clock::now();
      BtOptions bo;
      bo.selection.order = o_.order;
      bo.gramians.method = GramianMethod::dense;
      try {
        const BtResult bt = balanced_truncation(full, bo);
        io.comparison_Er = bt.Er;
        io.comparison_Ar = bt.Ar;
        io.comparison_Br = bt.Br;
        io.comparison_Cr = bt.Cr;
        comparison = "bt";
      } catch (const InvalidArgument& e) {
        // (an order above the numerical rank of the Gramians' product): IRKA alone
        comparison = detail::concat("none: BT failed: ", e.what());
      } catch (const NumericalError& e) {
        comparison = detail::concat("none: BT failed: ", e.what());
      }
      comparison_seconds = seconds_since(tc);
    }
    IrkaResult res = irka(full, io);
    refuse_unless_allowed(res.status, res.message);
    ReducedModel model;
    model.second_order = from_first_order(res.Er, res.Ar, res.Br, res.Cr, res.Dr);
    model.first_order = std::make_unique<DenseLtiOperator>(res.Er, res.Ar, res.Br, res.Cr, res.Dr);
    ReductionSummary& s = record_common(model, res, seconds_since(t0));
    s.stages = {{"h2_norm_full_s", h2_seconds},
                {"comparison_s", comparison_seconds},
                {"initial_shifts_s", res.initial_seconds},
                {"iterations_s", res.seconds - res.initial_seconds}};
    io::RecordSink& out = s.details;
    const std::string& grp = layout::kReduction;
    if (o_.h2_history || compare) out.set_attribute(grp, "h2_norm_full", io.full_h2_norm);
    // The comparison and the best-iterate choice (NaN where not evaluated): relative H2 errors.
    out.set_attribute(grp, "comparison", comparison);
    const double g = io.full_h2_norm > 0.0 ? io.full_h2_norm : std::nan("");
    out.set_attribute(grp, "h2_error", res.h2_error / g);
    out.set_attribute(grp, "comparison_h2_error", res.comparison_h2_error / g);
    out.set_attribute(grp, "h2_error_ratio", res.h2_error / res.comparison_h2_error);
    out.set_attribute(grp, "first_run_h2_error", res.first_run_h2_error / g);
    out.set_attribute(grp, "runs", static_cast<std::int64_t>(res.runs));
    out.set_attribute(grp, "total_iterations", static_cast<std::int64_t>(res.total_iterations));
    out.set_attribute(grp, "returned_iteration", static_cast<std::int64_t>(res.returned_iteration));
    record_history(out, res.history, res.shifts);
    record_reduced_first_order(out, res.Er, res.Ar, res.Br, res.Cr, res.Dr);
    record_bases(out, o_.store_bases, res.V, res.W);
    model.V = std::move(res.V);
    model.W = std::move(res.W);
    return model;
  }

  ReducedModel second_order(const SecondOrderSystem* sys,
                            const std::vector<Complex>& shifts) const {
    require(sys != nullptr,
            "reduction.method = \"irka\" with structure = \"second_order\" needs a second-order "
            "model");
    const auto t0 = Clock::now();
    SoIrkaOptions so;
    so.order = o_.order;
    so.tolerance = o_.tolerance;
    so.criterion = o_.criterion;
    so.max_iterations = o_.max_iterations;
    so.projection = o_.projection;
    so.initial = o_.initial_shifts;
    so.ritz_steps = o_.ritz_steps;
    so.shifts = shifts;
    so.inner_max_iterations = o_.inner_max_iterations;
    SoIrkaResult res = second_order_irka(*sys, so);
    refuse_unless_allowed(res.status, res.message);
    ReducedModel model;
    model.second_order = res.reduced;
    model.first_order.reset(new DenseLtiOperator(to_first_order(res.reduced)));
    ReductionSummary& s = record_common(model, res, seconds_since(t0));
    s.stages = {{"initial_shifts_s", res.initial_seconds},
                {"iterations_s", res.seconds - res.initial_seconds}};
    io::RecordSink& out = s.details;
    record_history(out, res.history, res.shifts);
    Vector inner(static_cast<Index>(res.inner_iterations.size()));
    for (Index i = 0; i < inner.size(); ++i)
      inner(i) = static_cast<double>(res.inner_iterations[static_cast<std::size_t>(i)]);
    out.write_vector(layout::child(layout::kReductionHistory, "inner_iterations"), inner);
    record_reduced_second_order(out, res.reduced);
    record_bases(out, o_.store_bases, res.V, res.W);
    model.V = std::move(res.V);
    model.W = std::move(res.W);
    model.bases_of_positions = true;
    return model;
  }

  /// What both structures report: the order, the iteration's status with its reason, the
  /// spectral abscissa, the effective keys, the iterations and shifted solves.
  template <class Result>
  ReductionSummary& record_common(ReducedModel& model, const Result& res, double seconds) const {
    ReductionSummary& s = model.summary = ReductionSummary(std::string(name()));
    s.r = res.r;
    s.seconds = seconds;
    s.spectral_abscissa = res.spectral_abscissa;
    s.statuses.push_back({"", std::string(to_string(res.status)), res.message});
    const std::string& grp = layout::kReduction;
    KeyRecorder rec(s.details, grp);
    irka_keys(o_, rec);
    s.details.set_attribute(grp, "iterations", static_cast<std::int64_t>(res.iterations));
    s.details.set_attribute(grp, "shifted_solves", static_cast<std::int64_t>(res.shifted_solves));
    return s;
  }

  IrkaKeys o_;
  std::vector<std::string> parametric_given_;
};

std::unique_ptr<ReductionMethod> read_irka(TableReader& r, const std::string&,
                                           const std::filesystem::path& base_dir) {
  IrkaKeys o;
  KeyReader reader(r, "reduction", base_dir);
  irka_keys(o, reader);
  r.finish(method_keys_context(r, "irka"));
  require(o.order >= 1, r.where("order"), ": reduction.method = \"irka\" needs order >= 1, got ",
          o.order);
  require(o.tolerance > 0.0, r.where("tolerance"), ": reduction.tolerance must be > 0, got ",
          o.tolerance);
  require(o.max_iterations >= 1, r.where("max_iterations"),
          ": reduction.max_iterations must be >= 1, got ", o.max_iterations);
  require(o.inner_max_iterations >= 1, r.where("inner_max_iterations"),
          ": reduction.inner_max_iterations must be >= 1, got ", o.inner_max_iterations);
  require(o.ritz_steps >= 0, r.where("ritz_steps"), ": reduction.ritz_steps must be >= 0, got ",
          o.ritz_steps);
  require(o.dense_limit >= 1, r.where("dense_limit"), ": reduction.dense_limit must be >= 1, got ",
          o.dense_limit);
  require(o.bt_comparison_limit >= 0, r.where("bt_comparison_limit"),
          ": reduction.bt_comparison_limit must be >= 0, got ", o.bt_comparison_limit);
  if (o.initial_shifts == IrkaInitialShifts::given) {
    require(static_cast<Index>(o.shifts_re.size()) == o.order, r.where("shifts_re"),
            ": reduction.initial_shifts = \"given\" needs ", o.order,
            " values in reduction.shifts_re (one per reduced order), got ", o.shifts_re.size());
    require(o.shifts_im.empty() || o.shifts_im.size() == o.shifts_re.size(), r.where("shifts_im"),
            ": reduction.shifts_im has ", o.shifts_im.size(), " values, shifts_re ",
            o.shifts_re.size());
  } else {
    require(o.shifts_re.empty() && o.shifts_im.empty(), r.where("shifts_re"),
            ": reduction.shifts_re / shifts_im need initial_shifts = \"given\"");
  }
  check_parametric_linear_keys(r, o.parametric);
  return std::make_unique<IrkaMethod>(std::move(o), keys_given(r, kParametricLinearKeys));
}

void irka_method_keys(std::vector<KeyDoc>& rows) {
  IrkaKeys o;
  KeyDocs docs(rows, "reduction");
  irka_keys(o, docs);
}

}  // namespace

extern const MethodInfo kIrkaMethod{
    "irka",
    "H2-optimal reduction by IRKA (Gugercin, Antoulas, Beattie 2008; tangential for MIMO), or "
    "SOR-IRKA keeping M_r, D_r, K_r (structure = \"second_order\")",
    &read_irka, &irka_method_keys};

}  // namespace mor::experiments
