// SPDX-License-Identifier: GPL-3.0-or-later
// A thin RAII layer over the HDF5 C API: move-only handles that close their hid_t, and checks
// that turn HDF5's negative return codes into mor::IoError naming the operation, the object and
// the file. Only src/io uses it; <hdf5.h> stays inside the .cpp files of src/io.
//
// HDF5 1.10 is built thread-safe by Debian, which serializes its calls but keeps the error stack
// (and whether it is printed) per thread; hence silence_error_printing() below is per thread.
//
// Files that are written go through the layer's own POSIX file driver (write_access()), which
// never lets HDF5 see a write fail: it records the failure for the owner instead. HDF5 1.10.8
// does not survive its error paths for failed writes (a full disk): it frees a file or dataset
// whose close failed but keeps its identifier, and crashes at exit closing it again
// (H5F__close_cb; HDFGroup/hdf5#2291, fixed after 1.10.8), and it crashes in H5Ocopy when a
// write fails during the copy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace mor::io::h5 {

/// HDF5's hid_t, a 64-bit signed integer since HDF5 1.10 (checked in hdf5.cpp), spelled without
/// <hdf5.h> so that this header does not drag HDF5 types into the modules that include it.
using Id = std::int64_t;

/// What a handle refers to; selects the H5?close function.
enum class Kind { file, group, dataset, dataspace, property_list, attribute, datatype, object };

namespace detail {
/// Closes id with the close function of kind; returns HDF5's status (negative on failure).
int close_id(Kind kind, Id id) noexcept;
/// close_id() for Handle::close(): a checked call (counted by fault injection, which may make it
/// report a failure after closing).
int close_checked(Kind kind, Id id) noexcept;
/// Throws IoError "HDF5: cannot close <what>..."; out of line so that Handle stays small.
[[noreturn]] void throw_close_failure(Kind kind, std::string_view object,
                                      const std::filesystem::path& file);
}  // namespace detail

/// Owns one HDF5 identifier of kind K and closes it in the destructor (errors there are ignored:
/// destructors must not throw; call close() where a failure matters, e.g. for files, whose
/// buffered data is written at close). Move-only. An empty handle holds -1.
template <Kind K>
class Handle {
 public:
  Handle() noexcept = default;
  /// Takes ownership of id (which must be a valid identifier of kind K, or negative for empty).
  explicit Handle(Id id) noexcept : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
    }
    return *this;
  }
  ~Handle() { reset(); }

  Id get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }

  /// Closes now (no-op if empty).
  /// @throws IoError naming object and file if HDF5 reports a failure; the handle is empty anyway.
  void close(std::string_view object, const std::filesystem::path& file) {
    if (!valid()) return;
    if (detail::close_checked(K, std::exchange(id_, -1)) < 0)
      detail::throw_close_failure(K, object, file);
  }

  /// Closes now, ignoring failures (for clean-up paths).
  void reset() noexcept {
    if (valid()) detail::close_id(K, std::exchange(id_, -1));
  }

  /// Gives up ownership without closing.
  Id release() noexcept { return std::exchange(id_, -1); }

 private:
  Id id_ = -1;
};

using File = Handle<Kind::file>;
using Group = Handle<Kind::group>;
using Dataset = Handle<Kind::dataset>;
using Dataspace = Handle<Kind::dataspace>;
using PropertyList = Handle<Kind::property_list>;
using Attribute = Handle<Kind::attribute>;
using Datatype = Handle<Kind::datatype>;
/// Any object opened by H5Oopen (group, dataset or named datatype), closed by H5Oclose.
using Object = Handle<Kind::object>;

/// Turns off HDF5's printing of its error stack to stderr for the calling thread (the library
/// reports through IoError instead). Idempotent and cheap; call before HDF5 calls that may fail.
void silence_error_printing() noexcept;

/// Returns id if it is non-negative.
/// @throws IoError "HDF5: cannot <operation> '<object>' in '<file>': <HDF5's innermost reason>"
///         otherwise (object may be empty when the operation concerns the file itself).
Id check_id(Id id, std::string_view operation, std::string_view object,
            const std::filesystem::path& file);

/// Returns status (an herr_t or htri_t) if it is non-negative; otherwise throws as check_id.
int check(int status, std::string_view operation, std::string_view object,
          const std::filesystem::path& file);

/// The innermost description on the calling thread's HDF5 error stack ("" if empty), on one
/// line: a system error is given by its text ("unable to open file: No such file or directory")
/// instead of HDF5's dump of time, descriptor, buffer address and errno. Clears the stack.
/// Useful when a failure is detected without a negative return code.
std::string last_error_reason();

/// How many failures check(), check_id() and Handle::close() have thrown on the calling thread
/// so far: comparing two counts tells an HDF5 failure from a refusal of the caller's own.
std::uint64_t failure_count() noexcept;

/// The fate of one file written through write_access(), shared by its owner and the driver.
struct WriteState {
  /// errno of the first write, truncation or close of the file that failed (0: none), and what
  /// failed, on one line ("No space left on device (writing 4096 bytes at offset 8192)").
  int error = 0;
  std::string failure;
  /// Set by the first failure, or by the owner when it throws the file away. From then on the
  /// driver skips writes and truncation (and reports them done): the file is garbage, and HDF5
  /// must still be able to finish the call and close the file and every object in it.
  bool doomed = false;
};

/// A file access property list for creating (or opening) a file to write through the layer's
/// POSIX driver ("mor-posix"): pread/pwrite and flock like HDF5's sec2 driver, files identical
/// to sec2's (no driver information in the superblock). The difference: a write,
/// truncation or close that fails is reported to HDF5 as done and recorded in state, which it
/// dooms (see WriteState). So the owner must check state->error after every HDF5 call that may
/// write (creating, writing, extending, copying, closing), and throw the file away if it is set.
/// @throws IoError naming file if HDF5 refuses the driver.
PropertyList write_access(std::shared_ptr<WriteState> state, const std::filesystem::path& file);

/// A file access property list for reading an existing file through the same driver as
/// write_access() (the file is only read). HDF5 1.10.8 loops for ever, or reads past its buffer,
/// decoding a damaged global heap collection (H5HG, where variable-length strings live): the
/// driver checks every collection it reads against the HDF5 file format before HDF5 decodes it,
/// and fails that read (an IoError from the HDF5 call that needed it, naming the damage) if an
/// object in it has a stored size that ends outside the collection or does not advance the walk.
/// @throws IoError naming file if HDF5 refuses the driver.
PropertyList read_access(const std::filesystem::path& file);

/// The open identifiers of files and of the objects in them (groups, datasets, named datatypes,
/// attributes) in this process: what HDF5 would close at exit.
long open_objects();

/// Fault injection, for tests: makes a chosen HDF5 call or file write fail, so that every error
/// path can be taken in turn. Counting is always on (an atomic increment per call); failures
/// happen only when armed. Not for concurrent use.
namespace fault {
/// Restarts the count of checked calls (check(), check_id(), Handle::close()) and makes call
/// number `call` (1-based) fail as if HDF5 had returned an error; an identifier it returned is
/// closed first. 0: no failure.
void fail_call(long call);
/// Restarts the count of writes and truncations through write_access()'s driver and makes
/// number `write` (1-based) fail with errno `error` (e.g. ENOSPC: the disk is full) without
/// touching the file. 0: no failure.
void fail_write(long write, int error);
/// Checked calls, and driver writes and truncations, since the last fail_call / fail_write.
long calls() noexcept;
long writes() noexcept;
}  // namespace fault

}  // namespace mor::io::h5
