// SPDX-License-Identifier: GPL-3.0-or-later
// A thin RAII layer over the HDF5 C API: move-only handles that close their hid_t, and checks
// that turn HDF5's negative return codes into mor::IoError naming the operation, the object and
// the file. Only src/io uses it; <hdf5.h> stays inside the .cpp files of src/io.
//
// HDF5 1.10 is built thread-safe by Debian, which serializes its calls but keeps the error stack
// (and whether it is printed) per thread; hence silence_error_printing() below is per thread.
#pragma once

#include <cstdint>
#include <filesystem>
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
    if (detail::close_id(K, std::exchange(id_, -1)) < 0)
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

/// The innermost description on the calling thread's HDF5 error stack ("" if empty); clears the
/// stack. Useful when a failure is detected without a negative return code.
std::string last_error_reason();

}  // namespace mor::io::h5
