# SPDX-License-Identifier: GPL-3.0-or-later
"""mor.Signal: the input signals of experiment files from Python. Their constructors come from
the runner's declarations; their values agree with the waveforms' formulas; mor.simulate with a
signal gives the run of the same experiment file (mor.run) and the run with the equivalent
callable; bad keys and values raise ValueError naming both. Also the summary of a linear method
applied to a nonlinear model (issue 27): it names the linearisation as `mor run` does."""
import inspect
import subprocess

import numpy as np
import pytest

import mor
from conftest import data

# Two runs of the same model, integrator, steps and input in one process: the same arithmetic,
# so they agree to rounding (observed: bitwise); this is the margin allowed, relative to max |y|.
SAME_RUN = 1e-12
TWO_PI = 2 * np.pi


# --- the objects ---------------------------------------------------------------------------

def test_one_constructor_per_declared_type_with_its_keys_and_defaults():
    types = mor.signal_types()
    assert [t["name"] for t in types] == ["zero", "step", "sine", "chirp", "multisine", "table"]
    for t in types:
        make = getattr(mor, t["name"].capitalize())
        params = inspect.signature(make).parameters
        assert [p for p in params] == [k["name"] for k in t["keys"]], t["name"]
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
        if t["name"] != "table":  # a table needs its file
            sig = make()
            assert sig.type == t["name"] and list(sig.keys) == list(params)
            for name, p in params.items():
                assert sig.keys[name] == p.default, (t["name"], name, sig.keys[name], p.default)
        assert t["doc"] in make.__doc__


def test_repr_is_readable_and_makes_the_same_signal():
    sig = mor.Sine(amplitude=2.0, frequency=0.1)
    assert repr(sig) == "mor.Sine(amplitude=2.0, frequency=0.1, phase=0.0, offset=0.0)"
    again = eval(repr(sig), {"mor": mor})
    assert again.keys == sig.keys and again.type == sig.type
    ms = mor.Multisine(frequencies=[0.1, 0.3], seed=7)
    assert repr(ms) == "mor.Multisine(amplitude=1.0, frequencies=[0.1, 0.3], seed=7)"
    assert repr(mor.Zero()) == "mor.Zero()"
    assert mor.signal("chirp", f1=0.2).keys == mor.Chirp(f1=0.2).keys
    assert mor.Signal("chirp", f1=0.2).keys == mor.Chirp(f1=0.2).keys
    assert sig.describe() == "sine(amplitude=2, frequency=0.1 Hz, phase=0, offset=0)"
    import tomllib

    assert tomllib.loads(sig.toml()) == dict(sig.keys, type="sine")


def test_values_against_the_waveforms_formulas():
    """Each waveform against its formula in docs/keys.md, at a scalar and on an array of times;
    1e-12 absolute for amplitudes of order 1 (the two sides round differently)."""
    t = np.linspace(0.0, 30.0, 601)
    cases = [
        (mor.Sine(amplitude=2.0, frequency=0.3, phase=0.4, offset=-1.0),
         2.0 * np.sin(TWO_PI * 0.3 * t + 0.4) - 1.0),
        (mor.Step(amplitude=1.5, t_on=2.0), np.where(t >= 2.0, 1.5, 0.0)),
        (mor.Zero(), np.zeros_like(t)),
        # The linear chirp: phase 2 pi (f0 t + (f1 - f0) t^2 / (2 t1)) up to t1, then f1.
        (mor.Chirp(amplitude=0.5, f0=0.1, f1=0.6, t1=20.0),
         0.5 * np.sin(TWO_PI * np.where(
             t <= 20.0, 0.1 * t + 0.5 * (0.5 / 20.0) * t**2,
             (0.1 * 20.0 + 0.5 * 0.5 * 20.0) + 0.6 * (t - 20.0)))),
    ]
    for sig, expected in cases:
        u = sig(t)
        assert u.shape == t.shape
        err = np.max(np.abs(u - expected))
        assert err <= 1e-12, f"{sig!r}: max |u - formula| = {err:.3e}"
        assert isinstance(sig(3.0), float) and abs(sig(3.0) - expected[60]) <= 1e-12
    grid = sig(t[:600].reshape(3, -1))
    assert grid.shape == (3, 200)


def test_multisine_is_seeded_and_has_its_mean_square():
    """amplitude / sqrt(K) sum_k sin(2 pi f_k t + phi_k): over a common period (100 s for
    0.01 ... 0.2 Hz) the mean square is amplitude^2 / 2 whatever the phases."""
    a, b = mor.Multisine(amplitude=2.0, seed=3), mor.Multisine(amplitude=2.0, seed=3)
    t = np.arange(0.0, 100.0, 0.01)
    ua = a(t)
    assert np.array_equal(ua, b(t))
    assert not np.allclose(ua, mor.Multisine(amplitude=2.0, seed=4)(t))
    ms = np.mean(ua**2)
    assert abs(ms - 2.0) <= 1e-9, f"mean square {ms!r}, expected 2"


