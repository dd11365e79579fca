// SPDX-License-Identifier: GPL-3.0-or-later
// The extension module mor._mor: models, reduction through the method registry, simulation,
// norms and experiment runs of the mor library (docs/python.md). The package mor
// (python/mor/__init__.py) wraps it with the keyword signatures and the results reader.
#include <pybind11/complex.h>
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <filesystem>

#include "experiments/runner/experiment_keys.hpp"
#include "experiments/runner/method.hpp"
#include "experiments/runner/parameters.hpp"
#include "experiments/runner/parametric_linear.hpp"
#include "experiments/runner/parametric_run.hpp"
#include "experiments/runner/toml_reader.hpp"
#include "python/src/bindings.hpp"
#include "python/src/compute.hpp"
#include "src/core/interrupt.hpp"
#include "src/core/version.hpp"
#include "src/io/model_files.hpp"

namespace mor::python {
namespace {

using namespace experiments;

/// The registered methods and model kinds with their keys (the declarations of docs/keys.md).
py::list methods() {
  py::list out;
  for (const auto& m : reduction_methods()) {
    std::vector<KeyDoc> rows;
    m.keys(rows);
    py::dict d;
    d["name"] = m.name;
    d["doc"] = m.doc;
    d["keys"] = key_rows(rows);
    out.append(d);
  }
  return out;
}

/// The keys of the experiment tables mor.reduce takes in `experiment` ([[training]] and the
/// runner's [simulation]), each row with its table, from the declarations of docs/keys.md.
py::list experiment_keys() {
  std::vector<KeyDoc> rows;
  for (auto& k : experiment_key_reference())
    if ((k.table == "training" || k.table == "simulation") &&
        k.variant.rfind("model.type", 0) != 0)  // not a kind's own [simulation] keys
      rows.push_back(std::move(k));
  py::list out = key_rows(rows);
  for (std::size_t i = 0; i < rows.size(); ++i) out[i].cast<py::dict>()["table"] = rows[i].table;
  return out;
}

py::list kinds() {
  py::list out;
  for (const auto& k : model_kinds()) {
    std::vector<KeyDoc> rows;
    k.keys(rows);
    py::dict d;
    d["name"] = k.name;
    d["doc"] = k.doc;
    d["keys"] = key_rows(rows);
    out.append(d);
  }
  return out;
}

std::shared_ptr<Model> model_of_kind(const std::string& kind, const py::dict& keys,
                                     const py::object& parameters) {
  const std::string source = "mor.model(\"" + kind + "\")";
  const ModelKindInfo* info = find_model_kind(kind);
  if (!info) {
    std::vector<std::string> known;
    for (const auto& k : model_kinds()) known.emplace_back(k.name);
    const std::string near = suggestion(kind, known);
    throw InvalidArgument(detail::concat("mor.model: model kind '", kind,
                                         "' is not known (known: ", join(known), ")",
                                         near.empty() ? "" : "; did you mean '" + near + "'?"));
  }
  toml::table table = to_toml(keys, source);
  const toml::table& table_of_keys = table;
  auto m = std::make_shared<Model>();
  m->spec = with_clean_messages([&] {
    TableReader reader(&table, "model", source);
    std::shared_ptr<const ModelSpec> spec =
        info->read(reader, source, std::filesystem::current_path());
    reader.finish(" for model.type = \"" + kind + "\"");
    return spec;
  });
  if (!parameters.is_none()) {
    // The [parameters] table: name -> (min, max[, scale]) or {min, max[, scale]}.
    require(py::isinstance<py::dict>(parameters), source,
            ": parameters must be a dict {name: (min, max) or (min, max, \"log\")}");
    py::dict table;
    for (const auto& [name, value] : parameters.cast<py::dict>()) {
      const std::string key = py::str(name);
      if (py::isinstance<py::dict>(value)) {
        table[name] = value;
        continue;
      }
      require(py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value), source,
              ": parameters[\"", key, "\"] must be (min, max), (min, max, scale) or a dict, got ",
              std::string(py::repr(value)));
      const py::sequence seq = value.cast<py::sequence>();
      require(seq.size() == 2 || seq.size() == 3, source, ": parameters[\"", key,
              "\"] must be (min, max) or (min, max, scale), got ", std::string(py::repr(value)));
      py::dict range;
      range["min"] = seq[0];
      range["max"] = seq[1];
      if (seq.size() == 3) range["scale"] = seq[2];
      table[name] = range;
    }
    const toml::table params = to_toml(table, source);
    m->parameters = with_clean_messages([&] {
      ParameterDomain d = read_parameters(&params, source);
      check_parameters(*m->spec, d, &params, &table_of_keys, source);
      return d;
    });
  }
  return m;
}

/// Runs f; an InvalidArgument's message gets the prefix (the library's validate names no caller).
template <class F>
void prefixed(const std::string& prefix, F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(prefix + e.what());
  }
}

