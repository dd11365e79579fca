// SPDX-License-Identifier: GPL-3.0-or-later
// The lattice (models/lattice.hpp): its structure (sizes, K = k_l G^T G SPD, the node order),
// and its energy balance along a driven nonlinear run to the integrator's O(dt^2).
#include <gtest/gtest.h>

#include <cmath>

#include <Eigen/Cholesky>

#include "models/lattice.hpp"
#include "src/integrators/integrate.hpp"
#include "src/signals/signal.hpp"
#include "support/compare.hpp"

namespace mor {
namespace {

using testing::Compare;
using testing::matrices_near;

LatticeParameters small_lattice() {
  LatticeParameters p;
  p.nx = 7;
  p.ny = 5;
  p.m = 1.3;
  p.k_l = 0.7;
  p.d = 0.05;
  p.k_n = 2.0;
  p.inputs = {{1, 1}, {4, 3}};
  p.outputs = {{7, 5}, {2, 4}};
  return p;
}

TEST(Lattice, StructureAndNodeOrder) {
  const LatticeParameters p = small_lattice();
  const NonlinearNetwork net = lattice_network(p);
  EXPECT_EQ(net.n(), 35);
  EXPECT_EQ(net.n_elements(), 5 * 8 + 7 * 6);
  EXPECT_EQ(net.n_inputs(), 2);
  const SecondOrderSystem& s = net.linear_system();
  const Matrix K = Matrix(s.K);
  // The Dirichlet Laplacian: 4 k_l on the diagonal, -k_l to each of the four neighbours.
  EXPECT_DOUBLE_EQ(K(0, 0), 4 * p.k_l);
  EXPECT_DOUBLE_EQ(K(0, 1), -p.k_l);  // (1, 1) - (2, 1)
  EXPECT_DOUBLE_EQ(K(0, 7), -p.k_l);  // (1, 1) - (1, 2)
  EXPECT_DOUBLE_EQ(K(0, 8), 0.0);
  EXPECT_EQ(Eigen::LLT<Matrix>(K).info(), Eigen::Success);  // SPD
  EXPECT_DOUBLE_EQ(Matrix(s.B)(3 + 7 * 2, 1), 1.0);         // node (4, 3)
  EXPECT_DOUBLE_EQ(Matrix(s.Cp)(1, 1 + 7 * 3), 1.0);        // node (2, 4)
  LatticeParameters bad = p;
  bad.inputs = {{8, 1}};
  EXPECT_THROW(lattice_network(bad), InvalidArgument);
  bad = p;
  bad.m = 0.0;
  EXPECT_THROW(lattice_network(bad), InvalidArgument);
}

/// |E(T) - E(0) - int_0^T (P_in - P_d) dt| along an implicit-midpoint run with step dt, the
/// powers at the step midpoints (v and u averaged).
double energy_balance_error(const NonlinearNetwork& net, double dt) {
  NonlinearNetwork::Workspace ws(net);
  IntegratorOptions o;
  o.dt = dt;
  o.t_end = 8.0;
  o.newton_rtol = 1e-13;
  const auto input = make_sine_signal(2, 1.5, 0.3);
  const Index n = net.n();
  Vector q = Vector::Zero(n), v = Vector::Zero(n), v_prev = v, u_prev(2);
  double work = 0.0, E0 = 0.0, E = 0.0;
  bool first = true;
  integrate(net, ws, *input, o, q, v,
            [&](Index, double, const Vector& qk, const Vector& vk, const Vector& uk) {
              E = net.kinetic_energy(vk) + net.potential_energy(qk);
              if (first) {
                E0 = E;
                first = false;
              } else {
                const Vector vm = 0.5 * (vk + v_prev);
                const Vector um = 0.5 * (uk + u_prev);
                work += dt * (net.input_power(vm, um) - net.dissipation_power(vm));
              }
              v_prev = vk;
              u_prev = uk;
            });
  EXPECT_GT(E, 0.1);  // the run stores energy
  return std::abs(E - E0 - work);
}

TEST(Lattice, EnergyBalanceToSecondOrder) {
  const NonlinearNetwork net = lattice_network(small_lattice());
  const double e1 = energy_balance_error(net, 0.02), e2 = energy_balance_error(net, 0.01);
  // Second order: halving dt divides the balance error by about 4 (3 to 5 allows the
  // higher-order terms at these steps).
  EXPECT_GT(e1 / e2, 3.0) << "errors " << e1 << ", " << e2;
  EXPECT_LT(e1 / e2, 5.0) << "errors " << e1 << ", " << e2;
}

}  // namespace
}  // namespace mor
