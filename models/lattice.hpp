// SPDX-License-Identifier: GPL-3.0-or-later
// A scalable 2-D family of nonlinear networks: an nx x ny lattice of masses, each with one
// scalar displacement, joined to its four neighbours (and, at the edges, to walls) by linear +
// cubic springs, as the chain (models/mass_spring_chain.hpp) is along one line.
//
//   M q'' + D q' + K q + G^T phi(G q) = B u,   y = Cp q (or Cp = 0, Cv = C for velocities),
//   M = m I,  K = k_l G^T G (the Dirichlet Laplacian, SPD),  phi(s) = k_n s^3,
//   D = d G^T G (dampers in parallel with the springs) or alpha M + beta K (Rayleigh),
// with G the ny (nx + 1) + nx (ny + 1) x nx ny elongation matrix: the horizontal springs of row
// j (i = 0 .. nx, walls at i = 0 and nx + 1) first, row by row, then the vertical springs of
// column i (j = 0 .. ny), column by column. Node (i, j), 1-based, is coordinate
// (i - 1) + nx (j - 1). nx = 1 or ny = 1 is not the chain: the lattice also has the walls across.
#pragma once

#include <array>
#include <vector>

#include "models/mass_spring_chain.hpp"
#include "src/systems/nonlinear_network.hpp"

namespace mor {

/// A lattice node (i, j), 1-based: column i in [1, nx], row j in [1, ny].
using LatticeNode = std::array<Index, 2>;

struct LatticeParameters {
  Index nx = 32;
  Index ny = 0;      ///< 0: ny = nx
  double m = 1.0;    ///< mass of each node, > 0
  double k_l = 1.0;  ///< linear spring stiffness, >= 0
  double d = 1.0;    ///< damper coefficient (SpringDamping::dampers), >= 0
  double k_n = 2.0;  ///< cubic spring coefficient, >= 0
  SpringDamping damping = SpringDamping::dampers;
  double alpha = 0.0, beta = 0.0;    ///< Rayleigh coefficients, >= 0
  std::vector<LatticeNode> inputs;   ///< forced nodes; empty: {(nx, ny)}
  std::vector<LatticeNode> outputs;  ///< observed nodes; empty: {(nx, ny)}
  OutputQuantity output_quantity = OutputQuantity::position;

  Index rows() const { return ny > 0 ? ny : nx; }
  Index size() const { return nx * rows(); }
  Index elements() const { return rows() * (nx + 1) + nx * (rows() + 1); }
};

/// @throws InvalidArgument naming the parameter and its value (nx < 1, ny < 0, m <= 0,
///         negative or non-finite coefficients, a node outside the lattice, N above 2^31 / 8).
void validate(const LatticeParameters& p);

/// The lattice as a network. @throws InvalidArgument (see validate).
NonlinearNetwork lattice_network(const LatticeParameters& p);

}  // namespace mor