/// dst = src without a copy (Eigen 3.4's SparseMatrix has no move assignment: it would copy).
void take(SparseMatrix& dst, SparseMatrix&& src) {
  dst.swap(src);
}

/// The model over a system built in place (LinearSystem moves would copy the matrices).
std::shared_ptr<Model> memory_model(std::shared_ptr<LinearSystem> system) {
  auto m = std::make_shared<Model>();
  m->system = std::move(system);
  m->spec = memory_spec(m->system);
  return m;
}

/// Refuses a system with no input (B of 0 columns) or no output: nothing to reduce or simulate.
void require_inputs_outputs(Index m, Index p, const char* who, const char* outputs) {
  require(m >= 1, who, ": B has 0 columns; a model needs at least one input");
  require(p >= 1, who, ": ", outputs, " has 0 rows; a model needs at least one output");
}

std::shared_ptr<Model> lti_model(py::object A, py::object B, py::object C, py::object E,
                                 py::object D) {
  auto system = std::make_shared<LinearSystem>(std::in_place_type<DescriptorSystem>);
  auto& sys = std::get<DescriptorSystem>(*system);
  take(sys.A, to_sparse(A, "mor.LtiModel: A"));
  take(sys.B, to_sparse(B, "mor.LtiModel: B", 'c'));
  take(sys.C, to_sparse(C, "mor.LtiModel: C", 'r'));
  if (E.is_none()) {
    // E = I of A's row count: square whatever A's shape, so that validate below names a
    // non-square A (setIdentity of a non-square matrix would write past its arrays).
    sys.E.resize(sys.A.rows(), sys.A.rows());
    sys.E.setIdentity();
  } else {
    take(sys.E, to_sparse(E, "mor.LtiModel: E"));
  }
  sys.D_ff = D.is_none() ? Matrix::Zero(sys.C.rows(), sys.B.cols())
                         : to_dense(D, "mor.LtiModel: D", sys.B.cols() == 1 ? 'c' : 'r');
  prefixed("mor.LtiModel: ", [&] { validate(sys); });
  require_inputs_outputs(sys.B.cols(), sys.C.rows(), "mor.LtiModel", "C");
  if (!E.is_none()) io::check_nonsingular(sys, "mor.LtiModel");
  return memory_model(std::move(system));
}

std::shared_ptr<Model> second_order_model(py::object M, py::object D, py::object K, py::object B,
                                          py::object Cp, py::object Cv) {
  auto system = std::make_shared<LinearSystem>(std::in_place_type<SecondOrderSystem>);
  auto& sys = std::get<SecondOrderSystem>(*system);
  take(sys.M, to_sparse(M, "mor.SecondOrderModel: M"));
  take(sys.K, to_sparse(K, "mor.SecondOrderModel: K"));
  take(sys.B, to_sparse(B, "mor.SecondOrderModel: B", 'c'));
  const Index n = sys.M.rows();
  if (D.is_none())
    sys.D.resize(n, n);
  else
    take(sys.D, to_sparse(D, "mor.SecondOrderModel: D"));
  require(!(Cp.is_none() && Cv.is_none()), "mor.SecondOrderModel: give Cp, Cv or both");
  if (!Cp.is_none()) take(sys.Cp, to_sparse(Cp, "mor.SecondOrderModel: Cp", 'r'));
  if (!Cv.is_none()) take(sys.Cv, to_sparse(Cv, "mor.SecondOrderModel: Cv", 'r'));
  if (Cp.is_none()) sys.Cp.resize(sys.Cv.rows(), n);
  if (Cv.is_none()) sys.Cv.resize(sys.Cp.rows(), n);
  prefixed("mor.SecondOrderModel: ", [&] { validate(sys); });
  require_inputs_outputs(sys.B.cols(), sys.Cp.rows(), "mor.SecondOrderModel", "Cp, Cv");
  io::check_nonsingular(sys, "mor.SecondOrderModel");
  return memory_model(std::move(system));
}

