// SPDX-License-Identifier: GPL-3.0-or-later
// What the experiment runner, the benchmarks and the animation need of a multibody benchmark
// (IFToMM library A01, A04, A05; the Schiehlen robot): the benchmark's own run (initial state,
// horizon, loads, reference outputs), its energy bookkeeping, a drawing of its bodies, and its
// linearisation into the project's SecondOrderSystem. A runtime seam (the experiment file
// chooses the model); each model keeps its own richer API beside it for its tests.
//
// State x: the model's coordinates followed by their velocities (minimal coordinates, or
// redundant ones kept on the constraint manifold by project()). Energy bookkeeping: with
// E = T + V and P the power of the non-conservative forces (actuators, dampers),
//   E(t) - E(0) = integral_0^t P dt,
// so a run integrates P beside x and reports the balance's residual.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/types.hpp"
#include "src/integrators/cvode.hpp"
#include "src/systems/lti.hpp"

namespace mor {

class MultibodyModel {
 public:
  virtual ~MultibodyModel() = default;

  /// Short identifier, as in experiment files: "pendulum", "bricard", "flyball", "robot".
  virtual std::string_view id() const = 0;
  /// Human-readable title, e.g. "A01 simple pendulum".
  virtual std::string title() const = 0;

  // --- the benchmark's run -------------------------------------------------------------------
  /// Size of x.
  virtual Index state_size() const = 0;
  /// The benchmark's initial state (consistent with the constraints, if any).
  virtual Vector initial_state() const = 0;
  /// The benchmark's horizon, s (10 for A01, A04, A05; 2 for the robot).
  virtual double horizon() const = 0;
  /// CVODE's method that suits the problem (BDF where it is stiff).
  virtual CvodeMethod preferred_method() const = 0;
  /// xdot = f(t, x) under the benchmark's loads (the robot's efforts; none or dampers elsewhere).
  virtual void rhs(double t, const Vector& x, Vector& xdot) const = 0;
  /// df/dx at (t, x); false if the model has none (CVODE then uses difference quotients).
  virtual bool jacobian(double t, const Vector& x, Matrix& J) const;
  /// Models in redundant coordinates: project x onto the position and velocity constraint
  /// manifolds in place; the default (minimal coordinates) does nothing and returns false.
  virtual bool project(double t, Vector& x) const;
  /// Norm of the position constraints' residual (0 for minimal coordinates), m.
  virtual double constraint_residual(const Vector& x) const;

  /// Names of the benchmark's reference outputs, e.g. {"P1_x", "P1_y"}, and their units.
  virtual std::vector<std::string> output_names() const = 0;
  /// y (size output_names().size()) at (t, x).
  virtual void outputs(double t, const Vector& x, Vector& y) const = 0;

  /// The exact reference outputs at t, where the benchmark has a closed-form solution (A01);
  /// false otherwise.
  virtual bool exact_outputs(double t, Vector& y) const;

  /// E = T + V, J (V = m g height).
  virtual double energy(const Vector& x) const = 0;
  /// P, W: the power of the actuators minus the dampers' dissipation (0 if conservative).
  virtual double power(double t, const Vector& x) const;
  /// Times where the benchmark's loads jump (the robot's phases); none by default. A run
  /// restarts its integration there (CvodeOptions::discontinuities).
  virtual std::vector<double> load_discontinuities() const;

  // --- drawing -------------------------------------------------------------------------------
  /// Points of the bodies in the world frame (3 x n_points, m) at x: joints, ends, masses.
  virtual Eigen::Matrix3Xd points(const Vector& x) const = 0;
  /// Pairs of indices into points(): the segments drawn (fixed for a model).
  virtual std::vector<std::pair<int, int>> segments() const = 0;

  // --- linearisation -------------------------------------------------------------------------
  /// M q'' + D q' + K q = B u, y = Cp q + Cv q' about the model's operating point (see the
  /// model's header for the point, the coordinates, the inputs and the outputs).
  virtual SecondOrderSystem linearised() const = 0;
  /// Names of the linear model's inputs and outputs.
  virtual std::vector<std::string> linear_input_names() const = 0;
  virtual std::vector<std::string> linear_output_names() const = 0;

  /// The operating point of linearised() in the nonlinear model's own terms, so that a run can
  /// put the same small input into both and compare (the difference must be of second order in
  /// the input's size).
  struct LinearisationPoint {
    Vector x;  ///< the nonlinear state there (an equilibrium, or a steady motion)
    /// xdot = f(t, x, u): the nonlinear model driven by the linear model's inputs u (deviations
    /// from the loads that hold the operating point).
    std::function<void(double t, const Vector& x, const Vector& u, Vector& xdot)> rhs;
    /// The linear model's outputs measured on the nonlinear state (absolute values: the caller
    /// subtracts those at x).
    std::function<void(const Vector& x, Vector& y)> outputs;
  };
  /// Empty if the model does not provide it.
  virtual std::optional<LinearisationPoint> linearisation_point() const;
};

/// "pendulum", "bricard", "flyball", "robot" with the benchmark's parameters.
/// @throws InvalidArgument naming an unknown id and listing the known ones.
std::unique_ptr<MultibodyModel> make_multibody_model(std::string_view id);
/// The ids make_multibody_model knows.
std::vector<std::string> multibody_model_ids();

/// What a benchmark run reached.
struct MultibodyRunStats {
  CvodeStats cvode;
  double energy_initial = 0.0;        ///< E(0), J
  double energy_balance_error = 0.0;  ///< max_t |E(t) - E(0) - integral P|, J
  double constraint_residual = 0.0;   ///< max over the outputs, m
};

/// Integrates the benchmark run with CVODE (the model's method, Jacobian and projection), the
/// work integral of P carried as one more state, restarting at the model's
/// load_discontinuities() unless options name discontinuities of their own. The observer sees t, x
/// and the balance E(t) - E(0) - integral_0^t P at the output times.
/// @throws as integrate_cvode; NumericalError for a non-finite state.
MultibodyRunStats simulate_multibody(
    const MultibodyModel& model, Vector& x, const CvodeOptions& options,
    const std::function<void(double t, const Vector& x, double balance)>& observe = {});

}  // namespace mor
