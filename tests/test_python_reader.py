#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""python/mor_results.py against results files that the built `mor` writes in this test.

Usage: /usr/bin/python3 tests/test_python_reader.py MOR_BINARY
(run by ctest as `python_reader`; MOR_BINARY may also come from the environment variable MOR).

Each check compares what the reader returns with an independent fact: the experiment's
configuration (sizes, strides, horizon), another dataset of the same file (outputs against
snapshots, the error against full minus reduced outputs, the bound against the Hankel singular
values, a sweep's table against its points), or a closed form (the pendulum's poles). About
3 s: a BT run of the chain (N = 200), a POD run (N = 100), the A01 pendulum over 2 s and the
default sweep at N = 100.
"""
import math
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
import mor_results  # noqa: E402

MOR = os.environ.get("MOR", "")
EPS = np.finfo(float).eps
# Values the file stores and the reader returns as they are (no arithmetic in between), compared
# with the same values recomputed here from other datasets: only rounding of the recomputation.
RECOMPUTED_RTOL = 1e-12

# The BT run: sizes chosen so that no stride divides the number of steps.
BT = dict(N=200, dt=0.05, t_end=20.0, output_stride=3, snapshot_stride=7, outputs=[50, 200],
          order=12)


def mor(*args):
    """Run the mor program; fail the test with its output if it fails."""
    result = subprocess.run([MOR, *args], cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"mor {' '.join(args)} exited with {result.returncode}:\n"
                             f"{result.stdout}{result.stderr}")


def stored_steps(steps, stride):
    """The steps a stream of stride `stride` stores: every stride-th and the last."""
    kept = list(range(0, steps + 1, stride))
    return kept if kept[-1] == steps else kept + [steps]


class Files:
    """The results files, written once for every test."""
    tmp = None

    @classmethod
    def make(cls):
        if cls.tmp is not None:
            return
        cls.tmp = tempfile.TemporaryDirectory(prefix="test_python_reader.")
        d = cls.tmp.name
        cls.bt = os.path.join(d, "bt.h5")
        mor("run", "experiments/bt_chain.toml", "-o", cls.bt, "--no-plots", "-q",
            "--set", f"model.N={BT['N']}", "--set", f"simulation.dt={BT['dt']}",
            "--set", f"simulation.t_end={BT['t_end']}",
            "--set", f"output.output_stride={BT['output_stride']}",
            "--set", f"output.snapshot_stride={BT['snapshot_stride']}",
            "--set", f"model.outputs={BT['outputs']}", "--set", f"reduction.order={BT['order']}",
            "--set", "analysis.hinf=false")
        cls.pod = os.path.join(d, "pod.h5")
        mor("run", "experiments/pod_deim_chain.toml", "-o", cls.pod, "--no-plots", "-q",
            "--set", "model.N=100", "--set", "simulation.t_end=20", "--set", "reduction.order=10",
            "--set", "reduction.compare_orders=[4, 8]", "--set", "reduction.store_bases=true")
        cls.a01 = os.path.join(d, "a01.h5")
        mor("run", "experiments/a01_pendulum.toml", "-o", cls.a01, "--no-plots", "-q",
            "--set", "simulation.t_end=2", "--set", "linear.t_end=2")
        cls.sweep = os.path.join(d, "sweep.h5")
        mor("sweep", "experiments/default_sweep.toml", "--no-plots", "-q", "-j", "2",
            "--set", "sweep.N=[100]", "--set", f'sweep.output="{cls.sweep}"')


class ReaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Files.make()

    def assertClose(self, actual, expected, rtol, what):
        actual, expected = np.asarray(actual, float), np.asarray(expected, float)
        self.assertEqual(actual.shape, expected.shape, f"{what}: shapes")
        scale = max(float(np.max(np.abs(expected), initial=0.0)), np.finfo(float).tiny)
        err = float(np.max(np.abs(actual - expected), initial=0.0))
        self.assertLessEqual(err, rtol * scale, f"{what}: largest difference {err:.3e} > "
                             f"{rtol:g} x {scale:.3e}\nread:     {actual.ravel()[:6]}\n"
                             f"expected: {expected.ravel()[:6]}")


class RunTest(ReaderTest):
    def setUp(self):
        self.run = mor_results.load(Files.bt)

    def test_kind_and_configuration(self):
        self.assertIsInstance(self.run, mor_results.Run)
        self.assertEqual(mor_results.kind(Files.bt), "run")
        self.assertEqual(self.run.config["model"]["N"], BT["N"])
        self.assertEqual(self.run.model["N"], BT["N"])
        self.assertEqual(list(self.run.model["outputs"]), BT["outputs"])
        self.assertEqual(self.run.provenance["format"], mor_results.FORMAT)

    def test_output_shapes_and_times_follow_the_configuration(self):
        steps = round(BT["t_end"] / BT["dt"])
        self.assertEqual(self.run.simulation["steps"], steps)
        kept = stored_steps(steps, BT["output_stride"])
        n_in = len(self.run.model["inputs"])
        self.assertEqual(self.run.t.shape, (len(kept),))
        self.assertEqual(self.run.u.shape, (len(kept), n_in))
        self.assertEqual(self.run.y.shape, (len(kept), len(BT["outputs"])))
        self.assertEqual(self.run.reduced_y.shape, self.run.y.shape)
        self.assertEqual(self.run.error_y.shape, self.run.y.shape)
        self.assertClose(self.run.t, np.array(kept) * BT["dt"], 1e-13, "output times")

    def test_snapshots_follow_the_configuration_and_match_the_outputs(self):
        steps = round(BT["t_end"] / BT["dt"])
        kept = stored_steps(steps, BT["snapshot_stride"])
        self.assertEqual(self.run.snapshot_fields, ("p", "v"))
        self.assertEqual(self.run.snapshot_shape("p"), (len(kept), BT["N"]))
        self.assertClose(self.run.snapshot_t, np.array(kept) * BT["dt"], 1e-13, "snapshot times")
        self.assertEqual(self.run.energy.shape, (len(kept),))
        # y_2 is the position of mass 200: at the steps both streams store, it equals p_200.
        out_steps = stored_steps(steps, BT["output_stride"])
        common = sorted(set(out_steps) & set(kept))
        self.assertGreater(len(common), 5)
        y_rows = [out_steps.index(s) for s in common]
        p_rows = [kept.index(s) for s in common]
        p = self.run.snapshots("p", rows=p_rows, cols=slice(BT["N"] - 1, BT["N"]))
        self.assertClose(p[:, 0], self.run.y[y_rows, 1], 0.0, "p_200 against y_2")

    def test_partial_snapshot_reads_are_slices_of_the_whole(self):
        whole = self.run.snapshots("v")
        part = self.run.snapshots("v", rows=slice(1, None, 4), cols=slice(150, 190, 3))
        self.assertClose(part, whole[1::4, 150:190:3], 0.0, "strided read")
        with self.assertRaises(mor_results.ResultsError):
            self.run.snapshots("x")

    def test_error_is_full_minus_reduced(self):
        expected = self.run.y - self.run.reduced_y
        self.assertClose(self.run.error_y, expected, 4 * EPS, "/error/y against y - y_r")
        rel = np.linalg.norm(expected) / np.linalg.norm(self.run.y)
        self.assertClose(self.run.error["relative_l2"], rel, RECOMPUTED_RTOL, "relative_l2")
        self.assertClose(self.run.error["max_abs"], np.max(np.abs(expected)), RECOMPUTED_RTOL,
                         "max_abs")

    def test_reduced_matrices_have_the_reduced_order(self):
        red = self.run.reduction
        r, m, p = BT["order"], self.run.u.shape[1], self.run.y.shape[1]
        self.assertEqual((red.method, red.r), ("bt", r))
        shapes = {name: a.shape for name, a in red.matrices.items()}
        self.assertEqual(shapes, {"E": (r, r), "A": (r, r), "B": (r, m), "C": (p, r),
                                  "D": (p, m)})
        self.assertEqual(self.run.reduced["r"], r)

    def test_bound_is_twice_the_sum_of_the_discarded_hankel_singular_values(self):
        red = self.run.reduction
        hsv = red.singular_values["hsv"]
        self.assertGreater(len(hsv), red.r)
        self.assertTrue(np.all(np.diff(hsv) <= 0), "Hankel singular values not descending")
        self.assertClose(red.attrs["error_bound"], 2 * np.sum(hsv[red.r:]), RECOMPUTED_RTOL,
                         "error_bound")
        for name, solver in red.gramian_solvers.items():
            self.assertEqual(len(solver.residuals), solver.attrs["iterations"], name)
            self.assertEqual(solver.shifts.shape, (solver.attrs["iterations"], 2), name)

    def test_analysis_grid(self):
        a = self.run.analysis
        n = self.run.config["analysis"]["bode_points"]
        for values in (a.omega, a.sigma_full, a.sigma_reduced, a.sigma_error):
            self.assertEqual(values.shape, (n,))
        self.assertClose(a.omega[[0, -1]], [self.run.config["analysis"]["omega_min"],
                                            self.run.config["analysis"]["omega_max"]], 1e-12,
                         "frequency grid ends")


class PodTest(ReaderTest):
    def setUp(self):
        self.run = mor_results.load_run(Files.pod)

    def test_error_against_r(self):
        e = self.run.error_vs_r
        self.assertEqual(list(e.r), [4, 8, 10])
        for values in (e.m, e.relative_l2, e.max_abs, e.reduced_step_s):
            self.assertEqual(values.shape, e.r.shape)
        main = list(e.r).index(self.run.reduction.r)
        self.assertClose(e.relative_l2[main], self.run.error["relative_l2"], RECOMPUTED_RTOL,
                         "the main order's row against /error")

    def test_basis_and_samples(self):
        red, N = self.run.reduction, self.run.model["N"]
        V = red.bases["V"]
        self.assertEqual(V.shape, (N, red.r))
        self.assertClose(V.T @ V, np.eye(red.r), 1e-12, "V^T V")
        masses = red.deim_masses
        self.assertEqual(len(masses), red.attrs["m"])
        self.assertEqual(len(set(masses.tolist())), len(masses), "DEIM masses repeat")
        self.assertTrue(np.all((masses >= 1) & (masses <= N)), "DEIM masses outside 1..N")
        s = red.singular_values["pod_singular_values"]
        self.assertClose(red.attrs["captured_energy"], np.sum(s[:red.r] ** 2) / np.sum(s ** 2),
                         RECOMPUTED_RTOL, "captured energy")


class MultibodyTest(ReaderTest):
    def setUp(self):
        self.run = mor_results.load(Files.a01)

    def test_benchmark_against_exact_solution(self):
        run = self.run
        self.assertIsInstance(run, mor_results.MultibodyRun)
        n_t = len(run.benchmark_t)
        self.assertEqual(run.benchmark_y.shape, (n_t, len(run.output_names)))
        self.assertEqual(run.output_names, ["P1_x", "P1_y"])
        self.assertEqual(run.y_exact.shape, run.benchmark_y.shape)
        self.assertClose(run.benchmark_t[-1], 2.0, 1e-14, "horizon")
        self.assertClose(run.benchmark["exact_error"],
                         np.max(np.abs(run.benchmark_y - run.y_exact)), RECOMPUTED_RTOL,
                         "exact_error against max |y - y_exact|")
        for series in (run.energy, run.energy_balance, run.constraint_residual):
            self.assertEqual(series.shape, (n_t,))

    def test_linear_model_poles(self):
        lin = self.run.linear
        k_over_m = lin.matrices["K"][0, 0] / lin.matrices["M"][0, 0]
        self.assertClose(np.sort(lin.poles.imag), [-math.sqrt(k_over_m), math.sqrt(k_over_m)],
                         1e-12, "poles +-i sqrt(K / M)")
        self.assertEqual(self.run.reduced_y.shape, lin.response_y.shape)


class SweepTest(ReaderTest):
    def setUp(self):
        self.sweep = mor_results.load(Files.sweep)

    def test_table_against_points(self):
        sweep = self.sweep
        self.assertIsInstance(sweep, mor_results.Sweep)
        rows = sweep.provenance["points_total"]
        for name, values in sweep.table.items():
            self.assertEqual(values.shape, (rows,), f"column {name}")
        self.assertEqual(len(set(sweep.keys)), rows)
        self.assertTrue(sweep.done.all(), f"status: {list(sweep.table['status'])}")
        for i, key in enumerate(sweep.keys):
            point = sweep.point(key)
            self.assertEqual(point.group, f"/points/{key}")
            self.assertEqual(point.model["N"], sweep.table["N"][i])
            self.assertEqual(point.reduction.r, sweep.table["r"][i], key)
            self.assertEqual(point.sweep_point["key"], key)
            self.assertClose(sweep.table["output_error"][i], point.error["relative_l2"], 0.0,
                             f"{key}: output_error")
        with self.assertRaises(mor_results.ResultsError):
            sweep.point("no_such_point")

    def test_tolerance_columns(self):
        tols = self.sweep.provenance["tolerances"]
        for k, tol in enumerate(tols):
            self.assertEqual(self.sweep.column_attrs[f"r_for_tol_{k}"]["tolerance"], tol)


class ErrorsTest(unittest.TestCase):
    def test_foreign_and_wrong_kind(self):
        Files.make()
        foreign = os.path.join(Files.tmp.name, "foreign.h5")
        with h5py.File(foreign, "w") as f:
            f.attrs["format"] = "something-else"
            f["outputs/t"] = np.zeros((2, 1))
        for path, words in ((foreign, "not a mor results file"),
                            (os.path.join(Files.tmp.name, "missing.h5"), "no such file"),
                            (__file__, "cannot read results file")):
            with self.assertRaises(mor_results.ResultsError) as caught:
                mor_results.load(path)
            self.assertIn(words, str(caught.exception))
            self.assertIn(os.path.basename(path), str(caught.exception))
        with self.assertRaises(mor_results.ResultsError) as caught:
            mor_results.load_sweep(Files.bt)
        self.assertIn("is a run results file, not a sweep one", str(caught.exception))

    def test_paths_table(self):
        paths = list(mor_results.PATHS.values())
        self.assertTrue(all(p.startswith("/") for p in paths))
        self.assertEqual(len(paths), len(set(paths)), "a path named twice in PATHS")


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        MOR = sys.argv.pop(1)
    if not MOR or not os.access(MOR, os.X_OK):
        sys.exit(f"test_python_reader.py: the mor program '{MOR}' is not executable (pass "
                 "its path as the first argument or in MOR)")
    MOR = os.path.abspath(MOR)
    try:
        unittest.main(verbosity=1)
    finally:
        if Files.tmp is not None:
            Files.tmp.cleanup()