/// A matrix of the model by name: dense NumPy for reduced models, SciPy CSC views otherwise.
py::object matrix(py::object self, const std::string& name) {
  const Model& m = self.cast<const Model&>();
  if (m.dense_first) {
    const auto& d = *m.dense_first;
    if (name == "E") return dense_view(d.E, self);
    if (name == "A") return dense_view(d.A, self);
    if (name == "B") return dense_view(d.B, self);
    if (name == "C") return dense_view(d.C, self);
    if (name == "D") return dense_view(d.D, self);
  } else if (m.dense_second) {
    const auto& d = *m.dense_second;
    if (name == "M") return dense_view(d.M, self);
    if (name == "D") return dense_view(d.D, self);
    if (name == "K") return dense_view(d.K, self);
    if (name == "B") return dense_view(d.B, self);
    if (name == "Cp") return dense_view(d.Cp, self);
    if (name == "Cv") return dense_view(d.Cv, self);
  } else if (m.projected_rom) {
    // A projected model (pod, empirical_bt, differential_balancing): its reduced matrices.
    const ProjectedModel& pm = *m.projected_rom->main.model;
    auto pick = [&](const auto& rm) -> const Matrix* {
      if (name == "M") return &rm.M_r();
      if (name == "D") return &rm.D_r();
      if (name == "K") return &rm.K_r();
      if (name == "B") return &rm.B_r();
      if (name == "Cp") return &rm.Cp_r();
      if (name == "Cv") return &rm.Cv_r();
      if (name == "V") return &rm.V();
      if (name == "W") return &rm.W();
      return nullptr;
    };
    const Matrix* X = pick(pm);
    if (X) return dense_view(*X, self);
  } else {
    const auto sys = m.linear_system();
    if (const auto* d = std::get_if<DescriptorSystem>(sys.get())) {
      if (name == "E") return sparse_view(d->E, self);
      if (name == "A") return sparse_view(d->A, self);
      if (name == "B") return sparse_view(d->B, self);
      if (name == "C") return sparse_view(d->C, self);
      if (name == "D") return dense_view(d->D_ff, self);
    } else {
      const auto& s = std::get<SecondOrderSystem>(*sys);
      if (name == "M") return sparse_view(s.M, self);
      if (name == "D") return sparse_view(s.D, self);
      if (name == "K") return sparse_view(s.K, self);
      if (name == "B") return sparse_view(s.B, self);
      if (name == "Cp") return sparse_view(s.Cp, self);
      if (name == "Cv") return sparse_view(s.Cv, self);
    }
  }
  throw py::attribute_error(detail::concat(
      "this ",
      m.projected_rom ? "projected nonlinear" : (m.first_order() ? "first-order" : "second-order"),
      " model has no matrix ", name));
}

/// The domain of a parametric model or reduced model (nullptr: none).
const ParameterDomain* domain_of(const Model& m) {
  if (m.projected_rom && m.projected_rom->parametric) return &m.projected_rom->parametric->domain();
  if (m.parametric_lti) return &m.parametric_lti->domain();
  return m.parameters.empty() ? nullptr : &m.parameters;
}

py::object parameters_of(const Model& m) {
  const ParameterDomain* d = domain_of(m);
  if (d == nullptr || m.point) return py::none();
  py::dict out;
  for (const Parameter& p : d->parameters())
    out[py::str(p.name)] = py::make_tuple(p.min, p.max, p.log ? "log" : "linear");
  return out;
}

py::object point_of(const Model& m) {
  if (!m.point) return py::none();
  const ParameterDomain& d = *domain_of(m);
  py::dict out;
  for (Index j = 0; j < d.size(); ++j)
    out[py::str(d.parameters()[static_cast<std::size_t>(j)].name)] = (*m.point)[j];
  return out;
}

