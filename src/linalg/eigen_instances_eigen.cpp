// SPDX-License-Identifier: GPL-3.0-or-later
// Explicit instantiation definitions of MOR_EIGEN_INSTANCES_EIGEN and
// MOR_EIGEN_MEMBER_INSTANCES_EIGEN (src/linalg/eigen_instances.hpp).
#include "src/linalg/eigen_instances.hpp"

#define MOR_EIGEN_DEFINE_INSTANCE(T) \
  namespace Eigen {                  \
  template class T;                  \
  }
MOR_EIGEN_INSTANCES_EIGEN(MOR_EIGEN_DEFINE_INSTANCE)
#define MOR_EIGEN_DEFINE_MEMBER(...) \
  namespace Eigen {                  \
  template __VA_ARGS__;              \
  }
MOR_EIGEN_MEMBER_INSTANCES_EIGEN(MOR_EIGEN_DEFINE_MEMBER)
