// SPDX-License-Identifier: GPL-3.0-or-later
// MAT files through matio, MatrixMarket files through CHOLMOD (see matrix_files.hpp; CHOLMOD's
// calls in src/linalg/cholmod.cpp). matio is used nowhere else.
//
// What the libraries do not check, this file does:
//  - matio 1.5.23 opens a v5 file cut in the middle of a variable, lists that variable and
//    returns it from Mat_VarRead: the top-level element sizes are checked against the file size
//    first (check_mat_layout);
//  - matio allocates what a variable's header claims before reading it: a claim beyond what
//    the file could hold even compressed is refused first (require_plausible_size);
//  - matio 1.5.23 does not check its H5Fopen of a v7.3 file: a file HDF5 refuses (truncated)
//    opens as a MAT file without variables, so HDF5 opens it first;
//  - CHOLMOD reads files without a banner, switches to 0-based indices on meeting a 0, ignores
//    entries beyond the declared count and reads "3abc" as 3: check_matrix_market() reads
//    strictly first;
//  - CHOLMOD writes NaN/Inf as +-1e308 and reads magnitudes >= 1e308 as Inf: refused both ways;
//  - CHOLMOD refuses null arrays for matrices without entries (Eigen's empty matrices).
#include "src/io/matrix_files.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <matio.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "src/core/errors.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/memory.hpp"
#include "src/io/contained.hpp"
#include "src/io/file_claims.hpp"
#include "src/io/hdf5.hpp"
#include "src/io/input_file.hpp"
#include "src/linalg/cholmod.hpp"

namespace mor::io {

namespace fs = std::filesystem;
using detail::concat;

namespace {

std::string quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

/// CHOLMOD's HUGE_DOUBLE: its writer prints NaN and Inf as +-1e308, its reader turns every
/// magnitude >= 1e308 into Inf. So only magnitudes below it survive a round trip.
constexpr double kCholmodHuge = 1e308;

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

// ---------------------------------------------------------------------------------------------
// Writing through a temporary file

/// Creates "<file>.tmp-<pid>-<k>" (O_EXCL), open for writing and flock'ed, and its folder.
StagedFiles::Entry create_temporary(const fs::path& file) {
  static std::atomic<unsigned> counter{0};
  StagedFiles::Entry e;
  e.file = file;
  e.temporary = file.string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter.fetch_add(1));
  if (file.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec)
      throw IoError(concat("cannot create the folder ", quoted(file.parent_path()), " for ",
                           quoted(file), ": ", ec.message()));
  }
  e.fd = ::open(e.temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (e.fd < 0)
    throw IoError(concat("cannot create ", quoted(e.temporary), " (for ", quoted(file),
                         "): ", errno_text(errno)));
  // Held until the rename: a writer in another PID namespace is not taken for a dead one
  // (remove_dead_temporaries).
  ::flock(e.fd, LOCK_EX | LOCK_NB);
  return e;
}

/// A file in memory (memfd_create) that libraries which open files by name (matio, HDF5) or
/// write to a FILE* (CHOLMOD) write into, through name() or a FILE*: they do not report failed
/// writes, memory does not run full the way a disk does, and copy_to() checks every write.
class MemoryFile {
 public:
  explicit MemoryFile(const fs::path& file) : fd_(::memfd_create("mor-write", MFD_CLOEXEC)) {
    if (fd_ < 0)
      throw IoError(concat("cannot write ", quoted(file),
                           ": no in-memory file for it (memfd_create: ", errno_text(errno), ")"));
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { ::close(fd_); }

  /// "/proc/self/fd/<fd>": opening it opens this file.
  std::string name() const { return "/proc/self/fd/" + std::to_string(fd_); }
  int fd() const noexcept { return fd_; }

  /// Copies the file to e (open for writing), inserting `insert` after its first line if not
  /// empty; then fsync. Every write checked; polls the stop flag between blocks.
  /// @throws IoError naming e.file and the reason; Interrupted.
  void copy_to(StagedFiles::Entry& e, const std::string& insert) const {
    const auto fail = [&](const char* what, int err) {
      throw IoError(concat("cannot write ", quoted(e.file), " (", what, " ", quoted(e.temporary),
                           "): ", errno_text(err)));
    };
    const auto write_all = [&](const char* data, std::size_t n) {
      while (n > 0) {
        const ssize_t w = ::write(e.fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) fail("writing", errno);
        if (w == 0) fail("writing", EIO);
        data += w;
        n -= static_cast<std::size_t>(w);
      }
    };
    std::vector<char> buffer(std::size_t{1} << 20);
    off_t at = 0;
    bool inserted = insert.empty();
    for (;;) {
      throw_if_stop_requested(concat("writing ", quoted(e.file)).c_str());
      const ssize_t n = ::pread(fd_, buffer.data(), buffer.size(), at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("reading the in-memory copy for", errno);
      if (n == 0) break;
      std::size_t from = 0;
      if (!inserted) {
        const char* newline = static_cast<const char*>(std::memchr(buffer.data(), '\n', n));
        if (newline != nullptr) {
          from = static_cast<std::size_t>(newline - buffer.data()) + 1;
          write_all(buffer.data(), from);
          write_all(insert.data(), insert.size());
          inserted = true;
        }
      }
      write_all(buffer.data() + from, static_cast<std::size_t>(n) - from);
      at += n;
    }
    if (::fsync(e.fd) != 0) fail("flushing", errno);
  }

 private:
  int fd_;
};

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

/// The CSC copy of the column-major dense array get(k), exact zeros dropped (NaN kept).
template <class Get>
SparseMatrix dense_to_sparse(Index rows, Index cols, Get&& get) {
  Index nnz = 0;
  for (Index k = 0; k < rows * cols; ++k)
    if (get(k) != 0.0) ++nnz;
  SparseMatrix S(rows, cols);
  S.reserve(nnz);
  for (Index j = 0; j < cols; ++j) {
    S.startVec(j);
    for (Index i = 0; i < rows; ++i) {
      const double v = get(i + j * rows);
      if (v != 0.0) S.insertBack(i, j) = v;
    }
  }
  S.finalize();
  return S;
}

bool valid_variable_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alpha(c) || digit(c) || c == '_'; });
}

// ---------------------------------------------------------------------------------------------
// MAT files: layout check

enum class MatLayout { v4, v5, v73 };

std::uint32_t read_u32(const unsigned char* b, bool big_endian) {
  return big_endian ? (std::uint32_t{b[0]} << 24 | std::uint32_t{b[1]} << 16 |
                       std::uint32_t{b[2]} << 8 | std::uint32_t{b[3]})
                    : (std::uint32_t{b[3]} << 24 | std::uint32_t{b[2]} << 16 |
                       std::uint32_t{b[1]} << 8 | std::uint32_t{b[0]});
}

