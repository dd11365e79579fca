#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plot and summarise a sweep results file written by `mor sweep`.

Usage:
    /usr/bin/python3 experiments/plot_sweep.py SWEEP.h5 [--out DIR] [--markdown]

Writes, into DIR (default: <file stem>_plots next to SWEEP.h5, created if missing):
  cost_vs_N.png        log-log cost against N, a row of panels per series: per-step costs
                       (full_step_s, reduced_step_s) on the left, the costs of whole stages
                       (build_s, offline_s and each offline_<stage>_s, full_simulation_s,
                       point_s) on the right; markers at the points, the power law of /fits
                       drawn as a wide pale line over its fit range, its exponent in the
                       legend ("full_step_s ~ N^1.02");
  speedup_vs_N.png     speed-up per step (full over reduced) against N, a line per series;
  error_vs_r.png       relative L2 output error against r, a panel per method: the sweep's
                       points coloured by N, and the error-against-r curve of each point that
                       has one (/points/<key>/error_vs_r, from reduction.compare_orders);
  r_for_tolerance.png  the order r_for_tol_k each method's own criterion needs for each
                       tolerance, against N, a line per series and tolerance;
  singular_values.png  (if a point has /points/<key>/reduction/hsv, empirical_singular_values
                       or pod_singular_values) their decay s_i / s_1, a panel per method, a
                       curve per N: what sets r_for_tol.
Points that are not done (pending or failed) are left out of the plots and listed on stderr;
a series with a single N is plotted without a fit; a plot without data is skipped with a note.
Prints the path of each written PNG, then the fitted exponents as a text table, on stdout;
with --markdown also a markdown table of the sweep (every point, in grid order) and one of the
fits, for docs/benchmarks.md.
Exits with 2 and a one-line message on stderr if the file cannot be read or is not a
"mor-results" file of kind "sweep".

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
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402
from plot_results import attr, load_results, save  # noqa: E402  (beside this script)
import mor_results  # noqa: E402  (python/, put on the path by plot_results)

# Colours of the cost columns, the same in every panel; other columns get those of Dark2.
COST_COLOURS = {
    "full_step_s": "C0", "reduced_step_s": "C1", "full_simulation_s": "C0",
    "build_s": "C7", "offline_s": "k", "offline_snapshots_s": "C2",
    "offline_gramians_s": "C4", "offline_pod_s": "C5", "offline_deim_s": "C6",
    "offline_projection_s": "C3", "point_s": "C8",
    # empirical balancing: simulations, their POD, the balancing (as the Gramians of BT)
    "offline_controllability_s": "C2", "offline_subspace_pod_s": "C5",
    "offline_observability_s": "C9", "offline_balancing_s": "C4",
}
# Order of the cost columns in a legend: the offline stages in the order they run.
COST_ORDER = ["full_step_s", "reduced_step_s", "full_simulation_s", "build_s", "offline_s",
              "offline_snapshots_s", "offline_gramians_s", "offline_controllability_s",
              "offline_subspace_pod_s", "offline_observability_s", "offline_balancing_s",
              "offline_pod_s", "offline_deim_s", "offline_projection_s", "point_s"]
TOL_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
TOL_STYLES = ["-", "--", ":", "-."]
NOT_AVAILABLE = "–"


def fail(message):
    print(f"plot_sweep.py: {message}", file=sys.stderr)
    sys.exit(2)


def note(message):
    print(f"plot_sweep.py: {message}", file=sys.stderr)


def checked_columns(columns, required, where):
    """columns ({name: array}, from mor_results) after checking that the required ones are
    there and every one is 1-D of one length."""
    for name in required:
        if name not in columns:
            fail(f"{where} has no column '{name}'")
    length = len(columns[required[0]]) if columns[required[0]].ndim == 1 else -1
    for name, values in columns.items():
        if values.ndim != 1 or len(values) != length:
            fail(f"column '{where}/{name}' has shape {values.shape}, expected ({length},)")
    return columns


