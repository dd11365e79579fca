// SPDX-License-Identifier: GPL-3.0-or-later
// The chain parameters the model and reduction tests share: m, k_l, d away from 1 so that a
// formula that drops or swaps one of them shows.
#pragma once

#include "models/mass_spring_chain.hpp"

namespace mor::testing {

inline ChainParameters test_chain_parameters(Index N, double k_n = 2.0) {
  ChainParameters p;
  p.N = N;
  p.m = 1.3;
  p.k_l = 0.7;
  p.d = 0.2;
  p.k_n = k_n;
  return p;
}

}  // namespace mor::testing
