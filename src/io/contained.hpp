// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a file that may be damaged or hostile in a child process, so that a crash or an
// endless loop inside a third-party reader ends as a one-line message instead of a signal or a
// hang of the program. HDF5 1.10.8 (Debian's) has both on damaged results files: a null-pointer
// SEGV while iterating over the attributes of an object (H5Aiterate2 -> H5A__close) and an
// endless loop reading a variable-length string from a damaged global heap (H5HG_read); see
// docs/hardening.md, "Fuzzing". Used by `mor info` and `mor export` on results files (export's
// child only reads: it hands the matrices to the parent, which writes them; io/matrix_stream.hpp),
// and by the fuzz targets to tell such third-party crashes from ours.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace mor::io {

/// How a contained call ended.
struct ContainedOutcome {
  enum class Kind {
    finished,   ///< the call returned; output holds what it wrote
    threw,      ///< the call threw; error and message say what
    crashed,    ///< the child ended without reporting (a signal, a sanitizer's exit); message says
                ///< how
    timed_out,  ///< the child ran past the time limit and was killed
  };
  Kind kind = Kind::finished;
  std::string output;
  /// threw: 'I' IoError, 'A' InvalidArgument, 'N' NumericalError, 'S' Interrupted, 'E' other.
  char error = 0;
  /// threw: the exception's what(); crashed: e.g. "signal 11, Segmentation fault".
  std::string message;
};

/// Runs call(out) in a child process (fork(2)) and returns how it ended, with what the call
/// wrote to out. The child shares the parent's standard streams (flushed before the fork), runs
/// with the default action for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (so that a crash ends
/// it with that signal, whatever handlers a sanitizer or fuzzer installed) and leaves with _exit,
/// running no exit handlers. It is killed (SIGKILL) once time_limit has passed. Nothing the
/// child changes in memory reaches the parent, so call should only read: a file it writes is
/// the caller's to clean up.
/// @throws InvalidArgument unless time_limit > 0; IoError if the pipe or the fork fails;
///         Interrupted if SIGINT/SIGTERM set the stop flag (src/core/interrupt.hpp) meanwhile
///         (the child is killed).
ContainedOutcome run_contained(const std::function<void(std::ostream&)>& call,
                               std::chrono::milliseconds time_limit);

/// run_contained for a call that reads `file` (what: "results file", ...): returns what the
/// call wrote. The child's exception comes back as the same type with its message (IoError,
/// InvalidArgument, NumericalError, Interrupted; any other as std::runtime_error); a crash or a
/// timeout becomes IoError "damaged <what>: 'file' (the reader crashed on it: signal 11,
/// Segmentation fault; ...)" or "(reading it did not end within 60 s and was stopped)".
std::string read_contained(const std::filesystem::path& file, std::string_view what,
                           const std::function<void(std::ostream&)>& call,
                           std::chrono::milliseconds time_limit);

/// Runs call, a computation of a few numbers inside kernels that poll no stop flag (LAPACK's dense
/// eigensolvers and factorizations: seconds at n in the thousands), in a child process
/// (run_contained), so that SIGINT / SIGTERM (the stop flag) stop it within 0.1 s. The numbers
/// come back exactly (as hexadecimal floats); an exception of call comes back as the same type
/// with its message. The child shares nothing back: call must only compute.
/// @throws Interrupted when the stop flag is set meanwhile (the child is killed); as call;
///         NumericalError naming how the child ended if it ended without reporting.
/// @param interrupted the message of the Interrupted it throws.
std::vector<double> run_stoppable(
    const std::function<std::vector<double>()>& call,
    const std::string& interrupted =
        "interrupted during a dense computation (its process was stopped)");

/// How long `mor info` and `mor export` give the reading of a results file: 60 s, or
/// $MOR_READ_TIME_LIMIT seconds if set (the tests use 2).
/// @throws InvalidArgument naming the value unless it is a number of seconds in (0, 1e6). They read
/// attributes and, at most, the reduced matrices and bases (400 MB for n = 10^6, r = 50, a few
/// seconds), which `mor export`'s child passes to the parent through the pipe; the parent writes
/// the files, outside the limit. HDF5's endless loops on damaged files never end by themselves.
std::chrono::milliseconds results_read_time_limit();

}  // namespace mor::io
