#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn the JSON of experiments/bench/bench_reduced_chain into the README's reduced-step table.

Usage: /usr/bin/python3 experiments/bench_reduced_table.py results/bench/reduced_chain.json

First table: rows N, columns the full step and the reduced step for each r; each reduced cell is
microseconds per step and, in brackets, the speed-up over the full step at the same N (computed
here from the two us_per_step values, so it needs both benchmarks in the file). The last row is
max / min over N of the reduced step (the issue asks for at most 1.2). Second table: the
accuracy over the warm-up and the offline cost per N. Skipped benchmarks are listed with their
message. With --benchmark_repetitions the medians are used, otherwise the single runs.
"""
import json
import re
import sys
from collections import defaultdict


def n_label(n):
    return f"10^{len(str(n)) - 1}" if str(n).strip("0") == "1" else str(n)


def step_time(us):
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.1f} us" if us >= 10 else f"{us:.2f} us"


def parse(name):
    """(family, [integer arguments]) of a run name like BM_reduced_step/1000/20/manual_time."""
    parts = name.split("/")
    return parts[0], [int(p) for p in parts[1:] if p.isdigit()]


def main(path):
    with open(path) as f:
        data = json.load(f)
    runs = data["benchmarks"]
    medians = [b for b in runs if b.get("aggregate_name") == "median"]
    chosen = medians if medians else [b for b in runs if b.get("run_type") == "iteration"]
    full, reduced, skipped = {}, defaultdict(dict), {}
    for b in runs:  # an error leaves no aggregate: look at every run for it
        if b.get("error_occurred"):
            family, args = parse(b["run_name"])
            skipped[(family, *args)] = (b["run_name"], b.get("error_message", ""))
    for b in chosen:
        family, args = parse(b["run_name"])
        if b.get("error_occurred"):
            continue
        if family == "BM_full_step":
            full[args[0]] = b
        elif family == "BM_reduced_step":
            reduced[args[1]][args[0]] = b
    sizes = sorted(set(full) | {n for row in reduced.values() for n in row}
                   | {key[1] for key in skipped})
    orders = sorted(set(reduced) | {key[2] for key in skipped if key[0] == "BM_reduced_step"})

    ctx = data["context"]
    print(f"Measured {ctx['date']} on {ctx['num_cpus']} cores at {ctx['mhz_per_cpu']} MHz, "
          f"load {', '.join(f'{x:.2f}' for x in ctx.get('load_avg', []))}"
          f"{'; medians of %d repetitions' % chosen[0]['repetitions'] if medians else ''}.\n")
    print("| N | full step | " + " | ".join(f"r = {r}" for r in orders) + " |")
    print("|---" * (len(orders) + 2) + "|")
    for n in sizes:
        cells = [step_time(full[n]["us_per_step"]) if n in full else ""]
        for r in orders:
            b = reduced[r].get(n)
            if b is None:
                why = skipped.get(("BM_reduced_step", n, r))
                rank = re.search(r"numerical rank (\d+)", why[1]) if why else None
                cells.append(f"skipped: rank {rank.group(1)}" if rank else "skipped" if why else "")
                continue
            text = step_time(b["us_per_step"])
            if n in full:
                text += f" ({full[n]['us_per_step'] / b['us_per_step']:.0f}x)"
            if int(b["m"]) != 2 * r:
                text += f", m = {int(b['m'])}"
            cells.append(text)
        print(f"| {n_label(n)} | " + " | ".join(cells) + " |")
    spread = []
    for r in orders:
        values = [b["us_per_step"] for b in reduced[r].values()]
        spread.append(f"{max(values) / min(values):.2f}" if len(values) > 1 else "")
    print("| max / min over N | | " + " | ".join(spread) + " |")

    print("\n| N | relative output error over the warm-up, r = "
          + ", ".join(str(r) for r in orders) + " | training runs | POD (q and g) | peak RSS |")
    print("|---|---|---|---|---|")
    for n in sizes:
        row = [reduced[r][n] for r in orders if n in reduced[r]]
        errors = ", ".join(f"{reduced[r][n]['warmup_output_error']:.1e}" if n in reduced[r]
                           else "-" for r in orders)
        rss = [b["peak_rss_MiB"] for b in row] + ([full[n]["peak_rss_MiB"]] if n in full else [])
        offline = (f"{row[0]['training_s']:.1f} s | {row[0]['pod_s']:.1f} s" if row
                   else " | ")
        print(f"| {n_label(n)} | {errors} | {offline} | "
              f"{f'{max(rss):.0f} MiB' if rss else ''} |")
    if skipped:
        print("\nSkipped:")
        for name, message in skipped.values():
            print(f"- {name}: {message}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
