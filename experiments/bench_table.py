#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn the JSON of experiments/bench/bench_integrators into the README's step-cost table.

Usage: /usr/bin/python3 experiments/bench_table.py results/bench/integrators.json

Rows are scheme/backend, columns N; each cell is nanoseconds per step per mass and, in
brackets, the step time in streaming axpy passes over the state measured in the same run.
With --benchmark_repetitions the medians are used, otherwise the single runs.
"""
import json
import sys
from collections import defaultdict


def main(path):
    with open(path) as f:
        data = json.load(f)
    runs = data["benchmarks"]
    medians = [b for b in runs if b.get("aggregate_name") == "median"]
    chosen = medians if medians else [b for b in runs if b.get("run_type") == "iteration"]
    cells = defaultdict(dict)
    sizes = set()
    for b in chosen:
        parts = b["run_name"].split("/")
        if parts[0] != "BM_step":
            continue
        n = int([p for p in parts if p.isdigit()][0])
        scheme = "/".join(p for p in parts[1:] if not p.isdigit() and ":" not in p and p != "manual_time")
        sizes.add(n)
        cells[scheme][n] = (b["ns_per_step_per_dof"], b["axpy_passes"])
    sizes = sorted(sizes)
    ctx = data["context"]
    print(f"Measured {ctx['date']} on {ctx['num_cpus']} cores at {ctx['mhz_per_cpu']} MHz, "
          f"load {', '.join(f'{x:.2f}' for x in ctx.get('load_avg', []))}"
          f"{'; medians of %d repetitions' % chosen[0]['repetitions'] if medians else ''}.\n")
    print("| scheme / backend | " + " | ".join(f"N = {n:.0e}".replace("+0", "") for n in sizes)
          + " | max / min over N |")
    print("|---" * (len(sizes) + 2) + "|")
    for scheme, row in cells.items():
        values = [row[n][0] for n in sizes if n in row]
        text = [f"{row[n][0]:.1f} ({row[n][1]:.1f})" if n in row else "" for n in sizes]
        print(f"| {scheme} | " + " | ".join(text) + f" | {max(values) / min(values):.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
