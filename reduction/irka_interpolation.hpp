// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to IRKA (irka.cpp) and SOR-IRKA (second_order_irka.cpp), not a public API: what they
// share, interpolation points, real bases from shifted solves, history entries, option checks.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "reduction/irka.hpp"
#include "reduction/lti_operator.hpp"

namespace mor::irka_detail {

/// One interpolation point: a real shift, or (Im sigma > 0) a conjugate pair represented by
/// its member in the upper half plane, with its right and left tangential directions.
struct Point {
  Complex sigma;
  ComplexVector b, c;  ///< empty: not yet chosen (taken from G(sigma) at the first solve)
  bool real() const { return sigma.imag() == 0.0; }
  Index columns() const { return real() ? 1 : 2; }
};

/// The indices of the nonzero rows of a tall n x k matrix (B, C^T), kept when they are at most
/// n / kSparseShare (inputs and outputs at a few degrees of freedom, as the chain's: `sparse`);
/// otherwise the dense products are used. The sums over the kept rows are those of the dense
/// products without their exactly zero terms.
struct Support {
  bool ready = false, sparse = false;
  std::vector<Index> rows;
  template <class Mat>
  void build(const Mat& M) {
    constexpr Index kSparseShare = 8;
    ready = true;
    rows.clear();
    for (Index i = 0; i < M.rows(); ++i)
      for (Index j = 0; j < M.cols(); ++j)
        if (M(i, j) != 0.0) {
          rows.push_back(i);
          break;
        }
    sparse = static_cast<Index>(rows.size()) * kSparseShare <= M.rows();
  }
};

/// Scratch of one thread's shifted solves (n x 1), kept between iterations.
struct SolveWorkspace {
  Matrix x, v[2], ev[2];
  ComplexMatrix xc;
};

/// The columns of V and W before orthonormalization, each scaled to unit norm (a conjugate
/// pair's real and imaginary parts by the norm of the complex solution), and G(sigma_i) b_i
/// for each point.
struct RawBases {
  Matrix V, W;                    ///< n x r each (W empty if not asked for)
  std::vector<ComplexVector> Gb;  ///< G(sigma_i) b_i (without D_ff), one per point
  /// The shifted systems the columns of V and W solve, (A - sigma_i E) v = B b_i and
  /// (A - sigma_i E)^T w = C^T c_i, as real relations
  ///     A V = E V Sigma + B Bd,     W^T A = Sigma^T W^T E + Cd^T C:
  /// Sigma (r x r) block diagonal, sigma_i for a real shift and [a w; -w a] for a pair
  /// sigma = a + i w (columns Re v, Im v); Bd (m x r), Cd (p x r) the real directions (Re b,
  /// Im b for a pair) divided by the columns' scale factors.
  Matrix Sigma, Bd, Cd;
  Matrix CV;  ///< C V (p x r), from the solves
  /// The diagonal blocks W_i^T E V_i of each point's columns (1 x 1 or 2 x 2; r x r, zero
  /// elsewhere), formed by the thread that solved the point (with W only).
  Matrix WEV;
  Index solves = 0;
  SolveWorkspace ws[2];  ///< per thread
  /// The rows of B and the columns of C with a nonzero entry, when they are few (see
  /// Support); the products with B, C^T and C then touch only those, not n-long dense rows.
  Support b_rows, c_cols;
};

/// The interpolation data (shifts, directions) of a model and its residues, kept from one
/// iteration to the next for the history.
struct Previous {
  bool valid = false;
  Matrix Er, Ar, Br, Cr;  ///< first-order form of the previous reduced model
};

/// Every shift of the points, pairs as both members.
std::vector<Complex> all_shifts(const std::vector<Point>& pts);

/// Directions as m x r and p x r, pairs as a column and its conjugate.
void all_directions(const std::vector<Point>& pts, ComplexMatrix& b, ComplexMatrix& c);

double spectral_abscissa(const ComplexVector& poles);

/// Given shifts and directions as points (pairs matched with their conjugates).
/// @throws InvalidArgument naming the offending shift.
std::vector<Point> given_points(const std::vector<Complex>& shifts, const ComplexMatrix& b,
                                const ComplexMatrix& c, Index r, Index m, Index p);

/// r shifts from the smallest-magnitude Ritz values of the pencil (pairs kept together).
std::vector<Point> ritz_points(LtiOperator& sys, Index r, Index steps);

/// One shifted solve per point (and one transposed, if with_W), with (sigma E - A) =
/// -(A + p E), p = -sigma; real shifts in real arithmetic, pairs as the real and imaginary
/// parts of one complex solve. Points without directions get the leading singular vectors of
/// G(sigma) (from a solve with all of B, whose factorization the tangential solve reuses).
/// With a `helper` operator (a solver_copy of sys: its own factor cache and scratch), the
/// points are solved on two threads, pairs first, each thread taking the next unsolved point;
/// every point's columns are those a single thread computes (same factorization, same
/// operations), whichever thread solves it. The stop request (`stop` and the process-wide flag)
/// is polled before each point: Interrupted("<what> interrupted in iteration <it>").
void raw_bases(LtiOperator& sys, LtiOperator* helper, std::vector<Point>& pts, bool with_W,
               RawBases& out, const std::atomic<bool>* stop = nullptr, const char* what = "IRKA",
               Index it = 0);

/// Q: an orthonormal basis of the columns of X (n x r), which must have full rank; with
/// one_pass possibly only nearly orthonormal (see cholesky_qr), which the return value says
/// (true: orthonormal). X is scratch; Q may take over its storage (no allocation when the
/// sizes stay).
/// @throws NumericalError naming the basis, the iteration and the rank.
bool orthonormal_basis(Matrix& X, Matrix& Q, const char* name, Index iteration,
                       bool one_pass = false, Matrix* R = nullptr);

/// History entries from this iteration's solves: the previous model's interpolation residual
/// at the new shifts and (if ||G||_H2 is known) its H2 error from the pole-residue form.
void fill_history(IrkaIteration& h, const std::vector<Point>& pts, const RawBases& raw,
                  const Previous& prev, double full_h2_norm);

/// ||G_r - G_r'||_H2 / ||G_r||_H2 of two small dense models (infinite if either is unstable or
/// the previous one is missing).
double model_change(const Previous& prev, const Matrix& Er, const Matrix& Ar, const Matrix& Br,
                    const Matrix& Cr);

std::string status_message(IrkaStatus status, Index iterations, double change, double tol,
                           double abscissa, Index max_iterations, bool converged,
                           IrkaCriterion criterion);

void check_common(Index r, Index n, double tol, Index max_iterations, const char* what);

/// The options' flag and the process-wide one (src/core/interrupt.hpp: SIGINT in `mor run`,
/// Ctrl-C in Python, neither of which hands a flag to the reduction).
void poll(const std::atomic<bool>* stop, const char* what, Index it);

}  // namespace mor::irka_detail
