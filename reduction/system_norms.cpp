// SPDX-License-Identifier: GPL-3.0-or-later
// Transfer functions, Bode magnitudes, accurate evaluation of G(i w) and the helpers the H2
// (h2_norm.cpp) and H-infinity norms (hinf_norm.cpp) share.
#include "reduction/system_norms.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>

#include "reduction/dense_lyapunov.hpp"
#include "reduction/system_norms_detail.hpp"
#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace norms_detail {

/// Largest singular value of a small complex matrix (p x m transfer-function values).
double largest_singular_value(const ComplexMatrix& G) {
  return lapack::spectral_norm(G);
}

double largest_singular_value(const Matrix& D) {
  if (D.size() == 0) return 0.0;
  if (D.rows() == 1 || D.cols() == 1) return D.norm();
  Matrix X = D;
  return lapack::singular_values(X)(0);
}

/// "a + bi" with enough digits to recognise the value.
std::string complex_text(Complex z) {
  return detail::concat(z.real(), z.imag() < 0 ? " - " : " + ", std::abs(z.imag()), "i");
}

/// G_r(i w) of a small dense model by a dense LU.
ComplexMatrix dense_response(const DenseLtiOperator& sys, double w) {
  const lapack::ComplexLu lu(Complex(0.0, w) * sys.E().cast<Complex>() - sys.A().cast<Complex>());
  return sys.C().cast<Complex>() * lu.solve(sys.B().cast<Complex>()) + sys.D_ff().cast<Complex>();
}

}  // namespace norms_detail

using norms_detail::complex_text;
using norms_detail::kEps;
using norms_detail::largest_singular_value;

// ---------------------------------------------------------------------------------------------

ComplexMatrix transfer_function(LtiOperator& sys, Complex s) {
  require(std::isfinite(s.real()) && std::isfinite(s.imag()),
          "transfer function: frequency s = ", complex_text(s), " is not finite");
  // Every frequency sweep (sigma_max, Bode, the H-infinity grid) solves here once per point: a
  // stop request (SIGINT) ends it within one sparse solve.
  throw_if_stop_requested("frequency analysis");
  ComplexMatrix X;
  sys.solve_shifted(-s, sys.B().cast<Complex>(), X);  // X = (A - s E)^{-1} B
  ComplexMatrix G = -(sys.C().cast<Complex>() * X);
  if (sys.D_ff().size() != 0) G += sys.D_ff().cast<Complex>();
  return G;
}

Vector sigma_max(LtiOperator& sys, const Vector& omega) {
  Vector s(omega.size());
  for (Index k = 0; k < omega.size(); ++k) {
    require(omega[k] >= 0.0 && std::isfinite(omega[k]), "sigma_max: frequency ", k, " is ",
            omega[k], ", expected finite and >= 0");
    s[k] = largest_singular_value(transfer_function(sys, Complex(0.0, omega[k])));
  }
  return s;
}

Matrix bode_magnitude(LtiOperator& sys, const Vector& omega) {
  const Index p = sys.n_outputs(), m = sys.n_inputs();
  Matrix mag(omega.size(), p * m);
  for (Index k = 0; k < omega.size(); ++k) {
    require(omega[k] >= 0.0 && std::isfinite(omega[k]), "bode_magnitude: frequency ", k, " is ",
            omega[k], ", expected finite and >= 0");
    const ComplexMatrix G = transfer_function(sys, Complex(0.0, omega[k]));
    mag.row(k) = G.cwiseAbs().reshaped().transpose();
  }
  return mag;
}

Vector log_frequencies(double w_min, double w_max, Index n) {
  require(std::isfinite(w_min) && w_min > 0.0, "frequency range: w_min = ", w_min,
          ", expected finite and > 0");
  require(std::isfinite(w_max) && w_max > w_min, "frequency range: w_max = ", w_max,
          ", expected finite and > w_min = ", w_min);
  require(n >= 2, "frequency range: ", n, " frequencies, expected at least 2");
  Vector w = Vector::LinSpaced(n, std::log(w_min), std::log(w_max)).array().exp();
  w[0] = w_min;  // exact end points
  w[n - 1] = w_max;
  return w;
}

// ---------------------------------------------------------------------------------------------
// Accurate evaluation

