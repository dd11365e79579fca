// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/lattice.hpp"

#include <cmath>
#include <limits>

#include "src/core/errors.hpp"

namespace mor {

void validate(const LatticeParameters& p) {
  require(p.nx >= 1, "lattice: nx must be >= 1, got ", p.nx);
  require(p.ny >= 0, "lattice: ny must be >= 1 (or 0: ny = nx), got ", p.ny);
  // G has 2 entries per element and the Newton matrices 5 per row, indexed by int.
  constexpr double kMaxN = static_cast<double>(std::numeric_limits<int>::max()) / 8.0;
  require(static_cast<double>(p.nx) * static_cast<double>(p.rows()) <= kMaxN,
          "lattice: nx ny = ", static_cast<double>(p.nx) * static_cast<double>(p.rows()),
          " nodes exceeds the largest supported size ", kMaxN);
  validate_spring_constants("lattice", p.m, p.k_l, p.d, p.k_n, p.alpha, p.beta);
  for (const auto* list : {&p.inputs, &p.outputs})
    for (const LatticeNode& node : *list)
      require(node[0] >= 1 && node[0] <= p.nx && node[1] >= 1 && node[1] <= p.rows(),
              "lattice: ", list == &p.inputs ? "input" : "output", " node [", node[0], ", ",
              node[1], "] is outside [1, nx = ", p.nx, "] x [1, ny = ", p.rows(), "]");
}

NonlinearNetwork lattice_network(const LatticeParameters& p) {
  validate(p);
  const Index nx = p.nx, ny = p.rows(), n = p.size(), m_e = p.elements();
  auto node = [nx](Index i, Index j) { return static_cast<int>(i + nx * j); };  // 0-based
  std::vector<Triplet> t;
  t.reserve(static_cast<std::size_t>(2 * m_e));
  Index e = 0;
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i <= nx; ++i, ++e) {  // spring between nodes i - 1 and i of row j
      if (i < nx) t.emplace_back(static_cast<int>(e), node(i, j), 1.0);
      if (i > 0) t.emplace_back(static_cast<int>(e), node(i - 1, j), -1.0);
    }
  for (Index i = 0; i < nx; ++i)
    for (Index j = 0; j <= ny; ++j, ++e) {
      if (j < ny) t.emplace_back(static_cast<int>(e), node(i, j), 1.0);
      if (j > 0) t.emplace_back(static_cast<int>(e), node(i, j - 1), -1.0);
    }
  SparseMatrix G(m_e, n);
  G.setFromTriplets(t.begin(), t.end());
  G.makeCompressed();
  const SparseMatrix L = SparseMatrix(G.transpose() * G);  // Dirichlet Laplacian

  SecondOrderSystem s;
  s.M.resize(n, n);
  s.M.setIdentity();
  s.M *= p.m;
  s.K = p.k_l * L;
  if (p.damping == SpringDamping::dampers) {
    s.D = p.d * L;
  } else {
    s.D = p.alpha * s.M + p.beta * s.K;
  }
  auto selection = [&](const std::vector<LatticeNode>& nodes, bool columns) {
    std::vector<LatticeNode> list = nodes;
    if (list.empty()) list.push_back({nx, ny});
    std::vector<Triplet> st;
    for (std::size_t k = 0; k < list.size(); ++k) {
      const int idx = node(list[k][0] - 1, list[k][1] - 1);
      if (columns)
        st.emplace_back(idx, static_cast<int>(k), 1.0);
      else
        st.emplace_back(static_cast<int>(k), idx, 1.0);
    }
    const auto count = static_cast<Index>(list.size());
    SparseMatrix S = columns ? SparseMatrix(n, count) : SparseMatrix(count, n);
    S.setFromTriplets(st.begin(), st.end());
    return S;
  };
  s.B = selection(p.inputs, true);
  const SparseMatrix C = selection(p.outputs, false);
  if (p.output_quantity == OutputQuantity::position) {
    s.Cp = C;
    s.Cv = SparseMatrix(C.rows(), n);
  } else {
    s.Cp = SparseMatrix(C.rows(), n);
    s.Cv = C;
  }
  if (p.k_n == 0.0) return NonlinearNetwork(std::move(s), SparseMatrix(0, n), Matrix(0, 4));
  Matrix phi = Matrix::Zero(1, 4);
  phi(0, 1) = p.k_n;
  return NonlinearNetwork(std::move(s), std::move(G), std::move(phi));
}

}  // namespace mor
