// SPDX-License-Identifier: GPL-3.0-or-later
// Hammarling's method for the Cholesky factor of a stable Lyapunov equation, on LAPACK's real
// Schur form (dgees); complex-conjugate pairs are processed as two complex 1x1 steps (see below).
// Both Gramians of a system share one Schur form (DenseGramianFactors), or one sign-function
// iteration.
#include "reduction/dense_lyapunov.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

namespace {

using ComplexVectorX = Eigen::Matrix<Complex, Eigen::Dynamic, 1>;

/// Lanczos steps of the residual estimate in DenseGramianFactors::residual: the largest Ritz
/// value of a symmetric matrix converges first, and the estimate (a lower bound) only has to
/// say whether the residual is at rounding level.
constexpr Index kResidualLanczosSteps = 30;

/// Upper triangular R (n x n) with R R^T = M M^T for any n x m matrix M. With J the reversal
/// permutation, (J M)(J M)^T = W^T W for the triangular factor W of a QR of (J M)^T, so
/// R = J W^T J (padded with zero columns on the left when m < n).
Matrix upper_gram_factor(const Matrix& M) {
  const Index n = M.rows(), m = M.cols(), k = std::min(n, m);
  Matrix R = Matrix::Zero(n, n);
  if (k == 0) return R;
  Matrix JM_t = M.transpose().rowwise().reverse();
  const Matrix W = lapack::qr_r_factor(JM_t);  // k x n
  R.rightCols(k) = W.transpose().reverse();
  return R;
}

/// Rotates every 2x2 diagonal block of the real Schur form T (A = Q T Q^T) to the standard form
/// [a b; c a] with b c < 0, so that its eigenvalues a +- i sqrt(|b| |c|) and the complex
/// eigenvectors below have closed forms. A block with real eigenvalues (which Eigen should
/// already have split) is triangularized instead. Entries below the subdiagonal are zeroed.
void standardize_schur_form(Matrix& T, Matrix& Q) {
  const Index n = T.rows();
  for (Index j = 0; j < n; ++j)
    for (Index i = j + 2; i < n; ++i) T(i, j) = 0.0;
  auto rotate = [&](Index p, double cs, double sn) {
    // T <- G^T T G, Q <- Q G for G = [cs -sn; sn cs] acting on rows/columns p, p+1.
    for (Index l = p; l < n; ++l) {
      const double x = T(p, l), y = T(p + 1, l);
      T(p, l) = cs * x + sn * y;
      T(p + 1, l) = -sn * x + cs * y;
    }
    for (Index l = 0; l < std::min(p + 2, n); ++l) {
      const double x = T(l, p), y = T(l, p + 1);
      T(l, p) = cs * x + sn * y;
      T(l, p + 1) = -sn * x + cs * y;
    }
    for (Index l = 0; l < n; ++l) {
      const double x = Q(l, p), y = Q(l, p + 1);
      Q(l, p) = cs * x + sn * y;
      Q(l, p + 1) = -sn * x + cs * y;
    }
  };
  for (Index p = 0; p + 1 < n; ++p) {
    if (T(p + 1, p) == 0.0) continue;
    if (T(p, p) == T(p + 1, p + 1) && T(p, p + 1) * T(p + 1, p) < 0.0) {
      ++p;  // already standard (LAPACK's dgees returns its pairs so)
      continue;
    }
    // The diagonal of G^T S G differs by (a - d) cos 2t + (b + c) sin 2t: make it vanish.
    const double a = T(p, p), b = T(p, p + 1), c = T(p + 1, p), d = T(p + 1, p + 1);
    const double theta = 0.5 * std::atan2(-(a - d), b + c);
    rotate(p, std::cos(theta), std::sin(theta));
    const double mean = 0.5 * (T(p, p) + T(p + 1, p + 1));
    T(p, p) = T(p + 1, p + 1) = mean;
    const double b2 = T(p, p + 1), c2 = T(p + 1, p);
    if (b2 * c2 < 0.0) {
      ++p;  // a genuine complex pair: skip its second row
      continue;
    }
    // Real eigenvalues mean +- sqrt(b2 c2): rotate an eigenvector to the front.
    if (c2 != 0.0) {
      double v0, v1;
      const double mu = std::sqrt(b2 * c2);
      if (std::abs(b2) >= std::abs(c2)) {
        v0 = b2;
        v1 = mu;
      } else {
        v0 = mu;
        v1 = c2;
      }
      const double nv = std::hypot(v0, v1);
      rotate(p, v0 / nv, v1 / nv);
    }
    T(p + 1, p) = 0.0;
  }
}

/// Throws NumericalError naming the first eigenvalue of the (standardized) Schur form with real
/// part >= -eps ||A||_F: the Lyapunov operator is then singular or nearly so.
void require_stable(const Matrix& T, double norm_A) {
  const Index n = T.rows();
  const double bound = -std::numeric_limits<double>::epsilon() * norm_A;
  for (Index j = 0; j < n; ++j) {
    Complex lambda(T(j, j), 0.0);
    const bool pair = j + 1 < n && T(j + 1, j) != 0.0;
    if (pair) lambda.imag(std::sqrt(std::abs(T(j, j + 1))) * std::sqrt(std::abs(T(j + 1, j))));
    if (!(lambda.real() < bound))
      throw NumericalError(
          detail::concat("Lyapunov equation: A is not stable, eigenvalue ", lambda.real(),
                         (pair ? detail::concat(" +- ", lambda.imag(), "i") : std::string()),
                         " has real part >= -eps * ||A||_F = ", bound));
    if (pair) ++j;
  }
}

/// Solves (T(0:k, 0:k) + shift I) x = x in place by back substitution over the 1x1 and 2x2
/// diagonal blocks of the quasi-triangular T. The shift keeps every block nonsingular here
/// (Re(shift + lambda) < 0 for every eigenvalue lambda).
template <class Scalar>
void solve_shifted_quasi_triangular(const Matrix& T, Index k, Scalar shift,
                                    Eigen::Matrix<Scalar, Eigen::Dynamic, 1>& x) {
  Index i = k - 1;
  while (i >= 0) {
    if (i > 0 && T(i, i - 1) != 0.0) {
      // 2x2 system with partial pivoting.
      const Index p = i - 1;
      Scalar m00 = T(p, p) + shift, m01 = T(p, i), m10 = T(i, p), m11 = T(i, i) + shift;
      Scalar r0 = x(p), r1 = x(i);
      if (std::abs(m10) > std::abs(m00)) {
        std::swap(m00, m10);
        std::swap(m01, m11);
        std::swap(r0, r1);
      }
      const Scalar l = m10 / m00;
      const Scalar z1 = (r1 - l * r0) / (m11 - l * m01);
      const Scalar z0 = (r0 - m01 * z1) / m00;
      x(p) = z0;
      x(i) = z1;
      if (p > 0) {
        x.head(p) -= z0 * T.col(p).head(p);
        x.head(p) -= z1 * T.col(i).head(p);
      }
      i -= 2;
    } else {
      const Scalar z = x(i) / (T(i, i) + shift);
      x(i) = z;
      if (i > 0) x.head(i) -= z * T.col(i).head(i);
      i -= 1;
    }
  }
}

/// R(0:k, 0:k) R^T + Y Y^T = R' R'^T with R' upper triangular, by Givens rotations of column i
/// of R against each column of Y (k x r, destroyed), for i from k - 1 down. Each column of R is
/// read once for all r columns of Y, which stay in cache: the update is memory bound otherwise.
void triangular_update(Matrix& R, Index k, Matrix& Y) {
  const Index r = Y.cols();
  for (Index i = k - 1; i >= 0; --i) {
    double* __restrict col = &R(0, i);
    for (Index c = 0; c < r; ++c) {
      double* __restrict y = &Y(0, c);
      const double yi = y[i];
      if (yi == 0.0) continue;
      const double rii = col[i];
      const double h = std::hypot(rii, yi);
      const double cs = rii / h, sn = yi / h;
      for (Index l = 0; l < i; ++l) {
        const double u = col[l], v = y[l];
        col[l] = cs * u + sn * v;
        y[l] = cs * v - sn * u;
      }
      col[i] = h;
      y[i] = 0.0;
    }
  }
}

/// Hammarling's back substitution for T X + X T^T + R R^T = 0 with T quasi upper triangular in
/// standard form and R upper triangular (both n x n); R is destroyed. Returns F (n x (n + 2 q),
/// q the number of 2x2 blocks) with X = F F^T.
///
/// Partition T = [T11 t; 0 tau], R = [R11 r; 0 rho], X = U U^T with U = [U11 u; 0 v]. For a
/// 1x1 block, alpha = sqrt(-2 tau), v = rho / alpha, (T11 + tau I) u = -(t v + alpha r) and the
/// leading block solves T11 X11 + X11 T11^T + R11 R11^T + y y^T = 0 with y = r - alpha u
/// (Hammarling 1982, section 5); R11 and y are merged back into a triangular factor by Givens
/// rotations. Nothing is divided by v, so rank-deficient right-hand sides need no special case.
///
/// A 2x2 block S = [a b; c a] (b c < 0, eigenvalues lambda, conj(lambda), lambda = a + i w) is
/// triangularized by the unitary G = [g1 g2] with g1 an eigenvector of lambda:
/// G^H S G = [lambda, b + c; 0, conj(lambda)]. In these coordinates the same 1x1 recursion runs
/// twice in complex arithmetic (Hermitian X = U U^H, alpha = sqrt(-2 a) for both), after the
/// 2x2 block of G^H R is made upper triangular by a unitary from the right. This avoids the
/// inverse of the 2x2 factor block that the real 2x2 formulation (Hammarling, section 6) needs,
/// which is ill-conditioned for pairs close to the real axis (near-critically damped modes).
/// The two complex columns c_1, c_2 of U, mapped back by G, satisfy c_1 c_1^H + c_2 c_2^H =
/// [U12; U22][U12; U22]^T (real), so their real and imaginary parts are four real columns of F;
/// likewise the two complex y's leave a real update of rank two, applied as four real columns.
Matrix hammarling_factor(const Matrix& T, Matrix& R) {
  const Index n = T.rows();
  Index pairs = 0;
  for (Index j = 0; j + 1 < n; ++j)
    if (T(j + 1, j) != 0.0) {
      ++pairs;
      ++j;
    }
  Matrix F = Matrix::Zero(n, n + 2 * pairs);
  Index col = 0;
  Vector u;
  Matrix Y(n, 4);
  ComplexVectorX uc, c0, y1;

  Index j = n - 1;
  while (j >= 0) {
    if (j == 0 || T(j, j - 1) == 0.0) {
      // 1x1 block at j; the leading block has k = j rows.
      const Index k = j;
      const double tau = T(j, j);
      const double alpha = std::sqrt(-2.0 * tau);
      const double v = R(j, j) / alpha;
      u = -(v * T.col(j).head(k) + alpha * R.col(j).head(k));
      solve_shifted_quasi_triangular<double>(T, k, tau, u);
      F.col(col).head(k) = u;
      F(j, col) = v;
      ++col;
      Y.resize(k, 1);
      Y.col(0) = R.col(j).head(k) - alpha * u;
      triangular_update(R, k, Y);
      j -= 1;
      continue;
    }

    // 2x2 block at rows/columns (p, j); the leading block has k = p rows.
    const Index p = j - 1, k = p;
    const double a = T(p, p), b = T(p, j), c = T(j, p);
    const double sb = std::sqrt(std::abs(b)), sc = std::sqrt(std::abs(c));
    const Complex lambda(a, sb * sc);
    const double alpha = std::sqrt(-2.0 * a);
    // G = [cr, i ci; i ci, cr] (unitary), g1 = (cr, i ci) an eigenvector of lambda.
    const double nv = std::sqrt(std::abs(b) + std::abs(c));
    const double cr = std::copysign(sb, b) / nv, ci = sc / nv;
    const Complex g00(cr, 0.0), g01(0.0, ci), g10(0.0, ci), g11(cr, 0.0);
    const double w12 = b + c;  // (G^H S G)(0, 1)

    // Columns of T12 G (k x 2).
    const ComplexVectorX t0 = g00 * T.col(p).head(k) + g10 * T.col(j).head(k);
    const ComplexVectorX t1 = g01 * T.col(p).head(k) + g11 * T.col(j).head(k);

    // G^H R22 = [e00 e01; x yy], then [x yy] H = [0 rho] with H = [(yy, -x) (conj x, conj yy)]/rho.
    const double r00 = R(p, p), r01 = R(p, j), r11 = R(j, j);
    const Complex f00 = std::conj(g00) * r00, f01 = std::conj(g00) * r01 + std::conj(g10) * r11;
    const Complex x = std::conj(g01) * r00, yy = std::conj(g01) * r01 + std::conj(g11) * r11;
    const double rho = std::sqrt(std::norm(x) + std::norm(yy));
    Complex h00(1.0), h01(0.0), h10(0.0), h11(1.0);
    if (rho > 0.0) {
      h00 = yy / rho;
      h10 = -x / rho;
      h01 = std::conj(x) / rho;
      h11 = std::conj(yy) / rho;
    }
    const Complex e00 = f00 * h00 + f01 * h10, e01 = f00 * h01 + f01 * h11;
    const ComplexVectorX s0 = h00 * R.col(p).head(k) + h10 * R.col(j).head(k);  // (R12 H)(:, 0)
    const ComplexVectorX s1 = h01 * R.col(p).head(k) + h11 * R.col(j).head(k);  // (R12 H)(:, 1)

    // Step A: position j, eigenvalue conj(lambda), so the shift is lambda.
    const double vj = rho / alpha;
    const Complex up = -(w12 * vj + alpha * e01) / (2.0 * lambda);
    uc = -(vj * t1 + alpha * s1 + up * t0);
    solve_shifted_quasi_triangular<Complex>(T, k, lambda, uc);
    y1 = s1 - alpha * uc;  // rows 0..k-1 of y_A
    const Complex ya_p = e01 - alpha * up;
    {
      const Complex fp = g00 * up + g01 * vj, fj = g10 * up + g11 * vj;
      F.col(col).head(k) = uc.real();
      F.col(col + 1).head(k) = uc.imag();
      F(p, col) = fp.real();
      F(p, col + 1) = fp.imag();
      F(j, col) = fj.real();
      F(j, col + 1) = fj.imag();
    }
    // Merge y_A into column p so that the factor of the leading k + 1 block is triangular again.
    const double rho_p = std::sqrt(std::norm(e00) + std::norm(ya_p));
    if (rho_p > 0.0) {
      const Complex ca = std::conj(e00) / rho_p, cb = std::conj(ya_p) / rho_p;
      const Complex da = ya_p / rho_p, db = -e00 / rho_p;
      c0 = ca * s0 + cb * y1;
      y1 = (da * s0 + db * y1).eval();
    } else {
      c0 = s0;
    }

    // Step B: position p, eigenvalue lambda, shift conj(lambda).
    const double vp = rho_p / alpha;
    uc = -(vp * t0 + alpha * c0);
    solve_shifted_quasi_triangular<Complex>(T, k, std::conj(lambda), uc);
    {
      const Complex fp = g00 * vp, fj = g10 * vp;
      F.col(col + 2).head(k) = uc.real();
      F.col(col + 3).head(k) = uc.imag();
      F(p, col + 2) = fp.real();
      F(p, col + 3) = fp.imag();
      F(j, col + 2) = fj.real();
      F(j, col + 3) = fj.imag();
    }
    col += 4;
    c0 -= alpha * uc;  // y_B

    // The leading block keeps R11 R11^T + Re(y_A y_A^H + y_B y_B^H): four real columns.
    Y.resize(k, 4);
    Y.col(0) = y1.real();
    Y.col(1) = y1.imag();
    Y.col(2) = c0.real();
    Y.col(3) = c0.imag();
    triangular_update(R, k, Y);
    j -= 2;
  }
  return F;
}

/// Z = Q F using only the rows of F that can be nonzero: F is upper trapezoidal up to the
/// pair columns, so blocks of its columns reach down to about the block's first column index.
Matrix multiply_by_schur_vectors(const Matrix& Q, const Matrix& F) {
  const Index n = Q.rows(), cols = F.cols();
  constexpr Index kBlock = 64;
  Matrix Z(n, cols);
  for (Index c = 0; c < cols; c += kBlock) {
    const Index nb = std::min(kBlock, cols - c);
    Index h = 0;  // rows h.. of the block are zero
    for (Index l = c; l < c + nb; ++l)
      for (Index i = n - 1; i >= h; --i)
        if (F(i, l) != 0.0) {
          h = i + 1;
          break;
        }
    Z.middleCols(c, nb).noalias() = Q.leftCols(h) * F.block(0, c, h, nb);
  }
  return Z;
}

/// The standardized real Schur form A = Q T Q^T of a stable A (dgees), its eigenvalues on
/// request. @throws as lyapunov_cholesky_factor.
struct SchurForm {
  Matrix T, Q;
};

SchurForm stable_schur_form(const Matrix& A, ComplexVector* eigenvalues) {
  const Index n = A.rows();
  SchurForm s;
  s.T = A;
  try {
    lapack::real_schur(s.T, s.Q);
  } catch (const NumericalError& e) {
    throw NumericalError(detail::concat("Lyapunov equation: ", e.what()));
  }
  standardize_schur_form(s.T, s.Q);
  require_stable(s.T, A.norm());
  if (eigenvalues != nullptr) {
    eigenvalues->resize(n);
    for (Index j = 0; j < n; ++j) {
      const bool pair = j + 1 < n && s.T(j + 1, j) != 0.0;
      if (!pair) {
        (*eigenvalues)[j] = Complex(s.T(j, j), 0.0);
        continue;
      }
      const double w = std::sqrt(std::abs(s.T(j, j + 1))) * std::sqrt(std::abs(s.T(j + 1, j)));
      (*eigenvalues)[j] = Complex(s.T(j, j), w);
      (*eigenvalues)[j + 1] = Complex(s.T(j, j), -w);
      ++j;
    }
  }
  return s;
}

void check_lyapunov_arguments(const Matrix& A, const Matrix& B) {
  const Index n = A.rows();
  require(n >= 1 && A.cols() == n, "Lyapunov equation: A is ", A.rows(), "x", A.cols(),
          ", expected square and non-empty");
  require(B.rows() == n && B.cols() >= 1, "Lyapunov equation: B is ", B.rows(), "x", B.cols(),
          ", expected ", n, " rows and at least one column");
  require(A.allFinite(), "Lyapunov equation: A has a non-finite entry");
  require(B.allFinite(), "Lyapunov equation: B has a non-finite entry");
}

/// Upper triangular R (n x n) with R R^T = X, X = F F^T the solution of
/// T X + X T^T + G G^T = 0 (T in standard Schur form, G n x m): Hammarling's factor F compressed
/// by one QR.
Matrix schur_lyapunov_factor(const Matrix& T, const Matrix& G) {
  Matrix R = upper_gram_factor(G);
  const Matrix F = hammarling_factor(T, R);
  if (!F.allFinite())
    throw NumericalError("Lyapunov equation: the factor overflowed (A is too close to unstable)");
  return upper_gram_factor(F);
}

/// The pivoted LU of a nonsingular E. @throws NumericalError naming the condition estimate.
Eigen::PartialPivLU<Matrix> nonsingular_lu(const Matrix& E) {
  require(E.allFinite(), "Gramian: E has a non-finite entry");
  Eigen::PartialPivLU<Matrix> lu(E);
  // The condition estimate can come back finite for an exactly zero pivot (it then works on
  // infinities), so the pivots are checked as well.
  const double rcond = lu.rcond();
  const auto pivots = lu.matrixLU().diagonal().cwiseAbs();
  const double pivot_ratio = pivots.minCoeff() / pivots.maxCoeff();
  if (!(rcond > 1e3 * std::numeric_limits<double>::epsilon()) ||
      !(pivot_ratio > std::numeric_limits<double>::epsilon()))
    throw NumericalError(detail::concat("Gramian: E is singular (reciprocal condition number ",
                                        rcond, ", smallest/largest LU pivot ", pivot_ratio, ")"));
  return lu;
}

void check_system_sizes(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                        bool need_B, bool need_C) {
  const Index n = A.rows();
  require(n >= 1 && A.cols() == n, "Gramian: A is ", A.rows(), "x", A.cols(),
          ", expected square and non-empty");
  require(E.size() == 0 || (E.rows() == n && E.cols() == n), "Gramian: E is ", E.rows(), "x",
          E.cols(), ", expected ", n, "x", n, " or empty (identity)");
  // A factor that is not needed still requires a given B or C to fit.
  require(need_B ? B.rows() == n && B.cols() >= 1 : B.size() == 0 || B.rows() == n,
          "Gramian: B is ", B.rows(), "x", B.cols(), ", expected ", n, " rows",
          need_B ? " and at least one column" : "");
  require(need_C ? C.cols() == n && C.rows() >= 1 : C.size() == 0 || C.cols() == n,
          "Gramian: C is ", C.rows(), "x", C.cols(), ", expected ", n, " columns",
          need_C ? " and at least one row" : "");
}

/// Estimate from below of ||R||_2 / ||G^T G||_2 for the symmetric n x n residual R = apply(.):
/// Lanczos with full reorthogonalization on x -> R x (apply(v, w) sets w = R v), the largest
/// |Ritz value| after kResidualLanczosSteps steps.
template <class Apply>
double lanczos_relative_residual(Index n, const Matrix& G, Apply&& apply) {
  const Index steps = std::min<Index>(kResidualLanczosSteps, n);
  Matrix V(n, steps + 1);
  Vector alpha(steps), beta(steps);
  V.col(0) = Vector::Ones(n) / std::sqrt(static_cast<double>(n));
  Vector w(n);
  Index k = 0;
  for (; k < steps; ++k) {
    const Vector v = V.col(k);
    apply(v, w);
    alpha(k) = v.dot(w);
    for (int pass = 0; pass < 2; ++pass)  // full reorthogonalization, twice
      w.noalias() -= V.leftCols(k + 1) * (V.leftCols(k + 1).transpose() * w);
    beta(k) = w.norm();
    if (!(beta(k) > std::numeric_limits<double>::epsilon() * std::abs(alpha(k)))) {
      ++k;
      break;  // an invariant subspace: its Ritz values are eigenvalues
    }
    V.col(k + 1) = w / beta(k);
  }
  Matrix H = Matrix::Zero(k, k);
  for (Index i = 0; i < k; ++i) {
    H(i, i) = alpha(i);
    if (i + 1 < k) H(i, i + 1) = H(i + 1, i) = beta(i);
  }
  const double residual = k > 0 ? lapack::symmetric_eigenvalues(H).cwiseAbs().maxCoeff() : 0.0;
  Matrix GtG = G.transpose() * G;
  const double scale = lapack::symmetric_eigenvalues(GtG).cwiseAbs().maxCoeff();
  return scale > 0.0 ? residual / scale : residual;
}

/// Z' (n x r) with Z' Z'^T = Z Z^T up to the columns dropped, from the QR decomposition with
/// column pivoting Z^T P = Q R: Z Z^T = P R^T R P^T, so Z' = P R(0:r, :)^T keeps the rows of R
/// whose diagonal entries exceed kSignCompressionTol times the largest.
constexpr double kSignCompressionTol = std::numeric_limits<double>::epsilon();
Matrix compress_factor(const Matrix& Z) {
  const Index n = Z.rows();
  Matrix Zt = Z.transpose();
  Eigen::VectorXi perm;
  const Matrix R = lapack::pivoted_qr_r_factor(Zt, perm);
  const Index k = R.rows();
  Index r = 0;
  const double largest = k > 0 ? std::abs(R(0, 0)) : 0.0;
  while (r < k && std::abs(R(r, r)) > kSignCompressionTol * largest) ++r;
  Matrix out(n, r);
  for (Index j = 0; j < n; ++j) out.row(perm(j)) = R.col(j).head(r).transpose();
  return out;
}

struct SignFactors {
  Matrix Zc, L;  ///< P = Zc Zc^T; L L^T solves the observability equation of A
  Index steps = 0;
};

/// The scaled Newton iteration for sign(A) with factored right-hand sides (see
/// DenseGramianFactors in the header) for a stable A (n x n), B (n x m), Ct = C^T (n x p).
/// @throws NumericalError if A is singular, rcond_1(A) < min_rcond (before any further work),
///         or the iteration does not reach sign(A) = -I within kSignFunctionMaxSteps steps;
///         Interrupted on a stop request.
SignFactors sign_function_factors(const Matrix& A, const Matrix& B, const Matrix& Ct,
                                  double min_rcond) {
  constexpr const char* what = "Lyapunov equation (sign function)";
  const Index n = A.rows();
  const double eps = std::numeric_limits<double>::epsilon();
  const double tight = 100.0 * static_cast<double>(n) * eps, loose = std::sqrt(eps);
  constexpr double kScalingUntil = 1e-2;
  Matrix Ak = A, inv(n, n), Bk = B, Ck = Ct, Bn, Cn;
  double error = std::numeric_limits<double>::infinity();
  bool one_more = false;
  for (Index step = 0; step < kSignFunctionMaxSteps; ++step) {
    throw_if_stop_requested(what);
    inv = Ak;
    double rcond = 1.0;
    try {
      lapack::invert(inv, step == 0 ? &rcond : nullptr);
    } catch (const NumericalError& e) {
      throw NumericalError(detail::concat(what, ": step ", step + 1, ": ", e.what()));
    }
    if (step == 0 && !(rcond >= min_rcond))
      throw NumericalError(detail::concat(what,
                                          ": E^{-1} A is ill-conditioned (reciprocal "
                                          "1-norm condition estimate ",
                                          rcond, " < ", min_rcond, ")"));
    const double c = error > kScalingUntil ? std::sqrt(Ak.norm() / inv.norm()) : 1.0;
    const double s = 1.0 / std::sqrt(2.0 * c);
    // B_{k+1} = [B_k, c A_k^{-1} B_k] / sqrt(2 c); C_{k+1} likewise with A_k^{-T}.
    Bn.resize(n, 2 * Bk.cols());
    Bn.leftCols(Bk.cols()) = s * Bk;
    lapack::gemm(false, false, c * s, inv, Bk, 0.0, Bn.rightCols(Bk.cols()));
    Cn.resize(n, 2 * Ck.cols());
    Cn.leftCols(Ck.cols()) = s * Ck;
    lapack::gemm(true, false, c * s, inv, Ck, 0.0, Cn.rightCols(Ck.cols()));
    Bk = compress_factor(Bn);
    Ck = compress_factor(Cn);
    inv = (0.5 / c) * Ak + (0.5 * c) * inv;  // A_{k+1}
    if (!inv.allFinite() || !Bk.allFinite() || !Ck.allFinite())
      throw NumericalError(
          detail::concat(what, ": the iterate became non-finite at step ", step + 1));
    const double change = (inv - Ak).cwiseAbs().colwise().sum().maxCoeff();
    Ak.swap(inv);
    error = (Ak + Matrix::Identity(n, n)).cwiseAbs().colwise().sum().maxCoeff();
    // Converged, but not to -I: sign(A) has eigenvalues +1, those of A in the right half-plane
    // (at that fixed point S = S^{-1}, so the Frobenius scaling is 1 as well).
    if (change <= loose * Ak.cwiseAbs().colwise().sum().maxCoeff() && error > 0.5)
      throw NumericalError(detail::concat(what,
                                          ": the iteration converged to sign(E^{-1} A) != "
                                          "-I (||A_k + I||_1 = ",
                                          error, "): E^{-1} A is not stable"));
    if (error <= tight || one_more) {
      const double r = 1.0 / std::sqrt(2.0);
      return {r * Bk, r * Ck, step + 1};
    }
    one_more = error <= loose;
  }
  throw NumericalError(detail::concat(what, ": no convergence to sign(E^{-1} A) = -I in ",
                                      kSignFunctionMaxSteps, " steps (||A_k + I||_1 = ", error,
                                      "): A is not stable or has eigenvalues close to the "
                                      "imaginary axis; use the schur solver"));
}

/// True if E is exactly the identity.
bool is_identity(const Matrix& E) {
  const Index n = E.rows();
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < n; ++i)
      if (E(i, j) != (i == j ? 1.0 : 0.0)) return false;
  return true;
}

}  // namespace

