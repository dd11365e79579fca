// SPDX-License-Identifier: GPL-3.0-or-later
// The Eigen decompositions that many translation units use, instantiated once: explicit
// instantiation declarations here (every library sees them through its precompiled header,
// mor_precompile_headers in cmake/MorTargets.cmake), the definitions in
// eigen_instances_factor.cpp (a definition may follow the declaration in the same file). Without
// them each file that calls, say, PartialPivLU<Matrix> compiled its instantiation and
// optimisation again (irka.cpp took 68 s of CPU, 39-43 s with them when the SVDs and eigensolvers
// were here too; g++ 12, -O3; docs/benchmarks.md "The first command"). A file compiled without
// the precompiled header (MOR_PCH=OFF, the tests) instantiates what it uses itself, as before; the
// linker keeps one copy either way.
// The dense SVDs, eigensolvers, Hessenberg and Schur forms, the QZ algorithm, the complex LU and
// the QR factorizations are LAPACK's (src/linalg/lapack.hpp: dgesdd, dsyevd, dsygvd, dsterf,
// dgeev, dgehrd, dgees, dggev, zgesdd, zgetrf, dgeqrf, dgeqp3), not Eigen's and not instantiated
// at all: each cost 3-25 s of the first command's compiles (g++ 12, -O3, alone; BDCSVD 21-25 s,
// GeneralizedEigenSolver with RealQZ about 20, SelfAdjointEigenSolver with its generalized form
// 11.4, JacobiSVD 8-11, EigenSolver with RealSchur and HessenbergDecomposition 6.4) for a handful
// of calls. PartialPivLU and LLT stay Eigen's: about 25 call sites, the reduced models' small
// factorizations in their time steps among them.
//
// MOR_EIGEN_INSTANCES_FACTOR(X) lists the types of the definition file; X(T) is expanded for
// each. A type used widely enough to matter is one line here.
#pragma once

#include <Eigen/Dense>

#include "src/core/types.hpp"

// eigen_instances_factor.cpp: the one-sided factorizations.
#define MOR_EIGEN_INSTANCES_FACTOR(X) X(PartialPivLU<::mor::Matrix>) X(LLT<::mor::Matrix>)

#define MOR_EIGEN_EXTERN_INSTANCE(T) \
  namespace Eigen {                  \
  extern template class T;           \
  }
MOR_EIGEN_INSTANCES_FACTOR(MOR_EIGEN_EXTERN_INSTANCE)
