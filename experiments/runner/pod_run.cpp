// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/pod_run.hpp"

#include <algorithm>
#include <chrono>

#include "reduction/deim.hpp"
#include "reduction/pod.hpp"
#include "src/core/errors.hpp"
#include "src/core/timing.hpp"

namespace mor::experiments {
namespace {

using detail::concat;
/// Snapshot columns appended into spare capacity (geometric growth).
class SnapshotBuffer {
 public:
  explicit SnapshotBuffer(Index n) : X_(n, 0) {}
  void append(const Vector& x) {
    if (used_ == X_.cols())
      X_.conservativeResize(Eigen::NoChange, std::max<Index>(64, X_.cols() + X_.cols() / 2));
    X_.col(used_++) = x;
  }
  template <class Block>
  void append_columns(const Block& B) {
    for (Index j = 0; j < B.cols(); ++j) append(B.col(j));
  }
  Index cols() const { return used_; }
  Matrix take() {
    X_.conservativeResize(Eigen::NoChange, used_);
    return std::move(X_);
  }

 private:
  Matrix X_;
  Index used_ = 0;
};

}  // namespace

PodReduction pod_reduce_and_record(const ExperimentConfig& c, const MassSpringChain& chain,
                                   io::ResultsWriter& out, const std::atomic<bool>* stop) {
  const ReductionSpec& red = c.reduction;
  const Index N = chain.n();
  const bool nonlinear = !chain.is_linear();
  const auto t0 = Clock::now();
  PodReduction result;

  // 1. Training snapshots of q (and of the nodal cubic force g(q)).
  SnapshotBuffer Q(N), G(nonlinear ? N : 0);
  Vector g(N);
  auto add = [&](const Vector& q) {
    Q.append(q);
    if (nonlinear) {
      chain.nonlinear_force(q, g);
      G.append(g);
    }
  };
  {
    MassSpringChain::Workspace ws(chain, c.solver);
    IntegratorOptions run = c.integrator;
    run.observe_stride = red.training_stride;
    run.stop_requested = stop;
    for (std::size_t i = 0; i < c.training.size(); ++i) {
      const auto input = make_signal(c.training[i], chain.n_inputs());
      Vector q = Vector::Zero(N), v = Vector::Zero(N);
      try {
        integrate(chain, ws, *input, run, q, v,
                  [&](Index, double, const Vector& qk, const Vector&, const Vector&) { add(qk); });
      } catch (const NumericalError& e) {
        throw NumericalError(concat("training run ", i, " (", input->describe(), "): ", e.what()));
      }
    }
  }
  for (const auto& file : red.training_files) {
    const io::ResultsReader reader(file);
    require(reader.exists("/snapshots/p"), "training file '", file.string(),
            "' has no position snapshots /snapshots/p (run it with snapshot_fields "
            "containing \"p\")");
    const Matrix P = reader.read_rows_as_columns("/snapshots/p");
    require(P.rows() == N, "training file '", file.string(), "' holds snapshots of N = ", P.rows(),
            " masses, the model has N = ", N);
    for (Index j = 0; j < P.cols(); ++j) add(P.col(j));
  }
  const Matrix X = Q.take();
  require(X.cols() > 0, "reduction.method = \"pod\": the training data hold no snapshots");
  result.training_snapshots = X.cols();
  result.snapshots_s = seconds_since(t0);

  // 2. POD of the positions.
  auto t = Clock::now();
  PodOptions po;
  po.method = parse_pod_method(red.pod_method);
  if (red.order > 0)
    po.order = red.order;
  else
    po.energy = red.energy;
  const PodResult pod_q = pod(X, po);
  result.r = pod_q.r;
  result.pod_s = seconds_since(t);

  // 3. POD of the forces and DEIM (nonlinear chain, deim treatment only).
  t = Clock::now();
  ReducedChainOptions ro;
  ro.nonlinear = parse_nonlinear_treatment(red.nonlinear);
  PodResult pod_g;
  DeimResult deim_result;
  const bool use_deim = nonlinear && ro.nonlinear == NonlinearTreatment::deim;
  if (use_deim) {
    const Matrix F = G.take();
    PodOptions pg;
    pg.method = po.method;
    pg.order = red.deim_order > 0 ? red.deim_order : std::min(2 * result.r, F.cols());
    try {
      pod_g = pod(F, pg);
    } catch (const InvalidArgument&) {
      // The default m = 2 r may exceed the numerical rank of the force snapshots: it is then
      // lowered to that rank. An explicit deim_order above it stays an error.
      if (red.deim_order > 0) throw;
      pg.order.reset();
      pg.energy = 1.0;
      // Every singular value is needed now: never the randomized sketch (it would be k wide).
      pg.method = automatic_pod_method(F.rows(), F.cols(), false);
      pod_g = pod(F, pg);
    }
    deim_result = deim(pod_g.V, parse_deim_method(red.deim_method));
    ro.deim = &deim_result;
    result.m = static_cast<Index>(deim_result.indices.size());
  } else if (!nonlinear) {
    ro.nonlinear = NonlinearTreatment::full;  // g = 0: nothing to evaluate
  }
  result.deim_s = seconds_since(t);

  // 4. Galerkin projection (W = V).
  t = Clock::now();
  result.model = std::make_unique<ReducedChainModel>(chain, pod_q.V, Matrix(), ro);
  result.projection_s = seconds_since(t);
  result.seconds = seconds_since(t0);

  const std::string grp = "/reduction";
  out.create_group(grp);
  out.set_attribute(grp, "method", std::string("pod"));
  out.set_attribute(grp, "r", static_cast<std::int64_t>(result.r));
  if (red.order > 0)
    out.set_attribute(grp, "order_requested", static_cast<std::int64_t>(red.order));
  else
    out.set_attribute(grp, "energy_requested", red.energy);
  out.set_attribute(grp, "pod_method", std::string(to_string(pod_q.method_used)));
  out.set_attribute(grp, "captured_energy", pod_q.captured_energy);
  out.set_attribute(grp, "discarded_energy", pod_q.discarded_energy);
  out.set_attribute(grp, "nonlinear", std::string(to_string(ro.nonlinear)));
  out.set_attribute(grp, "training_runs", static_cast<std::int64_t>(c.training.size()));
  out.set_attribute(grp, "training_files", static_cast<std::int64_t>(red.training_files.size()));
  out.set_attribute(grp, "training_snapshots", static_cast<std::int64_t>(X.cols()));
  out.set_attribute(grp, "training_stride", static_cast<std::int64_t>(red.training_stride));
  out.set_attribute(grp, "snapshots_s", result.snapshots_s);
  out.set_attribute(grp, "pod_s", result.pod_s);
  out.set_attribute(grp, "deim_s", result.deim_s);
  out.set_attribute(grp, "projection_s", result.projection_s);
  out.set_attribute(grp, "seconds", result.seconds);
  out.write_vector(grp + "/pod_singular_values", pod_q.singular_values);
  if (use_deim) {
    out.set_attribute(grp, "m", static_cast<std::int64_t>(result.m));
    out.set_attribute(grp, "deim_method", std::string(to_string(deim_result.method)));
    out.set_attribute(grp, "deim_error_constant", deim_result.error_constant);
    out.write_vector(grp + "/force_singular_values", pod_g.singular_values);
    Vector idx(result.m);
    for (Index i = 0; i < result.m; ++i)
      idx[i] = static_cast<double>(deim_result.indices[static_cast<std::size_t>(i)]) + 1.0;
    out.write_vector(grp + "/deim_masses", idx);  // 1-based mass indices, as in [model]
  }
  if (red.store_bases) out.write_matrix(grp + "/V", pod_q.V);
  return result;
}

}  // namespace mor::experiments
