// SPDX-License-Identifier: GPL-3.0-or-later
// A claim on an output file for the whole of the run that writes it, so that two runs never
// write the same file at once and a file another program holds open for writing is never
// replaced. Results are written to a temporary file renamed into place at the end
// (ResultsWriter), so the claim cannot be a lock on that temporary file: it is an flock(2) on
// the sibling file "<target>.lock", held from the start of the run to its end, plus a shared
// flock on the target itself when it exists (HDF5 1.10 and later take an exclusive flock on a
// file they open for writing, so h5py's writer and ours exclude each other).
//
// The kernel drops flocks when their process ends, however it ends: a killed run leaves at most
// an unlocked "<target>.lock", which the next run takes over and removes; it never blocks it.
// File systems without flock() go unclaimed, as HDF5 itself goes unlocked there.
#pragma once

#include <filesystem>
#include <memory>

namespace mor::io {

/// An exclusive claim on `target` for the life of the object (and of its moved-to copies).
/// Claims of one process on one target are shared: a second OutputLock (or ResultsWriter) of the
/// same process on the same path joins the first instead of refusing; the claim ends with the
/// last of them. Move-only.
class OutputLock {
 public:
  /// An empty claim (holds nothing).
  OutputLock() noexcept;
  /// Claims target: creates its missing parent directories (removed again at release if they
  /// are then empty), takes "<target>.lock" (writing this process's id into it) and a shared
  /// flock on the target if it is a regular file. Where the lock file cannot be made (a read-only
  /// folder, a file system without flock), the claim is empty and the writer's own checks speak.
  /// @throws IoError "refusing to write results file '<target>': another mor run (process <pid>)
  ///         is writing it ..." if another process holds the claim, and "... another program
  ///         holds it open for writing ..." if another program has the target open for writing
  ///         (an exclusive flock, as HDF5 takes).
  explicit OutputLock(const std::filesystem::path& target);
  OutputLock(OutputLock&&) noexcept;
  OutputLock& operator=(OutputLock&&) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  /// Releases the claim (the last holder in this process removes "<target>.lock").
  ~OutputLock();

  /// Whether a lock is held (false for an empty claim or where flock is unavailable).
  bool held() const noexcept;

  /// The name of the lock file of target: "<target>.lock".
  static std::filesystem::path lock_file(const std::filesystem::path& target);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// Removes the lock file lock_file ("<target>.lock") if nobody holds it: what a claimant killed
/// by SIGKILL leaves. Returns whether it was removed; errors count as not removed.
bool remove_stale_lock_file(const std::filesystem::path& lock_file) noexcept;

/// Refuses if another program holds `path` open for writing: a regular file on which a shared
/// flock cannot be taken (HDF5, h5py included, holds an exclusive one while it writes a file).
/// Nothing happens if path is missing, not a regular file, or unreadable.
/// @throws IoError "refusing to write <what> '<path>': another program holds it open for writing
///         (it has a lock on the file); close it there or name another output file".
void require_not_held_for_writing(const std::filesystem::path& path, const char* what);

}  // namespace mor::io
