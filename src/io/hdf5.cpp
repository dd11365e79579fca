// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/hdf5.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

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

/// The name of the file driver of write_access() (below).
constexpr const char* kDriverName = "mor-posix";

struct InnermostError {
  std::string description;
  std::string minor;
  bool ours = false;  // pushed by the driver below, whose descriptions say it all
};

// H5Ewalk2 visits from the API call down to the function that detected the error; the last
// entry is the most specific one ("unable to open file: name = ..., errno = 2, ...").
herr_t keep_innermost(unsigned /*n*/, const H5E_error2_t* err, void* client) {
  auto* out = static_cast<InnermostError*>(client);
  out->description = err->desc != nullptr ? err->desc : "";
  out->ours = err->func_name != nullptr && std::strcmp(err->func_name, kDriverName) == 0;
  char minor[256] = {};
  if (H5Eget_msg(err->min_num, nullptr, minor, sizeof minor) > 0) out->minor = minor;
  return 0;
}

/// HDF5's drivers describe a system error as "<what>: time = ..., filename = ..., errno = 28,
/// error message = '...', buf = 0x..., ..." (with a line break inside the time). Gives
/// "<what>: <the system's text for errno>" for those, and any other text on one line.
std::string plain(std::string text) {
  const std::size_t at = text.find("errno = ");
  if (at != std::string::npos) {
    const int error = std::atoi(text.c_str() + at + 8);
    if (error > 0) {
      const std::size_t what = std::min(text.find_first_of(":,"), at);
      std::string out = text.substr(0, what);
      while (!out.empty() && out.back() == ' ') out.pop_back();
      return (out.empty() ? "" : out + ": ") + std::generic_category().message(error);
    }
  }
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

thread_local std::uint64_t failures = 0;

[[noreturn]] void fail(std::string_view operation, std::string_view object,
                       const std::filesystem::path& file, const std::string& reason) {
  ++failures;
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
  if (!reason.empty()) {
    m += ": ";
    m += reason;
  }
  throw IoError(m);
}

// Fault injection (see hdf5.hpp): counters of checked calls and of driver writes, and the one
// to fail.
std::atomic<long> checked_calls{0}, failing_call{0};
std::atomic<long> driver_writes{0}, failing_write{0};
std::atomic<int> failing_write_errno{0};

/// Counts a checked call; true if it is the one to fail.
bool inject_call_failure() noexcept {
  const long n = checked_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  return n == failing_call.load(std::memory_order_relaxed);
}

/// Counts a driver write; the errno it is to fail with, or 0.
int injected_write_error() noexcept {
  const long n = driver_writes.fetch_add(1, std::memory_order_relaxed) + 1;
  return n == failing_write.load(std::memory_order_relaxed)
             ? failing_write_errno.load(std::memory_order_relaxed)
             : 0;
}

constexpr const char* kInjected = "injected failure";

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

namespace {
thread_local bool close_injected = false;  // the last close_checked failed by injection
}  // namespace

int close_checked(Kind kind, Id id) noexcept {
  const int status = close_id(kind, id);
  close_injected = status >= 0 && inject_call_failure();
  return close_injected ? -1 : status;
}

void throw_close_failure(Kind kind, std::string_view object, const std::filesystem::path& file) {
  const std::string reason = close_injected ? kInjected : last_error_reason();
  close_injected = false;
  fail(std::string("close ") + kind_name(kind), object, file, reason);
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
  inner.description = plain(std::move(inner.description));
  if (inner.ours || inner.minor.empty() || inner.description.find(inner.minor) != std::string::npos)
    return inner.description;
  if (inner.description.empty()) return inner.minor;
  return inner.description + " (" + inner.minor + ")";
}

std::uint64_t failure_count() noexcept {
  return failures;
}

Id check_id(Id id, std::string_view operation, std::string_view object,
            const std::filesystem::path& file) {
  if (id < 0) fail(operation, object, file, last_error_reason());
  if (inject_call_failure()) {
    H5Idec_ref(id);  // as if HDF5 had not made it
    fail(operation, object, file, kInjected);
  }
  return id;
}

int check(int status, std::string_view operation, std::string_view object,
          const std::filesystem::path& file) {
  if (status < 0) fail(operation, object, file, last_error_reason());
  if (inject_call_failure()) fail(operation, object, file, kInjected);
  return status;
}

long open_objects() {
  return static_cast<long>(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL));
}

