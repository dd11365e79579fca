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

namespace detail {
/// run_abandonable's threads that have not ended yet, abandoned ones included.
inline std::atomic<int> abandonable_threads{0};
}  // namespace detail

/// Runs f() on a thread of its own and waits for its result, polling the stop request every
/// 20 ms: on a stop it throws Interrupted at once and leaves the thread to finish alone
/// (detached; its result is discarded when it ends). For the long calls into code that cannot
/// poll (a dense SVD or eigensolver: seconds on a few thousand columns), so that SIGINT stops
/// them within a second. f must own everything it reads (capture by value or move): the
/// caller's frames unwind while it runs. Exceptions of f are rethrown here.
/// A process must not run its exit handlers while such a thread may still be inside OpenBLAS:
/// OpenBLAS's handler (0.3.21, blas_thread_shutdown_) then can wait forever for its worker
/// threads (seen: the POD stop test hung at exit in 4 of 25 runs). See abandoned_threads_running.
template <class F>
auto run_abandonable(const char* what, F f, const std::atomic<bool>* local = nullptr)
    -> decltype(f()) {
  using Result = decltype(f());
  throw_if_stop_requested(what, local);
  std::packaged_task<Result()> task(std::move(f));
  std::future<Result> result = task.get_future();
  ++detail::abandonable_threads;
  try {
    std::thread([task = std::move(task)]() mutable {
      task();
      --detail::abandonable_threads;
    }).detach();
  } catch (...) {
    --detail::abandonable_threads;
    throw;
  }
  while (result.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
    throw_if_stop_requested(what, local);
  return result.get();
}

/// Whether a thread of run_abandonable (one a stop abandoned) is still running. The `mor`
/// program then ends with std::_Exit once its output is flushed, skipping the exit handlers.
inline bool abandoned_threads_running() noexcept {
  return detail::abandonable_threads.load() > 0;
}

/// Waits until every thread of run_abandonable has ended (an abandoned call runs to its end:
/// seconds at most), for processes that must run their exit handlers (the Python module, tests).
inline void wait_for_abandoned_threads() {
  while (abandoned_threads_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

}  // namespace mor
