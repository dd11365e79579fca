// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/multibody.hpp"

#include <cmath>

#include "models/bricard.hpp"
#include "models/flyball.hpp"
#include "models/pendulum.hpp"
#include "models/robot.hpp"
#include "src/core/errors.hpp"

namespace mor {

bool MultibodyModel::jacobian(double, const Vector&, Matrix&) const {
  return false;
}
bool MultibodyModel::project(double, Vector&) const {
  return false;
}
double MultibodyModel::constraint_residual(const Vector&) const {
  return 0.0;
}
bool MultibodyModel::exact_outputs(double, Vector&) const {
  return false;
}
double MultibodyModel::power(double, const Vector&) const {
  return 0.0;
}
std::vector<double> MultibodyModel::load_discontinuities() const {
  return {};
}
std::optional<MultibodyModel::LinearisationPoint> MultibodyModel::linearisation_point() const {
  return std::nullopt;
}

std::vector<std::string> multibody_model_ids() {
  return {"pendulum", "bricard", "flyball", "robot"};
}

std::unique_ptr<MultibodyModel> make_multibody_model(std::string_view id) {
  if (id == "pendulum") return std::make_unique<Pendulum>();
  if (id == "bricard") return std::make_unique<Bricard>();
  if (id == "flyball") return std::make_unique<Flyball>();
  if (id == "robot") return std::make_unique<SchiehlenRobot>();
  std::string known;
  for (const auto& k : multibody_model_ids()) known += (known.empty() ? "" : ", ") + k;
  throw InvalidArgument("unknown multibody model '" + std::string(id) + "' (known: " + known + ")");
}

MultibodyRunStats simulate_multibody(
    const MultibodyModel& model, Vector& x, const CvodeOptions& options,
    const std::function<void(double t, const Vector& x, double balance)>& observe) {
  const Index n = model.state_size();
  require(x.size() == n, model.id(), ": the state has size ", x.size(), ", expected ", n);
  // z = [x; W], W' = P: the work of the non-conservative forces, for the energy balance.
  Vector z(n + 1);
  z.head(n) = x;
  z[n] = 0.0;
  MultibodyRunStats stats;
  stats.energy_initial = model.energy(x);
  const double e0 = stats.energy_initial;

  OdeProblem problem;
  Vector xs(n), xdot(n);
  problem.rhs = [&, xs, xdot](double t, const Vector& zz, Vector& zdot) mutable {
    xs = zz.head(n);
    model.rhs(t, xs, xdot);
    zdot.resize(n + 1);
    zdot.head(n) = xdot;
    zdot[n] = model.power(t, xs);
  };
  {
    Matrix probe;
    Vector x0 = x;
    if (model.jacobian(options.t0, x0, probe)) {
      problem.jacobian = [&, xs, Jx = Matrix()](double t, const Vector& zz, Matrix& J) mutable {
        xs = zz.head(n);
        model.jacobian(t, xs, Jx);
        // The work row is left out (modified Newton): W does not feed back into x.
        J.setZero(n + 1, n + 1);
        J.topLeftCorner(n, n) = Jx;
      };
    }
    if (model.project(options.t0, x0)) {
      problem.projection = [&, xs](double t, Vector& zz) mutable {
        xs = zz.head(n);
        model.project(t, xs);
        zz.head(n) = xs;
      };
    }
  }
  CvodeOptions o = options;
  if (o.discontinuities.empty()) o.discontinuities = model.load_discontinuities();
  Vector xo(n);
  stats.cvode = integrate_cvode(problem, z, o, [&](double t, const Vector& zz) {
    xo = zz.head(n);
    if (!xo.allFinite())
      throw NumericalError(detail::concat(model.id(), ": the state is not finite at t = ", t,
                                          " s (the integration diverged)"));
    const double balance = model.energy(xo) - e0 - zz[n];
    stats.energy_balance_error = std::max(stats.energy_balance_error, std::abs(balance));
    stats.constraint_residual = std::max(stats.constraint_residual, model.constraint_residual(xo));
    if (observe) observe(t, xo, balance);
  });
  x = z.head(n);
  return stats;
}

}  // namespace mor
