# SPDX-License-Identifier: GPL-3.0-or-later
"""Read the results files of `mor` into plain numpy objects.

    import sys; sys.path.insert(0, "python")      # from the repository root
    import mor_results

    run = mor_results.load("results/bt_chain.h5")   # a `mor run` results file
    run.t, run.u, run.y                             # time (n_out,), inputs (n_out, m), outputs (n_out, p)
    run.reduced_y, run.error_y                      # reduced outputs and y - y_r, or None
    run.reduction.method, run.reduction.r           # "bt", 20
    run.reduction.matrices["A"]                     # the reduced model (E, A, B, C, D or M, D, K, B, Cp, Cv)
    run.reduction.singular_values["hsv"]            # Hankel (or POD, empirical) singular values
    run.error["relative_l2"], run.timings["speedup_per_step"]
    run.config["reduction"]["order"]                # the effective experiment, parsed TOML
    p = run.snapshots("p", rows=slice(None, None, 10))   # read on demand: snapshots can be GBs

    sweep = mor_results.load("results/default_sweep.h5")  # a `mor sweep` file
    sweep.table["output_error"], sweep.keys, sweep.done
    sweep.point("bt_N1000_order20")                 # that point's whole run, as above

    mb = mor_results.load("results/a01_pendulum.h5")     # a multibody benchmark run
    mb.benchmark_t, mb.benchmark_y, mb.linear.matrices["K"], mb.reduced_y

`load` returns a `Run`, a `Sweep` or a `MultibodyRun` by what the file holds; `load_run`,
`load_sweep` and `load_multibody` insist on one kind. Every array is a numpy array in memory
(the file is closed when `load` returns), except the snapshots, which `Run.snapshots` reads on
demand. Attributes come as dicts of Python scalars, str and numpy arrays. Column vectors stored
as `n x 1` datasets (times, energies) are returned 1-D; matrices keep the file's orientation
(one row per time). A part the run did not produce is None (or an empty dict).

Every HDF5 path the module reads is in the table PATHS below, and nowhere else.
A file that cannot be read, or is not a mor results file, raises ResultsError with a one-line
message. The layout is described in docs/results.md, docs/sweeps.md and docs/multibody.md.

Needs Debian's python3-h5py and python3-numpy: run it with /usr/bin/python3.
"""
import os
import tomllib
from dataclasses import dataclass, field
from typing import Optional

import h5py
import numpy as np

FORMAT = "mor-results"  # root attribute `format` of every results file
FORMAT_VERSION = 1  # root attribute `format_version` this module reads

