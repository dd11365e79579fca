// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "src/core/errors.hpp"

namespace mor::io {

namespace fs = std::filesystem;
using detail::concat;

namespace {

/// strerror's text, lower case first ("too many levels of symbolic links").
std::string errno_text(int err) {
  std::string text = std::error_code(err, std::generic_category()).message();
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  return text;
}

/// "a FIFO (named pipe)" etc. for a mode that is not a regular file.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void refuse(const fs::path& file, std::string_view what, int err) {
  if (err == ENOENT) throw IoError(concat("no such ", what, ": '", file.string(), "'"));
  throw IoError(concat(what, " '", file.string(), "' cannot be opened: ", errno_text(err)));
}

[[noreturn]] void refuse_kind(const fs::path& file, std::string_view what, mode_t mode) {
  throw IoError(concat(what, " '", file.string(), "' is ", kind_of(mode),
                       ", not a regular file; name a file"));
}

}  // namespace

void require_regular_input(const fs::path& file, std::string_view what) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) refuse(file, what, errno);
  if (!S_ISREG(st.st_mode)) refuse_kind(file, what, st.st_mode);
}

InputFile::InputFile(const fs::path& file, std::string_view what) : file_(file) {
  // Judged before the open too: a FIFO with no writer would open without blocking here, but
  // the message is the same either way.
  require_regular_input(file, what);
  fd_ = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) refuse(file, what, errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    refuse(file, what, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    refuse_kind(file, what, st.st_mode);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::descriptor_path() const {
  return "/proc/self/fd/" + std::to_string(fd_);
}

std::FILE* InputFile::stream() const {
  const int copy = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  std::FILE* f = copy >= 0 ? ::fdopen(copy, "r") : nullptr;
  if (f == nullptr) {
    const int err = errno;
    if (copy >= 0) ::close(copy);
    throw IoError(concat("cannot read '", file_.string(), "': ", errno_text(err)));
  }
  // A dup shares the file offset: read from the start whatever was read before.
  std::rewind(f);
  return f;
}

}  // namespace mor::io
