# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python module refuses what `mor run` refuses, up front and with the value named (issue 44,
section 2): the step limit and the memory budget of the run's guards (experiments::check_run,
shared by every front end), complex or missing matrices, systems without inputs or outputs,
integers out of range and nonsense job counts. Each call here would otherwise run for hours,
exhaust the memory, or drop data silently."""
import numpy as np
import pytest
import scipy.sparse as sp

import mor

CHAIN = mor.Chain(N=10, k_n=0.0)


def test_step_limit_refused_before_anything_runs():
    with pytest.raises(ValueError, match=r"1000000000000 steps, above max_steps = 100000000"):
        mor.simulate(CHAIN, 1.0, t_end=1.0, dt=1e-12)
    with pytest.raises(ValueError, match=r"100 steps, above max_steps = 99"):
        mor.simulate(CHAIN, 1.0, t_end=1.0, dt=0.01, max_steps=99)
    # At the limit the run goes ahead: the limit is a count of steps, not off by one.
    t, y = mor.simulate(CHAIN, 1.0, t_end=1.0, dt=0.01, max_steps=100)
    assert t.shape == (101,) and y.shape == (101, 1)
    with pytest.raises(ValueError, match="max_steps must be >= 1"):
        mor.simulate(CHAIN, 1.0, t_end=1.0, dt=0.5, max_steps=0)


def test_kept_samples_beyond_the_memory_budget_refused():
    # 10^8 samples of the 2 x 10^4 states of a chain of 10^4 masses: terabytes.
    with pytest.raises(ValueError, match=r"keeping 100000002 samples of 2000[12] values"):
        mor.simulate(mor.Chain(N=10000), 1.0, t_end=1e8, dt=1.0, snapshots=True)


def test_model_beyond_the_memory_budget_refused_before_it_is_built():
    with pytest.raises(ValueError, match=r"estimate for n = 300000000, method bt.*budget"):
        mor.reduce(mor.Chain(N=300_000_000, k_n=0.0), "bt", order=10)
    with pytest.raises(ValueError, match=r"estimate for n = 300000000\).*budget"):
        mor.simulate(mor.Chain(N=300_000_000, k_n=0.0), 1.0, t_end=1.0, dt=0.5)


B = np.ones((3, 1))
C = np.ones((1, 3))


@pytest.mark.parametrize("A", [-np.eye(3) * (1 + 1j), sp.csc_matrix(-np.eye(3) * (1 + 0j))])
def test_complex_matrices_refused(A):
    with pytest.raises(ValueError, match=r"A is complex \(dtype complex"):
        mor.LtiModel(A=A, B=B, C=C)


def test_none_refused():
    with pytest.raises(ValueError, match="A is None"):
        mor.LtiModel(A=None, B=B, C=C)
    with pytest.raises(ValueError, match=r"u\(t\) is None"):
        mor.simulate(CHAIN, lambda t: None, t_end=1.0, dt=0.5)


def test_systems_without_inputs_or_outputs_refused():
    with pytest.raises(ValueError, match="B has 0 columns"):
        mor.LtiModel(A=-np.eye(3), B=np.ones((3, 0)), C=C)
    with pytest.raises(ValueError, match="C has 0 rows"):
        mor.LtiModel(A=-np.eye(3), B=B, C=np.ones((0, 3)))
    with pytest.raises(ValueError, match="B has 0 columns"):
        mor.SecondOrderModel(M=np.eye(3), D=None, K=np.eye(3), B=np.ones((3, 0)), Cp=C)


def test_integers_out_of_range_and_complex_keys_refused():
    with pytest.raises(ValueError, match=r"order = 1180591620717411303424 is out of range"):
        mor.reduce(CHAIN, "bt", order=2**70)
    with pytest.raises(ValueError, match=r"order = \(1\+2j\) is complex"):
        mor.reduce(CHAIN, "bt", order=1 + 2j)
    with pytest.raises(ValueError, match=r"stride = 1180591620717411303424 is out of range"):
        mor.simulate(CHAIN, 1.0, t_end=1.0, dt=0.5, stride=2**70)
    with pytest.raises(ValueError, match=r"stride = 1.5 is not a whole number"):
        mor.simulate(CHAIN, 1.0, t_end=1.0, dt=0.5, stride=1.5)


@pytest.mark.parametrize("jobs", [-5, 0])
def test_job_counts_below_one_refused(jobs):
    with pytest.raises(ValueError, match=rf"jobs = {jobs}; run at least 1 point at once"):
        mor.sweep("no-such-sweep.toml", jobs=jobs)
