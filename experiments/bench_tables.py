#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn the JSON of the Google Benchmark suites (experiments/bench) into the tables of docs/benchmarks.md.

Usage:
  /usr/bin/python3 experiments/bench_tables.py results/bench/<suite>.json ...
      prints each suite's markdown
  /usr/bin/python3 experiments/bench_tables.py --update docs/benchmarks.md results/bench/<suite>.json ...
      replaces the text between the lines <!-- bench:<suite> --> and <!-- /bench:<suite> -->

The suite is the one named by the JSON's context.executable (bench_<suite>): integrators,
balanced_truncation, reduced_chain or multibody. Medians are used where the JSON holds
repetitions, the single runs otherwise; skipped runs (SkipWithError) become "skipped" cells and
are listed with their messages on stderr. An unknown suite, a missing or repeated marker and a
counter the table needs but the JSON lacks stop the script with a message and exit status 1,
before the file is written. scripts/run_benchmarks.sh runs the suites and then this script.
"""
import argparse
import json
import math
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field

# --- loading --------------------------------------------------------------------------------


class TableError(Exception):
    """Something the tables cannot be made from; the message says what and where."""


MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
FLAGS = {"manual_time", "real_time", "process_time"}


@dataclass
class Run:
    """One benchmark's result: its name split into parts, its times and counters."""

    path: str
    suite: str
    name: str
    family: str
    words: list  # non-numeric arguments: rk4, cholmod, pendulum
    numbers: list  # integer arguments in order: N, r
    named: dict  # key:value arguments: digits:6, min_time:0.500
    raw: dict = field(repr=False)

    def __getitem__(self, counter):
        if counter not in self.raw:
            raise TableError(f"{self.path}: {self.name} has no counter '{counter}' (a JSON older "
                             "than the counter? rerun: bash scripts/run_benchmarks.sh "
                             f"{self.suite})")
        return self.raw[counter]

    def ms(self, which="real_time"):
        """real_time or cpu_time in milliseconds."""
        return self.raw[which] * MS_PER_UNIT[self.raw.get("time_unit", "ns")]


@dataclass
class SuiteResult:
    path: str
    suite: str
    context: dict
    runs: list  # medians, or single runs, in the order they ran
    skipped: dict  # run name -> message, in the order they ran
    repetitions: int  # > 1 when runs are medians


def parse_name(path, suite, name, raw):
    parts = name.split("/")
    words, numbers, named = [], [], {}
    for p in parts[1:]:
        if ":" in p:
            key, value = p.split(":", 1)
            named[key] = value
        elif p.isdigit():
            numbers.append(int(p))
        elif p not in FLAGS:
            words.append(p)
    return Run(path, suite, name, parts[0], words, numbers, named, raw)


def load(path):
    """The runs of one JSON: medians when repetitions exist, else the single iterations."""
    try:
        with open(path) as f:
            data = json.load(f)
        context, benchmarks = data["context"], data["benchmarks"]
    except OSError as e:
        raise TableError(f"{path}: {e.strerror}")
    except (ValueError, KeyError, TypeError) as e:
        raise TableError(f"{path}: not a Google Benchmark JSON ({e})")
    executable = os.path.basename(context.get("executable", ""))
    suite = executable.removeprefix("bench_")
    if executable == suite or suite not in FORMATTERS:
        raise TableError(f"{path}: executable '{context.get('executable', '')}' is not one of "
                         + ", ".join(f"bench_{s}" for s in FORMATTERS))
    skipped = {}
    for b in benchmarks:  # an error leaves no aggregate: look at every run for it
        if b.get("error_occurred"):
            skipped.setdefault(b["run_name"], b.get("error_message", ""))
    medians = [b for b in benchmarks if b.get("aggregate_name") == "median"]
    chosen = medians or [b for b in benchmarks if b.get("run_type", "iteration") == "iteration"]
    runs = [parse_name(path, suite, b["run_name"], b)
            for b in chosen if not b.get("error_occurred")]
    repetitions = max((b.get("repetitions", 1) for b in medians), default=1)
    return SuiteResult(path, suite, context, runs, skipped, repetitions)