std::shared_ptr<Model> reduced_at(const Model& m, const py::kwargs& values) {
  require(((m.projected_rom && m.projected_rom->parametric) || m.parametric_lti) && !m.point,
          "rom.at(...) evaluates a parametric reduced model: mor.reduce of a model made with "
          "parameters={...}, e.g. mor.Chain(N=1000, parameters={\"k_n\": (0.5, 4.0)})");
  const ParameterDomain& d = *domain_of(m);
  Vector mu(d.size());
  std::vector<bool> given(static_cast<std::size_t>(d.size()), false);
  for (const auto& [name, value] : values) {
    const std::string key = py::str(name);
    const Index j = d.index_of(key);
    require(j >= 0, "rom.at: '", key,
            "' is not a parameter of this model (its parameters: ", join(d.names()), ")");
    require(py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value), "rom.at: ", key,
            " must be a number, got ", std::string(py::repr(value)));
    mu[j] = value.cast<double>();
    given[static_cast<std::size_t>(j)] = true;
  }
  for (Index j = 0; j < d.size(); ++j)
    require(given[static_cast<std::size_t>(j)], "rom.at: give every parameter; ",
            d.parameters()[static_cast<std::size_t>(j)].name,
            " is missing (parameters: ", join(d.names()), ")");
  auto rom = std::make_shared<Model>();
  if (m.parametric_lti) {
    // The linear method's parametric model at mu: a plain linear reduced model (norms,
    // transfer function, simulation, export).
    const experiments::ReducedModel at = experiments::reduced_model_at(*m.parametric_lti, mu);
    set_linear_rom(*rom, at, !m.parametric_lti->second_order());
    rom->reduction = m.reduction;
    rom->parametric_lti = m.parametric_lti;
    rom->point = mu;
    return rom;
  }
  const ParametricProjectedModel& p = *m.projected_rom->parametric;
  auto reduction = std::make_shared<experiments::ProjectionReduction>();
  reduction->main.r = m.projected_rom->main.r;
  reduction->main.m = m.projected_rom->main.m;
  reduction->main.ecsw_elements = m.projected_rom->main.ecsw_elements;
  reduction->main.n_elements = m.projected_rom->main.n_elements;
  reduction->main.model = std::make_unique<ProjectedModel>(p.at(mu));  // checks the range
  reduction->parametric = m.projected_rom->parametric;
  rom->spec = m.spec;
  rom->projected_rom = std::move(reduction);
  rom->projected_full = m.projected_full;
  rom->reduction = m.reduction;
  rom->point = mu;
  return rom;
}

}  // namespace

py::list key_rows(const std::vector<experiments::KeyDoc>& rows) {
  py::list out;
  for (const auto& k : rows) {
    py::dict d;
    d["name"] = k.name;
    d["type"] = k.type;
    d["default"] = k.default_value;
    d["unit"] = k.unit;
    d["doc"] = k.doc;
    d["variant"] = k.variant;
    out.append(d);
  }
  return out;
}