std::string_view to_string(DenseLyapunovSolver s) {
  switch (s) {
    case DenseLyapunovSolver::automatic:
      return "automatic";
    case DenseLyapunovSolver::sign_function:
      return "sign_function";
    case DenseLyapunovSolver::schur:
      return "schur";
  }
  return "?";
}

Matrix lyapunov_cholesky_factor(const Matrix& A, const Matrix& B, ComplexVector* eigenvalues) {
  check_lyapunov_arguments(A, B);
  const SchurForm s = stable_schur_form(A, eigenvalues);
  Matrix R = upper_gram_factor(s.Q.transpose() * B);
  const Matrix F = hammarling_factor(s.T, R);
  if (!F.allFinite())
    throw NumericalError("Lyapunov equation: the factor overflowed (A is too close to unstable)");
  return upper_gram_factor(multiply_by_schur_vectors(s.Q, F));
}

Matrix dense_gramian_factor(const Matrix& E, const Matrix& A, const Matrix& B, const Matrix& C,
                            GramianKind kind, ComplexVector* eigenvalues) {
  const bool controllability = kind == GramianKind::controllability;
  check_system_sizes(E, A, B, C, controllability, !controllability);

  if (E.size() == 0)
    return controllability ? lyapunov_cholesky_factor(A, B, eigenvalues)
                           : lyapunov_cholesky_factor(A.transpose(), C.transpose(), eigenvalues);

  const Eigen::PartialPivLU<Matrix> lu = nonsingular_lu(E);
  const Matrix A_hat = lu.solve(A);
  if (controllability) {
    // A P E^T + E P A^T + B B^T = 0  <=>  A_hat P + P A_hat^T + (E^{-1} B)(E^{-1} B)^T = 0.
    return lyapunov_cholesky_factor(A_hat, lu.solve(B), eigenvalues);
  }
  // With Y = E^T Q E: A_hat^T Y + Y A_hat + C^T C = 0, Y = L L^T, so Q = (E^{-T} L)(E^{-T} L)^T.
  const Matrix L = lyapunov_cholesky_factor(A_hat.transpose(), C.transpose(), eigenvalues);
  return lu.transpose().solve(L);
}

