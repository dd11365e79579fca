// SPDX-License-Identifier: GPL-3.0-or-later
// First- and second-order balanced truncation from Gramian factors (see the header).
#include "reduction/balanced_truncation.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "reduction/dense_lyapunov.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/integrators/integrate.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

/// Singular values below this fraction of the largest count as numerically zero for the
/// square-root projection, which divides by sqrt(sigma_r): rounding in Z_o^T E Z_c is about
/// eps * sigma_1 per entry, so a smaller sigma_r would only scale noise into the bases.
double rank_threshold(Index n) {
  return static_cast<double>(n) * std::numeric_limits<double>::epsilon();
}

/// A^T B (transpose_a) or A B: the tall products of BT with low-rank factors (n x k times k x r,
/// n x k transposed times n x c), by Eigen on this thread and a second one with subnormals
/// flushed (detail::tall_product; OpenBLAS's worker threads keep the default mode: on the chain,
/// whose factors decay exponentially along it into the subnormal range, its dgemm took 1.4 s
/// for an n x 96 times 96 x 20 product at N = 1e5, 25 times the time on normal numbers).
Matrix product(bool transpose_a, const Matrix& A, const Matrix& B) {
  if (transpose_a) return detail::tall_transpose_product(A, B);
  return detail::tall_product(A, B);
}

using lapack::Svd;

/// SVD of a k_o x k_c matrix by LAPACK's divide and conquer (dgesdd): on the chain Eigen's
/// divide and conquer matched SLICOT's largest HSV to 1e-15 relative where one-sided Jacobi
/// (with its QR preconditioner) was off by 9e-14; dgesdd is the same algorithm, blocked.
/// LAPACK cannot poll for a stop, and at k_o = k_c = 2300 it took 8.7 s: it runs on a thread of
/// its own that a stop request abandons (src/core/interrupt.hpp).
Svd svd(Matrix X) {
  return run_abandonable("balanced truncation (SVD)",
                         [X = std::move(X)]() mutable { return lapack::thin_svd(std::move(X)); });
}

/// The first r columns of an orthonormal basis of range(X) (X is n x r, full column rank), by
/// LAPACK's blocked Householder QR.
Matrix orthonormal_basis(Matrix X) {
  lapack::qr_q_factor(X);
  return X;
}

/// Gramian factors: Zc, Zo, or for dense Gramians (unless asked to form them) the Schur form
/// they share, which gives Zo^T E Zc and the bases without forming either factor.
struct Factors {
  Matrix Zc, Zo;
  std::optional<DenseGramianFactors> dense;
  GramianDiagnostics diagnostics;

  Matrix hankel_product(const LtiOperator& sys) const;
  Matrix controllability_times(const Matrix& Y) const {
    return dense ? dense->controllability_times(Y) : product(false, Zc, Y);
  }
  Matrix observability_times(const Matrix& Y) const {
    return dense ? dense->observability_times(Y) : product(false, Zo, Y);
  }
};

