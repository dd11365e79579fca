# SPDX-License-Identifier: GPL-3.0-or-later
"""POD of linear models from Python: mor.reduce(model, "pod", ...) on mor.LtiModel (from SciPy
sparse matrices) and mor.SecondOrderModel projects the model's matrices onto the POD basis of
the training runs' snapshots, as `mor run` does (tests/test_pod_lti.py checks the program).

The reference is independent of the reduction: the snapshots of the same training input from
mor.simulate (the same integrator, step and stride as the training run, from rest), their SVD by
NumPy's LAPACK, and the Galerkin projection V^T E V, V^T A V, ... computed here with SciPy's
matrices; both bases sign-normalised. The refusals (a wrong key of a table, a key or a method
that does not fit a linear model) carry the program's messages. About 2 s."""
import os
import subprocess
import tempfile

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp

import mor
from conftest import data

# Two backward-stable SVDs of different algorithms (SciPy's QR-iteration dgesvd, the library's
# divide-and-conquer dgesdd) of snapshots that agree to rounding (the input is sin() in C++ and
# in NumPy): singular values agree to about max(n, k) eps s_1, singular vectors of separated
# singular values to eps s_1 / gap; the orders below keep s_r / s_1 > 1e-4 and the gap to
# s_{r+1} above 1e-4 s_1 (asserted).
REFERENCE_RTOL = 1e-10

SIMULATION = {"t_end": 20.0, "dt": 0.05}
STRIDE = 2  # reduction.training_stride: steps between snapshots
TRAINING = [{"type": "sine", "amplitude": 1.0, "frequency": 0.2},
            {"type": "chirp", "amplitude": 0.5, "f0": 0.0, "f1": 1.0, "t1": 20.0}]


def inputs():
    """The training inputs of TRAINING as Python callables (the library's sine and chirp)."""
    sine = lambda t: np.sin(2 * np.pi * 0.2 * t)
    # A linear chirp from f0 = 0 to f1 = 1 Hz over t1 = 20 s: phase 2 pi (f0 t + rate t^2 / 2).
    rate = (1.0 - 0.0) / 20.0
    chirp = lambda t: 0.5 * np.sin(2 * np.pi * (0.0 * t + 0.5 * rate * t * t))
    return [sine, chirp]


def snapshots(model, columns):
    """n x k: the snapshots of every training run, columns(x) picking them from mor.simulate's
    states (one row per stored time)."""
    runs = []
    for u in inputs():
        t, y, x = mor.simulate(model, u, t_end=SIMULATION["t_end"], dt=SIMULATION["dt"],
                               stride=STRIDE, snapshots=True)
        runs.append(columns(x))
    return np.hstack(runs)


def sign_normalised(V):
    """V with every column's largest entry (in magnitude) positive, and the signs applied."""
    idx = np.argmax(np.abs(V), axis=0)
    s = np.sign(V[idx, np.arange(V.shape[1])])
    s[s == 0] = 1.0
    return V * s, s


def close(actual, expected, rtol, what):
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert actual.shape == expected.shape, f"{what}: shapes {actual.shape} {expected.shape}"
    scale = max(float(np.max(np.abs(expected), initial=0.0)), np.finfo(float).tiny)
    err = float(np.max(np.abs(actual - expected), initial=0.0))
    print(f"{what}: largest difference {err:.2e} (relative {err / scale:.2e})")
    assert err <= rtol * scale, (f"{what}: largest difference {err:.3e} > {rtol:g} x "
                                 f"{scale:.3e}\nmor:   {actual.ravel()[:6]}\n"
                                 f"NumPy: {expected.ravel()[:6]}")


def pod_reference(X, r):
    """SciPy's POD of the snapshots X: every singular value, and the first r left singular
    vectors sign-normalised."""
    U, s, _ = scipy.linalg.svd(X, full_matrices=False, lapack_driver="gesvd")
    print("singular values s_1, s_r / s_1, s_(r+1) / s_1:", s[0], s[r - 1] / s[0], s[r] / s[0])
    assert s[r - 1] / s[0] > 1e-4, "the order's modes must be resolved"
    assert (s[r - 1] - s[r]) / s[0] > 1e-4, "s_r must be separated from s_(r+1)"
    return s, sign_normalised(U[:, :r])[0]


def reduce_pod(model, r, **keys):
    return mor.reduce(model, "pod", order=r, pod_method="svd", store_bases=True,
                      training_stride=STRIDE, **keys,
                      experiment={"simulation": SIMULATION, "training": TRAINING})


