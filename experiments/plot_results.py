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
  reduced_outputs.png  y(t) of the full and the reduced model and the error y - y_r.

    /usr/bin/python3 experiments/plot_results.py --compare A.h5 B.h5 ... --out DIR

overlays the error against r of several results files (one curve per file, labelled with its
method and nonlinear treatment) in DIR/error_vs_r.png, to compare methods on the same test.
A multibody results file (with /benchmark) gets the plots and the animation of
plot_multibody.py instead.
Prints the path of each written PNG on stdout. Exits with 2 and a one-line message on stderr
if the file cannot be read or is not a "mor-results" file.

Needs Debian's python3-matplotlib, python3-h5py and python3-numpy (hence /usr/bin/python3).
"""
import argparse
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

MAX_TIMES, MAX_MASSES = 1000, 2000  # largest heat map read from a snapshot dataset
DPI = 120


PROG = Path(sys.argv[0]).name  # plot_sweep.py imports this module: its messages say so


def fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


def attr(obj, name, default="?"):
    """Attribute `name` of an HDF5 object (str for strings), or `default` if it is missing."""
    if obj is None or name not in obj.attrs:
        return default
    value = obj.attrs[name]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return value.item()
    return value


def title_of(f):
    """Figure title from the model, simulation and input attributes."""
    model, sim, inp = f.get("model"), f.get("simulation"), f.get("input")
    dt = attr(sim, "dt")
    dt = f"{dt:g}" if isinstance(dt, (float, int, np.floating, np.integer)) else dt
    name = attr(f, "experiment_name", "")
    head = f"{name}: " if name else ""
    return (f"{head}{attr(model, 'type')}, N = {attr(model, 'N')}, "
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


def plot_outputs(f, out_dir, title):
    t = f["outputs/t"][:, 0]
    u, y = f["outputs/u"][()], f["outputs/y"][()]
    model = f.get("model")
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


def active_masses(dset):
    """Index range [lo, hi) of the masses that move: a chain driven at one end for a time T
    only moves where its waves reach, which at large N is a small part of it. Reads at most
    ACTIVE_SAMPLES whole rows (the last one included), evenly spread over time."""
    n_snap, n = dset.shape
    rows = sorted(set(np.linspace(0, n_snap - 1, min(ACTIVE_SAMPLES, n_snap)).round().astype(int)))
    envelope = np.zeros(n)
    for r in rows:
        envelope = np.maximum(envelope, np.nan_to_num(np.abs(dset[r, :]), nan=np.inf))
    peak = envelope.max()
    if not peak > 0:
        return 0, n
    moving = np.flatnonzero(envelope > ACTIVE_FRACTION * peak)
    pad = max(2, (moving[-1] - moving[0]) // 20)
    lo, hi = max(0, moving[0] - pad), min(n, moving[-1] + 1 + pad)
    return (lo, hi) if hi - lo < 0.8 * n else (0, n)


def plot_snapshots_p(f, out_dir, title):
    dset = f["snapshots/p"]
    n_snap, n = dset.shape
    if n_snap == 0 or n == 0:
        print("plot_results.py: /snapshots/p is empty, skipped", file=sys.stderr)
        return
    lo, hi = active_masses(dset)
    rs, cs = math.ceil(n_snap / MAX_TIMES), math.ceil((hi - lo) / MAX_MASSES)
    p = dset[::rs, lo:hi:cs]  # strided read: never the whole dataset
    t = f["snapshots/t"][::rs, 0] if "snapshots/t" in f else np.arange(0, n_snap, rs, float)
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


def plot_energy(f, out_dir, title):
    energy = f["snapshots/energy"][:, 0]
    t = f["snapshots/t"][:, 0] if "snapshots/t" in f else np.arange(len(energy), dtype=float)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.plot(t, energy, lw=1)
    ax.set_xlabel("time t")
    ax.set_ylabel("total mechanical energy")
    ax.grid(alpha=0.3)
    ax.set_title(f"{title}\nenergy")
    save(fig, out_dir, "energy.png")


def plot_hsv(f, out_dir, title):
    red = f["reduction"]
    hsv = red["hsv"][()]
    r = int(attr(red, "r", 0))
    fig, ax = plt.subplots(figsize=(9, 5))
    i = np.arange(1, len(hsv) + 1)
    ax.semilogy(i, hsv / hsv[0], ".-", lw=1, ms=3, label="Hankel singular values sigma_i / sigma_1")
    if "sv" in red:
        sv = red["sv"][()]
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


def plot_pod_singular_values(f, out_dir, title):
    red = f["reduction"]
    fig, ax = plt.subplots(figsize=(9, 5))
    decay(ax, red["pod_singular_values"][()], "positions q: s_i / s_1")
    if "force_singular_values" in red:
        decay(ax, red["force_singular_values"][()], "cubic force g(q): s_i / s_1")
    m = int(attr(red, "m", 0))
    if m > 0:
        ax.axvline(m, color="C1", ls=":", lw=1, label=f"DEIM samples m = {m}")
    finish_decay(ax, red, "s_i / s_1")
    note = (f"{attr(red, 'training_snapshots')} training snapshots, captured energy "
            f"{attr(red, 'captured_energy', 0.0):.10f}, nonlinear: {attr(red, 'nonlinear')}")
    ax.set_title(f"{title}\nPOD: {note}", fontsize="medium")
    save(fig, out_dir, "pod_sv.png")


def plot_empirical_singular_values(f, out_dir, title):
    red = f["reduction"]
    fig, ax = plt.subplots(figsize=(9, 5))
    decay(ax, red["empirical_singular_values"][()],
          "empirical (position) singular values sigma_i / sigma_1")
    if "subspace_singular_values" in red:
        decay(ax, red["subspace_singular_values"][()],
              "impulse-response positions: s_i / s_1 (subspace POD)")
    finish_decay(ax, red, "normalised singular value")
    note = (f"{attr(red, 'simulations')} simulations, subspace d = "
            f"{attr(red, 'subspace_dimension')}, 2 sum_(i>r) sigma_i = "
            f"{attr(red, 'discarded_sum', 0.0):.3g}, nonlinear: {attr(red, 'nonlinear')}")
    ax.set_title(f"{title}\nempirical balancing: {note}", fontsize="medium")
    save(fig, out_dir, "empirical_sv.png")


def error_curve(f):
    """(r, relative L2 error, reduced step seconds, label) of /error_vs_r."""
    g = f["error_vs_r"]
    red = f.get("reduction")
    label = f"{attr(g, 'method')} ({attr(red, 'nonlinear')}"
    m = g["m"][()]
    if len(m) and m[-1] > 0:
        label += f", m = {int(m[0])}..{int(m[-1])}" if m[0] != m[-1] else f", m = {int(m[0])}"
    return g["r"][()], g["relative_l2"][()], g["reduced_step_s"][()], label + ")"


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


def open_results(path, what="results file"):
    """The opened results file, or exit 2 with a one-line message."""
    if not path.is_file():
        fail(f"cannot read {what} '{path}': " +
             ("not a regular file" if path.exists() else "no such file"))
    try:
        f = h5py.File(path, "r")
    except (OSError, ValueError) as error:
        fail(f"cannot read {what} '{path}': {' '.join(str(error).split())}")
    if attr(f, "format", None) != "mor-results":
        fail(f"'{path}' is not a mor results file (root attribute format = "
             f"{attr(f, 'format', None)!r}, expected 'mor-results')")
    version = attr(f, "format_version", 1)
    if version != 1:
        print(f"{PROG}: warning: format_version {version!r} "
              "(this script knows 1); plotting anyway", file=sys.stderr)
    return f


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
        with open_results(path) as f:
            if "error_vs_r" not in f:
                fail(f"'{path}' has no /error_vs_r (run it with reduction.compare_orders)")
            curves.append(error_curve(f))
            titles.append(title_of(f).split(": ", 1)[-1])  # without the experiment name
    make_dir(out_dir)
    common = titles[0] if all(t == titles[0] for t in titles) else f"{len(paths)} results files"
    plot_error_vs_r(curves, out_dir, common)
    return 0


def plot_bode(f, out_dir, title):
    a = f["analysis"]
    w = a["omega"][()]
    fig, ax = plt.subplots(figsize=(9, 5))
    r = attr(f.get("reduction"), "r", "?")
    ax.loglog(w, a["sigma_full"][()], lw=1.5, label="full model")
    ax.loglog(w, a["sigma_reduced"][()], "--", lw=1.2, label=f"reduced model, r = {r}")
    err = a["sigma_error"][()]
    ax.loglog(w, np.where(err > 0, err, np.nan), lw=1, label="error sigma_max(G - G_r)")
    hinf = attr(a, "hinf_error", None)
    bound = attr(f.get("reduction"), "error_bound", None)
    notes = []
    if hinf is not None:
        ax.axhline(hinf, color="C2", ls=":", lw=1)
        notes.append(f"||G - G_r||_Hinf = {hinf:.3g} ({attr(a, 'hinf_method')})")
    if bound is not None and attr(f.get("reduction"), "method") == "bt":
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


def plot_reduced_outputs(f, out_dir, title):
    t = f["outputs/t"][:, 0]
    y, yr, e = f["outputs/y"][()], f["reduced/outputs/y"][()], f["error/y"][()]
    r = attr(f.get("reduction"), "r", "?")
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
    rel = attr(f.get("error"), "relative_l2", None)
    sub = f"; relative L2 output error {rel:.3g}" if rel is not None else ""
    ax_y.set_title(f"{title}\nfull against reduced{sub}", fontsize="medium")
    save(fig, out_dir, "reduced_outputs.png")


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
    with open_results(path) as f:
        if "benchmark" in f:  # a multibody benchmark (experiments/plot_multibody.py)
            import plot_multibody
            out_dir = args.out if args.out else path.parent / f"{path.stem}_plots"
            make_dir(out_dir)
            plot_multibody.plot(f, out_dir, save, plot_hsv, plot_bode)
            return 0
        for name in ("outputs/t", "outputs/u", "outputs/y"):
            if name not in f:
                fail(f"'{path}' has no dataset /{name}")
        out_dir = args.out if args.out else path.parent / f"{path.stem}_plots"
        make_dir(out_dir)
        title = title_of(f)
        plot_outputs(f, out_dir, title)
        if "snapshots/p" in f:
            plot_snapshots_p(f, out_dir, title)
        if "snapshots/energy" in f:
            plot_energy(f, out_dir, title)
        if "reduction/hsv" in f:
            plot_hsv(f, out_dir, title)
        if "reduction/pod_singular_values" in f:
            plot_pod_singular_values(f, out_dir, title)
        if "reduction/empirical_singular_values" in f:
            plot_empirical_singular_values(f, out_dir, title)
        if "error_vs_r" in f:
            plot_error_vs_r([error_curve(f)], out_dir, title)
        if "analysis/omega" in f:
            plot_bode(f, out_dir, title)
        if "reduced/outputs/y" in f and "error/y" in f:
            plot_reduced_outputs(f, out_dir, title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
