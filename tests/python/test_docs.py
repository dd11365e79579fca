# SPDX-License-Identifier: GPL-3.0-or-later
"""help(mor.reduce) and the generated stub list every method and key of the registry, and the keys
of the experiment tables reduce takes (the declarations docs/keys.md is generated from)."""
import ast
import pathlib
import re

import mor


def test_help_lists_methods_and_keys():
    doc = mor.reduce.__doc__
    for m in mor.methods():
        if m["name"] == "none":
            continue
        assert f"\n{m['name']}: " in doc, m["name"]
        for k in m["keys"]:
            assert f"    {k['name']} ({k['type']}, default {k['default']})" in doc, (m["name"], k)


def test_stub_has_one_overload_per_method():
    stub = pathlib.Path(mor.__file__).with_name("__init__.pyi").read_text()
    tree = ast.parse(stub)
    overloads = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "reduce"]
    names = {f.args.args[1].annotation.slice.value for f in overloads}
    assert names == {m["name"] for m in mor.methods()} - {"none"}
    bt = next(f for f in overloads if f.args.args[1].annotation.slice.value == "bt")
    keys = [a.arg for a in bt.args.kwonlyargs]
    assert keys[0] == "experiment" and "order" in keys and "adi_tolerance" in keys
    defaults = dict(zip(keys, (ast.literal_eval(d) for d in bt.args.kw_defaults)))
    assert defaults["order"] == 0 and defaults["adi_tolerance"] == 1e-10


def test_help_documents_the_training_and_simulation_keys():
    """The tables of experiment= from the runner's declarations of [[training]] and [simulation]."""
    doc = mor.reduce.__doc__
    for needle in ("experiment['training']", "experiment['simulation']", "frequency (number, "
                   "default 0.05) [Hz] (type \"sine\")", "t_end (number, default 100) [s]",
                   "pod of a linear model"):
        assert needle in doc, needle
    stub = pathlib.Path(mor.__file__).with_name("__init__.pyi").read_text()
    assert re.search(r"class Training\(TypedDict, total=False\):\n    type: Literal\['zero'", stub)
    assert "    t_end: float" in stub and "experiment: Experiment | None = None" in stub


def test_keys_match_docs_keys_md():
    """Every method key in the Python docs is in docs/keys.md (the program's reference)."""
    from conftest import SOURCE_DIR

    keys_md = (SOURCE_DIR / "docs" / "keys.md").read_text()
    for m in mor.methods():
        for k in m["keys"]:
            assert f"`{k['name']}`" in keys_md, (m["name"], k["name"])
