// SPDX-License-Identifier: GPL-3.0-or-later
// The Eigen decompositions that many translation units use, instantiated once: explicit
// instantiation declarations here (every library sees them through its precompiled header,
// mor_precompile_headers in cmake/MorTargets.cmake), the definitions in
// eigen_instances_*.cpp (a definition may follow the declaration in the same file). Without them
// each file that calls, say, BDCSVD<Matrix> compiled its 20-odd seconds of instantiation and
// optimisation again: irka.cpp took 68 s of CPU, 39-43 s with them (g++ 12, -O3; docs/benchmarks.md
// "The first command"). A file compiled without the precompiled header (MOR_PCH=OFF, the tests)
// instantiates what it uses itself, as before; the linker keeps one copy either way.
// The divide-and-conquer SVD, the QZ algorithm, the complex SVD and LU and the unpivoted QR are
// LAPACK's (dgesdd, dggev, zgesdd, zgetrf, dgeqrf in src/linalg/lapack.hpp), not instantiated
// here at all: BDCSVD cost 21-25 s of the first command's compiles, GeneralizedEigenSolver with
// RealQZ about 20 s, JacobiSVD<ComplexMatrix> 8.5 s, PartialPivLU<ComplexMatrix> 5 s and
// HouseholderQR<Matrix> 4.5 s (g++ 12, -O3, each alone), each for a handful of calls.
//
// MOR_EIGEN_INSTANCES_<GROUP>(X) lists the types of one definition file; X(T) is expanded for
// each. A type used widely enough to matter is one line here.
#pragma once

#include <Eigen/Dense>

#include "src/core/types.hpp"

// eigen_instances_factor.cpp: the one-sided factorizations and the Jacobi SVD.
#define MOR_EIGEN_INSTANCES_FACTOR(X) \
  X(JacobiSVD<::mor::Matrix>)         \
  X(PartialPivLU<::mor::Matrix>) X(ColPivHouseholderQR<::mor::Matrix>) X(LLT<::mor::Matrix>)
// eigen_instances_eigen.cpp: the eigensolvers and the forms they go through.
#define MOR_EIGEN_INSTANCES_EIGEN(X)                  \
  X(SelfAdjointEigenSolver<::mor::Matrix>)            \
  X(GeneralizedSelfAdjointEigenSolver<::mor::Matrix>) \
  X(EigenSolver<::mor::Matrix>)                       \
  X(RealSchur<::mor::Matrix>) X(HessenbergDecomposition<::mor::Matrix>)
// An instantiated class leaves its member templates out, and Eigen 3.4's eigensolvers take the
// matrix of compute() (and of the constructors that call it) as an EigenBase<InputType>: these
// are the calls with a plain Matrix, the decomposition's whole work (with them, a file that
// calls SelfAdjointEigenSolver<Matrix>(A) compiles only the call). X(D) is one declaration D,
// defined in eigen_instances_eigen.cpp.
#define MOR_EIGEN_MEMBER_INSTANCES_EIGEN(X)                                                      \
  X(SelfAdjointEigenSolver<::mor::Matrix>& SelfAdjointEigenSolver<::mor::Matrix>::compute(       \
      const EigenBase<::mor::Matrix>&, int))                                                     \
  X(EigenSolver<::mor::Matrix>& EigenSolver<::mor::Matrix>::compute(                             \
      const EigenBase<::mor::Matrix>&, bool))                                                    \
  X(RealSchur<::mor::Matrix>& RealSchur<::mor::Matrix>::compute(const EigenBase<::mor::Matrix>&, \
                                                                bool))

#define MOR_EIGEN_EXTERN_INSTANCE(T) \
  namespace Eigen {                  \
  extern template class T;           \
  }
MOR_EIGEN_INSTANCES_FACTOR(MOR_EIGEN_EXTERN_INSTANCE)
MOR_EIGEN_INSTANCES_EIGEN(MOR_EIGEN_EXTERN_INSTANCE)
#define MOR_EIGEN_EXTERN_MEMBER(...) \
  namespace Eigen {                  \
  extern template __VA_ARGS__;       \
  }
MOR_EIGEN_MEMBER_INSTANCES_EIGEN(MOR_EIGEN_EXTERN_MEMBER)