def test_table_signal_has_its_columns(tmp_path):
    f = tmp_path / "u.csv"
    f.write_text("# t u1 u2\n0 0 10\n2 4 30\n")
    sig = mor.Table(file=f)
    assert sig.channels == 2
    assert np.allclose(sig(1.0), [2.0, 20.0], rtol=0, atol=1e-15)
    assert sig(np.array([0.0, 1.0, 5.0])).shape == (3, 2)
    assert sig.keys["file"] == str(f)


@pytest.mark.parametrize("make, match", [
    (lambda: mor.Sine(frequncy=0.1),
     r"unknown key frequncy=0\.1 for a sine signal; did you mean frequency\?"),
    (lambda: mor.Sine(freq=0.1), r"unknown key freq=0\.1 for a sine signal \(its keys: amplitude, "
                                 r"frequency, phase, offset\)"),
    (lambda: mor.Step(frequency=0.1), r"unknown key frequency=0\.1 for a step signal"),
    (lambda: mor.Zero(amplitude=1), r"unknown key amplitude=1 for a zero signal.*none"),
    (lambda: mor.Sine(frequency="fast"), r"signal\.frequency must be a number, got 'fast'"),
    (lambda: mor.Sine(frequency=-0.5), r"frequency must be >= 0 Hz, got -0\.5"),
    (lambda: mor.Sine(amplitude=float("nan")), r"amplitude must be finite, got nan"),
    (lambda: mor.Chirp(t1=0.0), r"t1 must be > 0, got 0"),
    (lambda: mor.Multisine(seed=-3), r"seed must be >= 0, got -3"),
    (lambda: mor.Multisine(frequencies=[]), r"at least one frequency"),
    (lambda: mor.signal("sin"), r"'sin' is not a known signal .*did you mean 'sine'"),
    (lambda: mor.Table(), r"needs signal\.file"),
    (lambda: mor.Sine()(float("nan")), r"t = nan is not finite"),
])
def test_bad_keys_and_values_raise_value_error_naming_them(make, match):
    with pytest.raises(ValueError, match=match) as e:
        make()
    print(e.value)  # the message, for the log


def test_missing_table_file_raises_os_error(tmp_path):
    with pytest.raises(OSError, match="missing.csv"):
        mor.Table(file=tmp_path / "missing.csv")


# --- mor.simulate with a signal: the experiment file's run ---------------------------------

def experiment(tmp_path, model, input_lines, t_end=20.0, dt=0.05, reduction='method = "none"'):
    path = tmp_path / "signal_run.toml"
    path.write_text(f"""
[experiment]
name = "signal_run"
output = "{tmp_path / 'signal_run.h5'}"

[model]
{model}

[input]
{input_lines}

[simulation]
integrator = "implicit_midpoint"
dt = {dt}
t_end = {t_end}

[output]
output_stride = 1
snapshot_stride = 0
plots = false

[reduction]
{reduction}

[analysis]
h2 = false
hinf = false
bode_points = 0
""")
    return path


def assert_same_run(y, y_ref, what):
    scale = np.max(np.abs(y_ref))
    err = np.max(np.abs(y - y_ref))
    assert scale > 0 and err <= SAME_RUN * scale, f"{what}: max |y - y_file| = {err:.3e}, " \
                                                  f"max |y_file| = {scale:.3e}"


SIGNALS = [mor.Sine(amplitude=2.0, frequency=0.2, phase=0.3, offset=0.1),
           mor.Chirp(amplitude=1.5, f0=0.05, f1=0.5, t1=15.0),
           mor.Step(amplitude=0.7, t_on=3.0),
           mor.Multisine(amplitude=1.0, frequencies=[0.05, 0.2, 0.4], seed=5)]


