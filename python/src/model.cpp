// SPDX-License-Identifier: GPL-3.0-or-later
// mor.Model: models of the registered kinds (read by the kind's own key reader) and in-memory
// LTI systems (the library's DescriptorSystem / SecondOrderSystem), simulated and reduced by the
// same FullModel and LtiOperator the program uses.
#include <ostream>

#include "experiments/runner/models/lti_model.hpp"
#include "experiments/runner/results_layout.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "python/src/bindings.hpp"
#include "src/io/model_files.hpp"

namespace mor::python {
namespace {

/// The kind of mor.LtiModel and mor.SecondOrderModel: a linear system held in memory.
class MemorySpec final : public ModelSpec {
 public:
  explicit MemorySpec(std::shared_ptr<const LinearSystem> system)
      : ModelSpec(experiments::lti_structure(*system)), system_(std::move(system)) {}
  std::string_view kind() const override { return "memory"; }
  void write_toml(std::ostream& os) const override {
    os << "# an in-memory model (mor.LtiModel or mor.SecondOrderModel)\n";
  }
  void record(io::ResultsWriter& out) const override {
    out.set_attribute(experiments::layout::kModel, "form",
                      std::string(first_order() ? "first_order" : "second_order"));
    out.set_attribute(experiments::layout::kModel, "n", static_cast<std::int64_t>(size()));
  }
  LinearSystem linear_system() const override { return *system_; }
  std::unique_ptr<FullModel> build(SparseBackend solver) const override {
    return std::make_unique<experiments::LtiFullModel>(system_, solver);
  }

 private:
  std::shared_ptr<const LinearSystem> system_;
};

}  // namespace

std::shared_ptr<const ModelSpec> memory_spec(std::shared_ptr<const LinearSystem> system) {
  return std::make_shared<MemorySpec>(std::move(system));
}

std::shared_ptr<const LinearSystem> Model::linear_system() const {
  require(!projected_rom, "a projected nonlinear model (reduction.method = \"",
          reduction ? reduction->method : "", "\") is not a linear system");
  require(parameters.empty(),
          "a model made with parameters={...} is a family, not one linear system: make it at a "
          "point (the same keys with values)");
  if (!system) {
    // Compressed storage, so that model.A can be a view of it (kinds may build it otherwise).
    LinearSystem s = spec->linear_system();
    std::visit(
        [](auto& sys) {
          if constexpr (std::is_same_v<std::decay_t<decltype(sys)>, DescriptorSystem>) {
            for (SparseMatrix* X : {&sys.E, &sys.A, &sys.B, &sys.C}) X->makeCompressed();
          } else {
            for (SparseMatrix* X : {&sys.M, &sys.D, &sys.K, &sys.B, &sys.Cp, &sys.Cv})
              X->makeCompressed();
          }
        },
        s);
    system = std::make_shared<const LinearSystem>(std::move(s));
  }
  return system;
}

bool Model::first_order() const {
  if (projected_rom) return false;
  return spec->first_order();
}

Index Model::n() const {
  if (projected_rom) return projected_rom->main.r;
  return spec->size();
}

std::unique_ptr<LtiOperator> Model::lti_operator(std::shared_ptr<FullModel>& full) const {
  if (dense_first)
    return std::make_unique<DenseLtiOperator>(dense_first->E, dense_first->A, dense_first->B,
                                              dense_first->C, dense_first->D);
  require(!projected_rom, "a projected nonlinear model (reduction.method = \"",
          reduction ? reduction->method : "", "\") has no transfer function: simulate it");
  require(parameters.empty(),
          "a model made with parameters={...} is a family, not one transfer function: make it "
          "at a point (the same keys with values)");
  // The operator of the model the program builds (the chain's is matrix-free), from the default
  // sparse solver of [simulation].
  full = spec->build(SparseBackend::cholmod);
  return full->lti_operator();
}

}  // namespace mor::python
