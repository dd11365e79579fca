// SPDX-License-Identifier: GPL-3.0-or-later
// The reduced force of the cubic path stencil (see the header).
#include "reduction/cubic_stencil_force.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "src/core/errors.hpp"
#include "src/core/finite.hpp"

namespace mor {

namespace {

/// Delta X, (N+1) x cols: row s holds X_s - X_{s-1} (0-based, walls X_{-1} = X_N = 0), the
/// elongations of the N + 1 springs for each column of X.
Matrix spring_differences(const Matrix& X) {
  const Index N = X.rows();
  Matrix E(N + 1, X.cols());
  E.topRows(1) = X.topRows(1);
  E.middleRows(1, N - 1) = X.bottomRows(N - 1) - X.topRows(N - 1);
  E.bottomRows(1) = -X.bottomRows(1);
  return E;
}

/// C(r+2, 3): the number of triples j <= k <= l of r indices.
Index triple_count(Index r) {
  return r * (r + 1) * (r + 2) / 6;
}

}  // namespace

double reduced_tensor_bytes(Index r) {
  const double x = static_cast<double>(r);
  return 8.0 * x * (x * (x + 1.0) * (x + 2.0) / 6.0);
}

void CubicStencilForce::check(const CubicPathStencil& s, Index r, const ProjectionOptions& o) {
  require(o.nonlinear != NonlinearTreatment::ecsw,
          "cubic stencil force: the ecsw treatment weights the springs as elements of the network "
          "form: project the network (reduction/network_force.hpp)");
  if (o.nonlinear == NonlinearTreatment::deim) {
    require(o.deim != nullptr,
            "cubic stencil force: the deim treatment needs a DeimResult (options.deim is null)");
    check_deim_result(*o.deim, s.n, "cubic stencil force", "the stencil size N");
  }
  if (o.nonlinear == NonlinearTreatment::tensor) {
    const double bytes = reduced_tensor_bytes(r);
    require(bytes <= static_cast<double>(o.tensor_memory_limit),
            "cubic stencil force: the reduced cubic tensor of order r = ", r, " needs ", bytes,
            " bytes, above the limit of ", o.tensor_memory_limit,
            " bytes (use a smaller r or the deim treatment)");
  }
}

CubicStencilForce::CubicStencilForce(const CubicPathStencil& s, const Matrix& V, const Matrix& Wt,
                                     bool galerkin, const ProjectionOptions& options,
                                     const Matrix& D_r, const Matrix& K_r, const Matrix& B_r)
    : treatment_(options.nonlinear),
      N_(s.n),
      r_(V.cols()),
      nu_(B_r.cols()),
      k_n_(s.k_n),
      galerkin_(galerkin) {
  if (treatment_ == NonlinearTreatment::tensor) {
    // T = k_n (Delta W)^T P, P(s, t) = mult_t d_sj d_sk d_sl over the springs s, formed in
    // blocks of springs so that P stays below ~32 MB whatever N.
    const Matrix DV = spring_differences(V), DW = spring_differences(Wt);
    const Index C = triple_count(r_), S = N_ + 1;
    constexpr Index kBlockBytes = Index{1} << 25;
    const Index block = std::min(S, std::max<Index>(kBlockBytes / (8 * C), 16));
    T_ = Matrix::Zero(r_, C);
    Matrix P(block, C);
    Vector djk(block);
    for (Index s0 = 0; s0 < S; s0 += block) {
      const Index len = std::min(block, S - s0);
      const auto Dv = DV.middleRows(s0, len);
      Index t = 0;
      for (Index j = 0; j < r_; ++j) {
        for (Index k = j; k < r_; ++k) {
          djk.head(len) = Dv.col(j).cwiseProduct(Dv.col(k));
          for (Index l = k; l < r_; ++l, ++t) {
            // Multiplicity of q_j q_k q_l in (d^T q)^3 = sum over ordered (j, k, l).
            const double mult = (j == l) ? 1.0 : (j == k || k == l) ? 3.0 : 6.0;
            P.col(t).head(len) = mult * djk.head(len).cwiseProduct(Dv.col(l));
          }
        }
      }
      T_.noalias() += DW.middleRows(s0, len).transpose() * P.topRows(len);
    }
    T_ *= k_n_;
  } else if (treatment_ == NonlinearTreatment::deim) {
    const DeimResult& d = *options.deim;
    const Index m = d.U.cols();
    deim_rows_ = d.indices;
    EL_.resize(m, r_);
    ER_.resize(m, r_);
    for (Index i = 0; i < m; ++i) {
      const Index p = deim_rows_[static_cast<std::size_t>(i)];
      EL_.row(i) = V.row(p);
      ER_.row(i) = V.row(p);
      if (p > 0) EL_.row(i) -= V.row(p - 1);
      if (p + 1 < N_) ER_.row(i) -= V.row(p + 1);
    }
    const Matrix WtU = Wt.transpose() * d.U;
    G_ = WtU * d.PtU_inv;
    E_.resize(2 * m, r_);
    E_ << EL_, ER_;
  }
  assemble_product(D_r, K_r, B_r);
}

void CubicStencilForce::assemble_product(const Matrix& D_r, const Matrix& K_r, const Matrix& B_r) {
  const bool deim = stacked_nonlinearity();
  DKG_.resize(r_, 2 * r_ + nu_ + (deim ? G_.cols() : 0));
  DKG_.leftCols(r_) = -D_r;
  DKG_.middleCols(r_, r_) = -K_r;
  DKG_.middleCols(2 * r_, nu_) = B_r;
  if (deim) DKG_.rightCols(G_.cols()) = -G_;
}

CubicStencilForce CubicStencilForce::reparametrised(double s, const Matrix& D_r, const Matrix& K_r,
                                                    const Matrix& B_r) const {
  CubicStencilForce f = *this;
  f.k_n_ = s * k_n_;
  if (f.treatment_ == NonlinearTreatment::tensor) f.T_ *= s;  // k_n is folded into T
  f.assemble_product(D_r, K_r, B_r);
  return f;
}

Index CubicStencilForce::nonlinear_storage() const {
  switch (treatment_) {
    case NonlinearTreatment::full:
      return (galerkin_ ? 1 : 2) * N_ * r_;
    case NonlinearTreatment::tensor:
      return T_.size();
    case NonlinearTreatment::deim:
      return EL_.size() + ER_.size() + G_.size();
    case NonlinearTreatment::ecsw:  // refused by the constructor
      break;
  }
  return 0;
}

void CubicStencilForce::nonlinear_force(const Eigen::Ref<const Vector>& q, const Matrix& V,
                                        const Matrix& W, Vector& g_r) const {
  require(q.size() == r_, "cubic stencil force: q_r has size ", q.size(), ", expected r = ", r_);
  g_r.resize(r_);
  if (k_n_ == 0.0) {
    g_r.setZero();
    return;
  }
  switch (treatment_) {
    case NonlinearTreatment::full: {
      // g = k_n Delta^T e^3, e = Delta V q_r: (Delta^T x)_i = x_i - x_{i+1}.
      const Vector qf = V * q;
      const Vector e3 = spring_differences(qf).array().cube().matrix();
      const Vector g = k_n_ * (e3.head(N_) - e3.tail(N_));
      g_r.noalias() = W.transpose() * g;
      break;
    }
    case NonlinearTreatment::tensor: {
      // z_t = q_j q_k q_l over j <= k <= l, lexicographic; g_r = T z.
      Vector z(T_.cols());
      Index t = 0;
      for (Index j = 0; j < r_; ++j)
        for (Index k = j; k < r_; ++k) {
          const Index len = r_ - k;
          z.segment(t, len) = (q[j] * q[k]) * q.tail(len);
          t += len;
        }
      g_r.noalias() = T_ * z;
      break;
    }
    case NonlinearTreatment::deim: {
      // g_p = k_n (el^3 + er^3), el = q_p - q_{p-1}, er = q_p - q_{p+1}.
      const Vector el = EL_ * q, er = ER_ * q;
      const Vector gP = k_n_ * (el.array().cube() + er.array().cube()).matrix();
      g_r.noalias() = G_ * gP;
      break;
    }
    case NonlinearTreatment::ecsw:  // refused by the constructor
      break;
  }
}

Matrix CubicStencilForce::nonlinear_jacobian(const Eigen::Ref<const Vector>& q, const Matrix& V,
                                             const Matrix& W) const {
  require(q.size() == r_, "cubic stencil force: q_r has size ", q.size(), ", expected r = ", r_);
  Matrix J = Matrix::Zero(r_, r_);
  if (k_n_ == 0.0) return J;
  switch (treatment_) {
    case NonlinearTreatment::full: {
      // W^T Delta^T diag(3 k_n e^2) Delta V, e = Delta V q_r.
      const Vector qf = V * q;
      const Vector ks = 3.0 * k_n_ * spring_differences(qf).array().square().matrix();
      const Matrix X = ks.asDiagonal() * spring_differences(V);
      const Matrix JV = X.topRows(N_) - X.bottomRows(N_);
      J.noalias() = W.transpose() * JV;
      break;
    }
    case NonlinearTreatment::tensor: {
      // d(q_j q_k q_l) = q_k q_l dq_j + q_j q_l dq_k + q_j q_k dq_l; for fixed (j, k) the
      // triples l = k..r-1 are the contiguous columns t..t+len-1 of T.
      Index t = 0;
      for (Index j = 0; j < r_; ++j)
        for (Index k = j; k < r_; ++k) {
          const Index len = r_ - k;
          const auto Tb = T_.middleCols(t, len);
          J.col(j).noalias() += Tb * (q[k] * q.tail(len));
          J.col(k).noalias() += Tb * (q[j] * q.tail(len));
          J.middleCols(k, len) += (q[j] * q[k]) * Tb;
          t += len;
        }
      break;
    }
    case NonlinearTreatment::deim: {
      // J_P V = 3 k_n (diag(el^2) EL + diag(er^2) ER): the m sampled rows of the tridiagonal
      // Jacobian times V, from the three neighbouring rows of V.
      const Vector el = EL_ * q, er = ER_ * q;
      const Matrix JPV = 3.0 * k_n_ *
                         (el.array().square().matrix().asDiagonal() * EL_ +
                          er.array().square().matrix().asDiagonal() * ER_);
      J.noalias() = G_ * JPV;
      break;
    }
    case NonlinearTreatment::ecsw:  // refused by the constructor
      break;
  }
  return J;
}

void CubicStencilForce::add_nonlinear_jacobian(const Vector& q, double c, const Matrix& V,
                                               const Matrix& W, Matrix& S, Matrix& scratch) const {
  require(q.size() == r_ && S.rows() == r_ && S.cols() == r_, "cubic stencil force: q_r has size ",
          q.size(), " and S is ", S.rows(), " x ", S.cols(), ", expected r = ", r_);
  if (k_n_ == 0.0) return;
  if (treatment_ != NonlinearTreatment::deim) {
    S.noalias() += c * nonlinear_jacobian(q, V, W);
    return;
  }
  // c G J_P V, J_P V = 3 k_n (diag(el^2) EL + diag(er^2) ER), c folded into the weights.
  const Index m = deim_samples();
  SmallScratch s(2 * m);
  auto e = s.vector(0, 2 * m);
  e.noalias() = E_ * q;
  const double w = 3.0 * k_n_ * c;
  scratch.resize(m, r_);
  scratch.noalias() = (w * e.head(m).array().square()).matrix().asDiagonal() * EL_;
  scratch.noalias() += (w * e.tail(m).array().square()).matrix().asDiagonal() * ER_;
  S.noalias() += G_ * scratch;
}

}  // namespace mor
