// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/results.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/core/errors.hpp"
#include "src/io/file_claims.hpp"

namespace mor::io {

namespace fs = std::filesystem;
using h5::check;
using h5::check_id;

namespace {

using detail::concat;

// Appending instead of "'" + s + "'" sidesteps a false -Wrestrict of GCC 12.
std::string quoted(const fs::path& p) {
  std::string s = "'";
  s += p.string();
  s += '\'';
  return s;
}

/// Path components of an HDF5 path, ignoring empty ones ("/a//b/" -> a, b; "/" -> none).
std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    const std::size_t end = std::min(path.find('/', begin), path.size());
    if (end > begin) parts.push_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

void require_path(const std::string& path, const char* what) {
  require(!path.empty(), what, ": empty HDF5 path (use \"/\" for the root group)");
}

const char* type_name(H5I_type_t type) {
  switch (type) {
    case H5I_GROUP:
      return "a group";
    case H5I_DATASET:
      return "a dataset";
    case H5I_DATATYPE:
      return "a named datatype";
    default:
      return "another kind of object";
  }
}

/// The kind of object at path (H5I_GROUP, H5I_DATASET, H5I_DATATYPE), or H5I_BADID if there is
/// none. Walks the path so that a missing intermediate group or a dataset in the middle of the
/// path means "absent" instead of an HDF5 error.
H5I_type_t object_type(hid_t file, std::string_view path, const fs::path& filename) {
  H5I_type_t type = H5I_GROUP;  // the root
  std::string prefix;
  for (const std::string_view part : components(path)) {
    if (type != H5I_GROUP) return H5I_BADID;  // a dataset in the middle of the path
    prefix += '/';
    prefix += part;
    if (check(H5Lexists(file, prefix.c_str(), H5P_DEFAULT), "look up", prefix, filename) == 0)
      return H5I_BADID;
    // A dangling soft or external link exists as a link but not as an object.
    if (check(H5Oexists_by_name(file, prefix.c_str(), H5P_DEFAULT), "look up", prefix, filename) ==
        0)
      return H5I_BADID;
    const h5::Object object(
        check_id(H5Oopen(file, prefix.c_str(), H5P_DEFAULT), "open object", prefix, filename));
    type = H5Iget_type(object.get());
  }
  return type;
}

/// Throws IoError unless a new object (what: "group", "dataset", ...) can be created at path:
/// nothing may be there yet, and every existing ancestor must be a group, so that the caller
/// gets "'/a' is a dataset" instead of HDF5's "object not found".
void require_free(hid_t file, const std::string& path, const fs::path& filename, const char* what) {
  const auto parts = components(path);
  std::string prefix;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    prefix += '/';
    prefix += parts[k];
    const H5I_type_t type = object_type(file, prefix, filename);
    if (type == H5I_BADID) return;
    if (k + 1 == parts.size())
      throw IoError(concat("cannot create ", what, " '", path, "' in ", quoted(filename),
                           ": the path exists already as ", type_name(type)));
    if (type != H5I_GROUP)
      throw IoError(concat("cannot create ", what, " '", path, "' in ", quoted(filename), ": '",
                           prefix, "' is ", type_name(type), ", not a group"));
  }
  throw IoError(concat("cannot create ", what, " at the root of ", quoted(filename)));
}

/// Link creation properties: missing intermediate groups are created, names are UTF-8.
h5::PropertyList link_creation_list(const fs::path& filename) {
  h5::PropertyList lcpl(
      check_id(H5Pcreate(H5P_LINK_CREATE), "create link property list for", "", filename));
  check(H5Pset_create_intermediate_group(lcpl.get(), 1), "configure link creation for", "",
        filename);
  check(H5Pset_char_encoding(lcpl.get(), H5T_CSET_UTF8), "configure link creation for", "",
        filename);
  return lcpl;
}

h5::Datatype utf8_variable_string(const fs::path& filename) {
  h5::Datatype type(check_id(H5Tcopy(H5T_C_S1), "create string type for", "", filename));
  check(H5Tset_size(type.get(), H5T_VARIABLE), "create string type for", "", filename);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "create string type for", "", filename);
  return type;
}

h5::Dataspace simple_space(std::initializer_list<hsize_t> dims, const fs::path& filename) {
  return h5::Dataspace(
      check_id(H5Screate_simple(static_cast<int>(dims.size()), std::data(dims), nullptr),
               "create dataspace for", "", filename));
}

/// Creates attribute name on object with the given file type and shape and writes data (in
/// memory type mem_type) to it.
void write_attribute(hid_t file, const fs::path& filename, const std::string& object,
                     const std::string& name, hid_t file_type, hid_t mem_type, hid_t space,
                     const void* data) {
  const std::string subject = concat("attribute '", name, "' of");
  h5::PropertyList acpl(
      check_id(H5Pcreate(H5P_ATTRIBUTE_CREATE), concat("create ", subject), object, filename));
  check(H5Pset_char_encoding(acpl.get(), H5T_CSET_UTF8), concat("create ", subject), object,
        filename);
  h5::Attribute attribute(check_id(H5Acreate_by_name(file, object.c_str(), name.c_str(), file_type,
                                                     space, acpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                                   concat("create ", subject), object, filename));
  check(H5Awrite(attribute.get(), mem_type, data), concat("write ", subject), object, filename);
  attribute.close(object, filename);
}

template <class T>
void write_number_attribute(hid_t file, const fs::path& filename, const std::string& object,
                            const std::string& name, const T* values, std::size_t count,
                            bool scalar) {
  constexpr bool is_double = std::is_same_v<T, double>;
  const hid_t file_type = is_double ? H5T_IEEE_F64LE : H5T_STD_I64LE;
  const hid_t mem_type = is_double ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  const h5::Dataspace space =
      scalar ? h5::Dataspace(check_id(H5Screate(H5S_SCALAR), "create dataspace for", "", filename))
             : simple_space({static_cast<hsize_t>(count)}, filename);
  // HDF5 rejects a null buffer even when there is nothing to write.
  static const T none{};
  write_attribute(file, filename, object, name, file_type, mem_type, space.get(),
                  count == 0 ? &none : values);
}

void set_attribute_in(hid_t file, const fs::path& filename, const std::string& object,
                      const std::string& name, const AttributeValue& value) {
  const std::string subject = concat("attribute '", name, "' of");
  if (check(H5Aexists_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT),
            concat("look up ", subject), object, filename) > 0)
    check(H5Adelete_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT),
          concat("replace ", subject), object, filename);
  if (const auto* s = std::get_if<std::string>(&value)) {
    const h5::Datatype type = utf8_variable_string(filename);
    const h5::Dataspace space(
        check_id(H5Screate(H5S_SCALAR), "create dataspace for", "", filename));
    const char* text = s->c_str();
    write_attribute(file, filename, object, name, type.get(), type.get(), space.get(), &text);
  } else if (const auto* d = std::get_if<double>(&value)) {
    write_number_attribute(file, filename, object, name, d, 1, true);
  } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
    write_number_attribute(file, filename, object, name, i, 1, true);
  } else if (const auto* dv = std::get_if<std::vector<double>>(&value)) {
    write_number_attribute(file, filename, object, name, dv->data(), dv->size(), false);
  } else if (const auto* iv = std::get_if<std::vector<std::int64_t>>(&value)) {
    write_number_attribute(file, filename, object, name, iv->data(), iv->size(), false);
  }
}

