#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""POD of a first-order LTI model file (reduction.method = "pod" on model.type = "file").

Usage: /usr/bin/python3 tests/test_pod_lti.py MOR_BINARY
(run by ctest as `pod_lti`; MOR_BINARY may also come from the environment variable MOR).

1. Against an independent SciPy POD-Galerkin of the same snapshots: a first run of the rail
   (n = 371, data/rail_371.mat) stores its state snapshots /snapshots/x; a POD run trains on that
   file (reduction.training_files, pod_method = "svd", store_bases). Here SciPy's SVD of the same
   snapshots gives the singular values and the basis, and the rail's matrices read by SciPy give
   E_r = V^T E V, A_r = V^T A V, B_r = V^T B, C_r = C V: both sides sign-normalised, they must agree
   to 1e-10 relative. The same for a second-order model file written here (a damped chain of 20
   masses): M_r, D_r, K_r, B_r, Cp_r, Cv_r from the position snapshots.
2. A POD of the rail trained on a chirp ([[training]]) and tested on an unseen step: its relative
   output error is reported, and it must fall as the order grows; the orders 2 and 4 built from
   the nested basis of the r = 8 run (compare_orders, /error_vs_r) give the separate runs' errors.
3. The keys of a nonlinear force's hyper-reduction, position snapshots of a first-order model,
   and empirical_bt / differential_balancing are refused on the rail with the reason, exit 2,
   nothing written.
About 2 s of CPU (small runs).
"""
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np
import scipy.io
import scipy.linalg
import scipy.sparse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MOR = os.environ.get("MOR", "")
RAIL = os.path.join(ROOT, "data", "rail_371.mat")
# SciPy's QR-iteration SVD (dgesvd) and the program's divide and conquer (dgesdd) on the same
# snapshots: both backward stable, so singular values agree to about max(n, k) eps s_1 and singular vectors of well
# separated singular values to about eps s_1 / gap; the order below keeps s_r / s_1 > 1e-4.
REFERENCE_RTOL = 1e-10
ORDER = 5


def mor(*args):
    """Run the mor program; fail the test with its output if it fails."""
    result = subprocess.run([MOR, *args], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"mor {' '.join(args)} exited with {result.returncode}:\n"
                             f"{result.stdout}{result.stderr}")
    return result.stdout


def experiment(path, name, output, reduction, input_table, training=""):
    with open(path, "w") as f:
        f.write(f"""[experiment]
name = "{name}"
output = "{output}"
[model]
type = "file"
path = "{RAIL}"
[input]
{input_table}
[simulation]
integrator = "implicit_midpoint"
dt = 0.5
t_end = 200.0
[output]
plots = false
snapshot_stride = 2
{training}
[reduction]
{reduction}
[analysis]
hinf = false
bode_points = 0
""")


CHIRP = 'type = "chirp"\namplitude = 1.0\nf0 = 0.0\nf1 = 0.05\nt1 = 200.0'
STEP = 'type = "step"\namplitude = 1.0'


def sign_normalised(V):
    """V with every column's largest entry (in magnitude) positive, and the signs applied."""
    idx = np.argmax(np.abs(V), axis=0)
    s = np.sign(V[idx, np.arange(V.shape[1])])
    s[s == 0] = 1.0
    return V * s, s


