// SPDX-License-Identifier: GPL-3.0-or-later
// The process-wide stop request: the `mor` program's SIGINT/SIGTERM handler sets it, and every
// long loop (integrator steps, LR-ADI and RKSM iterations, POD and empirical-Gramian training,
// the reductions' stages) polls it, besides any flag handed to it in its options, and throws
// mor::Interrupted. A loop reached through code that hands no flag down still stops within one
// of its iterations. Library users that never set it see no change.
#pragma once

#include <atomic>
#include <string>

#include "src/core/errors.hpp"

namespace mor {

/// Set (only) from a signal handler or a controlling thread; lock-free, so async-signal-safe.
inline std::atomic<bool> g_stop_requested{false};

/// Whether a stop was requested, through `local` (an options' flag, may be null) or the
/// process-wide flag. Cheap: two relaxed loads.
inline bool stop_requested(const std::atomic<bool>* local = nullptr) noexcept {
  return (local != nullptr && local->load(std::memory_order_relaxed)) ||
         g_stop_requested.load(std::memory_order_relaxed);
}

/// Throws Interrupted("<what> interrupted") if stop_requested(local).
inline void throw_if_stop_requested(const char* what, const std::atomic<bool>* local = nullptr) {
  if (stop_requested(local)) throw Interrupted(std::string(what) + " interrupted");
}

}  // namespace mor