/// Both Gramian factors of sys by the chosen method; dense ones are formed as Zc and Zo only if
/// form_dense_factors is set.
Factors gramian_factors(LtiOperator& sys, const GramianOptions& options, bool form_dense_factors) {
  GramianMethod method = options.method;
  const Index dense_limit = options.dense_limit;
  require(dense_limit >= 0, "balanced truncation: dense_limit = ", dense_limit, " must be >= 0");
  if (method == GramianMethod::automatic)
    method = sys.n() <= dense_limit ? GramianMethod::dense : GramianMethod::low_rank;
  const auto t0 = Clock::now();
  Factors f;
  auto& d = f.diagnostics;
  d.method = method;
  d.solver = options.solver;
  if (method == GramianMethod::dense) {
    f.dense.emplace(sys.E_is_identity() ? Matrix() : dense_E(sys), dense_A(sys), sys.B(), sys.C(),
                    options.dense_solver);
    d.residual_c = f.dense->residual(GramianKind::controllability);
    d.residual_o = f.dense->residual(GramianKind::observability);
    d.rank_c = f.dense->rank_c();
    d.rank_o = f.dense->rank_o();
    d.dense_solver = f.dense->solver();
    d.sign_steps = f.dense->sign_steps();
    if (form_dense_factors) {
      f.Zc = f.dense->controllability_factor();
      f.Zo = f.dense->observability_factor();
      f.dense.reset();
    }
    d.seconds = seconds_since(t0);
    return f;
  } else {
    AdiOptions adi_options = options.adi;
    for (auto kind : {GramianKind::controllability, GramianKind::observability}) {
      const bool adi = options.solver == LowRankSolver::adi;
      AdiResult run =
          adi ? low_rank_adi(sys, kind, adi_options) : rational_krylov(sys, kind, options.rksm);
      // Penzl's shifts depend on the spectrum only, which the transposed pencil shares: the
      // observability run takes the same cycle (and, through the operator's cache, its
      // factorizations) instead of repeating the Arnoldi runs.
      if (adi && run.strategy == ShiftStrategy::penzl && adi_options.shifts.empty())
        adi_options.shifts = run.shift_cycle;
      if (run.status != AdiStatus::converged) {
        d.converged = false;
        if (!options.allow_unconverged)
          throw NumericalError(detail::concat(
              "balanced truncation: ", adi ? "LR-ADI" : "RKSM", " for the ", to_string(kind),
              " Gramian did not converge: ", run.message,
              adi ? " (raise adi.max_iterations, loosen adi.tolerance, try the rksm solver, or "
                    "set allow_unconverged to reduce with the factor reached)"
                  : " (raise rksm.max_dimension, loosen rksm.tolerance, or set "
                    "allow_unconverged to reduce with the factor reached)"));
      }
      const double residual = run.residual_history.empty() ? 0.0 : run.residual_history.back();
      Matrix& Z = kind == GramianKind::controllability ? f.Zc : f.Zo;
      Z = std::move(run.Z);
      run.Z.resize(0, 0);  // the factor lives in Factors; the diagnostics keep the history
      if (kind == GramianKind::controllability) {
        d.residual_c = residual;
        d.low_rank_c = std::move(run);
      } else {
        d.residual_o = residual;
        d.low_rank_o = std::move(run);
      }
    }
  }
  d.rank_c = f.Zc.cols();
  d.rank_o = f.Zo.cols();
  d.seconds = seconds_since(t0);
  return f;
}

/// Zo^T E Zc (k_o x k_c) with E Zc formed a block of columns at a time, in two buffers reused
/// for every block (a copy of the block, since the operator takes a Matrix, and its product
/// with E): an n x k_c temporary would be as large as the factor itself (1.5 GB for the chain at
/// N = 10^6), and fresh buffers per block cost a page fault per 4 KiB. Each block reads all of
/// Zo once, so the width trades memory against passes over Zo: blocks of kBlockBytes each (at
/// least kMinBlock columns). At N = 10^6 (n = 2 10^6) that is 16 columns, 512 MB for both
/// buffers, a sixth of the factors. At n = 2 10^4 with Gramian ranks of 2 300 (the chain with an
/// unreachable ADI tolerance) blocks of 16 columns read Zo (360 MB) 143 times, blocks of 419
/// columns 6 times: the whole `mor run` took 19 to 22 s of CPU with 16, 12 to 14 s with 419
/// (two runs each, load 6). The stop flag (src/core/interrupt.hpp) is polled per block.
Matrix projected_E(const LtiOperator& sys, const Matrix& Zo, const Matrix& Zc) {
  constexpr const char* what = "balanced truncation (projection step)";
  throw_if_stop_requested(what);
  if (sys.E_is_identity()) return detail::tall_transpose_product(Zo, Zc);
  constexpr Index kMinBlock = 16;
  constexpr double kBlockBytes = 64.0 * (1 << 20);
  const Index k = Zc.cols();
  Matrix P(Zo.cols(), k);
  if (k == 0) return P;
  const Index budget = static_cast<Index>(kBlockBytes / (sizeof(double) * double(Zc.rows())));
  const Index block_width = std::max(kMinBlock, budget);
  // Equal blocks of at most block_width columns; the last one may be narrower, and then reuses
  // the buffers at their width (its stale extra columns are multiplied by E but not used).
  const Index blocks = (k + block_width - 1) / block_width;
  const Index width = (k + blocks - 1) / blocks;
  Matrix block(Zc.rows(), width), E_block;
  for (Index j = 0; j < k; j += width) {
    const Index c = std::min(width, k - j);
    block.leftCols(c) = Zc.middleCols(j, c);
    sys.apply_E(block, E_block);
    P.middleCols(j, c) = detail::tall_transpose_product(Zo, E_block.leftCols(c));
    throw_if_stop_requested(what);
  }
  return P;
}

