// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the libFuzzer targets (scripts/run_fuzz.sh builds and runs them): a scratch folder
// of this process for the inputs that must be files, and the verdict on an exception. The
// program turns InvalidArgument and IoError into a one-line message and exit 2 (bad input), so
// those are the expected outcomes of a malformed file; any other exception would reach the user
// as exit 1 "anything else", so the targets let it escape, and libFuzzer reports it as a crash.
#pragma once

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "src/core/errors.hpp"

// Sanitizer builds define it; libFuzzer's callback there writes the input as a crash artifact.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace mor::fuzz {

/// A folder of this process, created once (under TMPDIR, else /dev/shm or /tmp) and removed at
/// exit. Never destroyed itself, so that the exit-time removal can still name it.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path base = tmp != nullptr ? tmp : "/dev/shm";
    if (!std::filesystem::is_directory(base)) base = "/tmp";
    auto* d = new std::filesystem::path(base / ("mor_fuzz_" + std::to_string(::getpid())));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch(), ignored);
    });
    return d;
  }();
  return *dir;
}

/// Writes the input to scratch()/name and returns the path.
inline std::filesystem::path as_file(const std::uint8_t* data, std::size_t size,
                                     const std::string& name) {
  const auto file = scratch() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

/// Runs f; the library's own errors for bad input are the expected outcome.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const InvalidArgument&) {
  } catch (const IoError&) {
  }
}

/// Inputs on which a third-party reader crashed or looped in the contained child (see
/// contained()): counted, reported at exit, and kept in $MOR_FUZZ_CONTAINED_DIR if set.
/// Also where the time went (wall seconds): in the worker for each verdict, and in the
/// in-process read of the clean inputs, printed with the counts (the measure of throughput).
struct ContainedCounts {
  long runs = 0, crashed = 0, timed_out = 0;
  double clean_seconds = 0, crashed_seconds = 0, timed_out_seconds = 0, in_process_seconds = 0;
  double slowest_clean = 0, fork_seconds = 0;
  long forks = 0, waits_for_cpu = 0;
  std::string target;
  ~ContainedCounts() {
    if (runs == 0) return;
    std::fprintf(stderr, "%s: %ld inputs read in a child first: %ld crashed it, %ld timed out\n",
                 target.c_str(), runs, crashed, timed_out);
    const long clean = runs - crashed - timed_out;
    auto mean_ms = [](double seconds, long n) { return n > 0 ? 1e3 * seconds / n : 0.0; };
    std::fprintf(stderr,
                 "%s: time in the child: clean %.1f s (mean %.2f ms, slowest %.1f ms), crashed "
                 "%.1f s (mean %.2f ms), timed out %.1f s; in process after a clean child: %.1f s "
                 "(mean %.2f ms); %ld forks of a worker: %.1f s; %ld waits for a core past "
                 "the limit\n",
                 target.c_str(), clean_seconds, mean_ms(clean_seconds, clean), 1e3 * slowest_clean,
                 crashed_seconds, mean_ms(crashed_seconds, crashed), timed_out_seconds,
                 in_process_seconds, mean_ms(in_process_seconds, clean), forks, fork_seconds,
                 waits_for_cpu);
  }
};

inline ContainedCounts& contained_counts() {
  static ContainedCounts counts;
  return counts;
}

/// A child process forked from the target that reads input after input (the file of the
/// current input, same path each time) until it crashes, loops or the target ends: the
/// containment of io::run_contained (`mor info` forks once per file) without a fork per input
/// of a sanitized process of up to 300 MB (one fork per crash instead). Its HDF5
/// state is that of the target when it was forked plus the inputs it read since, as the target's
/// own is in libFuzzer's one process.
class Worker {
 public:
  enum class Verdict { clean, crashed, timed_out };

  ~Worker() { stop(); }

