// SPDX-License-Identifier: GPL-3.0-or-later
// `mpirun -np K mor run FILE`: rank 0 runs the experiment and alone writes its results; the
// other ranks serve its independent tasks (a parametric training's full runs, the linear
// methods' local reductions: experiments/runner/ordered_tasks.hpp), one at a time each, and
// write nothing. A task and its result travel as bytes (Bytes); the code that runs a task is the
// same on every rank and thread, so the result does not depend on where it ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/core/types.hpp"

namespace mor::experiments {

/// The fields of a task or a result, read back in the order they were put.
class Bytes {
 public:
  void put(std::int64_t x);
  void put(double x);
  void put(const Matrix& X);
  std::int64_t get_int();
  double get_double();
  Matrix get_matrix();
  std::vector<char>& data() { return data_; }
  const std::vector<char>& data() const { return data_; }

 private:
  void raw(const void* p, std::size_t n);
  void take(void* p, std::size_t n);
  std::vector<char> data_;
  std::size_t read_ = 0;
};

/// What the other ranks serve.
enum class RemoteTask : std::int64_t { training_run = 1, local_reduction = 2 };

/// MPI for the life of a `mor run` started by mpirun (Open MPI's or PMIx's variables); inactive
/// otherwise. Rank 0's, with other ranks, is current() while it lives; its destructor tells them
/// to stop.
class TrainingRanks {
 public:
  TrainingRanks();
  ~TrainingRanks();
  TrainingRanks(const TrainingRanks&) = delete;
  TrainingRanks& operator=(const TrainingRanks&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Ranks > 0: runs handler(kind, task) for each task rank 0 sends, until it says stop. A
  /// task's exception goes back to rank 0 (its kind and message), which rethrows it.
  void serve(const std::function<Bytes(RemoteTask, Bytes&)>& handler);

  /// Rank 0: task t of `kind` to `rank`.
  void send_task(int rank, RemoteTask kind, Index t, const Bytes& task);
  /// Rank 0: a result that has arrived (its rank, task and bytes), false if none has. Throws
  /// the task's exception (InvalidArgument, NumericalError, Interrupted, or std::runtime_error),
  /// after setting rank and t.
  bool poll_result(int& rank, Index& t, Bytes& result);

  /// Rank 0's, when mpirun started other ranks; null otherwise.
  static TrainingRanks* current();

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

struct ExperimentConfig;

/// The tasks a rank > 0 runs for rank 0, by the same code as rank 0's threads: a parametric
/// training's full run (projection_run.cpp) and a linear method's local reduction
/// (parametric_linear.cpp).
Bytes run_remote_training_run(const ExperimentConfig& c, Bytes& task,
                              const std::atomic<bool>* stop);
Bytes run_remote_local_reduction(const ExperimentConfig& c, Bytes& task,
                                 const std::atomic<bool>* stop);

/// The ranks serving rank 0 (0 without mpirun).
inline int remote_ranks() {
  return TrainingRanks::current() != nullptr ? TrainingRanks::current()->size() - 1 : 0;
}

}  // namespace mor::experiments
