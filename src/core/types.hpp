// SPDX-License-Identifier: GPL-3.0-or-later
// Scalar, vector and matrix types shared by every module.
#pragma once

#include <complex>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace mor {

using Index = Eigen::Index;
using Vector = Eigen::VectorXd;
using Matrix = Eigen::MatrixXd;
/// Compressed sparse column, the layout SuiteSparse (CHOLMOD, UMFPACK, KLU) consumes directly.
using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
using Triplet = Eigen::Triplet<double, int>;

using Complex = std::complex<double>;
using ComplexVector = Eigen::VectorXcd;
using ComplexMatrix = Eigen::MatrixXcd;
using ComplexSparseMatrix = Eigen::SparseMatrix<Complex, Eigen::ColMajor, int>;

}  // namespace mor