# Every HDF5 path this module reads: name -> absolute path inside a results file (or, for a
# sweep's point, inside its group /points/<key>). Groups hold attributes; the dataset names
# under a group that the module enumerates (reduced matrices, sweep columns) are listed in
# the sets after this table.
PATHS = {
    # a run (mor run), and each point of a sweep
    "root": "/",  # attributes: format, format_version, program, ..., configuration (TOML)
    "model": "/model",  # attributes
    "simulation": "/simulation",  # attributes
    "input": "/input",  # attributes
    "timings": "/timings",  # attributes
    "outputs": "/outputs",  # the full model's outputs
    "outputs.t": "/outputs/t",  # n_out x 1
    "outputs.u": "/outputs/u",  # n_out x m
    "outputs.y": "/outputs/y",  # n_out x p
    "snapshots": "/snapshots",
    "snapshots.t": "/snapshots/t",  # n_snap x 1
    "snapshots.energy": "/snapshots/energy",  # n_snap x 1
    "snapshots.p": "/snapshots/p",  # n_snap x N
    "snapshots.v": "/snapshots/v",  # n_snap x N
    "snapshots.x": "/snapshots/x",  # n_snap x n (first-order models from files)
    "reduction": "/reduction",  # attributes
    "reduction.reduced": "/reduction/reduced",  # the reduced matrices, REDUCED_MATRICES
    "reduction.V": "/reduction/V",  # store_bases = true (modal: always)
    "reduction.W": "/reduction/W",
    "reduction.hsv": "/reduction/hsv",
    "reduction.sv": "/reduction/sv",
    "reduction.pod_singular_values": "/reduction/pod_singular_values",
    "reduction.force_singular_values": "/reduction/force_singular_values",
    "reduction.empirical_singular_values": "/reduction/empirical_singular_values",
    "reduction.subspace_singular_values": "/reduction/subspace_singular_values",
    "reduction.deim_masses": "/reduction/deim_masses",  # 1-based
    "reduction.ecsw_elements": "/reduction/ecsw_elements",  # 1-based
    "reduction.ecsw_weights": "/reduction/ecsw_weights",
    "reduction.deim_basis": "/reduction/deim_basis",
    "reduction.omega": "/reduction/omega",  # modal
    "reduction.eigenvalues": "/reduction/eigenvalues",  # modal, first-order models
    "reduction.dominance": "/reduction/dominance",  # modal
    "reduction.shifts": "/reduction/shifts",  # irka: r x 2 (real, imaginary)
    "reduction.history": "/reduction/history",  # irka: per-iteration columns
    "reduction.hankel_singular_values": "/reduction/hankel_singular_values",  # differential_balancing
    "reduction.error_bound": "/reduction/error_bound",  # differential_balancing: 2 sum_{i>r} sigma_i
    "reduction.position_singular_values": "/reduction/position_singular_values",
    "reduction.controllability_residuals": "/reduction/controllability_residuals",
    "reduction.observability_residuals": "/reduction/observability_residuals",
    "reduction.P": "/reduction/P",
    "reduction.Q": "/reduction/Q",
    "reduction.adi_controllability": "/reduction/adi_controllability",
    "reduction.adi_observability": "/reduction/adi_observability",
    "reduction.rksm_controllability": "/reduction/rksm_controllability",
    "reduction.rksm_observability": "/reduction/rksm_observability",
    "reduced": "/reduced",  # attributes r, integration_s (multibody: relative_output_error)
    "reduced.outputs.y": "/reduced/outputs/y",  # n_out x p, at /outputs/t
    "error": "/error",  # attributes max_abs, relative_l2, ...
    "error.y": "/error/y",  # n_out x p: y - y_r
    "error_vs_r": "/error_vs_r",  # datasets ERROR_VS_R_COLUMNS, attributes
    "analysis": "/analysis",  # attributes h2_*, hinf_*, ...
    "analysis.omega": "/analysis/omega",
    "analysis.sigma_full": "/analysis/sigma_full",
    "analysis.sigma_reduced": "/analysis/sigma_reduced",
    "analysis.sigma_error": "/analysis/sigma_error",
    "analysis.omega_reduced": "/analysis/omega_reduced",
    "analysis.sigma_reduced_dense": "/analysis/sigma_reduced_dense",
    # a multibody run (model.type = pendulum, bricard, flyball, robot)
    "benchmark": "/benchmark",  # attributes
    "benchmark.t": "/benchmark/t",  # n_t x 1
    "benchmark.x": "/benchmark/x",
    "benchmark.y": "/benchmark/y",
    "benchmark.energy": "/benchmark/energy",
    "benchmark.energy_balance": "/benchmark/energy_balance",
    "benchmark.constraint_residual": "/benchmark/constraint_residual",
    "benchmark.y_exact": "/benchmark/y_exact",  # A01 only
    "animation": "/animation",  # attributes fps, format
    "animation.points": "/animation/points",  # n_t x 3 n_points
    "animation.segments": "/animation/segments",  # pairs of 0-based point indices
    "linear": "/linear",  # attributes, and the matrices LINEAR_MATRICES
    "linear.poles_real": "/linear/poles_real",
    "linear.poles_imag": "/linear/poles_imag",
    "linear.response.t": "/linear/response/t",
    "linear.response.y": "/linear/response/y",
    "linear.nonlinear_response.t": "/linear/nonlinear_response/t",
    "linear.nonlinear_response.y": "/linear/nonlinear_response/y",
    "reduced.t": "/reduced/t",
    "reduced.y": "/reduced/y",
    # a sweep (mor sweep): root attribute kind = "sweep"
    "table": "/table",  # one 1-D dataset per column
    "fits": "/fits",  # one 1-D dataset per column: FIT_COLUMNS
    "points": "/points",  # /points/<key>: the point's whole results file
    "sweep_point": "/sweep_point",  # inside /points/<key>: its row of the table, attributes
}
REDUCED_MATRICES = ("E", "A", "B", "C", "D", "M", "K", "Cp", "Cv")  # under reduction.reduced
LINEAR_MATRICES = ("M", "D", "K", "B", "Cp", "Cv")  # under linear
SINGULAR_VALUES = ("hsv", "sv", "pod_singular_values", "force_singular_values",
                   "empirical_singular_values", "subspace_singular_values",
                   "hankel_singular_values", "position_singular_values")
