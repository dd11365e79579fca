// SPDX-License-Identifier: GPL-3.0-or-later
// The keys of the experiment-file tables that are not a model kind's or a method's own:
// [experiment], [input] and [[training]] (per signal type), [simulation], [output] and
// [analysis] (the registered measures' keys, experiments/runner/measure.hpp), declared once each
// (experiments/runner/keys.hpp explains the visitors). The reader, the effective TOML stored in
// results, and `mor keys` all walk these declarations. Internal to experiments/runner.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "experiments/runner/config.hpp"
#include "experiments/runner/keys.hpp"

namespace mor::experiments {

/// [experiment]: what the run is called and where its results go.
struct ExperimentTable {
  std::string name = "experiment";
  std::string description;
  std::string output;  ///< relative to the working directory; "" means results/<name>.h5

  template <class V>
  void visit_keys(V& v) {
    v(Key{"name", "",
          "the experiment's name, stored in the results; default file results/<name>.h5 (no "
          "path separators: set output to write elsewhere)"},
      name);
    v(Key{"description", "", "one line on what the experiment is, stored in the results"},
      description);
    v(Key{"output", "",
          "results file (HDF5), relative to the working directory; \"\": results/<name>.h5"},
      output);
  }
};

inline constexpr Choice<Scheme> kSchemes[] = {{"implicit_midpoint", Scheme::implicit_midpoint},
                                              {"generalized_alpha", Scheme::generalized_alpha},
                                              {"rk4", Scheme::rk4}};
inline constexpr Choice<SparseBackend> kSolvers[] = {{"cholmod", SparseBackend::cholmod},
                                                     {"umfpack", SparseBackend::umfpack},
                                                     {"klu", SparseBackend::klu},
                                                     {"eigen_ldlt", SparseBackend::eigen_ldlt},
                                                     {"eigen_lu", SparseBackend::eigen_lu}};

/// [simulation]: the integrator, its step and horizon, and its Newton iteration.
struct SimulationTable {
  Scheme integrator = Scheme::implicit_midpoint;
  double dt = 0.05;
  double t_end = 100.0;
  SparseBackend solver = SparseBackend::cholmod;
  double rho_infinity = IntegratorOptions{}.rho_infinity;
  double newton_rtol = IntegratorOptions{}.newton_rtol;
  double newton_atol = IntegratorOptions{}.newton_atol;
  Index newton_max_iterations = IntegratorOptions{}.newton_max_iterations;
  bool reuse_jacobian = IntegratorOptions{}.reuse_jacobian;
  bool newton_bound = IntegratorOptions{}.newton_bound;
  Index max_steps = 100'000'000;

  template <class V>
  void visit_keys(V& v) {
    v.choice(Key{"integrator", "",
                 "time integrator: implicit midpoint (A-stable, energy-conserving), "
                 "generalized-alpha (Chung-Hulbert, numerical damping) or classical RK4"},
             integrator, kSchemes);
    v(Key{"dt", "s", "time step, > 0; t_end must be a whole number of steps"}, dt);
    v(Key{"t_end", "s", "end of the simulated horizon (starts at 0)"}, t_end);
    v.choice(Key{"solver", "",
                 "sparse solver of the implicit schemes' linear systems (the chain uses its own "
                 "tridiagonal factorization whatever this says)"},
             solver, kSolvers);
    v(Key{"rho_infinity", "", "generalized-alpha spectral radius at infinity, in [0, 1]"},
      rho_infinity);
    v(Key{"newton_rtol", "",
          "Newton stops when ||delta||_inf <= newton_rtol ||x||_inf + newton_atol"},
      newton_rtol);
    v(Key{"newton_atol", "", "absolute part of the Newton test (velocity units)"}, newton_atol);
    v(Key{"newton_max_iterations", "", "Newton iterations per step before the run fails"},
      newton_max_iterations);
    v(Key{"reuse_jacobian", "",
          "keep the factorized Newton matrix across steps (simplified Newton), refactorizing "
          "when it contracts slowly"},
      reuse_jacobian);
    v(Key{"newton_bound", "",
          "Newton also stops, without a further solve, once a bound on the next correction "
          "(the residual over the Newton matrix's diagonal excess, where it is diagonally "
          "dominant: the chain, networks of springs) meets the test; false: only a computed "
          "correction stops it"},
      newton_bound);
    v(Key{"max_steps", "",
          "the most steps t_end / dt a run may take (10^8: hours of a large model; a file that "
          "means more says so here), a guard against a mistyped dt such as 1e-12"},
      max_steps);
  }
};

/// [output]: what the run stores besides the outputs.
struct OutputTable {
  Index output_stride = 1;
  Index snapshot_stride = 10;
  std::vector<std::string> snapshot_fields = {"p", "v"};
  Index compression = 1;
  bool plots = true;

