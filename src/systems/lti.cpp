// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/systems/lti.hpp"

#include <vector>

#include "src/core/errors.hpp"

namespace mor {

void validate(const SecondOrderSystem& s) {
  const Index n = s.M.rows();
  require(n >= 1, "second-order system: M is empty");
  auto square = [n](const SparseMatrix& X, const char* name) {
    require(X.rows() == n && X.cols() == n, "second-order system: ", name, " is ", X.rows(), "x",
            X.cols(), ", expected ", n, "x", n, " (the size of M)");
  };
  square(s.M, "M");
  square(s.D, "D");
  square(s.K, "K");
  require(s.B.rows() == n, "second-order system: B has ", s.B.rows(), " rows, expected n = ", n);
  require(s.Cp.cols() == n && s.Cv.cols() == n, "second-order system: Cp is ", s.Cp.rows(), "x",
          s.Cp.cols(), " and Cv is ", s.Cv.rows(), "x", s.Cv.cols(), ", expected p x ", n);
  require(s.Cp.rows() == s.Cv.rows(), "second-order system: Cp has ", s.Cp.rows(),
          " rows but Cv has ", s.Cv.rows());
}

void validate(const DescriptorSystem& s) {
  const Index n = s.A.rows();
  require(n >= 1, "descriptor system: A is empty");
  require(s.A.cols() == n && s.E.rows() == n && s.E.cols() == n, "descriptor system: A is ",
          s.A.rows(), "x", s.A.cols(), " and E is ", s.E.rows(), "x", s.E.cols(),
          "; both must be n x n");
  require(s.B.rows() == n, "descriptor system: B has ", s.B.rows(), " rows, expected ", n);
  require(s.C.cols() == n, "descriptor system: C has ", s.C.cols(), " columns, expected ", n);
  require(s.D_ff.rows() == s.C.rows() && s.D_ff.cols() == s.B.cols(), "descriptor system: D is ",
          s.D_ff.rows(), "x", s.D_ff.cols(), ", expected ", s.C.rows(), "x", s.B.cols());
}

namespace {
/// Appends the entries of X shifted by (row0, col0), scaled by s.
void append(std::vector<Triplet>& t, const SparseMatrix& X, Index row0, Index col0, double s) {
  for (Index j = 0; j < X.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(X, j); it; ++it)
      t.emplace_back(static_cast<int>(it.row() + row0), static_cast<int>(it.col() + col0),
                     s * it.value());
}
}  // namespace

DescriptorSystem to_descriptor(const SecondOrderSystem& s) {
  validate(s);
  const Index n = s.n(), m = s.n_inputs(), p = s.n_outputs();
  DescriptorSystem d;
  std::vector<Triplet> t;
  t.reserve(static_cast<std::size_t>(n + s.M.nonZeros()));
  for (Index i = 0; i < n; ++i) t.emplace_back(static_cast<int>(i), static_cast<int>(i), 1.0);
  append(t, s.M, n, n, 1.0);
  d.E.resize(2 * n, 2 * n);
  d.E.setFromTriplets(t.begin(), t.end());

  t.clear();
  for (Index i = 0; i < n; ++i) t.emplace_back(static_cast<int>(i), static_cast<int>(n + i), 1.0);
  append(t, s.K, n, 0, -1.0);
  append(t, s.D, n, n, -1.0);
  d.A.resize(2 * n, 2 * n);
  d.A.setFromTriplets(t.begin(), t.end());

  t.clear();
  append(t, s.B, n, 0, 1.0);
  d.B.resize(2 * n, m);
  d.B.setFromTriplets(t.begin(), t.end());

  t.clear();
  append(t, s.Cp, 0, 0, 1.0);
  append(t, s.Cv, 0, n, 1.0);
  d.C.resize(p, 2 * n);
  d.C.setFromTriplets(t.begin(), t.end());
  d.D_ff = Matrix::Zero(p, m);
  return d;
}

SecondOrderSystem embed_in_second_order(const DescriptorSystem& d) {
  validate(d);
  const Index n = d.n();
  SecondOrderSystem s;
  s.M = d.E;
  s.D = -d.A;
  s.K.resize(n, n);
  s.B = d.B;
  s.Cp.resize(d.n_outputs(), n);
  s.Cv = d.C;
  return s;
}

}  // namespace mor
