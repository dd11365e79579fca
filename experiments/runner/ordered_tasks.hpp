// SPDX-License-Identifier: GPL-3.0-or-later
// Independent tasks (a parametric training's full runs, the linear methods' local reductions)
// run on several threads and, under mpirun, on the other ranks (training_ranks.hpp), their
// results consumed in the order of the tasks on the calling thread: what is built from them
// does not depend on the number of threads or ranks (`mor run --jobs`,
// docs/methods/parametric.md). Each task builds its own model (constant data) and workspace;
// BLAS keeps to one thread per task while several run.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "experiments/runner/training_ranks.hpp"
#include "src/core/types.hpp"
#include "src/linalg/blas.hpp"

namespace mor::experiments {

/// The threads `mor run --jobs J` asks for: J, or for J = 0 the cores.
inline int resolve_jobs(int jobs) {
  if (jobs > 0) return jobs;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// How a task travels to another rank and its result back (the same task function runs there).
template <class Result>
struct RemoteCodec {
  RemoteTask kind;
  std::function<Bytes(Index t)> encode;
  std::function<Result(Bytes&)> decode;
};

/// Runs task(t) for t = 0 .. count-1, `jobs` at once on threads (jobs <= 1 and no other rank:
/// one after the other on this thread) and, with `remote` and other ranks under mpirun, one at
/// a time on each of them; calls consume(t, result) on this thread for t = 0, 1, ... in that
/// order as each is done. No task starts more than twice the slots ahead of the consumer. The
/// first exception (of the task of the lowest t, or of consume) stops further tasks from
/// starting and is rethrown here once the running ones have ended.
template <class Result>
void run_tasks_in_order(Index count, int jobs, const std::function<Result(Index)>& task,
                        const std::function<void(Index, Result&&)>& consume,
                        const std::optional<RemoteCodec<Result>>& remote = std::nullopt) {
  TrainingRanks* ranks = remote ? TrainingRanks::current() : nullptr;
  const int servers = ranks != nullptr ? ranks->size() - 1 : 0;
  if ((jobs <= 1 && servers == 0) || count <= 1) {
    for (Index t = 0; t < count; ++t) consume(t, task(t));
    return;
  }
  const int threads = static_cast<int>(std::min<Index>(std::max(jobs, 1), count));
  std::mutex m;
  std::condition_variable changed;
  Index next_task = 0, next_consumed = 0;
  std::map<Index, Result> done;
  std::map<Index, std::exception_ptr> failed;
  bool abort = false;
  const Index ahead = 2 * static_cast<Index>(threads + servers);
  auto may_start = [&] { return next_task < count && next_task < next_consumed + ahead; };
  auto work = [&] {
    for (;;) {
      Index t;
      {
        std::unique_lock<std::mutex> lock(m);
        changed.wait(lock, [&] { return abort || next_task >= count || may_start(); });
        if (abort || next_task >= count) return;
        t = next_task++;
      }
      try {
        Result r = task(t);
        std::lock_guard<std::mutex> lock(m);
        done.emplace(t, std::move(r));
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        failed.emplace(t, std::current_exception());
        abort = true;
      }
      changed.notify_all();
    }
  };
  const int blas_threads = blas::threads();
  blas::set_threads(1);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(work);
  std::vector<int> idle;  // ranks without a task
  for (int r = 1; r <= servers; ++r) idle.push_back(r);
  Index out_remote = 0;  // tasks out on other ranks
  for (;;) {
    // Tasks to idle ranks (MPI from this thread only); their results as they arrive.
    if (servers > 0) {
      for (;;) {
        Index t = 0;
        {
          std::lock_guard<std::mutex> lock(m);
          if (abort || idle.empty() || !may_start()) break;
          t = next_task++;
        }
        try {
          ranks->send_task(idle.back(), remote->kind, t, remote->encode(t));
          idle.pop_back();
          ++out_remote;
        } catch (...) {
          std::lock_guard<std::mutex> lock(m);
          failed.emplace(t, std::current_exception());
          abort = true;
        }
      }
      int rank = 0;
      Index t = 0;
      Bytes bytes;
      for (;;) {
        try {
          if (!ranks->poll_result(rank, t, bytes)) break;
          Result r = remote->decode(bytes);
          std::lock_guard<std::mutex> lock(m);
          done.emplace(t, std::move(r));
        } catch (...) {
          std::lock_guard<std::mutex> lock(m);
          failed.emplace(t, std::current_exception());
          abort = true;
        }
        idle.push_back(rank);
        --out_remote;
        changed.notify_all();
      }
    }
    std::optional<Result> r;
    Index t = 0;
    {
      std::unique_lock<std::mutex> lock(m);
      auto ready = [&] { return abort || next_consumed >= count || done.count(next_consumed) > 0; };
      if (servers > 0)
        changed.wait_for(lock, std::chrono::milliseconds(2), ready);
      else
        changed.wait(lock, ready);
      if (abort || next_consumed >= count) {
        if (out_remote == 0) break;
        continue;  // the ranks' tasks are awaited (their answers keep the protocol in step)
      }
      if (done.count(next_consumed) == 0) continue;
      auto it = done.find(next_consumed);
      t = it->first;
      r.emplace(std::move(it->second));
      done.erase(it);
    }
    try {
      consume(t, std::move(*r));
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      failed.emplace(-1, std::current_exception());
      abort = true;
    }
    {
      std::lock_guard<std::mutex> lock(m);
      ++next_consumed;
    }
    changed.notify_all();
  }
  for (auto& th : pool) th.join();
  blas::set_threads(std::max(1, blas_threads));
  if (!failed.empty()) std::rethrow_exception(failed.begin()->second);
}

}  // namespace mor::experiments