namespace fault {

void fail_call(long call) {
  failing_call.store(call, std::memory_order_relaxed);
  checked_calls.store(0, std::memory_order_relaxed);
}

void fail_write(long write, int error) {
  failing_write_errno.store(error, std::memory_order_relaxed);
  failing_write.store(write, std::memory_order_relaxed);
  driver_writes.store(0, std::memory_order_relaxed);
}

long calls() noexcept {
  return checked_calls.load(std::memory_order_relaxed);
}
long writes() noexcept {
  return driver_writes.load(std::memory_order_relaxed);
}

}  // namespace fault

// ---------------------------------------------------------------------------------------------
// The "mor-posix" file driver of write_access(): HDF5's sec2 driver (H5FDsec2.c) in outline,
// with pread/pwrite, plus the WriteState rules. HDF5 serializes the calls into a driver.

namespace {

using haddr = haddr_t;

/// The largest address an off_t reaches.
constexpr haddr kMaxAddress = (haddr{1} << (8 * sizeof(off_t) - 1)) - 1;
/// Bytes per pread/pwrite call (Linux moves at most 2 GiB - 4 KiB at once).
constexpr std::size_t kMaxTransfer = std::size_t{1} << 30;

/// The driver's part of a file access property list (copied and freed by the callbacks below).
struct DriverInfo {
  std::shared_ptr<WriteState> state;
};

struct PosixFile {
  H5FD_t pub;  // first, so that HDF5's H5FD_t* is a PosixFile*; filled in by HDF5 after open
  int fd = -1;
  haddr eoa = 0;  // end of the address space HDF5 has allocated
  haddr eof = 0;  // size of the file on disk
  dev_t device = 0;
  ino_t inode = 0;
  unsigned length_size = 0;  // the superblock's "Size of Lengths" (0: not known, e.g. a new file)
  std::shared_ptr<WriteState> state;
};

static_assert(std::is_standard_layout_v<PosixFile>,
              "HDF5's H5FD_t* must point to the PosixFile it begins (pointer-interconvertible)");

PosixFile& as_file(H5FD_t* file) {
  return *reinterpret_cast<PosixFile*>(file);
}
const PosixFile& as_file(const H5FD_t* file) {
  return *reinterpret_cast<const PosixFile*>(file);
}

bool region_overflows(haddr addr, std::size_t size) {
  return addr == HADDR_UNDEF || addr > kMaxAddress || size > kMaxAddress - addr;
}

void push_error(hid_t minor, const std::string& text) {
  H5Epush2(H5E_DEFAULT, __FILE__, kDriverName, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s",
           text.c_str());
}

std::string system_text(int error) {
  return std::generic_category().message(error);
}

/// A write, truncation or close failed with errno error: recorded, and the file doomed. HDF5 is
/// told it succeeded: HDF5 1.10.8 does not survive its own error paths for failed writes (it
/// crashes in H5Ocopy, and at exit after a failed close), so it never takes them; the owner
/// finds the failure in the state after the call.
void record(WriteState& state, int error, const std::string& what) {
  if (state.error == 0) {
    state.error = error;
    state.failure = what;
  }
  state.doomed = true;
}

/// The superblock's "Size of Lengths" of an existing file, or 0 if no superblock is found or the
/// size is not one of 2, 4, 8. HDF5 File Format Specification 3.0, II.A (Level 0A, Format
/// Signature and Superblock): the superblock begins with the signature \211HDF\r\n\032\n at
/// offset 0, 512, 1024, 2048, ... (each twice the one before); its version is byte 8; Size of
/// Lengths is byte 14 in versions 0 and 1, byte 10 in versions 2 and 3.
unsigned superblock_length_size(int fd, haddr eof) {
  constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[16];
  for (haddr offset = 0; offset + sizeof head <= eof; offset = offset == 0 ? 512 : 2 * offset) {
    if (::pread(fd, head, sizeof head, static_cast<off_t>(offset)) != sizeof head) return 0;
    if (std::memcmp(head, kSignature, sizeof kSignature) != 0) continue;
    const unsigned size = head[8] <= 1 ? head[14] : head[8] <= 3 ? head[10] : 0;
    return size == 2 || size == 4 || size == 8 ? size : 0;
  }
  return 0;
}

/// A little-endian unsigned integer of `bytes` (at most 8) bytes.
std::uint64_t little_endian(const unsigned char* p, unsigned bytes) {
  std::uint64_t value = 0;
  for (unsigned i = bytes; i-- > 0;) value = (value << 8) | p[i];
  return value;
}

/// What is damaged in the global heap collection whose first `available` bytes are image (empty
/// if nothing is, or if image does not begin with a collection's signature and version 1, which
/// HDF5 checks itself). Bytes of the collection past `available` are zeros, as HDF5 reads them
/// past the end of the file. HDF5 File Format Specification 3.0, III.E (Level 1E, Global Heap): a
/// collection is "GCOL", a version byte, 3 reserved bytes and the Collection Size (Size of
/// Lengths bytes: the whole collection, this header included), then its objects one after the
/// other, each a 2-byte Heap Object Index, a 2-byte Reference Count, 4 reserved bytes and the
/// Object Size (Size of Lengths bytes) followed by the object's data "rounded up to a multiple of
/// eight"; object 0 is the free space, whose size counts its own header; space too small for an
/// object header at the end is free space. So every object's data ends inside the collection, and
/// every object takes at least its header. HDF5 1.10.8 walks the objects checking neither
/// (H5HG__cache_heap_deserialize): an object 0 of size 0 makes the walk stand still for ever
/// (the hang kept in tests/fuzz/known/), and a size past the end sends it beyond its buffer.
std::string global_heap_damage(const unsigned char* image, std::uint64_t available,
                               unsigned length_size) {
  const std::uint64_t header = 8 + length_size;  // the collection's, and each object's
  if (length_size == 0 || available < header || std::memcmp(image, "GCOL", 4) != 0 || image[4] != 1)
    return {};
  const std::uint64_t collection = little_endian(image + 8, length_size);
  // An object header that starts at `at`, with the zeros past the bytes at hand.
  unsigned char object[16];
  auto object_at = [&](std::uint64_t at) {
    std::memset(object, 0, sizeof object);
    if (at < available)
      std::memcpy(object, image + at, static_cast<std::size_t>(std::min(header, available - at)));
  };
  for (std::uint64_t at = header; at < collection && collection - at >= header;) {
    object_at(at);
    const unsigned index = static_cast<unsigned>(little_endian(object, 2));
    const std::uint64_t stored = little_endian(object + 8, length_size);
    const std::uint64_t room = collection - at;
    // Object 0's size counts its header; the others' data follows theirs, padded to 8 bytes.
    if (index == 0 ? stored > room : stored > room - header)
      return mor::detail::concat("object ", index, " at byte ", at, " claims ", stored,
                                 " bytes, past the end of the collection of ", collection,
                                 " bytes");
    const std::uint64_t takes = index == 0 ? stored : header + ((stored + 7) & ~std::uint64_t{7});
    if (takes == 0)
      return mor::detail::concat("free-space object at byte ", at,
                                 " has size 0 (its size counts its own header)");
    at += takes;
  }
  return {};
}

void* info_copy(const void* info) {
  return new (std::nothrow) DriverInfo(*static_cast<const DriverInfo*>(info));
}

herr_t info_free(void* info) {
  delete static_cast<DriverInfo*>(info);
  return 0;
}

void* info_get(H5FD_t* file) {
  return new (std::nothrow) DriverInfo{as_file(file).state};
}

H5FD_t* posix_open(const char* name, unsigned flags, hid_t fapl, haddr maxaddr) {
  if (name == nullptr || *name == '\0' || maxaddr == 0 || maxaddr == HADDR_UNDEF ||
      maxaddr > kMaxAddress) {
    push_error(H5E_BADVALUE, "invalid file name or address range");
    return nullptr;
  }
  const auto* info = static_cast<const DriverInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || !info->state) {
    push_error(H5E_BADVALUE, "the file access list lacks the driver's write state");
    return nullptr;
  }
  int o_flags = (flags & H5F_ACC_RDWR) != 0 ? O_RDWR : O_RDONLY;
  if ((flags & H5F_ACC_TRUNC) != 0) o_flags |= O_TRUNC;
  if ((flags & H5F_ACC_CREAT) != 0) o_flags |= O_CREAT;
  if ((flags & H5F_ACC_EXCL) != 0) o_flags |= O_EXCL;
  const int fd = ::open(name, o_flags | O_CLOEXEC, 0666);
  if (fd < 0) {
    push_error(H5E_CANTOPENFILE, "unable to open file: " + system_text(errno));
    return nullptr;
  }
  struct stat status {};
  auto* file = fstat(fd, &status) == 0 ? new (std::nothrow) PosixFile{} : nullptr;
  if (file == nullptr) {
    push_error(H5E_CANTOPENFILE, "unable to open file: " + system_text(errno ? errno : ENOMEM));
    ::close(fd);
    return nullptr;
  }
  file->fd = fd;
  file->eof = static_cast<haddr>(status.st_size);
  file->device = status.st_dev;
  file->inode = status.st_ino;
  file->length_size = superblock_length_size(fd, file->eof);
  file->state = info->state;
  return &file->pub;
}

