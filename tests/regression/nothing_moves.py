#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nothing moves: the figures of a set of small experiments, recorded once at a known commit
(tests/regression/reference.json), against what the built `mor` computes now. It guards the
restructuring of the run pipeline (issue 42), whose constraint is that no result changes:

  kind      what                                         tolerance (ref: the recorded value)
  output    y, y_r and the other time series             ||x - ref||_F <= 1e-12 ||ref||_F
  spectrum  singular values of every method              max |x - ref| <= 1e-12 max |ref|
  count     orders, iteration counts, DEIM/ECSW points   equal
  figure    errors, norms, bounds (differences of        |x - ref| <= 1e-6 |ref|, or both below
            nearly equal quantities)                     1e-300 in magnitude

The time series are stored every `stride`-th row (at most ROWS rows): any change of an integrator
or of a reduced model shows at every row. Timings, provenance and text are not compared.

  nothing_moves.py record --mor build/bin/mor [--only NAME ...]   # writes reference.json
  nothing_moves.py check  --mor build/bin/mor [--only NAME ...]   # exit 1 on any difference

A recorded figure the new run lacks is a difference; a new figure is not (the layout may grow).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

SOURCE = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).resolve().parent / "reference.json"
ROWS = 300
TOL = {"output": 1e-12, "spectrum": 1e-12, "figure": 1e-6}

# name, experiment file (experiments/), --set overrides that keep it small and quick.
CASES = [
    ("default", "default.toml", ["model.N=1000"]),
    ("chain_simulation", "chain_simulation.toml", ["model.N=200"]),
    ("bt_chain", "bt_chain.toml", ["model.N=300"]),
    ("bt_chain_light", "bt_chain_light.toml", []),
    ("sobt_chain", "sobt_chain.toml", ["model.N=300"]),
    ("compare_chain", "compare_chain.toml", []),
    ("compare_chain_linear", "compare_chain_linear.toml", []),
    ("pod_deim_chain", "pod_deim_chain.toml", ["model.N=200"]),
    ("empirical_bt_chain", "empirical_bt_chain.toml", ["model.N=200"]),
    ("differential_balancing_chain", "differential_balancing_chain.toml",
     ["model.N=12", "reduction.compare_orders=[2, 4]"]),
    ("gd_lattice", "gd_lattice.toml",
     ["model.nx=3", "model.outputs=[[3, 3]]", "reduction.compare_orders=[2, 6]"]),
    ("pod_deim_lattice", "pod_deim_lattice.toml",
     ["model.nx=8", "model.outputs=[[8, 8], [4, 4]]", "reduction.order=20"]),
    ("cdplayer_bt", "cdplayer_bt.toml", []),
    ("rail_bt", "rail_bt.toml", []),
    ("rail_pod", "rail_pod.toml", []),
    ("irka_rail", "irka_rail.toml", []),
    ("a01_pendulum", "a01_pendulum.toml", []),
    ("a04_bricard", "a04_bricard.toml", []),
    ("a05_flyball", "a05_flyball.toml", []),
    ("robot", "robot.toml", []),
    ("flyball_linear_bt", "flyball_linear_bt.toml", []),
    ("flyball_linear_pod", "flyball_linear_pod.toml", []),
    ("multibody_linear_modal", "multibody_linear_modal.toml", []),
]

OUTPUTS = {"/outputs/y", "/reduced/outputs/y", "/reduced/y", "/benchmark/y", "/benchmark/x",
           "/linear/response/y", "/linear/nonlinear_response/y", "/analysis/sigma_full",
           "/analysis/sigma_reduced", "/analysis/sigma_reduced_dense", "/analysis/omega",
           "/linear/poles_real", "/linear/poles_imag"}
SPECTRA = {"hsv", "sv", "pod_singular_values", "force_singular_values",
           "empirical_singular_values", "subspace_singular_values", "hankel_singular_values",
           "position_singular_values", "omega", "dominance", "error_bound"}
COUNTS = {"/reduction/deim_masses", "/reduction/ecsw_elements"}
# Figures that are differences of nearly equal quantities, or depend on them.
FIGURES = {"/analysis/sigma_error", "/error_vs_r/relative_l2", "/error_vs_r/max_abs",
           "/reduction/ecsw_weights", "/reduction/shifts", "/benchmark/energy_balance",
           "/benchmark/constraint_residual"}
# Attribute names that are timings, sizes of this machine, or provenance.
NOT_COMPARED = ("_s", "seconds", "rss", "mib", "threads", "created", "host", "commit", "version",
                "command_line", "evaluation_error", "data_sensitivity", "relative_accuracy",
                "speedup", "ns_per_step", "repeats")


def compared_attribute(name):
    return not any(name.endswith(s) if s == "_s" else s in name for s in NOT_COMPARED)


def kind_of_dataset(path):
    if path in OUTPUTS:
        return "output"
    if path in COUNTS:
        return "count"
    if path in FIGURES:
        return "figure"
    if path.startswith("/reduction/") and path.rsplit("/", 1)[1] in SPECTRA:
        return "spectrum"
    if path.startswith("/reduction/") and path.endswith("/iterations"):
        return "count"
    return None


