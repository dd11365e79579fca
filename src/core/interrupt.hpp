// SPDX-License-Identifier: GPL-3.0-or-later
// The process-wide stop request: the `mor` program's SIGINT/SIGTERM handler sets it, and every
// long loop (integrator steps, LR-ADI and RKSM iterations, POD and empirical-Gramian training,
// the reductions' stages) polls it, besides any flag handed to it in its options, and throws
// mor::Interrupted. A loop reached through code that hands no flag down still stops within one
// of its iterations. Library users that never set it see no change.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <utility>

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

/// Runs f() on a thread of its own and waits for its result, polling the stop request every
/// 20 ms: on a stop it throws Interrupted at once and leaves the thread to finish alone
/// (detached; its result is discarded when it ends). For the long calls into code that cannot
/// poll (a dense SVD or eigensolver: seconds on a few thousand columns), so that SIGINT stops
/// them within a second. f must own everything it reads (capture by value or move): the
/// caller's frames unwind while it runs. Exceptions of f are rethrown here.
template <class F>
auto run_abandonable(const char* what, F f, const std::atomic<bool>* local = nullptr)
    -> decltype(f()) {
  using Result = decltype(f());
  throw_if_stop_requested(what, local);
  std::packaged_task<Result()> task(std::move(f));
  std::future<Result> result = task.get_future();
  std::thread(std::move(task)).detach();
  while (result.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
    throw_if_stop_requested(what, local);
  return result.get();
}

}  // namespace mor