herr_t posix_close(H5FD_t* handle) {
  PosixFile& file = as_file(handle);
  // A close that fails (NFS reports delayed write errors here) loses data: recorded, never
  // reported, as HDF5 1.10 cannot survive a failed file close.
  if (::close(file.fd) != 0 && !file.state->doomed)
    record(*file.state, errno, "cannot close the file: " + system_text(errno));
  delete &file;
  return 0;
}

int posix_compare(const H5FD_t* a, const H5FD_t* b) {
  const PosixFile &f = as_file(a), &g = as_file(b);
  if (f.device != g.device) return f.device < g.device ? -1 : 1;
  if (f.inode != g.inode) return f.inode < g.inode ? -1 : 1;
  return 0;
}

herr_t posix_query(const H5FD_t*, unsigned long* flags) {
  if (flags != nullptr)
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE |
             H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
  return 0;
}

haddr posix_get_eoa(const H5FD_t* file, H5FD_mem_t) {
  return as_file(file).eoa;
}

herr_t posix_set_eoa(H5FD_t* file, H5FD_mem_t, haddr addr) {
  as_file(file).eoa = addr;
  return 0;
}

haddr posix_get_eof(const H5FD_t* file, H5FD_mem_t) {
  return as_file(file).eof;
}

herr_t posix_get_handle(H5FD_t* file, hid_t, void** handle) {
  if (handle == nullptr) return -1;
  *handle = &as_file(file).fd;
  return 0;
}

