// SPDX-License-Identifier: GPL-3.0-or-later
// The projected nonlinear mass-spring chain (see the header).
#include "reduction/reduced_chain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reduction/galerkin.hpp"
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

void validate_deim(const DeimResult& d, Index N) {
  const Index m = d.U.cols();
  require(d.U.rows() == N, "reduced chain: the DEIM basis U has ", d.U.rows(),
          " rows, expected the chain size N = ", N);
  require(m >= 1, "reduced chain: the DEIM basis U has no columns (m = 0)");
  require(static_cast<Index>(d.indices.size()) == m, "reduced chain: the DEIM result has ",
          d.indices.size(), " indices for m = ", m, " basis vectors");
  require(d.PtU_inv.rows() == m && d.PtU_inv.cols() == m, "reduced chain: (P^T U)^{-1} is ",
          d.PtU_inv.rows(), " x ", d.PtU_inv.cols(), ", expected ", m, " x ", m);
  require_finite(d.U, "reduced chain: ", "DEIM basis U");
  require_finite(d.PtU_inv, "reduced chain: ", "DEIM (P^T U)^{-1}");
  for (Index p : d.indices)
    require(p >= 0 && p < N, "reduced chain: DEIM index ", p, " is outside [0, N = ", N, ")");
  std::vector<Index> sorted = d.indices;
  std::sort(sorted.begin(), sorted.end());
  const auto repeated = std::adjacent_find(sorted.begin(), sorted.end());
  require(repeated == sorted.end(), "reduced chain: DEIM index ",
          repeated == sorted.end() ? Index{-1} : *repeated, " is repeated");
}

}  // namespace

NonlinearTreatment parse_nonlinear_treatment(std::string_view name) {
  if (name == "full") return NonlinearTreatment::full;
  if (name == "tensor") return NonlinearTreatment::tensor;
  if (name == "deim") return NonlinearTreatment::deim;
  if (name == "ecsw") return NonlinearTreatment::ecsw;
  throw InvalidArgument(detail::concat("unknown nonlinear treatment '", name,
                                       "' (expected full, tensor, deim or ecsw)"));
}

std::string_view to_string(NonlinearTreatment t) {
  switch (t) {
    case NonlinearTreatment::full:
      return "full";
    case NonlinearTreatment::tensor:
      return "tensor";
    case NonlinearTreatment::deim:
      return "deim";
    case NonlinearTreatment::ecsw:
      return "ecsw";
  }
  return "unknown";
}

double reduced_tensor_bytes(Index r) {
  const double x = static_cast<double>(r);
  return 8.0 * x * (x * (x + 1.0) * (x + 2.0) / 6.0);
}

ReducedChainModel::ReducedChainModel(const MassSpringChain& chain, const Matrix& V, const Matrix& W,
                                     const ReducedChainOptions& options)
    : treatment_(options.nonlinear),
      N_(chain.n()),
      r_(V.cols()),
      k_n_(chain.parameters().k_n),
      galerkin_(W.size() == 0) {
  // Cheap checks first: nothing of size N r^3 is touched before the arguments are known good.
  require(V.rows() == N_, "reduced chain: V has ", V.rows(),
          " rows, expected the chain size N = ", N_);
  require(r_ >= 1, "reduced chain: V has r = ", r_, " columns, expected 1 <= r <= N = ", N_);
  require(r_ <= N_, "reduced chain: V has r = ", r_, " columns, more than N = ", N_);
  if (!galerkin_) {
    require(W.rows() == N_, "reduced chain: W has ", W.rows(),
            " rows, expected the chain size N = ", N_);
    require(W.cols() == r_, "reduced chain: W has ", W.cols(), " columns, expected r = ", r_,
            " (the columns of V)");
  }
  require(treatment_ != NonlinearTreatment::ecsw,
          "reduced chain: the ecsw treatment weights the chain's springs as elements of its "
          "network form: build a ReducedNetworkModel of chain.network()");
  require_finite(V, "reduced chain: ", "V");
  if (!galerkin_) require_finite(W, "reduced chain: ", "W");
  if (treatment_ == NonlinearTreatment::deim) {
    require(options.deim != nullptr,
            "reduced chain: the deim treatment needs a DeimResult (options.deim is null)");
    validate_deim(*options.deim, N_);
  }
  if (treatment_ == NonlinearTreatment::tensor) {
    const double bytes = reduced_tensor_bytes(r_);
    require(bytes <= static_cast<double>(options.tensor_memory_limit),
            "reduced chain: the reduced cubic tensor of order r = ", r_, " needs ", bytes,
            " bytes, above the limit of ", options.tensor_memory_limit,
            " bytes (use a smaller r or the deim treatment)");
  }

  V_ = V;
  if (!galerkin_) W_ = W;
  const Matrix& Wt = this->W();
  WtV_lu_.compute(Wt.transpose() * V_);
  const double rcond = lu_reciprocal_condition(WtV_lu_);
  require(rcond > kReducedSingularRcond,
          "reduced chain: W^T V is singular (reciprocal condition number ", rcond,
          "): some direction of range(V) is orthogonal to range(W)");

  DenseSecondOrderSystem linear = project_second_order(chain.linear_system(), V_, Wt);
  M_r_ = std::move(linear.M);
  D_r_ = std::move(linear.D);
  K_r_ = std::move(linear.K);
  B_r_ = std::move(linear.B);
  Cp_r_ = std::move(linear.Cp);
  Cv_r_ = std::move(linear.Cv);
  uniform_mass_ = uniform_mass_of(M_r_, kUniformMassTolerance);

  if (treatment_ == NonlinearTreatment::tensor) {
    // T = k_n (Delta W)^T P, P(s, t) = mult_t d_sj d_sk d_sl over the springs s, formed in
    // blocks of springs so that P stays below ~32 MB whatever N.
    const Matrix DV = spring_differences(V_), DW = spring_differences(Wt);
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
      EL_.row(i) = V_.row(p);
      ER_.row(i) = V_.row(p);
      if (p > 0) EL_.row(i) -= V_.row(p - 1);
      if (p + 1 < N_) ER_.row(i) -= V_.row(p + 1);
    }
    const Matrix WtU = Wt.transpose() * d.U;
    G_ = WtU * d.PtU_inv;
    E_.resize(2 * m, r_);
    E_ << EL_, ER_;
  }
  const bool deim = treatment_ == NonlinearTreatment::deim && k_n_ != 0.0;
  const Index nu = B_r_.cols();
  DKG_.resize(r_, 2 * r_ + nu + (deim ? G_.cols() : 0));
  DKG_.leftCols(r_) = -D_r_;
  DKG_.middleCols(r_, r_) = -K_r_;
  DKG_.middleCols(2 * r_, nu) = B_r_;
  if (deim) DKG_.rightCols(G_.cols()) = -G_;
  observes_velocity_ = !Cv_r_.isZero(0.0);
}