std::string read_string_attribute(hid_t attribute, hid_t file_type, const std::string& object,
                                  const std::string& subject, const fs::path& filename) {
  if (check(H5Tis_variable_str(file_type), concat("inspect ", subject), object, filename) > 0) {
    h5::Datatype mem_type(check_id(H5Tcopy(H5T_C_S1), "create string type for", "", filename));
    check(H5Tset_size(mem_type.get(), H5T_VARIABLE), "create string type for", "", filename);
    check(H5Tset_cset(mem_type.get(), H5Tget_cset(file_type)), "create string type for", "",
          filename);
    // HDF5 allocates the text; freed however the read ends.
    std::unique_ptr<char*, void (*)(char**)> text(new char*(nullptr), [](char** p) {
      H5free_memory(*p);
      delete p;
    });
    check(H5Aread(attribute, mem_type.get(), text.get()), concat("read ", subject), object,
          filename);
    return *text != nullptr ? *text : "";
  }
  const std::size_t size = H5Tget_size(file_type);
  if (size == 0) check(-1, concat("inspect ", subject), object, filename);
  std::string buffer(size, '\0');
  check(H5Aread(attribute, file_type, buffer.data()), concat("read ", subject), object, filename);
  buffer.resize(std::min(buffer.find('\0'), buffer.size()));
  if (H5Tget_strpad(file_type) == H5T_STR_SPACEPAD) buffer.erase(buffer.find_last_not_of(' ') + 1);
  return buffer;
}

template <class T>
AttributeValue read_number_attribute(hid_t attribute, bool scalar, hssize_t count,
                                     const std::string& object, const std::string& subject,
                                     const fs::path& filename) {
  const hid_t mem_type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  if (scalar) {
    T value{};
    check(H5Aread(attribute, mem_type, &value), concat("read ", subject), object, filename);
    return value;
  }
  std::vector<T> values(static_cast<std::size_t>(count));
  if (count > 0)
    check(H5Aread(attribute, mem_type, values.data()), concat("read ", subject), object, filename);
  return values;
}

/// A byte count for a message: exact up to 9e18, else in scientific notation (a damaged
/// header's count times its element size can pass 2^64; converting that to an integer is
/// undefined, and printed -9223372036854775808 here until fuzz_results found it).
std::string byte_count(long double bytes) {
  if (bytes < 9e18L) return std::to_string(static_cast<long long>(bytes));
  std::ostringstream out;
  out << std::scientific << std::setprecision(3) << static_cast<double>(bytes);
  return out.str();
}

AttributeValue read_attribute(hid_t file, const fs::path& filename, const std::string& object,
                              const std::string& name) {
  require_path(object, "attribute");
  require(!name.empty(), "attribute of ", object, ": empty attribute name");
  if (object_type(file, object, filename) == H5I_BADID)
    throw IoError(concat("no object '", object, "' in ", quoted(filename),
                         " (looking for its attribute '", name, "')"));
  const std::string subject = concat("attribute '", name, "' of");
  if (check(H5Aexists_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT),
            concat("look up ", subject), object, filename) == 0)
    throw IoError(concat("no attribute '", name, "' on '", object, "' in ", quoted(filename)));
  const h5::Attribute attribute(
      check_id(H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
               concat("open ", subject), object, filename));
  const h5::Datatype type(
      check_id(H5Aget_type(attribute.get()), concat("inspect ", subject), object, filename));
  const h5::Dataspace space(
      check_id(H5Aget_space(attribute.get()), concat("inspect ", subject), object, filename));
  const H5S_class_t shape = H5Sget_simple_extent_type(space.get());
  const int rank =
      check(H5Sget_simple_extent_ndims(space.get()), concat("inspect ", subject), object, filename);
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  {
    // Attributes are stored uncompressed: a damaged header claiming more than the file holds
    // is refused before anything is allocated for it.
    const long double claimed = static_cast<long double>(std::max<hssize_t>(count, 1)) *
                                static_cast<long double>(H5Tget_size(type.get()));
    if (const auto file_bytes = implausible_claim(filename, claimed, 1, 65536))
      throw IoError(concat(subject, " '", object, "' in ", quoted(filename), " claims ",
                           byte_count(claimed), " bytes, more than a file of ", *file_bytes,
                           " bytes holds (damaged file)"));
  }
  const bool scalar = shape == H5S_SCALAR;
  const bool one_d = shape == H5S_SIMPLE && rank == 1;
  switch (H5Tget_class(type.get())) {
    case H5T_STRING:
      if (scalar)
        return read_string_attribute(attribute.get(), type.get(), object, subject, filename);
      break;
    case H5T_FLOAT:
      if (scalar || one_d)
        return read_number_attribute<double>(attribute.get(), scalar, count, object, subject,
                                             filename);
      break;
    case H5T_INTEGER:
      if (scalar || one_d)
        return read_number_attribute<std::int64_t>(attribute.get(), scalar, count, object, subject,
                                                   filename);
      break;
    default:
      break;
  }
  throw IoError(concat(subject, " '", object, "' in ", quoted(filename),
                       " is neither a string, a number nor a 1-D array of numbers"));
}

const char* value_type_name(const AttributeValue& value) {
  constexpr std::array<const char*, 5> names = {"a string", "a double", "an int64",
                                                "an array of doubles", "an array of int64"};
  return names[value.index()];
}

std::size_t next_prime(std::size_t n) {
  auto is_prime = [](std::size_t m) {
    if (m < 2) return false;
    for (std::size_t d = 2; d * d <= m; ++d)
      if (m % d == 0) return false;
    return true;
  };
  while (!is_prime(n)) ++n;
  return n;
}

herr_t collect_link_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/,
                         void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