Matrix dense_gramian_factor(const LtiOperator& sys, GramianKind kind) {
  const Matrix E = sys.E_is_identity() ? Matrix() : dense_E(sys);
  return dense_gramian_factor(E, dense_A(sys), sys.B(), sys.C(), kind);
}

DenseGramianFactors::DenseGramianFactors(const Matrix& E, const Matrix& A, const Matrix& B,
                                         const Matrix& C, DenseLyapunovSolver solver) {
  check_system_sizes(E, A, B, C, true, true);
  require(A.allFinite(), "Gramian: A has a non-finite entry");
  require(B.allFinite(), "Gramian: B has a non-finite entry");
  require(C.allFinite(), "Gramian: C has a non-finite entry");
  n_ = A.rows();
  const bool with_E = E.size() != 0 && !is_identity(E);
  Matrix A_hat, B_hat;
  if (with_E) {
    lu_E_ = nonsingular_lu(E);
    A_hat = lu_E_->solve(A);
    B_hat = lu_E_->solve(B);
  }
  const Matrix& Ah = with_E ? A_hat : A;
  const Matrix& Bh = with_E ? B_hat : B;
  const bool automatic = solver == DenseLyapunovSolver::automatic;
  if (solver == DenseLyapunovSolver::sign_function || (automatic && n_ >= kSignFunctionMinStates)) {
    try {
      SignFactors f =
          sign_function_factors(Ah, Bh, C.transpose(), automatic ? kSignFunctionMinRcond : 0.0);
      solver_ = DenseLyapunovSolver::sign_function;
      sign_steps_ = f.steps;
      Zc_ = std::move(f.Zc);
      L_ = std::move(f.L);
      A_hat_ = Ah;
      B_hat_ = Bh;
      C_t_ = C.transpose();
      return;
    } catch (const NumericalError&) {
      if (!automatic) throw;  // automatic: the Schur path below decides (and names the cause)
    }
  }
  solve_by_schur(Ah, Bh, C);
}

