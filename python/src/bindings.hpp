// SPDX-License-Identifier: GPL-3.0-or-later
// The Python module's shared pieces: the model object behind mor.Model (a registered model
// kind's ModelSpec, or an in-memory system), the conversions between NumPy / SciPy objects and
// the library's matrices, keyword arguments as a TOML table read by the library's own key
// readers, and the interruptible call that runs library code off the GIL.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <toml++/toml.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "experiments/runner/config.hpp"
#include "experiments/runner/keys.hpp"
#include "experiments/runner/model_kind.hpp"
#include "experiments/runner/projection_run.hpp"
#include "src/core/interrupt.hpp"
#include "src/systems/dense_model.hpp"
#include "src/systems/lti.hpp"

namespace mor::python {

namespace py = pybind11;
using experiments::FullModel;
using experiments::LinearSystem;
using experiments::ModelSpec;

/// A reduced first-order model as the methods return it: E x' = A x + B u, y = C x + D u.
struct DenseFirstOrder {
  Matrix E, A, B, C, D;
};

/// What a reduction recorded besides the reduced matrices (read back from its /reduction group).
struct ReductionRecord {
  std::string method;
  py::dict info;     ///< /reduction attributes: the effective keys, r, error_bound, seconds, ...
  py::dict records;  ///< /reduction datasets by path below /reduction ("hsv", "V", "history/x")
};

/// The object behind mor.Model: constant data, shared by every Python reference to it.
struct Model {
  /// The kind's spec (a registered kind, or the in-memory kind of LtiModel / SecondOrderModel).
  std::shared_ptr<const ModelSpec> spec;
  /// The linear system, once asked for (kept so that the arrays handed out stay valid).
  mutable std::shared_ptr<const LinearSystem> system;
  /// A reduced model of a linear method: its dense matrices (first or second order).
  std::shared_ptr<const DenseFirstOrder> dense_first;
  std::shared_ptr<const DenseSecondOrderSystem> dense_second;
  /// A projected nonlinear model (pod, empirical_bt, ...): the reduction and the full model it
  /// refers to.
  std::shared_ptr<experiments::ProjectionReduction> projected_rom;
  std::shared_ptr<FullModel> projected_full;
  std::optional<ReductionRecord> reduction;
  /// A parametric full model (mor.Chain(..., parameters=...)): the domain of its parameters
  /// ([parameters]); empty for a model at one point. A parametric reduced model holds its domain
  /// in projected_rom->parametric.
  ParameterDomain parameters;
  /// A linear method's parametric reduced model (mor.reduce of a parametric LTI model): its
  /// dense matrices above are those at the domain's center; rom.at(...) evaluates it.
  std::shared_ptr<const ParametricLtiModel> parametric_lti;
  /// A reduced model that rom.at(...) evaluated: the point, in its domain's order.
  std::optional<Vector> point;

  /// The linear system (InvalidArgument naming the model if it is not linear).
  std::shared_ptr<const LinearSystem> linear_system() const;
  /// The operator the norms and the linear methods use; `full` receives the model it refers to
  /// (null for a dense reduced model).
  std::unique_ptr<LtiOperator> lti_operator(std::shared_ptr<FullModel>& full) const;
  bool first_order() const;
  Index n() const;
};

/// The object behind mor.Signal: an input signal of experiment files ([input], [[training]]),
/// its keys read by the runner's reader of those tables.
struct SignalObject {
  experiments::InputSpec spec;
  /// The signal with its own channels (one; a table's value columns), for sig(t).
  std::shared_ptr<const Signal> values;
  /// The name it was made by, for messages ("mor.Sine").
  std::string maker;
};

/// The signal `u` of mor.simulate for a model with m inputs: a SignalObject drives them as an
/// experiment file's [input] does (make_signal); nullptr if u is not a SignalObject.
std::unique_ptr<Signal> signal_for_inputs(py::handle u, Index m);
/// Binds mor.Signal and the signal constructors (python/src/signal.cpp).
void bind_signals(py::module_& mod);

/// Key declarations (experiments/runner/keys.hpp) as dicts: name, type, default, unit, doc,
/// variant; what mor.keys() and the signal constructors show (module.cpp).
py::list key_rows(const std::vector<experiments::KeyDoc>& rows);

/// A ModelSpec over an in-memory system (mor.LtiModel, mor.SecondOrderModel, reduced models).
std::shared_ptr<const ModelSpec> memory_spec(std::shared_ptr<const LinearSystem> system);

// --- conversions -------------------------------------------------------------------------------

/// A matrix argument (scipy.sparse matrix or array, or array-like) as the library's CSC matrix,
/// copied once (see docs/python.md for the inputs that are converted first). `vector_as` says
/// how a 1-D array is taken: 'c' a column, 'r' a row. @throws InvalidArgument naming `what` for
/// a non-finite entry or more than two dimensions.
SparseMatrix to_sparse(py::handle x, const std::string& what, char vector_as = 'c');
/// The same as a dense matrix.
Matrix to_dense(py::handle x, const std::string& what, char vector_as = 'c');
/// A read-only NumPy view of a dense matrix owned by `owner`.
py::array dense_view(const Matrix& X, py::object owner);
py::array vector_copy(const Vector& x);
/// A scipy.sparse.csc_matrix whose arrays are read-only views of X, kept alive by `owner`.
py::object sparse_view(const SparseMatrix& X, py::object owner);

// --- keyword arguments -------------------------------------------------------------------------

/// Python keyword arguments as a TOML table (bool, int, float, str, os.PathLike, lists, dicts).
/// @throws InvalidArgument naming `where` and the key for a value of another type.
toml::table to_toml(const py::dict& kwargs, const std::string& where);
/// A library message without the "(--set)" the TOML readers add for nodes that have no line.
std::string clean_message(std::string message);
/// Runs f; InvalidArgument messages are passed through clean_message.
template <class F>
auto with_clean_messages(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(clean_message(e.what()));
  }
}

// --- running library code ----------------------------------------------------------------------

/// Runs f() on a worker thread with the GIL released, while this thread checks Python's signal
/// handlers every 20 ms: on Ctrl-C (or any exception a handler raises) it sets the library's
/// stop flag (src/core/interrupt.hpp), waits for the worker to stop, and raises that exception.
/// Exceptions of f are rethrown here (and translated by the module's exception translators).
template <class F>
auto run_released(F&& f) -> decltype(f()) {
  using R = decltype(f());
  std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> result;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  std::optional<py::error_already_set> python_error;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        if constexpr (std::is_void_v<R>) {
          f();
          result.emplace(true);
        } else {
          result.emplace(f());
        }
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done = true;
      cv.notify_all();
    });
    bool stopping = false;
    std::unique_lock lock(mutex);
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      if (done || stopping) continue;
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          python_error.emplace();  // fetches the exception (KeyboardInterrupt)
          stopping = true;
          g_stop_requested.store(true);
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
    if (stopping) g_stop_requested.store(false);
  }
  if (python_error) throw std::move(*python_error);
  if (error) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<R>) return std::move(*result);
}

}  // namespace mor::python