class PodLti(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="test_pod_lti.")
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertClose(self, actual, expected, rtol, what):
        actual, expected = np.asarray(actual, float), np.asarray(expected, float)
        self.assertEqual(actual.shape, expected.shape, f"{what}: shapes")
        scale = max(float(np.max(np.abs(expected), initial=0.0)), np.finfo(float).tiny)
        err = float(np.max(np.abs(actual - expected), initial=0.0))
        print(f"{what}: largest difference {err:.2e} (relative {err / scale:.2e})")
        self.assertLessEqual(err, rtol * scale, f"{what}: largest difference {err:.3e} > "
                             f"{rtol:g} x {scale:.3e}\nmor:   {actual.ravel()[:6]}\n"
                             f"SciPy: {expected.ravel()[:6]}")

    def test_pod_galerkin_matches_scipy_on_the_same_snapshots(self):
        d = self.dir
        snap = os.path.join(d, "snapshots.h5")
        experiment(os.path.join(d, "snapshots.toml"), "snapshots", snap, 'method = "none"', CHIRP)
        mor("run", os.path.join(d, "snapshots.toml"), "-q")
        pod = os.path.join(d, "pod.h5")
        experiment(os.path.join(d, "pod.toml"), "pod", pod,
                   f'method = "pod"\norder = {ORDER}\npod_method = "svd"\n'
                   f'training_files = ["{snap}"]\nstore_bases = true', STEP)
        mor("run", os.path.join(d, "pod.toml"), "-q")

        with h5py.File(snap, "r") as f:
            X = np.asarray(f["/snapshots/x"]).T  # n x k, a column per snapshot
        with h5py.File(pod, "r") as f:
            red = f["/reduction"]
            self.assertEqual(red.attrs["method"].decode() if isinstance(red.attrs["method"], bytes)
                             else red.attrs["method"], "pod")
            self.assertEqual(int(red.attrs["r"]), ORDER)
            self.assertEqual(int(red.attrs["training_snapshots"]), X.shape[1])
            sv = np.asarray(f["/reduction/pod_singular_values"])
            V_mor = np.asarray(f["/reduction/V"])
            reduced = {k: np.asarray(f["/reduction/reduced/" + k]) for k in "EABCD"}
        self.assertEqual(X.shape[0], 371)

        # The reference: SciPy's SVD of the same snapshots, the rail's matrices read by SciPy.
        U, s, _ = scipy.linalg.svd(X, full_matrices=False, lapack_driver="gesvd")
        self.assertGreater(s[ORDER - 1] / s[0], 1e-4, "the order's modes must be resolved")
        self.assertClose(sv, s, REFERENCE_RTOL, "singular values (all computed)")
        V_ref, _ = sign_normalised(U[:, :ORDER])
        V_got, signs = sign_normalised(V_mor)
        self.assertClose(V_got, V_ref, REFERENCE_RTOL, "POD basis V")

        m = scipy.io.loadmat(RAIL)
        E, A = m["E"].tocsr(), m["A"].tocsr()
        B, C = np.asarray(m["B"]), np.asarray(m["C"])
        expected = {"E": V_ref.T @ (E @ V_ref), "A": V_ref.T @ (A @ V_ref), "B": V_ref.T @ B,
                    "C": C @ V_ref, "D": np.zeros((C.shape[0], B.shape[1]))}
        # mor's reduced matrices belong to its own signs: V_got = V_mor diag(signs).
        S = np.diag(signs)
        got = {"E": S @ reduced["E"] @ S, "A": S @ reduced["A"] @ S, "B": S @ reduced["B"],
               "C": reduced["C"] @ S, "D": reduced["D"]}
        for k in "EABC":
            self.assertClose(got[k], expected[k], REFERENCE_RTOL, f"{k}_r")
        self.assertTrue(np.all(got["D"] == 0.0), "D_r = D = 0")

    def test_second_order_pod_galerkin_matches_scipy_on_the_same_snapshots(self):
        # A damped chain of 20 masses written here as a second-order model file; POD of its
        # position snapshots must give M_r = V^T M V, D_r, K_r, B_r, Cp_r, Cv_r.
        d, n, r = self.dir, 20, 6
        T = scipy.sparse.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
        M = scipy.sparse.identity(n, format="csc")
        K = scipy.sparse.csc_matrix(T)
        D = scipy.sparse.csc_matrix(0.2 * M + 0.2 * K)
        B = np.zeros((n, 1))
        B[-1, 0] = 1.0
        Cp = B.T.copy()
        Cv = np.zeros((1, n))
        Cv[0, 0] = 1.0
        model = os.path.join(d, "chain20.mat")
        scipy.io.savemat(model, {"M": M, "D": D, "K": K, "B": B, "Cp": Cp, "Cv": Cv})
        chirp = 'type = "chirp"\namplitude = 1.0\nf0 = 0.0\nf1 = 0.3\nt1 = 40.0'

        def second_order_experiment(path, output, reduction, snapshots):
            with open(path, "w") as f:
                f.write(f"""[experiment]\nname = "chain20"\noutput = "{output}"
[model]\ntype = "file"\npath = "{model}"
[input]\n{chirp if snapshots else STEP}
[simulation]\nintegrator = "implicit_midpoint"\ndt = 0.1\nt_end = 40.0
[output]\nplots = false\nsnapshot_stride = {2 if snapshots else 0}\nsnapshot_fields = ["p"]
[reduction]\n{reduction}
[analysis]\nhinf = false\nbode_points = 0\n""")

        snap = os.path.join(d, "chain20_snapshots.h5")
        second_order_experiment(os.path.join(d, "c1.toml"), snap, 'method = "none"', True)
        mor("run", os.path.join(d, "c1.toml"), "-q")
        pod = os.path.join(d, "chain20_pod.h5")
        second_order_experiment(os.path.join(d, "c2.toml"), pod,
                                f'method = "pod"\norder = {r}\npod_method = "svd"\n'
                                f'training_files = ["{snap}"]\nstore_bases = true', False)
        mor("run", os.path.join(d, "c2.toml"), "-q")
        with h5py.File(snap, "r") as f:
            X = np.asarray(f["/snapshots/p"]).T
        with h5py.File(pod, "r") as f:
            V_mor = np.asarray(f["/reduction/V"])
            reduced = {k: np.asarray(f["/reduction/reduced/" + k])
                       for k in ("M", "D", "K", "B", "Cp", "Cv")}
        U, s, _ = scipy.linalg.svd(X, full_matrices=False, lapack_driver="gesvd")
        self.assertGreater(s[r - 1] / s[0], 1e-4, "the order's modes must be resolved")
        V_ref, _ = sign_normalised(U[:, :r])
        V_got, signs = sign_normalised(V_mor)
        self.assertClose(V_got, V_ref, REFERENCE_RTOL, "second order: POD basis V")
        S = np.diag(signs)
        for name, X_full in (("M", M), ("D", D), ("K", K)):
            self.assertClose(S @ reduced[name] @ S, V_ref.T @ (X_full @ V_ref), REFERENCE_RTOL,
                             f"{name}_r")
        self.assertClose(S @ reduced["B"], V_ref.T @ B, REFERENCE_RTOL, "B_r")
        self.assertClose(reduced["Cp"] @ S, Cp @ V_ref, REFERENCE_RTOL, "Cp_r")
        self.assertClose(reduced["Cv"] @ S, Cv @ V_ref, REFERENCE_RTOL, "Cv_r")

    def test_output_error_on_an_unseen_input_falls_with_the_order(self):
        d = self.dir
        errors = []
        for r in (2, 4, 8):
            out = os.path.join(d, f"pod{r}.h5")
            toml = os.path.join(d, f"pod{r}.toml")
            # The last run also builds r = 2 and 4 from its nested basis (compare_orders).
            compare = "\ncompare_orders = [2, 4]" if r == 8 else ""
            experiment(toml, f"pod{r}", out,
                       f'method = "pod"\norder = {r}\ntraining_stride = 2{compare}', STEP,
                       training="[[training]]\n" + CHIRP)
            mor("run", toml, "-q")
            with h5py.File(out, "r") as f:
                errors.append(float(f["/error"].attrs["relative_l2"]))
                self.assertEqual(int(f["/reduction"].attrs["r"]), r)
                self.assertEqual(int(f["/reduction"].attrs["training_runs"]), 1)
                if compare:
                    self.assertEqual(list(f["/error_vs_r/r"][:]), [2.0, 4.0, 8.0])
                    nested = np.asarray(f["/error_vs_r/relative_l2"])
        # The same training, POD and integrator: the separate runs and the nested orders of one
        # run differ by rounding only.
        self.assertClose(nested, errors, 1e-8, "/error_vs_r against the separate runs")
        print("relative output error on the step (trained on a chirp), r = 2, 4, 8:",
              ", ".join(f"{e:.3e}" for e in errors))
        for i in range(1, len(errors)):
            self.assertLess(errors[i], errors[i - 1], f"error at r index {i} did not fall: {errors}")
        self.assertLess(errors[-1], 0.05, f"r = 8 relative output error {errors[-1]:.3e}")


