# SPDX-License-Identifier: GPL-3.0-or-later
"""Parametric models from Python (docs/methods/parametric.md): mor.Chain(..., parameters=...),
mor.reduce of the family, rom.at(...) against the full chain built at the same point with plain
keys (an independent model), the reduced matrices at a point against the affine sum of the
stored terms, and the refusals (ValueError naming the parameter and the value)."""
import numpy as np
import pytest

import mor

N = 300
DOMAIN = {"k_n": (0.5, 4.0), "d": (0.2, 2.0, "log")}
TRAINING = [mor.Chirp(amplitude=1.0, f1=0.2, t1=40.0),
            mor.Multisine(frequencies=[0.01, 0.05, 0.1, 0.15])]
SIM = {"integrator": "implicit_midpoint", "dt": 0.05, "t_end": 40.0}
TEST = mor.Sine(amplitude=0.7, frequency=0.033)
# POD + Q-DEIM of order 20 trained at 6 points: the reduced outputs follow the full ones to
# about 1e-5 at unseen points (observed 3.6e-6 .. 1.2e-5); a useful parametric model's bar is 1e-3.
ERROR_BOUND = 1e-3
# The same reduced matrices summed in another order: rounding of O(1) entries.
AFFINE_TOL = 1e-13


@pytest.fixture(scope="module")
def rom():
    fam = mor.Chain(N=N, parameters=DOMAIN)
    return mor.reduce(fam, "pod", order=20, parameter_samples=6, training_stride=4,
                      experiment={"training": TRAINING, "simulation": SIM})


def relative_error(y, yr):
    return np.linalg.norm(y - yr) / np.linalg.norm(y)


def test_at_a_point_it_follows_the_full_chain_built_there(rom):
    assert rom.parameters == {"d": (0.2, 2.0, "log"), "k_n": (0.5, 4.0, "linear")}
    rng = np.random.default_rng(5)
    for _ in range(3):
        point = {"k_n": rng.uniform(0.5, 4.0), "d": float(np.exp(rng.uniform(np.log(0.2), np.log(2.0))))}
        r = rom.at(**point)
        assert r.point == pytest.approx(point, rel=0, abs=0)
        assert r.n == 20
        _, y = mor.simulate(mor.Chain(N=N, **point), TEST, 40.0, 0.05)
        _, yr = mor.simulate(r, TEST, 40.0, 0.05)
        assert relative_error(y, yr) <= ERROR_BOUND, point


def test_the_reduced_matrices_are_the_affine_sums_of_the_stored_terms(rom):
    r = rom.at(k_n=1.7, d=0.9)
    affine = {k: v for k, v in rom.records.items() if k.startswith("affine/")}
    # M = m M_1 (m = 1 fixed), D = d D_1, K = k_l K_1 (k_l = 1 fixed).
    np.testing.assert_allclose(r.M, affine["affine/M_0"], rtol=0, atol=AFFINE_TOL * np.abs(r.M).max())
    np.testing.assert_allclose(r.D, 0.9 * affine["affine/D_0"], rtol=0,
                               atol=AFFINE_TOL * np.abs(r.D).max())
    np.testing.assert_allclose(r.K, affine["affine/K_0"], rtol=0, atol=AFFINE_TOL * np.abs(r.K).max())
    # The reduced model at the center is the one mor.reduce returned, the run's own point.
    center = rom.at(k_n=2.25, d=float(np.sqrt(0.4)))
    _, y0 = mor.simulate(rom, TEST, 10.0, 0.05)
    _, y1 = mor.simulate(center, TEST, 10.0, 0.05)
    assert np.array_equal(y0, y1)


