// SPDX-License-Identifier: GPL-3.0-or-later
// mor.Signal: the input signals of experiment files ([input], [[training]]: zero, step, sine,
// chirp, multisine, table) as Python objects. The keyword arguments are read by the runner's own
// reader of those tables (read_input over the declarations of signal_keys, experiment_keys.hpp),
// so a signal type or key added there appears here without another edit, and a signal is
// evaluated by the library's Signal the program builds from the same keys (make_signal).
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "python/src/bindings.hpp"
#include "src/signals/signal.hpp"

namespace mor::python {
namespace {

using namespace experiments;

/// The keys of a signal as Python values, in the order of their declaration.
class KeyValues {
 public:
  explicit KeyValues(py::dict& d) : d_(d) {}
  template <class T>
  void operator()(const Key& k, const T& x) {
    d_[k.name] = py::cast(x);
  }
  void operator()(const Key& k, const std::filesystem::path& x) { d_[k.name] = x.string(); }

 private:
  py::dict& d_;
};

/// The names of the keys a signal type declares.
class KeyNames {
 public:
  explicit KeyNames(std::vector<std::string>& names) : names_(names) {}
  template <class T>
  void operator()(const Key& k, const T&) {
    names_.emplace_back(k.name);
  }

 private:
  std::vector<std::string>& names_;
};

bool known_type(const std::string& type) {
  for (const auto& t : kSignalTypes)
    if (t.name == type) return true;
  return false;
}

std::shared_ptr<SignalObject> make_object(const std::string& type, const py::dict& keys,
                                          const std::string& maker) {
  const std::string source = maker.empty() ? "mor.signal(\"" + type + "\")" : maker;
  toml::table table = to_toml(keys, source);
  require(!table.contains("type"), source,
          ": type is the kind of signal (the first argument of mor.signal), not a key");
  // An unknown keyword is named with its value (read_input's finish names the key only).
  if (known_type(type)) {
    InputSpec probe;
    probe.type = type;
    std::vector<std::string> known;
    KeyNames names(known);
    signal_keys(probe, names);
    for (auto [k, v] : keys) {
      const std::string key = py::str(k);
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const std::string near = suggestion(key, known);
      throw InvalidArgument(
          detail::concat(source, ": unknown key ", key, "=", std::string(py::repr(v)), " for a ",
                         type, " signal", near.empty() ? "" : "; did you mean " + near + "?",
                         " (its keys: ", known.empty() ? std::string("none") : join(known), ")"));
    }
  }
  table.insert("type", type);
  auto s = std::make_shared<SignalObject>();
  s->maker = source;
  with_clean_messages([&] {
    TableReader reader(&table, "signal", source);
    s->spec = read_input(reader, "signal", source, std::filesystem::current_path());
    // The library's own checks of the values (sine frequency >= 0, finite amplitudes, a table's
    // rows, ...), here rather than at the first simulation; a table keeps its columns.
    try {
      s->values = make_signal(s->spec, s->spec.type == "table" ? 0 : 1);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(detail::concat(source, ": ", e.what()));
    }
  });
  return s;
}

/// sig(t): a number for a one-channel signal at a scalar t, else an array of t's shape (and one
/// more axis of the channels for a table of several columns).
py::object evaluate(const SignalObject& s, py::object t) {
  const Index k = s.values->size();
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(t);
  if (!a) throw InvalidArgument(s.maker + ": t = " + std::string(py::repr(t)) + " is not a number");
  const py::ssize_t n = a.size();
  const double* ts = a.data();
  for (py::ssize_t i = 0; i < n; ++i)
    require(std::isfinite(ts[i]), s.maker, ": t = ", ts[i], " is not finite");
  std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
  if (k > 1) shape.push_back(k);
  py::array_t<double> out(shape);
  double* u = out.mutable_data();
  Vector row(k);
  for (py::ssize_t i = 0; i < n; ++i) {
    s.values->evaluate(ts[i], row);
    std::copy(row.data(), row.data() + k, u + i * k);
  }
  if (a.ndim() == 0 && k == 1) return py::float_(u[0]);
  return out;
}

/// The signal types with their keys, from the declarations of docs/keys.md.
py::list signal_types() {
  py::list out;
  for (const auto& t : kSignalTypes) {
    InputSpec in;
    in.type = std::string(t.name);
    std::vector<KeyDoc> rows;
    KeyDocs docs(rows, "signal");
    signal_keys(in, docs);
    py::list keys = key_rows(rows);
    py::dict d;
    d["name"] = std::string(t.name);
    d["doc"] = std::string(t.doc);
    d["keys"] = keys;
    out.append(d);
  }
  return out;
}

}  // namespace

std::unique_ptr<Signal> signal_for_inputs(py::handle u, Index m) {
  if (!py::isinstance<SignalObject>(u)) return nullptr;
  const auto& s = u.cast<const SignalObject&>();
  try {
    return experiments::make_signal(s.spec, m);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(detail::concat("mor.simulate: ", s.maker, ": ", e.what()));
  }
}

void bind_signals(py::module_& mod) {
  py::class_<SignalObject, std::shared_ptr<SignalObject>>(mod, "Signal", R"(An input signal u(t).

The signals of experiment files ([input], [[training]]; docs/keys.md), made by mor.signal(type,
**keys) or its constructors (mor.Sine, mor.Step, mor.Chirp, ...), with the same keys, defaults
and checks. sig(t) evaluates it at a number or an array of times; mor.simulate(model, sig, ...)
drives every input of the model with it, as an experiment file's [input] does.)")
      .def(py::init([](const std::string& type, const py::kwargs& keys) {
             return make_object(type, keys, "mor.Signal(\"" + type + "\")");
           }),
           py::arg("type"), "mor.Signal(type, **keys), the same as mor.signal(type, **keys)")
      .def_property_readonly(
          "type", [](const SignalObject& s) { return s.spec.type; },
          "the signal type (zero, step, sine, chirp, multisine, table)")
      .def_property_readonly(
          "keys",
          [](const SignalObject& s) {
            py::dict d;
            InputSpec copy = s.spec;
            KeyValues values(d);
            signal_keys(copy, values);
            return d;
          },
          "the effective keys (given or default), in the order of their declaration")
      .def_property_readonly(
          "channels", [](const SignalObject& s) { return s.values->size(); },
          "values per time: 1, or a table's value columns")
      .def(
          "describe", [](const SignalObject& s) { return s.values->describe(); },
          "the one line the program records in a results file's /input")
      .def(
          "toml",
          [](const SignalObject& s) {
            std::ostringstream os;
            os.precision(17);
            write_input(os, s.spec);
            return os.str();
          },
          "the signal as the lines of an [input] or [[training]] table")
      .def("__call__", &evaluate, py::arg("t"),
           "u(t) at a number (a float; an array of the channels for a table of several columns) "
           "or at an array of times (an array of that shape, with one more axis of the channels)");
  mod.def("signal", &make_object, py::arg("type"), py::arg("keys"), py::arg("maker") = "");
  mod.def("signal_types", &signal_types, "the signal types with their keys");
}

}  // namespace mor::python
