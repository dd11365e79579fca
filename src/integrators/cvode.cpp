// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/integrators/cvode.hpp"

#include <cvode/cvode.h>
#include <cvode/cvode_proj.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor {

CvodeMethod parse_cvode_method(std::string_view name) {
  if (name == "bdf") return CvodeMethod::bdf;
  if (name == "adams") return CvodeMethod::adams;
  throw InvalidArgument(detail::concat("CVODE method '", name, "' must be \"bdf\" or \"adams\""));
}

std::string_view to_string(CvodeMethod method) {
  return method == CvodeMethod::bdf ? "bdf" : "adams";
}

namespace {

using detail::concat;

// RAII owners of the SUNDIALS objects (each freed by its own destroy function).
struct ContextDeleter {
  void operator()(SUNContext ctx) const { SUNContext_Free(&ctx); }
};
struct VectorDeleter {
  void operator()(_generic_N_Vector* v) const { N_VDestroy(v); }
};
struct MatrixDeleter {
  void operator()(_generic_SUNMatrix* A) const { SUNMatDestroy(A); }
};
struct SolverDeleter {
  void operator()(_generic_SUNLinearSolver* S) const { SUNLinSolFree(S); }
};
struct CvodeDeleter {
  void operator()(void* mem) const { CVodeFree(&mem); }
};

/// What the C callbacks see (user_data): the problem, scratch in Eigen types, the first
/// exception a callback caught (rethrown after CVODE returns) and CVODE's last error message.
struct Callbacks {
  const OdeProblem* problem = nullptr;
  Vector x, xdot, before;
  Matrix J;
  std::exception_ptr error;
  std::string message;
};

Eigen::Map<Vector> view(N_Vector v) {
  return {N_VGetArrayPointer(v), static_cast<Index>(N_VGetLength(v))};
}

/// Runs f, stores its exception (the C caller cannot unwind) and returns CVODE's unrecoverable
/// failure code -1 for it; a non-finite result is recoverable (1: CVODE retries a smaller step).
template <class F>
int guarded(Callbacks& cb, F&& f) {
  try {
    return f();
  } catch (...) {
    if (!cb.error) cb.error = std::current_exception();
    return -1;
  }
}

int rhs(realtype t, N_Vector y, N_Vector ydot, void* data) {
  auto& cb = *static_cast<Callbacks*>(data);
  return guarded(cb, [&] {
    cb.x = view(y);
    cb.problem->rhs(t, cb.x, cb.xdot);
    if (!cb.xdot.allFinite()) return 1;
    view(ydot) = cb.xdot;
    return 0;
  });
}

int jacobian(realtype t, N_Vector y, N_Vector, SUNMatrix Jac, void* data, N_Vector, N_Vector,
             N_Vector) {
  auto& cb = *static_cast<Callbacks*>(data);
  return guarded(cb, [&] {
    cb.x = view(y);
    const auto n = cb.x.size();
    cb.J.setZero(n, n);
    cb.problem->jacobian(t, cb.x, cb.J);
    if (!cb.J.allFinite()) return 1;
    // SUNDIALS' dense matrix is column-major, as Eigen's default.
    Eigen::Map<Matrix>(SUNDenseMatrix_Data(Jac), n, n) = cb.J;
    return 0;
  });
}

int project(realtype t, N_Vector ycur, N_Vector corr, realtype, N_Vector, void* data) {
  auto& cb = *static_cast<Callbacks*>(data);
  return guarded(cb, [&] {
    cb.before = view(ycur);
    cb.x = cb.before;
    cb.problem->projection(t, cb.x);
    if (!cb.x.allFinite()) return 1;
    view(ycur) = cb.x;
    view(corr) = cb.x - cb.before;  // CVODE updates its history with the correction
    return 0;
  });
}

void error_handler(int, const char* module, const char* function, char* msg, void* data) {
  auto& cb = *static_cast<Callbacks*>(data);
  cb.message = concat(module, " ", function, ": ", msg);
}

/// CVODE's name of a return flag (CVodeGetReturnFlagName hands out a malloc'ed copy).
std::string flag_name(int flag) {
  std::unique_ptr<char, decltype(&std::free)> name(CVodeGetReturnFlagName(flag), &std::free);
  return name ? std::string(name.get()) : concat("flag ", flag);
}

void check(int flag, const char* call) {
  if (flag < 0) throw NumericalError(concat("CVODE: ", call, " failed with ", flag_name(flag)));
}

void validate(const CvodeOptions& o, const OdeProblem& p, const Vector& x) {
  require(static_cast<bool>(p.rhs), "CVODE: the right-hand side is empty");
  require(x.size() > 0, "CVODE: the initial state is empty");
  require(x.allFinite(), "CVODE: the initial state has a non-finite entry");
  require(std::isfinite(o.t0) && std::isfinite(o.t_end) && o.t_end > o.t0,
          "CVODE: need finite t0 < t_end, got t0 = ", o.t0, ", t_end = ", o.t_end);
  require(o.rtol > 0.0 && std::isfinite(o.rtol), "CVODE: rtol must be > 0, got ", o.rtol);
  require(o.atol > 0.0 && std::isfinite(o.atol), "CVODE: atol must be > 0, got ", o.atol);
  require(o.max_step >= 0.0, "CVODE: max_step must be >= 0 (0: unbounded), got ", o.max_step);
  require(o.max_steps >= 1, "CVODE: max_steps must be >= 1, got ", o.max_steps);
  require(std::isfinite(o.output_dt), "CVODE: output_dt must be finite, got ", o.output_dt);
  for (std::size_t i = 0; i < o.discontinuities.size(); ++i) {
    require(std::isfinite(o.discontinuities[i]), "CVODE: discontinuity ", i + 1,
            " is not finite, got ", o.discontinuities[i]);
    // (require's message arguments are evaluated before its test: no [i - 1] at i = 0.)
    if (i > 0)
      require(o.discontinuities[i] >= o.discontinuities[i - 1],
              "CVODE: the discontinuities must be ascending, got ", o.discontinuities[i - 1],
              " before ", o.discontinuities[i]);
  }
  require(!p.projection || o.method == CvodeMethod::bdf,
          "CVODE: projection onto a constraint manifold needs the BDF method (CVODE has it for "
          "BDF only), got ",
          to_string(o.method));
}

}  // namespace

