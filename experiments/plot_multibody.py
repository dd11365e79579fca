#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plots and the animation of a multibody results file (a file with /benchmark), called by
plot_results.py. Writes into the output directory:
  benchmark_outputs.png  the benchmark's outputs y(t) and, where the exact solution is known
                         (A01), |y - y_exact| on a log axis;
  energy.png             the energy balance E(t) - E(0) - W(t) (W: the work of actuators and
                         dampers) and the constraint residual;
  linear.png             the linearised and the nonlinear model's responses to the same small
                         input (deviations from the operating point) and their difference;
  reduced_outputs.png    the full and the reduced linear model and their difference;
  modes.png              modal truncation: omega_i and the dominance of every mode, kept ones
                         marked;
  animation.gif          the bodies' motion (matplotlib's Pillow writer), at output.animation_fps.
Each function takes the run as read by python/mor_results.py (a MultibodyRun).
"""
import numpy as np
import matplotlib.pyplot as plt
from matplotlib import animation


def _names(attrs, key, count):
    names = [n for n in str(attrs.get(key, "")).split(",") if n]
    return names if len(names) == count else [f"y{k + 1}" for k in range(count)]


def plot_benchmark(run, out_dir, title, save):
    b = run.benchmark
    t, y = run.benchmark_t, run.benchmark_y
    names = _names(run.model, "output_names", y.shape[1])
    exact = run.y_exact is not None
    fig, axes = plt.subplots(2 if exact else 1, 1, sharex=True, figsize=(9, 6 if exact else 4),
                             squeeze=False)
    ax = axes[0, 0]
    for k in range(y.shape[1]):
        ax.plot(t, y[:, k], lw=1.4, label=names[k])
    ax.set_ylabel("output")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    cpu = b.get("cpu_seconds", float("nan"))
    ax.set_title(f"{title}\nCVODE {b.get('method', '?')}, rtol {b.get('rtol'):g}: "
                 f"{int(b.get('steps', 0))} steps, CPU {cpu:.3g} s", fontsize="medium")
    if exact:
        e = np.abs(y - run.y_exact)
        ax_e = axes[1, 0]
        for k in range(y.shape[1]):
            ax_e.semilogy(t, np.where(e[:, k] > 0, e[:, k], np.nan), lw=1,
                          label=f"|{names[k]} - exact|")
        ax_e.axhline(1e-3, color="k", ls=":", lw=1, label="benchmark's high-precision level")
        ax_e.set_ylabel("error (m)")
        ax_e.grid(alpha=0.3, which="both")
        ax_e.legend(fontsize="small")
    axes[-1, 0].set_xlabel("time t (s)")
    save(fig, out_dir, "benchmark_outputs.png")


def plot_energy(run, out_dir, title, save):
    t = run.benchmark_t
    bal = np.abs(run.energy_balance)
    res = run.constraint_residual
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.semilogy(t, np.where(bal > 0, bal, np.nan), lw=1, label="|E - E(0) - W| (J)")
    if np.any(res > 0):
        ax.semilogy(t, np.where(res > 0, res, np.nan), lw=1, label="constraint residual (m)")
    ax.set_xlabel("time t (s)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    ax.set_title(f"{title}\nenergy bookkeeping, E(0) = {run.benchmark.get('energy_initial', 0):.6g} J",
                 fontsize="medium")
    save(fig, out_dir, "energy.png")


def _overlay(t, ya, yb, names, label_a, label_b, label_diff, ylabel):
    """Two panels over t: ya and yb per output (solid, dashed), and ya - yb below."""
    fig, (ax, ax_e) = plt.subplots(2, 1, sharex=True, figsize=(9, 6),
                                   gridspec_kw={"height_ratios": [2, 1]})
    for k in range(ya.shape[1]):
        ax.plot(t, ya[:, k], lw=1.5, label=f"{names[k]} {label_a}")
        ax.plot(t, yb[:, k], "--", lw=1.2, label=f"{names[k]} {label_b}")
        ax_e.plot(t, ya[:, k] - yb[:, k], lw=1, label=f"{names[k]}: {label_diff}")
    ax.set_ylabel(ylabel)
    ax_e.set_ylabel("difference")
    ax_e.set_xlabel("time t (s)")
    for a in (ax, ax_e):
        a.grid(alpha=0.3)
        a.legend(fontsize="small")
    return fig, ax


def plot_linear(run, out_dir, title, save):
    g = run.linear
    t, yl = g.response_t, g.response_y
    yn = g.nonlinear_y
    fig, ax = _overlay(t, yn, yl, _names(g.attrs, "output_names", yl.shape[1]), "nonlinear",
                       "linearised", "nonlinear - linear", "deviation from the operating point")
    rel = g.attrs.get("relative_difference", float("nan"))
    ratio = g.attrs.get("difference_ratio", float("nan"))
    ax.set_title(f"{title}\ninput {g.attrs.get('input', '?')}\nrelative difference {rel:.3g}, "
                 f"{ratio:.2f}x smaller at half the amplitude", fontsize="medium")
    save(fig, out_dir, "linear.png")


def plot_reduced(run, out_dir, title, save):
    t, y = run.linear.response_t, run.linear.response_y
    yr = run.reduced_y
    red = run.reduction.attrs if run.reduction else {}
    r = red.get("r", "?")
    fig, ax = _overlay(t, y, yr, _names(run.linear.attrs, "output_names", y.shape[1]),
                       f"linearised, n = {run.linear.matrices['M'].shape[0]}", f"reduced, r = {r}",
                       "full - reduced", "output")
    rel = run.reduced.get("relative_output_error", float("nan"))
    ax.set_title(f"{title}\n{red.get('method', '?')}: relative output error "
                 f"{rel:.3g}", fontsize="medium")
    save(fig, out_dir, "reduced_outputs.png")


def plot_modes(run, out_dir, title, save):
    red = run.reduction
    w, mu = red.omega, red.dominance
    kept = np.atleast_1d(red.attrs.get("kept", []))
    fig, ax = plt.subplots(figsize=(9, 4))
    finite = np.isfinite(mu) & (mu > 0)
    ax.loglog(np.maximum(w[finite], 1e-16), mu[finite], "o", ms=5, mfc="none",
              label="elastic modes")
    sel = [k for k in kept if finite[k]]
    ax.loglog(np.maximum(w[sel], 1e-16), mu[sel], "o", ms=5, label="kept")
    rigid = int(np.sum(~np.isfinite(mu)))
    ax.set_xlabel("undamped frequency omega_i (rad/s)")
    ax.set_ylabel("dominance (static modal gain)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
    ax.set_title(f"{title}\nmodal truncation to r = {red.attrs.get('r', '?')}; "
                 f"{rigid} rigid-body mode(s) kept first", fontsize="medium")
    save(fig, out_dir, "modes.png")


def make_animation(run, out_dir, title):
    """animation.gif: the segments between the bodies' points, resampled at the file's fps."""
    t = run.benchmark_t
    P = run.animation_points.reshape(len(t), -1, 3)  # (time, point, xyz), column-major 3 x n
    segments = run.animation_segments.astype(int)
    fps = float(run.animation.get("fps", 20.0))
    frames = np.arange(t[0], t[-1] + 0.5 / fps, 1.0 / fps)
    idx = np.clip(np.searchsorted(t, frames), 0, len(t) - 1)
    planar = np.allclose(P[:, :, 2], 0.0)
    lo, hi = P.reshape(-1, 3).min(axis=0), P.reshape(-1, 3).max(axis=0)
    centre, half = 0.5 * (lo + hi), 0.55 * np.max(hi - lo) + 1e-9
    fig = plt.figure(figsize=(5, 5))
    if planar:
        ax = fig.add_subplot(111)
        ax.set_aspect("equal")
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.grid(alpha=0.3)
        lines = [ax.plot([], [], "o-", lw=2, ms=4)[0] for _ in segments]
    else:
        ax = fig.add_subplot(111, projection="3d")
        for setter, c in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), centre):
            setter(c - half, c + half)
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_zlabel("z")
        lines = [ax.plot([], [], [], "o-", lw=2, ms=3)[0] for _ in segments]
    label = ax.set_title("", fontsize="small")

    def draw(k):
        X = P[idx[k]]
        for line, (i, j) in zip(lines, segments):
            if planar:
                line.set_data([X[i, 0], X[j, 0]], [X[i, 1], X[j, 1]])
            else:
                line.set_data([X[i, 0], X[j, 0]], [X[i, 1], X[j, 1]])
                line.set_3d_properties([X[i, 2], X[j, 2]])
        label.set_text(f"{title.splitlines()[0]}\nt = {frames[k]:.2f} s")
        return lines

    anim = animation.FuncAnimation(fig, draw, frames=len(frames), blit=False)
    path = out_dir / "animation.gif"
    anim.save(path, writer=animation.PillowWriter(fps=fps), dpi=80)
    plt.close(fig)
    print(path)


def plot(run, out_dir, save, plot_hsv, plot_bode):
    """Every plot of a mor_results.MultibodyRun; plot_hsv and plot_bode are plot_results.py's."""
    title = f"{run.provenance.get('experiment_name', '')}: {run.model.get('title', '?')}"
    plot_benchmark(run, out_dir, title, save)
    plot_energy(run, out_dir, title, save)
    if run.linear is not None and run.linear.nonlinear_y is not None:
        plot_linear(run, out_dir, title, save)
    if run.reduced_y is not None:
        plot_reduced(run, out_dir, title, save)
    if run.reduction is not None and "hsv" in run.reduction.singular_values:
        plot_hsv(run, out_dir, title)
    if run.reduction is not None and run.reduction.dominance is not None:
        plot_modes(run, out_dir, title, save)
    if run.analysis is not None and run.analysis.omega is not None:
        plot_bode(run, out_dir, title)
    if run.animation_points is not None and run.animation.get("format", "gif") == "gif":
        make_animation(run, out_dir, title)