def test_refusals_name_the_parameter_and_the_value(rom):
    with pytest.raises(ValueError, match=r"k_n = 5 is outside the parameter domain \[0.5, 4\]"):
        rom.at(k_n=5.0, d=0.9)
    with pytest.raises(ValueError, match="d is missing"):
        rom.at(k_n=1.0)
    with pytest.raises(ValueError, match="'m' is not a parameter"):
        rom.at(k_n=1.0, d=0.5, m=1.0)
    with pytest.raises(ValueError, match="rom.at"):
        rom.at(k_n=1.0, d=0.5).at(k_n=1.0, d=0.5)
    with pytest.raises(ValueError, match="size of the state"):
        mor.Chain(N=30, parameters={"N": (10, 20)})
    with pytest.raises(ValueError, match="empty or inverted"):
        mor.Chain(N=30, parameters={"d": (2.0, 0.2)})
    with pytest.raises(ValueError, match="log scale"):
        mor.Chain(N=30, parameters={"d": (0.0, 2.0, "log")})
    with pytest.raises(ValueError, match="given both"):
        mor.Chain(N=30, k_n=1.0, parameters={"k_n": (0.5, 1.0)})
    with pytest.raises(ValueError, match=r"\(min, max\)"):
        mor.Chain(N=30, parameters={"k_n": 1.0})
    fam = mor.Chain(N=30, parameters={"d": (0.2, 2.0)})
    with pytest.raises(ValueError, match="family"):
        mor.simulate(fam, TEST, 1.0, 0.05)
    with pytest.raises(ValueError, match="does not build"):
        mor.reduce(mor.Chain(N=30, k_n=0.0, parameters={"d": (0.2, 2.0)}), "modal", order=4)
    with pytest.raises(ValueError, match="k_n has no effect"):
        mor.reduce(mor.Chain(N=30, parameters={"k_n": (0.5, 4.0)}), "bt", order=4)


def test_a_linear_methods_parametric_model_is_a_linear_model_at_each_point():
    """Parametric BT of the linear chain over d (Galerkin in the energy inner product): rom.at(d=
    ...) is a linear reduced model of the global order, stable at every point, and a larger
    global basis (max_order, the leading singular vectors of the same local bases: nested)
    brings it closer to the chain at that d."""
    fam = mor.Chain(N=40, k_n=0.0, parameters={"d": (0.2, 2.0, "log")})
    small = mor.reduce(fam, "bt", order=6, gramians="dense", parameter_samples=4)
    large = mor.reduce(fam, "bt", order=6, gramians="dense", parameter_samples=4, max_order=18)
    assert small.parameters == {"d": (0.2, 2.0, "log")}
    for d in (0.25, 0.9, 1.7):
        full = mor.Chain(N=40, k_n=0.0, d=d)
        errors = []
        for rom, r in ((small, 6), (large, 18)):
            at = rom.at(d=d)
            assert at.point == {"d": d}
            assert at.n == r
            assert max(np.linalg.eigvals(np.linalg.solve(at.E, at.A)).real) < 0
            errors.append(mor.h2_error(full, at))
        assert errors[1] < 0.5 * errors[0], (d, errors)
    with pytest.raises(ValueError, match="outside the parameter domain"):
        small.at(d=3.0)


def test_given_training_points_and_the_linear_greedy_from_python():
    """training_points and sampling="greedy" pass through mor.reduce as [reduction] keys: with
    one given point the family's model at that point is the local BT model there (the same H2
    norm); the greedy over 6 points (tolerance 0, a cap of 3) gives a model of the global order;
    a point outside the box is a ValueError naming the key."""
    fam = mor.Chain(N=30, k_n=0.0, parameters={"d": (0.2, 2.0, "log")})
    one = mor.reduce(fam, "bt", order=6, gramians="dense", training_points=[[0.7]],
                     global_projection="two_sided")
    local = mor.reduce(mor.Chain(N=30, k_n=0.0, d=0.7), "bt", order=6, gramians="dense")
    h2_one, h2_local = mor.h2_norm(one.at(d=0.7)), mor.h2_norm(local)
    assert abs(h2_one - h2_local) <= 1e-8 * h2_local, (h2_one, h2_local)
    greedy = mor.reduce(fam, "bt", order=6, gramians="dense", parameter_samples=6,
                        sampling="greedy", greedy_tolerance=0.0, greedy_max_points=3)
    assert greedy.at(d=0.5).n == 6
    with pytest.raises(ValueError, match="training_points"):
        mor.reduce(fam, "bt", order=6, gramians="dense", training_points=[[5.0]])
