# SPDX-License-Identifier: GPL-3.0-or-later
"""experiments/plot_results.py on parametric results files (docs/results.md#plots): small runs
of the chain (N = 200, t_end = 20, r = 10) over two parameters with the greedy, over three and
over one, and a run without [parameters]. The script writes validation_error.png,
validation_speedup.png and, for the greedy, greedy.png, each a real figure (not blank); a run
without [parameters] gets none of them. The figures show what the file holds: each axis in its
parameter's scale as the experiment file declares it, the validation points where
/validation/parameters puts them, coloured by log10 of their error, the training points and the
greedy's selections. About 10 s."""
import subprocess
import sys

import matplotlib.image
import numpy as np
import pytest

import mor
from conftest import SOURCE_DIR, python_env

sys.path.insert(0, str(SOURCE_DIR / "experiments"))
import plot_results  # noqa: E402

SCRIPT = SOURCE_DIR / "experiments" / "plot_results.py"
PARAMETRIC = ("validation_error.png", "validation_speedup.png")
SMALL = {"model.N": 200, "simulation.t_end": 20.0, "reduction.order": 10,
         "reduction.parameter_samples": 6, "validation.parameter_samples": 5,
         "output.plots": False}
# A blank figure is white; a figure with axes, markers and text covers a few percent of it.
MIN_INKED = 0.02
MIN_COLOURS = 30

