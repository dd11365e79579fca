# SPDX-License-Identifier: GPL-3.0-or-later
"""Ctrl-C during a long mor.reduce or norm: SIGINT sent to the process raises KeyboardInterrupt within
one second (the computation runs off the GIL on a worker thread that polls the library's stop
flag), and the next call runs normally."""
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import python_env

LATENCY = 1.0  # seconds from the signal to KeyboardInterrupt

LONG = {
    # Low-rank BT by RKSM with a tolerance it cannot reach: the rational Krylov space grows to
    # 4000 columns of 4 x 10^4 doubles with O(k^3) projected Lyapunov solves, minutes of work.
    # (LR-ADI with such a tolerance stalls and returns within a second on an idle machine.)
    "bt": """mor.reduce(mor.Chain(N=20000, k_n=0.0), "bt", order=10, gramians="low_rank",
                       low_rank_solver="rksm", rksm_tolerance=1e-30, rksm_max_dimension=4000,
                       allow_unconverged=True)""",
    # IRKA (MF-IRKA, the default) of the chain at N = 10^5 with a tolerance it cannot reach:
    # 100 iterations of r = 20 shifted solves of 2 x 10^5 states (about 0.5 s each at a load
    # of 6: 53 s uninterrupted; docs/python.md), each solve polling the stop flag.
    "irka": """mor.reduce(mor.Chain(N=100000, k_n=0.0), "irka", order=20, tolerance=1e-300,
                         max_iterations=100, allow_unconverged=True, h2_history=False)""",
    # POD trained on a simulation of 2 x 10^7 steps of the nonlinear chain (every 1000th step a
    # snapshot: keeping all would be refused up front, about 60 GiB).
    "pod": """mor.reduce(mor.Chain(N=1000, k_n=2.0), "pod", order=10, training_stride=1000,
                        experiment={
                       "simulation": {"t_end": 1e6, "dt": 0.05},
                       "training": [{"type": "sine", "frequency": 0.1}]})""",
    # Dense norms (LAPACK polls no stop flag: they run in a child process that Ctrl-C kills):
    # the H2 norm by a dense Lyapunov solve of 2800 states (about 12 s), the Hinf norm by the
    # level-set method on 2400 states (Hamiltonian pencils of 4800: minutes).
    "h2_dense": """mor.h2_norm(mor.Chain(N=1400, k_n=0.0), dense_limit=4000)""",
    "hinf_dense": """mor.hinf_norm(mor.Chain(N=1200, k_n=0.0), dense_limit=100000)""",
}

CHILD = textwrap.dedent("""
    import sys, time, mor
    print("ready", flush=True)
    try:
        LONG
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.time(), flush=True)
    # The stop flag is cleared: the next reduction runs.
    rom = mor.reduce(mor.Chain(N=20, k_n=0.0), "bt", order=2)
    print("after", rom.n, flush=True)
""")


@pytest.mark.parametrize("method", LONG)
def test_sigint_raises_keyboard_interrupt_within_a_second(method):
    script = CHILD.replace("LONG", LONG[method])
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=python_env())
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(1.5)  # well inside the reduction
        sent = time.time()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().split()
        assert line and line[0] == "interrupted", f"child said {line}, stderr {child.stderr.read()}"
        latency = float(line[1]) - sent
        print(f"{method}: KeyboardInterrupt {latency:.3f} s after SIGINT")
        assert latency <= LATENCY, f"KeyboardInterrupt {latency:.3f} s after SIGINT"
        assert child.stdout.readline().split() == ["after", "2"]
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