herr_t collect_attribute_name(hid_t /*object*/, const char* name, const H5A_info_t* /*info*/,
                              void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RowStream

RowStream::RowStream(ResultsWriter& writer, h5::Dataset dataset, std::string path, fs::path file,
                     Index width)
    : writer_(&writer),
      dataset_(std::move(dataset)),
      path_(std::move(path)),
      file_(std::move(file)),
      width_(width) {
  row_space_ = simple_space({static_cast<hsize_t>(width_)}, file_);
}

RowStream::~RowStream() = default;

void RowStream::append(const Eigen::Ref<const Vector>& row) {
  require(row.size() == width_, "RowStream::append to '", path_, "': row of size ", row.size(),
          ", the stream has width ", width_);
  append(row.data());
}

void RowStream::append(const double* row) {
  require(row != nullptr, "RowStream::append to '", path_, "': null row");
  if (!dataset_.valid())
    throw IoError(concat("row stream '", path_, "' of ", quoted(file_),
                         " is closed: its writer was committed or discarded"));
  h5::silence_error_printing();
  const hid_t dataset = dataset_.get();
  const auto rows = static_cast<hsize_t>(rows_);
  const auto width = static_cast<hsize_t>(width_);
  try {
    // Extending by exactly one row keeps the dataset's extent equal to the rows written, so a
    // file flushed at any moment holds no fill-value rows. Growing the slowest dimension only
    // changes the dataspace message; cached chunks are not touched.
    const std::array<hsize_t, 2> grown = {rows + 1, width};
    check(H5Dset_extent(dataset, grown.data()), "extend row stream", path_, file_);
    const h5::Dataspace file_space(
        check_id(H5Dget_space(dataset), "get dataspace of row stream", path_, file_));
    const std::array<hsize_t, 2> start = {rows, 0};
    const std::array<hsize_t, 2> count = {1, width};
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                              nullptr),
          "select a row of row stream", path_, file_);
    check(
        H5Dwrite(dataset, H5T_NATIVE_DOUBLE, row_space_.get(), file_space.get(), H5P_DEFAULT, row),
        "append a row to row stream", path_, file_);
  } catch (...) {
    // Every call above is HDF5's: the file's state is unknown (a chunk may have been written
    // half), so the writer is thrown away, and this stream closed with it.
    writer_->discard();
    throw;
  }
  writer_->throw_if_write_failed();  // evicting a chunk may have filled the disk
  ++rows_;
}

void RowStream::close() {
  row_space_.reset();
  dataset_.close(path_, file_);
}

// ---------------------------------------------------------------------------------------------
// ResultsWriter

ResultsWriter::ResultsWriter(const fs::path& final_path)
    : final_path_(final_path),
      temporary_path_(final_path.string() + ".tmp-" + std::to_string(::getpid())),
      state_(std::make_shared<h5::WriteState>()) {
  require(!final_path.empty(), "ResultsWriter: empty file path");
  h5::silence_error_printing();
  lock_ = OutputLock(final_path_);  // before the checks: nothing else changes the file meanwhile
  require_replaceable_by_results(final_path_);
  const fs::path parent = final_path_.parent_path();
  if (!parent.empty()) {
    // The directories that are new, to be removed again if nothing is committed.
    std::error_code error;
    std::vector<fs::path> missing;
    for (fs::path p = parent; !p.empty() && !fs::exists(p, error); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    fs::create_directories(parent, error);
    if (error)
      throw IoError(concat("cannot create directory ", quoted(parent), " for results file ",
                           quoted(final_path_), ": ", error.message()));
    created_directories_.assign(missing.rbegin(), missing.rend());
  }
  remove_stale_temporaries(final_path_);
  h5::PropertyList fapl = h5::write_access(state_, final_path_);
  // Object formats of HDF5 1.8 at least: they move attributes that do not fit the 64 KiB object
  // header into dense storage, so long vector attributes work; no 1.10-only feature is needed,
  // so HDF5 1.8+ (and any h5py) can read the files.
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST),
        "set format bounds for", "", final_path_);
  // SEMI: closing the file fails while objects are open, instead of leaving it open behind our
  // back; commit() closes every object first, so a failure there is a real error.
  check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_SEMI), "set close degree for", "", final_path_);
  // A temporary file that H5Fcreate made before failing is removed; one that was there before
  // (another writer of this process with the same final path has it open) is not ours.
  std::error_code ignored;
  const bool existed = fs::exists(temporary_path_, ignored);
  try {
    file_ = h5::File(
        check_id(H5Fcreate(temporary_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                 "create file", "", temporary_path_));
  } catch (...) {
    if (!existed) fs::remove(temporary_path_, ignored);
    throw;
  }
  try {
    set_attribute("/", "format", std::string(kResultsFormat));
    set_attribute("/", "format_version", kResultsFormatVersion);
  } catch (...) {
    discard();
    throw;
  }
}

ResultsWriter::ResultsWriter(ResultsWriter&& other) noexcept
    : final_path_(std::move(other.final_path_)),
      temporary_path_(std::move(other.temporary_path_)),
      created_directories_(std::move(other.created_directories_)),
      lock_(std::move(other.lock_)),
      state_(std::move(other.state_)),
      file_(std::move(other.file_)),
      streams_(std::move(other.streams_)) {
  for (auto& stream : streams_) stream->writer_ = this;
}

ResultsWriter& ResultsWriter::operator=(ResultsWriter&& other) noexcept {
  if (this != &other) {
    if (file_.valid()) discard();
    final_path_ = std::move(other.final_path_);
    temporary_path_ = std::move(other.temporary_path_);
    created_directories_ = std::move(other.created_directories_);
    lock_ = std::move(other.lock_);
    state_ = std::move(other.state_);
    file_ = std::move(other.file_);
    streams_ = std::move(other.streams_);
    for (auto& stream : streams_) stream->writer_ = this;
  }
  return *this;
}

ResultsWriter::~ResultsWriter() {
  if (file_.valid()) discard();
}

void ResultsWriter::discard() noexcept {
  if (state_) state_->doomed = true;
  for (auto& stream : streams_) {
    stream->row_space_.reset();
    stream->dataset_.reset();
  }
  file_.reset();
  std::error_code ignored;
  fs::remove(temporary_path_, ignored);
  lock_ = OutputLock();  // the lock file goes now, not when the writer object dies
  // Deepest first; a directory that is not empty (another file arrived meanwhile) stays.
  for (auto d = created_directories_.rbegin(); d != created_directories_.rend(); ++d)
    fs::remove(*d, ignored);
  created_directories_.clear();
}

template <class F>
void ResultsWriter::guarded(F&& f) {
  const std::uint64_t failures = h5::failure_count();
  try {
    f();
  } catch (...) {
    if (h5::failure_count() != failures || state_->error != 0) discard();
    throw;
  }
  throw_if_write_failed();
}

void ResultsWriter::throw_if_write_failed() {
  if (state_->error == 0) return;
  const std::string reason = state_->failure;
  discard();
  throw IoError(concat("cannot write results file ", quoted(final_path_), ": ", reason));
}

void ResultsWriter::require_open(const char* operation) const {
  if (!file_.valid())
    throw IoError(concat("ResultsWriter::", operation, ": the writer of ", quoted(final_path_),
                         " is no longer open (committed, failed or moved from)"));
}

