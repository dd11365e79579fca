// SPDX-License-Identifier: GPL-3.0-or-later
#include "src/io/matrix_stream.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <set>
#include <string>

#include "src/core/errors.hpp"

namespace mor::io {
namespace {

using detail::concat;

constexpr std::string_view kMagic = "mormats1";
constexpr std::int64_t kMaxStorageIndex = std::numeric_limits<int>::max();

void put_bytes(std::ostream& out, const void* data, std::size_t n) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
}

template <class T>
void put(std::ostream& out, T value) {
  put_bytes(out, &value, sizeof value);
}

/// The stream, read front to back; every read checks that the bytes are there.
class Reader {
 public:
  explicit Reader(std::string_view stream) : stream_(stream) {}

  std::size_t left() const noexcept { return stream_.size() - at_; }

  /// Refuses `what` if it needs more bytes than are left.
  /// @throws IoError "the stream ends at byte <size> in <what>, which needs <need> bytes (<k>
  ///         are left)".
  void require_left(long double need, const std::string& what) const {
    if (need > static_cast<long double>(left()))
      throw IoError(concat("the stream ends at byte ", stream_.size(), " in ", what,
                           ", which needs ", need, " bytes (", left(), " are left)"));
  }
  /// The next n bytes of `what`.
  const char* take(std::size_t n, const std::string& what) {
    require_left(static_cast<long double>(n), what);
    const char* p = stream_.data() + at_;
    at_ += n;
    return p;
  }
  template <class T>
  T get(const std::string& what) {
    T value;
    std::memcpy(&value, take(sizeof value, what), sizeof value);
    return value;
  }
  /// Copies count items of type T (the caller has checked that count * sizeof(T) is held).
  template <class T>
  void copy_to(T* to, std::size_t count, const std::string& what) {
    if (count > 0) std::memcpy(to, take(count * sizeof(T), what), count * sizeof(T));
  }

 private:
  std::string_view stream_;
  std::size_t at_ = 0;
};

/// Refuses a value that is not finite, at (row, col), 1-based.
void require_finite(double value, Index row, Index col, const std::string& what) {
  if (!std::isfinite(value))
    throw IoError(concat(what, " holds ", value, " at (", row + 1, ", ", col + 1, ")"));
}

Matrix decode_dense(Reader& r, std::int64_t rows, std::int64_t cols, const std::string& what) {
  // In long double (64-bit mantissa): rows * cols may pass 2^64; nothing is allocated unless
  // the stream holds it.
  r.require_left(static_cast<long double>(rows) * static_cast<long double>(cols) * sizeof(double),
                 what);
  Matrix M(rows, cols);
  r.copy_to(M.data(), static_cast<std::size_t>(M.size()), what);
  // Over the values, not the columns: a 0 x 2^40 matrix holds no value and takes no time.
  for (Index k = 0; k < M.size(); ++k)
    if (!std::isfinite(M.data()[k])) require_finite(M.data()[k], k % rows, k / rows, what);
  return M;
}

SparseMatrix decode_sparse(Reader& r, std::int64_t rows, std::int64_t cols,
                           const std::string& what) {
  if (rows > kMaxStorageIndex || cols > kMaxStorageIndex)
    throw IoError(concat(what, " is larger than a sparse matrix's 32-bit indices allow"));
  const auto nonzeros = r.get<std::int64_t>(what);
  if (nonzeros < 0 || nonzeros > kMaxStorageIndex)
    throw IoError(concat(what, " claims ", nonzeros, " nonzeros"));
  // Column starts, row indices and values.
  r.require_left(
      4.0L * static_cast<long double>(cols + 1) + 12.0L * static_cast<long double>(nonzeros), what);
  SparseMatrix S(rows, cols);  // compressed, column starts zero
  S.resizeNonZeros(static_cast<Index>(nonzeros));
  r.copy_to(S.outerIndexPtr(), static_cast<std::size_t>(cols + 1), what);
  r.copy_to(S.innerIndexPtr(), static_cast<std::size_t>(nonzeros), what);
  r.copy_to(S.valuePtr(), static_cast<std::size_t>(nonzeros), what);
  const int* start = S.outerIndexPtr();
  const int* row = S.innerIndexPtr();
  if (start[0] != 0 || start[cols] != nonzeros)
    throw IoError(concat(what, ": its column starts run from ", start[0], " to ", start[cols],
                         ", not from 0 to its ", nonzeros, " nonzeros"));
  // All column starts first: with the two ends checked, each lies in [0, nonzeros].
  for (std::int64_t j = 0; j < cols; ++j)
    if (start[j + 1] < start[j])
      throw IoError(
          concat(what, ": column ", j + 1, " starts at ", start[j], " and ends at ", start[j + 1]));
  for (std::int64_t j = 0; j < cols; ++j)
    for (int k = start[j]; k < start[j + 1]; ++k) {
      if (row[k] < 0 || row[k] >= rows || (k > start[j] && row[k] <= row[k - 1]))
        throw IoError(concat(what, ": row index ", row[k], " of column ", j + 1,
                             " is out of range or out of order"));
      require_finite(S.valuePtr()[k], row[k], j, what);
    }
  return S;
}

}  // namespace

