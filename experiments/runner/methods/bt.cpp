// SPDX-License-Identifier: GPL-3.0-or-later
// Method "bt": first-order balanced truncation of any stable LTI model (the linear chain, a model
// file, a linearised multibody model), square-root or balancing-free, with dense or low-rank
// Gramians (reduction/balanced_truncation.hpp). Its reduced model is first order.
#include <ostream>

#include "experiments/runner/method.hpp"
#include "experiments/runner/methods/gramian_keys.hpp"
#include "experiments/runner/results_layout.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

constexpr Choice<BtProjection> kBtProjections[] = {
    {"square_root", BtProjection::square_root}, {"balancing_free", BtProjection::balancing_free}};

/// BtOptions::reference_extra_order of every run up to kReferenceMaxStates states (the surrogate
/// the analysis uses); beyond, its two n x q bases (1.9 GB at N = 10^6 and q = 120) would cost
/// the reduction more memory and time than the analysis gains, and the subspace method runs.
constexpr Index kReferenceExtraOrder = 100;
constexpr Index kReferenceMaxStates = 200000;

struct BtKeys {
  Index order = 0;
  double tolerance = 0.0;
  BtProjection projection = BtProjection::square_root;
  GramianKeys gramians;
  bool store_bases = false;
  ParametricLinearKeys parametric;
};

template <class O, class V>
void bt_keys(O& o, V& v) {
  v(Key{"order", "", "r (set this or tolerance)"}, o.order);
  v(Key{"tolerance", "", "the smallest r with 2 sum_{i>r} sigma_i <= tolerance (or order)"},
    o.tolerance);
  v.choice(Key{"projection", "",
               "square_root (balanced realisation, W^T E V = I) or balancing_free (orthonormal "
               "V, W)"},
           o.projection, kBtProjections);
  gramian_keys(o.gramians, v);
  v(Key{"store_bases", "", "write V and W (n x r) to the results file"}, o.store_bases);
  parametric_linear_keys(o.parametric, v);
}

class BtMethod final : public ReductionMethod {
 public:
  BtMethod(BtKeys o, std::vector<std::string> parametric_given)
      : o_(std::move(o)), parametric_given_(std::move(parametric_given)) {}
  std::string_view name() const override { return "bt"; }
  Family family() const override { return Family::linear; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    bt_keys(o_, w);
  }
  Index order() const override { return o_.order; }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    require_linear_model(c, where, name());
    refuse_parametric_keys(c, where, parametric_given_);
    check_training_points(c, where, o_.parametric.training_points);
  }
  const ParametricLinearKeys* parametric_linear() const override { return &o_.parametric; }
  double estimate_seconds(const ExperimentConfig& c, double) const override {
    return linear_estimate_seconds(c, o_.gramians);
  }
  double estimate_bytes(const ExperimentConfig& c) const override {
    return linear_estimate_bytes(c, o_.gramians);
  }
  NormOptions norm_options() const override { return {o_.gramians.dense_limit, o_.gramians.adi()}; }
  ReducedModel reduce_linear(LtiOperator& full, const SecondOrderSystem*) const override {
    BtOptions o;
    o.selection.order = o_.order;
    o.selection.tolerance = o_.tolerance;
    o.projection = o_.projection;
    o.gramians = o_.gramians.options();
    // A surrogate of G for the analysis's H-infinity error (about r more columns in the
    // projection step).
    o.reference_extra_order = full.n() <= kReferenceMaxStates ? kReferenceExtraOrder : 0;
    const auto t0 = Clock::now();
    BtResult res = balanced_truncation(full, o);
    ReducedModel model;
    ReductionSummary& s = model.summary = ReductionSummary(std::string(name()));
    s.seconds = seconds_since(t0);
    s.r = res.r;
    model.second_order = from_first_order(res.Er, res.Ar, res.Br, res.Cr, res.Dr);
    model.first_order = std::make_unique<DenseLtiOperator>(res.Er, res.Ar, res.Br, res.Cr, res.Dr);
    s.spectral_abscissa = res.spectral_abscissa;
    s.error_bound = res.error_bound;
    s.bound_is_complete = res.bound_is_complete;
    if (res.bound_is_complete) model.error_bound = res.error_bound;
    if (res.gramians.converged) model.h2_full = res.h2_norm;
    if (res.q > 0) {
      model.reference = std::make_unique<DenseLtiOperator>(Matrix::Identity(res.q, res.q), res.Aref,
                                                           res.Bref, res.Cref, res.Dr);
      model.reference_bound = res.reference_bound;
    }
    if (res.CZc.size() != 0 && res.gramians.converged && res.gramians.low_rank_c.has_value()) {
      model.CZc = std::move(res.CZc);
      model.adi_shifts = res.gramians.low_rank_c->shifts;
      model.adi_residual = res.gramians.low_rank_c->residual_history.empty()
                               ? -1.0
                               : res.gramians.low_rank_c->residual_history.back();
    }
    s.stages = {{"gramians_s", res.gramians.seconds}, {"projection_s", res.seconds_projection}};
    s.spectra.emplace_back(layout::kReductionHsv, res.hsv);
    KeyRecorder rec(s.details, layout::kReduction);
    bt_keys(o_, rec);
    record_gramians(s.details, res.gramians);
    record_reduced_first_order(s.details, res.Er, res.Ar, res.Br, res.Cr, res.Dr);
    record_bases(s.details, o_.store_bases, res.V, res.W);
    model.V = std::move(res.V);
    model.W = std::move(res.W);
    model.basis_weights = hankel_weights(res.hsv, res.r);
    return model;
  }

 private:
  BtKeys o_;
  std::vector<std::string> parametric_given_;
};

std::unique_ptr<ReductionMethod> read_bt(TableReader& r, const std::string& source,
                                         const std::filesystem::path& base_dir) {
  BtKeys o;
  KeyReader reader(r, "reduction", base_dir);
  bt_keys(o, reader);
  r.finish(method_keys_context(r, "bt"));
  require_order_or_tolerance(r, source, o.order, o.tolerance);
  o.gramians.validate(r);
  check_parametric_linear_keys(r, o.parametric);
  return std::make_unique<BtMethod>(std::move(o), keys_given(r, kParametricLinearKeys));
}

void bt_method_keys(std::vector<KeyDoc>& rows) {
  BtKeys o;
  KeyDocs docs(rows, "reduction");
  bt_keys(o, docs);
}

}  // namespace

extern const MethodInfo kBtMethod{
    "bt",
    "first-order balanced truncation (square-root or balancing-free; dense or low-rank "
    "Gramians) of a stable LTI model; error bound 2 sum_{i>r} sigma_i",
    &read_bt, &bt_method_keys, &order_from_stored<layout::kReductionHsv, order_for_bound>};

}  // namespace mor::experiments