void ResultsWriter::create_group(const std::string& path) {
  require_path(path, "ResultsWriter::create_group");
  require_open("create_group");
  h5::silence_error_printing();
  guarded([&] {
    if (object_type(file_.get(), path, final_path_) == H5I_GROUP) return;
    require_free(file_.get(), path, final_path_, "group");
    const h5::PropertyList lcpl = link_creation_list(final_path_);
    h5::Group group(
        check_id(H5Gcreate2(file_.get(), path.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                 "create group", path, final_path_));
    group.close(path, final_path_);
  });
}

void ResultsWriter::set_attribute(const std::string& object_path, const std::string& name,
                                  const AttributeValue& value) {
  require_path(object_path, "ResultsWriter::set_attribute");
  require(!name.empty(), "ResultsWriter::set_attribute on '", object_path,
          "': empty attribute name");
  require_open("set_attribute");
  h5::silence_error_printing();
  guarded([&] {
    if (object_type(file_.get(), object_path, final_path_) == H5I_BADID)
      throw IoError(concat("cannot set attribute '", name, "': no object '", object_path, "' in ",
                           quoted(final_path_)));
    set_attribute_in(file_.get(), final_path_, object_path, name, value);
  });
}

namespace {

/// Creates a contiguous float64 dataset of the given dims at path and writes data (row-major).
void write_dense(hid_t file, const fs::path& filename, const std::string& path,
                 std::initializer_list<hsize_t> dims, const double* data) {
  require_free(file, path, filename, "dataset");
  const h5::Dataspace space = simple_space(dims, filename);
  const h5::PropertyList lcpl = link_creation_list(filename);
  h5::Dataset dataset(check_id(H5Dcreate2(file, path.c_str(), H5T_IEEE_F64LE, space.get(),
                                          lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                               "create dataset", path, filename));
  std::size_t size = 1;
  for (const hsize_t d : dims) size *= d;
  if (size > 0)
    check(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
          "write dataset", path, filename);
  dataset.close(path, filename);
}

}  // namespace

void ResultsWriter::write_vector(const std::string& path, const Vector& v) {
  require_path(path, "ResultsWriter::write_vector");
  require_open("write_vector");
  h5::silence_error_printing();
  guarded([&] {
    write_dense(file_.get(), final_path_, path, {static_cast<hsize_t>(v.size())}, v.data());
  });
}

void ResultsWriter::write_matrix(const std::string& path, const Matrix& A) {
  require_path(path, "ResultsWriter::write_matrix");
  require_open("write_matrix");
  h5::silence_error_printing();
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = A;
  guarded([&] {
    write_dense(file_.get(), final_path_, path,
                {static_cast<hsize_t>(A.rows()), static_cast<hsize_t>(A.cols())}, row_major.data());
  });
}

void ResultsWriter::write_integers(const std::string& path, const std::vector<std::int64_t>& v) {
  require_path(path, "ResultsWriter::write_integers");
  require_open("write_integers");
  h5::silence_error_printing();
  guarded([&] {
    const fs::path& filename = final_path_;
    require_free(file_.get(), path, filename, "dataset");
    const h5::Dataspace space = simple_space({static_cast<hsize_t>(v.size())}, filename);
    const h5::PropertyList lcpl = link_creation_list(filename);
    h5::Dataset dataset(check_id(H5Dcreate2(file_.get(), path.c_str(), H5T_STD_I64LE, space.get(),
                                            lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                                 "create dataset", path, filename));
    if (!v.empty())
      check(H5Dwrite(dataset.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
            "write dataset", path, filename);
    dataset.close(path, filename);
  });
}

void ResultsWriter::write_strings(const std::string& path, const std::vector<std::string>& v) {
  require_path(path, "ResultsWriter::write_strings");
  require_open("write_strings");
  h5::silence_error_printing();
  guarded([&] {
    const fs::path& filename = final_path_;
    require_free(file_.get(), path, filename, "dataset");
    const h5::Datatype type = utf8_variable_string(filename);
    const h5::Dataspace space = simple_space({static_cast<hsize_t>(v.size())}, filename);
    const h5::PropertyList lcpl = link_creation_list(filename);
    h5::Dataset dataset(check_id(H5Dcreate2(file_.get(), path.c_str(), type.get(), space.get(),
                                            lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
                                 "create dataset", path, filename));
    std::vector<const char*> pointers;
    pointers.reserve(v.size());
    for (const auto& text : v) pointers.push_back(text.c_str());
    if (!v.empty())
      check(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
            "write dataset", path, filename);
    dataset.close(path, filename);
  });
}

namespace {

/// Runs f inside an HDF5 iteration callback: an exception must not cross HDF5's C frames, so it
/// is kept in error (rethrown by the caller) and stops the iteration.
template <class F>
herr_t keeping_exception(std::exception_ptr& error, F&& f) {
  try {
    f();
    return 0;
  } catch (...) {
    error = std::current_exception();
    return -1;
  }
}

/// Copying the attributes of one object: the open target object, its path, the file's name.
struct AttributeCopy {
  hid_t target;
  const std::string& object;
  const fs::path& file;
  std::exception_ptr error;
};

herr_t copy_attribute(hid_t source, const char* name, const H5A_info_t* /*info*/, void* data) {
  auto& copy = *static_cast<AttributeCopy*>(data);
  return keeping_exception(copy.error, [&] {
    const std::string subject = concat("copy attribute '", name, "' to");
    const auto checked_id = [&](hid_t id) { return check_id(id, subject, copy.object, copy.file); };
    const h5::Attribute in(checked_id(H5Aopen(source, name, H5P_DEFAULT)));
    const h5::Datatype file_type(checked_id(H5Aget_type(in.get())));
    const h5::Dataspace space(checked_id(H5Aget_space(in.get())));
    const h5::Datatype memory_type(checked_id(H5Tget_native_type(file_type.get(), H5T_DIR_ASCEND)));
    const hssize_t count = H5Sget_simple_extent_npoints(space.get());
    std::vector<unsigned char> buffer(static_cast<std::size_t>(std::max<hssize_t>(count, 1)) *
                                      H5Tget_size(memory_type.get()));
    // Variable-length strings read into buffer are HDF5's memory until reclaimed, whatever
    // happens after the read (the buffer starts zeroed, so a read that failed half way is
    // reclaimed too).
    struct Reclaim {
      hid_t type, space;
      void* data;
      bool variable;
      ~Reclaim() {
        if (variable) H5Dvlen_reclaim(type, space, H5P_DEFAULT, data);
      }
    } reclaim{memory_type.get(), space.get(), buffer.data(),
              H5Tdetect_class(memory_type.get(), H5T_VLEN) > 0 ||
                  H5Tis_variable_str(memory_type.get()) > 0};
    check(H5Aread(in.get(), memory_type.get(), buffer.data()), subject, copy.object, copy.file);
    h5::Attribute out(checked_id(
        H5Acreate2(copy.target, name, file_type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT)));
    check(H5Awrite(out.get(), memory_type.get(), buffer.data()), subject, copy.object, copy.file);
    out.close(copy.object, copy.file);
  });
}

/// Copying the attributes of every object of a source file into its copy at group.
struct ObjectCopy {
  hid_t source, target;
  const std::string& group;
  const fs::path &source_file, &file;
  std::exception_ptr error;
};

void copy_attributes_of(ObjectCopy& copy, const char* name) {
  const std::string object = std::string(name) == "." ? copy.group : copy.group + "/" + name;
  const h5::Object from(
      check_id(H5Oopen(copy.source, name, H5P_DEFAULT), "open object", name, copy.source_file));
  const h5::Object to(check_id(H5Oopen(copy.target, object.c_str(), H5P_DEFAULT), "open object",
                               object, copy.file));
  AttributeCopy attributes{to.get(), object, copy.file, nullptr};
  hsize_t index = 0;
  const herr_t status =
      H5Aiterate2(from.get(), H5_INDEX_NAME, H5_ITER_INC, &index, copy_attribute, &attributes);
  if (attributes.error) std::rethrow_exception(attributes.error);
  check(status, "copy the attributes of", object, copy.file);
}

herr_t copy_attributes_of_link(hid_t /*group*/, const char* name, const H5L_info_t* info,
                               void* data) {
  auto& copy = *static_cast<ObjectCopy*>(data);
  if (info->type != H5L_TYPE_HARD) return 0;
  return keeping_exception(copy.error, [&] { copy_attributes_of(copy, name); });
}

}  // namespace

void ResultsWriter::copy_file_into(const fs::path& source, const std::string& group) {
  require_path(group, "ResultsWriter::copy_file_into");
  require_open("copy_file_into");
  { const ResultsReader check_format(source); }  // a foreign or broken file is refused here
  h5::silence_error_printing();
  guarded([&] {
    const fs::path& filename = final_path_;
    require_free(file_.get(), group, filename, "group");
    const h5::File src(
        check_id(H5Fopen(source.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open file", "", source));
    const h5::PropertyList lcpl = link_creation_list(filename);
    // HDF5 1.10.8 crashes in H5Ocopy on an object whose attributes are stored densely (more than
    // eight, one of them a variable-length string), as the groups of a results file are
    // (HDFGroup/hdf5#2414, fixed in 1.14.4). So the objects are copied without their attributes,
    // and the attributes are copied one by one afterwards.
    const h5::PropertyList ocpypl(
        check_id(H5Pcreate(H5P_OBJECT_COPY), "create copy property list for", group, filename));
    check(H5Pset_copy_object(ocpypl.get(), H5O_COPY_WITHOUT_ATTR_FLAG), "configure copy of", group,
          filename);
    check(H5Ocopy(src.get(), ".", file_.get(), group.c_str(), ocpypl.get(), lcpl.get()),
          concat("copy ", quoted(source), " into group"), group, filename);
    ObjectCopy copy{src.get(), file_.get(), group, source, filename, nullptr};
    copy_attributes_of(copy, ".");
    const herr_t status =
        H5Lvisit(src.get(), H5_INDEX_NAME, H5_ITER_INC, copy_attributes_of_link, &copy);
    if (copy.error) std::rethrow_exception(copy.error);
    check(status, concat("copy the attributes of ", quoted(source), " into group"), group,
          filename);
  });
}

RowStream& ResultsWriter::open_row_stream(const std::string& path, Index width, int deflate_level) {
  require_path(path, "ResultsWriter::open_row_stream");
  require(width >= 1, "ResultsWriter::open_row_stream '", path, "': width ", width,
          " must be at least 1");
  require(deflate_level >= 0 && deflate_level <= 9, "ResultsWriter::open_row_stream '", path,
          "': deflate level ", deflate_level, " is not in 0..9");
  require_open("open_row_stream");
  h5::silence_error_printing();
  if (deflate_level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
    throw IoError(concat("cannot create row stream '", path, "' in ", quoted(final_path_),
                         ": this HDF5 library has no deflate filter"));
  guarded([&] {
    const fs::path& filename = final_path_;
    require_free(file_.get(), path, filename, "row stream");

    // About 1 MiB (2^17 doubles) per chunk: large enough for deflate to work well and for few
    // chunk-index entries, small enough that reading a few rows decompresses little.
    constexpr hsize_t kChunkDoubles = hsize_t{1} << 17;
    const auto w = static_cast<hsize_t>(width);
    const hsize_t rows_per_chunk = std::clamp<hsize_t>(kChunkDoubles / w, 1, 1024);
    const hsize_t cols_per_chunk = std::min(w, kChunkDoubles);
    const hsize_t chunks_per_band = (w + cols_per_chunk - 1) / cols_per_chunk;
    const std::size_t chunk_bytes = rows_per_chunk * cols_per_chunk * sizeof(double);

    const std::array<hsize_t, 2> dims = {0, w};
    const std::array<hsize_t, 2> max_dims = {H5S_UNLIMITED, w};
    const h5::Dataspace space(check_id(H5Screate_simple(2, dims.data(), max_dims.data()),
                                       "create dataspace for", path, filename));

    h5::PropertyList dcpl(
        check_id(H5Pcreate(H5P_DATASET_CREATE), "create dataset properties for", path, filename));
    const std::array<hsize_t, 2> chunk = {rows_per_chunk, cols_per_chunk};
    check(H5Pset_chunk(dcpl.get(), 2, chunk.data()), "set chunking of", path, filename);
    if (deflate_level > 0) {
      // Shuffle groups the bytes of equal significance, so the slowly varying sign and exponent
      // bytes of neighbouring doubles compress well.
      check(H5Pset_shuffle(dcpl.get()), "set shuffle filter of", path, filename);
      check(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(deflate_level)),
            "set deflate filter of", path, filename);
    }

    // The cache holds the row-band being filled and the one before it (so that the band just
    // completed is evicted, compressed and written once, when the next band pushes it out), and
    // has a prime number of hash slots ~100x the chunks it holds, as HDF5 recommends, so that
    // the chunks of a band never collide.
    const hsize_t cached_chunks = 2 * chunks_per_band;
    h5::PropertyList dapl(
        check_id(H5Pcreate(H5P_DATASET_ACCESS), "create dataset access list for", path, filename));
    check(H5Pset_chunk_cache(dapl.get(), next_prime(100 * cached_chunks),
                             cached_chunks * chunk_bytes + chunk_bytes, H5D_CHUNK_CACHE_W0_DEFAULT),
          "set chunk cache of", path, filename);

    const h5::PropertyList lcpl = link_creation_list(filename);
    h5::Dataset dataset(check_id(H5Dcreate2(file_.get(), path.c_str(), H5T_IEEE_F64LE, space.get(),
                                            lcpl.get(), dcpl.get(), dapl.get()),
                                 "create row stream", path, filename));
    streams_.push_back(std::unique_ptr<RowStream>(
        new RowStream(*this, std::move(dataset), path, filename, width)));
  });
  return *streams_.back();
}

void ResultsWriter::commit() {
  require_open("commit");
  h5::silence_error_printing();
  guarded([&] {
    for (auto& stream : streams_) stream->close();
    file_.close("", final_path_);
  });
  // A program that opened final_path for writing while we ran (it was missing or replaced at the
  // start, or HDF5's locking was off) keeps its file.
  try {
    require_not_held_for_writing(final_path_, "results file");
  } catch (...) {
    discard();
    throw;
  }
  std::error_code error;
  fs::rename(temporary_path_, final_path_, error);
  if (error) {
    discard();
    throw IoError(concat("cannot rename ", quoted(temporary_path_), " to ", quoted(final_path_),
                         ": ", error.message()));
  }
  lock_ = OutputLock();
}

void require_replaceable_by_results(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) return;
  const std::string refusal = concat("refusing to write results file ", quoted(path), ": it is ");
  const std::string advice = "; name another output file";
  if (fs::is_directory(status)) throw IoError(concat(refusal, "a directory", advice));
  if (!fs::is_regular_file(status)) throw IoError(concat(refusal, "not a regular file", advice));
  // Before HDF5 looks: it cannot open a file that a writer has locked, and would be taken here
  // for a results file cut short.
  require_not_held_for_writing(path, "results file");
  h5::silence_error_printing();
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw IoError(concat(refusal, "not a results file (not HDF5), perhaps an input", advice));
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {
    h5::last_error_reason();  // clears the stack
    return;                   // HDF5 but unreadable: a results file cut short, most likely
  }
  // Raw calls, not check(): a look at someone else's file is no step of writing ours, so fault
  // injection (h5::fault) does not count it.
  const h5::File file(id);
  std::string format;
  if (H5Aexists_by_name(id, "/", "format", H5P_DEFAULT) > 0) {
    const h5::Attribute attribute(H5Aopen_by_name(id, "/", "format", H5P_DEFAULT, H5P_DEFAULT));
    const h5::Datatype type(attribute ? H5Aget_type(attribute.get()) : -1);
    const h5::Dataspace space(attribute ? H5Aget_space(attribute.get()) : -1);
    if (type && space && H5Tget_class(type.get()) == H5T_STRING &&
        H5Sget_simple_extent_npoints(space.get()) == 1) {
      if (H5Tis_variable_str(type.get()) > 0) {
        char* text = nullptr;
        if (H5Aread(attribute.get(), type.get(), &text) >= 0 && text != nullptr) format = text;
        if (text != nullptr) H5free_memory(text);
      } else {
        std::string text(H5Tget_size(type.get()), '\0');
        if (!text.empty() && H5Aread(attribute.get(), type.get(), text.data()) >= 0)
          format = text.c_str();
      }
    }
  }
  h5::last_error_reason();  // clears the stack
  if (format != kResultsFormat)
    throw IoError(concat(refusal, "an HDF5 file but not a mor results file", advice));
}

int remove_stale_temporaries(const fs::path& final_path) noexcept {
  int removed = 0;
  try {
    const fs::path dir =
        final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path();
    const std::string prefix = final_path.filename().string() + ".tmp-";
    std::error_code error;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.size() <= prefix.size() || name.size() > prefix.size() + 9 ||
          name.compare(0, prefix.size(), prefix) != 0)
        continue;
      const std::string digits = name.substr(prefix.size());
      if (!std::all_of(digits.begin(), digits.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        continue;
      const pid_t pid = static_cast<pid_t>(std::stol(digits));
      // A live process (or one we may not signal) may still be writing it.
      if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
      // A writer in another PID namespace holds its lock (the driver flocks while writing).
      const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) continue;
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        std::error_code ignored;
        if (fs::remove(it->path(), ignored)) ++removed;
      }
      ::close(fd);
    }
  } catch (...) {
  }
  return removed;
}

// ---------------------------------------------------------------------------------------------
// ResultsReader

ResultsReader::ResultsReader(const fs::path& path) : path_(path) {
  h5::silence_error_printing();
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw IoError(concat("results file ", quoted(path), " does not exist"));
  if (!fs::is_regular_file(status))
    throw IoError(concat("results file ", quoted(path), " is not a regular file"));
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0) check(is_hdf5, "read file", "", path);
  if (is_hdf5 == 0) throw IoError(concat("results file ", quoted(path), " is not an HDF5 file"));

  // Read through the layer's driver, which refuses a damaged global heap collection before
  // HDF5 decodes it (HDF5 would loop for ever on some; h5::read_access()).
  h5::PropertyList fapl = h5::read_access(path);
#if H5_VERSION_GE(1, 10, 7)
  // Keep locking, but do not fail on file systems without it (some NFS mounts).
  check(H5Pset_file_locking(fapl.get(), 1, 1), "set file locking for", "", path);
#endif
  file_ =
      h5::File(check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), "open file", "", path));

  const std::string not_ours =
      concat("results file ", quoted(path), " is an HDF5 file but not a mor results file: ");
  const hid_t file = file_.get();
  if (check(H5Aexists_by_name(file, "/", "format", H5P_DEFAULT), "look up attribute 'format' of",
            "/", path) == 0)
    throw IoError(not_ours + "root attribute 'format' is missing");
  const AttributeValue format = read_attribute(file, path, "/", "format");
  const auto* tag = std::get_if<std::string>(&format);
  if (tag == nullptr)
    throw IoError(concat(not_ours, "root attribute 'format' is ", value_type_name(format),
                         ", expected the string '", kResultsFormat, "'"));
  if (*tag != kResultsFormat)
    throw IoError(concat(not_ours, "root attribute 'format' is '", *tag, "', expected '",
                         kResultsFormat, "'"));
  if (check(H5Aexists_by_name(file, "/", "format_version", H5P_DEFAULT),
            "look up attribute 'format_version' of", "/", path) == 0)
    throw IoError(
        concat("results file ", quoted(path), ": root attribute 'format_version' is missing"));
  const AttributeValue version = read_attribute(file, path, "/", "format_version");
  const auto* number = std::get_if<std::int64_t>(&version);
  if (number == nullptr)
    throw IoError(concat("results file ", quoted(path), ": root attribute 'format_version' is ",
                         value_type_name(version), ", expected an integer"));
  if (*number > kResultsFormatVersion || *number < 1)
    throw IoError(concat("results file ", quoted(path), " has format_version ", *number,
                         "; this program reads versions 1 to ", kResultsFormatVersion));
}

bool ResultsReader::exists(const std::string& path) const {
  require_path(path, "ResultsReader::exists");
  h5::silence_error_printing();
  const H5I_type_t type = object_type(file_.get(), path, path_);
  return type == H5I_GROUP || type == H5I_DATASET;
}

ObjectType ResultsReader::type(const std::string& path) const {
  require_path(path, "ResultsReader::type");
  h5::silence_error_printing();
  switch (object_type(file_.get(), path, path_)) {
    case H5I_BADID:
      return ObjectType::missing;
    case H5I_GROUP:
      return ObjectType::group;
    case H5I_DATASET:
      return ObjectType::dataset;
    default:
      return ObjectType::other;
  }
}

bool ResultsReader::is_numeric_dataset(const std::string& path) const {
  const h5::Dataset dataset = open_dataset(path);
  const h5::Datatype type(check_id(H5Dget_type(dataset.get()), "inspect dataset", path, path_));
  const H5T_class_t type_class = H5Tget_class(type.get());
  return type_class == H5T_FLOAT || type_class == H5T_INTEGER;
}

std::vector<std::string> ResultsReader::list(const std::string& group) const {
  require_path(group, "ResultsReader::list");
  h5::silence_error_printing();
  const H5I_type_t type = object_type(file_.get(), group, path_);
  if (type == H5I_BADID) throw IoError(concat("no group '", group, "' in ", quoted(path_)));
  if (type != H5I_GROUP)
    throw IoError(concat("cannot list '", group, "' in ", quoted(path_), ": it is ",
                         type_name(type), ", not a group"));
  const h5::Group handle(
      check_id(H5Gopen2(file_.get(), group.c_str(), H5P_DEFAULT), "open group", group, path_));
  std::vector<std::string> names;
  check(H5Literate(handle.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link_name, &names),
        "list group", group, path_);
  // A member's name is a component of the paths the callers build (group + "/" + name): "",
  // "." and names holding '/' would name the group itself or another object, and a walk over
  // the members would list the same group for ever (`mor info` did, on a damaged file that
  // fuzz_results found: tests/fuzz/known/results_empty_link_name.h5). HDF5 creates no such
  // links, so only a damaged file has them.
  for (const std::string& name : names)
    if (name.empty() || name == "." || name.find('/') != std::string::npos)
      throw IoError(concat("damaged results file ", quoted(path_), ": group '", group,
                           "' has a member named '", name, "', which is not a valid name"));
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> ResultsReader::attribute_names(const std::string& object_path) const {
  require_path(object_path, "ResultsReader::attribute_names");
  h5::silence_error_printing();
  if (object_type(file_.get(), object_path, path_) == H5I_BADID)
    throw IoError(concat("no object '", object_path, "' in ", quoted(path_)));
  const h5::Object object(check_id(H5Oopen(file_.get(), object_path.c_str(), H5P_DEFAULT),
                                   "open object", object_path, path_));
  std::vector<std::string> names;
  check(H5Aiterate2(object.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_attribute_name,
                    &names),
        "list attributes of", object_path, path_);
  std::sort(names.begin(), names.end());
  return names;
}

bool ResultsReader::has_attribute(const std::string& object_path, const std::string& name) const {
  require_path(object_path, "ResultsReader::has_attribute");
  require(!name.empty(), "ResultsReader::has_attribute on '", object_path,
          "': empty attribute name");
  h5::silence_error_printing();
  if (object_type(file_.get(), object_path, path_) == H5I_BADID)
    throw IoError(concat("no object '", object_path, "' in ", quoted(path_)));
  return check(H5Aexists_by_name(file_.get(), object_path.c_str(), name.c_str(), H5P_DEFAULT),
               concat("look up attribute '", name, "' of"), object_path, path_) > 0;
}

AttributeValue ResultsReader::attribute(const std::string& object_path,
                                        const std::string& name) const {
  h5::silence_error_printing();
  return read_attribute(file_.get(), path_, object_path, name);
}

std::string ResultsReader::attribute_string(const std::string& object_path,
                                            const std::string& name) const {
  AttributeValue value = attribute(object_path, name);
  if (auto* s = std::get_if<std::string>(&value)) return std::move(*s);
  throw IoError(concat("attribute '", name, "' of '", object_path, "' in ", quoted(path_), " is ",
                       value_type_name(value), ", not a string"));
}

double ResultsReader::attribute_double(const std::string& object_path,
                                       const std::string& name) const {
  const AttributeValue value = attribute(object_path, name);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&value)) return static_cast<double>(*i);
  throw IoError(concat("attribute '", name, "' of '", object_path, "' in ", quoted(path_), " is ",
                       value_type_name(value), ", not a number"));
}

std::int64_t ResultsReader::attribute_int(const std::string& object_path,
                                          const std::string& name) const {
  const AttributeValue value = attribute(object_path, name);
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  throw IoError(concat("attribute '", name, "' of '", object_path, "' in ", quoted(path_), " is ",
                       value_type_name(value), ", not an integer"));
}

h5::Dataset ResultsReader::open_dataset(const std::string& path) const {
  require_path(path, "ResultsReader");
  h5::silence_error_printing();
  const H5I_type_t type = object_type(file_.get(), path, path_);
  if (type == H5I_BADID) throw IoError(concat("no dataset '", path, "' in ", quoted(path_)));
  if (type != H5I_DATASET)
    throw IoError(
        concat("'", path, "' in ", quoted(path_), " is ", type_name(type), ", not a dataset"));
  return h5::Dataset(
      check_id(H5Dopen2(file_.get(), path.c_str(), H5P_DEFAULT), "open dataset", path, path_));
}

namespace {

/// Dims of a dataset whose elements HDF5 can convert to double.
std::vector<hsize_t> numeric_dims(hid_t dataset, const std::string& path,
                                  const fs::path& filename) {
  const h5::Datatype type(check_id(H5Dget_type(dataset), "inspect dataset", path, filename));
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
    throw IoError(concat("dataset '", path, "' in ", quoted(filename), " is not numeric"));
  const h5::Dataspace space(check_id(H5Dget_space(dataset), "inspect dataset", path, filename));
  const int rank =
      check(H5Sget_simple_extent_ndims(space.get()), "inspect dataset", path, filename);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "inspect dataset", path,
        filename);
  return dims;
}

std::string shape_string(const std::vector<hsize_t>& dims) {
  std::string s = "(";
  for (std::size_t k = 0; k < dims.size(); ++k) s += (k > 0 ? ", " : "") + std::to_string(dims[k]);
  return s + ")";
}

/// Throws IoError if reading `elements` values of `bytes` each from dataset path (of shape dims)
/// needs more than the file could hold even compressed (implausible_claim), so a damaged
/// header's claim is refused before anything is allocated for it.
void require_storable(const fs::path& filename, const std::string& path,
                      const std::vector<hsize_t>& dims, long double elements, std::size_t bytes) {
  if (const auto file_bytes = implausible_claim(
          filename, elements * static_cast<long double>(bytes), kMaxDeflateExpansion, 65536))
    throw IoError(concat("dataset '", path, "' in ", quoted(filename), " claims shape ",
                         shape_string(dims), ", more than a file of ", *file_bytes,
                         " bytes can hold (damaged file)"));
}

long double element_count(const std::vector<hsize_t>& dims) {
  long double n = 1;
  for (const hsize_t d : dims) n *= static_cast<long double>(d);
  return n;
}

}  // namespace