void encode_matrices(std::ostream& out, const std::vector<NamedMatrix>& vars) {
  for (const auto& v : vars)
    require(is_variable_name(v.name), "cannot pass on matrix '", v.name,
            "': not a variable name (a letter, then letters, digits or '_', at most 63)");
  put_bytes(out, kMagic.data(), kMagic.size());
  put<std::uint64_t>(out, vars.size());
  for (const auto& v : vars) {
    put<std::uint64_t>(out, v.name.size());
    put_bytes(out, v.name.data(), v.name.size());
    if (const auto* D = std::get_if<Matrix>(&v.value)) {
      put<std::uint8_t>(out, 'D');
      put<std::int64_t>(out, D->rows());
      put<std::int64_t>(out, D->cols());
      put_bytes(out, D->data(), static_cast<std::size_t>(D->size()) * sizeof(double));
      continue;
    }
    const auto& S0 = std::get<SparseMatrix>(v.value);
    require(S0.rows() <= kMaxStorageIndex && S0.cols() <= kMaxStorageIndex,
            "cannot pass on matrix '", v.name, "': ", S0.rows(), " x ", S0.cols(),
            " is beyond 32-bit indices");
    SparseMatrix compressed;
    const SparseMatrix* S = &S0;
    if (!S0.isCompressed()) {
      compressed = S0;
      compressed.makeCompressed();
      S = &compressed;
    }
    put<std::uint8_t>(out, 'S');
    put<std::int64_t>(out, S->rows());
    put<std::int64_t>(out, S->cols());
    put<std::int64_t>(out, S->nonZeros());
    put_bytes(out, S->outerIndexPtr(), static_cast<std::size_t>(S->cols() + 1) * sizeof(int));
    put_bytes(out, S->innerIndexPtr(), static_cast<std::size_t>(S->nonZeros()) * sizeof(int));
    put_bytes(out, S->valuePtr(), static_cast<std::size_t>(S->nonZeros()) * sizeof(double));
  }
}

std::vector<NamedMatrix> decode_matrices(std::string_view stream) {
  Reader r(stream);
  if (std::string_view(r.take(kMagic.size(), "its header"), kMagic.size()) != kMagic)
    throw IoError("the stream does not start with the header \"mormats1\"");
  const auto count = r.get<std::uint64_t>("the count of matrices");
  std::vector<NamedMatrix> vars;
  std::set<std::string> names;
  // Each matrix takes at least 26 bytes, so the loop ends with the stream.
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::string which = concat("matrix ", k + 1, " of ", count);
    const auto length = r.get<std::uint64_t>(concat("the name of ", which));
    if (length == 0 || length > 63)
      throw IoError(concat("the name of ", which, " claims ", length,
                           " characters (a variable name has 1 to 63)"));
    std::string name(r.take(length, concat("the name of ", which)), length);
    if (!is_variable_name(name))
      throw IoError(concat("the name of ", which,
                           " is not a variable name (a letter, then "
                           "letters, digits or '_')"));
    if (!names.insert(name).second) throw IoError(concat("'", name, "' comes twice"));
    const std::string named = concat("'", name, "' (", which, ")");
    const auto kind = r.get<std::uint8_t>(named);
    const auto rows = r.get<std::int64_t>(named);
    const auto cols = r.get<std::int64_t>(named);
    if ((kind != 'D' && kind != 'S') || rows < 0 || cols < 0)
      throw IoError(concat(named, " has kind ", static_cast<int>(kind), " and size ", rows, " x ",
                           cols, " (kinds: 'D' dense, 'S' sparse; sizes >= 0)"));
    const std::string what =
        concat("'", name, "' (", kind == 'D' ? "dense, " : "sparse, ", rows, " x ", cols, ")");
    if (kind == 'D')
      vars.push_back({std::move(name), decode_dense(r, rows, cols, what)});
    else
      vars.push_back({std::move(name), decode_sparse(r, rows, cols, what)});
  }
  if (r.left() != 0)
    throw IoError(
        concat("the stream goes on for ", r.left(), " bytes after its ", count, " matrices"));
  return vars;
}

}  // namespace mor::io