  /// Has the worker run read() on the current input; starts one if none is running. The worker
  /// has timed out once it has used `limit` of CPU time on the input, or once kWallBackstop has
  /// passed: a wall-clock limit alone counted reads as hangs that had only waited for a core
  /// (the campaign of 24 November at nice 19 and load 9 kept 161 such inputs in 20 minutes,
  /// each of which reads in under 2 s alone).
  template <class F>
  Verdict run(F& read, std::chrono::milliseconds limit) {
    start_seconds_ = 0;
    if (pid_ < 0) {
      const auto t = std::chrono::steady_clock::now();
      start(read);
      start_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    }
    clockid_t cpu_clock{};
    const bool cpu_known = ::clock_getcpuclockid(pid_, &cpu_clock) == 0;
    const double cpu_start = cpu_known ? cpu_seconds(cpu_clock) : 0;
    const auto wall_start = std::chrono::steady_clock::now();
    const char go = 'G';
    if (::write(to_, &go, 1) != 1) return died();
    pollfd p{from_, POLLIN, 0};
    for (;;) {
      const int ready = ::poll(&p, 1, static_cast<int>(limit.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready != 0) break;
      const double used = cpu_known ? cpu_seconds(cpu_clock) - cpu_start : 1e9;
      if (used >= std::chrono::duration<double>(limit).count() ||
          std::chrono::steady_clock::now() - wall_start >= kWallBackstop) {
        ::kill(pid_, SIGKILL);
        stop();
        return Verdict::timed_out;
      }
      ++waits_for_cpu_;
    }
    char done = 0;
    if (::read(from_, &done, 1) != 1) return died();
    return Verdict::clean;
  }

 private:
  template <class F>
  void start(F& read) {
    std::signal(SIGPIPE, SIG_IGN);  // a write to a worker that died fails, not kills
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0) std::abort();
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) std::abort();
    if (pid_ == 0) {
      // A worker looping inside HDF5 must not outlive a target stopped meanwhile.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::close(to[1]);
      ::close(from[0]);
      // As io::run_contained's child: a crash ends it with its signal, not with the sanitizer's
      // or libFuzzer's handlers (which would write the input as a crash artifact).
      for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        std::signal(signal, SIG_DFL);
      if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
      char go = 0;
      while (::read(to[0], &go, 1) == 1) {
        try {
          std::ostringstream out;
          read(out);
        } catch (...) {  // the verdict on exceptions is the in-process run's (expect_clean)
        }
        const char done = 'D';
        if (::write(from[1], &done, 1) != 1) break;
      }
      ::_exit(0);
    }
    ::close(to[0]);
    ::close(from[1]);
    to_ = to[1];
    from_ = from[0];
  }

  Verdict died() {
    stop();
    return Verdict::crashed;
  }

  void stop() {
    if (pid_ < 0) return;
    ::close(to_);
    ::close(from_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

  /// CPU seconds the process of clock has used.
  static double cpu_seconds(clockid_t clock) {
    timespec t{};
    return ::clock_gettime(clock, &t) == 0 ? static_cast<double>(t.tv_sec) + 1e-9 * t.tv_nsec : 0;
  }

  /// Below libFuzzer's -timeout=10 of scripts/run_fuzz.sh, which would count a starved input as
  /// a hang of the target.
  static constexpr std::chrono::seconds kWallBackstop{8};

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  double start_seconds_ = 0;
  long waits_for_cpu_ = 0;

 public:
  /// Wall seconds the last run() spent forking a new worker (0 if one was running).
  double start_seconds() const noexcept { return start_seconds_; }
  /// Times the wall-clock limit passed before the worker had used its CPU time limit.
  long waits_for_cpu() const noexcept { return waits_for_cpu_; }
};

/// The containment the program uses on files HDF5 may crash on (as `mor info` reads a results
/// file through io::read_contained): read(out) runs first in a child process (Worker) with the
/// given time limit. If the child crashed or timed out, that is the program's "damaged file"
/// message, not a failure of the target: the input is counted (and kept, see ContainedCounts).
/// Otherwise read runs again in this process (the same deterministic read, so it ends as in the
/// child), which gives libFuzzer the coverage the child's run cannot report, and is checked as
/// every target's read is (expect_clean).
template <class F>
void contained(const char* target, const std::uint8_t* data, std::size_t size,
               std::chrono::milliseconds limit, F&& read) {
  static Worker worker;
  auto& counts = contained_counts();
  counts.target = target;
  ++counts.runs;
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const auto start = Clock::now();
  const Worker::Verdict verdict = worker.run(read, limit);
  const double in_worker = seconds_since(start) - worker.start_seconds();
  counts.fork_seconds += worker.start_seconds();
  counts.forks += worker.start_seconds() > 0 ? 1 : 0;
  counts.waits_for_cpu = worker.waits_for_cpu();
  if (verdict != Worker::Verdict::clean) {
    const bool crashed = verdict == Worker::Verdict::crashed;
    ++(crashed ? counts.crashed : counts.timed_out);
    (crashed ? counts.crashed_seconds : counts.timed_out_seconds) += in_worker;
    if (const char* dir = std::getenv("MOR_FUZZ_CONTAINED_DIR"); dir != nullptr) {
      const std::string name = std::string(crashed ? "crash-" : "hang-") +
                               std::to_string(::getpid()) + "-" +
                               std::to_string(counts.crashed + counts.timed_out);
      std::filesystem::create_directories(dir);
      std::ofstream(std::filesystem::path(dir) / name, std::ios::binary)
          .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    return;
  }
  counts.clean_seconds += in_worker;
  counts.slowest_clean = std::max(counts.slowest_clean, in_worker);
  const auto in_process = Clock::now();
  expect_clean([&] {
    std::ostringstream out;
    read(out);
  });
  counts.in_process_seconds += seconds_since(in_process);
}

}  // namespace mor::fuzz
