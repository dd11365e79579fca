// SPDX-License-Identifier: GPL-3.0-or-later
// How a projection treats the nonlinear force g(q) of M q'' + D q' + K q + g(q) = B u: the one
// options type of the projected model (reduction/projected_model.hpp) and of the full models'
// projection seam. The treatments and their costs per evaluation of g_r(q_r) = W^T g(V q_r)
// (r reduced coordinates, N full ones, m DEIM samples, k sampled elements):
//   full    g(V q_r) exactly: O(N r) (stencil) or O(m_e r) (network, every element)
//   tensor  the exact reduced cubic of a nearest-neighbour cubic stencil
//           (reduction/cubic_stencil_force.hpp): O(r^4 / 6), independent of N
//   deim    DEIM / Q-DEIM (reduction/deim.hpp) of the nodal or element force: O(m r)
//   ecsw    ECSW's weighted elements (reduction/ecsw.hpp): O(k r); networks only
#pragma once

#include <cstddef>
#include <string_view>

#include "reduction/deim.hpp"
#include "reduction/ecsw.hpp"

namespace mor {

enum class NonlinearTreatment {
  full,    ///< g(V q_r) on every node or element: O(N r) per evaluation
  tensor,  ///< the exact reduced cubic tensor of a cubic stencil: O(r^4 / 6), r^4 / 6 doubles
  deim,    ///< DEIM / Q-DEIM hyper-reduction: O(m r) per evaluation
  ecsw,    ///< ECSW: k weighted elements, O(k r); networks only (a stencil refuses it)
};
/// "full", "tensor", "deim", "ecsw"; @throws InvalidArgument naming the value.
NonlinearTreatment parse_nonlinear_treatment(std::string_view name);
std::string_view to_string(NonlinearTreatment t);

/// What the DEIM samples of a network are.
enum class DeimSampling {
  nodes,     ///< rows of G^T phi(G q), each with the elements in its support (the default)
  elements,  ///< rows of phi(G q), unassembled (UDEIM)
};
/// "nodes", "elements"; @throws InvalidArgument naming the value.
DeimSampling parse_deim_sampling(std::string_view name);
std::string_view to_string(DeimSampling s);

/// The tensor treatment refuses to store more than this (2 GiB) by default.
inline constexpr std::size_t kDefaultReducedTensorMemoryLimit = std::size_t{1} << 31;

/// How a projection treats the nonlinear force. The results pointed to are read during the
/// construction of the projected model only (it copies what it needs).
struct ProjectionOptions {
  /// Exact by default; the runner's projections name theirs.
  NonlinearTreatment nonlinear = NonlinearTreatment::full;
  /// NonlinearTreatment::deim: the interpolation of the nodal (U: N x m) or element (m_e x m)
  /// force, as returned by deim(); required for a nonlinear model.
  const DeimResult* deim = nullptr;
  /// What deim's basis interpolates (networks; a stencil samples nodes).
  DeimSampling sampling = DeimSampling::nodes;
  /// NonlinearTreatment::ecsw: the weighted elements; required for a nonlinear network.
  const EcswResult* ecsw = nullptr;
  /// The tensor treatment throws InvalidArgument if its tensor would exceed this many bytes.
  std::size_t tensor_memory_limit = kDefaultReducedTensorMemoryLimit;
};

}  // namespace mor
