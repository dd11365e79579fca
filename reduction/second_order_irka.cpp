// SPDX-License-Identifier: GPL-3.0-or-later
// SOR-IRKA (see irka.hpp): second-order interpolation whose next shifts come from first-order
// IRKA on the reduced model's first-order form.
#include "reduction/irka.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "reduction/irka_interpolation.hpp"
#include "reduction/low_rank_adi.hpp"
#include "reduction/system_norms.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

using detail::concat;

namespace {

/// SO-IRKA looks for cycles of at most this many iterations.
constexpr Index kMaxCyclePeriod = 10;

}  // namespace

SoIrkaResult second_order_irka(const SecondOrderSystem& sys, const SoIrkaOptions& o) {
  using namespace irka_detail;
  detail::SubnormalsFlushed flushed(true);  // as in irka
  const auto t0 = Clock::now();
  validate(sys);
  const Index nq = sys.n(), r = o.order;
  check_common(r, nq, o.tolerance, o.max_iterations, "SO-IRKA");
  require(o.inner_max_iterations >= 1, "SO-IRKA: inner_max_iterations must be >= 1, got ",
          o.inner_max_iterations);
  require(o.cycle_ratio >= 0.0 && std::isfinite(o.cycle_ratio),
          "SO-IRKA: cycle_ratio must be >= 0, got ", o.cycle_ratio);
  SecondOrderLtiOperator op(sys);
  SoIrkaResult res;
  std::vector<Point> pts =
      o.initial == IrkaInitialShifts::given
          ? given_points(o.shifts, o.b, o.c, r, sys.n_inputs(), sys.n_outputs())
          : ritz_points(op, r, o.ritz_steps);
  res.initial_seconds = seconds_since(t0);
  const bool two_sided = o.projection == SoIrkaProjection::two_sided;

  Previous prev;
  double change = std::numeric_limits<double>::infinity();
  bool converged = false;
  RawBases raw;
  // The iterate of the smallest shift change so far (what a cycle returns) and the recurrence
  // of the shift set (see SoIrkaOptions::cycle_ratio).
  struct Iterate {
    Index iteration = 0;
    double shift_change = std::numeric_limits<double>::infinity();
    DenseSecondOrderSystem reduced;
    Matrix V, W;
    double spectral_abscissa = 0.0;
    std::vector<Point> next;
    std::vector<Complex> next_shifts;
  } best;
  Index period = 0, repeats = 0, recurs_to = 0;
  double cycle_distance = 0.0;
  bool cycling = false;
  for (Index it = 1; it <= o.max_iterations; ++it) {
    poll(o.stop_requested, "SO-IRKA", it);
    const auto ti = Clock::now();
    IrkaIteration h;
    h.shifts = all_shifts(pts);
    // The operator's state is x = [q; v]: a solve with B = [0; B] has q-block -S(sigma)^{-1} B b,
    // a transposed solve with C^T = [Cp^T; Cv^T] has v-block -S(sigma)^{-T} (Cp + sigma Cv)^T c
    // (see SecondOrderLtiOperator): the second-order bases up to sign.
    raw_bases(op, nullptr, pts, two_sided, raw, o.stop_requested, "SO-IRKA", it);
    res.shifted_solves += raw.solves;
    fill_history(h, pts, raw, prev, 0.0);
    Matrix X = raw.V.topRows(nq);
    orthonormal_basis(X, res.V, "V", it);
    if (two_sided) {
      X = raw.W.bottomRows(nq);
      orthonormal_basis(X, res.W, "W", it);
    } else {
      res.W = res.V;
    }
    DenseSecondOrderSystem& red = res.reduced;
    const Matrix MV = sys.M * res.V, DV = sys.D * res.V, KV = sys.K * res.V;
    red.M = res.W.transpose() * MV;
    red.D = res.W.transpose() * DV;
    red.K = res.W.transpose() * KV;
    red.B = res.W.transpose() * sys.B;
    red.Cp = sys.Cp * res.V;
    red.Cv = sys.Cv * res.V;
    red.D_ff = Matrix::Zero(sys.n_outputs(), sys.n_inputs());
    const Eigen::PartialPivLU<Matrix> mlu(red.M);
    constexpr double kSingularRcond = 1e-14;  // as for E_r in pole_residue_form
    if (!(mlu.rcond() > kSingularRcond))
      throw NumericalError(concat("SO-IRKA iteration ", it,
                                  ": reduced M_r = W^T M V is singular (rcond ", mlu.rcond(), ")"));
    DenseLtiOperator first(to_first_order(red));
    const Matrix E1 = first.E();
    res.spectral_abscissa = spectral_abscissa(first.poles());
    // Wyatt's SOR-IRKA step: the 2r-state first-order form reduced to r by IRKA, warm-started
    // at the current interpolation data; its mirrored poles are the next shifts.
    IrkaOptions inner;
    inner.order = r;
    inner.tolerance = o.tolerance;
    inner.max_iterations = o.inner_max_iterations;
    inner.surrogate = false;  // (2r states: the solves cost no more than a surrogate's)
    inner.stop_requested = o.stop_requested;
    inner.initial = IrkaInitialShifts::given;
    inner.shifts = h.shifts;
    all_directions(pts, inner.b, inner.c);
    IrkaResult ir;
    try {
      ir = irka(first, inner);
    } catch (const NumericalError& e) {
      throw NumericalError(concat("SO-IRKA iteration ", it, ", inner IRKA: ", e.what()));
    }
    res.inner_iterations.push_back(ir.iterations);
    std::vector<Point> next =
        given_points(ir.shifts, ir.b, ir.c, r, sys.n_inputs(), sys.n_outputs());
    const std::vector<Complex> next_shifts = all_shifts(next);
    h.shift_change = shift_distance(next_shifts, h.shifts);
    h.model_change = model_change(prev, E1, first.A(), first.B(), first.C());
    change = o.criterion == IrkaCriterion::shifts ? h.shift_change : h.model_change;
    h.seconds = seconds_since(ti);
    // A cycle: the next shift set comes back to the set of an iteration p >= 2 back, closer
    // than cycle_ratio times the step it just made, for p iterations in a row (a whole period
    // repeated). A converging sequence does not: monotone, the set p back is farther than one
    // step; oscillating with contraction q, the ratio is (1 - q) / q.
    Index p_found = 0;
    double d_found = 0.0;
    if (!(change <= o.tolerance) && o.cycle_ratio > 0.0) {
      const Index max_p = std::min<Index>(it, kMaxCyclePeriod);
      for (Index p = 2; p <= max_p && p_found == 0; ++p) {
        const double d =
            shift_distance(next_shifts, res.history[static_cast<std::size_t>(it - p)].shifts);
        if (d <= o.cycle_ratio * h.shift_change) {
          p_found = p;
          d_found = d;
        }
      }
    }
    repeats = p_found == 0 ? 0 : p_found == period ? repeats + 1 : 1;
    period = p_found;
    if (p_found != 0) {
      cycle_distance = d_found;
      recurs_to = it + 1 - p_found;
    }
    if (h.shift_change < best.shift_change) {
      best.iteration = it;
      best.shift_change = h.shift_change;
      best.reduced = res.reduced;
      best.V = res.V;
      best.W = res.W;
      best.spectral_abscissa = res.spectral_abscissa;
      best.next = next;
      best.next_shifts = next_shifts;
    }
    res.history.push_back(std::move(h));
    res.iterations = it;
    res.returned_iteration = it;
    prev = Previous{true, E1, first.A(), first.B(), first.C()};
    pts = std::move(next);
    res.shifts = next_shifts;
    if (change <= o.tolerance) {
      converged = true;
      break;
    }
    if (period != 0 && repeats >= period) {
      cycling = true;
      break;
    }
  }
  if (cycling && best.iteration != res.returned_iteration) {
    res.reduced = std::move(best.reduced);
    res.V = std::move(best.V);
    res.W = std::move(best.W);
    res.spectral_abscissa = best.spectral_abscissa;
    pts = std::move(best.next);
    res.shifts = std::move(best.next_shifts);
    res.returned_iteration = best.iteration;
  }
  res.cycle_period = cycling ? period : 0;
  all_directions(pts, res.b, res.c);
  res.r = r;
  res.status = !(res.spectral_abscissa < 0.0) ? IrkaStatus::unstable
               : converged                    ? IrkaStatus::converged
               : cycling                      ? IrkaStatus::cycling
                                              : IrkaStatus::max_iterations;
  if (res.status == IrkaStatus::cycling)
    res.message =
        concat("not converged: the shift set cycles with period ", period, " (after iteration ",
               res.iterations, " it came back to that of iteration ", recurs_to, " within ",
               cycle_distance, ", relative, for a whole period; shift change ", change,
               " > tolerance ", o.tolerance, "); returned the iterate of iteration ",
               res.returned_iteration, ", the smallest shift change (", best.shift_change, ")");
  else
    res.message = status_message(res.status, res.iterations, change, o.tolerance,
                                 res.spectral_abscissa, o.max_iterations, converged, o.criterion);
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace mor
