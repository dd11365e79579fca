#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The method comparison on the chain (experiments/compare_chain_sweep.toml) in one figure:
relative output error against r, offline cost against r and online speed-up per step against r,
one line per study (linear chain dashed, nonlinear chain solid). BT and IRKA reduce the
first-order system to r states; SOBT, POD, empirical BT and differential balancing project the
second-order chain onto r positions (2 r states): the legend says which.

Usage: /usr/bin/python3 experiments/plot_compare.py results/compare_chain_sweep.h5
           [--out results/compare_chain.png] [--markdown]
Reads the sweep's /table (docs/sweeps.md); points not done are left out and named on stderr.
"""
import argparse
import math
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Studies whose r counts first-order states; the others project the second-order chain onto r
# positions (2 r states).
FIRST_ORDER_STUDIES = ("bt", "irka")


def text_column(table, name):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in table[name][()]]


def read_table(path):
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"plot_compare.py: cannot open '{path}' as HDF5: {e}")
    with f:
        if "table" not in f:
            sys.exit(f"plot_compare.py: '{path}' has no /table: not a sweep results file")
        t = f["table"]
        rows = {
            "study": text_column(t, "study"),
            "status": text_column(t, "status"),
            "r": [int(x) for x in t["r"][()]],
            "N": [int(x) for x in t["N"][()]],
        }
        for col in ("output_error", "offline_s", "speedup", "reduced_step_s", "full_step_s"):
            rows[col] = [float(x) for x in t[col][()]] if col in t else [math.nan] * len(rows["r"])
        k_n = {}
        if "points" in f:
            for key in f["points"]:
                model = f["points"][key].get("model")
                if model is not None and "k_n" in model.attrs:
                    k_n[key] = float(model.attrs["k_n"])
        rows["key"] = text_column(t, "key")
    return rows, k_n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep", help="results file of mor sweep experiments/compare_chain_sweep.toml")
    ap.add_argument("--out", default="", help="PNG to write (default: <sweep stem>.png)")
    ap.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    a = ap.parse_args()
    rows, k_n = read_table(a.sweep)
    studies = []
    for s in rows["study"]:
        if s not in studies:
            studies.append(s)
    series = {s: [] for s in studies}
    for i, s in enumerate(rows["study"]):
        if rows["status"][i] != "done":
            print(f"plot_compare.py: {rows['key'][i]}: {rows['status'][i]}", file=sys.stderr)
            continue
        series[s].append(i)
    if not any(series.values()):
        sys.exit(f"plot_compare.py: no point of '{a.sweep}' is done")

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    cmap = plt.get_cmap("tab10")
    for j, s in enumerate(studies):
        idx = sorted(series[s], key=lambda i: rows["r"][i])
        if not idx:
            continue
        nonlinear = any(k_n.get(rows["key"][i], 0.0) != 0.0 for i in idx)
        style = dict(color=cmap(j % 10), marker="o", ms=4,
                     ls="-" if nonlinear else "--",
                     label=f"{s} ({'k_n = 2' if nonlinear else 'k_n = 0'}, "
                     f"{'r' if s in FIRST_ORDER_STUDIES else '2 r'} states)")
        r = [rows["r"][i] for i in idx]
        for ax, col in zip(axes, ("output_error", "offline_s", "speedup")):
            ax.plot(r, [rows[col][i] for i in idx], **style)
    n = sorted({rows["N"][i] for idx in series.values() for i in idx})
    axes[0].set(yscale="log", xlabel="r", ylabel="relative L2 output error",
                title=f"error against r (N = {', '.join(map(str, n))})")
    axes[1].set(yscale="log", xlabel="r", ylabel="offline seconds", title="offline cost")
    axes[2].set(yscale="log", xlabel="r", ylabel="full step / reduced step",
                title="online speed-up per step")
    axes[2].axhline(1.0, color="grey", lw=0.8)
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out = a.out or a.sweep.rsplit(".", 1)[0] + ".png"
    fig.savefig(out, dpi=110)
    print(out)
    if a.markdown:
        print("| study | k_n | r | relative output error | offline s | speed-up |")
        print("|---|---|---|---|---|---|")
        for s in studies:
            for i in sorted(series[s], key=lambda i: rows["r"][i]):
                print(f"| {s} | {k_n.get(rows['key'][i], float('nan')):g} | {rows['r'][i]} | "
                      f"{rows['output_error'][i]:.2e} | {rows['offline_s'][i]:.3g} | "
                      f"{rows['speedup'][i]:.2f} |")


if __name__ == "__main__":
    main()