def extract(path):
    """The compared figures of one results file: {key: [kind, value]}."""
    figures = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            p = "/" + name
            if p.startswith("/timings") or p.startswith("/snapshots") or p.startswith("/animation"):
                return
            for a, v in obj.attrs.items():
                if not compared_attribute(a) or p.startswith("/simulation"):
                    continue
                v = np.asarray(v)
                if v.dtype.kind in "iu" and v.size == 1:
                    figures[f"{p}@{a}"] = ["count", int(v)]
                elif v.dtype.kind == "f" and v.size == 1:
                    figures[f"{p}@{a}"] = ["figure", float(v)]
            if isinstance(obj, h5py.Dataset):
                kind = kind_of_dataset(p)
                if p.startswith("/reduction/history/"):
                    figures[f"{p}#rows"] = ["count", int(obj.shape[0])]
                    return
                if kind is None:
                    return
                x = np.asarray(obj[()], dtype=float)
                if kind == "count":
                    figures[p] = ["count", x.astype(np.int64).ravel().tolist()]
                    return
                if x.ndim == 0:
                    x = x.reshape(1)
                stride = max(1, math.ceil(x.shape[0] / ROWS))
                figures[p] = [kind, {"shape": list(x.shape), "stride": stride,
                                     "rows": x[::stride].tolist()}]
        # visititems skips the root, whose attributes are provenance; /model's (the keys and
        # sizes as run) are compared with the rest.
        f.visititems(visit)
    return figures


def close(kind, new, ref):
    """None if new matches ref within kind's tolerance, else a message with both sides."""
    if kind == "count":
        if new == ref:
            return None
        if isinstance(ref, list) and isinstance(new, list):
            if len(new) != len(ref):
                return f"{len(new)} entries != {len(ref)}"
            i = next(i for i, (a, b) in enumerate(zip(new, ref)) if a != b)
            return f"entry {i}: {new[i]} != {ref[i]}"
        return f"{new} != {ref}"
    if kind == "figure" and not isinstance(ref, dict):
        if isinstance(ref, float) and (math.isnan(ref) or math.isinf(ref)):
            same = (math.isnan(ref) and math.isnan(new)) or new == ref
            return None if same else f"{new!r} != {ref!r}"
        if abs(ref) < 1e-300 and abs(new) < 1e-300:
            return None
        d = abs(new - ref)
        return None if d <= TOL["figure"] * abs(ref) else (
            f"{new!r} against {ref!r}: |difference| {d:.3e} > {TOL['figure']} |ref|")
    if new["shape"] != ref["shape"] or new["stride"] != ref["stride"]:
        return f"shape {new['shape']} (stride {new['stride']}) != {ref['shape']} ({ref['stride']})"
    a, b = np.asarray(new["rows"], dtype=float), np.asarray(ref["rows"], dtype=float)
    if a.shape != b.shape:
        return f"stored shape {a.shape} != {b.shape}"
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return "NaN at other places"
    a, b = np.nan_to_num(a), np.nan_to_num(b)
    if kind == "output":
        d, s = np.linalg.norm(a - b), np.linalg.norm(b)
        what = "||x - ref||_F", "||ref||_F"
    else:
        d, s = (np.max(np.abs(a - b)), np.max(np.abs(b))) if b.size else (0.0, 0.0)
        what = "max |x - ref|", "max |ref|"
    tol = TOL[kind]
    return None if d <= tol * s else f"{what[0]} = {d:.3e} > {tol} {what[1]} = {tol * s:.3e}"


def run_case(mor, name, experiment, overrides, workdir):
    out = Path(workdir) / f"{name}.h5"
    cmd = [mor, "run", str(SOURCE / "experiments" / experiment), "-o", str(out), "--quiet",
           "--no-plots"]
    for s in overrides:
        cmd += ["--set", s]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    seconds = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return extract(out), seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("--mor", required=True)
    ap.add_argument("--reference", default=str(REFERENCE))
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    mor = os.path.abspath(args.mor)
    cases = [c for c in CASES if args.only is None or c[0] in args.only]
    reference = {}
    if Path(args.reference).exists():
        reference = json.loads(Path(args.reference).read_text())
    failures = 0
    with tempfile.TemporaryDirectory(prefix="nothing_moves.") as workdir:
        for name, experiment, overrides in cases:
            try:
                figures, seconds = run_case(mor, name, experiment, overrides, workdir)
            except RuntimeError as e:
                print(f"FAIL {name}: {e}")
                failures += 1
                continue
            if args.mode == "record":
                reference[name] = {"experiment": experiment, "set": overrides, "figures": figures}
                print(f"recorded {name}: {len(figures)} figures ({seconds:.1f} s)")
                continue
            if name not in reference:
                print(f"FAIL {name}: not in {args.reference}")
                failures += 1
                continue
            ref = reference[name]["figures"]
            problems = []
            for key, (kind, value) in ref.items():
                if key not in figures:
                    problems.append(f"{key}: missing (recorded {kind})")
                    continue
                msg = close(kind, figures[key][1], value)
                if msg:
                    problems.append(f"{key} ({kind}): {msg}")
            status = "ok  " if not problems else "FAIL"
            print(f"{status} {name}: {len(ref)} figures compared ({seconds:.1f} s)")
            for p in problems:
                print(f"     {p}")
            failures += bool(problems)
    if args.mode == "record":
        Path(args.reference).write_text(json.dumps(reference, indent=0, sort_keys=True) + "\n")
    total = len(cases)
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