# --- formatting helpers -----------------------------------------------------------------------


def measured_line(result):
    ctx = result.context
    load_avg = ", ".join(f"{x:.2f}" for x in ctx.get("load_avg", []))
    how = (f"medians of {result.repetitions} repetitions" if result.repetitions > 1
           else "one run each")
    return (f"Measured {ctx['date']} on {ctx['num_cpus']} cores at {ctx['mhz_per_cpu']} MHz, "
            f"load {load_avg}; {how}.")


def n_label(n):
    """10^k for powers of ten, else the number."""
    return f"10^{len(str(n)) - 1}" if str(n).strip("0") == "1" else str(n)


def sig3(x):
    """Three significant digits, trailing zeros kept, no exponent (for 0.001 <= x < 1e4)."""
    if x == 0:
        return "0"
    x = float(f"{x:.3g}")  # round first: 99.96 is 100, not 100.0
    return f"{x:.{max(0, 2 - math.floor(math.log10(abs(x))))}f}"


def sci(x):
    """Two significant digits in scientific notation: 1.1e-4."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def duration(ms):
    """Three significant digits, in ms below a second, else in s."""
    return f"{sig3(ms)} ms" if float(f"{ms:.3g}") < 1000 else f"{sig3(ms / 1000)} s"


def mib(x):
    return f"{x / 1024:.1f} GiB" if x >= 1024 else f"{x:.0f} MiB" if x >= 10 else f"{x:.1f} MiB"


def skipped_family(result, family):
    """{tuple of integer arguments and words: message} of the skipped runs of one family."""
    out = {}
    for name, message in result.skipped.items():
        run = parse_name(result.path, result.suite, name, {})
        if run.family == family:
            out[(*run.words, *run.numbers)] = message
    return out


def table(header, rows):
    def line(cells):
        return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"

    return [line(header), "|---" * len(header) + "|"] + [line(row) for row in rows]


# --- one formatter per suite ------------------------------------------------------------------


def integrators_table(result):
    """Rows scheme/backend, columns N: ns per step per mass (step time in axpy passes)."""
    cells = defaultdict(dict)
    for run in result.runs:
        if run.family == "BM_step":
            cells["/".join(run.words)][run.numbers[0]] = (run["ns_per_step_per_dof"],
                                                         run["axpy_passes"])
    for key in skipped_family(result, "BM_step"):
        cells["/".join(key[:-1])].setdefault(key[-1], None)
    if not cells:
        raise TableError(f"{result.path}: no BM_step runs")
    sizes = sorted({n for row in cells.values() for n in row})
    rows = []
    for scheme, row in cells.items():
        values = [row[n][0] for n in sizes if row.get(n)]
        text = [("skipped" if row[n] is None else f"{row[n][0]:.1f} ({row[n][1]:.1f})")
                if n in row else "" for n in sizes]
        spread = f"{max(values) / min(values):.2f}" if len(values) > 1 else ""
        rows.append([scheme, *text, spread])
    header = ["scheme / backend", *(f"N = {n:.0e}".replace("+0", "") for n in sizes),
              "max / min over N"]
    return [measured_line(result), ""] + table(header, rows)


RAIL_SETTINGS = {"BM_rail_bt": "defaults (automatic shifts)",
                 "BM_rail_bt_mess_settings": "M-M.E.S.S.'s ADI settings"}


def balanced_truncation_table(result):
    """Rows N: LR-ADI and whole-BT times, ADI steps, ranks, factor memory, peak RSS; the dense
    BT against SLICOT AB09AD; the rail's low-rank BT (BM_rail_bt*), when the JSON has them."""
    adi, bt, dense, slicot, rail = {}, {}, {}, {}, []
    # peak_rss_MiB of the chain runs is the process's high-water mark, and the suite runs in one
    # process: a run whose value exceeds every earlier one raised it, so that value is the run's
    # own peak. Other runs' peaks stayed below an earlier one and are unknown ("-"). (A skipped
    # run reports no peak: a later run may then be credited with the skipped run's.) The rail
    # runs reset the mark first and report their own peak; SLICOT's runs report none.
    raised, highest = set(), 0.0
    for run in result.runs:
        if run.family in RAIL_SETTINGS:
            rail.append(run)
            continue
        if run.family == "BM_slicot_ab09ad":
            slicot[run.numbers[0]] = run
            continue
        if run.family not in ("BM_adi", "BM_bt", "BM_dense_bt"):
            continue
        key = (run.family, run.numbers[0])
        {"BM_adi": adi, "BM_bt": bt, "BM_dense_bt": dense}[run.family][key[1]] = run
        if run["peak_rss_MiB"] > highest:
            raised.add(key)
            highest = run["peak_rss_MiB"]
    skipped_adi, skipped_bt = skipped_family(result, "BM_adi"), skipped_family(result, "BM_bt")
    sizes = sorted(set(adi) | set(bt) | {k[0] for k in [*skipped_adi, *skipped_bt]})
    if not sizes:
        raise TableError(f"{result.path}: no BM_adi or BM_bt runs")
    rows = []
    for n in sizes:
        a, b = adi.get(n), bt.get(n)
        skip = "skipped" if (n,) in skipped_bt else ""
        peak = [f"{mib(r['peak_rss_MiB'])} ({what})" for r, what in
                ((a, "ADI alone"), (b, "whole BT")) if r and (r.family, n) in raised]
        rows.append([
            f"{n_label(n)}",
            duration(a.ms()) if a else "skipped" if (n,) in skipped_adi else "",
            duration(b.ms()) if b else skip,
            f"{b['iterations_c']:.0f} / {b['iterations_o']:.0f}" if b else skip,
            f"{b['rank_c']:.0f} / {b['rank_o']:.0f}" if b else skip,
            mib(b["factor_MiB"]) if b else skip,
            ", ".join(peak) or "-",
        ])
    header = ["N (states 2N)", "LR-ADI, one Gramian", "whole BT (both Gramians, SVD, projection)",
              "ADI steps (c / o)", "factor ranks", "factors", "peak RSS"]
    lines = [measured_line(result), ""] + table(header, rows)
    if dense:
        def dense_cell(n, r):
            cell = f"N = {n} in {duration(r.ms())}"
            if n in slicot:
                s = slicot[n].ms()
                cell += f" (SLICOT AB09AD {duration(s)}: {s / r.ms():.2f}x ours)"
            return cell
        lines += ["", "Dense square-root BT (Hammarling Gramians, same chain): "
                  + ", ".join(dense_cell(n, r) for n, r in sorted(dense.items())) + "."]
    skipped_rail = {(n,): (family, message) for family in RAIL_SETTINGS
                    for (n,), message in skipped_family(result, family).items()}
    if rail or skipped_rail:
        rows = [[str(r.numbers[0]), RAIL_SETTINGS[r.family], duration(r.ms()),
                 f"{r['iterations_c']:.0f} / {r['iterations_o']:.0f}",
                 f"{r['rank_c']:.0f} / {r['rank_o']:.0f}",
                 f"{r['r']:.0f} ({sci(r['error_bound'])})",
                 f"{duration(1e3 * r['seconds_adi_c'])} / {duration(1e3 * r['seconds_adi_o'])}",
                 duration(1e3 * r["seconds_projection"]), mib(r["peak_rss_MiB"])]
                for r in sorted(rail, key=lambda r: (r.numbers[0], r.family))]
        rows += [[str(n), RAIL_SETTINGS[family],
                  "skipped: " + re.sub(r"/\S*/data/", "data/", message), "", "", "", "", "", ""]
                 for (n,), (family, message) in sorted(skipped_rail.items())]
        lines += ["", "The rail (data/rail_<n>.mat), LR-ADI to 1e-10, square-root BT to the "
                  "bound 1e-4:", ""]
        lines += table(["n", "ADI settings", "whole BT", "ADI steps (c / o)", "factor ranks",
                        "r (bound)", "ADI c / o (shifts included)", "SVD and projection",
                        "peak RSS"], rows)
    return lines


