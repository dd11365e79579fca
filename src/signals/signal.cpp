// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/signals/signal.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <random>
#include <sstream>

#include "src/core/errors.hpp"
#include "src/io/input_file.hpp"

namespace mor {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

void require_finite(double value, const char* what) {
  require(std::isfinite(value), "signal parameter ", what, " must be finite, got ", value);
}

/// A scalar waveform broadcast to every input.
template <class Wave>
class BroadcastSignal final : public Signal {
 public:
  BroadcastSignal(Index m, Wave wave, std::string description, std::vector<double> jumps)
      : m_(m),
        wave_(std::move(wave)),
        description_(std::move(description)),
        jumps_(std::move(jumps)) {
    require(m >= 1, "a signal needs at least one input, got m = ", m);
  }
  Index size() const override { return m_; }
  void evaluate(double t, Eigen::Ref<Vector> u) const override { u.setConstant(wave_(t)); }
  std::string describe() const override { return description_; }
  std::vector<double> discontinuities() const override { return jumps_; }

 private:
  Index m_;
  Wave wave_;
  std::string description_;
  std::vector<double> jumps_;
};

template <class Wave>
std::unique_ptr<Signal> broadcast(Index m, Wave wave, std::string description,
                                  std::vector<double> jumps = {}) {
  return std::make_unique<BroadcastSignal<Wave>>(m, std::move(wave), std::move(description),
                                                 std::move(jumps));
}

class TableSignal final : public Signal {
 public:
  TableSignal(Index m, std::vector<double> t, Matrix values, std::string description)
      : m_(m), t_(std::move(t)), values_(std::move(values)), description_(std::move(description)) {}
  Index size() const override { return m_; }
  void evaluate(double t, Eigen::Ref<Vector> u) const override {
    const Index k = values_.rows();
    Vector row(k);
    if (t <= t_.front()) {
      row = values_.col(0);
    } else if (t >= t_.back()) {
      row = values_.col(values_.cols() - 1);
    } else {
      const auto it = std::upper_bound(t_.begin(), t_.end(), t);
      const Index j = static_cast<Index>(it - t_.begin());  // t_[j-1] <= t < t_[j]
      const double w = (t - t_[j - 1]) / (t_[j] - t_[j - 1]);
      row = (1.0 - w) * values_.col(j - 1) + w * values_.col(j);
    }
    if (k == 1)
      u.setConstant(row(0));
    else
      u = row;
  }
  std::string describe() const override { return description_; }

 private:
  Index m_;
  std::vector<double> t_;
  Matrix values_;  // k x rows, one column per time
  std::string description_;
};

}  // namespace

std::unique_ptr<Signal> make_zero_signal(Index m) {
  return broadcast(
      m, [](double) { return 0.0; }, "zero");
}

std::unique_ptr<Signal> make_step_signal(Index m, double amplitude, double t_on) {
  require_finite(amplitude, "amplitude");
  require_finite(t_on, "t_on");
  return broadcast(
      m, [=](double t) { return t >= t_on ? amplitude : 0.0; },
      detail::concat("step(amplitude=", amplitude, ", t_on=", t_on, ")"),
      amplitude != 0.0 ? std::vector<double>{t_on} : std::vector<double>{});
}

std::unique_ptr<Signal> make_sine_signal(Index m, double amplitude, double frequency, double phase,
                                         double offset) {
  require_finite(amplitude, "amplitude");
  require_finite(frequency, "frequency");
  require_finite(phase, "phase");
  require_finite(offset, "offset");
  require(frequency >= 0.0, "sine frequency must be >= 0 Hz, got ", frequency);
  const double omega = kTwoPi * frequency;
  return broadcast(
      m, [=](double t) { return amplitude * std::sin(omega * t + phase) + offset; },
      detail::concat("sine(amplitude=", amplitude, ", frequency=", frequency, " Hz, phase=", phase,
                     ", offset=", offset, ")"));
}

std::unique_ptr<Signal> make_chirp_signal(Index m, double amplitude, double f0, double f1,
                                          double t1) {
  require_finite(amplitude, "amplitude");
  require_finite(f0, "f0");
  require_finite(f1, "f1");
  require_finite(t1, "t1");
  require(f0 >= 0.0 && f1 >= 0.0, "chirp frequencies must be >= 0 Hz, got f0 = ", f0,
          ", f1 = ", f1);
  require(t1 > 0.0, "chirp sweep time t1 must be > 0, got ", t1);
  const double rate = (f1 - f0) / t1;  // Hz per second
  // Phase is continuous at t1: after it the sweep holds frequency f1.
  const double phase_t1 = kTwoPi * (f0 * t1 + 0.5 * rate * t1 * t1);
  return broadcast(
      m,
      [=](double t) {
        if (t <= t1) return amplitude * std::sin(kTwoPi * (f0 * t + 0.5 * rate * t * t));
        return amplitude * std::sin(phase_t1 + kTwoPi * f1 * (t - t1));
      },
      detail::concat("chirp(amplitude=", amplitude, ", f0=", f0, " Hz, f1=", f1, " Hz, t1=", t1,
                     ")"));
}