class PodLtiRefusals(unittest.TestCase):
    """Keys that mean nothing for an LTI model are refused by name, exit 2, nothing written."""

    def test_hyper_reduction_keys_and_position_snapshots_are_refused_by_name(self):
        with tempfile.TemporaryDirectory(prefix="test_pod_lti.") as d:
            out = os.path.join(d, "refused.h5")
            toml = os.path.join(d, "refused.toml")
            experiment(toml, "refused", out, 'method = "pod"\norder = 4', STEP,
                       training="[[training]]\n" + CHIRP)
            cases = [("reduction.deim_order=4", ["deim_order", "linear"]),
                     ("reduction.nonlinear=\"full\"", ["nonlinear", "linear"]),
                     ('reduction.pod_snapshots=["p", "v"]', ["pod_snapshots", "state x"]),
                     ('reduction.method="empirical_bt"', ["empirical_bt", "exact Gramians"]),
                     ('reduction.method="differential_balancing"',
                      ["differential_balancing", "Lyapunov Gramians"])]
            for override, needles in cases:
                result = subprocess.run([MOR, "run", toml, "-q", "--set", override], cwd=ROOT,
                                        capture_output=True, text=True)
                self.assertEqual(result.returncode, 2, f"{override}: {result.stderr}")
                for needle in needles:
                    self.assertIn(needle, result.stderr, override)
                self.assertNotIn('model.type = "file"', result.stderr, override)
                self.assertFalse(os.path.exists(out), override)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        MOR = sys.argv.pop(1)
    if not MOR:
        sys.exit("usage: test_pod_lti.py MOR_BINARY (or set MOR)")
    unittest.main(verbosity=2)
