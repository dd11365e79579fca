// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/contained.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"

// Sanitizer builds (MOR_SANITIZE, MOR_FUZZ) define it: libFuzzer sets a callback there that
// writes the current input as a crash artifact, which a contained child must not do.
extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace mor::io {
namespace {

using detail::concat;

/// Writes all of text to fd; false on an error other than EINTR.
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// The child: runs call, sends a one-byte verdict ('F' finished, else the error letter) and the
/// output or message through fd, and leaves. Never returns.
[[noreturn]] void child(int fd, const std::function<void(std::ostream&)>& call, pid_t parent) {
  // A child looping inside HDF5 must not outlive a parent killed meanwhile.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal, &action, nullptr);
  }
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
  char verdict = 'F';
  std::string payload;
  try {
    std::ostringstream out;
    call(out);
    payload = std::move(out).str();
  } catch (const IoError& e) {
    verdict = 'I';
    payload = e.what();
  } catch (const InvalidArgument& e) {
    verdict = 'A';
    payload = e.what();
  } catch (const NumericalError& e) {
    verdict = 'N';
    payload = e.what();
  } catch (const Interrupted& e) {
    verdict = 'S';
    payload = e.what();
  } catch (const std::exception& e) {
    verdict = 'E';
    payload = e.what();
  } catch (...) {
    verdict = 'E';
    payload = "an exception that is not a std::exception";
  }
  std::fflush(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const bool sent = write_all(fd, std::string_view(&verdict, 1)) && write_all(fd, payload);
  ::_exit(sent ? 0 : 1);
}

std::string signal_text(int signal) {
  const char* name = ::strsignal(signal);
  return concat("signal ", signal, name != nullptr ? concat(", ", name) : std::string());
}

}  // namespace

ContainedOutcome run_contained(const std::function<void(std::ostream&)>& call,
                               std::chrono::milliseconds time_limit) {
  require(time_limit.count() > 0, "run_contained: time limit ", time_limit.count(),
          " ms must be positive");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw IoError(concat("cannot create a pipe for a child process: ", std::strerror(errno)));
  std::fflush(nullptr);  // so that buffered output is not written twice
  std::cout.flush();
  std::cerr.flush();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw IoError(concat("cannot start a child process: ", std::strerror(error)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], call, parent);
  }
  ::close(fds[1]);

  // Read until the child closes its end (it exits) or the time is up.
  std::string received;
  bool timed_out = false;
  bool interrupted = false;
  const auto deadline = std::chrono::steady_clock::now() + time_limit;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
    if (stop_requested()) {
      interrupted = true;
      break;
    }
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is gone or going
    received.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out || interrupted) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (interrupted) throw Interrupted("interrupted while reading a file");

  ContainedOutcome outcome;
  if (timed_out) {
    outcome.kind = ContainedOutcome::Kind::timed_out;
    return outcome;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !received.empty()) {
    outcome.kind =
        received[0] == 'F' ? ContainedOutcome::Kind::finished : ContainedOutcome::Kind::threw;
    if (received[0] == 'F') {
      received.erase(0, 1);  // no copy: an export's matrices come this way (hundreds of MB)
      outcome.output = std::move(received);
    } else {
      outcome.error = received[0];
      outcome.message = received.substr(1);
    }
    return outcome;
  }
  outcome.kind = ContainedOutcome::Kind::crashed;
  outcome.message = WIFSIGNALED(status)
                        ? signal_text(WTERMSIG(status))
                        : concat("exit status ", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return outcome;
}

namespace {

/// The exception a child threw (ContainedOutcome::Kind::threw), as the same type with its message.
[[noreturn]] void rethrow(const ContainedOutcome& outcome) {
  switch (outcome.error) {
    case 'I':
      throw IoError(outcome.message);
    case 'A':
      throw InvalidArgument(outcome.message);
    case 'N':
      throw NumericalError(outcome.message);
    case 'S':
      throw Interrupted(outcome.message);
    default:
      throw std::runtime_error(outcome.message);
  }
}

}  // namespace

std::string read_contained(const std::filesystem::path& file, std::string_view what,
                           const std::function<void(std::ostream&)>& call,
                           std::chrono::milliseconds time_limit) {
  ContainedOutcome outcome = run_contained(call, time_limit);
  const std::string damaged = concat("damaged ", what, ": '", file.string(), "' (");
  switch (outcome.kind) {
    case ContainedOutcome::Kind::finished:
      return std::move(outcome.output);
    case ContainedOutcome::Kind::crashed:
      throw IoError(concat(damaged, "the reader crashed on it: ", outcome.message,
                           "; HDF5 1.10 does not survive every damaged file)"));
    case ContainedOutcome::Kind::timed_out:
      throw IoError(concat(damaged, "reading it did not end within ",
                           static_cast<double>(time_limit.count()) / 1000,
                           " s and was stopped)"));  // 60 s, or 0.5 s as MOR_READ_TIME_LIMIT set
    case ContainedOutcome::Kind::threw:
      break;
  }
  rethrow(outcome);
}

std::vector<double> run_stoppable(const std::function<std::vector<double>()>& call,
                                  const std::string& interrupted) {
  ContainedOutcome outcome;
  try {
    outcome = run_contained(
        [&](std::ostream& os) {
          for (const double x : call()) os << std::hexfloat << x << ' ';
        },
        std::chrono::hours(24 * 365));
  } catch (const Interrupted&) {
    throw Interrupted(interrupted);
  }
  switch (outcome.kind) {
    case ContainedOutcome::Kind::finished: {
      std::vector<double> values;
      std::istringstream in(outcome.output);
      // strtod reads hexadecimal floats (and inf, nan); libstdc++'s operator>> does not.
      for (std::string word; in >> word;) values.push_back(std::strtod(word.c_str(), nullptr));
      return values;
    }
    case ContainedOutcome::Kind::crashed:
    case ContainedOutcome::Kind::timed_out:
      throw NumericalError(
          concat("the process computing it ended without a result: ", outcome.message));
    case ContainedOutcome::Kind::threw:
      break;
  }
  rethrow(outcome);
}

std::chrono::milliseconds results_read_time_limit() {
  if (const char* text = std::getenv("MOR_READ_TIME_LIMIT"); text != nullptr) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0 && seconds < 1e6)
      return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    throw InvalidArgument(
        concat("MOR_READ_TIME_LIMIT='", text, "' is not a number of seconds in (0, 1e6)"));
  }
  return std::chrono::seconds(60);
}

}  // namespace mor::io
