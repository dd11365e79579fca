# SPDX-License-Identifier: GPL-3.0-or-later
"""mor: model order reduction of large sparse systems, from Python (docs/python.md).

    import mor, scipy.io
    rail = scipy.io.loadmat("rail_1357.mat")
    fom = mor.LtiModel(A=rail["A"], B=rail["B"], C=rail["C"], E=rail["E"])
    rom = mor.reduce(fom, "bt", order=20)          # any registered method: mor.methods()
    rom.A, rom.hsv, rom.error_bound, rom.timings
    mor.h2_error(fom, rom), mor.hinf_norm(fom), mor.sigma(rom, [0.1, 1.0])
    t, y = mor.simulate(rom, lambda t: 1.0, t_end=10.0, dt=0.01)
    t, y = mor.simulate(fom, mor.Sine(amplitude=2.0, frequency=0.1), t_end=10.0, dt=0.01)
    pod = mor.reduce(fom, "pod", order=20, experiment={
        "simulation": {"t_end": 200.0, "dt": 0.5}, "training": [{"type": "chirp", "f1": 0.05}]})

The computations are the mor library's own (the program's models, methods and norms); long
ones run with the GIL released and stop on Ctrl-C with KeyboardInterrupt. Library errors raise
ValueError (bad arguments), OSError (files) and RuntimeError (numerical failures) with the
library's one-line messages.
"""
import numbers as _numbers
import os as _os

from . import _mor
from ._mor import Model, Signal, methods, model_kinds, signal_types

__all__ = [
    "Model", "LtiModel", "SecondOrderModel", "Chain", "load_model", "model", "reduce",
    "simulate", "h2_norm", "h2_error", "hinf_norm", "sigma", "transfer_function", "hsv", "run",
    "sweep", "methods", "model_kinds", "results", "Signal", "signal", "signal_types",
]
__version__ = _mor.__version__


def LtiModel(A, B, C, E=None, D=None):
    """The first-order system E x' = A x + B u, y = C x + D u (E = I and D = 0 when None).

    Each matrix is a scipy.sparse matrix or an array (a 1-D B is a column, a 1-D C a row). The
    library keeps one copy of each, in its CSC storage: CSC or CSR float64 matrices with int32
    indices in canonical form and float64 arrays are read directly into it; other inputs (COO,
    other dtypes, int64 or unsorted indices) are converted by SciPy or NumPy first. Raises
    ValueError for inconsistent shapes, non-finite entries or a singular E.
    """
    return _mor.lti_model(A, B, C, E, D)


def SecondOrderModel(M, D, K, B, Cp=None, Cv=None):
    """M q'' + D q' + K q = B u, y = Cp q + Cv q' (D = 0, and Cp or Cv = 0, when None).

    Inputs as for LtiModel. Raises ValueError for inconsistent shapes, non-finite entries or a
    singular M.
    """
    return _mor.second_order_model(M, D, K, B, Cp, Cv)


def model(kind, *, parameters=None, **keys):
    """A model of a registered kind (mor.model_kinds()), its [model] keys as keyword arguments.

    parameters (the [parameters] table of experiment files, docs/methods/parametric.md) makes it
    a family over some of its keys: {"k_n": (0.5, 4.0), "d": (0.2, 2.0, "log")}, each a range
    (min, max) or (min, max, scale), scale "linear" or "log". mor.reduce of such a model returns
    one reduced model for the whole box; rom.at(k_n=1.7, d=0.9) is the reduced model at a point.
    A key may not be both a keyword and a parameter; size keys (N, nx, ny) are never parameters.
    """
    return _mor.model(kind, keys, parameters)


def Chain(*, parameters=None, **keys):
    """The mass-spring-damper chain (model kind "mass_spring_chain"): mor.Chain(N=1000, k_n=0);
    parameters as for mor.model: mor.Chain(N=10000, parameters={"k_n": (0.5, 4.0)})."""
    return _mor.model("mass_spring_chain", keys, parameters)


