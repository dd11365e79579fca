// SPDX-License-Identifier: GPL-3.0-or-later
// Adaptive, error-controlled integration of small first-order ODEs  x' = f(t, x)  with SUNDIALS
// CVODE 6.4 (Hindmarsh et al., ACM TOMS 31 (2005) 363-396): BDF orders 1-5 for stiff problems,
// Adams-Moulton orders 1-12 for smooth non-stiff ones, Newton with a dense direct solver
// (SUNDIALS' own), the Jacobian from the caller or by CVODE's difference quotients. Optional
// projection onto a constraint manifold after every step (CVODE's CVodeSetProjFn), for
// models in redundant coordinates.
//
// Meant for the multibody benchmarks (a handful of coordinates, high accuracy): the fixed-step
// schemes of integrate.hpp serve the large sparse models.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "src/core/types.hpp"

namespace mor {

enum class CvodeMethod { bdf, adams };
/// "bdf", "adams"; @throws InvalidArgument naming the value.
CvodeMethod parse_cvode_method(std::string_view name);
std::string_view to_string(CvodeMethod method);

struct CvodeOptions {
  CvodeMethod method = CvodeMethod::bdf;
  double t0 = 0.0;
  double t_end = 1.0;
  /// The observer sees x at t0 + k output_dt (and at t_end): CVODE interpolates there, so the
  /// output grid does not constrain the steps; with a projection, though, the outputs are step
  /// points (so that they lie on the manifold). <= 0: only t0 and t_end.
  double output_dt = 0.0;
  double rtol = 1e-10;       ///< relative tolerance of the local error (> 0)
  double atol = 1e-12;       ///< absolute tolerance, every component (> 0)
  double max_step = 0.0;     ///< 0: unbounded
  long max_steps = 1000000;  ///< internal steps per output interval
  /// Times where f jumps (a load switched on or off, the next phase of a benchmark's run):
  /// CVODE stops at each exactly and starts afresh there (CVodeReInit), instead of stepping
  /// across the jump and finding it by its error test, which costs steps and leaves an error
  /// of the jump's size times the step that straddled it. Ascending; times outside (t0, t_end)
  /// are ignored, so a model may give all of its own. They are not output times.
  std::vector<double> discontinuities;
};

/// What the run cost.
struct CvodeStats {
  long steps = 0;
  long rhs_evaluations = 0;  ///< including those of difference-quotient Jacobians
  long jacobian_evaluations = 0;
  long error_test_failures = 0;
  long nonlinear_convergence_failures = 0;
  long projections = 0;
  long restarts = 0;  ///< at the discontinuities
  int last_order = 0;
  double seconds = 0.0;  ///< wall-clock time of the run, observer included
};

/// xdot = f(t, x). May throw: the exception is rethrown from integrate_cvode.
using OdeRhs = std::function<void(double t, const Vector& x, Vector& xdot)>;
/// J = df/dx (n x n, dense) at (t, x).
using OdeJacobian = std::function<void(double t, const Vector& x, Matrix& J)>;
/// Replace x by its projection onto the constraint manifold (in place); called by CVODE after
/// every step's corrector has converged (BDF only).
using OdeProjection = std::function<void(double t, Vector& x)>;
using OdeObserver = std::function<void(double t, const Vector& x)>;

struct OdeProblem {
  OdeRhs rhs;
  OdeJacobian jacobian;      ///< empty: CVODE's difference quotients
  OdeProjection projection;  ///< empty: none
};

/// Integrates from x (the state at t0) to t_end; x holds the final state on return.
/// @throws InvalidArgument for bad options or an empty x or rhs; NumericalError naming the time
///         and CVODE's flag if a step fails (too much work, error test or convergence failures,
///         a non-finite state) or the state leaves the finite range; whatever rhs, jacobian,
///         projection or observer throw, unchanged.
CvodeStats integrate_cvode(const OdeProblem& problem, Vector& x, const CvodeOptions& options,
                           const OdeObserver& observe = {});

}  // namespace mor