  template <class V>
  void visit_keys(V& v) {
    v(Key{"output_stride", "", "outputs y are stored every this many steps (and the last)"},
      output_stride);
    v(Key{"snapshot_stride", "", "state snapshots every this many steps; 0: none"},
      snapshot_stride);
    v(Key{"snapshot_fields", "",
          "what the snapshots hold: \"p\" positions, \"v\" velocities (second-order models); "
          "[\"x\"], the state, for first-order models; each at most once"},
      snapshot_fields);
    v(Key{"compression", "", "deflate level 0..9 of the snapshot datasets"}, compression);
    v(Key{"plots", "", "make the PNG figures after the run (Debian's python3-matplotlib)"}, plots);
  }
};

/// The signal types of [input] and [[training]], in the order `mor list inputs` shows them.
struct SignalType {
  std::string_view name;
  std::string_view doc;
};
inline constexpr SignalType kSignalTypes[] = {
    {"zero", "u = 0 (a free response from the initial state)"},
    {"step", "u = amplitude for t >= t_on"},
    {"sine", "u = amplitude sin(2 pi frequency t + phase) + offset"},
    {"chirp", "linear chirp from f0 to f1 over t1 (then constant frequency f1)"},
    {"multisine", "random-phase multisine over the given frequencies, RMS amplitude, seeded"},
    {"table", "piecewise-linear interpolation of a CSV file: columns t u_1 [u_2 ...]"},
};

/// The keys of one signal (in.type already known; unknown types declare none).
template <class S, class V>
void signal_keys(S& in, V& v) {
  const std::string& t = in.type;
  if (t == "step" || t == "sine" || t == "chirp" || t == "multisine")
    v(Key{"amplitude", "N", "force amplitude (multisine: RMS)"}, in.amplitude);
  if (t == "step") v(Key{"t_on", "s", "switch-on time"}, in.t_on);
  if (t == "sine") {
    v(Key{"frequency", "Hz", "frequency"}, in.frequency);
    v(Key{"phase", "rad", "phase"}, in.phase);
    v(Key{"offset", "N", "constant added"}, in.offset);
  }
  if (t == "chirp") {
    v(Key{"f0", "Hz", "start frequency"}, in.f0);
    v(Key{"f1", "Hz", "frequency reached at t1"}, in.f1);
    v(Key{"t1", "s", "sweep time"}, in.t1);
  }
  if (t == "multisine") {
    v(Key{"frequencies", "Hz", "the frequencies, each with a random phase"}, in.frequencies);
    v(Key{"seed", "", "seed of the phases, >= 0"}, in.seed);
  }
  if (t == "table")
    v(Key{"file", "", "CSV file (relative to the experiment file): t u_1 [u_2 ...] per line"},
      in.file);
}

/// The whole key reference of experiment files: every table, every model kind, signal type and
/// reduction method (rows with their variant, e.g. type = "sine"), in file order.
std::vector<KeyDoc> experiment_key_reference();

}  // namespace mor::experiments
