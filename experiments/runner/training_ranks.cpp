// SPDX-License-Identifier: GPL-3.0-or-later
#include "experiments/runner/training_ranks.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/linalg/blas.hpp"

namespace mor::experiments {
namespace {

using detail::concat;

TrainingRanks* g_serving_ranks = nullptr;

// Messages: rank 0 -> a server: kRankTaskTag {kind (0: stop), t, bytes}, then the bytes in chunks;
// a server -> rank 0: kRankResultTag {t, status, bytes}, then the bytes (or the error message).
constexpr int kRankTaskTag = 11;
constexpr int kRankResultTag = 12;
constexpr int kRankDataTag = 13;
constexpr std::int64_t kRankChunk = std::int64_t{1} << 26;
enum : std::int64_t {
  kTaskOk = 0,
  kTaskInvalid = 1,
  kTaskNumerical = 2,
  kTaskInterrupted = 3,
  kTaskOther = 4
};

bool run_launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

void send_task_bytes(const std::vector<char>& data, int to) {
  for (std::size_t at = 0; at < data.size();) {
    const auto n = static_cast<int>(std::min<std::size_t>(data.size() - at, kRankChunk));
    MPI_Send(data.data() + at, n, MPI_CHAR, to, kRankDataTag, MPI_COMM_WORLD);
    at += static_cast<std::size_t>(n);
  }
}

void receive_task_bytes(std::vector<char>& data, std::int64_t size, int from) {
  data.resize(static_cast<std::size_t>(size));
  for (std::size_t at = 0; at < data.size();) {
    const auto n = static_cast<int>(std::min<std::size_t>(data.size() - at, kRankChunk));
    MPI_Recv(data.data() + at, n, MPI_CHAR, from, kRankDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    at += static_cast<std::size_t>(n);
  }
}

}  // namespace

void Bytes::raw(const void* p, std::size_t n) {
  if (n == 0) return;
  const auto* c = static_cast<const char*>(p);
  data_.insert(data_.end(), c, c + n);
}

void Bytes::take(void* p, std::size_t n) {
  if (read_ + n > data_.size()) throw std::runtime_error("internal: a remote task's bytes ended");
  if (n == 0) return;  // an empty matrix: p may be null, and memcpy's pointers may not
  std::memcpy(p, data_.data() + read_, n);
  read_ += n;
}

void Bytes::put(std::int64_t x) {
  raw(&x, sizeof x);
}
void Bytes::put(double x) {
  raw(&x, sizeof x);
}
void Bytes::put(const Matrix& X) {
  put(static_cast<std::int64_t>(X.rows()));
  put(static_cast<std::int64_t>(X.cols()));
  raw(X.data(), sizeof(double) * static_cast<std::size_t>(X.size()));
}
std::int64_t Bytes::get_int() {
  std::int64_t x = 0;
  take(&x, sizeof x);
  return x;
}
double Bytes::get_double() {
  double x = 0;
  take(&x, sizeof x);
  return x;
}
Matrix Bytes::get_matrix() {
  const Index rows = get_int(), cols = get_int();
  Matrix X(rows, cols);
  take(X.data(), sizeof(double) * static_cast<std::size_t>(X.size()));
  return X;
}

TrainingRanks::TrainingRanks() {
  if (!run_launched_by_mpirun()) return;
  int provided = 0;
  // MPI is called from the main thread only (the tasks' threads never call it).
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw IoError("MPI_Init failed");
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (rank_ == 0 && size_ > 1) g_serving_ranks = this;
  // Several ranks share the cores: BLAS keeps to one thread in each.
  if (size_ > 1) blas::set_threads(1);
}

TrainingRanks::~TrainingRanks() {
  if (!active_) return;
  if (rank_ == 0) {
    g_serving_ranks = nullptr;
    const std::int64_t stop[3] = {0, 0, 0};
    for (int r = 1; r < size_; ++r) MPI_Send(stop, 3, MPI_INT64_T, r, kRankTaskTag, MPI_COMM_WORLD);
  }
  MPI_Finalize();
}

TrainingRanks* TrainingRanks::current() {
  return g_serving_ranks;
}

void TrainingRanks::serve(const std::function<Bytes(RemoteTask, Bytes&)>& handler) {
  for (;;) {
    // Waiting for a task polls every 2 ms: Open MPI's blocking receive would spin on a core that
    // rank 0 (its validation, the runs after the training) needs.
    for (int flag = 0;;) {
      MPI_Iprobe(0, kRankTaskTag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (flag) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::int64_t header[3];
    MPI_Recv(header, 3, MPI_INT64_T, 0, kRankTaskTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (header[0] == 0) return;
    Bytes task;
    receive_task_bytes(task.data(), header[2], 0);
    Bytes result;
    std::int64_t status = kTaskOk;
    std::string message;
    try {
      result = handler(static_cast<RemoteTask>(header[0]), task);
    } catch (const InvalidArgument& e) {
      status = kTaskInvalid, message = e.what();
    } catch (const NumericalError& e) {
      status = kTaskNumerical, message = e.what();
    } catch (const Interrupted& e) {
      status = kTaskInterrupted, message = e.what();
    } catch (const std::exception& e) {
      status = kTaskOther, message = concat("rank ", rank_, ": ", e.what());
    }
    if (status != kTaskOk) result.data().assign(message.begin(), message.end());
    const std::int64_t out[3] = {header[1], status,
                                 static_cast<std::int64_t>(result.data().size())};
    MPI_Send(out, 3, MPI_INT64_T, 0, kRankResultTag, MPI_COMM_WORLD);
    send_task_bytes(result.data(), 0);
  }
}

void TrainingRanks::send_task(int rank, RemoteTask kind, Index t, const Bytes& task) {
  const std::int64_t header[3] = {static_cast<std::int64_t>(kind), t,
                                  static_cast<std::int64_t>(task.data().size())};
  MPI_Send(header, 3, MPI_INT64_T, rank, kRankTaskTag, MPI_COMM_WORLD);
  send_task_bytes(task.data(), rank);
}

bool TrainingRanks::poll_result(int& rank, Index& t, Bytes& result) {
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, kRankResultTag, MPI_COMM_WORLD, &flag, &st);
  if (!flag) return false;
  rank = st.MPI_SOURCE;
  std::int64_t header[3];
  MPI_Recv(header, 3, MPI_INT64_T, rank, kRankResultTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  t = header[0];
  result = Bytes();
  receive_task_bytes(result.data(), header[2], rank);
  if (header[1] == kTaskOk) return true;
  const std::string message(result.data().begin(), result.data().end());
  switch (header[1]) {
    case kTaskInvalid:
      throw InvalidArgument(message);
    case kTaskNumerical:
      throw NumericalError(message);
    case kTaskInterrupted:
      throw Interrupted(message);
    default:
      throw std::runtime_error(message);
  }
}

}  // namespace mor::experiments