METHOD_DATASETS = ("error_bound", "controllability_residuals", "observability_residuals", "P",
                   "Q", "ecsw_elements", "ecsw_weights")  # under reduction: further datasets of
# a method (differential_balancing; ECSW's 1-based elements and their weights)
GRAMIAN_SOLVERS = ("adi_controllability", "adi_observability", "rksm_controllability",
                   "rksm_observability")  # groups: attributes, datasets residuals and shifts
ERROR_VS_R_COLUMNS = ("r", "m", "relative_l2", "max_abs", "reduced_step_s")
FIT_COLUMNS = ("series", "column", "exponent", "coefficient", "N_min", "N_max", "points")


class ResultsError(Exception):
    """A file that cannot be read as a mor results file; the message names it and why."""


# --- reading helpers ------------------------------------------------------------------------


def _value(value):
    """An HDF5 attribute or 0-d dataset as a plain value: str, int, float or numpy array."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "OS":
            value = np.array([v.decode("utf-8", "replace") if isinstance(v, bytes) else v
                              for v in value.ravel()], dtype=object).reshape(value.shape)
        if value.shape == ():
            return value.item()
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


def attributes(obj):
    """The attributes of an HDF5 object as a dict of plain values ({} for None)."""
    return {} if obj is None else {name: _value(obj.attrs[name]) for name in obj.attrs}


def _rel(path):
    return path.lstrip("/")


def _node(group, name):
    """The object at PATHS[name] under group (the file or a sweep point's group), or None."""
    path = _rel(PATHS[name])
    return group if path == "" else group.get(path)


def _array(group, name, column=False):
    """The dataset at PATHS[name] as a numpy array (None if absent); column=True flattens an
    n x 1 dataset to 1-D."""
    d = _node(group, name)
    if not isinstance(d, h5py.Dataset):
        return None
    if h5py.check_string_dtype(d.dtype) is not None:
        return np.array(d.asstr()[()], dtype=object)
    a = d[()]
    if column and a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    return a


def _columns(group, names=None):
    """{name: 1-D array} of the datasets of a group (all of them, or those in names)."""
    if group is None:
        return {}
    out = {}
    for name, d in group.items():
        if isinstance(d, h5py.Dataset) and (names is None or name in names):
            out[name] = (np.array(d.asstr()[()], dtype=object)
                         if h5py.check_string_dtype(d.dtype) is not None else d[()])
    return out


def _open(path):
    """The opened file after the format check, or ResultsError."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ResultsError(f"cannot read results file '{path}': " +
                           ("not a regular file" if os.path.exists(path) else "no such file"))
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as error:
        raise ResultsError(f"cannot read results file '{path}': {' '.join(str(error).split())}")
    found = _value(f.attrs["format"]) if "format" in f.attrs else None
    if found != FORMAT:
        f.close()
        raise ResultsError(f"'{path}' is not a mor results file (root attribute format = "
                           f"{found!r}, expected '{FORMAT}')")
    return f


def _configuration(root_attrs):
    """The effective configuration (root attribute `configuration`, TOML) parsed, or {}."""
    text = root_attrs.get("configuration")
    if not isinstance(text, str):
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


# --- the objects ------------------------------------------------------------------------------


@dataclass
class GramianSolver:
    """One low-rank Gramian solve (LR-ADI or RKSM): status, iterations, residual history."""

    attrs: dict
    residuals: np.ndarray  # relative residual per ADI step or RKSM update
    shifts: np.ndarray  # steps x 2: real, imaginary part


@dataclass
class Reduction:
    """The reduction of a run (/reduction)."""

    method: str  # bt, sobt, modal, pod, empirical_bt, ...
    r: int
    attrs: dict  # every attribute of /reduction: offline cost by stage, bound, ranks, ...
    matrices: dict  # the reduced model: E, A, B, C, D (bt) or M, D, K, B, Cp, Cv
    singular_values: dict  # hsv, sv, pod_singular_values, ... (those the method stores)
    bases: dict  # V, W when stored
    gramian_solvers: dict  # adi_controllability, ...: GramianSolver
    datasets: dict = field(default_factory=dict)  # METHOD_DATASETS the method stores: the
    # bound 2 sum_{i>r} sigma_i for every r, the LMI residuals, the Gramians P and Q
    deim_masses: Optional[np.ndarray] = None  # 1-based sampled masses (pod, empirical_bt)
    omega: Optional[np.ndarray] = None  # modal: undamped frequencies of every mode
    dominance: Optional[np.ndarray] = None  # modal: static modal gain of every mode


@dataclass
class Analysis:
    """Full against reduced in the frequency domain (/analysis)."""

    attrs: dict  # h2_error, h2_error_relative, hinf_error, hinf_method, ...
    omega: Optional[np.ndarray]  # rad/s
    sigma_full: Optional[np.ndarray]  # sigma_max(G(i omega))
    sigma_reduced: Optional[np.ndarray]
    sigma_error: Optional[np.ndarray]
    # The reduced model alone on the fixed grid of bode_points frequencies (for large models the
    # curves above sit at adaptively placed frequencies; attribute bode_method).
    omega_reduced: Optional[np.ndarray] = None
    sigma_reduced_dense: Optional[np.ndarray] = None


@dataclass
class ErrorVsR:
    """The output error of several orders from the same bases (/error_vs_r), ascending r."""

    r: np.ndarray
    m: np.ndarray  # DEIM samples per order (0 without DEIM)
    relative_l2: np.ndarray
    max_abs: np.ndarray
    reduced_step_s: np.ndarray  # reduced integration time per step
    attrs: dict


def _reduction(group):
    g = _node(group, "reduction")
    if g is None:
        return None
    a = attributes(g)
    reduced = _node(group, "reduction.reduced")
    matrices = _columns(reduced, REDUCED_MATRICES) if reduced is not None else {}
    solvers = {}
    for name in GRAMIAN_SOLVERS:
        s = _node(group, f"reduction.{name}")
        if s is not None:
            solvers[name] = GramianSolver(attributes(s), _dataset(s, "residuals"),
                                          _dataset(s, "shifts"))
    return Reduction(
        method=str(a.get("method", "")), r=int(a.get("r", 0)), attrs=a, matrices=matrices,
        singular_values={n: v for n in SINGULAR_VALUES
                         if (v := _array(group, f"reduction.{n}")) is not None},
        bases={n: v for n in ("V", "W") if (v := _array(group, f"reduction.{n}")) is not None},
        gramian_solvers=solvers,
        datasets={n: v for n in METHOD_DATASETS
                  if (v := _array(group, f"reduction.{n}")) is not None}, deim_masses=_array(group, "reduction.deim_masses"),
        omega=_array(group, "reduction.omega"), dominance=_array(group, "reduction.dominance"))


def _dataset(group, name):
    """A dataset directly under group, by its own name (inside the groups PATHS names)."""
    d = group.get(name)
    return d[()] if isinstance(d, h5py.Dataset) else None


def _analysis(group):
    g = _node(group, "analysis")
    if g is None:
        return None
    return Analysis(attributes(g), *(_array(group, f"analysis.{n}") for n in
                                     ("omega", "sigma_full", "sigma_reduced", "sigma_error",
                                      "omega_reduced", "sigma_reduced_dense")))


@dataclass
class Run:
    """One `mor run` of the chain or of a model from a file (or one point of a sweep)."""

    path: str  # the results file
    group: str  # "/" or, for a sweep's point, "/points/<key>"
    provenance: dict  # root attributes: program, version, git_commit, created, host, ...
    configuration: str  # the effective experiment as TOML
    config: dict  # the same, parsed
    model: dict  # /model attributes: type, N, inputs, outputs, ...
    simulation: dict  # /simulation attributes: integrator, dt, steps, ...
    input: dict  # /input attributes: type, description
    timings: dict  # /timings attributes: stepping_s, speedup_per_step, peak_rss_mib, ...
    t: np.ndarray  # output times (n_out,)
    u: np.ndarray  # inputs (n_out, m)
    y: np.ndarray  # outputs of the full model (n_out, p)
    reduced_y: Optional[np.ndarray] = None  # outputs of the reduced model at t (n_out, p)
    reduced: dict = field(default_factory=dict)  # /reduced attributes: r, integration_s
    error_y: Optional[np.ndarray] = None  # y - reduced_y as stored (n_out, p)
    error: dict = field(default_factory=dict)  # /error attributes: relative_l2, max_abs, ...
    reduction: Optional[Reduction] = None
    analysis: Optional[Analysis] = None
    error_vs_r: Optional[ErrorVsR] = None
    snapshot_t: Optional[np.ndarray] = None  # snapshot times (n_snap,)
    energy: Optional[np.ndarray] = None  # mechanical energy at the snapshot times (n_snap,)
    snapshot_fields: tuple = ()  # those stored: "p", "v" or "x"
    sweep_point: dict = field(default_factory=dict)  # a sweep's point: its row of the table

    def _snapshot_dataset(self, f, field_name):
        if field_name not in ("p", "v", "x"):
            raise ValueError(f"snapshot field must be p, v or x, got {field_name!r}")
        base = f if self.group == "/" else f[_rel(self.group)]
        d = _node(base, f"snapshots.{field_name}")
        if d is None:
            raise ResultsError(f"'{self.path}' has no snapshots of {field_name} in "
                               f"{self.group} (stored: {', '.join(self.snapshot_fields) or 'none'})")
        return d

    def snapshot_shape(self, field_name="p"):
        """(n_snap, n) of the snapshots of p, v or x, without reading them."""
        with h5py.File(self.path, "r") as f:
            return self._snapshot_dataset(f, field_name).shape

    def snapshots(self, field_name="p", rows=slice(None), cols=slice(None)):
        """Snapshots of p, v or x, one row per snapshot time: rows and cols select (slices or
        index arrays, as in h5py), so that a part of a large dataset is read, not all of it."""
        with h5py.File(self.path, "r") as f:
            return self._snapshot_dataset(f, field_name)[rows, cols]


def _run(path, group, prefix="/"):
    root = attributes(group)
    t = _array(group, "outputs.t", column=True)
    if t is None:
        raise ResultsError(f"'{path}' has no dataset {prefix.rstrip('/')}{PATHS['outputs.t']}")
    evr = _node(group, "error_vs_r")
    fields = tuple(n for n in ("p", "v", "x") if _node(group, f"snapshots.{n}") is not None)
    return Run(
        path=os.fspath(path), group=prefix, provenance=root,
        configuration=root.get("configuration", ""), config=_configuration(root),
        model=attributes(_node(group, "model")), simulation=attributes(_node(group, "simulation")),
        input=attributes(_node(group, "input")), timings=attributes(_node(group, "timings")),
        t=t, u=_array(group, "outputs.u"), y=_array(group, "outputs.y"),
        reduced_y=_array(group, "reduced.outputs.y"), reduced=attributes(_node(group, "reduced")),
        error_y=_array(group, "error.y"), error=attributes(_node(group, "error")),
        reduction=_reduction(group), analysis=_analysis(group),
        error_vs_r=None if evr is None else ErrorVsR(
            **{c: _dataset(evr, c) for c in ERROR_VS_R_COLUMNS}, attrs=attributes(evr)),
        snapshot_t=_array(group, "snapshots.t", column=True),
        energy=_array(group, "snapshots.energy", column=True), snapshot_fields=fields,
        sweep_point=attributes(_node(group, "sweep_point")))


@dataclass
class LinearModel:
    """The linearisation of a multibody model (/linear) and its response to the small input."""

    attrs: dict  # input, input_names, output_names, relative_difference, difference_ratio, ...
    matrices: dict  # M, D, K, B, Cp, Cv
    poles: np.ndarray  # complex
    response_t: Optional[np.ndarray]
    response_y: Optional[np.ndarray]  # the linear model's output
    nonlinear_t: Optional[np.ndarray]
    nonlinear_y: Optional[np.ndarray]  # the nonlinear model's, as deviations


@dataclass
class MultibodyRun:
    """One `mor run` of a multibody benchmark (A01, A04, A05, robot)."""

    path: str
    provenance: dict
    configuration: str
    config: dict
    model: dict  # type, title, state_size, horizon, output_names
    benchmark: dict  # /benchmark attributes: method, rtol, steps, cpu_seconds, errors, ...
    benchmark_t: np.ndarray  # (n_t,)
    benchmark_x: np.ndarray  # states (n_t, n)
    benchmark_y: np.ndarray  # outputs (n_t, p)
    energy: Optional[np.ndarray]  # (n_t,)
    energy_balance: Optional[np.ndarray]  # E(t) - E(0) - W(t) (n_t,)
    constraint_residual: Optional[np.ndarray]  # (n_t,)
    y_exact: Optional[np.ndarray]  # A01: the exact solution (n_t, p)
    linear: Optional[LinearModel] = None
    reduction: Optional[Reduction] = None
    reduced: dict = field(default_factory=dict)  # relative_output_error, steps
    reduced_t: Optional[np.ndarray] = None
    reduced_y: Optional[np.ndarray] = None  # the reduced linear model's output
    analysis: Optional[Analysis] = None
    animation: dict = field(default_factory=dict)  # fps, format
    animation_points: Optional[np.ndarray] = None  # (n_t, 3 n_points), column by column
    animation_segments: Optional[np.ndarray] = None  # (segments, 2) point indices
    # The file as every run has it (/outputs: the nonlinear model driven by [input] from its
    # rest state; /reduced/outputs/y, /error: the reduced linearisation against it), or None
    # for files without /outputs.
    run: Optional["Run"] = None

    @property
    def output_names(self):
        names = [n for n in str(self.model.get("output_names", "")).split(",") if n]
        return names if len(names) == self.benchmark_y.shape[1] else [
            f"y{k + 1}" for k in range(self.benchmark_y.shape[1])]


def _multibody(path, f):
    root = attributes(f)
    linear = None
    if _node(f, "linear") is not None:
        real, imag = _array(f, "linear.poles_real"), _array(f, "linear.poles_imag")
        linear = LinearModel(
            attrs=attributes(_node(f, "linear")),
            matrices=_columns(_node(f, "linear"), LINEAR_MATRICES),
            poles=(real + 1j * imag) if real is not None else np.array([], complex),
            response_t=_array(f, "linear.response.t", column=True),
            response_y=_array(f, "linear.response.y"),
            nonlinear_t=_array(f, "linear.nonlinear_response.t", column=True),
            nonlinear_y=_array(f, "linear.nonlinear_response.y"))
    return MultibodyRun(
        path=os.fspath(path), provenance=root, configuration=root.get("configuration", ""),
        config=_configuration(root), model=attributes(_node(f, "model")),
        benchmark=attributes(_node(f, "benchmark")),
        benchmark_t=_array(f, "benchmark.t", column=True), benchmark_x=_array(f, "benchmark.x"),
        benchmark_y=_array(f, "benchmark.y"), energy=_array(f, "benchmark.energy", column=True),
        energy_balance=_array(f, "benchmark.energy_balance", column=True),
        constraint_residual=_array(f, "benchmark.constraint_residual", column=True),
        y_exact=_array(f, "benchmark.y_exact"), linear=linear, reduction=_reduction(f),
        reduced=attributes(_node(f, "reduced")), reduced_t=_array(f, "reduced.t", column=True),
        reduced_y=_array(f, "reduced.y"), analysis=_analysis(f),
        animation=attributes(_node(f, "animation")),
        animation_points=_array(f, "animation.points"),
        animation_segments=_array(f, "animation.segments"),
        run=_run(path, f) if _node(f, "outputs.t") is not None else None)


@dataclass
class Sweep:
    """A `mor sweep` results file: the table, the power-law fits and every point's run."""

    path: str
    provenance: dict  # root attributes: kind, points_total, points_done, complete, tolerances, ...
    configuration: str  # the sweep file with its overrides (TOML)
    config: dict
    table: dict  # column -> 1-D array, one row per point in grid order (str columns: object)
    column_attrs: dict  # column -> its attributes (r_for_tol_<k>: tolerance)
    fits: dict  # FIT_COLUMNS -> 1-D array, one row per series and cost column
    fits_attrs: dict

    @property
    def keys(self):
        """The points' keys, in the table's order."""
        return list(self.table["key"])

    @property
    def done(self):
        """Boolean mask of the rows whose status is "done"."""
        return np.array([s == "done" for s in self.table["status"]], dtype=bool)

    def point(self, key):
        """The run of the point `key` (/points/<key>), as a Run."""
        with h5py.File(self.path, "r") as f:
            group = f.get(f"{_rel(PATHS['points'])}/{key}")
            if group is None:
                raise ResultsError(f"'{self.path}' has no point '{key}' (a point that is not "
                                   "done has no group)")
            return _run(self.path, group, f"{PATHS['points']}/{key}")

    def has_point(self, key):
        with h5py.File(self.path, "r") as f:
            return f"{_rel(PATHS['points'])}/{key}" in f


def _sweep(path, f):
    root = attributes(f)
    table_group = _node(f, "table")
    if not isinstance(table_group, h5py.Group):
        raise ResultsError(f"'{path}' is a sweep without the group {PATHS['table']}")
    table = _columns(table_group)
    lengths = {len(v) for v in table.values()}
    if len(lengths) > 1:
        raise ResultsError(f"'{path}': the columns of {PATHS['table']} differ in length "
                           f"({sorted(lengths)})")
    fits_group = _node(f, "fits")
    return Sweep(path=os.fspath(path), provenance=root, configuration=root.get("configuration", ""),
                 config=_configuration(root), table=table,
                 column_attrs={n: attributes(d) for n, d in table_group.items()},
                 fits=_columns(fits_group, FIT_COLUMNS), fits_attrs=attributes(fits_group))


# --- entry points -----------------------------------------------------------------------------


def kind(path):
    """"sweep", "multibody" or "run": what load(path) returns."""
    with _open(path) as f:
        return _kind(f)


def _kind(f):
    if _value(f.attrs.get("kind", "")) == "sweep":
        return "sweep"
    return "multibody" if _node(f, "benchmark") is not None else "run"


def load(path):
    """The results file at path as a Run, a Sweep or a MultibodyRun (by what it holds)."""
    with _open(path) as f:
        k = _kind(f)
        if k == "sweep":
            return _sweep(path, f)
        if k == "multibody":
            return _multibody(path, f)
        return _run(path, f)


def _load_kind(path, wanted):
    with _open(path) as f:
        k = _kind(f)
        if k != wanted:
            raise ResultsError(f"'{os.fspath(path)}' is a {k} results file, not a {wanted} one")
        return {"sweep": _sweep, "multibody": _multibody, "run": _run}[k](path, f)


def load_run(path):
    """A `mor run` file of the chain or a model from a file; ResultsError for another kind."""
    return _load_kind(path, "run")


def load_sweep(path):
    """A `mor sweep` file; ResultsError for another kind."""
    return _load_kind(path, "sweep")


def load_multibody(path):
    """A multibody benchmark's `mor run` file; ResultsError for another kind."""
    return _load_kind(path, "multibody")


def format_version(path):
    """The root attribute format_version (FORMAT_VERSION is the one this module knows)."""
    with _open(path) as f:
        return _value(f.attrs.get("format_version", FORMAT_VERSION))
