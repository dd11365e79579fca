// SPDX-License-Identifier: GPL-3.0-or-later
// Method "none": the full model only.
#include "experiments/runner/method.hpp"

namespace mor::experiments {
namespace {

class NoReduction final : public ReductionMethod {
 public:
  std::string_view name() const override { return "none"; }
  Family family() const override { return Family::none; }
  void write_toml(std::ostream&) const override {}
};

std::unique_ptr<ReductionMethod> read_none(TableReader& r, const std::string&,
                                           const std::filesystem::path&) {
  r.finish(" (reduction.method = \"none\" takes no other key)");
  return std::make_unique<NoReduction>();
}

void no_keys(std::vector<KeyDoc>&) {}

}  // namespace

extern const MethodInfo kNoReduction{"none", "no reduction: the full model only", &read_none,
                                     &no_keys};

}  // namespace mor::experiments