def step_time(us):
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.1f} us" if us >= 10 else f"{us:.2f} us"


def reduced_chain_tables(result):
    """Full and reduced step per N and r with the speed-up; then accuracy and offline cost."""
    full, reduced = {}, defaultdict(dict)
    for run in result.runs:
        if run.family == "BM_full_step":
            full[run.numbers[0]] = run
        elif run.family == "BM_reduced_step":
            reduced[run.numbers[1]][run.numbers[0]] = run
    skipped = skipped_family(result, "BM_reduced_step")
    sizes = sorted(set(full) | {n for row in reduced.values() for n in row}
                   | {k[0] for k in skipped})
    orders = sorted(set(reduced) | {k[1] for k in skipped})
    if not sizes or not orders:
        raise TableError(f"{result.path}: no BM_full_step or BM_reduced_step runs")

    rows = []
    for n in sizes:
        cells = [n_label(n), step_time(full[n]["us_per_step"]) if n in full else ""]
        for r in orders:
            b = reduced[r].get(n)
            if b is None:
                why = skipped.get((n, r))
                rank = re.search(r"numerical rank (\d+)", why) if why else None
                cells.append(f"skipped: rank {rank.group(1)}" if rank else "skipped" if why else "")
                continue
            text = step_time(b["us_per_step"])
            if n in full:  # from the medians of both, not the median of the speedup counter
                text += f" ({full[n]['us_per_step'] / b['us_per_step']:.0f}x)"
            if int(b["m"]) != 2 * r:
                text += f", m = {int(b['m'])}"
            cells.append(text)
        rows.append(cells)
    spread = []
    for r in orders:
        values = [b["us_per_step"] for b in reduced[r].values()]
        spread.append(f"{max(values) / min(values):.2f}" if len(values) > 1 else "")
    rows.append(["max / min over N", "", *spread])
    lines = [measured_line(result), ""]
    lines += table(["N", "full step", *(f"r = {r}" for r in orders)], rows)

    rows = []
    for n in sizes:
        row = [reduced[r][n] for r in orders if n in reduced[r]]
        errors = ", ".join(f"{reduced[r][n]['warmup_output_error']:.1e}" if n in reduced[r]
                           else "-" for r in orders)
        rss = [b["peak_rss_MiB"] for b in row] + ([full[n]["peak_rss_MiB"]] if n in full else [])
        rows.append([n_label(n), errors,
                     f"{row[0]['training_s']:.1f} s" if row else "",
                     f"{row[0]['pod_s']:.1f} s" if row else "",
                     f"{max(rss):.0f} MiB" if rss else ""])
    header = ["N", "relative output error over the warm-up, r = " + ", ".join(map(str, orders)),
              "training runs", "POD (q and g)", "peak RSS"]
    return lines + [""] + table(header, rows)


