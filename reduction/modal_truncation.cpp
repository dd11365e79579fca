// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/modal_truncation.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/timing.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

ModalSelection parse_modal_selection(std::string_view name) {
  if (name == "dominance") return ModalSelection::dominance;
  if (name == "lowest_frequency") return ModalSelection::lowest_frequency;
  throw InvalidArgument(detail::concat("modal selection '", name,
                                       "' is not known (known: dominance, lowest_frequency)"));
}

std::string_view to_string(ModalSelection s) {
  return s == ModalSelection::dominance ? "dominance" : "lowest_frequency";
}

namespace {

/// The r = options.order modes kept, as indices into the modes (which come slowest first):
/// the r most dominant (stable order: ties and the infinite dominance of rigid modes or
/// integrators keep the slowest first), or the r slowest; returned in ascending index.
std::vector<Index> select_modes(const Vector& dominance, const ModalOptions& options) {
  std::vector<Index> order(static_cast<std::size_t>(dominance.size()));
  std::iota(order.begin(), order.end(), Index{0});
  if (options.selection == ModalSelection::dominance)
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return dominance(a) > dominance(b); });
  order.resize(static_cast<std::size_t>(options.order));
  std::sort(order.begin(), order.end());
  return order;
}

Matrix columns(const Matrix& Phi, const std::vector<Index>& kept) {
  Matrix V(Phi.rows(), static_cast<Index>(kept.size()));
  for (std::size_t j = 0; j < kept.size(); ++j) V.col(static_cast<Index>(j)) = Phi.col(kept[j]);
  return V;
}

}  // namespace

ModalResult modal_truncation(const SecondOrderSystem& sys, const ModalOptions& options) {
  const auto t0 = Clock::now();
  validate(sys);
  const Index n = sys.n();
  require(options.order >= 1 && options.order <= n,
          "modal truncation: the order r = ", options.order, " must be between 1 and n = ", n);
  const Matrix M(sys.M), K(sys.K), D(sys.D), B(sys.B), Cp(sys.Cp), Cv(sys.Cv);
  constexpr double kSymmetryTol = 1e-12;  // relative, of M and K
  auto asymmetry = [](const Matrix& A) {
    const double scale = std::max(A.norm(), std::numeric_limits<double>::min());
    return (A - A.transpose()).norm() / scale;
  };
  require(asymmetry(M) <= kSymmetryTol, "modal truncation: M is not symmetric (relative ",
          asymmetry(M), ")");
  require(asymmetry(K) <= kSymmetryTol, "modal truncation: K is not symmetric (relative ",
          asymmetry(K), ")");
  {
    const Vector em = run_abandonable(
        "modal truncation", [M = Matrix(M)]() mutable { return lapack::symmetric_eigenvalues(M); });
    require(em(0) > 0.0, "modal truncation: M is not positive definite (smallest eigenvalue ",
            em(0), ")");
  }
  // K phi = lambda M phi via the Cholesky factor of M (LAPACK's dsygvd): ascending lambda,
  // Phi^T M Phi = I.
  // (seconds at a few thousand states, in a call that cannot poll: abandoned on a stop request)
  const auto [Phi, lambda] =
      run_abandonable("modal truncation", [K = Matrix(K), M = Matrix(M)]() mutable {
        Vector w;
        lapack::generalized_symmetric_eigen(K, M, w);
        return std::pair{std::move(K), std::move(w)};
      });
  const double lmax = std::max(std::abs(lambda(n - 1)), 1.0);
  const double rigid = options.rigid_tolerance * lmax;
  if (lambda(0) < -rigid)
    throw NumericalError(
        detail::concat("modal truncation: K has a negative mode (omega^2 = ", lambda(0),
                       "): the operating point is not a stable equilibrium"));

  ModalResult res;
  res.omega.resize(n);
  res.dominance.resize(n);
  for (Index i = 0; i < n; ++i) {
    const double w2 = std::max(lambda(i), 0.0);
    res.omega(i) = std::sqrt(w2);
    const auto phi = Phi.col(i);
    const double out = std::sqrt((Cp * phi).squaredNorm() + w2 * (Cv * phi).squaredNorm());
    const double in = (B.transpose() * phi).norm();
    res.dominance(i) = lambda(i) <= rigid ? std::numeric_limits<double>::infinity() : out * in / w2;
  }
  res.kept = select_modes(res.dominance, options);
  res.r = options.order;
  res.V = columns(Phi, res.kept);

  DenseSecondOrderSystem& s = res.reduced;
  s.M = res.V.transpose() * M * res.V;
  s.D = res.V.transpose() * D * res.V;
  s.K = res.V.transpose() * K * res.V;
  s.B = res.V.transpose() * B;
  s.Cp = Cp * res.V;
  s.Cv = Cv * res.V;
  s.D_ff = Matrix::Zero(Cp.rows(), B.cols());
  res.seconds = seconds_since(t0);
  return res;
}

