#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plot a results file written by `mor run`.

Usage:
    /usr/bin/python3 experiments/plot_results.py RESULTS.h5 [--out DIR]

Writes, into DIR (default: <file stem>_plots next to RESULTS.h5, created if missing):
  outputs.png      y(t) of each output and, below on the same time axis, u(t) of each input;
  snapshots_p.png  heat map of the displacements p_i(t) (if /snapshots/p exists), read with
                   strided slicing so that at most about 1000 x 2000 values are loaded;
  energy.png       total mechanical energy vs time (if /snapshots/energy exists);
  and, for a reduction experiment (/reduction exists):
  hsv.png          Hankel singular values sigma_i / sigma_1 (and, for second-order BT, the
                   variant's singular values), the order r and the error bound;
  pod_sv.png       POD: singular values of the position and force snapshots (normalised),
                   r, the DEIM samples m and the captured energy;
  bode.png         sigma_max(G(i w)) of the full and the reduced model and of their difference,
                   with the H-infinity error and the BT bound;
  empirical_sv.png empirical balancing: the empirical singular values and those of the
                   position subspace (normalised), r;
  error_vs_r.png   relative L2 output error against r (reduction.compare_orders), with the
                   reduced cost per step on a second axis;
  reduced_outputs.png  y(t) of the full and the reduced model and the error y - y_r;
  and, for a parametric run (/parameters and /validation exist):
  validation_error.png the relative output error at the validation points over the domain: for
                   two parameters a map coloured by log10 of the error (each axis in its
                   parameter's scale), for one parameter the error against it, for more the
                   error against each parameter in small panels; the training points and the
                   points the greedy selected marked;
  validation_speedup.png  full / reduced seconds per step at each validation point (and of the
                   whole run with the evaluation at the point), the three costs below;
  greedy.png       sampling = "greedy": the indicator and the true error per selected point
                   against the iteration, greedy_tolerance, and the one against the other with
                   their correlation.

    /usr/bin/python3 experiments/plot_results.py --compare A.h5 B.h5 ... --out DIR

overlays the error against r of several results files (one curve per file, labelled with its
method and nonlinear treatment) in DIR/error_vs_r.png, to compare methods on the same test.
A multibody results file (with /benchmark) gets the plots and the animation of
plot_multibody.py instead.
Prints the path of each written PNG on stdout. Exits with 2 and a one-line message on stderr
if the file cannot be read or is not a "mor-results" file.

The file is read through python/mor_results.py (the one place that knows the HDF5 paths).
Needs Debian's python3-matplotlib, python3-h5py and python3-numpy (hence /usr/bin/python3).
"""
import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import mor_results  # noqa: E402

MAX_TIMES, MAX_MASSES = 1000, 2000  # largest heat map read from a snapshot dataset
DPI = 120


PROG = Path(sys.argv[0]).name  # plot_sweep.py imports this module: its messages say so


def fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


def attr(attrs, name, default="?"):
    """Attribute `name` of a dict of attributes (mor_results), or `default` if it is missing
    (or the dict is None)."""
    if attrs is None or name not in attrs:
        return default
    return attrs[name]


def title_of(run):
    """Figure title from the model, simulation and input attributes."""
    model, sim, inp = run.model, run.simulation, run.input
    dt = attr(sim, "dt")
    dt = f"{dt:g}" if isinstance(dt, (float, int, np.floating, np.integer)) else dt
    name = attr(run.provenance, "experiment_name", "")
    head = f"{name}: " if name else ""
    # N for the kinds that are sized by it, n (states or coordinates) for model files.
    size = f"N = {attr(model, 'N')}" if attr(model, "N", None) is not None else f"n = {attr(model, 'n')}"
    return (f"{head}{attr(model, 'type')}, {size}, "
            f"{attr(sim, 'integrator')}, dt = {dt}\ninput: {attr(inp, 'description')}")


def ordinal(k):
    """1 -> '1st', 2 -> '2nd', 3 -> '3rd', 11 -> '11th', 100 -> '100th'."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def save(fig, out_dir, name):
    path = out_dir / name
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    print(path)


def plot_outputs(run, out_dir, title):
    t, u, y = run.t, run.u, run.y
    model = run.model
    outputs = np.atleast_1d(attr(model, "outputs", np.arange(1, y.shape[1] + 1)))
    inputs = np.atleast_1d(attr(model, "inputs", np.arange(1, u.shape[1] + 1)))
    quantity = attr(model, "output_quantity", "output")
    fig, (ax_y, ax_u) = plt.subplots(2, 1, sharex=True, figsize=(9, 6),
                                     gridspec_kw={"height_ratios": [2, 1]})
    for k in range(y.shape[1]):
        mass = outputs[k] if k < len(outputs) else "?"
        ax_y.plot(t, y[:, k], lw=1, label=f"y_{k + 1}: {quantity} of mass {mass}")
    for j in range(u.shape[1]):
        mass = inputs[j] if j < len(inputs) else "?"
        ax_u.plot(t, u[:, j], lw=1, label=f"u_{j + 1}: force on mass {mass}")
    ax_y.set_ylabel(f"y ({quantity})")
    ax_u.set_ylabel("u (input)")
    ax_u.set_xlabel("time t")
    for ax in (ax_y, ax_u):
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize="small", loc="best")
    ax_y.set_title(title)
    save(fig, out_dir, "outputs.png")


ACTIVE_FRACTION = 1e-3  # masses moving less than this fraction of the peak are cropped away
ACTIVE_SAMPLES = 8  # whole snapshot rows read to find where the chain moves


def active_masses(run, n_snap, n):
    """Index range [lo, hi) of the masses that move: a chain driven at one end for a time T
    only moves where its waves reach, which at large N is a small part of it. Reads at most
    ACTIVE_SAMPLES whole rows (the last one included), evenly spread over time."""
    rows = sorted(set(np.linspace(0, n_snap - 1, min(ACTIVE_SAMPLES, n_snap)).round().astype(int)))
    envelope = np.zeros(n)
    for row in run.snapshots("p", rows=rows):
        envelope = np.maximum(envelope, np.nan_to_num(np.abs(row), nan=np.inf))
    peak = envelope.max()
    if not peak > 0:
        return 0, n
    moving = np.flatnonzero(envelope > ACTIVE_FRACTION * peak)
    pad = max(2, (moving[-1] - moving[0]) // 20)
    lo, hi = max(0, moving[0] - pad), min(n, moving[-1] + 1 + pad)
    return (lo, hi) if hi - lo < 0.8 * n else (0, n)


def plot_snapshots_p(run, out_dir, title):
    n_snap, n = run.snapshot_shape("p")
    if n_snap == 0 or n == 0:
        print("plot_results.py: /snapshots/p is empty, skipped", file=sys.stderr)
        return
    lo, hi = active_masses(run, n_snap, n)
    rs, cs = math.ceil(n_snap / MAX_TIMES), math.ceil((hi - lo) / MAX_MASSES)
    p = run.snapshots("p", slice(None, None, rs), slice(lo, hi, cs))  # never the whole dataset
    t = run.snapshot_t[::rs] if run.snapshot_t is not None else np.arange(0, n_snap, rs, float)
    # Cell edges: the last snapshot (at the final step) may be closer to its neighbour than the
    # others, so the time edges are midpoints rather than a uniform extent.
    step = t[1] - t[0] if len(t) > 1 else 1.0
    t_edges = np.concatenate(([t[0] - step / 2], (t[1:] + t[:-1]) / 2, [t[-1] + step / 2]))
    i_edges = np.append(np.arange(lo + 1, hi + 1, cs) - 0.5, hi + 0.5)
    finite = np.abs(p[np.isfinite(p)])
    vmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    fig, ax = plt.subplots(figsize=(9, 6))
    image = ax.pcolorfast(t_edges, i_edges, p.T, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    fig.colorbar(image, ax=ax, label="displacement p_i")
    ax.set_xlabel("time t")
    ax.set_ylabel("mass index i")
    ax.ticklabel_format(axis="y", useOffset=False, style="plain")
    notes = [f"every {ordinal(k)} {what}"
             for k, what in ((cs, "mass"), (rs, "snapshot time")) if k > 1]
    sub = f" (subsampled: {', '.join(notes)})" if notes else ""
    if hi - lo < n:
        sub += (f"\nmasses {lo + 1}..{hi} of {n}: elsewhere |p| < {ACTIVE_FRACTION:g} of the peak"
                f" in {ACTIVE_SAMPLES} sampled snapshots")
    ax.set_title(f"{title}\ndisplacements p_i(t){sub}", fontsize="medium")
    save(fig, out_dir, "snapshots_p.png")


def plot_energy(run, out_dir, title):
    energy = run.energy
    t = run.snapshot_t if run.snapshot_t is not None else np.arange(len(energy), dtype=float)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.plot(t, energy, lw=1)
    ax.set_xlabel("time t")
    ax.set_ylabel("total mechanical energy")
    ax.grid(alpha=0.3)
    ax.set_title(f"{title}\nenergy")
    save(fig, out_dir, "energy.png")


def plot_hsv(run, out_dir, title):
    """hsv.png of a Run or a MultibodyRun with Hankel singular values."""
    red = run.reduction.attrs
    values = run.reduction.singular_values
    hsv = values["hsv"]
    r = int(attr(red, "r", 0))
    fig, ax = plt.subplots(figsize=(9, 5))
    i = np.arange(1, len(hsv) + 1)
    ax.semilogy(i, hsv / hsv[0], ".-", lw=1, ms=3, label="Hankel singular values sigma_i / sigma_1")
    if "sv" in values:
        sv = values["sv"]
        ax.semilogy(np.arange(1, len(sv) + 1), sv / sv[0], ".-", lw=1, ms=3,
                    label=f"second-order ({attr(red, 'variant')}) singular values, normalised")
    if r > 0:
        ax.axvline(r, color="k", ls="--", lw=1, label=f"r = {r}")
    method = attr(red, "gramian_method")
    note = (f"Gramians: {method}, factor ranks {attr(red, 'rank_c')} / {attr(red, 'rank_o')}"
            + ("" if method == "dense" else " (only the leading values are computed)"))
    bound = attr(red, "error_bound", None)
    if bound is not None:
        note += f"; BT bound 2 sum_(i>r) sigma_i = {bound:.3g}"
    ax.set_xlabel("i")
    ax.set_ylabel("sigma_i / sigma_1")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    ax.set_title(f"{title}\n{attr(red, 'method')}: {note}", fontsize="medium")
    save(fig, out_dir, "hsv.png")


def decay(ax, values, label):
    """values / values[0] against 1-based index on a log scale (zeros left out)."""
    ax.semilogy(np.arange(1, len(values) + 1),
                np.where(values > 0, values / values[0], np.nan), ".-", lw=1, ms=3, label=label)


def finish_decay(ax, red, ylabel):
    """The order r as a dashed line, axis labels, grid and legend of a singular-value plot."""
    r = int(attr(red, "r", 0))
    if r > 0:
        ax.axvline(r, color="k", ls="--", lw=1, label=f"r = {r}")
    ax.set_xlabel("i")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")


def plot_pod_singular_values(run, out_dir, title):
    red, values = run.reduction.attrs, run.reduction.singular_values
    fig, ax = plt.subplots(figsize=(9, 5))
    decay(ax, values["pod_singular_values"], "positions q: s_i / s_1")
    if "force_singular_values" in values:
        decay(ax, values["force_singular_values"], "cubic force g(q): s_i / s_1")
    m = int(attr(red, "m", 0))
    if m > 0:
        ax.axvline(m, color="C1", ls=":", lw=1, label=f"DEIM samples m = {m}")
    finish_decay(ax, red, "s_i / s_1")
    note = (f"{attr(red, 'training_snapshots')} training snapshots, captured energy "
            f"{attr(red, 'captured_energy', 0.0):.10f}, nonlinear: {attr(red, 'nonlinear')}")
    ax.set_title(f"{title}\nPOD: {note}", fontsize="medium")
    save(fig, out_dir, "pod_sv.png")


def plot_empirical_singular_values(run, out_dir, title):
    red, values = run.reduction.attrs, run.reduction.singular_values
    fig, ax = plt.subplots(figsize=(9, 5))
    decay(ax, values["empirical_singular_values"],
          "empirical (position) singular values sigma_i / sigma_1")
    if "subspace_singular_values" in values:
        decay(ax, values["subspace_singular_values"],
              "impulse-response positions: s_i / s_1 (subspace POD)")
    finish_decay(ax, red, "normalised singular value")
    note = (f"{attr(red, 'simulations')} simulations, subspace d = "
            f"{attr(red, 'subspace_dimension')}, 2 sum_(i>r) sigma_i = "
            f"{attr(red, 'discarded_sum', 0.0):.3g}, nonlinear: {attr(red, 'nonlinear')}")
    ax.set_title(f"{title}\nempirical balancing: {note}", fontsize="medium")
    save(fig, out_dir, "empirical_sv.png")


def error_curve(run):
    """(r, relative L2 error, reduced step seconds, label) of /error_vs_r."""
    g = run.error_vs_r
    red = run.reduction.attrs if run.reduction else None
    label = f"{attr(g.attrs, 'method')} ({attr(red, 'nonlinear')}"
    m = g.m
    if len(m) and m[-1] > 0:
        label += f", m = {int(m[0])}..{int(m[-1])}" if m[0] != m[-1] else f", m = {int(m[0])}"
    return g.r, g.relative_l2, g.reduced_step_s, label + ")"


def plot_error_vs_r(curves, out_dir, title):
    fig, (ax, ax_t) = plt.subplots(2, 1, sharex=True, figsize=(9, 7),
                                   gridspec_kw={"height_ratios": [2, 1]})
    for r, err, step, label in curves:
        line, = ax.semilogy(r, np.where(err > 0, err, np.nan), "o-", lw=1.2, ms=4, label=label)
        ax_t.plot(r, 1e6 * step, "o-", lw=1, ms=3, color=line.get_color())
    ax.set_ylabel("relative L2 output error")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    ax_t.set_ylabel("reduced step (us)")
    ax_t.set_xlabel("reduced order r")
    ax_t.grid(alpha=0.3)
    ax.set_title(f"{title}\noutput error against r on the test input", fontsize="medium")
    save(fig, out_dir, "error_vs_r.png")


def load_results(path):
    """The results file as a mor_results Run, Sweep or MultibodyRun, or exit 2 with a
    one-line message."""
    try:
        results = mor_results.load(path)
    except mor_results.ResultsError as error:
        fail(str(error))
    except (OSError, KeyError, ValueError, TypeError) as error:
        fail(f"cannot read results file '{path}': {' '.join(str(error).split())}")
    version = attr(results.provenance, "format_version", mor_results.FORMAT_VERSION)
    if version != mor_results.FORMAT_VERSION:
        print(f"{PROG}: warning: format_version {version!r} "
              f"(this script knows {mor_results.FORMAT_VERSION}); plotting anyway",
              file=sys.stderr)
    return results


def load_run(path):
    """A `mor run` file of the chain or a model from a file, or exit 2."""
    run = load_results(path)
    if isinstance(run, mor_results.Sweep):
        fail(f"'{path}' is a sweep file: plot it with plot_sweep.py")
    return run


def make_dir(out_dir):
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        fail(f"cannot create output directory '{out_dir}': {error}")


def compare(paths, out_dir):
    if out_dir is None:
        fail("--compare needs --out DIR")
    curves, titles = [], []
    for path in paths:
        run = load_run(path)
        if getattr(run, "error_vs_r", None) is None:
            fail(f"'{path}' has no /error_vs_r (run it with reduction.compare_orders)")
        curves.append(error_curve(run))
        titles.append(title_of(run).split(": ", 1)[-1])  # without the experiment name
    make_dir(out_dir)
    common = titles[0] if all(t == titles[0] for t in titles) else f"{len(paths)} results files"
    plot_error_vs_r(curves, out_dir, common)
    return 0


def plot_bode(run, out_dir, title):
    """bode.png of a Run or a MultibodyRun with a frequency analysis."""
    a, red = run.analysis.attrs, run.reduction.attrs if run.reduction else None
    w = run.analysis.omega
    fig, ax = plt.subplots(figsize=(9, 5))
    r = attr(red, "r", "?")
    ax.loglog(w, run.analysis.sigma_full, lw=1.5, label="full model")
    ax.loglog(w, run.analysis.sigma_reduced, "--", lw=1.2, label=f"reduced model, r = {r}")
    err = run.analysis.sigma_error
    ax.loglog(w, np.where(err > 0, err, np.nan), lw=1, label="error sigma_max(G - G_r)")
    hinf = attr(a, "hinf_error", None)
    bound = attr(red, "error_bound", None)
    notes = []
    if hinf is not None:
        ax.axhline(hinf, color="C2", ls=":", lw=1)
        notes.append(f"||G - G_r||_Hinf = {hinf:.3g} ({attr(a, 'hinf_method')})")
    if bound is not None and attr(red, "method") == "bt":
        ax.axhline(bound, color="k", ls=":", lw=1, label="BT bound")
        notes.append(f"bound {bound:.3g}")
    h2 = attr(a, "h2_error_relative", None)
    if h2 is not None:
        notes.append(f"relative H2 error {h2:.3g}")
    ax.set_xlabel("frequency w (rad/s)")
    ax.set_ylabel("sigma_max(G(iw))")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    ax.set_title(f"{title}\n" + "; ".join(notes), fontsize="medium")
    save(fig, out_dir, "bode.png")


def plot_reduced_outputs(run, out_dir, title):
    t, y, yr, e = run.t, run.y, run.reduced_y, run.error_y
    r = attr(run.reduction.attrs if run.reduction else None, "r", "?")
    fig, (ax_y, ax_e) = plt.subplots(2, 1, sharex=True, figsize=(9, 6),
                                     gridspec_kw={"height_ratios": [2, 1]})
    for k in range(y.shape[1]):
        ax_y.plot(t, y[:, k], lw=1.5, label=f"y_{k + 1} full")
        ax_y.plot(t, yr[:, k], "--", lw=1.2, label=f"y_{k + 1} reduced (r = {r})")
        ax_e.plot(t, e[:, k], lw=1, label=f"y_{k + 1} - y_r,{k + 1}")
    ax_y.set_ylabel("output y")
    ax_e.set_ylabel("error")
    ax_e.set_xlabel("time t")
    for ax in (ax_y, ax_e):
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    rel = attr(run.error, "relative_l2", None)
    sub = f"; relative L2 output error {rel:.3g}" if rel is not None else ""
    ax_y.set_title(f"{title}\nfull against reduced{sub}", fontsize="medium")
    save(fig, out_dir, "reduced_outputs.png")


# --- a parametric run ([parameters]): the reduced model over the parameter domain -------------

ERROR_FLOOR = 1e-17  # a relative error of 0 is drawn here on a log scale (below rounding)
RUG = dict(training=0.03, selected=0.08)  # heights (axes fraction) of the point marks in panels


def parameter_columns(run):
    """[(name, column of /validation/parameters, min, max, log)] in /parameters' order."""
    par, val = run.parameters, run.validation
    columns = []
    for j, name in enumerate(par.names):
        log = bool(par.log[j]) if par.log is not None else False
        columns.append((name, val.parameter_names.index(name), float(par.min[j]),
                        float(par.max[j]), log))
    return columns


def plain_log_ticks(axis, lo, hi):
    """Ticks 1, 2, 5 x 10^k labelled as plain numbers on a log axis spanning less than three
    decades (where the default labels only the powers of ten, often none)."""
    if 0 < lo < hi and hi / lo < 1e3:
        axis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def set_parameter_axis(ax, axis, name, lo, hi, log):
    """An axis over [lo, hi] with a 3 % margin, on a log scale for a log parameter."""
    if log:
        f = (hi / lo) ** 0.03 if hi > lo else 1.1
        limits = (lo / f, hi * f)
    else:
        pad = 0.03 * (hi - lo) if hi > lo else 0.1 * max(abs(lo), 1.0)
        limits = (lo - pad, hi + pad)
    getattr(ax, f"set_{axis}scale")("log" if log else "linear")
    getattr(ax, f"set_{axis}lim")(*limits)
    getattr(ax, f"set_{axis}label")(f"{name}" + (" (log scale)" if log else ""))
    if log:
        plain_log_ticks(getattr(ax, f"{axis}axis"), *limits)


def training_and_selected(run):
    """The training points (k x p, or None) and the rows the greedy selected (or None)."""
    red = run.reduction
    train = red.training_parameters if red is not None else None
    if train is None:
        return None, None
    greedy = red.greedy
    selected = train[greedy.point] if greedy is not None and len(greedy.point) else None
    return train, selected


def validation_note(run):
    err = run.validation.output_error
    finite = err[np.isfinite(err)]
    if not finite.size:
        return f"{len(err)} unseen points: no finite error"
    return (f"relative output error at {len(err)} unseen points on [input]: max "
            f"{finite.max():.3g}, median {np.median(finite):.3g}")


def validation_error_figure(run, title):
    """Two parameters: a map of the validation points coloured by log10 of their relative
    output error, the training points and the greedy's selections on it. One parameter, or more
    than two: the error against each parameter, one panel each, with the training points and
    the selections marked along the axis."""
    columns = parameter_columns(run)
    err = run.validation.output_error
    x = run.validation.parameters
    train, selected = training_and_selected(run)
    shown = np.log10(np.maximum(np.where(np.isfinite(err), err, np.nan), ERROR_FLOOR))
    n_train = 0 if train is None else len(train)
    if len(columns) == 2:
        (nx, jx, x_lo, x_hi, x_log), (ny, jy, y_lo, y_hi, y_log) = columns
        fig, ax = plt.subplots(figsize=(8.5, 6.5))
        points = ax.scatter(x[:, jx], x[:, jy], c=shown, cmap="viridis", s=90, edgecolors="k",
                            linewidths=0.5, zorder=3, label=f"validation points ({len(err)})")
        fig.colorbar(points, ax=ax, label="log10 relative output error")
        if train is not None:
            ax.scatter(train[:, 0], train[:, 1], marker="+", s=60, color="0.35", zorder=4,
                       label=f"training points ({n_train})")
        if selected is not None:
            ax.scatter(selected[:, 0], selected[:, 1], marker="s", s=140, facecolors="none",
                       edgecolors="C3", linewidths=1.5, zorder=5,
                       label=f"selected by the greedy ({len(selected)})")
        ref = run.parameters.reference
        ax.scatter([ref[0]], [ref[1]], marker="*", s=160, color="k", zorder=6,
                   label="the run's own point (center)")
        set_parameter_axis(ax, "x", nx, x_lo, x_hi, x_log)
        set_parameter_axis(ax, "y", ny, y_lo, y_hi, y_log)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="small", loc="best", framealpha=0.8)
    else:
        p = len(columns)
        cols = min(p, 3)
        rows = math.ceil(p / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(9 if p == 1 else 4 * cols, 4.5 * rows),
                                 sharey=True, squeeze=False)
        for panel, (name, j, lo, hi, log) in enumerate(columns):
            ax = axes.flat[panel]
            if p == 1:  # the error along the one parameter: a curve
                order = np.argsort(x[:, j])
                ax.plot(x[order, j], 10.0 ** shown[order], "o-", lw=1, ms=5,
                        label=f"validation points ({len(err)})")
            else:
                ax.plot(x[:, j], 10.0 ** shown, "o", ms=4, label=f"validation points ({len(err)})")
            ax.set_yscale("log")
            marks = ax.get_xaxis_transform()  # x in data, y in axes coordinates
            if train is not None:
                ax.plot(train[:, panel], np.full(n_train, RUG["training"]), "|", ms=12,
                        color="0.35", transform=marks, label=f"training points ({n_train})")
            if selected is not None:
                ax.plot(selected[:, panel], np.full(len(selected), RUG["selected"]), "v", ms=6,
                        color="C3", transform=marks,
                        label=f"selected by the greedy ({len(selected)})")
            set_parameter_axis(ax, "x", name, lo, hi, log)
            ax.grid(alpha=0.3, which="both")
            if panel % cols == 0:
                ax.set_ylabel("relative output error")
        # The marks of the points sit in the lowest tenth of each panel: room below the data.
        y_lo, y_hi = axes.flat[0].get_ylim()
        axes.flat[0].set_ylim(y_lo / (y_hi / y_lo) ** 0.15, y_hi)
        for ax in list(axes.flat)[p:]:
            ax.set_visible(False)
        axes.flat[0].legend(fontsize="small", loc="best")
    fig.suptitle(f"{title}\n{validation_note(run)}", fontsize="medium")
    return fig


def plot_validation_error(run, out_dir, title):
    save(validation_error_figure(run, title), out_dir, "validation_error.png")


def greedy_tolerance(run):
    """reduction.greedy_tolerance of the effective configuration, or None."""
    value = run.config.get("reduction", {}).get("greedy_tolerance")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def greedy_figure(run, title):
    """The POD-greedy per selected point: the indicator that selected it and the true error of
    the model before it there, against the iteration; and the one against the other."""
    g, red = run.reduction.greedy, run.reduction.attrs
    fig, (ax, ax_c) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [3, 2]})
    ind = np.where(g.indicator > 0, g.indicator, np.nan)
    true = np.where(g.true_error > 0, g.true_error, np.nan)
    ax.semilogy(g.iteration, ind, "o-", lw=1, ms=5,
                label="indicator that selected the point (relative sampled residual)")
    ax.semilogy(g.iteration, true, "s--", lw=1, ms=5,
                label="true relative output error there (training inputs)")
    tol = greedy_tolerance(run)
    if tol is not None:
        ax.axhline(tol, color="k", ls=":", lw=1, label=f"greedy_tolerance = {tol:g}")
    ax.set_xlabel("greedy iteration (0: the point nearest the center, no indicator)")
    ax.set_ylabel("relative indicator / error")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="best")
    both = np.isfinite(ind) & np.isfinite(true)
    if both.any():
        ax_c.loglog(ind[both], true[both], "o", ms=5)
        for it, a, b in zip(g.iteration[both], ind[both], true[both]):
            ax_c.annotate(str(it), (a, b), textcoords="offset points", xytext=(4, 3),
                          fontsize="x-small")
    else:
        ax_c.text(0.5, 0.5, "no point with both an indicator and a true error",
                  ha="center", va="center", transform=ax_c.transAxes)
    if both.any():
        for axis, values in ((ax_c.xaxis, ind[both]), (ax_c.yaxis, true[both])):
            plain_log_ticks(axis, values.min() / 1.5, values.max() * 1.5)
    ax_c.set_xlabel("indicator")
    ax_c.set_ylabel("true relative output error")
    ax_c.grid(alpha=0.3, which="both")
    corr = g.correlation
    corr_text = f"{corr:.2f}" if isinstance(corr, float) and math.isfinite(corr) else "n/a"
    ax_c.set_title("per selected point (iteration marked)", fontsize="small")
    n_train = (len(run.reduction.training_parameters)
               if run.reduction.training_parameters is not None else "?")
    selected = g.selected if g.selected is not None else len(g.point)
    fig.suptitle(f"{title}\nPOD-greedy: {selected} of {n_train} training points selected "
                 f"({attr(red, 'greedy_stop')}); correlation of log indicator and log true "
                 f"error {corr_text}", fontsize="medium")
    return fig


