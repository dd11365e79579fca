// SPDX-License-Identifier: GPL-3.0-or-later
// Measure "energy": the stored energy of the full model (kinetic plus potential, E = 1/2 v^T M v
// + 1/2 q^T K q + the nonlinear elements' potentials; a multibody benchmark's own) at every
// snapshot of the full run, /snapshots/energy, for a model that defines one. A snapshot measure:
// it registers what it does at each snapshot before the full run starts.
#include "experiments/runner/measure.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/results_layout.hpp"

namespace mor::experiments {
namespace {

struct EnergyKeys {
  bool energy = true;
  template <class V>
  void visit_keys(V& v) {
    v(Key{"energy", "",
          "record the full model's stored energy at every snapshot (/snapshots/energy), when "
          "snapshots are taken and the model defines an energy"},
      energy);
  }
  void check(const TableReader&) const {}
  bool requested() const { return energy; }
  double estimate_seconds(double) const { return 0.0; }
  std::string progress_text() const { return "energies"; }
};

void run_energy(const EnergyKeys&, MeasureContext& m) {
  SnapshotHooks& h = *m.snapshots;
  const FullModel& model = h.model;
  const Index n = model.n();
  if (!model.energy(Vector::Zero(n), Vector::Zero(n))) return;  // the model defines none
  io::RowStream& stream = h.writer.open_row_stream(layout::kSnapshotsEnergy, 1, 0);
  h.observers.emplace_back([&stream, &model](double, const Vector& q, const Vector& v) {
    const double e = *model.energy(q, v);
    stream.append(&e);
  });
}

}  // namespace

extern const MeasureInfo kEnergyMeasure;
using EnergyMeasure = KeyedMeasure<EnergyKeys, kEnergyMeasure, &run_energy>;
extern const MeasureInfo kEnergyMeasure{
    "energy",
    "the full model's stored energy at every snapshot (/snapshots/energy), for models that "
    "define one (the chain, networks, the lattice, the multibody benchmarks)",
    AppliesTo::snapshots,
    {},
    {},
    &EnergyMeasure::read,
    &EnergyMeasure::keys};

}  // namespace mor::experiments