ModalFirstOrderResult modal_truncation(const LtiOperator& sys, const ModalOptions& options) {
  const auto t0 = Clock::now();
  const Index n = sys.n();
  require(options.order >= 1 && options.order <= n,
          "modal truncation: the order r = ", options.order, " must be between 1 and n = ", n);
  require(n <= kModalDenseLimit, "modal truncation: n = ", n,
          " is above the dense limit of first-order modal truncation (", kModalDenseLimit,
          "); use bt (low-rank Gramians) or irka");
  const Matrix I = Matrix::Identity(n, n);
  Matrix E, A;
  sys.apply_E(I, E);
  sys.apply_A(I, A);
  constexpr double kSymmetryTol = 1e-12;  // relative, of E and A
  auto asymmetry = [](const Matrix& X) {
    const double scale = std::max(X.norm(), std::numeric_limits<double>::min());
    return (X - X.transpose()).norm() / scale;
  };
  for (const auto& [name, X] : {std::pair{"E", &E}, std::pair{"A", &A}})
    require(asymmetry(*X) <= kSymmetryTol,
            "modal truncation of a first-order model needs a "
            "symmetric pencil: ",
            name, " is not symmetric (relative asymmetry ", asymmetry(*X),
            "); use bt or irka for this model");
  {
    const Vector ee = run_abandonable("modal truncation",
                                      [E]() mutable { return lapack::symmetric_eigenvalues(E); });
    require(ee(0) > 0.0, "modal truncation: E is not positive definite (smallest eigenvalue ",
            ee(0), ")");
  }
  // -A phi = mu E phi, ascending mu = -lambda (slowest first), Phi^T E Phi = I.
  const auto [Phi, mu] = run_abandonable("modal truncation", [A = Matrix(-A), E]() mutable {
    Vector w;
    lapack::generalized_symmetric_eigen(A, E, w);
    return std::pair{std::move(A), std::move(w)};
  });
  const double zero = options.rigid_tolerance * std::max(std::abs(mu(n - 1)), 1.0);
  if (mu(0) < -zero)
    throw NumericalError(detail::concat("modal truncation: A has the positive eigenvalue ", -mu(0),
                                        ": the model is unstable"));
  const Matrix& B = sys.B();
  const Matrix& C = sys.C();
  ModalFirstOrderResult res;
  res.lambda = -mu;
  res.dominance.resize(n);
  for (Index i = 0; i < n; ++i) {
    const auto phi = Phi.col(i);
    res.dominance(i) = mu(i) <= zero ? std::numeric_limits<double>::infinity()
                                     : (C * phi).norm() * (B.transpose() * phi).norm() / mu(i);
  }
  res.kept = select_modes(res.dominance, options);
  res.r = options.order;
  res.V = columns(Phi, res.kept);
  res.E = res.V.transpose() * E * res.V;
  res.A = res.V.transpose() * A * res.V;
  res.B = res.V.transpose() * B;
  res.C = C * res.V;
  res.D_ff = sys.D_ff().size() > 0 ? sys.D_ff() : Matrix::Zero(C.rows(), B.cols());
  res.seconds = seconds_since(t0);
  return res;
}

}  // namespace mor