Matrix Factors::hankel_product(const LtiOperator& sys) const {
  return dense ? dense->hankel_product() : projected_E(sys, Zo, Zc);
}

/// The reduced order from the selection, checked against n and the available values.
Index select_order(const OrderSelection& sel, const Vector& values, Index n, const char* what) {
  require((sel.order > 0) != (sel.tolerance > 0.0), what,
          ": set exactly one of order (r >= 1) and tolerance (> 0); got order = ", sel.order,
          ", tolerance = ", sel.tolerance);
  require(sel.order >= 0, what, ": order r = ", sel.order, " must be >= 1");
  require(values.size() >= 1, what, ": no singular values were computed");
  if (sel.tolerance > 0.0) return order_for_tolerance(values, sel.tolerance);
  require(sel.order <= n, what, ": order r = ", sel.order, " exceeds the system order n = ", n);
  require(sel.order <= values.size(), what, ": order r = ", sel.order,
          " exceeds the number of computed singular values, ", values.size(),
          " (the Gramian factor ranks); lower r or tighten the ADI tolerance");
  return sel.order;
}

/// sigma_r must be numerically nonzero for a projection that divides by sqrt(sigma_r).
void require_rank(const Vector& s, Index r, Index n, const char* what) {
  const double threshold = rank_threshold(n) * s(0);
  require(s(r - 1) > threshold, what, ": order r = ", r,
          " exceeds the numerical rank of the Gramian product (sigma_", r, " = ", s(r - 1),
          " <= ", threshold, " = n eps sigma_1); lower r or use the balancing_free projection");
}

}  // namespace

BtProjection parse_bt_projection(std::string_view name) {
  if (name == "square_root") return BtProjection::square_root;
  if (name == "balancing_free") return BtProjection::balancing_free;
  throw InvalidArgument(detail::concat("unknown BT projection '", name,
                                       "' (expected square_root or balancing_free)"));
}
std::string_view to_string(BtProjection p) {
  return p == BtProjection::square_root ? "square_root" : "balancing_free";
}

GramianMethod parse_gramian_method(std::string_view name) {
  if (name == "automatic") return GramianMethod::automatic;
  if (name == "dense") return GramianMethod::dense;
  if (name == "low_rank") return GramianMethod::low_rank;
  throw InvalidArgument(detail::concat("unknown Gramian method '", name,
                                       "' (expected automatic, dense or low_rank)"));
}
std::string_view to_string(GramianMethod m) {
  switch (m) {
    case GramianMethod::automatic:
      return "automatic";
    case GramianMethod::dense:
      return "dense";
    case GramianMethod::low_rank:
      return "low_rank";
  }
  return "?";
}

LowRankSolver parse_low_rank_solver(std::string_view name) {
  if (name == "adi") return LowRankSolver::adi;
  if (name == "rksm") return LowRankSolver::rksm;
  throw InvalidArgument(
      detail::concat("unknown low-rank Gramian solver '", name, "' (expected adi or rksm)"));
}
std::string_view to_string(LowRankSolver s) {
  switch (s) {
    case LowRankSolver::adi:
      return "adi";
    case LowRankSolver::rksm:
      return "rksm";
  }
  return "?";
}