# Published CPU times of OpenSim 3.2 on an i5-4570 at 3.2 GHz for the benchmark's whole horizon
# (IFToMM library of computational benchmarks, as quoted in ../shared/reference/anchors.md), ms.
OPENSIM_MS = {"pendulum": 637.0, "bricard": 258.0, "flyball": 233.0}
BENCHMARK_NAMES = {"pendulum": "A01 pendulum", "bricard": "A04 Bricard", "flyball": "A05 flyball",
                   "robot": "robot"}
# The bars a tolerance must meet to count for the speed-up: the IFToMM high-precision level
# (reference outputs within 1e-3, ../shared/reference/models.md), and for A04 a
# relative energy drift below 1e-6 over the 10 s.
OUTPUT_ERROR_BAR = 1e-3
ENERGY_DRIFT_BAR = {"bricard": 1e-6}


def multibody_table(result):
    """Rows benchmark, columns rtol: median CPU time of the whole horizon (error at the end)."""
    models = defaultdict(dict)
    for run in result.runs:
        if run.family == "BM_benchmark_run":
            models[run.words[0]][int(run.named["digits"])] = run
    for name in result.skipped:
        run = parse_name(result.path, result.suite, name, {})
        if run.family == "BM_benchmark_run":
            models[run.words[0]].setdefault(int(run.named["digits"]), None)
    if not models:
        raise TableError(f"{result.path}: no BM_benchmark_run runs")
    tolerances = sorted({d for runs in models.values() for d in runs})
    rows = []
    for model, runs in models.items():
        measured = [r for r in runs.values() if r is not None]
        first = measured[0] if measured else None
        method = ""
        if first:
            method = " (" + ("BDF" if first["bdf"] else "Adams") + (
                " + projection" if first["projections_per_step"] > 0 else "") + ")"
        bar = ENERGY_DRIFT_BAR.get(model)
        cells, meets = [], []
        for i, d in enumerate(tolerances):
            r = runs.get(d)
            if r is None:
                cells.append("skipped" if d in runs else "")
                continue
            notes = [f"{'error ' if i == 0 else ''}{sci(r['error'])}"]
            ok = r["error"] < OUTPUT_ERROR_BAR
            if bar is not None:
                drift = r["energy_balance_relative"]
                notes.append(f"energy {sci(r['energy_balance'])} J"
                             + ("" if drift < bar else f": {sci(drift)} relative, above {sci(bar)}"))
                ok = ok and drift < bar
            if ok:
                meets.append((d, r))
            cells.append(f"{sig3(r.ms('cpu_time'))} ms ({'; '.join(notes)})")
        opensim = OPENSIM_MS.get(model)
        speedup = ""
        if opensim is not None:
            if meets:
                speedup = "; ".join(f"{opensim / r.ms('cpu_time'):.0f}x at 1e-{d}" for d, r in
                                    ([meets[0], meets[-1]] if len(meets) > 1 else meets))
            else:
                speedup = "criteria not met"
        rows.append([BENCHMARK_NAMES.get(model, model) + method,
                     f"{first['horizon_s']:.3g} s" if first else "",
                     f"{opensim:.0f} ms" if opensim is not None else "none published",
                     *cells, speedup])
    header = ["benchmark", "horizon", "OpenSim 3.2", *(f"rtol 1e-{d}" for d in tolerances),
              "speed-up"]
    return [measured_line(result), ""] + table(header, rows)


