// SPDX-License-Identifier: GPL-3.0-or-later
// A parametric experiment's tables: [parameters] (the parameter domain, src/systems/
// parametric.hpp), [validation] (the unseen points the parametric reduced model is checked at),
// and the training keys of a parametric reduction in [reduction]. Read once, declared once.
//
//   [parameters]
//   k_n = { min = 0.5, max = 4.0 }                  # scale = "linear" (the default)
//   d   = { min = 0.2, max = 2.0, scale = "log" }   # sampled uniformly in log d
//
// Each name is a [model] key the model's operators are affine in (ModelSpec::parameter_refusal
// says which); a key may not be both in [model] and in [parameters].
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/runner/keys.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "src/systems/parametric.hpp"

namespace mor::experiments {

/// How a parametric reduction chooses the parameters of its full training runs.
enum class ParametricSampling {
  all,     ///< every training point: one POD of the snapshots of all of them
  greedy,  ///< the POD-greedy: the full model only at the points its indicator selects
};
inline constexpr Choice<ParametricSampling> kParametricSamplings[] = {
    {"all", ParametricSampling::all}, {"greedy", ParametricSampling::greedy}};

inline constexpr const char* kTrainingPointsDoc =
    "with [parameters]: the training points themselves instead of parameter_samples seeded "
    "ones: each [v_1, ..., v_p] in the order of the sorted parameter names (/parameters/names), "
    "inside the box";

/// The training keys of a parametric reduction ([reduction], with [parameters]).
struct ParametricTraining {
  Index parameter_samples = 16;  ///< training points, seeded, uniform in each parameter's scale
  Index parameter_seed = 1;
  std::vector<std::vector<double>> training_points;  ///< given points instead of seeded ones
  ParametricSampling sampling = ParametricSampling::all;
  double greedy_tolerance = 1e-2;  ///< the greedy stops when the largest estimate is at most
  Index greedy_batch = 1;          ///< points selected per greedy iteration
  Index greedy_max_points = 0;     ///< the most points the greedy selects; 0: no limit
  /// The training set's size: the given points, or parameter_samples.
  Index points() const {
    return training_points.empty() ? parameter_samples : static_cast<Index>(training_points.size());
  }
};

/// The training set's keys (parameter_samples, parameter_seed, training_points).
template <class O, class V>
void parametric_point_keys(O& o, V& v) {
  v(Key{"parameter_samples", "",
        "with [parameters]: the number of training points, drawn uniformly in each parameter's "
        "scale"},
    o.parameter_samples);
  v(Key{"parameter_seed", "", "with [parameters]: the seed of the training points"},
    o.parameter_seed);
  v(Key{"training_points", "", kTrainingPointsDoc}, o.training_points);
}
/// The names of parametric_point_keys.
inline constexpr const char* kParametricPointKeys[] = {"parameter_samples", "parameter_seed",
                                                       "training_points"};

template <class O, class V>
void parametric_training_keys(O& o, V& v) {
  parametric_point_keys(o, v);
  v.choice(Key{"sampling", "",
               "with [parameters]: all (the full model runs at every training point, one POD of "
               "all their snapshots) or greedy (the POD-greedy: the full model runs only at the "
               "points its indicator selects)"},
           o.sampling, kParametricSamplings);
  v(Key{"greedy_tolerance", "",
        "sampling = \"greedy\": it stops when the largest indicator is at most this; the "
        "indicator estimates the reduced model's relative output error on the training inputs "
        "by the relative difference of its outputs from those of a reduced model of order 2 r "
        "of the same snapshots (an estimate, not a bound)"},
    o.greedy_tolerance);
  v(Key{"greedy_batch", "", "sampling = \"greedy\": points selected per iteration, >= 1"},
    o.greedy_batch);
  v(Key{"greedy_max_points", "",
        "sampling = \"greedy\": the most training points selected (full runs at each); 0: no "
        "limit"},
    o.greedy_max_points);
}
/// The names of parametric_training_keys (to refuse them without [parameters]).
inline constexpr const char* kParametricTrainingKeys[] = {
    "parameter_samples", "parameter_seed", "training_points",  "sampling",
    "greedy_tolerance",  "greedy_batch",   "greedy_max_points"};

/// How the global basis of a linear method's parametric reduction projects.
enum class GlobalProjection {
  two_sided,  ///< Petrov-Galerkin: V from the local V_j, W from the local W_j
  galerkin,   ///< W = V from the local V_j and W_j together: keeps symmetry and definiteness
};
inline constexpr Choice<GlobalProjection> kGlobalProjections[] = {
    {"two_sided", GlobalProjection::two_sided}, {"galerkin", GlobalProjection::galerkin}};

/// The training keys of a linear method's parametric reduction ([reduction] of bt, irka, sobt,
/// with [parameters]): local reductions at the training points (all, or those a greedy
/// selects), one global basis (reduction/parametric_lti.hpp).
struct ParametricLinearKeys {
  Index parameter_samples = 8;  ///< training points, seeded, uniform in each parameter's scale
  Index parameter_seed = 1;
  std::vector<std::vector<double>> training_points;  ///< given points instead of seeded ones
  Index max_order = 0;  ///< the global basis' order; 0: the largest local order
  GlobalProjection global_projection = GlobalProjection::galerkin;
  ParametricSampling sampling = ParametricSampling::all;
  double greedy_tolerance = 1e-2;  ///< the greedy stops when the largest indicator is at most
  Index greedy_batch = 1;          ///< points selected per greedy iteration
  Index greedy_max_points = 0;     ///< the most points the greedy selects; 0: no limit
  Index greedy_frequencies = 40;   ///< the indicator's frequency grid
  /// The training set's size: the given points, or parameter_samples.
  Index points() const {
    return training_points.empty() ? parameter_samples : static_cast<Index>(training_points.size());
  }
  /// The most local reductions: every point, or the greedy's cap.
  Index local_reductions() const {
    return sampling == ParametricSampling::greedy && greedy_max_points > 0
               ? std::min(greedy_max_points, points())
               : points();
  }
};

template <class O, class V>
void parametric_linear_keys(O& o, V& v) {
  v(Key{"parameter_samples", "",
        "with [parameters]: the training points, drawn uniformly in each parameter's scale; the "
        "method reduces the model at each (its local basis), or with sampling = \"greedy\" at "
        "those the greedy selects"},
    o.parameter_samples);
  v(Key{"parameter_seed", "", "with [parameters]: the seed of the training points"},
    o.parameter_seed);
  v(Key{"training_points", "", kTrainingPointsDoc}, o.training_points);
  v(Key{"max_order", "",
        "with [parameters]: the order of the global basis (the leading left singular vectors of "
        "the local bases side by side); 0: the largest local order"},
    o.max_order);
  v.choice(Key{"global_projection", "",
               "with [parameters]: galerkin (W = V from the local V_j and W_j together; a "
               "second-order model's first-order form in its energy inner product: stable at "
               "every parameter when M, D, K, or E and -A, are symmetric definite) or two_sided "
               "(V from the local V_j, W from the local W_j: keeps more of what the local "
               "methods interpolate, with no stability promise)"},
           o.global_projection, kGlobalProjections);
  v.choice(Key{"sampling", "",
               "with [parameters]: all (a local reduction at every training point) or greedy "
               "(local reductions only at the training points where the parametric model's "
               "sampled transfer-function error is largest, one after another)"},
           o.sampling, kParametricSamplings);
  v(Key{"greedy_tolerance", "",
        "sampling = \"greedy\": it stops when the largest indicator over the unselected "
        "training points is at most this; the indicator is the parametric model's relative "
        "error max_k ||G(i w_k) - G_r(i w_k)||_2 / max_k ||G(i w_k)||_2 on greedy_frequencies "
        "frequencies (the full model's transfer function at every training point, computed "
        "once; a lower bound of the relative H-infinity error, not a bound of it)"},
    o.greedy_tolerance);
  v(Key{"greedy_batch", "", "sampling = \"greedy\": points selected per iteration, >= 1"},
    o.greedy_batch);
  v(Key{"greedy_max_points", "",
        "sampling = \"greedy\": the most training points selected (a local reduction at "
        "each); 0: no limit"},
    o.greedy_max_points);
  v(Key{"greedy_frequencies", "",
        "sampling = \"greedy\": the indicator's frequencies, >= 2: 0 and a logarithmic grid "
        "from a tenth of the smallest to ten times the largest pole magnitude of the first "
        "local model"},
    o.greedy_frequencies);
}
/// The names of parametric_linear_keys (refused without [parameters]).
inline constexpr const char* kParametricLinearKeys[] = {
    "parameter_samples", "parameter_seed",    "training_points",  "max_order",
    "global_projection", "sampling",          "greedy_tolerance", "greedy_batch",
    "greedy_max_points", "greedy_frequencies"};

/// The training points of a parametric reduction: `points` (each row checked: p values inside
/// the box, named as key[i] in messages) if any, else `samples` seeded ones (ParameterDomain::
/// sample).
/// @throws InvalidArgument naming `where`, the key, the row and the value.
Matrix training_set(const ParameterDomain& d, const std::vector<std::vector<double>>& points,
                    Index samples, Index seed, const std::string& where, const std::string& key);
/// `points` as a k x p matrix, each row checked as training_set does.
Matrix points_in_domain(const ParameterDomain& d, const std::vector<std::vector<double>>& points,
                        const std::string& where, const std::string& key);

/// [validation]: the unseen parameters of a parametric experiment.
struct ValidationTable {
  Index parameter_samples = 20;  ///< validation points, never used in training
  Index parameter_seed = 2;
  bool compare_local = false;  ///< linear methods: the method's local reduction at each point too
  std::vector<std::vector<double>> points;  ///< given points instead of parameter_samples

