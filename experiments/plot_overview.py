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
missing or foreign file) exit 1 with a message. Reads the file through python/mor_results.py;
uses Debian's matplotlib, h5py and numpy.
"""
import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import mor_results  # noqa: E402

SINGULAR_VALUES = [  # (mor_results singular_values name, label), the first present is shown
    ("hsv", "Hankel singular values"),
    ("pod_singular_values", "POD singular values"),
    ("empirical_singular_values", "empirical singular values"),
]


def fail(message):
    print(f"plot_overview.py: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    try:
        run = mor_results.load(args.results)
    except mor_results.ResultsError as e:
        fail(str(e))
    if isinstance(run, mor_results.MultibodyRun) and run.run is not None:
        run = run.run  # the driven run and its reduced model, as every run has them
    if not isinstance(run, mor_results.Run) or run.y is None:
        fail(f"{args.results} has no /outputs/t and /outputs/y: not a results file of mor run")
    t, y, yr = run.t, run.y, run.reduced_y
    if yr is None:
        print(f"plot_overview.py: {args.results} has no reduced model; no overview",
              file=sys.stderr)
        return
    red = run.reduction.attrs if run.reduction is not None else {}
    method = str(red.get("method", "?"))
    r = int(red.get("r", yr.shape[1] if yr.ndim > 1 else 0))
    name = str(run.provenance.get("name", args.results.stem))
    curve = None
    if run.error_vs_r is not None:
        curve = (run.error_vs_r.r, run.error_vs_r.relative_l2)
    sv = None
    values_of = run.reduction.singular_values if run.reduction is not None else {}
    for key, label in SINGULAR_VALUES:
        values = values_of.get(key)
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