@pytest.mark.parametrize("sig", SIGNALS, ids=[s.type for s in SIGNALS])
def test_signal_run_equals_the_experiment_files_run(tmp_path, sig):
    """The nonlinear chain (N = 20, k_n = 2), 400 implicit-midpoint steps: the file's [input]
    with the signal's keys, and mor.simulate with the signal; then the same with a callable."""
    keys = {"N": 20, "k_n": 2.0}
    run = mor.run(experiment(tmp_path, 'type = "mass_spring_chain"\nN = 20\nk_n = 2.0', sig.toml()))
    t, y = mor.simulate(mor.Chain(**keys), sig, t_end=20.0, dt=0.05)
    assert np.array_equal(t, run.t)
    assert_same_run(y, run.y, f"{sig!r} against the file")
    # The recorded input is the signal's value.
    assert np.max(np.abs(run.u[:, 0] - sig(run.t))) <= 1e-14 * max(1.0, np.max(np.abs(run.u)))
    # The equivalent Python callable (for the sine an independent formula).
    if sig.type == "sine":
        k = sig.keys
        f = lambda t: k["amplitude"] * np.sin(TWO_PI * k["frequency"] * t + k["phase"]) + k["offset"]  # noqa: E731,E501
    else:
        f = lambda t: sig(t)  # noqa: E731
    _, y_callable = mor.simulate(mor.Chain(**keys), f, t_end=20.0, dt=0.05)
    assert_same_run(y_callable, run.y, f"{sig!r} as a callable")


def test_lti_file_model_with_a_chirp_on_its_seven_inputs(tmp_path):
    """The rail (n = 371, 7 inputs, 6 outputs) read by the file kind: the file's run with a chirp
    on every input against mor.load_model + mor.simulate with mor.Chirp."""
    sig = mor.Chirp(amplitude=1.0, f0=0.0, f1=0.05, t1=50.0)
    rail = data("rail_371.mat")
    run = mor.run(experiment(tmp_path, f'type = "file"\npath = "{rail}"', sig.toml(),
                             t_end=50.0, dt=0.5))
    t, y = mor.simulate(mor.load_model(rail), sig, t_end=50.0, dt=0.5)
    assert y.shape == run.y.shape == (101, 6)
    assert_same_run(y, run.y, "rail_371 chirp")


def test_multi_input_one_signal_per_input_or_all_alike(tmp_path):
    """A chain with inputs at masses 1 and 20: the file's sine drives both, as the signal alone
    and the list [sig, sig] do; {0: sig}, [sig, None], [sig, 0.0] and a callable drive mass 1
    only, alike, and differently from both."""
    sig = mor.Sine(amplitude=1.0, frequency=0.15)
    model = 'type = "mass_spring_chain"\nN = 20\nk_n = 2.0\ninputs = [1, 20]\noutputs = [1, 20]'
    run = mor.run(experiment(tmp_path, model, sig.toml()))
    chain = mor.Chain(N=20, k_n=2.0, inputs=[1, 20], outputs=[1, 20])
    go = lambda u: mor.simulate(chain, u, t_end=20.0, dt=0.05)[1]  # noqa: E731
    assert_same_run(go(sig), run.y, "sine on both inputs")
    assert_same_run(go([sig, sig]), run.y, "[sig, sig]")
    assert_same_run(go((sig, lambda t: sig(t))), run.y, "(sig, callable)")
    one = go({0: sig})
    for u in ([sig, None], [sig, 0.0], lambda t: [sig(t), 0.0]):
        assert_same_run(go(u), one, f"first input only: {u!r}")
    assert np.max(np.abs(one - run.y)) > 0.1 * np.max(np.abs(run.y))
    with pytest.raises(ValueError, match="u has 3 entries, one per input; the model has 2"):
        go([sig, sig, sig])
    with pytest.raises(ValueError, match=r"u\[2\]: the model has 2 input\(s\)"):
        go({2: sig})


def test_table_of_two_columns_drives_two_inputs_as_the_file(tmp_path):
    f = tmp_path / "u.csv"
    t = np.arange(0.0, 20.01, 0.5)
    np.savetxt(f, np.column_stack([t, np.sin(0.3 * t), np.cos(0.7 * t)]), delimiter=",")
    sig = mor.Table(file=f)
    model = 'type = "mass_spring_chain"\nN = 20\nk_n = 2.0\ninputs = [1, 20]'
    run = mor.run(experiment(tmp_path, model, sig.toml()))
    chain = mor.Chain(N=20, k_n=2.0, inputs=[1, 20])
    _, y = mor.simulate(chain, sig, t_end=20.0, dt=0.05)
    assert_same_run(y, run.y, "two-column table")
    with pytest.raises(ValueError, match="table of 2 columns; an entry of u drives one input"):
        mor.simulate(chain, [sig, None], t_end=1.0, dt=0.05)
    with pytest.raises(ValueError, match="has 2 value columns; the model has 1 input"):
        mor.simulate(mor.Chain(N=20), sig, t_end=1.0, dt=0.05)