std::vector<Index> ResultsReader::dims(const std::string& dataset_path) const {
  const h5::Dataset dataset = open_dataset(dataset_path);
  const h5::Dataspace space(
      check_id(H5Dget_space(dataset.get()), "inspect dataset", dataset_path, path_));
  const int rank =
      check(H5Sget_simple_extent_ndims(space.get()), "inspect dataset", dataset_path, path_);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), "inspect dataset",
        dataset_path, path_);
  return std::vector<Index>(dims.begin(), dims.end());
}

Vector ResultsReader::read_vector(const std::string& path) const {
  const h5::Dataset dataset = open_dataset(path);
  const std::vector<hsize_t> dims = numeric_dims(dataset.get(), path, path_);
  if (!(dims.size() == 1 || (dims.size() == 2 && (dims[0] == 1 || dims[1] == 1))))
    throw IoError(concat("dataset '", path, "' in ", quoted(path_), " has shape ",
                         shape_string(dims), ", not a vector"));
  require_storable(path_, path, dims, element_count(dims), sizeof(double));
  const hsize_t size = dims.size() == 1 ? dims[0] : dims[0] * dims[1];
  Vector v(static_cast<Index>(size));
  if (size > 0)
    check(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
          "read dataset", path, path_);
  return v;
}

bool ResultsReader::is_string_dataset(const std::string& path) const {
  const h5::Dataset dataset = open_dataset(path);
  const h5::Datatype type(check_id(H5Dget_type(dataset.get()), "inspect dataset", path, path_));
  return H5Tget_class(type.get()) == H5T_STRING;
}