class Sweep:
    """The table, the fits and the root attributes of a sweep file (a mor_results.Sweep)."""

    def __init__(self, data):
        self.data = data
        self.provenance = data.provenance
        self.name = attr(data.provenance, "experiment_name", "")
        self.description = attr(data.provenance, "experiment_description", "")
        self.fit_min_N = attr(data.provenance, "fit_min_N", float("nan"))
        self.tolerances = np.atleast_1d(attr(data.provenance, "tolerances", np.array([])))
        self.table = checked_columns(data.table, ["key", "series", "status", "N"], "/table")
        total = attr(data.provenance, "points_total", None)
        if total is not None and total != len(self.table["key"]):
            fail(f"/table has {len(self.table['key'])} rows but points_total = {total}")
        self.rows = len(self.table["key"])
        self.status = self.table["status"]
        self.done = np.array([s == "done" for s in self.status], dtype=bool)
        self.N = self.table["N"].astype(float)
        self.fits = []
        self._points = {}
        if data.fits:
            cols = checked_columns(data.fits, ["series", "column", "exponent", "coefficient",
                                               "N_min", "N_max"], "/fits")
            for i in range(len(cols["series"])):
                self.fits.append({k: v[i] for k, v in cols.items()})
        self.series = list(dict.fromkeys(self.table["series"][self.done]))
        # The fits by series (in grid order) and cost column (in COST_ORDER, then by name).
        series_order = list(dict.fromkeys(self.table["series"]))
        self.fits.sort(key=lambda fit: (
            series_order.index(fit["series"]) if fit["series"] in series_order else math.inf,
            COST_ORDER.index(fit["column"]) if fit["column"] in COST_ORDER else len(COST_ORDER),
            str(fit["column"])))

    def point(self, key):
        """The run of a point (mor_results.Run), or None if the file has none; read once."""
        if key not in self._points:
            try:
                self._points[key] = self.data.point(key)
            except mor_results.ResultsError:
                self._points[key] = None
        return self._points[key]

    def col(self, name):
        """A float column (NaN where missing or not numeric)."""
        values = self.table.get(name)
        if values is None or values.dtype == object:
            return np.full(self.rows, np.nan)
        return values.astype(float)

    def cost_columns(self):
        names = [n for n, v in self.table.items() if n.endswith("_s") and v.dtype.kind == "f"]
        known = [n for n in COST_ORDER if n in names]
        return known + sorted(n for n in names if n not in known)

    def fit(self, series, column):
        for fit in self.fits:
            if fit["series"] == series and fit["column"] == column:
                return fit
        return None

    def rows_of(self, series):
        """Indices of the done rows of a series, sorted by N."""
        rows = np.flatnonzero(self.done & (self.table["series"] == series))
        return rows[np.argsort(self.N[rows], kind="stable")]

    def tolerance_columns(self):
        """[(column, tolerance)] of the r_for_tol_<k> columns, by k."""
        out, k = [], 0
        while f"r_for_tol_{k}" in self.table:
            name = f"r_for_tol_{k}"
            tol = attr(self.data.column_attrs.get(name), "tolerance", None)
            if tol is None and k < len(self.tolerances):
                tol = self.tolerances[k]
            out.append((name, tol))
            k += 1
        return out

    def title(self):
        total, done = self.rows, int(self.done.sum())
        failed = sum(s.startswith("failed") for s in self.status)
        pending = total - done - failed
        counts = f"{done} of {total} points done"
        if failed:
            counts += f", {failed} failed"
        if pending:
            counts += f", {pending} pending"
        if not attr(self.provenance, "complete", 1):
            counts += " (sweep incomplete)"
        head = f"sweep {self.name}" + (f": {self.description}" if self.description else "")
        return f"{head}\n{counts}"


def positive(values):
    values = np.asarray(values, dtype=float)
    return np.where(values > 0, values, np.nan)


def cost_colour(column, others):
    if column in COST_COLOURS:
        return COST_COLOURS[column]
    return plt.get_cmap("Dark2")(others.index(column) % 8) if column in others else "grey"