SecondOrderBtVariant parse_second_order_bt_variant(std::string_view name) {
  if (name == "p") return SecondOrderBtVariant::p;
  if (name == "v") return SecondOrderBtVariant::v;
  if (name == "pv") return SecondOrderBtVariant::pv;
  if (name == "vp") return SecondOrderBtVariant::vp;
  throw InvalidArgument(
      detail::concat("unknown second-order BT variant '", name, "' (expected p, v, pv or vp)"));
}
std::string_view to_string(SecondOrderBtVariant v) {
  switch (v) {
    case SecondOrderBtVariant::p:
      return "p";
    case SecondOrderBtVariant::v:
      return "v";
    case SecondOrderBtVariant::pv:
      return "pv";
    case SecondOrderBtVariant::vp:
      return "vp";
  }
  return "?";
}

SecondOrderProjection parse_second_order_projection(std::string_view name) {
  if (name == "square_root") return SecondOrderProjection::square_root;
  if (name == "balancing_free") return SecondOrderProjection::balancing_free;
  if (name == "galerkin") return SecondOrderProjection::galerkin;
  throw InvalidArgument(detail::concat("unknown second-order projection '", name,
                                       "' (expected square_root, balancing_free or galerkin)"));
}
std::string_view to_string(SecondOrderProjection p) {
  switch (p) {
    case SecondOrderProjection::square_root:
      return "square_root";
    case SecondOrderProjection::balancing_free:
      return "balancing_free";
    case SecondOrderProjection::galerkin:
      return "galerkin";
  }
  return "?";
}

Index order_for_tolerance(const Vector& hsv, double tolerance) {
  require(tolerance > 0.0, "error-bound tolerance = ", tolerance, " must be > 0");
  require(hsv.size() >= 1, "order_for_tolerance: no Hankel singular values");
  // tail = 2 sum_{i>r} sigma_i, accumulated from the smallest value for accuracy.
  double tail = 0.0;
  Index r = hsv.size();
  while (r > 1 && tail + 2.0 * hsv(r - 1) <= tolerance) {
    tail += 2.0 * hsv(r - 1);
    --r;
  }
  return r;
}