/// A plausible MAT v4 header: type MOPT (O = 0, P precision 0..5, T 0..2) whose machine digit
/// M names the byte order the header is read in (M = 0: IEEE little endian, M = 1: IEEE big
/// endian; the v4 format's definition, which matio follows: a type of 0 is little endian, so a
/// header that only reads plausibly big endian is not one matio would read that way), rows,
/// cols >= 0, imagf 0 or 1, name length 1..4095. A header plausible only in the other byte order
/// made matio allocate a name of 1 056 964 608 bytes
/// (tests/fuzz/known/mat_matio_v4_name_claim.mat).
bool plausible_v4_header(const unsigned char* b) {
  for (const bool big : {false, true}) {
    const std::uint32_t type = read_u32(b, big), imagf = read_u32(b + 12, big),
                        namelen = read_u32(b + 16, big);
    const std::uint32_t M = type / 1000, O = type / 100 % 10, P = type / 10 % 10, T = type % 10;
    if (type < 2000 && M == (big ? 1u : 0u) && O == 0 && P <= 5 && T <= 2 && imagf <= 1 &&
        namelen >= 1 && namelen < 4096 && read_u32(b + 4, big) < (1u << 31) &&
        read_u32(b + 8, big) < (1u << 31))
      return true;
  }
  return false;
}

/// The MAT version of file (open as input) from its header; for v5, also checks that every
/// top-level element (a variable, compressed or not) ends inside the file.
/// @throws IoError if the file is unreadable, foreign or truncated.
MatLayout check_mat_layout(const fs::path& file, const InputFile& input) {
  std::ifstream in(input.descriptor_path(), std::ios::binary);
  if (!in) throw IoError(concat("cannot open ", quoted(file), ": ", errno_text(errno)));
  const std::uint64_t size = input.size();
  unsigned char header[128] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  const auto got = static_cast<std::size_t>(in.gcount());
  const std::string not_mat =
      concat(quoted(file),
             " is not a MAT file: it has neither a MATLAB v5/v7.3 header nor a valid v4 header (",
             size, " bytes)");
  if (got == sizeof header &&
      ((header[126] == 'I' && header[127] == 'M') || (header[126] == 'M' && header[127] == 'I'))) {
    const bool big = header[126] == 'M';
    const unsigned version = big ? (unsigned{header[124]} << 8 | header[125])
                                 : (unsigned{header[125]} << 8 | header[124]);
    if (version == 0x0200) return MatLayout::v73;
    if (version != 0x0100)
      throw IoError(
          concat(not_mat, "; its header declares the unknown version 0x", std::hex, version));
    // Top-level data elements: an 8-byte tag (type, size) and size bytes, padded to 8 unless
    // compressed (type 15).
    std::uint64_t pos = 128;
    int element = 0;
    while (size - pos >= 8) {
      unsigned char tag[8];
      in.seekg(static_cast<std::streamoff>(pos));
      in.read(reinterpret_cast<char*>(tag), sizeof tag);
      if (in.gcount() != sizeof tag)
        throw IoError(concat("cannot read ", quoted(file), " at byte ", pos));
      ++element;
      const std::uint32_t type = read_u32(tag, big);
      if ((type >> 16) != 0) {  // small data element: tag and data in 8 bytes
        pos += 8;
        continue;
      }
      const std::uint64_t bytes = read_u32(tag + 4, big);
      if (pos + 8 + bytes > size)
        throw IoError(concat(quoted(file), " is truncated: variable ", element, " (at byte ", pos,
                             ") needs ", bytes + 8, " bytes but the file ends at byte ", size));
      pos += 8 + (type == 15 ? bytes : (bytes + 7) / 8 * 8);
    }
    return MatLayout::v5;
  }
  if (got >= 20 && plausible_v4_header(header)) return MatLayout::v4;
  throw IoError(not_mat);
}

// ---------------------------------------------------------------------------------------------
// MAT files: matio handles

struct MatCloser {
  /// The file matio opened through its descriptor's name, kept open as long as matio may use
  /// that name.
  std::shared_ptr<const InputFile> input;
  void operator()(mat_t* mat) const noexcept { Mat_Close(mat); }
};
using MatFile = std::unique_ptr<mat_t, MatCloser>;
struct MatVarFree {
  void operator()(matvar_t* var) const noexcept { Mat_VarFree(var); }
};
using MatVar = std::unique_ptr<matvar_t, MatVarFree>;

/// Opens file read-only after check_mat_layout; matio logs nowhere (its log function is never
/// initialised) and HDF5 does not print.
MatFile open_mat(const fs::path& file) {
  // Only a regular file, opened without blocking; matio and HDF5 open the same file through
  // its descriptor's name (src/io/input_file.hpp).
  const auto held = std::make_shared<const InputFile>(file, "MAT file");
  const InputFile& input = *held;
  const MatLayout layout = check_mat_layout(file, input);
  h5::silence_error_printing();
  if (layout == MatLayout::v73) {
    // matio does not check its own H5Fopen (see the top of this file).
    const hid_t id = H5Fopen(input.descriptor_path().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0) {
      const std::string reason = h5::last_error_reason();
      throw IoError(concat(quoted(file), " has a MAT v7.3 header but HDF5 cannot open it",
                           reason.empty() ? "" : ": ", reason, " (truncated or damaged file?)"));
    }
    H5Fclose(id);
  }
  MatFile mat(Mat_Open(input.descriptor_path().c_str(), MAT_ACC_RDONLY), MatCloser{held});
  if (!mat)
    throw IoError(concat(quoted(file), " cannot be opened as a MAT ",
                         layout == MatLayout::v4   ? "v4"
                         : layout == MatLayout::v5 ? "v5"
                                                   : "v7.3",
                         " file (damaged header or unreadable)"));
  return mat;
}

std::vector<std::string> variable_names(mat_t* mat) {
  std::size_t n = 0;
  char** dir = Mat_GetDir(mat, &n);  // owned by mat
  std::vector<std::string> names;
  for (std::size_t k = 0; dir != nullptr && k < n; ++k)
    if (dir[k] != nullptr) names.emplace_back(dir[k]);
  return names;
}

std::string class_name(const matvar_t& var) {
  if (var.isLogical) return "logical";
  switch (var.class_type) {
    case MAT_C_EMPTY:
      return "empty";
    case MAT_C_CELL:
      return "cell";
    case MAT_C_STRUCT:
      return "struct";
    case MAT_C_OBJECT:
      return "object";
    case MAT_C_CHAR:
      return "char";
    case MAT_C_SPARSE:
      return "sparse";
    case MAT_C_DOUBLE:
      return "double";
    case MAT_C_SINGLE:
      return "single";
    case MAT_C_INT8:
      return "int8";
    case MAT_C_UINT8:
      return "uint8";
    case MAT_C_INT16:
      return "int16";
    case MAT_C_UINT16:
      return "uint16";
    case MAT_C_INT32:
      return "int32";
    case MAT_C_UINT32:
      return "uint32";
    case MAT_C_INT64:
      return "int64";
    case MAT_C_UINT64:
      return "uint64";
    case MAT_C_FUNCTION:
      return "function_handle";
    case MAT_C_OPAQUE:
      return "opaque (a MATLAB object such as string or table)";
  }
  return "unknown";
}

