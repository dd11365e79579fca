#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python reader's table of HDF5 paths (python/mor_results.py, PATHS) against the program's
one declaration of the results layout (`mor layout`): the same names for the same paths, both
ways. Usage: /usr/bin/python3 tests/check_results_layout.py path/to/mor
"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import mor_results  # noqa: E402

out = subprocess.run([sys.argv[1], "layout"], check=True, capture_output=True, text=True).stdout
program = {}
for line in out.splitlines():
    name, path = line.split()[:2]
    program[name] = path
python = dict(mor_results.PATHS)
problems = []
for name, path in python.items():
    if name not in program:
        problems.append(f"PATHS['{name}'] = {path} is not in `mor layout`")
    elif program[name] != path:
        problems.append(f"PATHS['{name}'] = {path} but `mor layout` says {program[name]}")
for name, path in program.items():
    if name not in python:
        problems.append(f"`mor layout` has {name} = {path}, PATHS does not")
for p in problems:
    print(p)
print(f"{len(program)} entries in `mor layout`, {len(python)} in PATHS, {len(problems)} differences")
sys.exit(1 if problems else 0)