std::vector<std::string> ResultsReader::read_strings(const std::string& path) const {
  const h5::Dataset dataset = open_dataset(path);
  const h5::Datatype type(check_id(H5Dget_type(dataset.get()), "inspect dataset", path, path_));
  const h5::Dataspace space(check_id(H5Dget_space(dataset.get()), "inspect dataset", path, path_));
  const int rank = check(H5Sget_simple_extent_ndims(space.get()), "inspect dataset", path, path_);
  if (H5Tget_class(type.get()) != H5T_STRING || rank != 1)
    throw IoError(concat("dataset '", path, "' in ", quoted(path_), " is not a 1-D string array"));
  hsize_t size = 0;
  check(H5Sget_simple_extent_dims(space.get(), &size, nullptr), "inspect dataset", path, path_);
  // A variable-length string takes at least 16 bytes in the file (its length and heap id).
  require_storable(path_, path, {size}, static_cast<long double>(size),
                   check(H5Tis_variable_str(type.get()), "inspect dataset", path, path_) > 0
                       ? 16
                       : std::max<std::size_t>(1, H5Tget_size(type.get())));
  std::vector<std::string> out;
  out.reserve(size);
  if (check(H5Tis_variable_str(type.get()), "inspect dataset", path, path_) > 0) {
    const h5::Datatype mem = utf8_variable_string(path_);
    std::vector<char*> texts(size, nullptr);
    // HDF5 allocates the texts; reclaimed however the read ends (null entries are skipped).
    struct Reclaim {
      hid_t type, space;
      std::vector<char*>& texts;
      ~Reclaim() {
        if (!texts.empty()) H5Dvlen_reclaim(type, space, H5P_DEFAULT, texts.data());
      }
    } reclaim{mem.get(), space.get(), texts};
    if (size > 0)
      check(H5Dread(dataset.get(), mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, texts.data()),
            "read dataset", path, path_);
    for (char* t : texts) out.emplace_back(t != nullptr ? t : "");
  } else {
    const std::size_t width = H5Tget_size(type.get());
    std::string buffer(width * size, '\0');
    if (size > 0)
      check(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()),
            "read dataset", path, path_);
    for (hsize_t k = 0; k < size; ++k) {
      std::string t = buffer.substr(k * width, width);
      out.push_back(t.substr(0, t.find('\0')));
    }
  }
  return out;
}

