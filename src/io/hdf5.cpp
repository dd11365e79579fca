// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/hdf5.hpp"

#include <hdf5.h>

#include <string>
#include <type_traits>

#include "src/core/errors.hpp"

namespace mor::io::h5 {

static_assert(std::is_same_v<hid_t, Id>, "h5::Id must be HDF5's hid_t (HDF5 >= 1.10)");
static_assert(std::is_same_v<herr_t, int> && std::is_same_v<htri_t, int>,
              "h5::check takes herr_t and htri_t as int");

namespace {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::file:
      return "file";
    case Kind::group:
      return "group";
    case Kind::dataset:
      return "dataset";
    case Kind::dataspace:
      return "dataspace";
    case Kind::property_list:
      return "property list";
    case Kind::attribute:
      return "attribute";
    case Kind::datatype:
      return "datatype";
    case Kind::object:
      return "object";
  }
  return "identifier";
}

struct InnermostError {
  std::string description;
  std::string minor;
};

// H5Ewalk2 visits from the API call down to the function that detected the error; the last
// entry is the most specific one ("unable to open file: name = ..., errno = 2, ...").
herr_t keep_innermost(unsigned /*n*/, const H5E_error2_t* err, void* client) {
  auto* out = static_cast<InnermostError*>(client);
  out->description = err->desc != nullptr ? err->desc : "";
  char minor[256] = {};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof minor) > 0) out->minor = minor;
  return 0;
}

std::string message(std::string_view operation, std::string_view object,
                    const std::filesystem::path& file) {
  std::string m = "HDF5: cannot ";
  m += operation;
  if (!object.empty()) {
    m += " '";
    m += object;
    m += "' in";
  }
  m += " '";
  m += file.string();
  m += "'";
  const std::string reason = last_error_reason();
  if (!reason.empty()) {
    m += ": ";
    m += reason;
  }
  return m;
}

}  // namespace

namespace detail {

int close_id(Kind kind, Id id) noexcept {
  switch (kind) {
    case Kind::file:
      return H5Fclose(id);
    case Kind::group:
      return H5Gclose(id);
    case Kind::dataset:
      return H5Dclose(id);
    case Kind::dataspace:
      return H5Sclose(id);
    case Kind::property_list:
      return H5Pclose(id);
    case Kind::attribute:
      return H5Aclose(id);
    case Kind::datatype:
      return H5Tclose(id);
    case Kind::object:
      return H5Oclose(id);
  }
  return -1;
}

void throw_close_failure(Kind kind, std::string_view object, const std::filesystem::path& file) {
  throw IoError(message(std::string("close ") + kind_name(kind), object, file));
}

}  // namespace detail

void silence_error_printing() noexcept {
  // The automatic printing is a property of the (thread-local, in thread-safe builds) error
  // stack, so it is switched off once per thread.
  thread_local const bool silenced = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  static_cast<void>(silenced);
}

std::string last_error_reason() {
  InnermostError inner;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &inner);
  H5Eclear2(H5E_DEFAULT);
  if (inner.minor.empty() || inner.description.find(inner.minor) != std::string::npos)
    return inner.description;
  if (inner.description.empty()) return inner.minor;
  return inner.description + " (" + inner.minor + ")";
}

Id check_id(Id id, std::string_view operation, std::string_view object,
            const std::filesystem::path& file) {
  if (id < 0) throw IoError(message(operation, object, file));
  return id;
}

int check(int status, std::string_view operation, std::string_view object,
          const std::filesystem::path& file) {
  if (status < 0) throw IoError(message(operation, object, file));
  return status;
}

}  // namespace mor::io::h5