def plot_cost_vs_N(sweep, out_dir, title):
    columns = sweep.cost_columns()
    others = [c for c in columns if c not in COST_COLOURS]
    step = [c for c in columns if c.endswith("_step_s")]
    whole = [c for c in columns if c not in step]
    fig, axes = plt.subplots(len(sweep.series), 2, figsize=(14, 1.2 + 3.9 * len(sweep.series)),
                             sharex=True, squeeze=False)
    for (ax_step, ax_whole), series in zip(axes, sweep.series):
        rows = sweep.rows_of(series)
        N = sweep.N[rows]
        distinct = len(set(N))
        fitted = False
        for ax, group in ((ax_step, step), (ax_whole, whole)):
            for column in group:
                y = positive(sweep.col(column)[rows])
                if not np.isfinite(y).any():
                    continue
                colour = cost_colour(column, others)
                fit = sweep.fit(series, column)
                style = "--" if column == "full_simulation_s" else "-"
                label = column
                if fit is not None and np.isfinite(fit["exponent"]):
                    label = f"{column} ~ N^{exponent(fit)}"
                    grid = np.geomspace(fit["N_min"], fit["N_max"], 50)
                    ax.loglog(grid, fit["coefficient"] * grid ** fit["exponent"], ls="-",
                              lw=6, alpha=0.25, color=colour, solid_capstyle="butt")
                    fitted = True
                ok = np.isfinite(y)
                ax.loglog(N[ok], y[ok], "o", ls=style, lw=0.8, ms=4, color=colour, label=label)
            ax.grid(alpha=0.3, which="both")
            if ax.lines:
                ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                          borderaxespad=0)
            else:
                ax.text(0.5, 0.5, "no data at the done points", transform=ax.transAxes,
                        ha="center", va="center", color="grey")
        if distinct < 2:
            fit_note = "single N: no fit"
        elif fitted:
            fit_note = f"wide pale lines: fits over N >= {sweep.fit_min_N:g}"
        else:
            fit_note = "no fit in /fits"
        ax_step.set_title(f"{series}: per-step costs ({fit_note})", fontsize="medium")
        ax_whole.set_title(f"{series}: whole stages", fontsize="medium")
        ax_step.set_ylabel("time per step (s)")
        ax_whole.set_ylabel("wall time (s)")
    for ax in axes[-1]:
        ax.set_xlabel("chain size N (masses)")
    fig.suptitle(f"{title}\ncost against N", fontsize="medium")
    save(fig, out_dir, "cost_vs_N.png")


def plot_speedup_vs_N(sweep, out_dir, title):
    speedup = sweep.col("speedup")
    r = sweep.col("r")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for series in sweep.series:
        rows = sweep.rows_of(series)
        y = positive(speedup[rows])
        ok = np.isfinite(y)
        if not ok.any():
            continue
        orders = sorted(set(int(v) for v in r[rows][ok] if np.isfinite(v)))
        order = ("" if not orders else f" (r = {orders[0]})" if len(orders) == 1
                 else f" (r = {orders[0]}..{orders[-1]})")
        ax.loglog(sweep.N[rows][ok], y[ok], "o-", lw=1.2, ms=4, label=series + order)
    if not ax.lines:
        plt.close(fig)
        note("no done point with a speed-up: speedup_vs_N.png not written")
        return
    ax.axhline(1, color="k", ls=":", lw=1, label="break-even")
    ax.set_xlabel("chain size N (masses)")
    ax.set_ylabel("speed-up per step (full / reduced)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_title(f"{title}\nspeed-up per time step of the reduced over the full model",
                 fontsize="medium")
    save(fig, out_dir, "speedup_vs_N.png")


def error_curve(sweep, key):
    """(r, relative L2 error, m) of /points/<key>/error_vs_r, or None."""
    run = sweep.point(key)
    g = run.error_vs_r if run is not None else None
    if g is None or g.r is None or g.relative_l2 is None:
        return None
    r, err = g.r.astype(float), g.relative_l2.astype(float)
    m = g.m.astype(float) if g.m is not None else np.zeros_like(r)
    if r.ndim != 1 or r.shape != err.shape or m.shape != r.shape:
        note(f"/points/{key}/error_vs_r: r, relative_l2 and m differ in shape, left out")
        return None
    return r, err, m


