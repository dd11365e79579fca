// SPDX-License-Identifier: GPL-3.0-or-later
// Input signals against properties that do not restate their formulas: zero-crossing counts
// (frequency), Parseval (power of a multisine), seed reproducibility, interpolation at and
// between table nodes, and errors that name the file, line and value.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <vector>

#include "src/core/errors.hpp"
#include "src/signals/signal.hpp"
#include "support/temp_dir.hpp"

namespace mor {
namespace {

namespace fs = std::filesystem;

double at(const Signal& s, double t) {
  Vector u(s.size());
  s.evaluate(t, u);
  return u(0);
}

/// Sign changes of s on [t0, t1] sampled at dt.
int zero_crossings(const Signal& s, double t0, double t1, double dt) {
  int count = 0;
  double previous = at(s, t0);
  for (double t = t0 + dt; t <= t1; t += dt) {
    const double now = at(s, t);
    if ((previous < 0.0) != (now < 0.0)) ++count;
    previous = now;
  }
  return count;
}

TEST(Signals, SineHasItsFrequencyAmplitudeAndOffset) {
  const auto s = make_sine_signal(3, 2.5, 0.2, 0.3, 0.0);
  EXPECT_EQ(s->size(), 3);
  Vector u(3);
  s->evaluate(1.7, u);
  EXPECT_EQ(u(0), u(2)) << "one waveform drives every input";
  // 0.2 Hz over 50 s: 10 periods, 20 crossings.
  EXPECT_EQ(zero_crossings(*s, 0.0, 50.0, 1e-3), 20);
  double peak = 0.0;
  for (double t = 0.0; t < 5.0; t += 1e-4) peak = std::max(peak, std::abs(at(*s, t)));
  EXPECT_NEAR(peak, 2.5, 1e-6);
}

TEST(Signals, ChirpSweepsItsFrequencyContinuously) {
  // Mean frequency (f0 + f1)/2 over [0, t1]: (0.1 + 0.5)/2 * 100 = 30 periods, 60 crossings.
  const auto s = make_chirp_signal(1, 1.0, 0.1, 0.5, 100.0);
  EXPECT_NEAR(zero_crossings(*s, 0.0, 100.0, 1e-3), 60, 1);
  // The last 10 s before t1 run near f1 = 0.5 Hz (0.48 on average): about 9.6 crossings.
  EXPECT_NEAR(zero_crossings(*s, 90.0, 100.0, 1e-3), 9.6, 1.0);
  // After t1 the sweep holds f1 without a jump in phase.
  EXPECT_NEAR(at(*s, 100.0 - 1e-9), at(*s, 100.0 + 1e-9), 1e-7);
  EXPECT_EQ(zero_crossings(*s, 100.0, 120.0, 1e-3), 20);
}

TEST(Signals, MultisineIsReproducibleAndHasParsevalPower) {
  const std::vector<double> f = {0.1, 0.3, 0.7, 1.1};
  const auto a = make_multisine_signal(1, 2.0, f, 42), b = make_multisine_signal(1, 2.0, f, 42),
             c = make_multisine_signal(1, 2.0, f, 43);
  double diff_same = 0.0, diff_other = 0.0, power = 0.0;
  const double T = 100.0, dt = 1e-3;  // whole periods of every component
  for (double t = 0.0; t < T; t += dt) {
    diff_same = std::max(diff_same, std::abs(at(*a, t) - at(*b, t)));
    diff_other = std::max(diff_other, std::abs(at(*a, t) - at(*c, t)));
    power += at(*a, t) * at(*a, t) * dt;
  }
  EXPECT_EQ(diff_same, 0.0);
  EXPECT_GT(diff_other, 0.1);
  // Distinct frequencies: mean power = sum of (amplitude / sqrt(K))^2 / 2 = amplitude^2 / 2.
  EXPECT_NEAR(power / T, 2.0, 1e-3);
}

TEST(Signals, StepSwitchesOnAtItsTime) {
  const auto s = make_step_signal(1, -3.0, 2.0);
  EXPECT_EQ(at(*s, 1.999), 0.0);
  EXPECT_EQ(at(*s, 2.0), -3.0);
  EXPECT_EQ(at(*s, 50.0), -3.0);
  EXPECT_EQ(at(*make_zero_signal(2), 5.0), 0.0);
  // Its jump is where an error-controlled integrator restarts; continuous signals have none.
  EXPECT_EQ(s->discontinuities(), std::vector<double>{2.0});
  EXPECT_TRUE(make_step_signal(1, 0.0, 2.0)->discontinuities().empty());  // no jump at all
  EXPECT_TRUE(make_sine_signal(1, 1.0, 0.5)->discontinuities().empty());
  EXPECT_TRUE(make_chirp_signal(1, 1.0, 0.1, 1.0, 3.0)->discontinuities().empty());
}

class TableSignal : public testing::TempDirTest {
 protected:
  fs::path write(const std::string& text) {
    const fs::path p = dir_ / "u.txt";
    std::ofstream(p) << text;
    return p;
  }
  std::string error_of(Index m, const std::string& text) {
    try {
      make_table_signal(m, write(text));
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(TableSignal, InterpolatesLinearlyAndHoldsTheEnds) {
  const auto s = make_table_signal(2, write("# t u1 u2\n0 0 10\n1.0, 2.0, 20\n\n3\t-2\t40\n"));
  Vector u(2);
  s->evaluate(0.5, u);
  EXPECT_DOUBLE_EQ(u(0), 1.0);
  EXPECT_DOUBLE_EQ(u(1), 15.0);
  s->evaluate(2.0, u);
  EXPECT_DOUBLE_EQ(u(0), 0.0);
  EXPECT_DOUBLE_EQ(u(1), 30.0);
  s->evaluate(1.0, u);
  EXPECT_DOUBLE_EQ(u(0), 2.0);
  s->evaluate(-5.0, u);
  EXPECT_DOUBLE_EQ(u(0), 0.0);
  s->evaluate(99.0, u);
  EXPECT_DOUBLE_EQ(u(1), 40.0);
  // One column drives every input.
  const auto b = make_table_signal(3, write("0 1\n2 3\n"));
  Vector w(3);
  b->evaluate(1.0, w);
  EXPECT_TRUE((w.array() == 2.0).all());
  // m = 0: as many channels as the table has value columns.
  const auto own = make_table_signal(0, write("0 0 10\n2 4 30\n"));
  ASSERT_EQ(own->size(), 2);
  own->evaluate(1.0, u);
  EXPECT_DOUBLE_EQ(u(0), 2.0);
  EXPECT_DOUBLE_EQ(u(1), 20.0);
}

TEST_F(TableSignal, BadTablesNameFileLineAndValue) {
  EXPECT_NE(error_of(1, "0 1\n1 abc\n").find("line 2: 'abc' is not a finite number"),
            std::string::npos);
  EXPECT_NE(error_of(1, "0 1\n0 2\n").find("line 2: time 0 does not increase"), std::string::npos);
  EXPECT_NE(error_of(1, "0 1\n1 2 3\n").find("line 2: 3 columns where earlier lines have 2"),
            std::string::npos);
  EXPECT_NE(error_of(3, "0 1 2\n").find("has 2 value columns; the model has 3 input(s)"),
            std::string::npos);
  EXPECT_NE(error_of(1, "# nothing\n").find("has no data rows"), std::string::npos);
  EXPECT_NE(error_of(1, "0 nan\n").find("'nan' is not a finite number"), std::string::npos);
  EXPECT_THROW(make_table_signal(1, dir_ / "missing.txt"), IoError);
}

TEST(Signals, BadParametersAreNamed) {
  EXPECT_THROW(make_sine_signal(1, 1.0, -0.1), InvalidArgument);
  EXPECT_THROW(make_sine_signal(1, std::nan(""), 0.1), InvalidArgument);
  EXPECT_THROW(make_chirp_signal(1, 1.0, 0.1, 0.2, 0.0), InvalidArgument);
  EXPECT_THROW(make_multisine_signal(1, 1.0, {}, 1), InvalidArgument);
  EXPECT_THROW(make_zero_signal(0), InvalidArgument);
}

}  // namespace
}  // namespace mor
