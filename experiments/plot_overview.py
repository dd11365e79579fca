#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""One overview figure of a reduction run: what `mor run` shows first.

Usage: /usr/bin/python3 experiments/plot_overview.py RESULTS.h5 [--out DIR]

Writes DIR/overview.png (default DIR: <file stem>_plots next to RESULTS.h5) with three panels:
  1. the first output of the full and the reduced model over time (the test input);
  2. the pointwise error |y - y_r| of every output over time, on a log scale;
  3. the decay that chose r: the relative output error against r (/error_vs_r, when the run
     compared several orders) and the normalised singular values of the method (Hankel singular
     values, POD or empirical ones), with the order used marked.
A results file without a reduced model gets no overview (exit 0, a note on stderr). Errors (a
missing or foreign file) exit 1 with a message. Uses Debian's matplotlib and h5py.
"""
import argparse
import sys
from pathlib import Path

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

SINGULAR_VALUES = [  # (dataset, label), the first present is shown
    ("/reduction/hsv", "Hankel singular values"),
    ("/reduction/pod_singular_values", "POD singular values"),
    ("/reduction/empirical_singular_values", "empirical singular values"),
]


def fail(message):
    print(f"plot_overview.py: {message}", file=sys.stderr)
    sys.exit(1)


def dataset(f, path):
    obj = f.get(path)
    return np.asarray(obj) if isinstance(obj, h5py.Dataset) else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    try:
        f = h5py.File(args.results, "r")
    except OSError as e:
        fail(f"cannot open {args.results}: {e}")
    with f:
        t = dataset(f, "/outputs/t")
        y = dataset(f, "/outputs/y")
        yr = dataset(f, "/reduced/outputs/y")
        if t is None or y is None:
            fail(f"{args.results} has no /outputs/t and /outputs/y: not a results file of mor run")
        if yr is None:
            print(f"plot_overview.py: {args.results} has no reduced model; no overview",
                  file=sys.stderr)
            return
        t = t.reshape(-1)
        red = f["/reduction"].attrs if "/reduction" in f else {}
        method = red.get("method", "?")
        method = method.decode() if isinstance(method, bytes) else str(method)
        r = int(red.get("r", yr.shape[1] if yr.ndim > 1 else 0))
        name = f.attrs.get("name", args.results.stem)
        name = name.decode() if isinstance(name, bytes) else str(name)
        curve = None
        if "/error_vs_r" in f:
            curve = (dataset(f, "/error_vs_r/r"), dataset(f, "/error_vs_r/relative_l2"))
        sv = None
        for path, label in SINGULAR_VALUES:
            values = dataset(f, path)
            if values is not None and values.size > 0:
                sv = (values.reshape(-1), label)
                break

    out = args.out or args.results.parent / f"{args.results.stem}_plots"
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    ax[0].plot(t, y[:, 0], color="k", lw=1.6, label="full")
    ax[0].plot(t, yr[:, 0], color="tab:orange", lw=1.0, ls="--", label=f"reduced, r = {r}")
    ax[0].set_xlabel("t (s)")
    ax[0].set_ylabel("y_1")
    ax[0].set_title("output, full and reduced")
    ax[0].legend(loc="lower left", fontsize="small")

    err = np.abs(y - yr)
    # Exact zeros (the initial state) would stretch the log axis to 1e-300: floor at the
    # rounding level of the outputs or the smallest nonzero error, whichever is larger.
    positive = err[err > 0]
    floor = max(positive.min() if positive.size else 1.0,
                1e-16 * max(float(np.abs(y).max()), np.finfo(float).tiny))
    for k in range(err.shape[1]):
        ax[1].semilogy(t, np.maximum(err[:, k], floor), lw=0.9,
                       label=f"|y_{k + 1} - y_r,{k + 1}|")
    ax[1].set_ylim(bottom=floor)
    ax[1].set_xlabel("t (s)")
    ax[1].set_title("output error over time")
    if err.shape[1] <= 6:
        ax[1].legend()

    if curve is not None and curve[0] is not None and curve[1] is not None:
        order = np.argsort(curve[0])
        ax[2].semilogy(curve[0][order], curve[1][order], "o-", color="tab:blue",
                       label="relative output error")
    if sv is not None:
        values, label = sv
        k = np.arange(1, values.size + 1)
        ax[2].semilogy(k, values / values[0], ".", ms=3, color="tab:gray", label=f"{label} / s_1")
    if r > 0:
        ax[2].axvline(r, color="tab:orange", ls=":", label=f"r = {r}")
    ax[2].set_xlabel("r")
    ax[2].set_title("error and singular value decay")
    ax[2].legend()
    fig.suptitle(f"{name}: {method}, r = {r}")
    fig.tight_layout()
    path = out / "overview.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(path)


if __name__ == "__main__":
    main()