FORMATTERS = {
    "integrators": integrators_table,
    "balanced_truncation": balanced_truncation_table,
    "reduced_chain": reduced_chain_tables,
    "multibody": multibody_table,
}

# --- the document ------------------------------------------------------------------------------


def replace_block(text, suite, body, readme):
    """text with the lines between <!-- bench:suite --> and <!-- /bench:suite --> replaced."""
    begin, end = f"<!-- bench:{suite} -->", f"<!-- /bench:{suite} -->"
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == begin]
    ends = [i for i, line in enumerate(lines) if line.strip() == end]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise TableError(f"{readme}: needs exactly one line '{begin}' followed by one line "
                         f"'{end}' around the {suite} tables (found {len(starts)} and "
                         f"{len(ends)})")
    return "\n".join(lines[:starts[0] + 1] + ["", *body, ""] + lines[ends[0]:])


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Example: /usr/bin/python3 experiments/bench_tables.py --update docs/benchmarks.md "
               "results/bench/*.json")
    parser.add_argument("json", nargs="+", help="results/bench/<suite>.json")
    parser.add_argument("--update", metavar="MARKDOWN",
                        help="replace the marked blocks in this file instead of printing")
    args = parser.parse_args()
    try:
        blocks = {}
        for path in args.json:
            result = load(path)
            if result.suite in blocks:
                raise TableError(f"{path}: a second JSON of the suite {result.suite}")
            for name, message in result.skipped.items():
                print(f"{path}: skipped {name}: {message}", file=sys.stderr)
            blocks[result.suite] = FORMATTERS[result.suite](result)
        if not args.update:
            print("\n\n".join("\n".join([f"<!-- bench:{s} -->", "", *b, "", f"<!-- /bench:{s} -->"])
                                for s, b in blocks.items()))
            return
        try:
            with open(args.update) as f:
                text = f.read()
        except OSError as e:
            raise TableError(f"{args.update}: {e.strerror}")
        for suite, body in blocks.items():
            text = replace_block(text, suite, body, args.update)
        tmp = f"{args.update}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.update)
        print(f"{args.update}: updated " + ", ".join(blocks), file=sys.stderr)
    except TableError as e:
        sys.exit(f"bench_tables.py: error: {e}")


if __name__ == "__main__":
    main()