def _index(x, name):
    """x as an int the library takes (a signed 64-bit count), or ValueError naming it."""
    if isinstance(x, bool) or not isinstance(x, (int, _numbers.Integral)):
        if not (isinstance(x, float) and x.is_integer()):
            raise ValueError(f"{name} = {x!r} is not a whole number")
    x = int(x)
    if not -(2**63) <= x < 2**63:
        raise ValueError(f"{name} = {x} is out of range (at most 2**63 - 1)")
    return x


def load_model(path, *, parameters=None, **keys):
    """An LTI model from a .mat (v4, v5, v7.3) or MatrixMarket file, as [model] type = "file"
    reads it (keys: form, variables, files). parameters: the ranges of the file's affine terms
    X_<name> (X(mu) = X + sum mu_name X_<name>), e.g. parameters={"k": (0.5, 2.0), "d": (0.02,
    0.5, "log")}: a family, reduced by mor.reduce into one parametric model (rom.at(k=..., d=...))."""
    return _mor.model("file", dict(keys, path=_os.fspath(path)), parameters)


def reduce(model, method, *, experiment=None, **keys):
    # The docstring is generated from the method registry below.
    experiment = dict(experiment or {})
    if "training" in experiment and isinstance(experiment["training"], (list, tuple)):
        experiment["training"] = [_signal_table(x) for x in experiment["training"]]
    return _mor.reduce(model, method, keys, experiment)


# --- signals: the [input] / [[training]] signals of experiment files ------------------------

def _constructor_name(type_):
    return "".join(part.capitalize() for part in type_.split("_"))


def _signal_table(x):
    """A mor.Signal as the dict of its [[training]] table (other entries unchanged)."""
    return dict(x.keys, type=x.type) if isinstance(x, Signal) else x


def signal(type, **keys):
    """An input signal of experiment files by its type (mor.signal_types() lists them with
    their keys): mor.signal("sine", amplitude=2.0, frequency=0.1). The keys, defaults and checks
    are the [input] table's (docs/keys.md); an unknown key or a bad value raises ValueError
    naming both. The constructors mor.Zero, mor.Step, mor.Sine, mor.Chirp, mor.Multisine,
    mor.Table (one per type) make the same objects."""
    return _mor.signal(type, keys)


def _signal_default(key):
    import tomllib

    value = tomllib.loads("x = " + key["default"])["x"]
    if key["type"] == "number":
        return float(value)
    if key["type"] == "array of numbers":
        return [float(x) for x in value]
    return value


def _signal_constructor(info):
    import inspect

    type_, name = info["name"], _constructor_name(info["name"])

    def make(**keys):
        return _mor.signal(type_, keys, f"mor.{name}")

    make.__name__ = make.__qualname__ = name
    make.__module__ = __name__
    make.__signature__ = inspect.Signature(
        [inspect.Parameter(k["name"], inspect.Parameter.KEYWORD_ONLY, default=_signal_default(k))
         for k in info["keys"]], return_annotation=Signal)
    lines = [f"mor.{name}(**keys): the {type_!r} signal of experiment files, {info['doc']}.",
             "",
             f'The same as mor.signal("{type_}", **keys). It drives every input of a model in',
             "mor.simulate (as an experiment file's [input] does), or one input as an entry of a",
             "list or dict u; sig(t) evaluates it."]
    if info["keys"]:
        lines += ["", "Keys (the [input] keys of docs/keys.md):"]
        for k in info["keys"]:
            unit = f" [{k['unit']}]" if k["unit"] else ""
            lines.append(f"    {k['name']} ({k['type']}, default {k['default']}){unit}: {k['doc']}")
    make.__doc__ = "\n".join(lines)
    return name, make


for _info in signal_types():
    _name, _make = _signal_constructor(_info)
    globals()[_name] = _make
    __all__.append(_name)
del _info, _name, _make


def _signal_repr(self):
    args = ", ".join(f"{k}={v!r}" for k, v in self.keys.items())
    return f"mor.{_constructor_name(self.type)}({args})"


Signal.__repr__ = _signal_repr