/// size bytes at addr into buffer (zeros past the end of the file, as in sec2).
herr_t read_bytes(PosixFile& file, haddr addr, size_t size, void* buffer);

herr_t posix_read(H5FD_t* handle, H5FD_mem_t type, hid_t, haddr addr, size_t size, void* buffer) {
  PosixFile& file = as_file(handle);
  if (region_overflows(addr, size)) {
    push_error(H5E_OVERFLOW, "read beyond the addressable range");
    return -1;
  }
  // A global heap collection is checked before HDF5 decodes it (global_heap_damage()). HDF5
  // 1.10 reads collections as raw data (H5F_block_read maps H5FD_MEM_GHEAP to H5FD_MEM_DRAW), so
  // every raw-data read that begins with a collection's signature and version ("GCOL", 1) is
  // checked: a sound collection always passes; a dataset whose stored bytes happened to begin
  // with those 5 bytes, followed by sizes that do not fit, would be refused as well.
  if (type == H5FD_MEM_GHEAP || type == H5FD_MEM_DRAW) {
    if (read_bytes(file, addr, size, buffer) < 0) return -1;
    // HDF5 reads the first 4096 bytes of a collection, then the rest: a larger collection is
    // read whole here (what the file holds of it) and checked before HDF5 asks for the rest.
    const auto* image = static_cast<const unsigned char*>(buffer);
    std::string damage;
    if (file.length_size != 0 && size >= 8 + file.length_size &&
        std::memcmp(image, "GCOL", 4) == 0 && image[4] == 1) {
      const std::uint64_t collection = little_endian(image + 8, file.length_size);
      const std::uint64_t in_file = addr < file.eof ? file.eof - addr : 0;
      if (collection <= size || in_file <= size) {
        damage = global_heap_damage(image, size, file.length_size);
      } else {
        std::vector<unsigned char> whole(static_cast<std::size_t>(std::min(collection, in_file)));
        if (read_bytes(file, addr, whole.size(), whole.data()) < 0) return -1;
        damage = global_heap_damage(whole.data(), whole.size(), file.length_size);
      }
    }
    if (damage.empty()) return 0;
    push_error(H5E_BADVALUE, mor::detail::concat("damaged global heap collection at offset ", addr,
                                                 ": ", damage));
    return -1;
  }
  return read_bytes(file, addr, size, buffer);
}