Index ReducedChainModel::nonlinear_storage() const {
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

void ReducedChainModel::nonlinear_force(const Eigen::Ref<const Vector>& q, Vector& g_r) const {
  require(q.size() == r_, "reduced chain: q_r has size ", q.size(), ", expected r = ", r_);
  g_r.resize(r_);
  if (k_n_ == 0.0) {
    g_r.setZero();
    return;
  }
  switch (treatment_) {
    case NonlinearTreatment::full: {
      // g = k_n Delta^T e^3, e = Delta V q_r: (Delta^T x)_i = x_i - x_{i+1}.
      const Vector qf = V_ * q;
      const Vector e3 = spring_differences(qf).array().cube().matrix();
      const Vector g = k_n_ * (e3.head(N_) - e3.tail(N_));
      g_r.noalias() = W().transpose() * g;
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
      // g_p = k_n (el^3 + er^3), el = q_p - q_{p-1}, er = q_p - q_{p+1}, as in the chain.
      const Vector el = EL_ * q, er = ER_ * q;
      const Vector gP = k_n_ * (el.array().cube() + er.array().cube()).matrix();
      g_r.noalias() = G_ * gP;
      break;
    }
    case NonlinearTreatment::ecsw:  // refused by the constructor
      break;
  }
}

Matrix ReducedChainModel::nonlinear_jacobian(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == r_, "reduced chain: q_r has size ", q.size(), ", expected r = ", r_);
  Matrix J = Matrix::Zero(r_, r_);
  if (k_n_ == 0.0) return J;
  switch (treatment_) {
    case NonlinearTreatment::full: {
      // W^T Delta^T diag(3 k_n e^2) Delta V, e = Delta V q_r.
      const Vector qf = V_ * q;
      const Vector ks = 3.0 * k_n_ * spring_differences(qf).array().square().matrix();
      const Matrix X = ks.asDiagonal() * spring_differences(V_);
      const Matrix JV = X.topRows(N_) - X.bottomRows(N_);
      J.noalias() = W().transpose() * JV;
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

void ReducedChainModel::add_nonlinear_jacobian(const Vector& q, double c, Matrix& S,
                                               Matrix& scratch) const {
  require(q.size() == r_ && S.rows() == r_ && S.cols() == r_, "reduced chain: q_r has size ",
          q.size(), " and S is ", S.rows(), " x ", S.cols(), ", expected r = ", r_);
  if (k_n_ == 0.0) return;
  if (treatment_ != NonlinearTreatment::deim) {
    S.noalias() += c * nonlinear_jacobian(q);
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

Vector ReducedChainModel::project(const Eigen::Ref<const Vector>& q) const {
  require(q.size() == N_, "reduced chain: the full state has size ", q.size(),
          ", expected N = ", N_);
  const Vector Wtq = W().transpose() * q;
  return WtV_lu_.solve(Wtq);
}

}  // namespace mor