/// Calls f(value, bytes), where value(k) is element k of data (matio storage type `type`) as a
/// double and bytes the size of one element; returns false, without calling f, for a
/// non-numeric storage type.
template <class F>
bool with_numeric_data(enum matio_types type, const void* data, F&& f) {
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(data);
    f([p](Index k) { return static_cast<double>(p[k]); }, sizeof(T));
    return true;
  };
  switch (type) {
    case MAT_T_DOUBLE:
      return run(double{});
    case MAT_T_SINGLE:
      return run(float{});
    case MAT_T_INT8:
      return run(mat_int8_t{});
    case MAT_T_UINT8:
      return run(mat_uint8_t{});
    case MAT_T_INT16:
      return run(mat_int16_t{});
    case MAT_T_UINT16:
      return run(mat_uint16_t{});
    case MAT_T_INT32:
      return run(mat_int32_t{});
    case MAT_T_UINT32:
      return run(mat_uint32_t{});
    case MAT_T_INT64:
      return run(mat_int64_t{});
    case MAT_T_UINT64:
      return run(mat_uint64_t{});
    default:
      return false;
  }
}

SparseMatrix sparse_from_matvar(const matvar_t& var, Index rows, Index cols, const fs::path& file,
                                const std::string& name) {
  const auto broken = [&](const std::string& what) {
    return IoError(concat(quoted(file), ": sparse variable '", name, "' (", rows, "x", cols,
                          ") is damaged: ", what));
  };
  const auto* sp = static_cast<const mat_sparse_t*>(var.data);
  if (sp == nullptr) throw broken("no data");
  if (cols > 0 && (sp->jc == nullptr || sp->njc < static_cast<mat_uint32_t>(cols + 1)))
    throw broken(concat("column pointers hold ", sp->njc, " entries, expected ", cols + 1));
  const Index nnz = cols > 0 ? static_cast<Index>(sp->jc[cols]) : 0;
  if (nnz > INT_MAX) throw broken(concat(nnz, " nonzeros exceed 32-bit indices"));
  if (nnz > 0 && (sp->ir == nullptr || sp->data == nullptr || static_cast<Index>(sp->nir) < nnz ||
                  static_cast<Index>(sp->ndata) < nnz))
    throw broken(concat("the last column pointer says ", nnz, " nonzeros but ", sp->nir,
                        " row indices and ", sp->ndata, " values are stored"));
  // Every column pointer first: one above the last (jc = [0, 100, 2]) would send the loop
  // below past the row indices before the decrease is seen (fuzz_mat found it).
  for (Index j = 0; j < cols; ++j)
    if (sp->jc[j] > sp->jc[j + 1])
      throw broken(concat("column pointers decrease at column ", j + 1));
  bool sorted = true;
  for (Index j = 0; j < cols; ++j) {
    for (Index k = sp->jc[j]; k < static_cast<Index>(sp->jc[j + 1]); ++k) {
      if (static_cast<Index>(sp->ir[k]) >= rows)
        throw broken(concat("row index ", sp->ir[k] + 1, " out of range in column ", j + 1));
      if (k > static_cast<Index>(sp->jc[j]) && sp->ir[k] <= sp->ir[k - 1]) sorted = false;
    }
  }
  SparseMatrix S(rows, cols);
  const bool numeric = with_numeric_data(var.data_type, sp->data, [&](auto value, std::size_t) {
    if (sorted) {
      S.reserve(nnz);
      for (Index j = 0; j < cols; ++j) {
        S.startVec(j);
        for (Index k = sp->jc[j]; k < static_cast<Index>(sp->jc[j + 1]); ++k)
          S.insertBack(static_cast<Index>(sp->ir[k]), j) = value(k);
      }
      S.finalize();
    } else {  // unsorted rows (not written by MATLAB): duplicates are summed
      std::vector<Triplet> t;
      t.reserve(static_cast<std::size_t>(nnz));
      for (Index j = 0; j < cols; ++j)
        for (Index k = sp->jc[j]; k < static_cast<Index>(sp->jc[j + 1]); ++k)
          t.emplace_back(static_cast<int>(sp->ir[k]), static_cast<int>(j), value(k));
      S.setFromTriplets(t.begin(), t.end());
    }
  });
  if (nnz > 0 && !numeric)
    throw broken(concat("values of the unsupported storage type ", var.data_type));
  return S;
}

MatrixVariable convert(const matvar_t& var, const fs::path& file, const std::string& name) {
  const std::string cls = class_name(var);
  const auto refuse = [&](const std::string& why) {
    return InvalidArgument(concat(quoted(file), ": variable '", name, "' ", why,
                                  "; only real 2-D numeric matrices (double, sparse, single, "
                                  "integer, logical) can be read"));
  };
  switch (var.class_type) {
    case MAT_C_CELL:
    case MAT_C_STRUCT:
    case MAT_C_OBJECT:
    case MAT_C_CHAR:
    case MAT_C_FUNCTION:
    case MAT_C_OPAQUE:
      throw refuse(concat("is of class ", cls));
    default:
      break;
  }
  std::string dims;
  for (int k = 0; k < var.rank; ++k) dims += (k ? "x" : "") + std::to_string(var.dims[k]);
  if (var.rank != 2) throw refuse(concat("has ", var.rank, " dimensions (", dims, ")"));
  if (var.isComplex)
    throw refuse(concat("is complex (", dims, ", class ",
                        var.class_type == MAT_C_SPARSE ? "sparse" : cls, ")"));
  if (var.dims[0] > INT_MAX || var.dims[1] > INT_MAX)
    throw refuse(concat("is ", dims, ", beyond 32-bit indices"));
  const auto rows = static_cast<Index>(var.dims[0]), cols = static_cast<Index>(var.dims[1]);
  MatrixVariable out;
  out.stored_class = cls;
  if (var.class_type == MAT_C_SPARSE) {
    out.stored_sparse = true;
    out.stored_class = var.isLogical ? "logical" : "double";
    out.value = sparse_from_matvar(var, rows, cols, file, name);
    return out;
  }
  if (rows * cols == 0) {
    out.value.resize(rows, cols);
    return out;
  }
  if (var.class_type == MAT_C_EMPTY)
    throw IoError(concat(quoted(file), ": variable '", name, "' (", dims,
                         ") has no MATLAB class matio recognises (in a v7.3 file: its MATLAB_class "
                         "attribute must hold e.g. 'double' in a string of exactly that length, "
                         "as MATLAB writes it; h5py's default string attributes do not)"));
  if (var.data == nullptr)
    throw IoError(concat(quoted(file), ": variable '", name, "' (", dims, ", class ", cls,
                         ") has no data (damaged file?)"));
  const bool numeric =
      with_numeric_data(var.data_type, var.data, [&](auto value, std::size_t bytes) {
        if (var.nbytes < static_cast<std::size_t>(rows * cols) * bytes)
          throw IoError(concat(quoted(file), ": variable '", name, "' (", dims, ", class ", cls,
                               ") holds ", var.nbytes, " bytes, fewer than its size needs"));
        out.value = dense_to_sparse(rows, cols, value);
      });
  if (!numeric) throw refuse(concat("is of class ", cls));
  return out;
}

mat_ft to_matio(MatVersion v) {
  return v == MatVersion::v73 ? MAT_FT_MAT73 : MAT_FT_MAT5;
}

