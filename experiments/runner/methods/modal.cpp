// SPDX-License-Identifier: GPL-3.0-or-later
// Method "modal": modal truncation of a second-order LTI model with symmetric M (definite) and K,
// or of a first-order one with a symmetric pencil (E definite, A symmetric)
// (reduction/modal_truncation.hpp): rigid modes (integrators) first, then by dominance or the
// lowest frequency.
// The reduction for undamped or rigid models, where balanced truncation has no Gramians.
#include <limits>
#include <ostream>

#include "experiments/runner/method.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"
#include "reduction/modal_truncation.hpp"

namespace mor::experiments {
namespace {

constexpr Choice<ModalSelection> kSelections[] = {
    {"dominance", ModalSelection::dominance},
    {"lowest_frequency", ModalSelection::lowest_frequency}};

struct ModalKeys {
  Index order = 0;
  ModalSelection selection = ModalSelection::dominance;
};

template <class O, class V>
void modal_keys(O& o, V& v) {
  v(Key{"order", "", "r, the modes kept (1 <= r <= n)"}, o.order);
  v.choice(Key{"selection", "", "after the rigid modes: the most dominant or the lowest"},
           o.selection, kSelections);
}

std::vector<std::int64_t> to_int64(const std::vector<Index>& v) {
  return std::vector<std::int64_t>(v.begin(), v.end());
}

class ModalMethod final : public ReductionMethod {
 public:
  explicit ModalMethod(ModalKeys o) : o_(o) {}
  std::string_view name() const override { return "modal"; }
  Family family() const override { return Family::linear; }
  void write_toml(std::ostream& os) const override {
    KeyWriter w(os);
    modal_keys(o_, w);
  }
  Index order() const override { return o_.order; }
  void check(const ExperimentConfig& c, const std::string& where) const override {
    require_linear_model(c, where, name());
  }
  double estimate_seconds(const ExperimentConfig& c, double) const override {
    const double n = static_cast<double>(c.model->linear_size());
    return 1e-8 * n * n * n;  // a dense symmetric eigenproblem
  }
  double estimate_bytes(const ExperimentConfig& c) const override {
    const double n = static_cast<double>(c.model->linear_size());
    return 6.0 * 8.0 * n * n;
  }
  ReducedModel reduce_linear(LtiOperator& full, const SecondOrderSystem* sys) const override {
    if (sys == nullptr) return reduce_first_order(full);
    ModalOptions mo;
    mo.order = o_.order;
    mo.selection = o_.selection;
    const ModalResult res = modal_truncation(*sys, mo);
    ReducedModel reduced;
    reduced.second_order = res.reduced;
    reduced.first_order.reset(new DenseLtiOperator(to_first_order(res.reduced)));
    double abscissa = -std::numeric_limits<double>::infinity();
    for (const Complex& l : reduced.first_order->poles()) abscissa = std::max(abscissa, l.real());
    record(res, abscissa, reduced);
    reduced.summary.spectra.emplace_back(layout::kReductionOmega, res.omega);
    record_reduced_second_order(reduced.summary.details, res.reduced);
    return reduced;
  }

 private:
  /// A first-order model: the modes of its symmetric pencil.
  ReducedModel reduce_first_order(const LtiOperator& full) const {
    ModalOptions mo;
    mo.order = o_.order;
    mo.selection = o_.selection;
    const ModalFirstOrderResult res = modal_truncation(full, mo);
    ReducedModel reduced;
    reduced.first_order.reset(new DenseLtiOperator(res.E, res.A, res.B, res.C, res.D_ff));
    reduced.second_order = from_first_order(res.E, res.A, res.B, res.C, res.D_ff);
    record(res, res.lambda(res.kept.front()), reduced);
    reduced.summary.spectra.emplace_back(layout::kReductionEigenvalues, res.lambda);
    record_reduced_first_order(reduced.summary.details, res.E, res.A, res.B, res.C, res.D_ff);
    return reduced;
  }

  /// What both forms record in /reduction and the summary: r, time, the modes' dominance, the
  /// kept modes and V.
  template <class Result>
  void record(const Result& res, double abscissa, ReducedModel& reduced) const {
    ReductionSummary& s = reduced.summary = ReductionSummary(std::string(name()));
    s.r = res.r;
    s.seconds = res.seconds;
    s.stages = {{"modes_s", res.seconds}};
    s.spectral_abscissa = abscissa;
    const std::string& grp = layout::kReduction;
    KeyRecorder rec(s.details, grp);
    modal_keys(o_, rec);
    s.spectra.emplace_back(layout::kReductionDominance, res.dominance);
    s.details.set_attribute(grp, "kept", to_int64(res.kept));
    s.details.write_matrix(layout::kReductionV, res.V);
  }

  ModalKeys o_;
};

std::unique_ptr<ReductionMethod> read_modal(TableReader& r, const std::string&,
                                            const std::filesystem::path& base_dir) {
  ModalKeys o;
  KeyReader reader(r, "reduction", base_dir);
  modal_keys(o, reader);
  r.finish(method_keys_context(r, "modal"));
  require(o.order >= 1, r.where("order"),
          ": reduction.method = \"modal\" needs order >= 1 (the modes kept), got ", o.order);
  return std::make_unique<ModalMethod>(o);
}

void modal_method_keys(std::vector<KeyDoc>& rows) {
  ModalKeys o;
  KeyDocs docs(rows, "reduction");
  modal_keys(o, docs);
}

}  // namespace

extern const MethodInfo kModalMethod{
    "modal",
    "modal truncation of a second-order model with symmetric M and K (rigid modes first, then "
    "by dominance or lowest frequency) or of a first-order model with a symmetric pencil (E "
    "definite, A symmetric)",
    &read_modal, &modal_method_keys};

}  // namespace mor::experiments
