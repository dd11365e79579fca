// SPDX-License-Identifier: GPL-3.0-or-later
// Wall-clock timing of the stages that results files and diagnostics report.
#pragma once

#include <chrono>

namespace mor {

using Clock = std::chrono::steady_clock;

/// Seconds elapsed since t0 on the steady clock.
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace mor
