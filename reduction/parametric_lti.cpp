// SPDX-License-Identifier: GPL-3.0-or-later
#include "reduction/parametric_lti.hpp"

#include <algorithm>

#include <Eigen/QR>
#include <Eigen/SVD>

#include "src/core/errors.hpp"

namespace mor {

namespace {

/// The directions of a stack below this fraction of its largest singular value are noise.
constexpr double kGlobalBasisRankTolerance = 1e-10;

AffineOperator<Matrix> two_sided(const AffineOperator<SparseMatrix>& X, const Matrix& W,
                                 const Matrix& V) {
  return X.map([&](const SparseMatrix& Xi) { return Matrix(W.transpose() * (Xi * V)); });
}
AffineOperator<Matrix> left(const AffineOperator<SparseMatrix>& X, const Matrix& W) {
  return X.map([&](const SparseMatrix& Xi) { return Matrix(W.transpose() * Xi); });
}
AffineOperator<Matrix> right(const AffineOperator<SparseMatrix>& X, const Matrix& V) {
  return X.map([&](const SparseMatrix& Xi) { return Matrix(Xi * V); });
}

void check_bases(Index n, const Matrix& V, const Matrix& W) {
  require(V.rows() == n && V.cols() >= 1, "parametric model: V is ", V.rows(), " x ", V.cols(),
          ", the system has n = ", n);
  require(W.size() == 0 || (W.rows() == n && W.cols() == V.cols()), "parametric model: W is ",
          W.rows(), " x ", W.cols(), ", V ", V.rows(), " x ", V.cols());
}

}  // namespace

GlobalBasis global_basis(const std::vector<Matrix>& local, Index r,
                         const std::vector<Vector>& weights) {
  require(weights.empty() || weights.size() == local.size(), "global basis: ", weights.size(),
          " weight vectors for ", local.size(), " local bases");
  require(!local.empty(), "global basis: no local bases");
  require(r >= 1, "global basis: the order must be >= 1, got ", r);
  const Index n = local.front().rows();
  Index cols = 0;
  for (const Matrix& X : local) {
    require(X.rows() == n, "global basis: local bases with ", n, " and ", X.rows(), " rows");
    cols += X.cols();
  }
  Matrix S(n, cols);
  Index c = 0;
  for (std::size_t j = 0; j < local.size(); ++j) {
    const Matrix& X = local[j];
    require(weights.empty() || weights[j].size() == X.cols(),
            "global basis: ", weights.empty() ? 0 : weights[j].size(),
            " weights for a local basis of ", X.cols(), " columns");
    for (Index i = 0; i < X.cols(); ++i) {
      const double norm = X.col(i).norm();
      const double w = weights.empty() ? 1.0 : weights[j][i];
      if (!(norm > 0.0) || !(w > 0.0)) continue;
      S.col(c++) = (w / norm) * X.col(i);
    }
  }
  S.conservativeResize(n, c);
  require(c > 0, "global basis: the local bases have no nonzero column");
  Eigen::BDCSVD<Matrix> svd(S, Eigen::ComputeThinU);
  GlobalBasis g;
  g.sv = svd.singularValues();
  Index spanned = 0;
  while (spanned < g.sv.size() && g.sv[spanned] > kGlobalBasisRankTolerance * g.sv[0]) ++spanned;
  require(r <= spanned, "global basis: order ", r, " asked for, the ", local.size(),
          " local bases span ", spanned, " directions");
  g.U = svd.matrixU().leftCols(r);
  return g;
}

ParametricLtiModel::ParametricLtiModel(ParameterDomain domain,
                                       const ParametricDescriptorSystem& sys, const Matrix& V,
                                       const Matrix& W_)
    : domain_(std::move(domain)), second_order_(false), r_(V.cols()), D_ff_(sys.D_ff) {
  check_bases(sys.A.terms.at(0).value.rows(), V, W_);
  const Matrix& W = W_.size() > 0 ? W_ : V;
  terms_ = {{"E", two_sided(sys.E, W, V)},
            {"A", two_sided(sys.A, W, V)},
            {"B", left(sys.B, W)},
            {"C", right(sys.C, V)}};
}

ParametricLtiModel::ParametricLtiModel(ParameterDomain domain,
                                       const ParametricSecondOrderSystem& sys, const Matrix& V,
                                       const Matrix& W_)
    : domain_(std::move(domain)), second_order_(true), r_(V.cols()) {
  check_bases(sys.M.terms.at(0).value.rows(), V, W_);
  const Matrix& W = W_.size() > 0 ? W_ : V;
  terms_ = {{"M", two_sided(sys.M, W, V)}, {"D", two_sided(sys.D, W, V)},
            {"K", two_sided(sys.K, W, V)}, {"B", left(sys.B, W)},
            {"Cp", right(sys.Cp, V)},      {"Cv", right(sys.Cv, V)}};
  D_ff_.terms.push_back(
      {AffineCoefficient{}, Matrix::Zero(terms_[4].second.terms.at(0).value.rows(),
                                         terms_[3].second.terms.at(0).value.cols())});
}

ParametricLtiModel::ParametricLtiModel(
    ParameterDomain domain, std::vector<std::pair<std::string, AffineOperator<Matrix>>> terms,
    AffineOperator<Matrix> feedthrough)
    : domain_(std::move(domain)), terms_(std::move(terms)), D_ff_(std::move(feedthrough)) {
  const auto has = [&](const char* role) {
    return std::any_of(terms_.begin(), terms_.end(),
                       [&](const auto& t) { return t.first == role; });
  };
  second_order_ = has("M");
  const std::vector<const char*> roles =
      second_order_ ? std::vector<const char*>{"M", "D", "K", "B", "Cp", "Cv"}
                    : std::vector<const char*>{"E", "A", "B", "C"};
  for (const char* role : roles) {
    require(has(role), "parametric model: no reduced term of ", role);
    require(!term(role).terms.empty(), "parametric model: ", role, " has no terms");
  }
  r_ = term(second_order_ ? "K" : "A").terms[0].value.rows();
  const auto shape = [&](const char* role, bool rows_r, bool cols_r) {
    for (const auto& t : term(role).terms)
      require((!rows_r || t.value.rows() == r_) && (!cols_r || t.value.cols() == r_),
              "parametric model: a term of ", role, " is ", t.value.rows(), " x ", t.value.cols(),
              ", which does not fit the order ", r_);
  };
  for (const char* role : roles) {
    const std::string name(role);
    shape(role, name != "C" && name != "Cp" && name != "Cv", name != "B");
  }
  const Index m = term("B").terms[0].value.cols();
  const Index p = term(second_order_ ? "Cp" : "C").terms[0].value.rows();
  for (const char* role : {"B", second_order_ ? "Cp" : "C", second_order_ ? "Cv" : "C"}) {
    const bool input = std::string(role) == "B";
    for (const auto& t : term(role).terms)
      require(input ? t.value.cols() == m : t.value.rows() == p, "parametric model: a term of ",
              role, " is ", t.value.rows(), " x ", t.value.cols(), ", other terms have ",
              input ? m : p, input ? " columns" : " rows");
  }
  if (second_order_ || D_ff_.terms.empty()) {
    D_ff_.terms.clear();
    D_ff_.terms.push_back({AffineCoefficient{}, Matrix::Zero(p, m)});
  }
  for (const auto& t : D_ff_.terms)
    require(t.value.rows() == p && t.value.cols() == m, "parametric model: a feedthrough term is ",
            t.value.rows(), " x ", t.value.cols(), ", not ", p, " x ", m);
}

const AffineOperator<Matrix>& ParametricLtiModel::term(const char* role) const {
  for (const auto& [name, op] : terms_)
    if (name == role) return op;
  throw InvalidArgument(detail::concat("internal: parametric model without term ", role));
}

ReducedLtiAt ParametricLtiModel::at(const Vector& mu) const {
  domain_.check(mu, "parametric model");
  ReducedLtiAt out;
  if (second_order_) {
    DenseSecondOrderSystem& s = out.second_order;
    s.M = term("M").at(mu);
    s.D = term("D").at(mu);
    s.K = term("K").at(mu);
    s.B = term("B").at(mu);
    s.Cp = term("Cp").at(mu);
    s.Cv = term("Cv").at(mu);
    s.D_ff = D_ff_.at(mu);
    validate(s);
    out.first_order.reset(new DenseLtiOperator(to_first_order(s)));
  } else {
    Matrix E = term("E").at(mu), A = term("A").at(mu), B = term("B").at(mu), C = term("C").at(mu);
    Matrix D = D_ff_.at(mu);
    out.second_order = from_first_order(E, A, B, C, D);
    out.first_order = std::make_unique<DenseLtiOperator>(std::move(E), std::move(A), std::move(B),
                                                         std::move(C), std::move(D));
  }
  return out;
}

}  // namespace mor