PYBIND11_MODULE(_mor, mod) {
  mod.doc() = "The mor library (model order reduction) for Python: see docs/python.md.";
  // Library errors keep their one-line messages (src/core/errors.hpp).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, clean_message(e.what()).c_str());
    } catch (const IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const NumericalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });

  py::class_<Model, std::shared_ptr<Model>>(mod, "Model", R"(A model of the mor library.

Constant data: a registered model kind (mor.Chain, mor.load_model, mor.model), an in-memory
system (mor.LtiModel, mor.SecondOrderModel), or a reduced model (mor.reduce). Its matrices are
read-only views of the library's storage: SciPy CSC matrices for full models, NumPy arrays for
reduced ones.)")
      .def_property_readonly(
          "kind", [](const Model& m) { return std::string(m.spec->kind()); },
          "the model kind ('memory' for in-memory and reduced linear models)")
      .def_property_readonly("n", &Model::n, "number of states (first order) or coordinates")
      .def_property_readonly("first_order", &Model::first_order)
      .def_property_readonly("is_linear",
                             [](const Model& m) { return !m.projected_rom && m.spec->is_linear(); })
      .def_property_readonly("is_reduced", [](const Model& m) { return m.reduction.has_value(); })
      .def("matrix", &matrix, py::arg("name"), "the matrix E, A, B, C, D or M, D, K, B, Cp, Cv")
      .def_property_readonly("method",
                             [](const Model& m) -> py::object {
                               return m.reduction ? py::object(py::str(m.reduction->method))
                                                  : py::object(py::none());
                             })
      .def_property_readonly("info",
                             [](const Model& m) -> py::object {
                               return m.reduction ? py::object(m.reduction->info) : py::none();
                             })
      .def_property_readonly("records",
                             [](const Model& m) -> py::object {
                               return m.reduction ? py::object(m.reduction->records) : py::none();
                             })
      .def_property_readonly("parameters", &parameters_of,
                             "the parameter domain {name: (min, max, scale)} of a parametric "
                             "model or reduced model, else None")
      .def_property_readonly("point", &point_of,
                             "{name: value}: the parameter of a reduced model rom.at(...) "
                             "evaluated, else None")
      .def("at", &reduced_at,
           "rom.at(k_n=1.7, d=0.9): the parametric reduced model at that parameter (every "
           "parameter given, inside its range), a plain reduced model; no work of the full size")
      .def(
          "toml",
          [](const Model& m) {
            std::ostringstream os;
            os << "type = " << toml_string(std::string(m.spec->kind())) << "\n";
            m.spec->write_toml(os);
            return os.str();
          },
          "the effective [model] keys, as an experiment file spells them");

  bind_signals(mod);

  mod.def("lti_model", &lti_model, py::arg("A"), py::arg("B"), py::arg("C"),
          py::arg("E") = py::none(), py::arg("D") = py::none());
  mod.def("second_order_model", &second_order_model, py::arg("M"), py::arg("D"), py::arg("K"),
          py::arg("B"), py::arg("Cp") = py::none(), py::arg("Cv") = py::none());
  mod.def("model", &model_of_kind, py::arg("kind"), py::arg("keys"),
          py::arg("parameters") = py::none());
  mod.def("reduce", &reduce, py::arg("model"), py::arg("method"), py::arg("keys"),
          py::arg("experiment"));
  mod.def("h2_norm", &h2_norm, py::arg("model"), py::arg("dense_limit"));
  mod.def("h2_error", &h2_error, py::arg("model"), py::arg("rom"), py::arg("dense_limit"));
  mod.def("hinf_norm", &hinf_norm, py::arg("model"), py::arg("dense_limit"), py::arg("w_min"),
          py::arg("w_max"), py::arg("n_grid"));
  mod.def("sigma", &sigma, py::arg("model"), py::arg("omega"));
  mod.def("transfer_function", &transfer, py::arg("model"), py::arg("s"));
  mod.def("simulate", &simulate, py::arg("model"), py::arg("u"), py::arg("t_end"), py::arg("dt"),
          py::arg("integrator"), py::arg("t0"), py::arg("stride"), py::arg("snapshots"),
          py::arg("max_steps"));
  mod.def("run", &run_file, py::arg("path"), py::arg("overrides"), py::arg("output"),
          py::arg("progress"));
  mod.def("sweep", &sweep_file, py::arg("path"), py::arg("overrides"), py::arg("jobs"),
          py::arg("program"));
  mod.def("methods", &methods, "the registered reduction methods with their keys");
  mod.def("model_kinds", &kinds, "the registered model kinds with their keys");
  mod.def("experiment_keys", &experiment_keys,
          "the keys of mor.reduce's experiment tables (training, simulation)");
  mod.def("_stop_requested", [] { return g_stop_requested.load(); });
  mod.attr("__version__") = std::string(program_version());
  // Ctrl-C may abandon a long LAPACK call on a thread of its own (run_abandonable): the
  // interpreter's exit waits for it to end (seconds at most) before OpenBLAS's exit handler
  // runs, which could otherwise wait forever for its worker threads (src/core/interrupt.hpp).
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    py::gil_scoped_release release;
    wait_for_abandoned_threads();
  }));
}

}  // namespace mor::python
