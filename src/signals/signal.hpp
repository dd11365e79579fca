// SPDX-License-Identifier: GPL-3.0-or-later
// Input signals u(t) in R^m for time integration. The kind of signal is chosen at run time (an
// experiment file), so Signal is a virtual seam; evaluating it is cheap next to a time step.
//
// Every waveform below is scalar and drives all m inputs alike, except a table, which may give
// one column per input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "src/core/types.hpp"

namespace mor {

class Signal {
 public:
  virtual ~Signal() = default;
  /// Number of inputs m.
  virtual Index size() const = 0;
  /// u = u(t); u.size() == size().
  virtual void evaluate(double t, Eigen::Ref<Vector> u) const = 0;
  /// One line for logs and results files, e.g. "sine(amplitude=1, frequency=0.05 Hz, phase=0)".
  virtual std::string describe() const = 0;
  /// Times where u jumps (a step's t_on), ascending: an integrator with error control
  /// restarts there (CvodeOptions::discontinuities). A table's rows are kinks, not jumps.
  virtual std::vector<double> discontinuities() const { return {}; }
};

/// u(t) = 0.
std::unique_ptr<Signal> make_zero_signal(Index m);
/// u(t) = amplitude for t >= t_on, 0 before.
std::unique_ptr<Signal> make_step_signal(Index m, double amplitude, double t_on = 0.0);
/// u(t) = amplitude sin(2 pi frequency t + phase) + offset; frequency in Hz, phase in rad.
std::unique_ptr<Signal> make_sine_signal(Index m, double amplitude, double frequency,
                                         double phase = 0.0, double offset = 0.0);
/// Linear chirp: u(t) = amplitude sin(2 pi (f0 t + (f1 - f0) t^2 / (2 t1))) for t <= t1, the
/// instantaneous frequency sweeping f0 -> f1 Hz over [0, t1]; after t1 the sweep continues at f1.
std::unique_ptr<Signal> make_chirp_signal(Index m, double amplitude, double f0, double f1,
                                          double t1);
/// Random-phase multisine (Schroeder-free, seeded): u(t) = amplitude / sqrt(K) *
/// sum_k sin(2 pi f_k t + phi_k), phases phi_k uniform in [0, 2 pi) drawn from a 64-bit Mersenne
/// twister seeded with `seed`, so a seed reproduces the signal on every machine.
std::unique_ptr<Signal> make_multisine_signal(Index m, double amplitude,
                                              std::vector<double> frequencies, std::uint64_t seed);
/// Table from a text file: one row per time, columns t u_1 ... u_k separated by spaces, tabs or
/// commas; lines starting with '#' are comments. t strictly increasing; k == 1 (broadcast to
/// all m inputs) or k == m; m = 0 takes m = k (the table's own channels, e.g. to evaluate it
/// without a model). Linear interpolation inside, the end values held outside. The first time
/// is <= 0 (runs start at t = 0: a table starting later would leave the input before it made up).
/// @throws IoError if the file cannot be read; InvalidArgument naming file, line and value for
///         malformed rows, non-increasing t, a first t > 0, or a column count that fits neither 1
///         nor m.
std::unique_ptr<Signal> make_table_signal(Index m, const std::filesystem::path& file);

}  // namespace mor
