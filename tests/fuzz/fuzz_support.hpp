// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the libFuzzer targets (scripts/run_fuzz.sh builds and runs them): a scratch folder
// of this process for the inputs that must be files, and the verdict on an exception. The
// program turns InvalidArgument and IoError into a one-line message and exit 2 (bad input), so
// those are the expected outcomes of a malformed file; any other exception would reach the user
// as exit 1 "anything else", so the targets let it escape, and libFuzzer reports it as a crash.
#pragma once

#include <dlfcn.h>
#include <execinfo.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "src/core/errors.hpp"

// Sanitizer builds define it; libFuzzer's callback there writes the input as a crash artifact.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));
// ASan's: called with the text of each report before the process ends.
extern "C" void __asan_set_error_report_callback(void (*callback)(const char*))
    __attribute__((weak));
// The sanitizers': the function name ("%f") of a code address.
extern "C" void __sanitizer_symbolize_pc(void* pc, const char* fmt, char* out_buf,
                                         std::size_t out_buf_size) __attribute__((weak));

namespace mor::fuzz {

/// Below libFuzzer's -timeout=10 of scripts/run_fuzz.sh, which would count a starved input as a
/// hang of the target: a child still running after this wall time is stopped (a starved child;
/// its CPU-time limit stops a loop).
inline constexpr std::chrono::seconds kWallBackstop{8};

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

/// Inputs on which a third-party reader crashed or looped in the child (see contained()):
/// counted, reported at exit, and kept in $MOR_FUZZ_CONTAINED_DIR if set. Also where the time
/// went (wall seconds): in the child for each ending, the forks, and the in-process read of the
/// clean inputs, printed with the counts (the measure of throughput).
struct ContainedCounts {
  long runs = 0, crashed = 0, looped = 0, starved = 0, slow = 0;
  double clean_seconds = 0, crashed_seconds = 0, looped_seconds = 0, starved_seconds = 0;
  double in_process_seconds = 0, slowest_clean = 0, fork_seconds = 0;
  long forks = 0;
  std::string target;
  ~ContainedCounts() {
    if (runs == 0) return;
    std::fprintf(stderr,
                 "%s: %ld inputs read in a child first: %ld crashed it inside a third-party "
                 "reader, %ld looped there, %ld were stopped by the wall-clock backstop; %ld "
                 "used the CPU-time limit in our code and were read again in process\n",
                 target.c_str(), runs, crashed, looped, starved, slow);
    const long clean = runs - crashed - looped - starved - slow;
    auto mean_ms = [](double seconds, long n) { return n > 0 ? 1e3 * seconds / n : 0.0; };
    std::fprintf(
        stderr,
        "%s: time in the child: clean %.1f s (mean %.2f ms, slowest %.1f ms), crashed "
        "%.1f s (mean %.2f ms), looped %.1f s, stopped %.1f s; %ld forks of a worker %.1f s; "
        "in process after a clean child: %.1f s (mean %.2f ms)\n",
        target.c_str(), clean_seconds, mean_ms(clean_seconds, clean), 1e3 * slowest_clean,
        crashed_seconds, mean_ms(crashed_seconds, crashed), looped_seconds, starved_seconds, forks,
        fork_seconds, in_process_seconds, mean_ms(in_process_seconds, clean));
  }
};

inline ContainedCounts& contained_counts() {
  static ContainedCounts counts;
  return counts;
}

namespace detail {

/// The child's end of the pipe to the target (written by the handlers below).
inline int& verdict_fd() {
  static int fd = -1;
  return fd;
}

/// The readers the program contains (HDF5, matio and their compression libraries): a crash or a
/// loop inside them on a damaged file is the program's "damaged file" message.
inline bool third_party_module(const char* text) {
  for (const char* lib : {"/libhdf5", "/libmatio.so", "/libz.so", "/libsz.so", "/libaec.so"})
    if (std::strstr(text, lib) != nullptr) return true;
  return false;
}

/// The C and C++ runtimes: their frames belong to whoever called them.
inline bool runtime_module(const char* text) {
  for (const char* lib : {"/libc.so", "/libstdc++.so", "/libgcc_s.so", "/libm.so", "/ld-linux"})
    if (std::strstr(text, lib) != nullptr) return true;
  return false;
}

/// Owner of a code address: 1 third-party, 0 ours (or unknown), -1 runtime (look further out).
/// In the target's executable, only the sanitizer runtime's symbols are exported (interceptors):
/// a named symbol there is runtime, an unnamed one ours.
inline int address_owner(void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return 0;
  if (third_party_module(info.dli_fname)) return 1;
  if (runtime_module(info.dli_fname)) return -1;
  Dl_info self{};
  ::dladdr(reinterpret_cast<void*>(&address_owner), &self);
  return info.dli_fbase == self.dli_fbase && info.dli_sname != nullptr ? -1 : 0;
}

/// Owner of the code that made the sanitizer report this callback runs in: the first frame of
/// the current stack outside the C and C++ runtimes, the sanitizer runtime and this file's
/// handlers (as address_owner(); the runtime's own functions, not exported, are told by their
/// symbolized names). Not the report's text: ASan hands its callback a buffer of 64 kB that
/// holds everything it printed since the process started and is never emptied, and after
/// about a thousand "failed to allocate" warnings (allocator_may_return_null, matio's claims)
/// a report no longer fits (the campaign of 24 November, 22:07: an HDF5 over-read taken for
/// ours).
inline int reporting_stack_owner() {
  void* frames[128];
  const int n = ::backtrace(frames, 128);
  Dl_info self{};
  ::dladdr(reinterpret_cast<void*>(&reporting_stack_owner), &self);
  char name[512];
  for (int i = 0; i < n; ++i) {
    void* at = i == 0 ? frames[i] : static_cast<char*>(frames[i]) - 1;
    Dl_info info{};
    if (::dladdr(at, &info) == 0 || info.dli_fname == nullptr) return 0;
    if (third_party_module(info.dli_fname)) return 1;
    if (runtime_module(info.dli_fname)) continue;
    if (info.dli_fbase != self.dli_fbase) return 0;  // another module of ours
    if (info.dli_sname != nullptr) continue;         // exported: the sanitizer runtime
    name[0] = '\0';
    if (__sanitizer_symbolize_pc != nullptr) __sanitizer_symbolize_pc(at, "%f", name, sizeof name);
    bool runtime = false;
    for (const char* prefix :
         {"__asan", "__sanitizer", "__lsan", "__ubsan", "__interceptor", "mor::fuzz::detail::"})
      runtime = runtime || std::strncmp(name, prefix, std::strlen(prefix)) == 0;
    if (!runtime) return 0;
  }
  return 0;
}

/// ASan's report callback in the worker: 'C' to the target for a crash inside a third-party
/// reader, else 'c'; ASan then ends the worker.
inline void classify_report(const char*) {
  const char verdict = reporting_stack_owner() == 1 ? 'C' : 'c';
  (void)!::write(verdict_fd(), &verdict, 1);
}

/// Handler in the worker for SIGXCPU (sent by the target when the worker has used its CPU time
/// on an input: a loop), SIGABRT and SIGILL (a crash that is no sanitizer report): the owner
/// of the interrupted code, from the innermost frame that is not a runtime's, goes to the
/// target ('L'/'l' for a loop, 'C'/'c' for a crash); then the worker ends.
inline void classify_signal(int signal, siginfo_t*, void* context) {
  void* frames[128];
  const int n = ::backtrace(frames, 128);
  auto* pc =
      reinterpret_cast<void*>(static_cast<const ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
  int i = 0;
  while (i < n && frames[i] != pc) ++i;
  int owner = i == n ? std::max(0, address_owner(pc)) : 0;
  for (; i < n; ++i) {
    // Return addresses point after the call; the interrupted pc is the instruction itself.
    void* at = frames[i] == pc ? pc : static_cast<char*>(frames[i]) - 1;
    if (const int o = address_owner(at); o >= 0) {
      owner = o;
      break;
    }
  }
  const char verdict = signal == SIGXCPU ? (owner == 1 ? 'L' : 'l') : (owner == 1 ? 'C' : 'c');
  (void)!::write(verdict_fd(), &verdict, 1);
  if (signal == SIGXCPU) ::_exit(3);
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

/// The current input of contained() in the target, for in_process_report.
struct CurrentInput {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  const char* target = "";
};

inline CurrentInput& current_input() {
  static CurrentInput input;
  return input;
}

/// ASan's report callback in the target: a crash inside a third-party reader during the
/// in-process read of an input the worker read cleanly. HDF5's crashes depend on the heap
/// layout, which differs between the worker and the target; the program reads such files in a
/// child process, so this is contained too. Says so on a line scripts/run_fuzz.sh looks for
/// (it counts the input and goes on fuzzing) and keeps the input with the others.
inline void in_process_report(const char*) {
  if (reporting_stack_owner() != 1) return;
  const auto& input = current_input();
  std::fprintf(stderr,
               "%s: MOR_FUZZ_CONTAINED_IN_PROCESS: the report above is of a crash inside a "
               "third-party reader in the in-process read (the worker read the input cleanly)\n",
               input.target);
  if (const char* dir = std::getenv("MOR_FUZZ_CONTAINED_DIR"); dir != nullptr) {
    ::mkdir(dir, 0755);
    const std::string name = std::string(dir) + "/in-process-crash-" + std::to_string(::getpid());
    if (std::FILE* f = std::fopen(name.c_str(), "wb"); f != nullptr) {
      std::fwrite(input.data, 1, input.size, f);
      std::fclose(f);
    }
  }
}

}  // namespace detail

/// How the worker's read of an input ended.
enum class Ending {
  clean,    // the read returned or threw
  crashed,  // a crash inside a third-party reader
  looped,   // its CPU time on the input passed the limit inside a third-party reader
  starved,  // the wall-clock backstop passed first (a starved worker, not a verdict)
  slow,     // its CPU time on the input passed the limit in our code: read again in process,
            // where libFuzzer's -timeout decides whether it is a hang (a slow input is none)
  ours      // a crash anywhere else: a failure of the target
};

/// A child process forked from the target that reads input after input (the file of the
/// current input, same path each time) until it crashes, loops or the target ends: the
/// containment of io::run_contained (`mor info` forks once per file) without a fork per input
/// (measured on 1 500 executions of fuzz_results' corpus: 16.5 s with a fork per input, 1 000
/// more page faults an input from copy-on-write, against 6.3 s with this worker). Its HDF5 state
/// is that of the target when it was forked plus the inputs it read since, as the target's own is
/// in libFuzzer's one process. A crash is attributed by the first frame of its sanitizer report
/// (or of the stack at SIGABRT or SIGILL) that is not in the C or C++ runtime or the sanitizer's;
/// a loop by the stack at SIGXCPU, which the target sends once the worker has used `limit` of
/// CPU time on the input.
class Worker {
 public:
  ~Worker() { stop(); }

  /// Has the worker run read() on the current input, starting one if none is running.
  /// `what` names the end of a worker that crashed or looped in our code.
  template <class F>
  Ending run(F& read, std::chrono::seconds limit, std::string& what) {
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
    if (::write(to_, &go, 1) != 1) return ended("", false, what);
    std::string got;
    bool signalled = false;
    pollfd p{from_, POLLIN, 0};
    for (;;) {
      const int ready = ::poll(&p, 1, signalled ? 2000 : 200);
      if (ready < 0 && errno == EINTR) continue;
      if (ready > 0) {
        char c = 0;
        const ssize_t r = ::read(from_, &c, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return ended(got, false, what);  // the worker ended
        if (c == 'D') return Ending::clean;
        got += c;
        continue;
      }
      if (signalled) {  // no answer to SIGXCPU within 2 s
        ::kill(pid_, SIGKILL);
        return ended(got, false, what);
      }
      const double used = cpu_known ? cpu_seconds(cpu_clock) - cpu_start : 0;
      if (used >= static_cast<double>(limit.count())) {
        ::kill(pid_, SIGXCPU);
        signalled = true;
      } else if (std::chrono::steady_clock::now() - wall_start >= kWallBackstop) {
        ::kill(pid_, SIGKILL);
        return ended(got, true, what);
      }
    }
  }

  /// Wall seconds the last run() spent forking a new worker (0 if one was running).
  double start_seconds() const noexcept { return start_seconds_; }

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
      detail::verdict_fd() = from[1];
      // No crash artifact from the worker: libFuzzer's death callback writes one.
      if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
      if (__asan_set_error_report_callback != nullptr)
        __asan_set_error_report_callback(detail::classify_report);
      struct sigaction action {};
      action.sa_sigaction = detail::classify_signal;
      action.sa_flags = SA_SIGINFO;
      sigemptyset(&action.sa_mask);
      for (const int signal : {SIGXCPU, SIGABRT, SIGILL}) ::sigaction(signal, &action, nullptr);
      // Ctrl-C (SIGINT to the process group) is the target's to handle: libFuzzer's handler
      // prints the run's statistics; the worker ends with it (PR_SET_PDEATHSIG).
      std::signal(SIGINT, SIG_IGN);
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

  /// The worker has ended (or was stopped by the backstop): which ending it was.
  Ending ended(const std::string& got, bool backstop, std::string& what) {
    const int status = stop();
    if (got.find('C') != std::string::npos) return Ending::crashed;
    if (got.find('L') != std::string::npos) return Ending::looped;
    if (backstop && got.empty()) return Ending::starved;
    if (got.find('l') != std::string::npos) return Ending::slow;
    if (WIFSIGNALED(status))
      what = std::string("ended by signal ") + std::to_string(WTERMSIG(status)) + " (" +
             ::strsignal(WTERMSIG(status)) + ")";
    else
      what = "exited with status " + std::to_string(WEXITSTATUS(status)) + " (a sanitizer report)";
    return Ending::ours;
  }

  /// Ends the worker (closing its pipes) and returns its wait status.
  int stop() {
    if (pid_ < 0) return 0;
    ::close(to_);
    ::close(from_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

  /// CPU seconds the process of clock has used.
  static double cpu_seconds(clockid_t clock) {
    timespec t{};
    return ::clock_gettime(clock, &t) == 0 ? static_cast<double>(t.tv_sec) + 1e-9 * t.tv_nsec : 0;
  }

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  double start_seconds_ = 0;
};

/// The containment the program uses on files HDF5 may crash on (as `mor info` reads a results
/// file through io::read_contained): read(out) runs first in the worker (Worker) with the given
/// limit of CPU time. A crash or a loop inside a third-party reader there is the program's
/// "damaged file" message, not a failure of the target: the input is counted (and kept, see
/// ContainedCounts). Otherwise read runs again in this process, which gives libFuzzer the
/// coverage the worker's run cannot report, and is checked as every target's read is
/// (expect_clean); a crash or loop of the worker in our code thereby becomes libFuzzer's own
/// report, with the input as its artifact (and if the read in process ends cleanly, the target
/// aborts with the worker's ending). A crash inside a third-party reader in process is contained
/// too (detail::in_process_report).
template <class F>
void contained(const char* target, const std::uint8_t* data, std::size_t size,
               std::chrono::seconds limit, F&& read) {
  static Worker worker;
  auto& counts = contained_counts();
  counts.target = target;
  if (++counts.runs == 1) {
    void* frame[1];
    (void)::backtrace(frame, 1);  // loads the unwinder before any fork (classify_signal uses it)
    if (__asan_set_error_report_callback != nullptr)
      __asan_set_error_report_callback(detail::in_process_report);
  }
  detail::current_input() = {data, size, target};
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const auto start = Clock::now();
  std::string what;
  const Ending ending = worker.run(read, limit, what);
  counts.fork_seconds += worker.start_seconds();
  counts.forks += worker.start_seconds() > 0 ? 1 : 0;
  const double in_worker = seconds_since(start) - worker.start_seconds();
  // Keeps the input as <kind><pid>-<n> in MOR_FUZZ_CONTAINED_DIR (when set), to look at later.
  const auto keep = [&](const std::string& kind, long n) {
    if (const char* dir = std::getenv("MOR_FUZZ_CONTAINED_DIR"); dir != nullptr) {
      std::filesystem::create_directories(dir);
      std::ofstream(std::filesystem::path(dir) /
                        (kind + std::to_string(::getpid()) + "-" + std::to_string(n)),
                    std::ios::binary)
          .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
  };
  if (ending == Ending::crashed || ending == Ending::looped || ending == Ending::starved) {
    const char* kind = ending == Ending::crashed  ? "crash-"
                       : ending == Ending::looped ? "hang-"
                                                  : "starved-";
    auto [n, seconds] = ending == Ending::crashed ? std::tie(counts.crashed, counts.crashed_seconds)
                        : ending == Ending::looped
                            ? std::tie(counts.looped, counts.looped_seconds)
                            : std::tie(counts.starved, counts.starved_seconds);
    ++n;
    seconds += in_worker;
    keep(kind, counts.crashed + counts.looped + counts.starved);
    return;
  }
  if (ending == Ending::clean) {
    counts.clean_seconds += in_worker;
    counts.slowest_clean = std::max(counts.slowest_clean, in_worker);
  } else if (ending == Ending::slow) {
    ++counts.slow;
    // No hang (libFuzzer's -timeout judges the read below), but over a second of CPU in our
    // code on an input of at most 64 kB.
    keep("slow-", counts.slow);
  } else {
    std::fprintf(stderr, "%s: the worker's read %s in our code; reading again in process\n", target,
                 what.c_str());
  }
  const auto in_process = Clock::now();
  expect_clean([&] {
    std::ostringstream out;
    read(out);
  });
  counts.in_process_seconds += seconds_since(in_process);
  if (ending == Ending::ours) {
    std::fprintf(stderr,
                 "%s: the worker's read %s in our code (its report above), the same read in "
                 "process did not\n",
                 target, what.c_str());
    std::abort();
  }
}

}  // namespace mor::fuzz