def simulate(model, u, t_end, dt, integrator="implicit_midpoint", t0=0.0, stride=1,
             snapshots=False, max_steps=100_000_000):
    """Simulates the model from rest: returns t (k,) and y (k, p) at t0 and every stride-th step,
    and with snapshots=True also x (k, n_x), the state at the same times: x of a first-order
    model, [q, v] (positions, then velocities) of a second-order one, the reduced coordinates
    [q_r, v_r] of a projected nonlinear model (rom.V @ q_r lifts them).

    u is
    - a mor.Signal (mor.Sine(...), mor.signal("chirp", ...), ...): it drives every input, as an
      experiment file's [input] does (a table of m columns one input each), so the result is the
      file's run of the same model, integrator and steps;
    - a list of m entries, one per input, each a mor.Signal, a callable, a number or None (zero),
      or a dict {i: entry} of 0-based inputs i (the others zero), e.g. {0: mor.Step()};
    - a callable u(t) (a number or an array of the model's m inputs);
    - an array of samples on the time grid t0, t0 + dt, ..., t_end (k rows of m columns, or 1-D
      for one input or the same signal on every input; linearly interpolated between samples);
    - or a constant.
    integrator is "implicit_midpoint", "rk4" or "generalized_alpha". t_end - t0 must be a whole
    number of steps, at most max_steps of them (as an experiment file's simulation.max_steps);
    a call whose model, factor and kept samples would not fit this machine's memory budget is
    refused up front with the estimate (ValueError), as `mor run` refuses such a run.
    """
    return _mor.simulate(model, u, float(t_end), float(dt), integrator, float(t0),
                         _index(stride, "stride"), bool(snapshots),
                         _index(max_steps, "max_steps"))


def h2_norm(model, dense_limit=1500):
    """||G||_H2: dense Hammarling factor up to dense_limit states, LR-ADI beyond."""
    return _mor.h2_norm(model, dense_limit)


def h2_error(model, rom, dense_limit=1500):
    """The absolute H2 error ||G - G_r||_H2 (of the error system, as a sum of squares: no
    cancellation of ||G||^2 - 2 <G, G_r> + ||G_r||^2). Divide by h2_norm(model) for the
    relative error."""
    return _mor.h2_error(model, rom, dense_limit)


def hinf_norm(model, dense_limit=400, w_min=1e-4, w_max=1e4, n_grid=400):
    """(||G||_Hinf, the frequency in rad/s where it is attained): the level-set method (certified)
    up to dense_limit states, else a frequency sweep over [w_min, w_max] with refinement (a lower
    bound)."""
    return _mor.hinf_norm(model, dense_limit, float(w_min), float(w_max), int(n_grid))


def sigma(model, omega):
    """sigma_max(G(i w)) for each frequency w (rad/s) of omega, as an array."""
    import numpy as np

    return _mor.sigma(model, np.asarray(omega, dtype=float).ravel())


def transfer_function(model, s):
    """G(s) = C (s E - A)^{-1} B + D as a complex p x m array."""
    return _mor.transfer_function(model, complex(s))


