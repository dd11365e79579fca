// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "src/core/errors.hpp"

namespace mor::io {

namespace fs = std::filesystem;
using mor::detail::concat;

namespace {

std::string refusal(const fs::path& path, const char* what) {
  return concat("refusing to write ", what, " '", path.string(), "': ");
}

/// Opens path for reading without blocking (a FIFO would) and takes a shared flock on it if it
/// is a regular file. Returns the descriptor holding the lock, or -1 if there is nothing to lock
/// (missing, unreadable, not a regular file, no flock on this file system).
/// @throws IoError if another process holds an exclusive flock on it (a writer).
int lock_shared_unless_written(const fs::path& path, const char* what) {
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0 || !S_ISREG(named.st_mode)) return -1;  // no device opened
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) return fd;
  const int error = errno;
  ::close(fd);
  if (error == EWOULDBLOCK)
    throw IoError(concat(refusal(path, what),
                         "another program holds it open for writing (it has a lock on the "
                         "file, as HDF5 and h5py take while they write); close it there or "
                         "name another output file"));
  return -1;
}

/// The process id written in a lock file, or 0.
long read_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  return std::strtol(text, nullptr, 10);
}

bool same_file(int fd, const fs::path& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// Claims of this process, by absolute target path: a second claim joins the first.
std::mutex registry_mutex;
std::map<std::string, std::weak_ptr<void>>& registry() {
  static std::map<std::string, std::weak_ptr<void>> claims;
  return claims;
}

}  // namespace

struct OutputLock::State {
  fs::path lock_path;
  int lock_fd = -1;
  int target_fd = -1;
  std::vector<fs::path> created_directories;  // outermost first

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    // Removed while still locked, and only if the path still names our file: a run that opened
    // it meanwhile finds its inode gone from the folder and starts over (OutputLock()).
    if (lock_fd >= 0) {
      if (same_file(lock_fd, lock_path)) ::unlink(lock_path.c_str());
      ::close(lock_fd);
    }
    if (target_fd >= 0) ::close(target_fd);
    std::error_code ignored;
    for (auto d = created_directories.rbegin(); d != created_directories.rend(); ++d)
      fs::remove(*d, ignored);  // only if empty: a committed results file keeps its folder
  }
};

OutputLock::OutputLock() noexcept = default;
OutputLock::OutputLock(OutputLock&&) noexcept = default;
OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    const std::lock_guard<std::mutex> guard(registry_mutex);
    state_ = std::move(other.state_);
  }
  return *this;
}

OutputLock::~OutputLock() {
  // Released under the registry's lock, so that a claim of another thread of this process on the
  // same path never meets the lock file half released.
  const std::lock_guard<std::mutex> guard(registry_mutex);
  state_.reset();
}

bool OutputLock::held() const noexcept {
  return state_ && state_->lock_fd >= 0;
}

fs::path OutputLock::lock_file(const fs::path& target) {
  return target.string() + ".lock";
}

OutputLock::OutputLock(const fs::path& target) {
  const char* what = "results file";
  std::error_code error;
  const fs::path absolute = fs::absolute(target, error);
  const std::string key = (error ? target : absolute).lexically_normal().string();
  const std::lock_guard<std::mutex> guard(registry_mutex);
  auto& claims = registry();
  if (auto it = claims.find(key); it != claims.end()) {
    if (auto shared = it->second.lock()) {
      state_ = std::static_pointer_cast<State>(shared);
      return;
    }
    claims.erase(it);
  }

  auto state = std::make_shared<State>();
  const fs::path parent = target.parent_path();
  if (!parent.empty()) {
    std::vector<fs::path> missing;
    for (fs::path p = parent; !p.empty() && !fs::exists(p, error); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    fs::create_directories(parent, error);
    if (error) return;  // unclaimed: the writer names the folder it cannot make
    state->created_directories.assign(missing.rbegin(), missing.rend());
  }

  state->lock_path = lock_file(target);
  // A few attempts: each fails only if the holder removed its lock file between our open() and
  // flock() (it was ending), which a retry sees.
  for (int attempt = 0; attempt < 100 && state->lock_fd < 0; ++attempt) {
    const int fd =
        ::open(state->lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) break;  // a read-only folder: unclaimed, the writer says why it cannot write
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int reason = errno;
      const long pid = reason == EWOULDBLOCK ? read_pid(fd) : 0;
      ::close(fd);
      if (reason != EWOULDBLOCK) break;  // no flock here (ENOLCK, EOPNOTSUPP): unclaimed
      throw IoError(concat(refusal(target, what), "another mor run",
                           pid > 0 ? concat(" (process ", pid, ")") : std::string(),
                           " is writing it (it holds ", state->lock_path.string(),
                           "); wait for it to end or name another output file"));
    }
    if (same_file(fd, state->lock_path)) {
      state->lock_fd = fd;
    } else {
      ::close(fd);
    }
  }
  if (state->lock_fd >= 0) {
    const std::string pid = concat(::getpid(), "\n");
    if (::ftruncate(state->lock_fd, 0) == 0) {
      [[maybe_unused]] const ssize_t n = ::pwrite(state->lock_fd, pid.data(), pid.size(), 0);
    }
  }
  // Held to the end: a program that opens the old file for writing meanwhile is refused by its
  // own HDF5 (it cannot take its exclusive lock), instead of writing into a file we replace.
  state->target_fd = lock_shared_unless_written(target, what);
  claims[key] = state;
  state_ = std::move(state);
}

bool remove_stale_lock_file(const fs::path& lock_file) noexcept {
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  // Taken, it is nobody's: removed while held, and only if the name still is this file.
  const bool removed = ::flock(fd, LOCK_EX | LOCK_NB) == 0 && same_file(fd, lock_file) &&
                       ::unlink(lock_file.c_str()) == 0;
  ::close(fd);
  return removed;
}

void require_not_held_for_writing(const fs::path& path, const char* what) {
  const int fd = lock_shared_unless_written(path, what);
  if (fd >= 0) ::close(fd);
}

}  // namespace mor::io
