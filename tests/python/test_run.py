# SPDX-License-Identifier: GPL-3.0-or-later
"""mor.run: an experiment file run in-process, read back by mor.results (python/mor_results.py)."""
import numpy as np

import mor
from conftest import SOURCE_DIR


def test_run_with_overrides(tmp_path):
    out = tmp_path / "bt.h5"
    stages = []
    run = mor.run(SOURCE_DIR / "experiments" / "bt_chain_light.toml",
                  progress=lambda stage, fraction: stages.append((stage, fraction)),
                  set={"model.N": 200, "reduction.order": 6, "reduction.tolerance": 0,
                       "simulation.t_end": 5.0, "output.plots": False,
                       "analysis.bode_points": 0, "analysis.hinf": False},
                  output=out)
    assert isinstance(run, mor.results.Run) and out.exists()
    names = [s for s, _ in stages]
    assert "reduction" in names and "full simulation" in names, names
    fractions = [f for s, f in stages if s == "full simulation"]
    assert fractions == sorted(fractions) and 0 <= fractions[0] and fractions[-1] <= 1
    assert run.reduction.method == "bt" and run.reduction.r == 6
    assert run.config["model"]["N"] == 200
    # The run's reduced model is the one mor.reduce gives for the same keys.
    rom = mor.reduce(mor.Chain(**{k: v for k, v in run.config["model"].items() if k != "type"}),
                     "bt", **{k: v for k, v in run.config["reduction"].items() if k != "method"})
    assert np.allclose(rom.hsv, run.reduction.singular_values["hsv"], rtol=1e-12, atol=0)


def test_sweep(tmp_path):
    """mor.sweep: a one-point sweep through `mor` workers, read back as a Sweep."""
    import shutil

    shutil.copy(SOURCE_DIR / "experiments" / "bt_chain.toml", tmp_path)
    sweep = tmp_path / "tiny_sweep.toml"
    sweep.write_text(f"""
[sweep]
name = "tiny"
output = "{tmp_path / 'tiny.h5'}"
N = [100]
tolerances = [1e-4]
plots = false

[[study]]
name = "bt"
experiment = "bt_chain.toml"
set = {{ "analysis.hinf" = false, "analysis.bode_points" = 0, "simulation.t_end" = 5.0 }}
grid.reduction.order = [4]
""")
    result = mor.sweep(sweep, jobs=1)
    assert isinstance(result, mor.results.Sweep)
    assert list(result.table["N"]) == [100] and list(result.table["r"]) == [4]
    assert (tmp_path / "tiny.h5").exists()


def test_run_refuses_a_file_another_program_writes(tmp_path):
    """h5py holding the output open for writing: mor.run() replaced it (issue 44); now OSError
    names it, and the user's dataset is there once h5py closes the file."""
    import h5py
    import pytest

    out = tmp_path / "userdata.h5"
    with h5py.File(out, "w") as f:
        f["mine"] = [1.0, 2.0, 3.0]
        f.flush()
        with pytest.raises(OSError, match="another program holds it open for writing"):
            mor.run(SOURCE_DIR / "experiments" / "bt_chain_light.toml", output=out,
                    set={"model.N": 20, "simulation.t_end": 1.0, "output.plots": False})
    with h5py.File(out, "r") as f:
        assert list(f["mine"][:]) == [1.0, 2.0, 3.0]
    assert not (tmp_path / "userdata.h5.lock").exists()


def test_run_refuses_a_file_nested_too_deep(tmp_path):
    """A key of 40 000 dotted parts overflowed toml++'s stack and killed the interpreter."""
    import pytest

    deep = tmp_path / "deep.toml"
    deep.write_text("a" + ".a" * 39999 + " = 1\n[experiment]\nname = \"t\"\n")
    with pytest.raises(ValueError, match="nested 40000 deep .* exceed the limit of 64"):
        mor.run(deep, output=tmp_path / "deep.h5")
    assert not (tmp_path / "deep.h5").exists()
