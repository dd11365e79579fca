# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared fixtures of the tests of the Python module mor (run by ctest as python_module:
PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python)."""
import os
import pathlib

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

SOURCE_DIR = pathlib.Path(os.environ.get("MOR_SOURCE_DIR", pathlib.Path(__file__).parents[2]))

# Under the sanitizers (tests/CMakeLists.txt) this interpreter runs with ASan's shared runtime
# preloaded for the instrumented extension. The `mor` processes the tests and mor.sweep start
# link a static runtime of their own and refuse a second: the preload leaves the environment,
# and python_env() gives it back to the Python interpreters the tests start.
ASAN_PRELOAD = os.environ.pop("LD_PRELOAD", None) if os.environ.get("MOR_SANITIZED") else None


def python_env():
    """The environment of a Python child process (with the sanitizers' preload, if any)."""
    env = os.environ.copy()
    if ASAN_PRELOAD:
        env["LD_PRELOAD"] = ASAN_PRELOAD
    return env


def data(name):
    """A model file of the repository's data/ (the shared data set: data/README.md)."""
    return SOURCE_DIR / "data" / name


@pytest.fixture(scope="session")
def rail371():
    """The Oberwolfach steel-rail model, n = 371, 7 inputs, 6 outputs, as SciPy reads it."""
    d = scipy.io.loadmat(data("rail_371.mat"))
    return {k: d[k] for k in ("E", "A", "B", "C")}


def random_stable(n, m, p, seed, density=0.2):
    """A random sparse first-order system with a symmetric positive definite E and a stable
    A = -(S S^T + n I) + (skew part): every eigenvalue of E^{-1} A has a negative real part."""
    rng = np.random.default_rng(seed)
    S = sp.random(n, n, density=density, random_state=rng, format="csr")
    K = sp.random(n, n, density=density, random_state=rng, format="csr")
    A = -(S @ S.T + n * sp.identity(n)) + 0.5 * (K - K.T)
    R = sp.random(n, n, density=0.05, random_state=rng)
    E = R @ R.T + sp.identity(n)
    B = rng.standard_normal((n, m))
    C = rng.standard_normal((p, n))
    return sp.csc_matrix(E), sp.csc_matrix(A), B, C
