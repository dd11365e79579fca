// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/integrators/integrate.hpp"

#include <cmath>

#include "src/linalg/lapack.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define MOR_HAS_MXCSR 1
#endif

namespace mor {

Scheme parse_scheme(std::string_view name) {
  if (name == "rk4") return Scheme::rk4;
  if (name == "implicit_midpoint") return Scheme::implicit_midpoint;
  if (name == "generalized_alpha") return Scheme::generalized_alpha;
  throw InvalidArgument(detail::concat("unknown integrator '", name,
                                       "' (choose rk4, implicit_midpoint or generalized_alpha)"));
}

std::string_view to_string(Scheme scheme) {
  switch (scheme) {
    case Scheme::rk4:
      return "rk4";
    case Scheme::implicit_midpoint:
      return "implicit_midpoint";
    case Scheme::generalized_alpha:
      return "generalized_alpha";
  }
  return "unknown";
}

void validate(const IntegratorOptions& o) {
  require(std::isfinite(o.dt) && o.dt > 0.0, "time step dt must be a finite number > 0, got ",
          o.dt);
  require(std::isfinite(o.t0), "start time t0 must be finite, got ", o.t0);
  require(std::isfinite(o.t_end) && o.t_end > o.t0,
          "end time t_end must be finite and > t0 = ", o.t0, ", got ", o.t_end);
  const double ratio = (o.t_end - o.t0) / o.dt;
  require(ratio < 9.0e15, "t_end - t0 = ", o.t_end - o.t0, " needs too many steps of dt = ", o.dt);
  const double steps = std::round(ratio);
  require(steps >= 1.0 && std::abs(ratio - steps) <= 1e-9 * std::max(1.0, ratio),
          "the horizon t_end - t0 = ", o.t_end - o.t0,
          " is not a whole number of steps dt = ", o.dt, " (", ratio, " steps)");
  require(o.rho_infinity >= 0.0 && o.rho_infinity <= 1.0,
          "generalized-alpha rho_infinity must lie in [0, 1], got ", o.rho_infinity);
  require(std::isfinite(o.newton_rtol) && o.newton_rtol > 0.0,
          "Newton relative tolerance must be > 0, got ", o.newton_rtol);
  require(std::isfinite(o.newton_atol) && o.newton_atol >= 0.0,
          "Newton absolute tolerance must be >= 0, got ", o.newton_atol);
  require(o.newton_max_iterations >= 1, "Newton iteration limit must be >= 1, got ",
          o.newton_max_iterations);
  require(o.reuse_max_iterations >= 1, "reuse_max_iterations must be >= 1, got ",
          o.reuse_max_iterations);
  require(o.observe_stride >= 1, "output stride must be >= 1, got ", o.observe_stride);
  require(o.finite_check_stride >= 1, "finite check stride must be >= 1, got ",
          o.finite_check_stride);
}

Index step_count(const IntegratorOptions& o) {
  validate(o);
  return static_cast<Index>(std::llround((o.t_end - o.t0) / o.dt));
}

namespace detail {

#ifdef MOR_HAS_MXCSR
namespace {
constexpr unsigned kFlushToZero = 0x8000;       // MXCSR bit 15: subnormal results become 0
constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR bit 6: subnormal operands read as 0
}  // namespace

SubnormalsFlushed::SubnormalsFlushed(bool enable) : active_(enable) {
  if (!active_) return;
  saved_ = _mm_getcsr();
  flush();
}
SubnormalsFlushed::~SubnormalsFlushed() {
  if (active_) restore();
}
void SubnormalsFlushed::flush() {
  _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
}
void SubnormalsFlushed::restore() {
  _mm_setcsr(saved_);
}
#else
SubnormalsFlushed::SubnormalsFlushed(bool) : active_(false) {}
SubnormalsFlushed::~SubnormalsFlushed() = default;
void SubnormalsFlushed::flush() {}
void SubnormalsFlushed::restore() {}
#endif

namespace {

/// Inputs this large overflow the doubles' range within a step of any model (a force times a
/// step, a cubic of the displacement): the failure is the input's, not dt's.
constexpr double kOverflowingInput = 1e100;

/// What to try after a failed step: scale an overflowing input; else a smaller dt, and for a
/// state that grows whatever dt, a model that is not dissipative.
std::string remedy(Scheme scheme, double dt, double input_max) {
  if (input_max > kOverflowingInput)
    return concat("; the input reaches |u| = ", input_max,
                  ", which overflows the range of doubles within a step whatever dt: scale the "
                  "input (input.amplitude)");
  if (scheme == Scheme::rk4)
    return concat("; rk4 is explicit: dt = ", dt,
                  " may exceed its stability limit, try a smaller dt or an implicit scheme");
  return concat("; try a smaller dt than ", dt,
                ", and check that the model is dissipative (a negative damping or stiffness, or "
                "an indefinite M, makes the state grow whatever dt)");
}

}  // namespace

void throw_diverged(double t, Index step, Index total, Scheme scheme, double dt, double input_max) {
  throw NumericalError(
      concat("integration diverged: the state is not finite (NaN or Inf) at t = ", t, " (step ",
             step, " of ", total, ")", remedy(scheme, dt, input_max)));
}

void throw_exploded(double t, Index step, Index total, Scheme scheme, double dt, double magnitude) {
  throw NumericalError(
      concat("integration diverged: the state exploded (an entry of magnitude ", magnitude, " > ",
             kExplodedState, ") at t = ", t, " (step ", step, " of ", total, ")",
             scheme == Scheme::rk4 ? "; rk4 is explicit: dt = " + concat(dt) +
                                         " may exceed its stability limit, try a smaller dt or an "
                                         "implicit scheme"
                                   : "; the model or dt = " + concat(dt) + " is unstable"));
}

void throw_rk4_unstable(double dt, double limit, double omega_max, bool damped, int iterations) {
  throw InvalidArgument(concat(
      "rk4 with dt = ", dt, " is unstable on this model: its stability limit is dt <= ", limit,
      " (", damped ? kRk4LargestLimit : kRk4ImaginaryLimit, " / omega_max, omega_max = ", omega_max,
      " rad/s from ", iterations, " Lanczos steps on M^-1 K", damped ? ", damped" : ", undamped",
      "); use dt <= ", limit, " or an implicit scheme (implicit_midpoint, generalized_alpha)"));
}

double largest_tridiagonal_eigenvalue(const Vector& diagonal, const Vector& sub) {
  if (diagonal.size() == 0) return 0.0;
  if (diagonal.size() == 1) return diagonal(0);
  try {
    return lapack::symmetric_tridiagonal_eigenvalues(diagonal, sub).maxCoeff();
  } catch (const NumericalError&) {
    return 0.0;  // no estimate (not converged, or a non-finite Lanczos coefficient)
  }
}

void throw_newton_failed(double t, Index step, int iterations, double delta, double tolerance,
                         double dt, double input_max) {
  throw NumericalError(concat("Newton did not converge at t = ", t, " (step ", step, ") after ",
                              iterations, " iterations: last correction ", delta, " > tolerance ",
                              tolerance, remedy(Scheme::implicit_midpoint, dt, input_max)));
}
}  // namespace detail

}  // namespace mor
