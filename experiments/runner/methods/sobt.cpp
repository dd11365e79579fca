// SPDX-License-Identifier: GPL-3.0-or-later
// Method "sobt": structure-preserving second-order balanced truncation (Reis & Stykel 2008) of a
// second-order LTI model (the linear chain, a second-order model file, a linearised multibody
// model): the reduced model is again M_r q'' + D_r q' + K_r q = B_r u
// (reduction/balanced_truncation.hpp).
#include <ostream>

#include "experiments/runner/method.hpp"
#include "experiments/runner/methods/gramian_keys.hpp"
#include "experiments/runner/results_layout.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

constexpr Choice<SecondOrderProjection> kSobtProjections[] = {
    {"square_root", SecondOrderProjection::square_root},
    {"balancing_free", SecondOrderProjection::balancing_free},
    {"galerkin", SecondOrderProjection::galerkin}};
constexpr Choice<SecondOrderBtVariant> kVariants[] = {{"p", SecondOrderBtVariant::p},
                                                      {"v", SecondOrderBtVariant::v},
                                                      {"pv", SecondOrderBtVariant::pv},
                                                      {"vp", SecondOrderBtVariant::vp}};

struct SobtKeys {
  Index order = 0;
  double tolerance = 0.0;
  SecondOrderProjection projection = SecondOrderProjection::balancing_free;
  SecondOrderBtVariant variant = SecondOrderBtVariant::pv;
  GramianKeys gramians;
  bool store_bases = false;
  ParametricLinearKeys parametric;  // W = V (galerkin), the default
};

template <class O, class V>
void sobt_keys(O& o, V& v) {
  v(Key{"order", "", "r (set this or tolerance)"}, o.order);
  v(Key{"tolerance", "",
        "the smallest r with 2 sum_{i>r} sv_i <= tolerance over the variant's singular values "
        "(a heuristic: no bound exists)"},
    o.tolerance);
  v.choice(Key{"projection", "",
               "square_root, balancing_free, or galerkin (W = V: keeps M_r, D_r, K_r symmetric "
               "definite, so a passive model stays stable)"},
           o.projection, kSobtProjections);
  v.choice(
      Key{"variant", "", "the Gramian pair ranking the coordinates (as pyMOR's SOBTp/v/pv/vp)"},
      o.variant, kVariants);
  gramian_keys(o.gramians, v);
  v(Key{"store_bases", "", "write V and W (n x r) to the results file"}, o.store_bases);
  parametric_linear_keys(o.parametric, v);
}

class SobtMethod final : public ReductionMethod {
 public:
  SobtMethod(SobtKeys o, std::vector<std::string> parametric_given)
      : o_(std::move(o)), parametric_given_(std::move(parametric_given)) {}
  const ParametricLinearKeys* parametric_linear() const override { return &o_.parametric; }
  std::string_view name() const override { return "sobt"; }
  Family family() const override { return Family::linear; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    sobt_keys(o_, w);
  }
  Index order() const override { return o_.order; }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    require_linear_model(c, where, name());
    require(!c.model->linear_first_order(), where,
            ": reduction.method = \"sobt\" balances the positions and velocities of a "
            "second-order model M q'' + D q' + K q = B u; this model is first order, E x' = A x "
            "+ B u, with no such split: use \"bt\"");
    refuse_parametric_keys(c, where, parametric_given_);
    check_training_points(c, where, o_.parametric.training_points);
  }
  double estimate_seconds(const ExperimentConfig& c, double) const override {
    return linear_estimate_seconds(c, o_.gramians);
  }
  double estimate_bytes(const ExperimentConfig& c) const override {
    return linear_estimate_bytes(c, o_.gramians);
  }
  NormOptions norm_options() const override { return {o_.gramians.dense_limit, o_.gramians.adi()}; }
  ReducedModel reduce_linear(LtiOperator&, const SecondOrderSystem* sys) const override {
    require(sys != nullptr, "reduction.method = \"sobt\" needs a second-order model");
    SecondOrderBtOptions o;
    o.variant = o_.variant;
    o.projection = o_.projection;
    o.selection.order = o_.order;
    o.selection.tolerance = o_.tolerance;
    o.gramians = o_.gramians.options();
    const auto t0 = Clock::now();
    SecondOrderBtResult res = second_order_balanced_truncation(*sys, o);
    ReducedModel model;
    ReductionSummary& s = model.summary = ReductionSummary(std::string(name()));
    s.seconds = seconds_since(t0);
    s.r = res.r;
    model.second_order = res.reduced;
    // Direct initialization from the prvalue: operators are neither copyable nor movable.
    model.first_order.reset(new DenseLtiOperator(to_first_order(res.reduced)));
    s.spectral_abscissa = res.spectral_abscissa;
    s.stages = {{"gramians_s", res.gramians.seconds}, {"projection_s", res.seconds_projection}};
    s.spectra.emplace_back(layout::kReductionHsv, res.hsv);
    s.spectra.emplace_back(layout::kReductionSv, res.sv);
    KeyRecorder rec(s.details, layout::kReduction);
    sobt_keys(o_, rec);
    record_gramians(s.details, res.gramians);
    record_reduced_second_order(s.details, res.reduced);
    record_bases(s.details, o_.store_bases, res.V, res.W);
    model.V = std::move(res.V);
    model.W = std::move(res.W);
    model.basis_weights = hankel_weights(res.sv, res.r);
    model.bases_of_positions = true;
    return model;
  }

 private:
  SobtKeys o_;
  std::vector<std::string> parametric_given_;
};

std::unique_ptr<ReductionMethod> read_sobt(TableReader& r, const std::string& source,
                                           const std::filesystem::path& base_dir) {
  SobtKeys o;
  KeyReader reader(r, "reduction", base_dir);
  sobt_keys(o, reader);
  r.finish(method_keys_context(r, "sobt"));
  require_order_or_tolerance(r, source, o.order, o.tolerance);
  o.gramians.validate(r);
  check_parametric_linear_keys(r, o.parametric);
  return std::make_unique<SobtMethod>(std::move(o), keys_given(r, kParametricLinearKeys));
}

void sobt_method_keys(std::vector<KeyDoc>& rows) {
  SobtKeys o;
  KeyDocs docs(rows, "reduction");
  sobt_keys(o, docs);
}

}  // namespace

extern const MethodInfo kSobtMethod{
    "sobt",
    "second-order balanced truncation (Reis & Stykel 2008; variants p, v, pv, vp): the reduced "
    "model stays M_r q'' + D_r q' + K_r q = B_r u",
    &read_sobt, &sobt_method_keys, &order_from_stored<layout::kReductionHsv, order_for_bound>};

}  // namespace mor::experiments