Matrix ResultsReader::read_matrix(const std::string& path) const {
  const h5::Dataset dataset = open_dataset(path);
  const std::vector<hsize_t> dims = numeric_dims(dataset.get(), path, path_);
  if (dims.size() != 2)
    throw IoError(concat("dataset '", path, "' in ", quoted(path_), " has shape ",
                         shape_string(dims), ", not a matrix"));
  require_storable(path_, path, dims, element_count(dims), sizeof(double));
  const Index rows = static_cast<Index>(dims[0]), cols = static_cast<Index>(dims[1]);
  // An empty matrix is returned as it is: converting it from row-major storage would walk its
  // columns, and a damaged file can claim 0 x 2^40 (fuzz_results, 1 December).
  if (rows == 0 || cols == 0) return Matrix(rows, cols);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major(rows, cols);
  check(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, row_major.data()),
        "read dataset", path, path_);
  return row_major;
}

namespace {

/// Throws IoError naming file, path and the first non-finite entry of m (if any).
void require_finite(const fs::path& file, const std::string& path, const Matrix& m) {
  // Over the stored entries, not by columns: Eigen's allFinite() visits every column even of an
  // empty matrix, and a damaged file can claim 0 x 2^40.
  const double* p = m.data();
  if (std::all_of(p, p + m.size(), [](double x) { return std::isfinite(x); })) return;
  for (Index i = 0; i < m.rows(); ++i)
    for (Index j = 0; j < m.cols(); ++j)
      if (!std::isfinite(m(i, j)))
        throw IoError(concat("results file ", quoted(file), " is damaged: the dataset ", path,
                             " holds ", m(i, j), " at (", i + 1, ", ", j + 1,
                             "), where only finite numbers belong"));
}

}  // namespace

