// SPDX-License-Identifier: GPL-3.0-or-later
// The registry of model kinds: one X(...) entry per kind, defined in experiments/runner/models/.
#include <algorithm>

#include "experiments/runner/model_kind.hpp"

#define MOR_MODEL_KINDS(X)                                                            \
  X(kMassSpringChainKind)                                                             \
  X(kFileModelKind)                                                                   \
  X(kLinearisedMultibodyKind)                                                         \
  X(kPendulumKind) X(kBricardKind) X(kFlyballKind) X(kRobotKind) X(kNetworkModelKind) \
      X(kLatticeModelKind)

namespace mor::experiments {

#define MOR_DECLARE_KIND(kind) extern const ModelKindInfo kind;
MOR_MODEL_KINDS(MOR_DECLARE_KIND)
#undef MOR_DECLARE_KIND

const std::vector<ModelKindInfo>& model_kinds() {
#define MOR_LIST_KIND(kind) kind,
  static const std::vector<ModelKindInfo> kinds = {MOR_MODEL_KINDS(MOR_LIST_KIND)};
#undef MOR_LIST_KIND
  return kinds;
}

const ModelKindInfo* find_model_kind(std::string_view name) {
  const auto& kinds = model_kinds();
  const auto it = std::find_if(kinds.begin(), kinds.end(),
                               [&](const ModelKindInfo& k) { return k.name == name; });
  return it == kinds.end() ? nullptr : &*it;
}

}  // namespace mor::experiments