def plot_error_vs_r(sweep, out_dir, title):
    error, r, m = sweep.col("output_error"), sweep.col("r"), sweep.col("m")
    method = sweep.table.get("method", np.array(sweep.table["series"]))
    panels = []  # (method, {N: (rows, [(key, series, curve)])})
    for name in dict.fromkeys(method[sweep.done]):
        rows = np.flatnonzero(sweep.done & (method == name))
        by_N = {}
        for i in rows:
            points, curves = by_N.setdefault(sweep.N[i], ([], []))
            if np.isfinite(error[i]) and np.isfinite(r[i]):
                points.append(i)
            curve = error_curve(sweep, sweep.table["key"][i])
            if curve is not None:
                curves.append((sweep.table["key"][i], sweep.table["series"][i], curve))
        by_N = {N: v for N, v in sorted(by_N.items()) if v[0] or v[1]}
        if by_N:
            panels.append((name, by_N))
    if not panels:
        note("no done point with an output error: error_vs_r.png not written")
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels) + 1.5, 6.2),
                             squeeze=False)
    for ax, (name, by_N) in zip(axes[0], panels):
        colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, len(by_N)))
        several = len({s for _, curves in by_N.values() for _, s, _ in curves}) > 1
        handles = []
        for colour, (N, (points, curves)) in zip(colours, by_N.items()):
            for key, series, (cr, cerr, cm) in curves:
                deim = cm[np.isfinite(cm) & (cm > 0)]
                extra = "" if not deim.size else (
                    f", m = {int(deim.min())}" if deim.min() == deim.max()
                    else f", m = {int(deim.min())}..{int(deim.max())}")
                label = f"N = {N:g}" + (f", {series}" if several else "") + extra
                line, = ax.semilogy(cr, positive(cerr), "o-", lw=1.2, ms=3.5, color=colour,
                                    label=label)
                handles.append(line)
            if points:
                points = sorted(points, key=lambda i: r[i])
                ax.semilogy(r[points], positive(error[points]), "s", ms=9, mfc="none", mew=1.8,
                            color=colour)
                if not curves:
                    handles.append(Line2D([], [], marker="s", ls="none", ms=9, mfc="none",
                                          mew=1.8, color=colour, label=f"N = {N:g}"))
        style = [Line2D([], [], marker="s", ls="none", ms=9, mfc="none", mew=1.8, color="grey",
                        label="sweep point (r of the point)"),
                 Line2D([], [], marker="o", ls="-", ms=3.5, color="grey",
                        label="error_vs_r of the point (compare_orders)")]
        legend = ax.legend(handles=handles, fontsize="small", loc="upper left",
                           bbox_to_anchor=(1.01, 1.0), borderaxespad=0, title="chain size")
        ax.add_artist(legend)
        ax.legend(handles=style, fontsize="small", loc="lower left", bbox_to_anchor=(1.01, 0.0),
                  borderaxespad=0)
        deim = m[sweep.done & (method == name)]
        what = f"method {name}" + (" + DEIM" if np.nanmax(np.append(deim, 0)) > 0 else "")
        ax.set_title(what, fontsize="medium")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
        ax.set_xlabel("reduced order r")
        ax.set_ylabel("relative L2 output error")
        ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"{title}\noutput error of the reduced model against r on the test input",
                 fontsize="medium")
    save(fig, out_dir, "error_vs_r.png")


def curve_label(names):
    """One series by name; several alike by their study ("bt (3 series alike)")."""
    if len(names) == 1:
        return names[0]
    return f"{names[0].split(',')[0]} ({len(names)} series alike)"


def plot_r_for_tolerance(sweep, out_dir, title):
    columns = sweep.tolerance_columns()
    if not columns:
        note("no r_for_tol_<k> columns: r_for_tolerance.png not written")
        return
    fig, ax = plt.subplots(figsize=(10, 5.8))
    # Series whose curves coincide (the order axis of BT does not change the Gramians) are
    # drawn once, labelled with all their names.
    curves = []  # [names, {k: (N, y)}]
    for series in sweep.series:
        rows = sweep.rows_of(series)
        data = {}
        for k, (column, _) in enumerate(columns):
            y = positive(sweep.col(column)[rows])
            ok = np.isfinite(y)
            if ok.any():
                data[k] = (sweep.N[rows][ok], y[ok])
        same = next((c for c in curves if c[1].keys() == data.keys() and all(
            np.array_equal(c[1][k][0], data[k][0]) and np.array_equal(c[1][k][1], data[k][1])
            for k in data)), None)
        if same is not None:
            same[0].append(series)
        elif data:
            curves.append([[series], data])
    for s, (names, data) in enumerate(curves):
        for k, (x, y) in data.items():
            tol = columns[k][1]
            tol_text = f"tol {tol:g}" if tol is not None else f"tolerance {k}"
            ax.loglog(x, y, marker=TOL_MARKERS[k % len(TOL_MARKERS)],
                      ls=TOL_STYLES[k % len(TOL_STYLES)], lw=1.2, ms=5, color=f"C{s % 10}",
                      label=f"{curve_label(names)}, {tol_text}")
    if not ax.lines:
        plt.close(fig)
        note("r_for_tol_<k> are NaN at every done point: r_for_tolerance.png not written")
        return
    ax.set_xlabel("chain size N (masses)")
    ax.set_ylabel("order r the method's criterion needs")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_title(f"{title}\norder needed for each tolerance tol against N\nBT: 2 sum_(i>r) "
                 "sigma_i <= tol sigma_1;  POD: (discarded snapshot energy)^(1/2) <= tol",
                 fontsize="medium")
    save(fig, out_dir, "r_for_tolerance.png")


