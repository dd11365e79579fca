// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/incremental_svd.hpp"

#include <algorithm>
#include <cmath>

#include "src/core/errors.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

Index IncrementalSvd::automatic_block(Index n) {
  const double fit = std::floor(kBlockBytes / (8.0 * static_cast<double>(std::max<Index>(n, 1))));
  return static_cast<Index>(std::clamp(fit, 16.0, 256.0));
}

IncrementalSvd::IncrementalSvd(Index n, Index max_rank, Index block, double tolerance)
    : n_(n), max_rank_(max_rank), block_(block), tolerance_(tolerance) {
  require(n >= 1, "incremental SVD: n must be >= 1, got ", n);
  require(max_rank >= 1, "incremental SVD: max_rank must be >= 1, got ", max_rank);
  require(block >= 0, "incremental SVD: block must be >= 1 (0: automatic), got ", block);
  require(tolerance >= 0.0 && tolerance < 1.0, "incremental SVD: tolerance must be in [0, 1), got ",
          tolerance);
  if (block_ == 0) block_ = automatic_block(n);
}

void IncrementalSvd::append(const Eigen::Ref<const Vector>& x) {
  require(x.size() == n_, "incremental SVD: a snapshot has ", x.size(),
          " entries, expected n = ", n_);
  const double e = x.squaredNorm();
  require(std::isfinite(e), "incremental SVD: snapshot ", seen_, " has a non-finite entry");
  if (buf_.cols() != block_) buf_.resize(n_, block_);
  buf_.col(used_++) = x;
  energy_ += e;
  ++seen_;
  if (used_ == block_) update();
}

void IncrementalSvd::append_block(Matrix B) {
  require(B.rows() == n_ || B.cols() == 0, "incremental SVD: a block has ", B.rows(),
          " rows, expected n = ", n_);
  if (B.cols() == 0) return;
  const double e = B.squaredNorm();
  require(std::isfinite(e), "incremental SVD: a block of ", B.cols(),
          " snapshots has a non-finite entry");
  update();
  energy_ += e;
  seen_ += B.cols();
  update_with(B);
}

void IncrementalSvd::update() {
  if (used_ == 0) return;
  // The buffer itself becomes the update's workspace (its Q); a partial one is cut to its
  // snapshots first. append() makes a new one.
  if (used_ < buf_.cols()) buf_.conservativeResize(Eigen::NoChange, used_);
  used_ = 0;
  update_with(buf_);
}

void IncrementalSvd::update_with(Matrix& B) {
  const Index c = c_, b = B.cols();
  const Index cap = std::min(max_rank_, n_);
  if (U_.cols() != cap) U_.resize(n_, cap);
  const auto U = U_.leftCols(c);
  Matrix K = Matrix::Zero(c + b, c + b);
  if (c + b > n_) {
    // Too few rows for an orthogonal complement of b columns: the dense SVD of [U S, B]
    // (n < c + b: small).
    Matrix X(n_, c + b);
    X.leftCols(c) = U * s_.asDiagonal();
    X.rightCols(b) = B;
    lapack::Svd svd = lapack::thin_svd(std::move(X));
    const Index k = svd.s.size();
    Index keep = 0;
    const double floor = k > 0 ? tolerance_ * svd.s[0] : 0.0;
    while (keep < k && keep < cap && svd.s[keep] > floor) ++keep;
    discarded_ += svd.s.tail(k - keep).squaredNorm();
    U_.leftCols(keep) = svd.U.leftCols(keep);
    s_ = svd.s.head(keep);
    c_ = keep;
    return;
  }
  // P = U^T B and the rest B - U P, orthogonalized twice (classical Gram-Schmidt twice is
  // orthogonal to working precision), then B <- Q, R its triangular factor.
  Matrix P = U.transpose() * B;
  B.noalias() -= U * P;
  const Matrix P2 = U.transpose() * B;
  B.noalias() -= U * P2;
  P += P2;
  const Matrix R = lapack::qr_in_place(B);  // B <- Q
  K.topLeftCorner(c, c) = s_.asDiagonal();
  K.topRightCorner(c, b) = P;
  K.bottomRightCorner(b, b) = R;
  lapack::Svd small = lapack::thin_svd(std::move(K));
  const Index k = small.s.size();
  Index keep = 0;
  const double floor = k > 0 ? tolerance_ * small.s[0] : 0.0;
  while (keep < k && keep < cap && small.s[keep] > floor) ++keep;
  discarded_ += small.s.tail(k - keep).squaredNorm();
  // U' = [U Q] U_K (leading keep columns), row block by row block into U's storage: a row of U'
  // needs only the same row of U and Q.
  const Matrix top = small.U.topLeftCorner(c, keep), bottom = small.U.bottomLeftCorner(b, keep);
  constexpr Index kRows = 2048;
  Matrix rows;
  for (Index i = 0; i < n_; i += kRows) {
    const Index h = std::min(kRows, n_ - i);
    rows.noalias() = B.middleRows(i, h) * bottom;
    if (c > 0) rows.noalias() += U_.block(i, 0, h, c) * top;
    U_.block(i, 0, h, keep) = rows;
  }
  s_ = small.s.head(keep);
  c_ = keep;
}

Matrix IncrementalSvd::compressed() {
  update();
  return U_.leftCols(c_) * s_.asDiagonal();
}

Matrix IncrementalSvd::take() {
  update();
  buf_.resize(0, 0);
  Matrix US = std::move(U_);
  US.conservativeResize(n_, c_);
  US *= s_.asDiagonal();
  U_.resize(0, 0);
  s_.resize(0);
  c_ = used_ = seen_ = 0;
  energy_ = discarded_ = 0;
  return US;
}

Vector IncrementalSvd::singular_values() {
  update();
  return s_;
}

}  // namespace mor