void DenseGramianFactors::solve_by_schur(const Matrix& A_hat, const Matrix& B_hat,
                                         const Matrix& C) {
  solver_ = DenseLyapunovSolver::schur;
  const Index n = n_;
  SchurForm s = stable_schur_form(A_hat, &eigenvalues_);
  Q_ = std::move(s.Q);
  T_ = std::move(s.T);
  // Controllability: T X + X T^T + Bt Bt^T = 0 with Bt = Q^T E^{-1} B.
  Bt_.resize(n, B_hat.cols());
  lapack::gemm(true, false, 1.0, Q_, B_hat, 0.0, Bt_);
  Rc_ = schur_lyapunov_factor(T_, Bt_);
  // Observability: with A_hat = Q T Q^T and Yt = Q^T Y Q, A_hat^T Y + Y A_hat + C^T C = 0 is
  // T^T Yt + Yt T + (C Q)^T (C Q) = 0; reversing rows and columns (J) turns the lower
  // T^T into the upper quasi-triangular S = J T^T J, whose 2x2 blocks keep the standard form.
  Ct_.resize(n, C.rows());
  lapack::gemm(true, true, 1.0, Q_, C, 0.0, Ct_);  // Q^T C^T
  const Matrix S = T_.transpose().reverse();
  Ro_ = schur_lyapunov_factor(S, Ct_.colwise().reverse());
}

