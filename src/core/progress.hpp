// SPDX-License-Identifier: GPL-3.0-or-later
// Progress of long runs on stderr: steps done, rate, time left. Redrawn at most every 0.5 s, and
// only when enabled (the `mor` program enables it for runs expected to take a while).
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "src/core/types.hpp"

namespace mor {

/// Whether stages deep inside a run (training runs, reduced runs, Gramians) draw progress: set by
/// the program for the duration of one run through ProgressScope; off otherwise (tests, sweeps'
/// workers, library use).
inline std::atomic<bool> g_progress_enabled{false};

/// Turns g_progress_enabled on or off for its lifetime, then restores it.
class ProgressScope {
 public:
  explicit ProgressScope(bool enabled) : previous_(g_progress_enabled.exchange(enabled)) {}
  ~ProgressScope() { g_progress_enabled.store(previous_); }
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  bool previous_;
};

/// One line on stderr for a stage without a step count (e.g. "Gramians ..."), when enabled.
inline void progress_note(const std::string& text) {
  if (!g_progress_enabled.load()) return;
  std::fprintf(stderr, "%s\n", text.c_str());
  std::fflush(stderr);
}

/// Progress of an iteration that stops when a residual falls below a tolerance (LR-ADI, RKSM):
/// the step, the residual against the tolerance, and the time left extrapolated from the
/// residual's geometric decay since the first step. Draws only while g_progress_enabled, at most
/// every 0.5 s, on stderr.
class ResidualProgress {
 public:
  ResidualProgress(std::string label, double tolerance)
      : label_(std::move(label)), tolerance_(tolerance), enabled_(g_progress_enabled.load()) {}
  ~ResidualProgress() { finish(); }
  ResidualProgress(const ResidualProgress&) = delete;
  ResidualProgress& operator=(const ResidualProgress&) = delete;

  void update(Index step, double residual) {
    if (!enabled_ || !(residual > 0) || !std::isfinite(residual)) return;
    const auto now = Clock::now();
    if (first_step_ < 0) {
      first_step_ = step;
      first_residual_ = residual;
      first_time_ = now;
    }
    if (now - last_draw_ < std::chrono::milliseconds(500)) return;
    last_draw_ = now;
    std::fprintf(stderr, "\r%s: step %lld, residual %.2e (stops at %.0e)", label_.c_str(),
                 static_cast<long long>(step), residual, tolerance_);
    const double steps = static_cast<double>(step - first_step_);
    const double decay = steps > 0 ? std::log(residual / first_residual_) / steps : 0.0;
    if (decay < 0 && residual > tolerance_) {
      const double per_step = std::chrono::duration<double>(now - first_time_).count() / steps;
      std::fprintf(stderr, ", about %.1f s left",
                   std::log(tolerance_ / residual) / decay * per_step);
    }
    std::fprintf(stderr, "   ");
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fprintf(stderr, "\n");
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  double tolerance_;
  bool enabled_;
  Index first_step_ = -1;
  double first_residual_ = 0;
  Clock::time_point first_time_, last_draw_ = Clock::now();
  bool drawn_ = false;
};

class ProgressReporter {
 public:
  /// `on_fraction`, if set, is called with done / total at the same moments a line would be
  /// drawn (at most every 0.5 s), whether or not drawing is enabled: `mor sweep` relays it.
  ProgressReporter(std::string label, bool enabled, std::FILE* stream = stderr,
                   std::function<void(double)> on_fraction = {})
      : label_(std::move(label)),
        enabled_(enabled),
        stream_(stream),
        on_fraction_(std::move(on_fraction)) {}
  ~ProgressReporter() { finish(); }
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  /// Cheap enough to call every step: reads the clock only every 64 calls.
  void update(Index done, Index total) {
    if ((!enabled_ && !on_fraction_) || (++calls_ & 63) != 0) return;
    const auto now = Clock::now();
    if (now - last_draw_ < std::chrono::milliseconds(500)) return;
    last_draw_ = now;
    if (on_fraction_)
      on_fraction_(total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
    std::fprintf(stream_, "\r%s: step %lld/%lld (%3.0f%%), %.0f steps/s, %.1f s left   ",
                 label_.c_str(), static_cast<long long>(done), static_cast<long long>(total),
                 total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                 rate, left);
    std::fflush(stream_);
    drawn_ = true;
  }
  /// Ends the progress line (if one was drawn).
  void finish() {
    if (drawn_) std::fprintf(stream_, "\n");
    drawn_ = false;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string label_;
  bool enabled_;
  std::FILE* stream_;
  std::function<void(double)> on_fraction_;
  Clock::time_point start_ = Clock::now(), last_draw_ = Clock::now();
  unsigned calls_ = 0;
  bool drawn_ = false;
};

}  // namespace mor
