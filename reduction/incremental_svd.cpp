// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/incremental_svd.hpp"

#include <cmath>

#include "src/core/errors.hpp"
#include "src/linalg/lapack.hpp"

namespace mor {

IncrementalSvd::IncrementalSvd(Index n, Index max_rank, Index block, double tolerance)
    : n_(n), max_rank_(max_rank), block_(block), tolerance_(tolerance) {
  require(n >= 1, "incremental SVD: n must be >= 1, got ", n);
  require(max_rank >= 1, "incremental SVD: max_rank must be >= 1, got ", max_rank);
  require(block >= 1, "incremental SVD: block must be >= 1, got ", block);
  require(tolerance >= 0.0 && tolerance < 1.0, "incremental SVD: tolerance must be in [0, 1), got ",
          tolerance);
  US_.resize(n, 0);
}

void IncrementalSvd::append(const Eigen::Ref<const Vector>& x) {
  require(x.size() == n_, "incremental SVD: a snapshot has ", x.size(),
          " entries, expected n = ", n_);
  const double e = x.squaredNorm();
  require(std::isfinite(e), "incremental SVD: snapshot ", seen_, " has a non-finite entry");
  if (buf_.cols() == 0) buf_.resize(n_, block_);
  buf_.col(used_++) = x;
  energy_ += e;
  ++seen_;
  if (used_ == block_) update();
}

void IncrementalSvd::update() {
  if (used_ == 0) return;
  const Index c = US_.cols();
  Matrix B(n_, c + used_);
  B.leftCols(c) = US_;
  B.rightCols(used_) = buf_.leftCols(used_);
  used_ = 0;
  US_.resize(n_, 0);  // B holds it: the peak is n (2 max_rank + block) for a moment
  lapack::Svd svd = lapack::thin_svd(std::move(B));
  const Index k = svd.s.size();
  Index keep = 0;
  const double floor = svd.s.size() > 0 ? tolerance_ * svd.s[0] : 0.0;
  while (keep < k && keep < max_rank_ && svd.s[keep] > floor) ++keep;
  discarded_ += svd.s.tail(k - keep).squaredNorm();
  US_ = svd.U.leftCols(keep) * svd.s.head(keep).asDiagonal();
}

Matrix IncrementalSvd::compressed() {
  update();
  return US_;
}

Vector IncrementalSvd::singular_values() {
  update();
  return US_.colwise().norm().transpose();
}

}  // namespace mor
