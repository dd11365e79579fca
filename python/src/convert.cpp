// SPDX-License-Identifier: GPL-3.0-or-later
// NumPy / SciPy objects to the library's matrices and back, and keyword arguments to TOML.
//
// The library's systems own their matrices (SparseMatrix, Matrix), so an input is copied once
// into them: CSC or CSR with float64 data and int32 indices in canonical form (sorted, no
// duplicates) and float64 arrays (either order) are read in place by that one copy; other
// inputs (COO, other dtypes, int64 indices, unsorted indices) are converted by SciPy / NumPy
// first. What the library hands back (model.A, rom.A) are read-only views of its own storage.
#include <cmath>
#include <regex>
#include <sstream>

#include "python/src/bindings.hpp"

namespace mor::python {
namespace {

using RowSparse = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

bool is_scipy_sparse(py::handle x) {
  return py::hasattr(x, "tocsc") && py::hasattr(x, "format") && py::hasattr(x, "shape");
}

template <class M>
void require_finite_sparse(const M& X, const std::string& what) {
  for (Index k = 0; k < X.outerSize(); ++k)
    for (typename M::InnerIterator it(X, k); it; ++it)
      if (!std::isfinite(it.value()))
        throw InvalidArgument(detail::concat(what, "(", it.row() + 1, ", ", it.col() + 1,
                                             ") = ", it.value(), " is not finite"));
}

template <class M>
void require_finite_dense(const M& X, const std::string& what) {
  for (Index j = 0; j < X.cols(); ++j)
    for (Index i = 0; i < X.rows(); ++i)
      if (!std::isfinite(X(i, j)))
        throw InvalidArgument(
            detail::concat(what, "(", i + 1, ", ", j + 1, ") = ", X(i, j), " is not finite"));
}

/// Refuses a complex argument (NumPy would drop the imaginary part with only a warning), as the
/// .mat reader refuses a complex matrix.
void require_real(py::handle x, const std::string& what) {
  const auto np = py::module_::import("numpy");
  const py::object dtype = py::hasattr(x, "dtype")
                               ? py::reinterpret_borrow<py::object>(x).attr("dtype")
                               : np.attr("asarray")(x).attr("dtype");
  require(std::string(py::str(dtype.attr("kind"))) != "c", what, " is complex (dtype ",
          std::string(py::str(dtype)),
          "); mor's models are real: pass the real part explicitly if that is meant");
}

/// The array of a dense argument as float64 (cast by NumPy if it is another dtype), 2-D.
py::array_t<double> dense_array(py::handle x, const std::string& what, char vector_as) {
  require(!x.is_none(), what, " is None, not an array of numbers");
  require_real(x, what);
  auto a = py::array_t<double>::ensure(x);
  if (!a) {
    PyErr_Clear();
    throw InvalidArgument(detail::concat(what,
                                         " must be a scipy.sparse matrix or an array of "
                                         "numbers, got ",
                                         std::string(py::str(py::type::of(x).attr("__name__")))));
  }
  if (a.ndim() == 0) return a.attr("reshape")(1, 1).cast<py::array_t<double>>();
  if (a.ndim() == 1)
    return (vector_as == 'r' ? a.attr("reshape")(1, -1) : a.attr("reshape")(-1, 1))
        .cast<py::array_t<double>>();
  require(a.ndim() == 2, what, " must have 1 or 2 dimensions, got ", a.ndim());
  return a;
}

/// Whether a CSC / CSR matrix with int32 indices has strictly increasing indices in every column
/// (row): sorted, without duplicates, as Eigen's storage requires. Checked here: SciPy's
/// has_canonical_format is a flag that some conversions leave False on canonical matrices.
bool canonical(const py::object& m) {
  const auto indices = m.attr("indices").cast<py::array_t<int>>();
  const auto indptr = m.attr("indptr").cast<py::array_t<int>>();
  const int* p = indptr.data();
  const int* i = indices.data();
  for (py::ssize_t k = 0; k + 1 < indptr.size(); ++k)
    for (int j = p[k] + 1; j < p[k + 1]; ++j)
      if (i[j] <= i[j - 1]) return false;
  return true;
}

/// The scipy sparse argument in CSC or CSR form with float64 data, int32 indices and canonical
/// (sorted, duplicate-free) indices: the input itself if it already is.
py::object canonical_compressed(py::handle x, const std::string& what) {
  const std::string format = py::str(x.attr("format"));
  py::object m = py::reinterpret_borrow<py::object>(x);
  require_real(m, what);
  if (format != "csc" && format != "csr") m = m.attr("tocsc")();
  const auto np = py::module_::import("numpy");
  auto dtype = [&](const char* array) { return std::string(py::str(m.attr(array).attr("dtype"))); };
  const bool ok_types =
      dtype("data") == "float64" && dtype("indices") == "int32" && dtype("indptr") == "int32";
  if (!ok_types) {
    m = m.attr("astype")(np.attr("float64"));
    if (m.is(x)) m = m.attr("copy")();
    m.attr("indices") = m.attr("indices").attr("astype")(np.attr("int32"));
    m.attr("indptr") = m.attr("indptr").attr("astype")(np.attr("int32"));
  }
  if (!canonical(m)) {
    if (m.is(x)) m = m.attr("copy")();
    m.attr("sum_duplicates")();
  }
  return m;
}

}  // namespace

SparseMatrix to_sparse(py::handle x, const std::string& what, char vector_as) {
  if (is_scipy_sparse(x)) {
    py::object m = canonical_compressed(x, what);
    const auto shape = m.attr("shape").cast<std::pair<Index, Index>>();
    const auto data = m.attr("data").cast<py::array_t<double>>();
    const auto indices = m.attr("indices").cast<py::array_t<int>>();
    const auto indptr = m.attr("indptr").cast<py::array_t<int>>();
    const Index nnz = static_cast<Index>(indptr.at(indptr.size() - 1));
    if (std::string(py::str(m.attr("format"))) == "csc") {
      Eigen::Map<const SparseMatrix> view(shape.first, shape.second, nnz, indptr.data(),
                                          indices.data(), data.data());
      require_finite_sparse(view, what);
      // One exact copy of the three arrays (Eigen's sparse assignment would over-reserve).
      SparseMatrix X(shape.first, shape.second);
      X.resizeNonZeros(nnz);
      std::copy(indptr.data(), indptr.data() + shape.second + 1, X.outerIndexPtr());
      std::copy(indices.data(), indices.data() + nnz, X.innerIndexPtr());
      std::copy(data.data(), data.data() + nnz, X.valuePtr());
      return X;
    }
    Eigen::Map<const RowSparse> view(shape.first, shape.second, nnz, indptr.data(), indices.data(),
                                     data.data());
    require_finite_sparse(view, what);
    return SparseMatrix(view);
  }
  const auto a = dense_array(x, what, vector_as);
  const Index rows = a.shape(0), cols = a.shape(1);
  const bool fortran = a.flags() & py::array::f_style;
  const bool c_order = a.flags() & py::array::c_style;
  if (fortran || c_order) {
    if (fortran) {
      Eigen::Map<const Matrix> view(a.data(), rows, cols);
      require_finite_dense(view, what);
      return view.sparseView();
    }
    Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> view(
        a.data(), rows, cols);
    require_finite_dense(view, what);
    return SparseMatrix(view.sparseView());
  }
  return to_sparse(py::module_::import("numpy").attr("asfortranarray")(a), what, vector_as);
}

Matrix to_dense(py::handle x, const std::string& what, char vector_as) {
  if (is_scipy_sparse(x)) return Matrix(to_sparse(x, what, vector_as));
  auto a = dense_array(x, what, vector_as);
  if (!(a.flags() & py::array::f_style))
    a = py::module_::import("numpy").attr("asfortranarray")(a).cast<py::array_t<double>>();
  Eigen::Map<const Matrix> view(a.data(), a.shape(0), a.shape(1));
  require_finite_dense(view, what);
  return view;
}

py::array dense_view(const Matrix& X, py::object owner) {
  py::array a(py::dtype::of<double>(), {X.rows(), X.cols()},
              {static_cast<py::ssize_t>(sizeof(double)),
               static_cast<py::ssize_t>(sizeof(double) * X.rows())},
              X.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

py::array vector_copy(const Vector& x) {
  py::array_t<double> a(x.size());
  std::copy(x.data(), x.data() + x.size(), a.mutable_data());
  return a;
}

py::object sparse_view(const SparseMatrix& X, py::object owner) {
  require(X.isCompressed(), "internal: an uncompressed sparse matrix");
  auto view = [&](const auto* p, Index n) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    py::array a(py::dtype::of<T>(), {n}, {static_cast<py::ssize_t>(sizeof(T))}, p, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
  };
  const auto sparse = py::module_::import("scipy.sparse");
  return sparse.attr("csc_matrix")(
      py::make_tuple(view(X.valuePtr(), X.nonZeros()), view(X.innerIndexPtr(), X.nonZeros()),
                     view(X.outerIndexPtr(), X.cols() + 1)),
      py::arg("shape") = py::make_tuple(X.rows(), X.cols()), py::arg("copy") = false);
}

namespace {

/// One Python value as a TOML node.
std::unique_ptr<toml::node> toml_node(py::handle v, const std::string& where,
                                      const std::string& key) {
  const auto np = py::module_::import("numpy");
  if (py::isinstance<py::bool_>(v) || py::isinstance(v, np.attr("bool_")))
    return std::make_unique<toml::value<bool>>(v.cast<bool>());
  if (py::isinstance<py::int_>(v) || py::isinstance(v, np.attr("integer"))) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(
        py::int_(py::reinterpret_borrow<py::object>(v)).ptr(), &overflow);
    require(overflow == 0, where, ": ", key, " = ", std::string(py::str(v)),
            " is out of range (at most 2**63 - 1 in magnitude)");
    return std::make_unique<toml::value<std::int64_t>>(x);
  }
  if (PyComplex_Check(v.ptr()) || py::isinstance(v, np.attr("complexfloating")))
    throw InvalidArgument(detail::concat(where, ": ", key, " = ", std::string(py::str(v)),
                                         " is complex; the key takes a real number"));
  if (py::isinstance<py::float_>(v) || py::isinstance(v, np.attr("floating")))
    return std::make_unique<toml::value<double>>(v.cast<double>());
  if (py::isinstance<py::str>(v))
    return std::make_unique<toml::value<std::string>>(v.cast<std::string>());
  if (py::hasattr(v, "__fspath__"))
    return std::make_unique<toml::value<std::string>>(
        py::module_::import("os").attr("fspath")(v).cast<std::string>());
  if (py::isinstance<py::dict>(v)) {
    auto t = std::make_unique<toml::table>(to_toml(v.cast<py::dict>(), where + " " + key));
    return t;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v) || py::isinstance<py::array>(v)) {
    auto a = std::make_unique<toml::array>();
    for (py::handle e : py::iter(py::isinstance<py::array>(v) ? v.attr("tolist")() : v)) {
      auto n = toml_node(e, where, key);
      if (auto* t = n->as_table())
        a->push_back(std::move(*t));
      else
        n->visit([&](auto& x) {
          if constexpr (!toml::is_table<decltype(x)>) a->push_back(std::move(x));
        });
    }
    return a;
  }
  throw InvalidArgument(detail::concat(where, ": ", key, " = ", std::string(py::repr(v)),
                                       " is not a bool, number, string, path, list or dict",
                                       v.is_none() ? " (leave a key out for its default)" : ""));
}

}  // namespace

toml::table to_toml(const py::dict& kwargs, const std::string& where) {
  toml::table t;
  for (auto [k, v] : kwargs) {
    const std::string key = py::str(k);
    auto node = toml_node(v, where, key);
    node->visit([&](auto& x) { t.insert_or_assign(key, std::move(x)); });
  }
  return t;
}

std::string clean_message(std::string message) {
  static const std::regex set_suffix(" \\(--set\\)");
  return std::regex_replace(message, set_suffix, "");
}

}  // namespace mor::python
