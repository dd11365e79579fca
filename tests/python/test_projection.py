# SPDX-License-Identifier: GPL-3.0-or-later
"""Projection results as NumPy arrays (pod on the chain and on a network: rom.M, .D, .K, .B, .Cp,
.Cv against the projection of the full matrices by the reduced model's own basis; the DEIM
points and basis against the DEIM selection rule), every computed singular value in rom.hsv, and
the state snapshots of mor.simulate against the outputs they must reproduce."""
import numpy as np
import pytest
import scipy.io

import mor
from test_reduce import TRAINING, network_file

# The reduced matrices are products of V (orthonormal, O(1) entries) with O(1) matrices.
PROJECTION_TOL = 1e-12  # relative to the largest entry
# y = Cp q + Cv v from the stored snapshots: one product, rounding of the largest term.
OUTPUT_TOL = 1e-12


def close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.max(np.abs(b)), 1e-300)
    err = np.max(np.abs(a - b)) / scale
    assert err <= tol, f"relative difference {err:.3e} > {tol:.1e}\n{a}\n{b}"


def full_matrices(kind):
    """M, D, K, B, Cp, Cv of the linear part (the chain's k_n only adds the cubic force)."""
    if kind == "chain":
        lin = mor.Chain(N=8, k_n=0.0)
        return {n: getattr(lin, n).toarray() for n in ("M", "D", "K", "B", "Cp", "Cv")}
    d = scipy.io.loadmat(network_file())
    return {n: (d[n].toarray() if hasattr(d[n], "toarray") else np.asarray(d[n]))
            for n in ("M", "D", "K", "B", "Cp", "Cv")}


def model(kind):
    return mor.Chain(N=8, k_n=2.0) if kind == "chain" else mor.model("network", path=network_file())


@pytest.mark.parametrize("kind", ["chain", "network"])
def test_projection_matrices_are_the_projection_by_the_basis(kind):
    rom = mor.reduce(model(kind), "pod", order=4, experiment=TRAINING)
    full = full_matrices(kind)
    V = rom.V
    assert V.shape == (8, 4)
    close(V.T @ V, np.eye(4), PROJECTION_TOL)  # Galerkin, orthonormal POD basis
    W = rom.W
    close(rom.M, W.T @ full["M"] @ V, PROJECTION_TOL)
    close(rom.D, W.T @ full["D"] @ V, PROJECTION_TOL)
    close(rom.K, W.T @ full["K"] @ V, PROJECTION_TOL)
    close(rom.B, W.T @ full["B"], PROJECTION_TOL)
    close(rom.Cp, full["Cp"] @ V, PROJECTION_TOL)
    assert rom.Cv.shape == (full["Cv"].shape[0], 4)
    assert not rom.M.flags.writeable  # a view of the library's storage
    with pytest.raises(AttributeError, match="no matrix A"):
        rom.A


def test_deim_points_and_basis_follow_the_deim_rule():
    rom = mor.reduce(mor.Chain(N=40, k_n=2.0), "pod", order=4, store_bases=True,
                     experiment=TRAINING)
    p, U = rom.deim_points, rom.deim_basis
    m = rom.info["m"]
    assert p.dtype.kind == "i" and p.shape == (m,) and len(set(p)) == m
    assert U.shape == (40, m)
    assert np.all((0 <= p) & (p < 40))
    close(U.T @ U, np.eye(m), 1e-8)  # kDeimOrthonormalityTolerance
    # DEIM's greedy rule (Chaturantabut & Sorensen 2010, Algorithm 1): p_1 = argmax |u_1|, then
    # p_j = argmax of the residual of u_j interpolated at p_1..p_{j-1}.
    if rom.info["deim_method"] == "deim":
        expect = [int(np.argmax(np.abs(U[:, 0])))]
        for j in range(1, m):
            c = np.linalg.solve(U[expect, :j], U[expect, j])
            expect.append(int(np.argmax(np.abs(U[:, j] - U[:, :j] @ c))))
        assert list(p) == expect
    # The DEIM error constant ||(P^T U)^{-1}||_2 of the same points and basis.
    close(np.linalg.norm(np.linalg.inv(U[p, :]), 2), rom.info["deim_error_constant"], 1e-8)
    # Without store_bases the points are there, the basis is not.
    plain = mor.reduce(mor.Chain(N=40, k_n=2.0), "pod", order=4, experiment=TRAINING)
    assert plain.deim_basis is None and list(plain.deim_points) == list(p)


def test_hsv_holds_every_computed_value():
    chain = mor.Chain(N=30, k_n=0.0)
    bt = mor.reduce(chain, "bt", order=4, gramians="dense")
    assert bt.hsv.shape == (60,)  # all 2N values of the dense Gramians, not only r
    assert np.all(np.diff(bt.hsv) <= 0)
    close(bt.error_bound, 2 * np.sum(bt.hsv[4:]), 1e-12)
    pod = mor.reduce(mor.Chain(N=8, k_n=2.0), "pod", order=4, experiment=TRAINING)
    assert pod.hsv.size > 4 and np.all(np.diff(pod.hsv) <= 0)


def test_snapshots_reproduce_the_outputs():
    # First order, C = I: the states are the outputs.
    A = np.array([[-1.0, 0.5], [0.0, -2.0]])
    lti = mor.LtiModel(A=A, B=np.ones(2), C=np.eye(2))
    t, y, x = mor.simulate(lti, 1.0, t_end=2.0, dt=0.1, snapshots=True)
    assert x.shape == (21, 2)
    close(x, y, OUTPUT_TOL)
    close(x[0], np.zeros(2), 1.0)  # from rest
    # Second order: x = [q, v], y = Cp q + Cv v.
    chain = mor.Chain(N=10, k_n=0.0)
    t, y, x = mor.simulate(chain, lambda t: np.sin(t), t_end=2.0, dt=0.05, stride=4,
                           snapshots=True)
    assert x.shape == (len(t), 20)
    close(x[:, :10] @ chain.Cp.toarray().T + x[:, 10:] @ chain.Cv.toarray().T, y, OUTPUT_TOL)
    # A projected chain: the reduced coordinates, with the reduced output matrices.
    rom = mor.reduce(mor.Chain(N=8, k_n=2.0), "pod", order=4, experiment=TRAINING)
    t, y, x = mor.simulate(rom, 0.5, t_end=1.0, dt=0.1, snapshots=True)
    assert x.shape == (11, 8)
    close(x[:, :4] @ rom.Cp.T + x[:, 4:] @ rom.Cv.T, y, OUTPUT_TOL)
    # Without snapshots: (t, y) as before.
    assert len(mor.simulate(rom, 0.5, t_end=1.0, dt=0.1)) == 2
