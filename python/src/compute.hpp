// SPDX-License-Identifier: GPL-3.0-or-later
// The computations behind mor.reduce, mor.simulate, the norms, mor.run and mor.sweep
// (python/src/compute.cpp); the module (python/src/module.cpp) binds them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.hpp"

namespace mor::python {

/// The model reduced by the registered method `method`, its keys read from `keys` as a
/// [reduction] table; `experiment` holds further tables (training, simulation) for the methods
/// that train on simulations of the chain.
std::shared_ptr<Model> reduce(const std::shared_ptr<Model>& model, const std::string& method,
                              const py::dict& keys, const py::dict& experiment);
/// Sets rom's system, dense matrices and spec to a linear reduced model (first: its first-order
/// matrices E, A, B, C, D; else its second-order M, D, K, B, Cp, Cv).
void set_linear_rom(Model& rom, const experiments::ReducedModel& reduced, bool first);
double h2_norm(const Model& m, Index dense_limit);
/// ||G - G_r||_H2, absolute.
double h2_error(const Model& m, const Model& rom, Index dense_limit);
/// (||G||_Hinf, a frequency where it is attained).
std::pair<double, double> hinf_norm(const Model& m, Index dense_limit, double w_min, double w_max,
                                    Index n_grid);
Vector sigma(const Model& m, const Vector& omega);
ComplexMatrix transfer(const Model& m, Complex s);
/// (t, y) of a run from rest: t (k), y (k x p) at t0 and every stride-th step; with snapshots
/// (t, y, x), x (k x n_x) the state at the same times: x of a first-order model, [q v] of a
/// second-order one, the reduced coordinates [q_r v_r] of a projected nonlinear model. The run's
/// guards (experiments::check_run: at most max_steps steps, the memory budget) before anything is
/// built.
py::tuple simulate(const std::shared_ptr<Model>& model, py::object u, double t_end, double dt,
                   const std::string& integrator, double t0, Index stride, bool snapshots,
                   Index max_steps);
/// Runs an experiment file; returns the results file's path. progress (or None) is called as
/// progress(stage, fraction) when the run enters a stage and during the full simulation.
std::string run_file(const std::string& path, const std::vector<std::string>& overrides,
                     const std::string& output, py::object progress);
/// Runs a sweep file; returns the merged results file's path.
std::string sweep_file(const std::string& path, const std::vector<std::string>& overrides, int jobs,
                       const std::string& program);

}  // namespace mor::python