Matrix DenseGramianFactors::hankel_product() const {
  if (sign()) {
    // Z_o^T E Z_c = L^T E^{-1} E Z_c = L^T Z_c.
    Matrix H(L_.cols(), Zc_.cols());
    lapack::gemm(true, false, 1.0, L_, Zc_, 0.0, H);
    return H;
  }
  // Z_o^T E Z_c = R_o^T J Q^T E^{-1}... = R_o^T J Q^T Q R_c = R_o^T J R_c.
  Matrix H(n_, n_);
  lapack::gemm(true, false, 1.0, Ro_.colwise().reverse(), Rc_, 0.0, H);
  return H;
}

Matrix DenseGramianFactors::controllability_times(const Matrix& Y) const {
  require(Y.rows() == rank_c(), "DenseGramianFactors: Y has ", Y.rows(), " rows, expected ",
          rank_c());
  Matrix Z(n_, Y.cols());
  if (sign()) {
    lapack::gemm(false, false, 1.0, Zc_, Y, 0.0, Z);
    return Z;
  }
  const Matrix RY = Rc_.triangularView<Eigen::Upper>() * Y;
  lapack::gemm(false, false, 1.0, Q_, RY, 0.0, Z);
  return Z;
}

Matrix DenseGramianFactors::observability_times(const Matrix& Y) const {
  require(Y.rows() == rank_o(), "DenseGramianFactors: Y has ", Y.rows(), " rows, expected ",
          rank_o());
  Matrix L(n_, Y.cols());
  if (sign()) {
    lapack::gemm(false, false, 1.0, L_, Y, 0.0, L);
  } else {
    const Matrix RY = (Ro_.triangularView<Eigen::Upper>() * Y).colwise().reverse();
    lapack::gemm(false, false, 1.0, Q_, RY, 0.0, L);
  }
  if (lu_E_) return lu_E_->transpose().solve(L);
  return L;
}