CvodeStats integrate_cvode(const OdeProblem& problem, Vector& x, const CvodeOptions& o,
                           const OdeObserver& observe) {
  validate(o, problem, x);
  const auto start = Clock::now();
  const auto n = static_cast<sunindextype>(x.size());

  SUNContext raw_ctx = nullptr;
  check(SUNContext_Create(nullptr, &raw_ctx), "SUNContext_Create");
  std::unique_ptr<_SUNContext, ContextDeleter> ctx(raw_ctx);
  std::unique_ptr<_generic_N_Vector, VectorDeleter> y(N_VNew_Serial(n, ctx.get()));
  require(y != nullptr, "CVODE: cannot allocate a vector of ", n, " entries");
  view(y.get()) = x;
  std::unique_ptr<void, CvodeDeleter> mem(
      CVodeCreate(o.method == CvodeMethod::bdf ? CV_BDF : CV_ADAMS, ctx.get()));
  require(mem != nullptr, "CVODE: CVodeCreate failed");

  Callbacks cb;
  cb.problem = &problem;
  cb.xdot.resize(x.size());
  check(CVodeSetErrHandlerFn(mem.get(), error_handler, &cb), "CVodeSetErrHandlerFn");
  check(CVodeInit(mem.get(), rhs, o.t0, y.get()), "CVodeInit");
  check(CVodeSetUserData(mem.get(), &cb), "CVodeSetUserData");
  check(CVodeSStolerances(mem.get(), o.rtol, o.atol), "CVodeSStolerances");
  check(CVodeSetMaxNumSteps(mem.get(), o.max_steps), "CVodeSetMaxNumSteps");
  if (o.max_step > 0.0) check(CVodeSetMaxStep(mem.get(), o.max_step), "CVodeSetMaxStep");

  std::unique_ptr<_generic_SUNMatrix, MatrixDeleter> A(SUNDenseMatrix(n, n, ctx.get()));
  std::unique_ptr<_generic_SUNLinearSolver, SolverDeleter> LS(
      SUNLinSol_Dense(y.get(), A.get(), ctx.get()));
  require(A != nullptr && LS != nullptr, "CVODE: cannot allocate the dense ", n, " x ", n,
          " linear solver");
  check(CVodeSetLinearSolver(mem.get(), LS.get(), A.get()), "CVodeSetLinearSolver");
  if (problem.jacobian) check(CVodeSetJacFn(mem.get(), jacobian), "CVodeSetJacFn");
  if (problem.projection) {
    check(CVodeSetProjFn(mem.get(), project), "CVodeSetProjFn");
    check(CVodeSetProjErrEst(mem.get(), SUNFALSE), "CVodeSetProjErrEst");
  }

  // Two times closer than this are one: CVODE refuses an output or a stop time within its
  // roundoff of the current time.
  const auto close = [](double a, double b) {
    return std::abs(a - b) <= 1e-12 * std::max(1.0, std::max(std::abs(a), std::abs(b)));
  };
  std::vector<double> restarts;  // strictly inside (t0, t_end), at least `close` apart
  for (const double tb : o.discontinuities)
    if (tb > o.t0 && tb < o.t_end && !close(tb, o.t0) && !close(tb, o.t_end) &&
        (restarts.empty() || !close(tb, restarts.back())))
      restarts.push_back(tb);
  std::size_t next = 0;  // the next restart ahead

  CvodeStats s;
  // CVodeReInit zeroes CVODE's counters: each stretch's are added before it starts afresh.
  const auto add_counters = [&] {
    long value = 0;
    CVodeGetNumSteps(mem.get(), &value);
    s.steps += value;
    CVodeGetNumRhsEvals(mem.get(), &value);
    s.rhs_evaluations += value;
    CVodeGetNumLinRhsEvals(mem.get(), &value);
    s.rhs_evaluations += value;
    CVodeGetNumJacEvals(mem.get(), &value);
    s.jacobian_evaluations += value;
    CVodeGetNumErrTestFails(mem.get(), &value);
    s.error_test_failures += value;
    CVodeGetNumNonlinSolvConvFails(mem.get(), &value);
    s.nonlinear_convergence_failures += value;
    if (problem.projection) {
      CVodeGetNumProjEvals(mem.get(), &value);
      s.projections += value;
    }
  };
  double t = o.t0;
  // To `target`, never across the next restart. With a projection the outputs are step points
  // (stop time target): CVODE's interpolation between steps would leave the manifold by its
  // interpolation error. Every call moves the stop time on: a stop time left behind makes
  // CVODE return there again.
  const auto advance = [&](double target) {
    // (A restart within `close` of target counts as at target: the stop is not before it.)
    const double stop = problem.projection
                            ? target
                            : std::max(target, next < restarts.size() ? restarts[next] : o.t_end);
    check(CVodeSetStopTime(mem.get(), stop), "CVodeSetStopTime");
    const int flag = CVode(mem.get(), target, y.get(), &t, CV_NORMAL);
    if (cb.error) std::rethrow_exception(cb.error);
    if (flag < 0)
      throw NumericalError(concat("CVODE (", to_string(o.method), ", rtol ", o.rtol, ", atol ",
                                  o.atol, ") failed at t = ", t, " on the way to t = ", target,
                                  ": ", flag_name(flag),
                                  cb.message.empty() ? "" : " (" + cb.message + ")"));
    // In CV_NORMAL mode a successful return is at target exactly (interpolated, or the stop
    // time itself); anything else would hand the observer a state under the wrong time.
    if (t != target)
      throw NumericalError(concat("CVODE returned at t = ", t, " instead of t = ", target, " (",
                                  flag_name(flag), ")"));
  };
  const auto restart = [&] {
    add_counters();
    check(CVodeReInit(mem.get(), t, y.get()), "CVodeReInit");
    ++s.restarts;
    ++next;
  };

  if (observe) observe(o.t0, x);
  const double span = o.t_end - o.t0;
  const long outputs =
      o.output_dt > 0.0 ? static_cast<long>(std::ceil(span / o.output_dt - 1e-9)) : 1;
  for (long k = 1; k <= outputs; ++k) {
    const double t_out = k == outputs ? o.t_end : o.t0 + static_cast<double>(k) * o.output_dt;
    while (next < restarts.size() && restarts[next] < t_out && !close(restarts[next], t_out)) {
      advance(restarts[next]);
      restart();
    }
    advance(t_out);
    x = view(y.get());
    if (!x.allFinite())
      throw NumericalError(concat("CVODE: the state became non-finite at t = ", t));
    if (observe) observe(t, x);
    if (next < restarts.size() && close(restarts[next], t_out)) restart();
  }

  add_counters();
  CVodeGetLastOrder(mem.get(), &s.last_order);
  s.seconds = seconds_since(start);
  return s;
}

}  // namespace mor