def test_signals_as_training_runs_of_reduce():
    """experiment={'training': [mor.Chirp(...)]} is the [[training]] table of its keys."""
    chain = mor.Chain(N=30, k_n=0.0)
    sim = {"t_end": 20.0, "dt": 0.1}
    a = mor.reduce(chain, "pod", order=4, experiment={
        "simulation": sim, "training": [mor.Chirp(f1=0.3, t1=20.0), mor.Step()]})
    b = mor.reduce(chain, "pod", order=4, experiment={
        "simulation": sim, "training": [{"type": "chirp", "f1": 0.3, "t1": 20.0},
                                        {"type": "step"}]})
    assert np.array_equal(a.hsv, b.hsv)


# --- issue 27: a linear method on a nonlinear model says that it reduced the linearisation --

def test_linear_method_on_a_nonlinear_model_names_the_linearisation(tmp_path):
    """mor.reduce(nonlinear chain, "bt") reduces its linearisation about rest: the summary and
    the repr say so in the words of `mor run`'s summary line, which the program prints for the
    same file; the linear chain's do not."""
    rom = mor.reduce(mor.Chain(N=30, k_n=2.0), "bt", order=4)
    assert rom.linearisation.startswith("rest (q = v = 0")
    assert f"reduced by bt of the linearisation about {rom.linearisation}>" in repr(rom)
    line = rom.summary().splitlines()[0]
    assert line == f"reduced   bt of the linearisation about {rom.linearisation}, r = 4"
    assert rom.info["reduces"] == f"the linearisation about {rom.linearisation}"
    from mor import _build

    path = experiment(tmp_path, 'type = "mass_spring_chain"\nN = 30\nk_n = 2.0', 'type = "sine"',
                      t_end=5.0, reduction='method = "bt"\norder = 4\ntolerance = 0.0')
    out = subprocess.run([_build.PROGRAM, "run", str(path)], capture_output=True, text=True,
                         check=True).stdout
    printed = [s.strip() for s in out.splitlines() if s.strip().startswith("reduced")]
    assert len(printed) == 1 and printed[0].startswith(line + ":"), (printed, line)
    run = mor.results.load(tmp_path / "signal_run.h5")
    assert run.reduction.attrs["reduces"].startswith(rom.info["reduces"])

    linear = mor.reduce(mor.Chain(N=30, k_n=0.0), "bt", order=4)
    assert linear.linearisation is None and "linearisation" not in repr(linear)
    assert linear.summary().splitlines()[0] == "reduced   bt, r = 4"


def test_stub_has_the_signal_constructors():
    import ast
    import pathlib

    stub = pathlib.Path(mor.__file__).with_name("__init__.pyi").read_text()
    funcs = {f.name: f for f in ast.parse(stub).body if isinstance(f, ast.FunctionDef)}
    for t in mor.signal_types():
        f = funcs[t["name"].capitalize()]
        assert [a.arg for a in f.args.kwonlyargs] == [k["name"] for k in t["keys"]], t["name"]
    assert "signal" in funcs and "class Signal:" in stub


def test_a_numerical_failure_of_a_linearisation_names_it():
    """BT of the undamped pendulum's linearisation fails (its poles lie on the imaginary axis):
    the message names the linearisation, as `mor run`'s does; modal reduces it."""
    pendulum = mor.model("pendulum")
    with pytest.raises(RuntimeError, match='^mor.reduce: "bt" of the linearisation about the '
                                           'hanging equilibrium: .*not stable'):
        mor.reduce(pendulum, "bt", order=1)
    rom = mor.reduce(pendulum, "modal", order=1)
    assert rom.linearisation == "the hanging equilibrium"
    assert rom.summary().startswith("reduced   modal of the linearisation about the hanging "
                                    "equilibrium, r = 1\noffline   ")


def test_summary_of_a_projection_is_mor_runs_line(tmp_path):
    """POD + Q-DEIM of the nonlinear chain trained on a chirp: rom.summary()'s first line is the
    start of the line `mor run` prints for the same file (order and DEIM points)."""
    from mor import _build

    train = mor.Chirp(f1=0.3, t1=20.0)
    rom = mor.reduce(mor.Chain(N=40, k_n=2.0), "pod", order=6, experiment={
        "simulation": {"t_end": 20.0, "dt": 0.1}, "training": [train]})
    line = rom.summary().splitlines()[0]
    assert line == "reduced   pod, r = 6 (12 DEIM points)"
    path = experiment(tmp_path, 'type = "mass_spring_chain"\nN = 40\nk_n = 2.0',
                      'type = "sine"', t_end=20.0, dt=0.1,
                      reduction='method = "pod"\norder = 6\n\n[[training]]\n' + train.toml())
    out = subprocess.run([_build.PROGRAM, "run", str(path)], capture_output=True, text=True,
                         check=True).stdout
    printed = [s.strip() for s in out.splitlines() if s.strip().startswith("reduced")]
    assert len(printed) == 1 and printed[0].startswith(line + ":"), (printed, line)