def exponent(fit, digits=2):
    """The fitted exponent rounded, without a sign on zero ("-0.00")."""
    return format(round(float(fit["exponent"]), digits) + 0.0, f".{digits}f")


# Singular values whose decay sets the order, by the dataset under /points/<key>/reduction.
DECAY_DATASETS = [("hsv", "Hankel singular values"),
                  ("empirical_singular_values", "empirical singular values"),
                  ("pod_singular_values", "POD singular values of the positions")]


def plot_singular_values(sweep, out_dir, title):
    method = sweep.table.get("method", np.array(sweep.table["series"]))
    panels = {}  # (method, what) -> [(N, key, values)]
    for i in np.flatnonzero(sweep.done):
        run = sweep.point(sweep.table["key"][i])
        if run is None or run.reduction is None:
            continue
        for name, what in DECAY_DATASETS:
            d = run.reduction.singular_values.get(name)
            if d is not None and d.ndim == 1 and len(d) > 0:
                values = d.astype(float)
                if values[0] > 0:
                    panels.setdefault((method[i], what), []).append(
                        (sweep.N[i], sweep.table["key"][i], values / values[0]))
                break
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels) + 1.5, 5.8),
                             squeeze=False)
    for ax, ((name, what), curves) in zip(axes[0], panels.items()):
        curves.sort(key=lambda c: c[0])
        Ns = sorted({c[0] for c in curves})
        colours = dict(zip(Ns, plt.get_cmap("viridis")(np.linspace(0, 0.9, len(Ns)))))
        shown = set()
        for N, key, values in curves:
            ax.semilogy(np.arange(1, len(values) + 1), positive(values), ".-", lw=1, ms=3,
                        color=colours[N], label=None if N in shown else f"N = {N:g}")
            shown.add(N)
        ax.set_xlabel("index i")
        ax.set_ylabel("s_i / s_1")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0, title="chain size")
        ax.set_title(f"method {name}: {what}", fontsize="medium")
    fig.suptitle(f"{title}\ndecay of the singular values that set the order",
                 fontsize="medium")
    save(fig, out_dir, "singular_values.png")


def n_range(fit):
    return f"{fit['N_min']:g}..{fit['N_max']:g}"


def print_fits(sweep):
    if not sweep.fits:
        print("no fits in /fits (a fit needs two distinct N >= fit_min_N"
              + (f" = {sweep.fit_min_N:g})" if np.isfinite(sweep.fit_min_N) else ")"))
        return
    rows = [(str(fit["series"]), str(fit["column"]), exponent(fit, 3), n_range(fit),
             str(fit.get("points", ""))) for fit in sweep.fits]
    head = ("series", "column", "exponent", "N range", "points")
    widths = [max(len(x) for x in column) for column in zip(head, *rows)]
    print(f"fitted exponents: cost ~ coefficient * N^exponent over the done points with "
          f"N >= {sweep.fit_min_N:g}")
    for row in (head, *rows):
        print("  ".join(x.ljust(w) if i < 2 or i == 3 else x.rjust(w)
                        for i, (x, w) in enumerate(zip(row, widths))).rstrip())