herr_t read_bytes(PosixFile& file, haddr addr, size_t size, void* buffer) {
  auto* out = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const ssize_t n = ::pread(file.fd, out, std::min(size, kMaxTransfer), static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      push_error(H5E_READERROR, mor::detail::concat(system_text(errno), " (reading ", size,
                                                    " bytes at offset ", addr, ")"));
      return -1;
    }
    if (n == 0) {  // past the end of the file: zeros, as in sec2
      std::memset(out, 0, size);
      break;
    }
    out += n;
    addr += static_cast<haddr>(n);
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

herr_t posix_write(H5FD_t* handle, H5FD_mem_t, hid_t, haddr addr, size_t size, const void* buffer) {
  PosixFile& file = as_file(handle);
  if (file.state->doomed) return 0;  // the file is being thrown away
  if (region_overflows(addr, size)) {
    push_error(H5E_OVERFLOW, "write beyond the addressable range");
    return -1;
  }
  const haddr start = addr;
  const std::size_t total = size;
  int error = injected_write_error();
  const auto* in = static_cast<const unsigned char*>(buffer);
  while (error == 0 && size > 0) {
    const ssize_t n = ::pwrite(file.fd, in, std::min(size, kMaxTransfer), static_cast<off_t>(addr));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    in += n;
    addr += static_cast<haddr>(n);
    size -= static_cast<std::size_t>(n);
  }
  file.eof = std::max(file.eof, addr);
  if (error != 0)
    record(*file.state, error,
           mor::detail::concat(system_text(error), " (writing ", total, " bytes at offset ", start,
                               ")"));
  return 0;
}

/// Sets the file's size to the allocated address space (HDF5 calls it at flush and close).
herr_t posix_truncate(H5FD_t* handle, hid_t, hbool_t) {
  PosixFile& file = as_file(handle);
  if (file.state->doomed || file.eoa == file.eof) return 0;
  int error = injected_write_error();
  while (error == 0 && ::ftruncate(file.fd, static_cast<off_t>(file.eoa)) != 0)
    if (errno != EINTR) error = errno;
  if (error != 0)
    record(*file.state, error,
           mor::detail::concat(system_text(error), " (setting the file size to ", file.eoa,
                               " bytes)"));
  else
    file.eof = file.eoa;
  return 0;
}

/// An advisory lock on the whole file, as sec2 takes: exclusive for writing, so that no other
/// process opens the file while it is written. File systems without flock() go unlocked.
herr_t posix_lock(H5FD_t* handle, hbool_t exclusive) {
  if (::flock(as_file(handle).fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 ||
      errno == ENOSYS)
    return 0;
  push_error(H5E_CANTLOCKFILE, "unable to lock the file: " + system_text(errno));
  return -1;
}

/// Never fails: HDF5 unlocks on the way to closing the file (see record()), and closing the
/// descriptor releases the lock anyway.
herr_t posix_unlock(H5FD_t* handle) {
  ::flock(as_file(handle).fd, LOCK_UN);
  return 0;
}

const H5FD_class_t kPosixDriver = {
    kDriverName,
    kMaxAddress,
    H5F_CLOSE_WEAK,
    nullptr,  // terminate
    nullptr,  // sb_size: no driver information in the superblock, so any HDF5 reads the files
    nullptr,  // sb_encode
    nullptr,  // sb_decode
    sizeof(DriverInfo),
    info_get,
    info_copy,
    info_free,
    0,        // dxpl_size
    nullptr,  // dxpl_copy
    nullptr,  // dxpl_free
    posix_open,
    posix_close,
    posix_compare,
    posix_query,
    nullptr,  // get_type_map
    nullptr,  // alloc
    nullptr,  // free
    posix_get_eoa,
    posix_set_eoa,
    posix_get_eof,
    posix_get_handle,
    posix_read,
    posix_write,
    nullptr,  // flush: nothing is buffered
    posix_truncate,
    posix_lock,
    posix_unlock,
    H5FD_FLMAP_DICHOTOMY,
};

/// The driver's identifier, registered on first use (and again if HDF5 was closed meanwhile).
hid_t posix_driver() {
  static std::mutex mutex;
  static hid_t id = H5I_INVALID_HID;
  const std::lock_guard<std::mutex> lock(mutex);
  if (id < 0 || H5Iget_type(id) != H5I_VFL) id = H5FDregister(&kPosixDriver);
  return id;
}

}  // namespace

PropertyList write_access(std::shared_ptr<WriteState> state, const std::filesystem::path& file) {
  PropertyList fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "create file access list for", "", file));
  const DriverInfo info{std::move(state)};
  check(H5Pset_driver(fapl.get(), posix_driver(), &info), "select the file driver for", "", file);
  return fapl;
}

PropertyList read_access(const std::filesystem::path& file) {
  // Nothing is written; the state only satisfies the driver.
  return write_access(std::make_shared<WriteState>(), file);
}

}  // namespace mor::io::h5