Matrix ResultsReader::read_finite_matrix(const std::string& path) const {
  Matrix m = read_matrix(path);
  require_finite(path_, path, m);
  return m;
}

Vector ResultsReader::read_finite_vector(const std::string& path) const {
  Vector v = read_vector(path);
  if (!v.allFinite()) require_finite(path_, path, Matrix(v));
  return v;
}

Matrix ResultsReader::read_rows_as_columns(const std::string& path, Index first,
                                           Index count) const {
  const h5::Dataset dataset = open_dataset(path);
  const std::vector<hsize_t> dims = numeric_dims(dataset.get(), path, path_);
  if (dims.size() != 2)
    throw IoError(concat("dataset '", path, "' in ", quoted(path_), " has shape ",
                         shape_string(dims), ", not (rows, width)"));
  const auto rows = static_cast<Index>(dims[0]);
  const auto width = static_cast<Index>(dims[1]);
  require(first >= 0 && first <= rows, "read_rows_as_columns '", path, "': first row ", first,
          " outside [0, ", rows, "]");
  if (count == -1) count = rows - first;
  require(count >= 0 && count <= rows - first, "read_rows_as_columns '", path, "': ", count,
          " rows from row ", first, " exceed the ", rows, " rows of the dataset");
  require_storable(path_, path, dims,
                   static_cast<long double>(count) * static_cast<long double>(width),
                   sizeof(double));
  Matrix columns(width, count);
  if (columns.size() == 0) return columns;
  const h5::Dataspace file_space(
      check_id(H5Dget_space(dataset.get()), "inspect dataset", path, path_));
  const std::array<hsize_t, 2> start = {static_cast<hsize_t>(first), 0};
  const std::array<hsize_t, 2> block = {static_cast<hsize_t>(count), dims[1]};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, block.data(),
                            nullptr),
        "select rows of", path, path_);
  const h5::Dataspace memory_space = simple_space({block[0], block[1]}, path_);
  check(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT,
                columns.data()),
        "read rows of", path, path_);
  return columns;
}

}  // namespace mor::io