def heat_model(n=40):
    """A first-order model from SciPy sparse matrices: a 1-D heat equation with a lumped,
    non-uniform E, the input at one end, two outputs."""
    A = sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1], format="csc")
    A = (n / 4.0) * A
    E = sp.diags(np.linspace(1.0, 2.0, n), format="csc")
    B = np.zeros(n)
    B[0] = 1.0
    C = np.zeros((2, n))
    C[0, n // 2] = 1.0
    C[1, -1] = 1.0
    return E, A, B, C


def test_pod_of_an_lti_model_is_the_galerkin_projection_of_its_snapshots():
    E, A, B, C = heat_model()
    fom = mor.LtiModel(A=A, B=B, C=C, E=E)
    r = 6
    rom = reduce_pod(fom, r)
    assert rom.is_reduced and rom.is_linear and rom.first_order and rom.method == "pod"
    assert rom.n == r and rom.info["r"] == r and rom.info["projection"] == "galerkin"
    assert {"snapshots_s", "pod_s", "projection_s", "total_s"} <= set(rom.timings)

    X = snapshots(fom, lambda x: x.T)  # a first-order model's snapshots are its state x
    assert rom.info["training_snapshots"] == X.shape[1]
    s, V_ref = pod_reference(X, r)
    close(rom.hsv, s, REFERENCE_RTOL, "POD singular values (all computed)")
    V_got, signs = sign_normalised(rom.V)
    close(V_got, V_ref, REFERENCE_RTOL, "POD basis V")
    assert rom.W is not None and np.array_equal(rom.W, rom.V)  # Galerkin

    S = np.diag(signs)  # rom's matrices belong to its own signs: V_got = rom.V S
    close(S @ rom.E @ S, V_ref.T @ (E @ V_ref), REFERENCE_RTOL, "E_r")
    close(S @ rom.A @ S, V_ref.T @ (A @ V_ref), REFERENCE_RTOL, "A_r")
    close(S @ rom.B, V_ref.T @ B[:, None], REFERENCE_RTOL, "B_r")
    close(rom.C @ S, C @ V_ref, REFERENCE_RTOL, "C_r")
    assert np.all(rom.D == 0.0)


@pytest.mark.parametrize("fields", [["p"], ["p", "v"]])
def test_pod_of_a_second_order_model_is_the_galerkin_projection_of_its_snapshots(fields):
    n, r = 20, 6
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csc")
    M = sp.identity(n, format="csc")
    K = 4.0 * T
    D = sp.csc_matrix(0.2 * M + 0.05 * K)
    B = np.zeros((n, 1))
    B[-1, 0] = 1.0
    Cp = B.T.copy()
    Cv = np.zeros((1, n))
    Cv[0, 0] = 1.0
    fom = mor.SecondOrderModel(M=M, D=D, K=K, B=B, Cp=Cp, Cv=Cv)
    rom = reduce_pod(fom, r, pod_snapshots=fields)
    assert rom.is_linear and not rom.first_order and rom.n == r

    # mor.simulate's state rows are [q, v]; "p" takes q, "p", "v" the two side by side.
    X = snapshots(fom, lambda x: np.hstack([x[:, :n].T] + ([x[:, n:].T] if "v" in fields else [])))
    assert rom.info["training_snapshots"] == X.shape[1]
    s, V_ref = pod_reference(X, r)
    close(rom.hsv, s, REFERENCE_RTOL, "POD singular values (all computed)")
    V_got, signs = sign_normalised(rom.V)
    close(V_got, V_ref, REFERENCE_RTOL, "POD basis V")
    S = np.diag(signs)
    for name, X_full in (("M", M), ("D", D), ("K", K)):
        close(S @ getattr(rom, name) @ S, V_ref.T @ (X_full @ V_ref), REFERENCE_RTOL, f"{name}_r")
    close(S @ rom.B, V_ref.T @ B, REFERENCE_RTOL, "B_r")
    close(rom.Cp @ S, Cp @ V_ref, REFERENCE_RTOL, "Cp_r")
    close(rom.Cv @ S, Cv @ V_ref, REFERENCE_RTOL, "Cv_r")


def test_pod_of_a_file_model_and_a_linearised_benchmark_runs():
    for fom, r in ((mor.load_model(data("rail_371.mat")), 4),
                   (mor.model("linearised_multibody", benchmark="flyball"), 2)):
        rom = mor.reduce(fom, "pod", order=r,
                         experiment={"simulation": {"t_end": 5.0, "dt": 0.05},
                                     "training": [{"type": "sine", "frequency": 0.5}]})
        assert rom.is_linear and rom.n == r and rom.hsv[0] > 0 and np.all(np.diff(rom.hsv) <= 0)
        t, y = mor.simulate(rom, 1.0, t_end=1.0, dt=0.1)
        assert np.all(np.isfinite(y))


def program_message(tmp, model_path, reduction):
    """`mor run`'s message for [reduction] on the model file, from "reduction." on."""
    toml = os.path.join(tmp, "refused.toml")
    with open(toml, "w") as f:
        f.write(f'[experiment]\nname = "refused"\noutput = "{tmp}/refused.h5"\n'
                f'[model]\ntype = "file"\npath = "{model_path}"\n'
                f'[[training]]\ntype = "sine"\n[reduction]\n{reduction}\n')
    from mor import _build

    res = subprocess.run([_build.PROGRAM, "run", toml, "-q"], capture_output=True, text=True)
    assert res.returncode == 2, res.stderr
    return res.stderr[res.stderr.index(": reduction") + 2:].splitlines()[0].strip()


@pytest.mark.parametrize("method,keys,needle", [
    ("empirical_bt", {}, "exact Gramians"),
    ("differential_balancing", {}, "Lyapunov Gramians"),
    ("pod", {"deim_order": 4}, "hyper-reduction of a nonlinear force"),
    ("pod", {"pod_snapshots": ["p", "v"]}, "state x"),
])
def test_a_method_or_key_that_does_not_fit_a_linear_model_gets_the_programs_message(
        method, keys, needle):
    fom = mor.load_model(data("rail_371.mat"))
    with pytest.raises(ValueError) as e:
        mor.reduce(fom, method, order=4, **keys, experiment={"training": [{"type": "sine"}]})
    got = str(e.value)
    print(got)
    assert got.startswith("mor.reduce: ") and needle in got
    with tempfile.TemporaryDirectory(prefix="test_pod_linear.") as tmp:
        lines = "\n".join(f"{k} = {mor._toml_value(v)}" for k, v in keys.items())
        expected = program_message(tmp, data("rail_371.mat"),
                                   f'method = "{method}"\norder = 4\n{lines}')
    assert got[got.index(": reduction") + 2:] == expected


def test_wrong_keys_of_the_experiment_tables_are_named():
    E, A, B, C = heat_model()
    fom = mor.LtiModel(A=A, B=B, C=C, E=E)
    cases = [
        ({"training": [{"type": "sine", "frequncy": 0.2}]},
         r"unknown key 'training\[0\]\.frequncy' for input type 'sine'; did you mean "
         r"'training\[0\]\.frequency'\?"),
        ({"training": [{"type": "sin"}]}, r"training\[0\]\.type 'sin' is not a known signal"),
        ({"training": [{"type": "sine"}], "simulation": {"t_ned": 5.0}},
         r"unknown key 'simulation\.t_ned'; did you mean 'simulation\.t_end'\?"),
        ({"training": [{"type": "sine"}], "simulation": {"dt": "0.1"}},
         r"simulation\.dt must be a number"),
        ({"trainig": [{"type": "sine"}]},
         r"unknown top-level key 'trainig'; did you mean \[training\]"),
        ({"training": {"type": "sine"}}, r"training must be an array of tables"),
        ({}, r"reduction\.method = \"pod\" needs training data"),
    ]
    for experiment, message in cases:
        with pytest.raises(ValueError, match=message):
            mor.reduce(fom, "pod", order=2, experiment=experiment)
    with pytest.raises(ValueError, match=r"\[\[training\]\] inputs are used by"):
        mor.reduce(fom, "bt", order=2, experiment={"training": [{"type": "sine"}]})
    with pytest.raises(ValueError, match=r"training is a table of the experiment, not a key of "
                                         r"the method: pass experiment="):
        mor.reduce(fom, "pod", order=2, training=[{"type": "sine"}])
    # A kind that integrates itself reads its [simulation] keys from its file.
    with pytest.raises(ValueError, match=r"model kind \"flyball\" integrates with its own "
                                         r"\[simulation\] keys"):
        mor.reduce(mor.model("flyball"), "modal", order=2, experiment={"simulation": {"dt": 0.1}})
    # A projected chain is simulated by the library only: no system to reduce again.
    rom = mor.reduce(mor.Chain(N=8, k_n=2.0), "pod", order=4,
                     experiment={"training": [{"type": "sine"}], "simulation": SIMULATION})
    with pytest.raises(ValueError, match=r"a projected model \(reduced by \"pod\"\) cannot be "
                                         r"reduced again by \"pod\""):
        mor.reduce(rom, "pod", order=2, experiment={"training": [{"type": "sine"}]})