BtResult balanced_truncation(LtiOperator& sys, const BtOptions& options) {
  constexpr const char* what = "balanced truncation";
  // Subnormal numbers flushed to zero (x86 FTZ/DAZ, this thread; restored on return): low-rank
  // factors of systems driven at one end decay exponentially into the subnormal range, where
  // each operation costs about a hundred cycles. Results change by less than 1e-307 absolute.
  detail::SubnormalsFlushed flushed(true);
  Factors f = gramian_factors(sys, options.gramians, false);
  const auto t0 = Clock::now();
  BtResult res;
  const Index n = sys.n();

  const Svd s = svd(f.hankel_product(sys));
  throw_if_stop_requested(what);
  res.bound_is_complete = f.diagnostics.method == GramianMethod::dense;
  if (res.bound_is_complete && s.s.size() < n) {
    // The sign function's factors have the numerical rank: the values beyond lie below its
    // compression level (about eps sqrt(||P|| ||Q||)) and are reported as 0.
    res.hsv = Vector::Zero(n);
    res.hsv.head(s.s.size()) = s.s;
  } else {
    res.hsv = s.s;
  }
  const Index r = select_order(options.selection, res.hsv, n, what);
  require(r <= s.s.size(), what, ": order r = ", r, " exceeds the rank ", s.s.size(),
          " of the sign-function Gramian factors; lower r or set dense_solver = \"schur\"");
  res.r = r;
  res.error_bound = 2.0 * res.hsv.tail(res.hsv.size() - r).sum();
  // ||G||_H2 = ||C Z_c||_F (p x k products): the analysis reuses it instead of another LR-ADI.
  if (!f.dense && f.Zc.size() != 0 && (sys.D_ff().size() == 0 || sys.D_ff().isZero(0.0))) {
    Matrix CZc = sys.C() * f.Zc;
    res.h2_norm = CZc.norm();
    if (f.diagnostics.low_rank_c.has_value() && f.diagnostics.solver == LowRankSolver::adi)
      res.CZc = std::move(CZc);
  }

  // The reference model's order q (0: none): see BtOptions::reference_extra_order.
  Index q = 0;
  if (options.reference_extra_order > 0 && r < s.s.size()) {
    const double threshold = rank_threshold(n) * s.s(0);
    Index usable = r;
    while (usable < s.s.size() && s.s(usable) > threshold) ++usable;
    const Index cap = std::min(usable, r + options.reference_extra_order);
    if (cap > r) {
      const double target = 1e-3 * s.s(r);
      q = cap;
      double tail = 2.0 * res.hsv.tail(res.hsv.size() - cap).sum();
      while (q > r + 1 && tail + 2.0 * res.hsv(q - 1) <= target) {
        tail += 2.0 * res.hsv(q - 1);
        --q;
      }
      res.q = q;
      res.reference_bound = 2.0 * res.hsv.tail(res.hsv.size() - q).sum();
    }
  }
  // Square-root bases of order q (the reference's; their leading r columns are the reduced
  // model's square-root bases).
  Matrix Vq, Wq;
  const Vector scale_q = res.hsv.head(std::max(q, r))
                             .cwiseMax(std::numeric_limits<double>::min())
                             .cwiseSqrt()
                             .cwiseInverse();

  if (options.projection == BtProjection::square_root) {
    require_rank(res.hsv, r, n, what);
    const Index cols = std::max(q, r);
    Matrix V = f.controllability_times(s.V.leftCols(cols) * scale_q.head(cols).asDiagonal());
    f.Zc = Matrix();  // each factor is released once used: at N = 10^6 each is 1.5 GB
    Matrix W = f.observability_times(s.U.leftCols(cols) * scale_q.head(cols).asDiagonal());
    if (q > 0) {
      res.V = V.leftCols(r);
      res.W = W.leftCols(r);
      Vq = std::move(V);
      Wq = std::move(W);
    } else {
      res.V = std::move(V);
      res.W = std::move(W);
    }
  } else {
    res.V = orthonormal_basis(f.controllability_times(s.V.leftCols(r)));
    if (q > 0) Vq = f.controllability_times(s.V.leftCols(q) * scale_q.head(q).asDiagonal());
    f.Zc = Matrix();
    res.W = orthonormal_basis(f.observability_times(s.U.leftCols(r)));
    if (q > 0) Wq = f.observability_times(s.U.leftCols(q) * scale_q.head(q).asDiagonal());
  }
  res.gramians = std::move(f.diagnostics);
  f = Factors{};  // release the factors before the projected products

  Matrix X;
  if (q > 0) {
    sys.apply_A(Vq, X);
    res.Aref = product(true, Wq, X);
    res.Bref = product(true, Wq, sys.B());
    res.Cref = sys.C() * Vq;
  }
  if (q > 0 && options.projection == BtProjection::square_root) {
    // The reduced model is the reference's leading block (same products).
    res.Ar = res.Aref.topLeftCorner(r, r);
    res.Br = res.Bref.topRows(r);
    res.Cr = res.Cref.leftCols(r);
    res.Er = Matrix::Identity(r, r);
  } else {
    sys.apply_A(res.V, X);
    res.Ar = product(true, res.W, X);
    if (options.projection == BtProjection::square_root) {
      res.Er = Matrix::Identity(r, r);  // W^T E V = I_r by construction
    } else {
      sys.apply_E(res.V, X);
      res.Er = product(true, res.W, X);
    }
    res.Br = product(true, res.W, sys.B());
    res.Cr = sys.C() * res.V;
  }
  res.Dr = sys.D_ff();
  res.spectral_abscissa =
      DenseLtiOperator(res.Er, res.Ar, res.Br, res.Cr, res.Dr).poles().real().maxCoeff();
  res.seconds_projection = seconds_since(t0);
  return res;
}