std::unique_ptr<Signal> make_multisine_signal(Index m, double amplitude,
                                              std::vector<double> frequencies, std::uint64_t seed) {
  require_finite(amplitude, "amplitude");
  require(!frequencies.empty(), "a multisine needs at least one frequency");
  for (double f : frequencies) {
    require_finite(f, "frequency");
    require(f >= 0.0, "multisine frequencies must be >= 0 Hz, got ", f);
  }
  std::mt19937_64 rng(seed);
  std::vector<double> phases(frequencies.size());
  // Explicit uniform map instead of std::uniform_real_distribution: the standard leaves that
  // distribution's algorithm to the implementation, and the signal must be the same everywhere.
  for (double& phi : phases) phi = kTwoPi * (static_cast<double>(rng() >> 11) * 0x1.0p-53);
  const double scale = amplitude / std::sqrt(static_cast<double>(frequencies.size()));
  std::ostringstream desc;
  desc << "multisine(amplitude=" << amplitude << ", " << frequencies.size()
       << " frequencies, seed=" << seed << ")";
  return broadcast(
      m,
      [=](double t) {
        double s = 0.0;
        for (std::size_t k = 0; k < frequencies.size(); ++k)
          s += std::sin(kTwoPi * frequencies[k] * t + phases[k]);
        return scale * s;
      },
      desc.str());
}

std::unique_ptr<Signal> make_table_signal(Index m, const std::filesystem::path& file) {
  require(m >= 0, "a signal needs at least one input, got m = ", m);
  // Only a regular file, opened without blocking (a FIFO or /dev/zero is refused by name).
  const io::InputFile input(file, "input table");
  std::ifstream in(input.descriptor_path());
  if (!in) throw IoError(detail::concat("cannot read input table '", file.string(), "'"));
  std::vector<double> t;
  std::vector<std::vector<double>> rows;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream ls(line);
    std::vector<double> row;
    std::string token;
    while (ls >> token) {
      std::size_t used = 0;
      double value = 0.0;
      try {
        value = std::stod(token, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      require(used == token.size() && std::isfinite(value), "input table '", file.string(),
              "' line ", lineno, ": '", token, "' is not a finite number");
      row.push_back(value);
    }
    require(row.size() >= 2, "input table '", file.string(), "' line ", lineno,
            ": need a time and at least one value, got ", row.size(), " column(s)");
    if (!rows.empty())
      require(row.size() == rows.front().size() + 1, "input table '", file.string(), "' line ",
              lineno, ": ", row.size(), " columns where earlier lines have ",
              rows.front().size() + 1);
    require(t.empty() || row[0] > t.back(), "input table '", file.string(), "' line ", lineno,
            ": time ", row[0], " does not increase (previous ", t.empty() ? 0.0 : t.back(), ")");
    // Runs start at t = 0: before a later first row the input would be made up (the first value
    // held), which a recording that starts at 5 s, or one whose times are clock times, never
    // means. A table says what u is from 0 on.
    require(!t.empty() || row[0] <= 0.0, "input table '", file.string(), "' line ", lineno,
            ": the first time is ", row[0], ", after t = 0 where runs start, so the input on [0, ",
            row[0],
            ") would be made up; add a row at t = 0 with the input there (e.g. '0 0' "
            "for a quiet start), or shift the times to start at 0");
    t.push_back(row[0]);
    rows.emplace_back(row.begin() + 1, row.end());
  }
  require(!rows.empty(), "input table '", file.string(), "' has no data rows");
  const Index k = static_cast<Index>(rows.front().size());
  if (m == 0) m = k;
  require(k == 1 || k == m, "input table '", file.string(), "' has ", k,
          " value columns; the model has ", m, " input(s) (give 1 column or ", m, ")");
  Matrix values(k, static_cast<Index>(rows.size()));
  for (std::size_t j = 0; j < rows.size(); ++j)
    for (Index i = 0; i < k; ++i) values(i, static_cast<Index>(j)) = rows[j][i];
  return std::make_unique<TableSignal>(
      m, std::move(t), std::move(values),
      detail::concat("table(file=", file.string(), ", rows=", rows.size(), ")"));
}

}  // namespace mor
