// SPDX-License-Identifier: GPL-3.0-or-later
// Opening a file a user named (a model, a matrix, an input table, an experiment file) for
// reading: only a regular file, after following links, is read. A FIFO would block the open
// and then the read for ever (ignoring SIGINT, which only sets a flag), /dev/zero never ends,
// a directory or socket makes no sense: each is refused by name at once. The file is opened
// without blocking (O_NONBLOCK) and judged by fstat of the open descriptor, so a FIFO put in the
// file's place after a check cannot block either; the descriptor is then switched back to
// blocking reads (a regular file never blocks). Libraries that open files by name (matio,
// HDF5) are handed the descriptor's name in /proc/self/fd, the same open file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace mor::io {

/// Refuses, by the file's status after following links, anything but an existing regular file.
/// `what` names its role ("MatrixMarket file", "input table").
/// @throws IoError "no such <what>: '<file>'", "<what> '<file>' cannot be opened: too many levels
///         of symbolic links", "<what> '<file>' is a FIFO (named pipe), not a regular file" (or a
///         directory, a character device, a block device, a socket).
void require_regular_input(const std::filesystem::path& file, std::string_view what);

/// A regular file open for reading (see the header comment); closes it on destruction.
class InputFile {
 public:
  /// @throws IoError as require_regular_input, or naming the reason the open failed.
  InputFile(const std::filesystem::path& file, std::string_view what);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int descriptor() const noexcept { return fd_; }
  /// Size in bytes when opened.
  std::uint64_t size() const noexcept { return size_; }
  /// "/proc/self/fd/<n>": opening it opens this same file (for libraries that open by name).
  std::string descriptor_path() const;
  /// A stdio stream reading this file from its start (its own descriptor, a dup); the caller
  /// closes it. @throws IoError if it cannot be made.
  std::FILE* stream() const;

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace mor::io