SecondOrderBtResult second_order_balanced_truncation(const SecondOrderSystem& sys,
                                                     const SecondOrderBtOptions& options) {
  constexpr const char* what = "second-order balanced truncation";
  validate(sys);
  SecondOrderLtiOperator op(sys);
  Factors f = gramian_factors(op, options.gramians, true);
  const auto t0 = Clock::now();
  const Index nq = sys.n();
  SecondOrderBtResult res;
  res.gramians = f.diagnostics;

  // Position and velocity blocks of the factors (x = [q; v]).
  const auto Zc_p = f.Zc.topRows(nq), Zc_v = f.Zc.bottomRows(nq);
  const auto Zo_p = f.Zo.topRows(nq), Zo_v = f.Zo.bottomRows(nq);
  const Matrix MZc_p = sys.M * Zc_p, MZc_v = sys.M * Zc_v;

  // First-order HSVs, sigma(Z_o^T E Z_c), E = diag(I, M), for reference.
  res.hsv = svd(Zo_p.transpose() * Zc_p + Zo_v.transpose() * MZc_v).s;

  Svd rank_svd, w_svd;  // the SVD ranking V's coordinates and the one giving W's
  bool v_from_position = true, w_from_velocity = true;
  switch (options.variant) {
    case SecondOrderBtVariant::p:
      rank_svd = svd(Zo_p.transpose() * Zc_p);
      w_svd = svd(Zo_v.transpose() * MZc_v);
      break;
    case SecondOrderBtVariant::v:
      rank_svd = svd(Zo_v.transpose() * MZc_v);
      w_svd = rank_svd;
      v_from_position = false;
      break;
    case SecondOrderBtVariant::pv:
      rank_svd = svd(Zo_v.transpose() * MZc_p);
      w_svd = rank_svd;
      break;
    case SecondOrderBtVariant::vp:
      rank_svd = svd(Zo_p.transpose() * Zc_v);
      w_svd = svd(Zo_p.transpose() * Zc_p);
      v_from_position = false;
      w_from_velocity = false;
      break;
  }
  res.sv = rank_svd.s;
  const Index r = select_order(options.selection, res.sv, nq, what);
  require(r <= w_svd.s.size(), what, ": order r = ", r, " exceeds the ", w_svd.s.size(),
          " singular values of the test-space factor");
  res.r = r;

  const Matrix Vr = (v_from_position ? Matrix(Zc_p) : Matrix(Zc_v)) * rank_svd.V.leftCols(r);
  const Matrix Wr = (w_from_velocity ? Matrix(Zo_v) : Matrix(Zo_p)) * w_svd.U.leftCols(r);
  switch (options.projection) {
    case SecondOrderProjection::square_root: {
      require_rank(rank_svd.s, r, 2 * nq, what);
      require_rank(w_svd.s, r, 2 * nq, what);
      res.V = Vr * rank_svd.s.head(r).cwiseSqrt().cwiseInverse().asDiagonal();
      res.W = Wr * w_svd.s.head(r).cwiseSqrt().cwiseInverse().asDiagonal();
      break;
    }
    case SecondOrderProjection::balancing_free:
      res.V = orthonormal_basis(Vr);
      res.W = orthonormal_basis(Wr);
      break;
    case SecondOrderProjection::galerkin:
      res.V = orthonormal_basis(Vr);
      res.W = res.V;
      break;
  }
  f = Factors{};

  auto& red = res.reduced;
  red.M = res.W.transpose() * (sys.M * res.V);
  red.D = res.W.transpose() * (sys.D * res.V);
  red.K = res.W.transpose() * (sys.K * res.V);
  red.B = res.W.transpose() * sys.B;
  red.Cp = sys.Cp * res.V;
  red.Cv = sys.Cv * res.V;
  red.D_ff = Matrix::Zero(sys.n_outputs(), sys.n_inputs());
  validate(red);
  res.spectral_abscissa = to_first_order(red).poles().real().maxCoeff();
  res.seconds_projection = seconds_since(t0);
  return res;
}

}  // namespace mor