namespace {

/// R - (A + p E) X in working precision, through the operator's products.
ComplexMatrix working_residual(const LtiOperator& sys, Complex p, const ComplexMatrix& R,
                               const ComplexMatrix& X) {
  const Matrix xr = X.real(), xi = X.imag();
  Matrix ar, ai, er, ei;
  sys.apply_A(xr, ar);
  sys.apply_A(xi, ai);
  sys.apply_E(xr, er);
  sys.apply_E(xi, ei);
  ComplexMatrix AX(ar.rows(), ar.cols()), EX(er.rows(), er.cols());
  AX.real() = ar;
  AX.imag() = ai;
  EX.real() = er;
  EX.imag() = ei;
  return R - AX - p * EX;
}

struct RefinedSolve {
  ComplexMatrix X;
  double error = 0.0;  ///< estimate of ||C (X - X_exact)||_F
  bool refined = false;
};

/// X = (A + p E)^{-1} R with iterative refinement (see accurate_response).
RefinedSolve refined_solve(LtiOperator& sys, Complex p, const ComplexMatrix& R, Index max_steps) {
  RefinedSolve out;
  sys.solve_shifted(p, R, out.X);
  const ComplexMatrix C = sys.C().cast<Complex>();
  const Matrix C_abs = sys.C().cwiseAbs();
  ComplexMatrix res, dX;
  double first = -1.0, previous = std::numeric_limits<double>::infinity();
  for (Index step = 0; step < std::max<Index>(max_steps, 1); ++step) {
    const bool extended = sys.shifted_residual_extended(p, R, out.X, res);
    if (!extended) res = working_residual(sys, p, R, out.X);
    sys.solve_shifted(p, res, dX);
    const double size = (C * dX).norm();
    if (first < 0.0) first = size;
    if (!extended) {
      // A working-precision residual carries rounding errors of the size of the backward error
      // itself: its correction estimates the error, it does not remove it.
      out.X += dX;
      out.error = first;
      return out;
    }
    if (step > 0 && size > 0.5 * previous) {
      // Stagnation: at the rounding floor of X itself (converged), or kappa eps is not small and
      // the corrections are noise of the error's size (not converged).
      const double floor = 1e3 * kEps * (C_abs * out.X.cwiseAbs()).norm();
      out.refined = previous <= floor;
      out.error = std::max(previous, size);
      return out;
    }
    out.X += dX;
    previous = size;
    const double level = 32.0 * kEps * (C_abs * out.X.cwiseAbs()).norm();
    if (size <= level) {
      out.refined = true;
      out.error = std::max(size, level);
      return out;
    }
  }
  out.error = previous;
  return out;
}

}  // namespace

ResponseValue accurate_response(LtiOperator& sys, double omega, LtiOperator* reduced,
                                Index max_steps) {
  require(std::isfinite(omega) && omega >= 0.0, "accurate response: frequency ", omega,
          ", expected finite and >= 0");
  throw_if_stop_requested("frequency analysis");
  const Complex p(0.0, -omega);
  ResponseValue v;
  v.omega = omega;
  const RefinedSolve full = refined_solve(sys, p, sys.B().cast<Complex>(), max_steps);
  v.G = -(sys.C().cast<Complex>() * full.X);
  if (sys.D_ff().size() != 0) v.G += sys.D_ff().cast<Complex>();
  v.error_estimate = full.error;
  v.refined = full.refined;
  if (reduced != nullptr) {
    const RefinedSolve red = refined_solve(*reduced, p, reduced->B().cast<Complex>(), max_steps);
    ComplexMatrix Gr = -(reduced->C().cast<Complex>() * red.X);
    if (reduced->D_ff().size() != 0) Gr += reduced->D_ff().cast<Complex>();
    // The subtraction rounds too: eps (|G| + |G_r|).
    v.error_estimate += red.error + kEps * (v.G.norm() + Gr.norm());
    v.refined = v.refined && red.refined;
    v.G -= Gr;
  }
  v.sigma = largest_singular_value(v.G);
  return v;
}

double data_sensitivity(const DenseLtiOperator& sys, double omega) {
  require(std::isfinite(omega) && omega >= 0.0, "data sensitivity: frequency ", omega,
          ", expected finite and >= 0");
  const Matrix E = sys.E();
  const ComplexMatrix M = Complex(0.0, omega) * E.cast<Complex>() - sys.A().cast<Complex>();
  const lapack::ComplexLu lu(M);
  const Matrix X = lu.solve(sys.B().cast<Complex>()).cwiseAbs();
  const Matrix Yt = lu.solve(sys.C().transpose().cast<Complex>(), true).cwiseAbs().transpose();
  const Matrix S = sys.C().cwiseAbs() * X + Yt * sys.B().cwiseAbs() +
                   Yt * (sys.A().cwiseAbs() + omega * E.cwiseAbs()) * X + sys.D_ff().cwiseAbs();
  return 0.5 * kEps * S.norm();
}

void for_each_point(LtiOperator& sys, LtiOperator* copy, Index count,
                    const std::function<void(LtiOperator&, Index)>& f) {
  std::atomic<Index> next{0};
  auto work = [&](LtiOperator& op) {
    for (Index k = next++; k < count; k = next++) f(op, k);
  };
  if (!copy) {
    work(sys);
    return;
  }
  std::exception_ptr failure;
  std::thread helper([&] {
    try {
      work(*copy);
    } catch (...) {
      failure = std::current_exception();
      next = count;
    }
  });
  try {
    work(sys);
  } catch (...) {
    next = count;
    helper.join();
    throw;
  }
  helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace mor