# Three parameters of the chain, k_l on a linear scale between the two of parametric_chain.toml.
THREE = """
[experiment]
name = "three"
[model]
type = "mass_spring_chain"
N = 200
damping = "chain"
[parameters]
k_n = { min = 0.5, max = 4.0 }
d = { min = 0.2, max = 2.0, scale = "log" }
k_l = { min = 0.5, max = 2.0 }
[[training]]
type = "chirp"
f1 = 0.2
t1 = 20.0
[input]
type = "sine"
amplitude = 0.7
frequency = 0.033
[simulation]
integrator = "implicit_midpoint"
dt = 0.05
t_end = 20.0
[output]
snapshot_stride = 0
plots = false
[reduction]
method = "pod"
order = 10
parameter_samples = 6
[validation]
parameter_samples = 5
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    out = {}
    out["greedy"] = mor.run(SOURCE_DIR / "experiments" / "parametric_chain.toml",
                            set={**SMALL, "reduction.sampling": "greedy"},
                            output=d / "greedy.h5")
    (d / "three.toml").write_text(THREE)
    out["three"] = mor.run(d / "three.toml", output=d / "three.h5")
    (d / "one.toml").write_text(THREE.replace("k_n = { min = 0.5, max = 4.0 }\n", "")
                                .replace("k_l = { min = 0.5, max = 2.0 }\n", ""))
    out["one"] = mor.run(d / "one.toml", output=d / "one.h5")
    out["plain"] = mor.run(SOURCE_DIR / "experiments" / "pod_deim_chain.toml",
                           set={"model.N": 100, "simulation.t_end": 20.0,
                                "reduction.order": 8, "reduction.compare_orders": [],
                                "output.plots": False},
                           output=d / "plain.h5")
    return out


def plot(run, out_dir):
    """The script on a results file, as `mor run` calls it; the PNGs it wrote."""
    result = subprocess.run([sys.executable, str(SCRIPT), run.path, "--out", str(out_dir)],
                            capture_output=True, text=True, env=python_env())
    assert result.returncode == 0, result.stderr
    written = {line.rsplit("/", 1)[-1] for line in result.stdout.split()}
    assert written == {p.name for p in out_dir.glob("*.png")}, "stdout names every PNG"
    return written


def assert_figure(path):
    image = matplotlib.image.imread(path)[..., :3]
    assert image.shape[0] >= 400 and image.shape[1] >= 600, image.shape
    inked = np.mean(np.any(image < 0.95, axis=-1))
    assert inked >= MIN_INKED, f"{path.name}: {inked:.3%} of the pixels drawn"
    colours = len(np.unique((image * 255).astype(np.uint8).reshape(-1, 3), axis=0))
    assert colours >= MIN_COLOURS, f"{path.name}: {colours} colours"


def test_a_parametric_file_gets_its_figures_and_a_plain_one_none(files, tmp_path):
    greedy = plot(files["greedy"], tmp_path / "greedy")
    assert set(PARAMETRIC) | {"greedy.png"} <= greedy, greedy
    for name in (*PARAMETRIC, "greedy.png"):
        assert_figure(tmp_path / "greedy" / name)
    three = plot(files["three"], tmp_path / "three")
    assert set(PARAMETRIC) <= three and "greedy.png" not in three, three  # sampling = "all"
    plain = plot(files["plain"], tmp_path / "plain")
    assert "pod_sv.png" in plain and "reduced_outputs.png" in plain, plain
    assert not (set(PARAMETRIC) | {"greedy.png"}) & plain, plain


def test_the_reader_returns_the_domain_the_points_and_the_greedy(files):
    run = files["greedy"]
    par, val, red = run.parameters, run.validation, run.reduction
    assert par.names == sorted(par.names) == ["d", "k_n"]  # the file's [parameters], sorted
    assert list(par.log) == [True, False]  # d has scale = "log"
    assert val.parameter_names == par.names
    k = SMALL["validation.parameter_samples"]
    assert val.parameters.shape == (k, 2) and val.output_error.shape == (k,)
    inside = (val.parameters >= par.min) & (val.parameters <= par.max)
    assert inside.all(), val.parameters
    assert red.training_parameters.shape == (SMALL["reduction.parameter_samples"], 2)
    g = red.greedy
    assert g.selected == len(g.point) >= 1
    assert len(set(g.point)) == len(g.point), "each point selected once"
    assert 0 <= g.point.min() and g.point.max() < len(red.training_parameters)
    assert np.isnan(g.indicator[0]) and np.isnan(g.true_error[0]), "the first has neither"
    assert (np.diff(g.iteration) >= 0).all()
    assert run.config["reduction"]["sampling"] == "greedy"
    assert files["plain"].parameters is None and files["plain"].validation is None
    assert files["plain"].reduction.greedy is None


def test_the_map_shows_the_file_in_each_parameters_scale(files):
    run = files["greedy"]
    fig = plot_results.validation_error_figure(run, "t")
    ax = fig.axes[0]
    # parametric_chain.toml: d on a log scale (x, the first name), k_n on a linear one.
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "linear")
    assert ax.get_xlim()[0] < 0.2 and ax.get_xlim()[1] > 2.0
    val, red = run.validation, run.reduction
    points, train, selected = ax.collections[:3]
    np.testing.assert_array_equal(points.get_offsets(), val.parameters)
    np.testing.assert_allclose(points.get_array(), np.log10(val.output_error), rtol=1e-12)
    np.testing.assert_array_equal(train.get_offsets(), red.training_parameters)
    np.testing.assert_array_equal(selected.get_offsets(),
                                  red.training_parameters[red.greedy.point])


def test_panels_for_one_and_for_three_parameters(files):
    for name, scales in (("one", ["log"]), ("three", ["log", "linear", "linear"])):
        run = files[name]
        fig = plot_results.validation_error_figure(run, "t")
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_xscale() for ax in axes] == scales, name  # d, k_l, k_n (sorted)
        assert [ax.get_xlabel().split()[0] for ax in axes] == run.parameters.names
        for j, ax in enumerate(axes):
            assert ax.get_yscale() == "log"
            x, err = ax.lines[0].get_data()
            order = np.argsort(x)
            want = run.validation.parameters[:, j]
            np.testing.assert_array_equal(np.sort(x), np.sort(want))
            # The error plotted at each point is the file's error at that point.
            at = {float(a): float(b) for a, b in zip(want, run.validation.output_error)}
            assert all(np.isclose(at[float(a)], b, rtol=1e-12) for a, b in
                       zip(np.asarray(x)[order], np.asarray(err)[order]))