def number(value, fmt, scale=1.0):
    """value * scale in fmt; three-digit and larger values in full ("1430", not "1.43e+03")."""
    if not np.isfinite(value):
        return NOT_AVAILABLE
    v = value * scale
    if fmt == ".3g" and 100 <= abs(v) < 1e7:
        return f"{v:.0f}"
    return format(v, fmt)


def markdown_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def print_markdown(sweep):
    t = sweep.table
    cols = {name: sweep.col(name) for name in ("r", "output_error", "offline_s", "full_step_s",
                                               "reduced_step_s", "speedup", "peak_rss_mib")}
    print()
    print("| series | N | r | output error | offline (s) | full step (µs) | reduced step (µs) "
          "| speed-up | peak MiB | status |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for i in range(sweep.rows):
        cells = [markdown_cell(t["series"][i]), f"{int(t['N'][i])}",
                 number(cols["r"][i] if sweep.done[i] or cols["r"][i] > 0 else np.nan, ".0f"),
                 number(cols["output_error"][i], ".2e"),
                 number(cols["offline_s"][i], ".3g"), number(cols["full_step_s"][i], ".3g", 1e6),
                 number(cols["reduced_step_s"][i], ".3g", 1e6), number(cols["speedup"][i], ".3g"),
                 number(cols["peak_rss_mib"][i], ".0f"), markdown_cell(t["status"][i])]
        print("| " + " | ".join(cells) + " |")
    if sweep.fits:
        print()
        print(f"Fits cost ≈ c · N^e over the done points with N ≥ {sweep.fit_min_N:g}:")
        print()
        print("| series | column | exponent e | N range | points |")
        print("|---|---|--:|--:|--:|")
        for fit in sweep.fits:
            print(f"| {markdown_cell(fit['series'])} | {markdown_cell(fit['column'])} | "
                  f"{exponent(fit)} | {n_range(fit)} | {fit.get('points', '')} |")


def note_left_out(sweep, most=10):
    """Lists the points that are not done on stderr: each failed one with its message, the
    others (pending) by key, at most `most` of them."""
    others = []
    for i in np.flatnonzero(~sweep.done):
        if sweep.status[i].startswith("failed"):
            note(f"point {sweep.table['key'][i]} (N = {int(sweep.N[i])}) left out: "
                 f"{sweep.status[i]}")
        else:
            others.append(f"{sweep.table['key'][i]} ({sweep.status[i]})")
    if others:
        more = f", and {len(others) - most} more" if len(others) > most else ""
        note(f"{len(others)} point(s) not done left out: {', '.join(others[:most])}{more}")


def open_sweep(path):
    """The sweep file (a mor_results.Sweep), or exit 2 with a one-line message."""
    data = load_results(path)
    if not isinstance(data, mor_results.Sweep):
        kind = attr(data.provenance, "kind", None)
        fail(f"'{path}' is not a sweep file (root attribute kind = {kind!r}, "
             "expected 'sweep'; plot a `mor run` file with plot_results.py)")
    return data


def main():
    parser = argparse.ArgumentParser(description="Plot and summarise a sweep results file "
                                     "written by `mor sweep`.")
    parser.add_argument("sweep", type=Path, help="sweep results file (HDF5)")
    parser.add_argument("--out", type=Path, help="output directory "
                        "(default: <file stem>_plots next to the sweep file)")
    parser.add_argument("--markdown", action="store_true",
                        help="also print markdown tables of the sweep and of the fits")
    args = parser.parse_args()
    data = open_sweep(args.sweep)
    try:
        sweep = Sweep(data)
    except (OSError, KeyError, ValueError, TypeError) as error:
        fail(f"cannot read sweep file '{args.sweep}': {' '.join(str(error).split())}")
    note_left_out(sweep)
    out_dir = args.out if args.out else args.sweep.parent / f"{args.sweep.stem}_plots"
    if sweep.series:
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            fail(f"cannot create output directory '{out_dir}': {error}")
        title = sweep.title()
        plot_cost_vs_N(sweep, out_dir, title)
        plot_speedup_vs_N(sweep, out_dir, title)
        plot_error_vs_r(sweep, out_dir, title)
        plot_r_for_tolerance(sweep, out_dir, title)
        plot_singular_values(sweep, out_dir, title)
    else:
        note(f"no point is done ({sweep.rows} in the table): no plots written")
    print_fits(sweep)
    if args.markdown:
        print_markdown(sweep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