def plot_greedy(run, out_dir, title):
    save(greedy_figure(run, title), out_dir, "greedy.png")


def speedup_figure(run, title):
    """Per validation point: the speed-up per step, and that of the whole run with the
    evaluation of the reduced model at the point included; below, the three costs."""
    v = run.validation
    k = len(v.output_error)
    i = np.arange(1, k + 1)
    full, reduced, evaluation = v.full_step_s, v.reduced_step_s, v.evaluation_s
    per_step = np.where(reduced > 0, full / np.where(reduced > 0, reduced, 1.0), np.nan)
    steps = attr(run.simulation, "steps", None)
    fig, (ax, ax_t) = plt.subplots(2, 1, sharex=True, figsize=(9, 7))
    ax.plot(i, per_step, "o", ms=6, label="per step: full_step_s / reduced_step_s")
    if isinstance(steps, (int, np.integer)) and steps > 0:
        online = steps * full / (steps * reduced + evaluation)
        ax.plot(i, online, "s", ms=7, mfc="none",
                label=f"whole run of {steps} steps, the evaluation at the point included")
    ax.set_yscale("log")
    ax.set_ylabel("speed-up (full / reduced)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="best")
    ax_t.semilogy(i, 1e6 * full, "o-", lw=1, ms=4, label="full model, per step")
    ax_t.semilogy(i, 1e6 * reduced, "s-", lw=1, ms=4, label="reduced model, per step")
    ax_t.semilogy(i, 1e6 * evaluation, "^-", lw=1, ms=4,
                  label="evaluation of the reduced model at the point (once per point)")
    ax_t.set_ylabel("time (us)")
    ax_t.set_xlabel("validation point")
    ax_t.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax_t.grid(alpha=0.3, which="both")
    ax_t.legend(fontsize="small", loc="best")
    finite = per_step[np.isfinite(per_step)]
    med = f"{np.median(finite):.3g}x" if finite.size else "n/a"
    ax.set_title(f"{title}\nonline speed-up at {k} validation points: median {med} per step, "
                 f"evaluation at a point median {1e6 * np.median(evaluation):.3g} us",
                 fontsize="medium")
    return fig


def plot_validation_speedup(run, out_dir, title):
    save(speedup_figure(run, title), out_dir, "validation_speedup.png")


def main():
    parser = argparse.ArgumentParser(description="Plot a results file written by `mor run`.")
    parser.add_argument("results", type=Path, nargs="+", help="results file (HDF5); several "
                        "with --compare")
    parser.add_argument("--out", type=Path, help="output directory "
                        "(default: <file stem>_plots next to the results file)")
    parser.add_argument("--compare", action="store_true",
                        help="overlay the error against r of several results files")
    args = parser.parse_args()
    if args.compare:
        return compare(args.results, args.out)
    if len(args.results) != 1:
        fail("one results file, or several with --compare")
    path = args.results[0]
    run = load_run(path)
    out_dir = args.out if args.out else path.parent / f"{path.stem}_plots"
    if isinstance(run, mor_results.MultibodyRun):  # experiments/plot_multibody.py
        import plot_multibody
        make_dir(out_dir)
        plot_multibody.plot(run, out_dir, save, plot_hsv, plot_bode)
        return 0
    for name, value in (("outputs.u", run.u), ("outputs.y", run.y)):
        if value is None:
            fail(f"'{path}' has no dataset {mor_results.PATHS[name]}")
    make_dir(out_dir)
    title = title_of(run)
    plot_outputs(run, out_dir, title)
    if "p" in run.snapshot_fields:
        plot_snapshots_p(run, out_dir, title)
    if run.energy is not None:
        plot_energy(run, out_dir, title)
    values = run.reduction.singular_values if run.reduction else {}
    if "hsv" in values:
        plot_hsv(run, out_dir, title)
    if "pod_singular_values" in values:
        plot_pod_singular_values(run, out_dir, title)
    if "empirical_singular_values" in values:
        plot_empirical_singular_values(run, out_dir, title)
    if run.error_vs_r is not None:
        plot_error_vs_r([error_curve(run)], out_dir, title)
    if run.analysis is not None and run.analysis.omega is not None:
        plot_bode(run, out_dir, title)
    if run.reduced_y is not None and run.error_y is not None:
        plot_reduced_outputs(run, out_dir, title)
    validation = run.validation
    if run.parameters is not None and validation is not None and len(validation.output_error):
        plot_validation_error(run, out_dir, title)
        plot_validation_speedup(run, out_dir, title)
    if run.reduction is not None and run.reduction.greedy is not None:
        plot_greedy(run, out_dir, title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
