// SPDX-License-Identifier: GPL-3.0-or-later
// The parametric reduction of the linear methods (bt, irka, sobt, pod of an LTI model) over
// [parameters]: the method's local reduction of the model at each training point (its bases
// V_j, W_j), one global basis from all of them (reduction/parametric_lti.hpp: Baur, Beattie,
// Benner & Gugercin 2011), every affine term of the model's linear system projected once. The
// run's own reduced model is the parametric model at the domain's center.
#pragma once

#include <atomic>

#include "experiments/runner/config.hpp"
#include "experiments/runner/reduction_run.hpp"

namespace mor::experiments {

/// The parametric reduced model of c.reduction (a method with parametric_linear()) of c.model
/// over c.parameters, returned as the model at the domain's center with `parametric` and
/// `training_points` set; its summary records the training points, the local orders and bounds,
/// the global basis' singular values and the reduced affine terms.
/// @throws InvalidArgument as the method, or if the local bases span fewer directions than the
///         order asked for; NumericalError naming the training point if a local reduction
///         fails (an unstable model there); Interrupted when *stop.
ReducedModel reduce_linear_parametric(const ExperimentConfig& c, const std::atomic<bool>* stop);

/// c at one point: its model the spec at mu, no [parameters] (what a method's local reduction
/// at mu sees, its training runs included).
ExperimentConfig at_point(const ExperimentConfig& c, const Vector& mu);

/// The reduced model of `model` at mu as the linear family's runs and analysis take it (its
/// summary: the order and the spectral abscissa). @throws InvalidArgument outside the domain.
ReducedModel reduced_model_at(const ParametricLtiModel& model, const Vector& mu);

}  // namespace mor::experiments