def hsv(model, **keys):
    """Every Hankel singular value the Gramian factors give, descending (the "bt" method's
    Gramian keys apply: gramians, dense_limit, adi_tolerance, ...)."""
    return reduce(model, "bt", order=1, **keys).hsv


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (str, _os.PathLike)):
        import json

        return json.dumps(_os.fspath(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise ValueError(f"mor: cannot write {v!r} as a TOML value")


def _overrides(set):
    return [f"{k}={_toml_value(v)}" for k, v in (set or {}).items()]


def run(path, set=None, output=None, progress=None):
    """Runs an experiment file as `mor run` does, set={"model.N": 1000} as its --set overrides
    and output the results file (default: the file's); returns mor.results.load(output).
    progress, if given, is called as progress(stage, fraction) when the run enters a stage
    ("reduction", "full simulation", ...; fraction 0) and during the full simulation."""
    out = _mor.run(_os.fspath(path), _overrides(set), _os.fspath(output) if output else "",
                   progress)
    return results.load(out)


def _jobs(jobs):
    jobs = _index(jobs, "jobs")
    if not 1 <= jobs < 2**31:
        raise ValueError(f"jobs = {jobs}; run at least 1 point at once")
    return jobs


def sweep(path, set=None, jobs=1):
    """Runs a sweep file as `mor sweep` does (jobs points at once, each in a `mor` worker
    process); returns mor.results.load of the merged file."""
    from . import _build

    out = _mor.sweep(_os.fspath(path), _overrides(set), _jobs(jobs), _build.PROGRAM)
    return results.load(out)


# --- reduced models: the records of the reduction ------------------------------------------

def _matrix(name):
    return property(lambda self: self.matrix(name),
                    doc=f"the matrix {name} (read-only view of the library's storage)")


for _name in ("E", "A", "B", "C", "D", "M", "K", "Cp", "Cv"):
    setattr(Model, _name, _matrix(_name))

_SPECTRA = ("hsv", "pod_singular_values", "empirical_singular_values", "hankel_singular_values")


def _hsv(self):
    records = self.records or {}
    for name in _SPECTRA:
        if name in records:
            return records[name]
    return None


def _record(name, doc):
    return property(lambda self: (self.records or {}).get(name), doc=doc)


Model.hsv = property(_hsv, doc="every Hankel (or POD, empirical) singular value the reduction "
                               "computed, descending; None for other methods")
Model.error_bound = property(
    lambda self: (self.info or {}).get("error_bound"),
    doc="BT's a-priori bound 2 sum_{i>r} sigma_i (over the computed HSVs), else None")
Model.timings = property(lambda self: (self.info or {}).get("timings"),
                         doc="seconds per stage of the reduction, and total_s")
Model.r = property(lambda self: (self.info or {}).get("r", self.n), doc="the reduced order")
Model.statuses = property(
    lambda self: (self.info or {}).get("statuses", []),
    doc="what the reduction's iterations and solves ended in: a list of dicts with name (the "
        "method's own iteration, or a stage such as 'ecsw' or 'controllability'), status "
        "('converged', 'max_iterations', 'solved', ...) and message (the reason, or None)")
def _basis(name, doc):
    def get(self):
        recorded = (self.records or {}).get(name)
        if name == "W" and recorded is None and (self.info or {}).get("projection") == "galerkin":
            return self.V  # pod of a linear model: a Galerkin projection, W = V
        if recorded is not None or not self.is_reduced or self.is_linear:
            return recorded
        return self.matrix(name)  # a projected nonlinear model keeps its bases

    return property(get, doc=doc)


Model.V = _basis("V", "the right basis (n x r): with store_bases=True; always for the projection "
                      "methods of the chain, network and lattice kinds")
Model.W = _basis("W", "the left basis (n x r), as V (W = V for Galerkin projections)")


def _deim_points(self):
    masses = (self.records or {}).get("deim_masses")
    return None if masses is None else masses.astype(int) - 1


Model.deim_points = property(
    _deim_points, doc="DEIM: the 0-based masses (or elements, deim_sampling) whose forces the "
                      "reduced model evaluates, in the order selected; None without DEIM")
def _ecsw_elements(self):
    elements = (self.records or {}).get("ecsw_elements")
    return None if elements is None else elements.astype(int) - 1


Model.ecsw_elements = property(
    _ecsw_elements, doc="ECSW (nonlinear=\"ecsw\"): the 0-based elements (rows of G) the reduced "
                        "model evaluates, ascending; None without ECSW")
Model.ecsw_weights = _record("ecsw_weights", "ECSW: the positive weights of ecsw_elements")
Model.deim_basis = _record(
    "deim_basis", "DEIM, with store_bases=True: the force basis U (a row per mass or element, "
                  "one column per DEIM point)")
Model.linearisation = property(
    lambda self: (self.info or {}).get("linearisation"),
    doc="the state whose linearisation a linear method (bt, sobt, modal, irka) reduced, when the "
        "model it reduced was nonlinear (as `mor run` says: 'reduced bt of the linearisation "
        "about ...'); None otherwise")


def _reduced_by(self):
    lin = self.linearisation
    return self.method + (f" of the linearisation about {lin}" if lin else "")


Model.__repr__ = lambda self: (
    f"<mor.Model {self.kind}, n = {self.n}"
    + (f", reduced by {_reduced_by(self)}" if self.is_reduced else "") + ">")


def _stage_name(stage):
    return (stage[:-2] if stage.endswith("_s") else stage).replace("_", " ")


def _summary(self):
    """The lines `mor run` prints of a model: its kind and size; of a reduced model the method
    (and the linearisation it reduced), the order and the offline seconds by stage."""
    if not self.is_reduced:
        form = " states (first order)" if self.first_order else " (second order)"
        return (f"model     {self.kind}, n = {self.n}{form}, "
                f"{'linear' if self.is_linear else 'nonlinear'}")
    timings = dict(self.timings or {})
    total = timings.pop("total_s", 0.0)
    offline = f"offline   {total:.3g} s"
    if timings:
        offline += ": " + ", ".join(f"{_stage_name(k)} {v:.3g} s" for k, v in timings.items())
    points = self.deim_points
    deim = f" ({len(points)} DEIM points)" if points is not None and len(points) else ""
    return f"reduced   {_reduced_by(self)}, r = {self.r}{deim}\n{offline}"


Model.summary = _summary


def _table_doc(table):
    """The keys of one experiment table, a line each; a key of some signal types only says which."""
    grouped = {}
    for k in _mor.experiment_keys():
        if k["table"] == table:
            row = (k["name"], k["type"], k["default"], k["unit"], k["doc"])
            grouped.setdefault(row, []).append(k["variant"])
    lines = []
    for (name, type_, default, unit, doc), variants in grouped.items():
        unit = f" [{unit}]" if unit else ""
        only = [v.replace("type = ", "") for v in variants if v]
        only = f" (type {', '.join(only)})" if only else ""
        lines.append(f"    {name} ({type_}, default {default}){unit}{only}: {doc}")
    return lines


def _reduce_doc():
    lines = [
        "rom = mor.reduce(model, method, *, experiment=None, **keys): the model reduced by a",
        "registered method.",
        "",
        "The keys are the method's [reduction] keys of an experiment file (docs/keys.md), with the",
        "same names, types and defaults; an unknown key raises ValueError naming the nearest one.",
        "The result is a model (reduce and simulate it again) with rom.A, .B, .C, .D, .E (first",
        "order, E = I after square-root BT) or rom.M, .D, .K, .B, .Cp, .Cv (second order) as NumPy",
        "arrays, rom.hsv, rom.error_bound, rom.timings, rom.info (the recorded attributes) and",
        "rom.records (the recorded datasets).",
        "",
        "The methods that learn from simulations (pod, empirical_bt, differential_balancing) take",
        "the experiment's [[training]] runs and [simulation] as",
        "experiment={'training': [{...}, ...], 'simulation': {...}}, read by the program's readers",
        "of those tables (keys below). pod of a linear model without a projection seam",
        "(mor.LtiModel, mor.SecondOrderModel, mor.load_model, a linearised benchmark, a reduced",
        "model) projects its matrices (E, A, B, C or M, D, K, B, Cp, Cv) onto the POD basis of the",
        "training snapshots, as `mor run` does; the chain, network and lattice kinds are projected",
        "with their nonlinear force hyper-reduced. A method that does not fit the model is refused",
        "with the program's message.",
        "",
        "experiment['training']: a list of dicts, one [[training]] table (a run from rest) each,",
        "or of mor.Signal objects (mor.Chirp(f1=0.2), ...: the table of their keys):",
        *_table_doc("training"),
        "",
        "experiment['simulation']: a dict, the [simulation] table of the training runs:",
        *_table_doc("simulation"),
        "",
        "Methods and keys:",
    ]
    for m in methods():
        if m["name"] == "none":
            continue
        lines += ["", f"{m['name']}: {m['doc']}"]
        for k in m["keys"]:
            if k["name"] == "method":
                continue
            unit = f" [{k['unit']}]" if k["unit"] else ""
            lines.append(f"    {k['name']} ({k['type']}, default {k['default']}){unit}: {k['doc']}")
    return "\n".join(lines)


reduce.__doc__ = _reduce_doc()

from . import results  # noqa: E402  (the results reader, python/mor_results.py)