// ---------------------------------------------------------------------------------------------
// MatrixMarket: strict check

struct MarketHeader {
  bool coordinate = true;
  std::string field;     // real, integer, pattern
  std::string symmetry;  // general, symmetric, skew-symmetric
  Index rows = 0, cols = 0, entries = 0;
  Index duplicates = 0;   ///< coordinate entries whose (i, j) appeared before (summed)
  std::string duplicate;  ///< the first of them, "(i, j)"
};

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t k = 0;
  while (k < line.size()) {
    while (k < line.size() && std::isspace(static_cast<unsigned char>(line[k]))) ++k;
    const std::size_t start = k;
    while (k < line.size() && !std::isspace(static_cast<unsigned char>(line[k]))) ++k;
    if (k > start) tokens.push_back(line.substr(start, k - start));
  }
  return tokens;
}

bool parse_index(std::string_view s, long long& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_value(std::string_view s, double& v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string shorten(std::string_view line) {
  return std::string(line.substr(0, 60)) + (line.size() > 60 ? "..." : "");
}

bool blank_or_comment(const std::string& s) {
  return (!s.empty() && s[0] == '%') ||
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

/// Reads and checks the banner and the size line of a MatrixMarket file from in; lineno is the
/// line last read.
MarketHeader read_market_header(std::istream& in, const fs::path& file, long long& lineno) {
  const auto fail = [&](long long line, const std::string& what) {
    return IoError(concat("broken MatrixMarket file ", quoted(file), ", line ", line, ": ", what));
  };
  std::string line;
  lineno = 1;
  if (!std::getline(in, line))
    throw IoError(concat(quoted(file), " is empty, not a MatrixMarket file"));
  if (line.rfind("%%MatrixMarket", 0) != 0)
    throw IoError(concat(quoted(file), " is not a MatrixMarket file: line 1 is '", shorten(line),
                         "', expected a banner such as '%%MatrixMarket matrix coordinate real "
                         "general'"));
  const auto banner = split(line);
  MarketHeader h;
  const std::string bad_banner =
      concat("bad banner '", shorten(line),
             "': expected '%%MatrixMarket matrix <coordinate|array> "
             "<real|integer|pattern> <general|symmetric|skew-symmetric>'");
  if (banner.size() != 5 || lower(banner[1]) != "matrix") throw fail(1, bad_banner);
  const std::string format = lower(banner[2]);
  h.field = lower(banner[3]);
  h.symmetry = lower(banner[4]);
  if (format != "coordinate" && format != "array") throw fail(1, bad_banner);
  h.coordinate = format == "coordinate";
  if (h.field == "complex" || h.symmetry == "hermitian")
    throw InvalidArgument(concat("MatrixMarket file ", quoted(file), " holds a complex (", h.field,
                                 " ", h.symmetry, ") matrix; only real matrices can be read"));
  if ((h.field != "real" && h.field != "integer" && h.field != "pattern") ||
      (h.symmetry != "general" && h.symmetry != "symmetric" && h.symmetry != "skew-symmetric") ||
      (h.field == "pattern" && !h.coordinate))
    throw fail(1, bad_banner);

  const auto skip = blank_or_comment;
  // The size line.
  bool have_size = false;
  while (std::getline(in, line)) {
    ++lineno;
    if (skip(line)) continue;
    const auto t = split(line);
    long long v[3] = {0, 0, 0};
    const std::size_t want = h.coordinate ? 3 : 2;
    bool ok = t.size() == want;
    for (std::size_t k = 0; ok && k < want; ++k) ok = parse_index(t[k], v[k]) && v[k] >= 0;
    if (!ok)
      throw fail(lineno, concat("expected the size line '",
                                h.coordinate ? "rows cols entries" : "rows cols",
                                "' (non-negative integers), got '", shorten(line), "'"));
    if (v[0] > INT_MAX || v[1] > INT_MAX || v[2] > INT_MAX)
      throw fail(lineno, concat("size ", v[0], "x", v[1], " with ", v[2],
                                " entries exceeds 32-bit indices"));
    h.rows = v[0];
    h.cols = v[1];
    h.entries = v[2];
    have_size = true;
    break;
  }
  if (!have_size) throw fail(lineno, "the file ends before the size line");
  if (h.symmetry != "general" && h.rows != h.cols)
    throw fail(lineno, concat("a ", h.symmetry, " matrix must be square, the size line says ",
                              h.rows, "x", h.cols));
  if (!h.coordinate) {
    const Index n = h.rows;
    h.entries = h.symmetry == "general"     ? h.rows * h.cols
                : h.symmetry == "symmetric" ? n * (n + 1) / 2
                                            : n * (n - 1) / 2;
  }
  return h;
}

/// Reads the whole file once and checks it against the MatrixMarket format (see the header).
MarketHeader check_matrix_market(const fs::path& file, const InputFile& input) {
  std::ifstream in(input.descriptor_path());
  if (!in) throw IoError(concat("cannot open ", quoted(file), ": ", errno_text(errno)));
  const auto fail = [&](long long line, const std::string& what) {
    return IoError(concat("broken MatrixMarket file ", quoted(file), ", line ", line, ": ", what));
  };
  long long lineno = 1;
  const MarketHeader header = read_market_header(in, file, lineno);
  const auto skip = blank_or_comment;
  std::string line;

  // The entries.
  MarketHeader h = header;
  const std::size_t tokens = h.coordinate ? (h.field == "pattern" ? 2 : 3) : 1;
  Index count = 0;
  std::vector<std::uint64_t> positions;  // (j << 32 | i) of every coordinate entry
  if (h.coordinate)
    positions.reserve(static_cast<std::size_t>(std::min<Index>(h.entries, 1 << 24)));
  while (std::getline(in, line)) {
    ++lineno;
    if (skip(line)) continue;
    if (count == h.entries)
      throw fail(lineno, concat("more entries than the ", h.entries, " the size line declares"));
    const auto t = split(line);
    if (t.size() != tokens)
      throw fail(lineno, concat("expected ", tokens, tokens == 1 ? " number" : " numbers",
                                " per entry, got '", shorten(line), "'"));
    double x = 0.0;
    if (h.field != "pattern" && !parse_value(t[tokens - 1], x))
      throw fail(lineno, concat("'", t[tokens - 1], "' is not a number"));
    if (std::isfinite(x) && std::abs(x) >= kCholmodHuge)
      throw InvalidArgument(concat("MatrixMarket file ", quoted(file), ", line ", lineno,
                                   ": the value ", t[tokens - 1],
                                   " has a magnitude >= 1e308, which CHOLMOD's reader turns "
                                   "into Inf"));
    if (h.coordinate) {
      long long i = 0, j = 0;
      if (!parse_index(t[0], i) || !parse_index(t[1], j))
        throw fail(lineno, concat("'", t[0], " ", t[1], "' are not integer indices"));
      if (i < 1 || i > h.rows || j < 1 || j > h.cols)
        throw fail(lineno, concat("index (", i, ", ", j, ") out of range for a ", h.rows, "x",
                                  h.cols, " matrix (indices count from 1)"));
      if ((h.symmetry == "symmetric" && i < j) || (h.symmetry == "skew-symmetric" && i <= j))
        throw fail(lineno,
                   concat("entry (", i, ", ", j, ") of a ", h.symmetry, " matrix must lie ",
                          h.symmetry == "symmetric" ? "on or below" : "below", " the diagonal"));
      positions.push_back(static_cast<std::uint64_t>(j) << 32 | static_cast<std::uint64_t>(i));
    }
    ++count;
  }
  if (in.bad()) throw IoError(concat("cannot read ", quoted(file), ": ", errno_text(errno)));
  if (count < h.entries)
    throw fail(lineno, concat("the file ends after ", count, " of the ", h.entries,
                              " entries the size line declares"));
  // Duplicate coordinates: CHOLMOD (as scipy) sums them. In a symmetric or skew-symmetric file
  // an entry stands for two, so a repeated one is refused; in a general file it is counted for
  // the caller to report.
  std::sort(positions.begin(), positions.end());
  for (std::size_t k = 1; k < positions.size(); ++k)
    if (positions[k] == positions[k - 1]) {
      if (h.duplicates++ == 0)
        h.duplicate = concat("(", positions[k] & 0xffffffffu, ", ", positions[k] >> 32, ")");
    }
  if (h.duplicates > 0 && h.symmetry != "general")
    throw IoError(concat("broken MatrixMarket file ", quoted(file), ": the ", h.symmetry,
                         " matrix gives entry ", h.duplicate, " more than once (", h.duplicates,
                         " repeated entries); a ", h.symmetry, " file must give each entry once"));
  return h;
}

// ---------------------------------------------------------------------------------------------
// MatrixMarket writing (through CHOLMOD, src/linalg/cholmod.hpp)

/// The first entry of get(k), k < count, that CHOLMOD cannot write exactly, or -1.
template <class Get>
Index first_unwritable(Index count, Get&& get) {
  for (Index k = 0; k < count; ++k)
    if (!(std::abs(get(k)) < kCholmodHuge)) return k;
  return -1;
}

constexpr const char* kUnwritable =
    "; MatrixMarket files written through CHOLMOD cannot hold NaN, Inf or magnitudes >= 1e308";

/// Writes S (if not null) or D as MatrixMarket to the open file f (named file in messages).
void write_market(std::FILE* f, const SparseMatrix* S, const Matrix* D, const fs::path& file) {
  if (S != nullptr) {
    SparseMatrix compressed;
    const SparseMatrix* A = S;
    if (!S->isCompressed()) {
      compressed = *S;
      compressed.makeCompressed();
      A = &compressed;
    }
    const Index bad = first_unwritable(A->nonZeros(), [A](Index k) { return A->valuePtr()[k]; });
    if (bad >= 0) {
      const auto col = static_cast<Index>(
          std::upper_bound(A->outerIndexPtr(), A->outerIndexPtr() + A->cols() + 1, bad) -
          A->outerIndexPtr() - 1);
      throw InvalidArgument(concat("cannot write ", quoted(file), ": entry (",
                                   A->innerIndexPtr()[bad] + 1, ", ", col + 1, ") is ",
                                   A->valuePtr()[bad], kUnwritable));
    }
    write_matrix_market_cholmod(f, *A, quoted(file));
    return;
  }
  const Index bad = first_unwritable(D->size(), [D](Index k) { return D->data()[k]; });
  if (bad >= 0)
    throw InvalidArgument(concat("cannot write ", quoted(file), ": entry (", bad % D->rows() + 1,
                                 ", ", bad / D->rows() + 1, ") is ", D->data()[bad], kUnwritable));
  write_matrix_market_cholmod(f, *D, quoted(file));
}

/// The write function of the FILE CHOLMOD writes into (fopencookie): the bytes to the memory
/// file whose descriptor is the cookie, or a failed write once a stop is requested. CHOLMOD's
/// writers stop at their first failed fprintf, so a stop ends the writing of a large matrix
/// within a buffer's worth of values (8 KiB) instead of after all of it (CHOLMOD's shortest exact
/// form costs microseconds a value: a dense 10^5 x 30 basis took minutes on a busy machine).
ssize_t write_unless_stopped(void* cookie, const char* data, std::size_t n) {
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(cookie));
  for (std::size_t done = 0; done < n;) {
    if (stop_requested()) {
      errno = EINTR;
      return 0;  // fopencookie(3): 0 on error, never negative
    }
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    done += static_cast<std::size_t>(w);
  }
  return static_cast<ssize_t>(n);
}

/// Writes S (if not null) or D as MatrixMarket (CHOLMOD into memory, then copied) to a new
/// temporary of file in staged; comment (if any) becomes a "%" line after the banner.
/// @throws Interrupted if a stop was requested meanwhile (CHOLMOD's writing included).
void stage_market(StagedFiles& staged, const fs::path& file, const SparseMatrix* S, const Matrix* D,
                  const std::string& comment) {
  StagedFiles::Entry& e = staged.add(create_temporary(file));
  const MemoryFile memory(file);
  {
    // No close function: the descriptor stays memory's.
    const cookie_io_functions_t io{nullptr, write_unless_stopped, nullptr, nullptr};
    FileHandle f(
        ::fopencookie(reinterpret_cast<void*>(static_cast<std::intptr_t>(memory.fd())), "w", io));
    if (!f) throw IoError(concat("cannot write ", quoted(file), ": ", errno_text(errno)));
    try {
      write_market(f.get(), S, D, file);
      if (std::fflush(f.get()) != 0 || std::ferror(f.get()) != 0)
        throw IoError(concat("cannot write ", quoted(file), " (in memory): ", errno_text(errno)));
    } catch (const IoError&) {
      // A write failed on purpose: the stop is the reason.
      throw_if_stop_requested(concat("writing ", quoted(file)).c_str());
      throw;
    }
  }
  memory.copy_to(e, comment.empty() ? std::string() : "%" + comment + "\n");
}

}  // namespace

bool is_variable_name(const std::string& name) {
  return valid_variable_name(name);
}

// ---------------------------------------------------------------------------------------------
// MAT files

std::vector<std::string> mat_variable_names(const fs::path& file) {
  const MatFile mat = open_mat(file);
  std::vector<std::string> names = variable_names(mat.get());
  // matio reads the first of two variables of one name: which one a model means is unknown.
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
    throw IoError(concat(quoted(file), " holds ", std::count(sorted.begin(), sorted.end(), *twice),
                         " variables named '", *twice,
                         "' (a damaged or hand-made file): which one is meant is ambiguous"));
  return names;
}

namespace {

/// Refuses a variable whose header claims more data than the file can hold: matio allocates
/// what the header says before it reads a byte (a damaged 600-byte file asked for gigabytes;
/// found by fuzz_mat). zlib (v5 variables, v7.3 chunks) expands at most 1032:1.
void require_plausible_size(mat_t* mat, const fs::path& file, const std::string& name) {
  const MatVar info(Mat_VarReadInfo(mat, name.c_str()));
  if (!info || info->rank < 0 || info->dims == nullptr) return;  // Mat_VarRead reports it
  long double entries = 1;
  std::string shape;
  for (int k = 0; k < info->rank; ++k) {
    entries *= static_cast<long double>(info->dims[k]);
    shape += (k ? " x " : "") + std::to_string(info->dims[k]);
  }
  // A sparse variable holds at least its column pointers; a dense one every entry.
  const long double bytes =
      info->class_type == MAT_C_SPARSE
          ? (info->rank >= 2 ? static_cast<long double>(info->dims[1]) + 1 : 1) * 4
          : entries * static_cast<long double>(
                          std::max<std::size_t>(1, Mat_SizeOfClass(info->class_type)));
  if (const auto file_bytes = implausible_claim(file, bytes, kMaxDeflateExpansion, 4096))
    throw IoError(concat(quoted(file), ": variable '", name, "' claims ", shape,
                         " entries, more than a file of ", *file_bytes,
                         " bytes can hold (damaged file)"));
}

/// matio 1.5.23 sizes its buffer for a v7.3 sparse variable's row indices (ir) by its values
/// (data), and HDF5 1.10.8 then writes all of ir's extent into it: on a damaged file with an ir of
/// 2^40 unstored entries over no values, a 4-byte heap overflow (fuzz_mat). So before matio reads
/// a v7.3 variable, none of its datasets may claim more than the file can hold (as in
/// require_plausible_size), and a sparse variable's ir must have as many entries as its data.
/// @throws IoError naming file, variable and dataset.
void require_consistent_v73(const fs::path& file, const std::string& name) {
  const InputFile input(file, "MAT file");
  if (check_mat_layout(file, input) != MatLayout::v73) return;
  h5::silence_error_printing();
  const h5::File h5file(H5Fopen(input.descriptor_path().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!h5file || H5Lexists(h5file.get(), name.c_str(), H5P_DEFAULT) <= 0) {
    h5::last_error_reason();  // clears the stack; matio reports the variable itself
    return;
  }
  const auto damaged = [&](const std::string& path, const std::string& what) {
    return IoError(concat(quoted(file), ": variable '", name, "' (HDF5 dataset '", path, "') ",
                          what, " (damaged file)"));
  };
  // Entries of a dataset, refused beyond what the file can hold; -1 if it cannot be inspected.
  const auto entries = [&](hid_t dataset, const std::string& path) -> long double {
    const h5::Dataspace space(H5Dget_space(dataset));
    const hssize_t n = space ? H5Sget_simple_extent_npoints(space.get()) : -1;
    if (n < 0) return -1;
    if (const auto file_bytes =
            implausible_claim(file, static_cast<long double>(n), kMaxDeflateExpansion, 4096))
      throw damaged(path, concat("claims ", n, " entries, more than a file of ", *file_bytes,
                                 " bytes can hold"));
    return static_cast<long double>(n);
  };
  const h5::Object object(H5Oopen(h5file.get(), name.c_str(), H5P_DEFAULT));
  if (object && H5Iget_type(object.get()) == H5I_DATASET) {
    entries(object.get(), "/" + name);
  } else if (object && H5Iget_type(object.get()) == H5I_GROUP) {
    long double data = -1, ir = -1;
    for (const char* member : {"data", "ir", "jc"}) {
      if (H5Lexists(object.get(), member, H5P_DEFAULT) <= 0) continue;
      const h5::Object part(H5Oopen(object.get(), member, H5P_DEFAULT));
      if (!part || H5Iget_type(part.get()) != H5I_DATASET) continue;
      const long double n = entries(part.get(), "/" + name + "/" + member);
      if (std::string(member) == "data") data = n;
      if (std::string(member) == "ir") ir = n;
    }
    if (data >= 0 && ir >= 0 && ir != data)
      throw damaged("/" + name + "/ir",
                    concat("holds ", static_cast<long long>(ir), " row indices for ",
                           static_cast<long long>(data), " values"));
  }
  h5::last_error_reason();  // clears the stack
}

}  // namespace

MatrixVariable read_mat_variable(const fs::path& file, const std::string& name) {
  const MatFile mat = open_mat(file);
  require_plausible_size(mat.get(), file, name);
  require_consistent_v73(file, name);
  Mat_Rewind(mat.get());
  const MatVar var(Mat_VarRead(mat.get(), name.c_str()));
  if (!var) {
    std::vector<std::string> names = mat_variable_names(file);
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw IoError(concat(quoted(file), ": variable '", name,
                           "' is listed but cannot be read (damaged or truncated file)"));
    std::sort(names.begin(), names.end());
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw InvalidArgument(concat(quoted(file), " has no variable '", name, "'; ",
                                 names.empty() ? "it has no variables" : "its variables: " + list));
  }
  try {
    return convert(*var, file, name);
  } catch (const std::bad_alloc&) {
    // The sizes come from the file: a 137-byte v4 file declared an empty 0 x 520093702 matrix,
    // whose column pointers alone need 2 GB (fuzz_mat, tests/fuzz/known/).
    std::string dims;
    for (int k = 0; k < var->rank; ++k) dims += (k ? " x " : "") + std::to_string(var->dims[k]);
    throw IoError(concat(quoted(file), ": variable '", name, "' (", dims,
                         ") does not fit in the memory available (allocation failed)"));
  }
}

std::optional<DeclaredShape> mat_variable_shape(const fs::path& file, const std::string& name) {
  const MatFile mat = open_mat(file);
  // A damaged header claiming more than the file holds is named as such first.
  require_plausible_size(mat.get(), file, name);
  const MatVar info(Mat_VarReadInfo(mat.get(), name.c_str()));
  if (!info || info->rank != 2 || info->dims == nullptr) return std::nullopt;
  DeclaredShape shape;
  shape.rows = static_cast<Index>(info->dims[0]);
  shape.cols = static_cast<Index>(info->dims[1]);
  if (shape.rows < 0 || shape.cols < 0) return std::nullopt;
  shape.entries = info->class_type == MAT_C_SPARSE ? -1 : shape.rows * shape.cols;
  return shape;
}

/// Writes vars into a MAT file at target (matio: its name, or a memory file's) with header, then
/// closes it; file is the file named by the user, for messages.
/// @throws IoError from failed(what) when matio reports a failure; Interrupted when stopped.
template <class Failed>
void write_mat_variables(const std::string& target, const std::string& header, MatVersion version,
                         const std::vector<NamedMatrix>& vars, const fs::path& file,
                         const Failed& failed) {
  MatFile mat(
      Mat_CreateVer(target.c_str(), header.empty() ? nullptr : header.c_str(), to_matio(version)));
  if (!mat) throw failed("creating");
  const auto compression = MAT_COMPRESSION_ZLIB;
  for (const auto& v : vars) {
    throw_if_stop_requested(concat("writing ", quoted(file)).c_str());
    MatVar var;
    // Storage the variable points to (MAT_F_DONT_COPY_DATA); alive until written.
    std::vector<mat_uint32_t> ir, jc;
    mat_sparse_t sparse{};
    SparseMatrix compressed;
    if (const auto* S0 = std::get_if<SparseMatrix>(&v.value)) {
      const SparseMatrix* S = S0;
      if (!S->isCompressed()) {
        compressed = *S;
        compressed.makeCompressed();
        S = &compressed;
      }
      ir.assign(S->innerIndexPtr(), S->innerIndexPtr() + S->nonZeros());
      jc.assign(S->outerIndexPtr(), S->outerIndexPtr() + S->cols() + 1);
      sparse.nzmax = static_cast<mat_uint32_t>(S->nonZeros());
      sparse.ir = ir.data();
      sparse.nir = static_cast<mat_uint32_t>(ir.size());
      sparse.jc = jc.data();
      sparse.njc = static_cast<mat_uint32_t>(jc.size());
      sparse.ndata = static_cast<mat_uint32_t>(S->nonZeros());
      sparse.data = const_cast<double*>(S->valuePtr());  // only read
      std::size_t dims[2] = {static_cast<std::size_t>(S->rows()),
                             static_cast<std::size_t>(S->cols())};
      var.reset(Mat_VarCreate(v.name.c_str(), MAT_C_SPARSE, MAT_T_DOUBLE, 2, dims, &sparse,
                              MAT_F_DONT_COPY_DATA));
    } else {
      const Matrix& D = std::get<Matrix>(v.value);
      std::size_t dims[2] = {static_cast<std::size_t>(D.rows()),
                             static_cast<std::size_t>(D.cols())};
      var.reset(Mat_VarCreate(v.name.c_str(), MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims,
                              const_cast<double*>(D.data()), MAT_F_DONT_COPY_DATA));
    }
    if (!var)
      throw IoError(
          concat("cannot write ", quoted(file), ": matio cannot create variable '", v.name, "'"));
    if (Mat_VarWrite(mat.get(), var.get(), compression) != 0)
      throw failed(concat("variable '", v.name, "' to").c_str());
  }
  if (Mat_Close(mat.release()) != 0) throw failed("closing");
}

/// Up to this many stored entries a MAT file is written in this process (well under a second).
constexpr Index kMatInProcessEntries = 1'000'000;

StagedFiles stage_mat(const fs::path& file, const std::vector<NamedMatrix>& vars,
                      MatVersion version, const std::string& header) {
  require(header.size() <= 116, "cannot write ", quoted(file),
          ": a MAT header has at most 116 "
          "characters, got ",
          header.size());
  std::set<std::string> seen;
  for (const auto& v : vars) {
    require(valid_variable_name(v.name), "cannot write ", quoted(file), ": '", v.name,
            "' is not a MATLAB variable name (a letter, then letters, digits or '_', at most 63)");
    require(seen.insert(v.name).second, "cannot write ", quoted(file), ": variable '", v.name,
            "' given twice");
    if (const auto* S = std::get_if<SparseMatrix>(&v.value))
      require(static_cast<std::uint64_t>(S->nonZeros()) < UINT32_MAX, "cannot write ", quoted(file),
              ": sparse variable '", v.name, "' has ", S->nonZeros(),
              " nonzeros, beyond the MAT format's 32-bit indices");
  }
  StagedFiles staged;
  StagedFiles::Entry& e = staged.add(create_temporary(file));
  // v5: matio writes into memory (it ignores fwrite's result: on a full disk it wrote 0 bytes and
  // reported success); the copy to the temporary checks every write. v7.3: HDF5 resolves the
  // name of a memfd and fails, so it writes the temporary itself; HDF5 reports failed writes,
  // matio passes them on (Mat_VarWrite, Mat_Close), and the file is read back below.
  const bool v73 = version == MatVersion::v73;
  const MemoryFile memory(file);
  const std::string target = v73 ? e.temporary.string() : memory.name();
  if (v73) ::flock(e.fd, LOCK_UN);  // HDF5 locks the file itself while it has it open
  const auto failed = [&](const std::string& what) {
    std::string reason = v73 ? h5::last_error_reason() : "";
    if (v73 && (reason.empty() || reason.find(std::strerror(ENOSPC)) == std::string::npos)) {
      // HDF5's message may not name the cause (matio does not check H5Fcreate): a full disk is
      // the likely one, said when it is so.
      struct statvfs fs_info {};
      const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
      if (::statvfs(dir.c_str(), &fs_info) == 0 && fs_info.f_bavail == 0)
        reason = std::strerror(ENOSPC);
    }
    return IoError(concat("cannot write ", quoted(file), " (", what, " ", quoted(e.temporary), ")",
                          reason.empty() ? std::string() : ": " + reason));
  };
  h5::silence_error_printing();
  // matio compresses and writes a variable in one call that polls no stop flag (seconds for the
  // chain's K at N = 3 10^6: SIGTERM took 2.7 s and more to act): a large set is written by a
  // child process (io::run_stoppable), into the same memory file or temporary, which the stop
  // flag kills; the parent copies, checks and renames as for a small one.
  Index entries = 0;
  for (const auto& v : vars)
    entries += std::visit([](const auto& X) -> Index { return X.nonZeros(); }, v.value);
  const auto write_all = [&] {
    write_mat_variables(target, header, version, vars, file, failed);
    return std::vector<double>{};
  };
  if (entries > kMatInProcessEntries)
    io::run_stoppable(write_all, concat("writing ", quoted(file), " interrupted"));
  else
    write_all();
  if (!v73) {
    memory.copy_to(e, "");
    return staged;
  }

  if (::fsync(e.fd) != 0)
    throw IoError(concat("cannot write ", quoted(file), " (flushing ", quoted(e.temporary),
                         "): ", std::strerror(errno)));
  // What HDF5 and matio might not have reported (matio's own fwrite of the header): the file
  // must read back with the header and the variables written.
  std::vector<std::string> names;
  try {
    names = mat_variable_names(e.temporary);
  } catch (const IoError& error) {
    throw IoError(concat("cannot write ", quoted(file), ": what was written does not read back (",
                         error.what(), ")"));
  }
  if (names.size() != vars.size() || (!header.empty() && mat_header_text(e.temporary) != header))
    throw IoError(concat("cannot write ", quoted(file), ": what was written does not read back ",
                         "(", names.size(), " of ", vars.size(), " variables)"));
  ::flock(e.fd, LOCK_EX | LOCK_NB);
  return staged;
}

void write_mat(const fs::path& file, const std::vector<NamedMatrix>& vars, MatVersion version) {
  stage_mat(file, vars, version).commit();
}

// ---------------------------------------------------------------------------------------------
// MatrixMarket files

double read_bytes(const DeclaredShape& shape) {
  const auto rows = static_cast<double>(shape.rows), cols = static_cast<double>(shape.cols);
  if (shape.entries < 0) return 2 * 4 * (cols + 1);
  // CHOLMOD's triplets and CSC (twice for symmetric storage, expanded through a transpose),
  // then Eigen's copy: about three CSC copies of 4-byte column pointers and 12-byte entries;
  // the transpose's column pointers and workspace are per row (a G declaring 10^9 rows and
  // 20 entries got "CHOLMOD status -2").
  return 3 * (4 * (cols + 1) + 16 * static_cast<double>(shape.entries)) + 16 * rows +
         (shape.entries >= shape.rows * shape.cols && rows * cols > 0 ? 8 * rows * cols : 0);
}

namespace {

/// Refuses, before the library allocates it, a matrix whose declared size needs more memory
/// than this process may use (the smaller of the hard limit and MemAvailable).
void require_memory_for(const fs::path& file, const DeclaredShape& shape) {
  const double need = read_bytes(shape) / (1024.0 * 1024.0);
  const MemoryLimits limits = memory_limits();
  double budget = limits.hard_mib;
  std::string source = limits.hard_source;
  if (limits.available_mib > 0 && (budget <= 0 || limits.available_mib < budget)) {
    budget = limits.available_mib;
    source = "the memory available now, MemAvailable";
  }
  if (budget > 0 && need > budget)
    throw IoError(concat(quoted(file), " declares a ", shape.rows, "x", shape.cols, " matrix",
                         shape.entries >= 0 ? concat(" with ", shape.entries, " entries") : "",
                         ": reading it needs about ", std::llround(need), " MiB, more than the ",
                         std::llround(budget), " MiB this process may use (", source, ")"));
}

}  // namespace

DeclaredShape matrix_market_shape(const fs::path& file) {
  const InputFile input(file, "MatrixMarket file");
  std::ifstream in(input.descriptor_path());
  if (!in) throw IoError(concat("cannot open ", quoted(file), ": ", errno_text(errno)));
  long long lineno = 1;
  const MarketHeader h = read_market_header(in, file, lineno);
  return {h.rows, h.cols, h.entries};
}

MatrixVariable read_matrix_market_variable(const fs::path& file) {
  const InputFile input(file, "MatrixMarket file");
  const MarketHeader h = check_matrix_market(file, input);
  require_memory_for(file, {h.rows, h.cols, h.symmetry == "general" ? h.entries : 2 * h.entries});
  FileHandle f(input.stream());
  MatrixVariable out;
  out.stored_sparse = h.coordinate;
  out.stored_class = h.field;
  out.duplicates_summed = h.duplicates;
  out.first_duplicate = h.duplicate;
  out.value = read_matrix_market_cholmod(
      f.get(), quoted(file), [](Index rows, Index cols, Index ld, const double* x) {
        return dense_to_sparse(rows, cols, [&](Index k) { return x[k % rows + k / rows * ld]; });
      });
  return out;
}

SparseMatrix read_matrix_market(const fs::path& file) {
  return read_matrix_market_variable(file).value;
}

void write_matrix_market(const fs::path& file, const SparseMatrix& A) {
  StagedFiles staged;
  stage_market(staged, file, &A, nullptr, "");
  staged.commit();
}

void write_matrix_market(const fs::path& file, const Matrix& A) {
  StagedFiles staged;
  stage_market(staged, file, nullptr, &A, "");
  staged.commit();
}

StagedFiles stage_matrix_market_files(const std::vector<std::pair<fs::path, MatrixValue>>& files,
                                      const std::string& comment) {
  require(comment.find('\n') == std::string::npos, "a MatrixMarket comment is one line");
  StagedFiles staged;
  for (const auto& [file, value] : files)
    stage_market(staged, file, std::get_if<SparseMatrix>(&value), std::get_if<Matrix>(&value),
                 comment);
  return staged;
}

void write_matrix_market_files(const std::vector<std::pair<fs::path, MatrixValue>>& files) {
  stage_matrix_market_files(files).commit();
}

// ---------------------------------------------------------------------------------------------
// Staged files

StagedFiles::StagedFiles(StagedFiles&& other) noexcept
    : entries_(std::exchange(other.entries_, {})) {}

StagedFiles& StagedFiles::operator=(StagedFiles&& other) noexcept {
  if (this != &other) {
    discard();
    entries_ = std::exchange(other.entries_, {});
  }
  return *this;
}

StagedFiles::~StagedFiles() {
  discard();
}

StagedFiles StagedFiles::adopt(const std::vector<std::pair<fs::path, fs::path>>& pairs) {
  StagedFiles staged;
  for (const auto& [temporary, file] : pairs) staged.entries_.push_back({temporary, file, -1});
  return staged;
}

StagedFiles::Entry& StagedFiles::add(Entry entry) {
  entries_.push_back(std::move(entry));
  return entries_.back();
}

std::vector<fs::path> StagedFiles::files() const {
  std::vector<fs::path> out;
  for (const auto& e : entries_) out.push_back(e.file);
  return out;
}

std::vector<fs::path> StagedFiles::commit() {
  const std::vector<fs::path> out = files();
  // Closed first (each was fsync'ed when written): a close error is one more failed write.
  for (auto& e : entries_) {
    const int fd = std::exchange(e.fd, -1);
    if (fd >= 0 && ::close(fd) != 0 && errno != EINTR)
      throw IoError(concat("cannot write ", quoted(e.file), " (closing ", quoted(e.temporary),
                           "): ", errno_text(errno)));
  }
  while (!entries_.empty()) {
    const Entry& e = entries_.front();
    std::error_code ec;
    fs::rename(e.temporary, e.file, ec);
    if (ec)
      throw IoError(concat("cannot rename ", quoted(e.temporary), " to ", quoted(e.file), ": ",
                           ec.message()));
    entries_.erase(entries_.begin());
  }
  return out;
}

std::vector<std::pair<fs::path, fs::path>> StagedFiles::release() {
  std::vector<std::pair<fs::path, fs::path>> out;
  for (auto& e : entries_) {
    if (e.fd >= 0) ::close(std::exchange(e.fd, -1));
    out.emplace_back(e.temporary, e.file);
  }
  entries_.clear();
  return out;
}

void StagedFiles::discard() noexcept {
  for (auto& e : entries_) {
    std::error_code ignored;
    fs::remove(e.temporary, ignored);
    if (e.fd >= 0) ::close(std::exchange(e.fd, -1));
  }
  entries_.clear();
}

std::string mat_header_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char header[128] = {};
  in.read(header, sizeof header);
  if (in.gcount() != sizeof header) return {};
  const bool v5_or_v73 =
      (header[126] == 'I' && header[127] == 'M') || (header[126] == 'M' && header[127] == 'I');
  if (!v5_or_v73) return {};
  std::string text(header, 116);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\0')) text.pop_back();
  return text;
}

int remove_dead_temporaries(const fs::path& file) noexcept {
  int removed = 0;
  try {
    const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    const std::string prefix = file.filename().string() + ".tmp-";
    std::error_code error;
    for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      // "<pid>-<k>", both decimal
      const std::string rest = name.substr(prefix.size());
      const auto dash = rest.find('-');
      const auto digits = [](std::string_view t) {
        return !t.empty() && t.size() <= 10 && std::all_of(t.begin(), t.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        });
      };
      if (dash == std::string::npos || !digits(std::string_view(rest).substr(0, dash)) ||
          !digits(std::string_view(rest).substr(dash + 1)))
        continue;
      const long pid = std::stol(rest.substr(0, dash));
      // A live process (or one we may not signal) may still be writing it.
      if (pid <= 0 || pid > INT_MAX || pid == ::getpid() ||
          ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
        continue;
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

}  // namespace mor::io
