# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python call's overhead against the program on the same work: low-rank BT (LR-ADI,
square-root, r = 20) of the Rayleigh-damped linear chain of experiments/bt_chain.toml at
N = 10^5 (2 x 10^5 states), alternating the two, `repeats` times each.

  A  mor.reduce(mor.Chain(...), "bt", ...) in this process: wall time of the call (model built,
     reduced, records read back), and the reduction's own time inside it (timings["total_s"]);
  B  build/bin/mor run experiments/bt_chain.toml with the same keys, one step of simulation and
     no analysis: the reduction's time the program records (/reduction seconds) and the
     process's wall time (start, model, reduction, one step, writing).

Usage: PYTHONPATH=build/python /usr/bin/python3 python/bench_overhead.py [N] [repeats]
       PYTHONPATH=build/python /usr/bin/python3 python/bench_overhead.py --scipy [n]
Prints one line per run and the medians; say the machine's load (uptime) with the figures.
With --scipy: mor.reduce (dense Gramians) against a square-root BT written with SciPy
(solve_continuous_lyapunov, eigh factors, SVD) on the chain with n = 2 N states (default 2000).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

# The built package (PYTHONPATH=build/python), not python/mor beside this script.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import mor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAIN = dict(k_n=0.0, damping="rayleigh", alpha=0.2, beta=0.2)
BT = dict(order=20, projection="square_root", gramians="low_rank", adi_tolerance=1e-10)


def python_run(N):
    t0 = time.perf_counter()
    rom = mor.reduce(mor.Chain(N=N, **CHAIN), "bt", **BT)
    return time.perf_counter() - t0, rom.timings["total_s"]


def program_run(N, program, out):
    sets = [f"model.N={N}", "simulation.t_end=0.05", "analysis.h2=false", "analysis.hinf=false",
            "analysis.bode_points=0", "output.plots=false"]
    args = [program, "run", os.path.join(ROOT, "experiments", "bt_chain.toml"), "--output", out]
    for s in sets:
        args += ["--set", s]
    t0 = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    return wall, mor.results.load(out).reduction.attrs["seconds"]


def scipy_comparison(n):
    import numpy as np
    import scipy.linalg as la

    chain = mor.Chain(N=n // 2, **CHAIN)
    M, D, K = (X.toarray() for X in (chain.M, chain.D, chain.K))
    N = M.shape[0]
    A = np.block([[np.zeros((N, N)), np.eye(N)], [-la.solve(M, K), -la.solve(M, D)]])
    B = np.vstack([np.zeros((N, 1)), la.solve(M, chain.B.toarray())])
    C = np.hstack([chain.Cp.toarray(), chain.Cv.toarray()])
    for k in range(2):
        t0 = time.perf_counter()
        rom = mor.reduce(chain, "bt", order=20, gramians="dense", dense_limit=n)
        t_mor = time.perf_counter() - t0
        t0 = time.perf_counter()
        P = la.solve_continuous_lyapunov(A, -B @ B.T)
        Q = la.solve_continuous_lyapunov(A.T, -C.T @ C)
        factor = lambda X: (lambda w, U: U * np.sqrt(np.clip(w, 0, None)))(*la.eigh(X))  # noqa
        U, s, Vt = la.svd(factor(Q).T @ factor(P))
        t_scipy = time.perf_counter() - t0
        print(f"n = {n}: mor.reduce {t_mor:.2f} s, SciPy BT {t_scipy:.2f} s; "
              f"max |hsv difference| / s_1 = {np.max(np.abs(rom.hsv - s)) / s[0]:.1e}", flush=True)
    print(f"load: {os.getloadavg()}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--scipy":
        return scipy_comparison(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    N = int(float(sys.argv[1])) if len(sys.argv) > 1 else 100000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    from mor import _build

    print(f"load: {os.getloadavg()}")
    py_wall, py_inner, prog_wall, prog_red = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeats):
            w, inner = python_run(N)
            py_wall.append(w)
            py_inner.append(inner)
            print(f"A python  run {k}: call {w:.3f} s, reduction inside {inner:.3f} s", flush=True)
            w, red = program_run(N, _build.PROGRAM, os.path.join(tmp, "bt.h5"))
            prog_wall.append(w)
            prog_red.append(red)
            print(f"B program run {k}: process {w:.3f} s, reduction {red:.3f} s", flush=True)
    med = statistics.median
    print(f"medians (N = {N}, {repeats} runs each): python call {med(py_wall):.3f} s "
          f"(reduction {med(py_inner):.3f} s); program reduction {med(prog_red):.3f} s, "
          f"process {med(prog_wall):.3f} s; call / program reduction = "
          f"{med(py_wall) / med(prog_red):.3f}")
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    main()