  template <class V>
  void visit_keys(V& v) {
    v(Key{"parameter_samples", "",
          "points of [parameters]' domain, drawn uniformly in each parameter's scale, where the "
          "full and the parametric reduced model run on [input]"},
      parameter_samples);
    v(Key{"parameter_seed", "",
          "the seed of the validation points (a seed other than reduction.parameter_seed gives "
          "points never used in training)"},
      parameter_seed);
    v(Key{"points", "",
          "the validation points themselves instead of parameter_samples seeded ones: each "
          "[v_1, ..., v_p] in the order of the sorted parameter names (/parameters/names), "
          "inside the box"},
      points);
    v(Key{"compare_local", "",
          "linear methods: at each validation point also reduce the model there by the method "
          "itself (a local model of the same keys) and record its error bound and norms beside "
          "the parametric model's"},
      compare_local);
  }
};

/// [parameters] (nullptr: none, an empty domain): each key a table { min, max, scale }.
/// @throws InvalidArgument naming the file, the line, the parameter and the value (a missing or
///         non-numeric bound, an unknown scale or sub-key, an empty or inverted range, non-finite
///         bounds, a log scale with min <= 0).
ParameterDomain read_parameters(const toml::table* table, const std::string& source);
/// [parameters] as TOML lines (nothing for an empty domain), with its header.
void write_parameters(std::ostream& os, const ParameterDomain& domain);
/// The reference rows of [parameters].
void parameter_key_rows(std::vector<KeyDoc>& rows);

}  // namespace mor::experiments
