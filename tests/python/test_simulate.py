# SPDX-License-Identifier: GPL-3.0-or-later
"""mor.simulate against analytic solutions, with u a callable, samples or a constant."""
import numpy as np
import pytest

import mor


def scalar_model():
    """x' = -x + u, y = x: the step response is 1 - exp(-t)."""
    return mor.LtiModel(A=[[-1.0]], B=[[1.0]], C=[[1.0]])


@pytest.mark.parametrize("u", [1.0, lambda t: 1.0, np.ones(101)], ids=["constant", "callable",
                                                                       "samples"])
def test_step_response(u):
    t, y = mor.simulate(scalar_model(), u, t_end=5.0, dt=0.05)
    assert t.shape == (101,) and y.shape == (101, 1)
    # Implicit midpoint: second order; error about dt^2 / 12 of the solution.
    err = np.max(np.abs(y[:, 0] - (1 - np.exp(-t))))
    assert err <= 1e-3, f"max error {err:.3e}"


def test_callable_and_samples_agree():
    m = mor.Chain(N=10, k_n=0.0)
    f = lambda t: np.sin(0.5 * t)  # noqa: E731
    t, y1 = mor.simulate(m, f, t_end=10.0, dt=0.01, integrator="rk4")
    # Samples on the grid are interpolated linearly between steps: RK4's midpoint stages see
    # the chord instead of the sine, an O(dt^2) difference.
    _, y2 = mor.simulate(m, f(t), t_end=10.0, dt=0.01, integrator="rk4")
    assert np.max(np.abs(y1 - y2)) <= 1e-4 * np.max(np.abs(y1))


def test_convergence_order_of_implicit_midpoint():
    """Halving dt divides the error of the scalar decay by about 4."""
    m = scalar_model()
    errs = []
    for dt in (0.1, 0.05):
        t, y = mor.simulate(m, lambda t: np.cos(t), t_end=4.0, dt=dt)
        exact = 0.5 * (np.cos(t) + np.sin(t) - np.exp(-t))
        errs.append(np.max(np.abs(y[:, 0] - exact)))
    assert 3.5 <= errs[0] / errs[1] <= 4.5, f"errors {errs}"


def test_errors():
    m = scalar_model()
    with pytest.raises(ValueError, match="samples"):
        mor.simulate(m, np.ones(7), t_end=1.0, dt=0.1)
    with pytest.raises(ValueError):
        mor.simulate(m, 1.0, t_end=1.0, dt=0.1, integrator="euler")
    with pytest.raises(ZeroDivisionError):
        mor.simulate(m, lambda t: 1 / 0, t_end=1.0, dt=0.1)