Matrix DenseGramianFactors::controllability_factor() const {
  if (sign()) return Zc_;
  return controllability_times(Matrix::Identity(n_, n_));
}

Matrix DenseGramianFactors::observability_factor() const {
  return observability_times(Matrix::Identity(rank_o(), rank_o()));
}

double DenseGramianFactors::residual(GramianKind kind) const {
  const bool obs = kind == GramianKind::observability;
  const Index n = n_;
  Vector t, u;
  if (sign()) {
    // R = Ah Z Z^T + Z Z^T Ah^T + G G^T with (Ah, G, Z) = (A_hat, B_hat, Z_c) or
    // (A_hat^T, C^T, L), applied in factored form (O(n^2 + n k) per step).
    const Matrix& Z = obs ? L_ : Zc_;
    const Matrix& G = obs ? C_t_ : B_hat_;
    return lanczos_relative_residual(n, G, [&](const Vector& v, Vector& w) {
      u.noalias() = Z.transpose() * v;
      t.noalias() = Z * u;
      if (obs) {
        w.noalias() = A_hat_.transpose() * t;
        t.noalias() = A_hat_ * v;  // Ah^T v
      } else {
        w.noalias() = A_hat_ * t;
        t.noalias() = A_hat_.transpose() * v;
      }
      u.noalias() = Z.transpose() * t;
      w.noalias() += Z * u;
      w.noalias() += G * (G.transpose() * v);
    });
  }
  // In Schur coordinates: Rt = T Xt + Xt T^T + G G^T, Xt = R R^T, with (T, G, R) = (T, Bt, Rc)
  // or (J T^T J, J Ct, Ro); ||Rt||_2 = ||R_hat||_2 for the equation of E^{-1} A (Q orthogonal).
  // Applied in factored form (O(n^2) per step, nothing n x n formed).
  const Matrix T = obs ? Matrix(T_.transpose().reverse()) : T_;
  const Matrix G = obs ? Matrix(Ct_.colwise().reverse()) : Bt_;
  const auto R = (obs ? Ro_ : Rc_).triangularView<Eigen::Upper>();
  return lanczos_relative_residual(n, G, [&](const Vector& v, Vector& w) {
    // w = T R R^T v + R R^T T^T v + G G^T v.
    u.noalias() = R.transpose() * v;
    t.noalias() = R * u;
    w.noalias() = T * t;
    u.noalias() = T.transpose() * v;
    t.noalias() = R.transpose() * u;
    w.noalias() += R * t;
    w.noalias() += G * (G.transpose() * v);
  });
}

}  // namespace mor
